#!/bin/sh
# Benchmark of production-scale points (not a test: prints
# figures, asserts nothing). For each TABLESxGPUS a one-point study from
# tests/bench/gen_scale.py (random rows 1k-50M and pooling 1-80 per table,
# seed 20, bf16, row-wise Adagrad, H100, plan: auto), timed with
# /usr/bin/time: wall seconds and peak RSS of `dlrmc run`.
# Usage: tests/bench/bench_scale.sh [path/to/dlrmc] [TABLESxGPUS...]
set -eu
dlrmc=${1:-build/compiler/dlrmc}
[ $# -gt 0 ] && shift
sizes=${*:-100x8 1000x8 1000x64 5000x64 5000x256}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| tables x GPUs | time | peak RSS | fits |"
echo "|---|---:|---:|---|"
for s in $sizes; do
  t=${s%x*} g=${s#*x}
  python3 "$here/gen_scale.py" "$t" "$g" > "$tmp/s.yaml"
  /usr/bin/time -f "%e %M" -o "$tmp/t" env DLRMC_NO_PROGRESS=1 \
    "$dlrmc" run "$tmp/s.yaml" -D 'output.columns=[fits]' -o "$tmp/o.csv"
  read -r sec kib < "$tmp/t"
  printf '| %s x %s | %s s | %d MB | %s |\n' "$t" "$g" "$sec" \
    $((kib / 1024)) "$(tail -n 1 "$tmp/o.csv")"
done
