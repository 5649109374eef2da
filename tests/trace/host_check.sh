#!/bin/sh
# host_check.sh DLRMC REPO — `dlrmc overheads extract --check` on the
# repo's traces with iterations (ProfilerStep): the profile extracted
# from a trace must give back its host time per step within 10 %
# (spec/replay.md, "Host overheads from the trace"). Held: the GPU
# traces and the hand-written ones. Printed, not held: the traces whose
# host time is dominated by what the profile has no term for (stated in
# the spec): gloo runs on the CPU (the host waits inside CPU ops for
# other ranks), hand-made 2-op traces.
set -u
dlrmc=$1
repo=$2
fail=0
held="tests/validation/h200/steps/dcnv2_b8192_bf16.plain.kineto.json.gz
tests/validation/h200/steps/ddp_b2048_fp32.plain.kineto.json.gz
tests/validation/h200/steps/default_b2048_fp32.plain.kineto.json.gz
tests/validation/h200/steps/kaggle_b2048_fp32.plain.kineto.json.gz
tests/validation/h200/steps/dcnv2_b8192_fp32.plain.kineto.json.gz
tests/validation/h200/steps/default_b16384_fp32.plain.kineto.json.gz
tests/fixtures/traces/blocking_kineto.json
tests/fixtures/traces/shapes_kineto.json
tests/fixtures/traces/synthetic_kineto.json
tests/fixtures/traces/synthetic_legacy_kineto.json
tests/fixtures/torchrec/dot_w2_r0.kineto.json.gz"
shown="tests/fixtures/traces/dcn_lowrank.kineto.json.gz
tests/fixtures/multirank/dot_w4_r2.kineto.json.gz"
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
