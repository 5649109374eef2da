#!/bin/bash
# run_device.sh BENCH OUT — the one device call of the H200 validation: runs on a lent
# GPU machine and writes everything it measures under OUT, stage by stage,
# each stage bounded by `timeout` so that a slow or failing stage leaves the
# others' results. BENCH is a dlrmc-bench built on the development machine
# (carried with the call; this script finds the CUDA libraries it needs).
#
# Stages, in order of value: the device line; dlrmc-bench's smoke test; the
# GEMM sweeps (the paper's shape set plus recommendation shapes: forward
# m = batch, weight gradients k = batch, data gradients, interaction bmm) in
# fp32, tf32, bf16 and fp16; real DLRM training steps (dlrm_step.py); the
# other kernel kinds (embedding, transpose, tril, concat, memcpy).
# Everything lands in OUT/bench.tar.gz and OUT/steps.tar.gz plus OUT/log.txt.
# (The H200 run of 2026-11-27 took 155 s; its transpose sweep, then 800
# configurations under a 12 s limit, was cut off and rerun at once as
# `transpose --dtype fp32,bf16 --samples 400`, now the line below; its
# tril rows came as one file and were split by kind for `dlrmc fit`;
# dlrm_step.py --plain-traces ran in a second call.)
set -u
bench=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
mkdir -p "$work/bench" "$work/steps"
log=$out/log.txt
exec > >(tee -a "$log") 2>&1

. "$here/device_lib.sh"
pack() {
  tar -C "$work" -czf "$out/bench.tar.gz" bench
  tar -C "$work" -czf "$out/steps.tar.gz" steps
}
trap pack EXIT

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,memory.total --format=csv | tee "$work/bench/nvidia-smi.csv"
stage 10 devices "$bench" devices
"$bench" devices > "$work/bench/devices.txt" 2>&1
stage 30 smoke sh "$here/../../../kernels/bench/smoke_test.sh" "$bench" "$work/bench/smoke"

# One call per dtype and shape set: dlrmc-bench writes its CSV at the end,
# so a stage cut off by its limit loses only its own slice.
for d in fp32 tf32 bf16 fp16; do
  gemm_sweeps "$bench" "$work/bench" $d 20 12 12
done
pack

export PYTHONUNBUFFERED=1
stage 120 steps python3 "$here/dlrm_step.py" --out "$work/steps" ${STEP_ARGS:-}
pack

stage 30 embedding "$bench" embedding -o "$work/bench/embedding.csv" --samples 300
stage 30 transpose "$bench" transpose -o "$work/bench/transpose.csv" --dtype fp32,bf16 --samples 400
stage 12 tril_fwd "$bench" tril --kind tril_fwd -o "$work/bench/tril_fwd.csv" --dtype fp32,bf16
stage 12 tril_bwd "$bench" tril --kind tril_bwd -o "$work/bench/tril_bwd.csv" --dtype fp32,bf16
stage 8 concat "$bench" concat -o "$work/bench/concat.csv"
stage 20 memcpy "$bench" memcpy -o "$work/bench/memcpy.csv" --bytes 1Ki:256Mi:x4
pack
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
ls -la "$work/bench" "$work/steps"
