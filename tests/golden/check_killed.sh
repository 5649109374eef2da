#!/bin/sh
# A run interrupted half-way must leave nothing under the output name:
# SIGTERM (the handler also removes the temporary file) and SIGKILL (the
# temporary, named .OUT.tmp-PID-XXXXXX, may stay; OUT itself must not exist).
# Usage: check_killed.sh DLRMC STUDY OUTDIR
set -eu
dlrmc=$1 study=$2 out=$3
mkdir -p "$out/killed"
big="$out/killed/big.yaml"
# The wide study with a long batch-size range: millions of points.
sed 's/^  training.batch_size: .*/  training.batch_size: {from: 64, to: 100000000, step: 64}/' \
  "$study" > "$big"
for sig in TERM KILL; do
  rm -f "$out/killed/out.csv" "$out/killed/.out.csv.tmp-"*
  "$dlrmc" run "$big" -o "$out/killed/out.csv" --jobs 2 &
  pid=$!
  sleep 2
  kill -s "$sig" "$pid"
  wait "$pid" 2>/dev/null || true
  if [ -e "$out/killed/out.csv" ]; then
    echo "SIG$sig: a partial output file was left behind"; exit 1
  fi
  if [ "$sig" = TERM ] && ls "$out/killed/.out.csv.tmp-"* >/dev/null 2>&1; then
    echo "SIGTERM: the temporary file was not removed"; exit 1
  fi
done
rm -f "$out/killed/.out.csv.tmp-"*
echo "interrupted runs left no output file"
