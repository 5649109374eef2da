#!/bin/sh
# calibrate.sh DLRMC REPO — `dlrmc calibrate` end to end (spec/calibrate.md)
# on the repo's recorded H200 step (tests/validation/h200/steps, the
# dlrm_default preset at batch 2048): the report names every family the
# step has with its held-out error, the folder gets families.yaml, a study
# that names the folder (system.kernel_models) runs and prices differently
# from the built-in models, and the errors: a folder without models, a
# broken families.yaml (at its own line), an odd number of traces, no -o.
# --micro: micro.py's element-wise and copy tables of round two fit their
# families alone; a bad micro.py table is an error at its cell, a folder
# without any table an error.
# fit --gate-of: the V100 GEMM model with its gate stripped gets the same
# gate radius back from the DeepBench rows it was fitted on; a model of
# another kind is an error at its kind.
set -u
dlrmc=$1
repo=$2
. "$repo/tests/trace/check_lib.sh"
steps=$repo/tests/validation/h200/steps
# the H200 under another name: a GPU with no fitted models of its own
sed 's/^name: .*/name: H200-uncalibrated/; /^aliases:/d' \
  "$repo/spec/gpus/h200-sxm-141gb.yaml" >"$tmp/gpu.yaml"
"$dlrmc" calibrate "$steps/default_b2048_fp32.et.json.gz" \
  "$steps/default_b2048_fp32.kineto.json.gz" \
  "$steps/ddp_b2048_fp32.et.json.gz" "$steps/ddp_b2048_fp32.kineto.json.gz" \
  --gpu "$tmp/gpu.yaml" -o "$tmp/cal" \
  >"$tmp/rep" 2>"$tmp/err" || { echo "FAIL calibrate: exit $?"; cat "$tmp/err"; fail=1; }
check "$tmp/rep" "| embedding_bwd_stock | 16 | 2 | analytic (fewer than 6)" "few rows keep the analytic model"
check "$tmp/rep" "| gemm | - | 33 | mlp |" "GEMM fitted"
[ -f "$tmp/cal/gemm.yaml" ] || { echo "FAIL: no gemm.yaml"; fail=1; }
check "$tmp/rep" "| elementwise |" "element-wise row"
check "$tmp/rep" "(5-fold)" "k-fold held-out error"
check "$tmp/rep" "kernel_models: $tmp/cal" "how to use it"
[ -f "$tmp/cal/families.yaml" ] || { echo "FAIL: no families.yaml"; fail=1; }
# a what-if on the calibrated models: the same study with and without them
cat >"$tmp/s.yaml" <<YAML
study: calibrated-what-if
model: {preset: dlrm_default, embedding_kernel: per_table}
training: {batch_size: 2048, optimizer: sgd}
system: {gpu: gpu.yaml, gpus: 1, kernel_models: cal}
sweep: {training.batch_size: [2048, 16384]}
output: {columns: [training.batch_size, e2e_ms, kernel_only_ms]}
YAML
"$dlrmc" run "$tmp/s.yaml" >"$tmp/cal.csv" 2>"$tmp/err" || { echo "FAIL run: exit $?"; cat "$tmp/err"; fail=1; }
sed '/kernel_models/d; s/gpus: 1, kernel_models: cal/gpus: 1/' "$tmp/s.yaml" >"$tmp/b.yaml"
"$dlrmc" run "$tmp/b.yaml" >"$tmp/base.csv" 2>"$tmp/err" || { echo "FAIL base run: exit $?"; cat "$tmp/err"; fail=1; }
check "$tmp/cal.csv" "2048," "calibrated run"
"$dlrmc" explain "$tmp/s.yaml" >"$tmp/explain" 2>"$tmp/err" || { echo "FAIL explain: exit $?"; cat "$tmp/err"; fail=1; }
check "$tmp/explain" "fitted family elementwise:" "explain names the fitted family"
check "$tmp/explain" "gemm             mlp                nearest of the" "explain gives the gate's distance"
if cmp -s "$tmp/cal.csv" "$tmp/base.csv"; then
  echo "FAIL: the calibrated models changed nothing"; fail=1
