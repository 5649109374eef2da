#!/bin/bash
# run_round2.sh BENCH OUT — the second device call (ground truth, round
# two): on whatever GPU is lent, the PyTorch microbenchmarks of micro.py
# (stock nn.EmbeddingBag forward/backward, element-wise, copies, CUDA-graph
# launch cost) and the fused-update DLRM steps eagerly and from a captured
# CUDA graph (dlrm_step.py --graph); on an H100 also its own GEMM,
# transpose and tril sweeps (dlrmc-bench) and the 12 stock steps with their
# traces (and their plain Kineto twins), the embedding sweep at 1e3 and
# 1e8 rows, so that the H100 stops borrowing the H200's models. Each stage is
# bounded by `timeout`; results are packed after every stage, so a stage
# cut off loses only itself. Output: OUT/round2.tar.gz, OUT/steps.tar.gz,
# OUT/log.txt.
set -u
bench=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
mkdir -p "$work/r2/bench" "$work/r2/micro" "$work/r2/steps"
log=$out/log.txt
exec > >(tee -a "$log") 2>&1
. "$here/device_lib.sh"
export PYTHONUNBUFFERED=1
pack() {
  tar -C "$work/r2" -czf "$out/round2.tar.gz" bench micro
  tar -C "$work/r2" -czf "$out/steps.tar.gz" steps
}
trap pack EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,memory.total --format=csv | tee "$work/r2/bench/nvidia-smi.csv"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
"$bench" devices > "$work/r2/bench/devices.txt" 2>&1; cat "$work/r2/bench/devices.txt"
py=python3
stage 150 micro $py "$here/micro.py" --out "$work/r2/micro"
pack
stage 90 graph_steps $py "$here/dlrm_step.py" --graph --out "$work/r2/micro"
pack
case "$name" in
*H100*)
  for d in bf16 fp32 tf32 fp16; do
    gemm_sweeps "$bench" "$work/r2/bench" $d 15 8 6
    pack
  done
  stage 30 transpose "$bench" transpose -o "$work/r2/bench/transpose.csv" --dtype fp32,bf16 --samples 400
  stage 12 tril_fwd "$bench" tril --kind tril_fwd -o "$work/r2/bench/tril_fwd.csv" --dtype fp32,bf16
  stage 12 tril_bwd "$bench" tril --kind tril_bwd -o "$work/r2/bench/tril_bwd.csv" --dtype fp32,bf16
  stage 10 memcpy "$bench" memcpy -o "$work/r2/bench/memcpy.csv" --bytes 1Ki:256Mi:x4
  pack
  stage 110 steps $py "$here/dlrm_step.py" --out "$work/r2/steps"
  pack
  stage 60 plain_steps $py "$here/dlrm_step.py" --plain-traces --out "$work/r2/steps"
  pack
  stage 60 embedding_rows $py "$here/micro.py" --only embedding --rows 1000,100000000 \
    --max-table-gib 60 --out "$work/r2/micro"
  stage 30 embedding "$bench" embedding -o "$work/r2/bench/embedding.csv" --samples 300
  stage 8 concat "$bench" concat -o "$work/r2/bench/concat.csv"
  pack
  ;;
esac
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
ls -la "$work/r2/bench" "$work/r2/micro" "$work/r2/steps"
