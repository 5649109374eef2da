#!/bin/sh
# system.links reaches the prices through the command line:
# each key, given two values with -D (a comma list is a sweep), must move
# the named column the way a user expects, in `dlrmc run` and, for nvlink,
# in `dlrmc explain`. No golden: only the direction is checked, so the
# test survives any retuning of the models.
# Usage: check_links.sh DLRMC OUTDIR   (run from the repository root)
set -eu
dlrmc=$1 out=$2/links
mkdir -p "$out"
v100="-D system.gpu=V100-SXM2-32GB -D sharding.plan=table_wise"
h100="-D sharding.plan=table_wise"

# rises STUDY COLUMN KEY VALUES EXTRA: runs STUDY with EXTRA and
# -D KEY=VALUES (two values, the faster link first); COLUMN of the second
# row must exceed the first's.
rises() {
  study=$1 col=$2 key=$3 vals=$4 extra=$5
  # shellcheck disable=SC2086
  "$dlrmc" run "$study" $extra -D "$key=$vals" > "$out/run.csv"
  awk -F, -v col="$col" -v what="$key=$vals" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
    { gsub(/\r/, ""); v[NR - 1] = $c }
    END {
      if (!c) { print "no column " col; exit 1 }
      if (NR != 3) { print what ": expected 2 rows, got " NR - 1; exit 1 }
      if (!(v[2] + 0 > v[1] + 0)) {
        print what ": " col " " v[1] " then " v[2] " (expected a rise)"
        exit 1
      }
      print what ": " col " " v[1] " -> " v[2]
    }' "$out/run.csv"
}

rises studies/sharding-balance.yaml comm_ms system.links.nvlink \
  300GB/s,16GB/s "$v100"
rises studies/sharding-balance.yaml comm_ms system.links.latency \
  3us,30us "$v100"
rises studies/sharding-balance.yaml e2e_ms system.links.pcie \
  16GB/s,8GB/s "$v100"
rises studies/mlperf-16xh100.yaml comm_ms system.links.nic \
  12.5GB/s,3GB/s "$h100"

# explain prices the point with the same links as run
# shellcheck disable=SC2086
"$dlrmc" explain studies/sharding-balance.yaml $v100 \
  -D system.links.nvlink=300GB/s > "$out/fast.txt"
# shellcheck disable=SC2086
"$dlrmc" explain studies/sharding-balance.yaml $v100 \
  -D system.links.nvlink=16GB/s > "$out/slow.txt"
if cmp -s "$out/fast.txt" "$out/slow.txt"; then
  echo "explain: nvlink 300GB/s and 16GB/s give the same breakdown"; exit 1
fi
echo "system.links honoured by run and explain"
