#!/bin/sh
# real_traces.sh DLRMC DATA_DIR MODE — runs `dlrmc overheads extract`
# (MODE=extract) or `dlrmc trace stats` (MODE=stats) on every file of
# DATA_DIR/traces (../shared/data/traces). Kineto traces must succeed with
# a plausible result; execution traces (*_et*) must be refused with exit 1
# and a message saying they are execution traces. Skips (exit 77) when
# the shared data is absent.
set -u
dlrmc=$1
dir=$2/traces
mode=$3
if [ ! -d "$dir" ]; then
  echo "skipped: $dir not found (the real traces live in ../shared/data)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
for f in "$dir"/*; do
  n=$((n + 1))
  base=$(basename "$f")
  if [ "$mode" = extract ]; then
    "$dlrmc" overheads extract "$f" -o "$tmp/p.yaml" >"$tmp/out" 2>"$tmp/err"
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
    ;;
  esac
done
[ $n -gt 0 ] || { echo "FAIL: no files in $dir"; exit 1; }
exit $fail
