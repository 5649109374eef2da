#!/bin/sh
# trace_kernels.sh DLRMC SOURCE_DIR DATA_DIR — `dlrmc trace kernels`:
# (1) on the hand-written tests/fixtures/traces/shapes_kineto.json, whose
#     rows are worked out in tests/unit/test_runtime_trace_attrib.c, the
#     GEMM and element-wise CSV and the stderr report must equal
#     tests/trace/expected/ byte for byte, and the GEMM rows must price
#     with `dlrmc kernel gemm --csv` (the columns it reads);
# (2) on the real A100 trace (tests/data/traces) it must give its 1,776
#     GEMM rows — every aten::mm/addmm/bmm recorded with shapes — and they
#     must price too.
set -u
dlrmc=$1
src=$2
data=$3
exp=$src/tests/trace/expected
fx=$src/tests/fixtures/traces/shapes_kineto.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for kind in gemm elementwise; do
  if ! "$dlrmc" trace kernels "$fx" --kind $kind --csv >"$tmp/$kind.csv" \
      2>"$tmp/$kind.err"; then
    echo "FAIL: trace kernels --kind $kind exited non-zero"; cat "$tmp/$kind.err"
    fail=1
  fi
  for ext in csv err; do
    want=$exp/shapes_$kind.$([ $ext = csv ] && echo csv || echo stderr)
    if ! cmp -s "$tmp/$kind.$ext" "$want"; then
      echo "FAIL: $kind $ext differs from $want:"
      diff "$want" "$tmp/$kind.$ext"
      fail=1
    fi
  done
done
if ! "$dlrmc" kernel gemm --csv "$tmp/gemm.csv" --gpu A100 >"$tmp/p.csv" \
    2>"$tmp/p.err" || [ "$(grep -c ',[0-9.]*$' "$tmp/p.csv")" -ne 4 ]; then
  echo "FAIL: the fixture's GEMM rows do not price"; cat "$tmp/p.err"
  fail=1
fi
"$dlrmc" trace stats "$fx" x >/dev/null 2>&1
if [ $? -ne 2 ]; then
  echo "FAIL: two traces given to trace stats must be a usage error"
  fail=1
fi
"$dlrmc" trace kernels "$fx" --kind conv >/dev/null 2>&1
if [ $? -ne 2 ]; then
  echo "FAIL: an unknown --kind must be a usage error"
  fail=1
fi
[ $fail -eq 0 ] || exit 1
echo "ok: fixture rows as expected"

real=$data/traces/a100_recsys_rank3_kineto.json.gz
if [ ! -f "$real" ]; then
  echo "FAIL: $real not found (the real traces live in tests/data)"
  exit 1
fi
"$dlrmc" trace kernels "$real" --csv >"$tmp/a.csv" 2>"$tmp/a.err" || {
  echo "FAIL: trace kernels on the A100 trace"; cat "$tmp/a.err"; exit 1; }
rows=$(($(wc -l <"$tmp/a.csv") - 1))
if [ $rows -ne 1776 ] || ! grep -q "^1776 GEMM rows" "$tmp/a.err" ||
    grep -q "^skipped" "$tmp/a.err"; then
  echo "FAIL: A100 trace: $rows GEMM rows, expected 1776 and no skips:"
  cat "$tmp/a.err"
  exit 1
fi
"$dlrmc" kernel gemm --csv "$tmp/a.csv" --gpu A100 -o "$tmp/ap.csv" || {
  echo "FAIL: the A100 rows do not price"; exit 1; }
[ $(($(wc -l <"$tmp/ap.csv") - 1)) -eq 1776 ] || {
  echo "FAIL: priced rows lost"; exit 1; }
echo "ok: A100 trace: 1776 GEMM rows, all priced"
