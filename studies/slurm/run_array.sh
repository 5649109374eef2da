#!/bin/sh
# run_array.sh — one task of a Slurm array job running a dlrmc study in
# N shards (`dlrmc run --shard K/N`: the K-th of N contiguous blocks of
# points). Each task writes OUTDIR/part-K-of-N.csv; merge_shards.py puts
# the parts together into the single run's output, byte for byte.
#
#   sbatch --array=1-N studies/slurm/run_array.sh STUDY.yaml OUTDIR [RUN-ARGS...]
#   python3 studies/slurm/merge_shards.py OUTDIR N OUT.csv
#
# RUN-ARGS go to `dlrmc run` (e.g. --jobs 4, -D key=value); --jobs defaults
# to the task's CPUs (SLURM_CPUS_PER_TASK). Without Slurm (or to test),
# set SLURM_ARRAY_TASK_ID=K and SLURM_ARRAY_TASK_COUNT=N by hand; DLRMC
# names the binary (default: dlrmc on PATH, else build/compiler/dlrmc).
#SBATCH --job-name=dlrmc-study
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
#SBATCH --output=dlrmc-%A_%a.log
set -eu
if [ $# -lt 2 ]; then
  echo "usage: run_array.sh STUDY.yaml OUTDIR [RUN-ARGS...]" >&2
  exit 2
fi
study=$1 outdir=$2
shift 2
k=${SLURM_ARRAY_TASK_ID:?run as an array job (sbatch --array=1-N) or set SLURM_ARRAY_TASK_ID}
n=${SLURM_ARRAY_TASK_COUNT:-${SLURM_ARRAY_TASK_MAX:?set SLURM_ARRAY_TASK_COUNT}}
if [ -z "${DLRMC:-}" ]; then
  if command -v dlrmc >/dev/null 2>&1; then DLRMC=dlrmc
  else DLRMC=build/compiler/dlrmc; fi
fi
mkdir -p "$outdir"
# dlrmc writes -o atomically, so a part is either complete or absent.
exec "$DLRMC" run "$study" --shard "$k/$n" --jobs "${SLURM_CPUS_PER_TASK:-1}" \
  "$@" -o "$outdir/part-$k-of-$n.csv"
