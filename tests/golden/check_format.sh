#!/bin/sh
# Where `dlrmc run` takes its output format from: --format, then the
# study's output.format, then -o's extension, then csv. Each case is
# compared with the paper-configs goldens of that format (the study writes
# no output.format; -D adds one).
# Usage: check_format.sh DLRMC STUDY GOLDEN_DIR OUTDIR
set -eu
dlrmc=$1 study=$2 golden=$3 out=$4
mkdir -p "$out"
"$dlrmc" run "$study" -D output.format=md > "$out/fmt1"
cmp "$golden/paper-configs.md" "$out/fmt1"
"$dlrmc" run "$study" -D output.format=md --format jsonl > "$out/fmt2"
cmp "$golden/paper-configs.jsonl" "$out/fmt2"
"$dlrmc" run "$study" -D output.format=jsonl -o "$out/fmt3.md"
cmp "$golden/paper-configs.jsonl" "$out/fmt3.md"
"$dlrmc" run "$study" -o "$out/fmt4.md"
cmp "$golden/paper-configs.md" "$out/fmt4.md"
"$dlrmc" run "$study" -D output.format=html > "$out/fmt5"
head -1 "$out/fmt5" | grep -qx '<!DOCTYPE html>'
"$dlrmc" run "$study" -D output.format=csv -o "$out/fmt6.md"
cmp "$golden/paper-configs.csv" "$out/fmt6.md"
echo "format precedence: ok"
