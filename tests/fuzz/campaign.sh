#!/usr/bin/env bash
# campaign.sh — fuzzes every libFuzzer target of tests/fuzz/ in turn, each
# for SECONDS, seeded with its checked-in corpus and the repo's own files
# of its kind (the same inputs its ctest replay runs), new inputs going to
# a scratch directory so the checked-in corpora stay small. CI runs it
# briefly (.ci/run); spec/development.md's long run is this script with a larger
# SECONDS. Prints one line per target (runs, seconds, crashes) and a
# total; exits 1 if any target crashed, leaked, timed out or ran out of
# memory, with the reproducer under the artifact directory.
#
# usage: tests/fuzz/campaign.sh SECONDS [BUILD_DIR [TARGET...]]
#   BUILD_DIR: a -DDC_FUZZ=ON clang build (default build-fuzz)
#   ARTIFACTS (env): where crash inputs and logs go (default: a temp dir)
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:?usage: campaign.sh SECONDS [BUILD_DIR [TARGET...]]}
build=${2:-build-fuzz}
shift $(( $# >= 2 ? 2 : $# ))
all=(fuzz_study fuzz_trace fuzz_et fuzz_gpu fuzz_overheads fuzz_model
     fuzz_csv fuzz_report fuzz_result)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
art=${ARTIFACTS:-$(mktemp -d)}
mkdir -p "$art"

seeds() {
  local f=tests/fuzz
  case $1 in
    fuzz_study) echo "$f/corpus tests/bad" ;;
    fuzz_trace) echo "$f/trace_corpus tests/fixtures/traces/synthetic_kineto.json tests/fixtures/traces/synthetic_legacy_kineto.json" ;;
    fuzz_et) echo "$f/et_corpus tests/fixtures/traces/dcn_lowrank.et.json.gz" ;;
    fuzz_gpu) echo "$f/gpu_corpus spec/gpus" ;;
    fuzz_overheads) echo "$f/overheads_corpus spec/overheads" ;;
    fuzz_model) echo "$f/model_corpus" ;;
    fuzz_csv) echo "$f/csv_corpus" ;;
    fuzz_report) echo "$f/report_corpus tests/golden/paper-configs.jsonl tests/golden/gpu-generations.csv" ;;
    fuzz_result) echo "$f/result_corpus $f/corpus" ;;
  esac
}

total_runs=0 total_secs=0 failed=0
for t in "${targets[@]}"; do
  bin=$build/tests/$t
  if [ ! -x "$bin" ]; then
    echo "campaign: $bin not built" >&2
    exit 2
  fi
  work=$(mktemp -d)
  # libFuzzer takes directories; single seed files are copied in.
  dirs=()
  for s in $(seeds "$t"); do
    if [ -d "$s" ]; then dirs+=("$s"); else cp "$s" "$work"/; fi
  done
  start=$(date +%s)
  "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$art/$t-" \
    "$work" "${dirs[@]}" >"$art/$t.log" 2>&1
  rc=$?
  end=$(date +%s)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$art/$t.log" | tail -1)
  runs=${runs:-0}
  crashes=0
  if [ $rc -ne 0 ]; then crashes=1; failed=1; fi
  printf '%-16s %10s runs %6s s  crashes %s  corpus +%s\n' "$t" "$runs" \
    $((end - start)) "$crashes" "$(ls "$work" | wc -l)"
  if [ $rc -ne 0 ]; then
    echo "campaign: $t failed (exit $rc); log and input in $art" >&2
    grep -m5 -E 'ERROR|SUMMARY|Test unit written' "$art/$t.log" >&2
  fi
  total_runs=$((total_runs + runs))
  total_secs=$((total_secs + end - start))
  rm -rf "$work"
done
echo "total: $total_runs runs in $total_secs s over ${#targets[@]} targets; artifacts in $art"
exit $failed
