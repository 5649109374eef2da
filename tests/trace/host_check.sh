#!/bin/sh
# host_check.sh DLRMC REPO — `dlrmc overheads extract --check` on the
# repo's traces with iterations (ProfilerStep): the profile extracted
# from a trace must give back its host time per step within 10 %
# (spec/replay.md, "Host overheads from the trace"). Held: the GPU
# traces, the hand-written ones and the CPU (gloo) runs within it.
# Printed, not held: CPU runs whose host time holds what no profile term
# reproduces (stated in the spec).
set -u
dlrmc=$1
repo=$2
fail=0
held="tests/validation/h200/steps/dcnv2_b8192_bf16.plain.kineto.json.gz
tests/validation/h200/steps/dcnv2_b8192_fp32.plain.kineto.json.gz
tests/validation/h200/steps/ddp_b2048_fp32.plain.kineto.json.gz
tests/validation/h200/steps/default_b16384_fp32.plain.kineto.json.gz
tests/validation/h200/steps/default_b2048_fp32.plain.kineto.json.gz
tests/validation/h200/steps/kaggle_b2048_fp32.plain.kineto.json.gz
tests/fixtures/traces/blocking_kineto.json
tests/fixtures/traces/staged_kineto.json
tests/fixtures/traces/gloo_wait_kineto.json
tests/fixtures/traces/shapes_kineto.json
tests/fixtures/traces/synthetic_kineto.json
tests/fixtures/traces/synthetic_legacy_kineto.json
tests/fixtures/traces/tf32_pair.kineto.json
tests/harden/kineto_gemm_sizes.json
tests/fixtures/multirank/gpu2_r0.kineto.json
tests/fixtures/multirank/gpu2_r1.kineto.json
tests/fixtures/multirank/ovl2_r0.kineto.json
tests/fixtures/multirank/ovl2_r1.kineto.json
tests/fixtures/multirank/dcn_w3_r1.kineto.json.gz
tests/fixtures/multirank/dot_w4_r0.kineto.json.gz
tests/fixtures/multirank/dot_w4_r1.kineto.json.gz
tests/fixtures/multirank/dot_w4_r3.kineto.json.gz
tests/fixtures/torchrec/dcn_cw_w4_r0.kineto.json.gz
tests/fixtures/torchrec/dcn_dp_w4_r0.kineto.json.gz
tests/fixtures/torchrec/dcn_dp_w4_r3.kineto.json.gz
tests/fixtures/torchrec/dcn_mixed_w4_r0.kineto.json.gz
tests/fixtures/torchrec/dcn_w1_r0.kineto.json.gz
tests/fixtures/torchrec/dcn_w2_r0.kineto.json.gz
tests/fixtures/torchrec/dcn_w2_r1.kineto.json.gz
tests/fixtures/torchrec/dot_mixed_w4_r3.kineto.json.gz
tests/fixtures/torchrec/dot_rw_w4_r0.kineto.json.gz
tests/fixtures/torchrec/dot_twrw_w4_r0.kineto.json.gz
tests/fixtures/torchrec/dot_twrw_w4_r3.kineto.json.gz
tests/fixtures/torchrec/dot_w1_r0.kineto.json.gz
tests/fixtures/torchrec/dot_w2_r0.kineto.json.gz
tests/fixtures/torchrec/dot_w2_r1.kineto.json.gz"
# CPU runs recorded on a loaded 2-core host: ops held off the CPU (an
# aten::as_strided of 8 ms) are host time no profile term reproduces
shown="tests/fixtures/multirank/dcn_w3_r0.kineto.json.gz
tests/fixtures/multirank/dcn_w3_r2.kineto.json.gz
tests/fixtures/multirank/dot_w4_r2.kineto.json.gz
tests/fixtures/torchrec/dot_mixed_w4_r0.kineto.json.gz
tests/fixtures/traces/dcn_lowrank.kineto.json.gz"
for f in $held $shown; do
  line=$("$dlrmc" overheads extract "$repo/$f" --check -o /dev/null 2>&1 |
    grep 'dlrmc overheads: check')
  pct=$(printf '%s\n' "$line" | sed -n 's/.*(\([-+0-9.]*\) %)$/\1/p')
  if [ -z "$pct" ]; then
    echo "FAIL $f: no check line"
    fail=1
    continue
  fi
  case "$held" in
  *"$f"*)
    if awk -v p="$pct" 'BEGIN { exit !(p > 10 || p < -10) }'; then
      echo "FAIL $f: $pct % (limit 10 %)"
      fail=1
    else
      echo "ok   $f: $pct %"
    fi
    ;;
  *) echo "--   $f: $pct % (not held)" ;;
  esac
done
exit $fail
