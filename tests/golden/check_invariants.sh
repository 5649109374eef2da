#!/bin/sh
# Metric invariants on every row of a wide study, and output identity
# across --jobs and --shard:
#   gpu_active_ms <= e2e_ms, kernel_only_ms <= e2e_ms, gpu_idle_ms >= 0,
#   0 < gpu_util <= 1, samples_per_s > 0, emb_imbalance >= 1;
#   with the `none` profile on one GPU, e2e_ms == kernel_only_ms;
#   --jobs 1 and --jobs 4 give the same bytes; `cat` of the shards of
#   --shard K/3 and K/5 (uneven blocks) is the single run byte for byte,
#   in CSV, Markdown and JSON lines.
# Usage: check_invariants.sh DLRMC STUDY OUTDIR
set -eu
dlrmc=$1 study=$2 out=$3
mkdir -p "$out"
"$dlrmc" run "$study" -o "$out/inv-j1.csv" --jobs 1
"$dlrmc" run "$study" -o "$out/inv-j4.csv" --jobs 4
cmp "$out/inv-j1.csv" "$out/inv-j4.csv"
"$dlrmc" run "$study" -o "$out/inv-j1.jsonl" --jobs 1
"$dlrmc" run "$study" -o "$out/inv-j1.md" --jobs 1
for n in 3 5; do
  for fmt in csv jsonl md; do
    : > "$out/inv-shards.$fmt"
    k=1
    while [ "$k" -le "$n" ]; do
      "$dlrmc" run "$study" --format "$fmt" --shard "$k/$n" --jobs 2 \
        >> "$out/inv-shards.$fmt"
      k=$((k + 1))
    done
    cmp "$out/inv-j1.$fmt" "$out/inv-shards.$fmt"
  done
done
awk -F, '
  { sub(/\r$/, "") }
  NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  {
    e2e = $col["e2e_ms"] + 0; act = $col["gpu_active_ms"] + 0
    ko = $col["kernel_only_ms"] + 0; idle = $col["gpu_idle_ms"] + 0
    util = $col["gpu_util"] + 0; sps = $col["samples_per_s"] + 0
    imb = $col["emb_imbalance"] + 0
    rows++
    if (act > e2e + 1e-4) { print "row " NR ": gpu_active_ms > e2e_ms: " $0; bad = 1 }
    if (ko > e2e + 1e-4) { print "row " NR ": kernel_only_ms > e2e_ms: " $0; bad = 1 }
    if (idle < -1e-4) { print "row " NR ": gpu_idle_ms < 0: " $0; bad = 1 }
    if (util <= 0 || util > 1.00005) { print "row " NR ": gpu_util out of (0,1]: " $0; bad = 1 }
    if (sps <= 0) { print "row " NR ": samples_per_s <= 0: " $0; bad = 1 }
    if (imb < 0.99995) { print "row " NR ": emb_imbalance < 1: " $0; bad = 1 }
    if ($col["system.overheads"] == "none" && $col["system.gpus"] == "1" &&
        (e2e - ko > 1e-4 || ko - e2e > 1e-4)) {
      print "row " NR ": profile none: e2e_ms != kernel_only_ms: " $0; bad = 1
    }
  }
  END {
    if (rows != 96) { print "expected 96 rows, got " rows; bad = 1 }
    exit bad
  }' "$out/inv-j1.csv"
# output.precision reaches the table: every metric with one decimal.
"$dlrmc" run "$study" -D output.precision=1 --shard 1/96 \
  -D output.columns=[e2e_ms,gpu_util,samples_per_s] > "$out/inv-prec.csv"
tail -n 1 "$out/inv-prec.csv" | tr -d '\r' |
  grep -Eq '^[0-9]+\.[0-9],[0-9]\.[0-9],[0-9]+\.[0-9]$' ||
  { echo "output.precision 1 not applied:"; cat "$out/inv-prec.csv"; exit 1; }
echo "invariants hold on 96 points; --jobs and --shard outputs agree"
