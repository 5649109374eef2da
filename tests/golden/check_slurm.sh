#!/bin/sh
# check_slurm.sh — the Slurm array recipe (studies/slurm/) without Slurm:
# runs a study in N shards through run_array.sh (SLURM_ARRAY_TASK_ID set
# by hand), merges the parts with merge_shards.py and compares the result
# byte for byte with the single run, for several N (more shards than
# points included). Then the old strided split (shard K: points K-1,
# K-1+N, ...; header in shard 1), made from the single run, merged with
# --strided; and a missing part must fail without writing the output.
#   check_slurm.sh DLRMC STUDY OUTDIR
set -eu
dlrmc=$1 study=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
"$dlrmc" run "$study" -o "$out/single.csv"
points=$(($(wc -l < "$out/single.csv") - 1))
for n in 1 2 3 7 $((points + 2)); do
  k=1
  while [ "$k" -le "$n" ]; do
    SLURM_ARRAY_TASK_ID=$k SLURM_ARRAY_TASK_COUNT=$n DLRMC=$dlrmc \
      sh studies/slurm/run_array.sh "$study" "$out/parts$n" >/dev/null
    k=$((k + 1))
  done
  python3 studies/slurm/merge_shards.py "$out/parts$n" "$n" "$out/merged$n.csv"
  cmp "$out/single.csv" "$out/merged$n.csv"
  # strided parts, as older --shard K/N wrote them
  mkdir -p "$out/strided$n"
  awk -v n="$n" -v d="$out/strided$n" 'NR == 1 { print > (d "/part-1-of-" n ".csv"); next }
    { k = (NR - 2) % n + 1; print > (d "/part-" k "-of-" n ".csv") }
    END { for (k = 1; k <= n; k++) printf "" >> (d "/part-" k "-of-" n ".csv") }' \
    "$out/single.csv"
  python3 studies/slurm/merge_shards.py "$out/strided$n" "$n" "$out/smerged$n.csv" --strided
  cmp "$out/single.csv" "$out/smerged$n.csv"
done
rm "$out/parts3/part-2-of-3.csv"
if python3 studies/slurm/merge_shards.py "$out/parts3" 3 "$out/broken.csv" 2>"$out/err"; then
  echo "check_slurm.sh: a missing part was merged" >&2; exit 1
fi
grep -q 'part-2-of-3.csv' "$out/err"
[ ! -e "$out/broken.csv" ]
echo "check_slurm.sh: $points points, merged shards equal the single run"
