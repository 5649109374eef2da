#!/bin/sh
# Benchmark of `dlrmc run` (not a test: prints figures, asserts nothing).
#   points/s of a 100,000-point DLRM_MLPerf sweep (batch size 1..100000, so
#   every point has new GEMM shapes) at --jobs 1 and --jobs 2, and the peak
#   resident memory of a 1,000,000-point sweep (it must not grow with the
#   number of points: rows are streamed, not buffered).
# Usage: tests/bench/bench_run.sh [path/to/dlrmc]   (default build/compiler/dlrmc)
set -eu
dlrmc=${1:-build/compiler/dlrmc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
study() { # $1 = number of points
  cat <<YAML
study: bench
model:
  preset: dlrm_mlperf
  embedding_kernel: batched
training:
  batch_size: 2048
system:
  gpu: A100-SXM4-80GB
  overheads: paper-v100
sweep:
  training.batch_size: {from: 1, to: $1, step: 1}
YAML
}
study 100000 > "$tmp/s100k.yaml"
study 1000000 > "$tmp/s1m.yaml"
# Wall time and CPU time (user + sys): on a shared machine the CPU time is
# the steadier figure of the two.
for jobs in 1 2; do
  /usr/bin/time -f "%e %U %S" -o "$tmp/t" env DLRMC_NO_PROGRESS=1 \
    "$dlrmc" run "$tmp/s100k.yaml" --jobs "$jobs" -o "$tmp/out$jobs.csv"
  awk -v j="$jobs" '{ cpu = $2 + $3
    printf "100000 points, --jobs %d: wall %.2f s (%.0f points/s), cpu %.2f s (%.0f points per cpu-second)\n",
           j, $1, 100000 / $1, cpu, 100000 / cpu }' "$tmp/t"
done
cmp "$tmp/out1.csv" "$tmp/out2.csv" && echo "outputs of --jobs 1 and --jobs 2 are identical"
for n in 100k 1m; do
  /usr/bin/time -f "%M" -o "$tmp/rss" env DLRMC_NO_PROGRESS=1 \
    "$dlrmc" run "$tmp/s$n.yaml" --jobs 2 -o "$tmp/big.csv"
  echo "$n points, --jobs 2: peak RSS $(cat "$tmp/rss") KiB, $(wc -l < "$tmp/big.csv") lines written"
done
