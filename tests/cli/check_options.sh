#!/bin/sh
# check_options.sh DLRMC SOURCE_DIR — every command reads its options with
# the one reader of compiler/cli/cmd_common.c (cli_next): `--opt value`
# and `--opt=value` give the same output, `--` ends the options, a flag
# given a value and an unknown option are usage errors (exit 2). Each of
# the twelve commands has at least one `--opt=value` pair below.
set -u
dlrmc=$1
cd "$2" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
study=studies/paper-configs.yaml
# same NAME ARGS-A -- ARGS-B: both command lines exit 0 with equal stdout
same() {
  name=$1
  shift
  a=""
  while [ "$1" != "::" ]; do a="$a $1"; shift; done
  shift
  # shellcheck disable=SC2086
  "$dlrmc" $a >"$tmp/a" 2>"$tmp/ae"; ra=$?
  "$dlrmc" "$@" >"$tmp/b" 2>"$tmp/be"; rb=$?
  if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
    echo "FAIL $name: exit $ra / $rb"; cat "$tmp/ae" "$tmp/be"; fail=1
  elif ! cmp -s "$tmp/a" "$tmp/b" || [ ! -s "$tmp/a" ]; then
    echo "FAIL $name: outputs differ or are empty"; fail=1
  else
    echo "ok $name"
  fi
}
# usage NAME ARGS...: exit status 2
usage() {
  name=$1
  shift
  "$dlrmc" "$@" >/dev/null 2>&1
  rc=$?
  if [ $rc -ne 2 ]; then echo "FAIL $name: exit $rc, not 2"; fail=1
  else echo "ok $name"; fi
}
same graph_format graph $study --format text :: graph $study --format=text
same graph_point graph --point 1 $study :: graph --point=1 -- $study
same explain_point explain $study --point 0 :: explain --point=0 $study
same explain_rank explain $study -p 1 --rank 0 :: explain $study --point=1 --rank=0
same explain_only explain $study --only ops --only metrics :: explain --only=metrics $study --only=ops
same explain_plan explain studies/dcnv2-hosts.yaml -p 2 --only plan :: explain --only=plan --point=2 studies/dcnv2-hosts.yaml
same run_format run $study --format md :: run --format=md $study
same run_jobs run $study -j 2 --digits 4 :: run --jobs=2 --digits=4 -- $study
same run_define run $study -D training.batch_size=64 :: run -Dtraining.batch_size=64 $study
same check_dashdash check $study :: check -- $study
same gpus_name gpus V100 :: gpus -- V100
same kernel_gpu kernel gemm m=64 n=64 k=64 --gpu V100 :: kernel gemm m=64 n=64 k=64 --gpu=V100
tr=tests/fixtures/traces
db=tests/data/deepbench/deepbench_gemm_T4_fp32.csv
same trace_table trace stats $tr/synthetic_kineto.json --table steps :: trace stats --table=steps $tr/synthetic_kineto.json
same overheads_name overheads extract $tr/synthetic_kineto.json --name x :: overheads extract --name=x -- $tr/synthetic_kineto.json
same replay_gpu replay $tr/dcn_lowrank.et.json.gz $tr/dcn_lowrank.kineto.json.gz --gpu A100 --csv :: replay --gpu=A100 --csv $tr/dcn_lowrank.et.json.gz $tr/dcn_lowrank.kineto.json.gz
# the page quotes its command line: that line is left out of the compare
r=tests/golden/batch-scaling.csv
"$dlrmc" report $r --title T --metric e2e_ms 2>&1 | grep -v '<dt>command</dt>' >"$tmp/ra"
"$dlrmc" report --title=T --metric=e2e_ms -- $r 2>&1 | grep -v '<dt>command</dt>' >"$tmp/rb"
if grep -q '<h1>T</h1>' "$tmp/ra" && cmp -s "$tmp/ra" "$tmp/rb"; then
  echo "ok report_title"
else
  echo "FAIL report_title: outputs differ or lack the title"; fail=1
fi
same fit_epochs fit gemm $db --layers 3 --neurons 8 --epochs 2 --seed 1 :: fit gemm --layers=3 --neurons=8 --epochs=2 --seed=1 -- $db
# calibrate writes a folder and names it in its report: both spellings
# write the same folder name, one after the other
st=tests/validation/h200/steps
sed 's/^name: .*/name: H200-uncalibrated/; /^aliases:/d' \
  spec/gpus/h200-sxm-141gb.yaml >"$tmp/gpu.yaml"
cal() {
  rm -rf "$tmp/cal"
  "$dlrmc" calibrate "$@" "$st/default_b2048_fp32.et.json.gz" \
    "$st/default_b2048_fp32.kineto.json.gz" "$st/ddp_b2048_fp32.et.json.gz" \
    "$st/ddp_b2048_fp32.kineto.json.gz"
}
cal --gpu "$tmp/gpu.yaml" --folds 2 -o "$tmp/cal" >"$tmp/ca" 2>&1; ra=$?
cp "$tmp/cal/gemm.yaml" "$tmp/ga" 2>/dev/null
cal --gpu="$tmp/gpu.yaml" --folds=2 --output="$tmp/cal" >"$tmp/cb" 2>&1; rb=$?
if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
  echo "FAIL calibrate_folds: exit $ra / $rb"; cat "$tmp/ca" "$tmp/cb"; fail=1
elif ! cmp -s "$tmp/ca" "$tmp/cb" || ! cmp -s "$tmp/ga" "$tmp/cal/gemm.yaml"; then
  echo "FAIL calibrate_folds: outputs differ"; fail=1
else
  echo "ok calibrate_folds"
fi
usage calibrate_twice calibrate a.json b.json --gpu H200 --gpu=A100 -o x
usage calibrate_unknown calibrate a.json b.json --gpu=H200 --fold=3 -o x
usage run_flag_value run --per-rank=1 $study
usage graph_unknown graph --pointt=1 $study
usage graph_device_text graph $study --with-device
usage graph_device_flag graph $study --format et --with-device=1
usage graph_device_from_et graph --from-et x.json --format et --with-device
usage graph_all_stdout graph $study --format et --rank all
usage graph_all_dot graph $study --format dot --rank all -o "$tmp/d"
usage graph_rank_word graph $study --format et --rank some
usage explain_missing explain $study --point
usage explain_only_bad explain $study --only bogus
usage dashdash_positional run -- --format md
exit $fail
