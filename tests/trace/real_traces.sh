#!/bin/sh
# real_traces.sh DLRMC DATA_DIR MODE — runs `dlrmc overheads extract`
# (MODE=extract) or `dlrmc trace stats` (MODE=stats) on every file of
# DATA_DIR/traces (tests/data/traces). Kineto traces must succeed with
# a plausible result; execution traces (*_et*) must be refused with exit 1
# and a message saying they are execution traces. Extract also runs the
# profile's self-consistency check (--check) and, on traces with
# ProfilerStep iterations, fails when the profile's host time per step is
# more than MAX_CHECK_PCT (10 %) off the measured one.
# Without the blocking-call wait separated from T4 (runtime/trace/tree.c)
# the A100 trace is -25.6 % off and this fails.
# Fails when the data folder is absent.
set -u
dlrmc=$1
dir=$2/traces
mode=$3
MAX_CHECK_PCT=10
if [ ! -d "$dir" ]; then
  echo "FAIL: $dir not found (the real traces live in tests/data)"
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
for f in "$dir"/*; do
  n=$((n + 1))
  base=$(basename "$f")
  if [ "$mode" = extract ]; then
    "$dlrmc" overheads extract "$f" -o "$tmp/p.yaml" --check >"$tmp/out" 2>"$tmp/err"
  else
    "$dlrmc" trace stats "$f" --format csv -o "$tmp/p.csv" >"$tmp/out" 2>"$tmp/err"
  fi
  rc=$?
  case "$base" in
  *_et*)
    if [ $rc -ne 1 ] || ! grep -q "execution trace" "$tmp/err"; then
      echo "FAIL $base: expected exit 1 and 'execution trace', got $rc:"
      cat "$tmp/err"
      fail=1
    else
      echo "ok   $base (refused: execution trace)"
    fi
    ;;
  *)
    want=$([ "$mode" = extract ] && echo "defaults: {t1:" || echo "gpu_util")
    file=$([ "$mode" = extract ] && echo "$tmp/p.yaml" || echo "$tmp/p.csv")
    if [ $rc -ne 0 ] || ! grep -q "$want" "$file"; then
      echo "FAIL $base: exit $rc"
      cat "$tmp/err"
      fail=1
    else
      echo "ok   $base"
    fi
    if [ "$mode" = extract ] && [ $rc -eq 0 ]; then
      line=$(grep "check " "$tmp/err")
      echo "     $line"
      steps=$(echo "$line" | sed -n 's/.*: \([0-9]*\) steps,.*/\1/p')
      pct=$(echo "$line" | sed -n 's/.*(\([-+][0-9.]*\) %)$/\1/p')
      if [ -z "$pct" ]; then
        echo "FAIL $base: no self-consistency line"
        fail=1
      elif [ "${steps:-0}" -gt 0 ] &&
        awk -v p="$pct" -v m="$MAX_CHECK_PCT" 'BEGIN { exit !(p > m || p < -m) }'; then
        echo "FAIL $base: the profile's host time is $pct % off its own trace (limit $MAX_CHECK_PCT %)"
        fail=1
      fi
    fi
    ;;
  esac
done
[ $n -gt 0 ] || { echo "FAIL: no files in $dir"; exit 1; }
exit $fail