fi
# errors
mkdir -p "$tmp/empty" "$tmp/bad"
sed 's/kernel_models: cal/kernel_models: empty/' "$tmp/s.yaml" >"$tmp/e.yaml"
"$dlrmc" run "$tmp/e.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || { echo "FAIL empty folder: not exit 1"; fail=1; }
check "$tmp/err" "e.yaml:4:49" "empty folder at the study's key"
check "$tmp/err" "no fitted kernel models" "empty folder message"
printf 'kind: families\nfamilies:\n  elementwise: {fraction: 2, latency_us: 1}\n' >"$tmp/bad/families.yaml"
sed 's/kernel_models: cal/kernel_models: bad/' "$tmp/s.yaml" >"$tmp/x.yaml"
"$dlrmc" run "$tmp/x.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || { echo "FAIL bad families: not exit 1"; fail=1; }
check "$tmp/err" "families.yaml:3:27: error" "broken file at its own line"
"$dlrmc" calibrate "$steps/default_b2048_fp32.et.json.gz" --gpu "$tmp/gpu.yaml" -o "$tmp/o" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || { echo "FAIL odd traces: not exit 2"; fail=1; }
"$dlrmc" calibrate "$steps/default_b2048_fp32.et.json.gz" \
  "$steps/default_b2048_fp32.kineto.json.gz" --gpu "$tmp/gpu.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || { echo "FAIL no -o: not exit 2"; fail=1; }
# --micro: the round-two element-wise and copy tables (the span artefact
# undone: single-kernel rows halved, host copies skipped)
mkdir -p "$tmp/micro" "$tmp/badmicro" "$tmp/nomicro"
cp "$repo/tests/validation/h200/round2/elementwise.csv" \
  "$repo/tests/validation/h200/round2/copy.csv" "$tmp/micro/"
"$dlrmc" calibrate --micro "$tmp/micro" --gpu "$tmp/gpu.yaml" -o "$tmp/mc" \
  >"$tmp/rep" 2>"$tmp/err" || { echo "FAIL calibrate --micro: exit $?"; cat "$tmp/err"; fail=1; }
check "$tmp/rep" "(2 microbenchmark files; 47 rows skipped" "micro files read, host copies skipped"
check "$tmp/rep" "| elementwise | 45 | 45 | fitted-bandwidth |" "micro element-wise fitted"
check "$tmp/rep" "| memcpy_d2d | 11 | 11 | fitted-bandwidth |" "micro device copies fitted"
check "$tmp/mc/families.yaml" "2 microbenchmark file(s) of" "families.yaml says where its rows came from"
printf '# micro.py elementwise\nop,inputs,elements,dtype,bytes_moved,kernel_us,kernels,names\nreul,1,1000,fp32,8000,2.368,2.0,x|rep#0#0\n' \
  >"$tmp/badmicro/elementwise.csv"
"$dlrmc" calibrate --micro "$tmp/badmicro" --gpu "$tmp/gpu.yaml" -o "$tmp/o" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || { echo "FAIL bad micro table: not exit 1"; fail=1; }
check "$tmp/err" "elementwise.csv:3:1: error: 'op': 'reul' is not relu" "bad micro op at its cell"
check "$tmp/err" "did you mean 'relu'?" "bad micro op hint"
"$dlrmc" calibrate --micro "$tmp/nomicro" --gpu "$tmp/gpu.yaml" -o "$tmp/o" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || { echo "FAIL micro folder without tables: not exit 1"; fail=1; }
check "$tmp/err" "the folder has none of elementwise.csv" "micro folder without tables"
v100=$repo/spec/kernels/v100-sxm2-16gb/gemm.yaml
db=$repo/tests/data/deepbench
grep -v '^gate_radius\|^support' "$v100" >"$tmp/nogate.yaml"
"$dlrmc" fit gemm "$db/deepbench_gemm_V100_fp32.csv" \
  "$db/deepbench_gemm_V100_fp16.csv" --seed 20221218 \
  --gate-of "$tmp/nogate.yaml" -o "$tmp/gated.yaml" 2>"$tmp/err" ||
  { echo "FAIL fit --gate-of: exit $?"; cat "$tmp/err"; fail=1; }
check "$tmp/gated.yaml" "$(grep '^gate_radius' "$v100")" "fit --gate-of radius"
"$dlrmc" fit gemm "$db/deepbench_gemm_V100_fp32.csv" \
  --gate-of "$repo/spec/kernels/h200-sxm-141gb/transpose.yaml" \
  -o "$tmp/x.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || { echo "FAIL fit --gate-of another kind: not exit 1"; fail=1; }
check "$tmp/err" "transpose.yaml:8:1: error: fitted model" "fit --gate-of kind"
exit $fail
