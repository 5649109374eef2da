#!/bin/sh
# check_metrics.sh DLRMC SOURCE_DIR — the metric names are one table,
# compiler/support/metric_names.h; what documents them is checked against
# it: every name must appear in `dlrmc help run` and in spec/study.md.
set -u
dlrmc=$1
cd "$2" || exit 1
names=$(sed -n 's/^ *X([A-Z0-9_]*, "\([a-z0-9_]*\)").*/\1/p' \
  compiler/support/metric_names.h)
[ -n "$names" ] || { echo "FAIL: no names read from metric_names.h"; exit 1; }
help=$("$dlrmc" help run)
fail=0 n=0
for m in $names; do
  n=$((n + 1))
  printf '%s\n' "$help" | grep -qw -- "$m" ||
    { echo "FAIL: $m is not in 'dlrmc help run'"; fail=1; }
  grep -qw -- "$m" spec/study.md ||
    { echo "FAIL: $m is not in spec/study.md"; fail=1; }
done
[ $fail -eq 0 ] && echo "ok: $n metrics, each in 'dlrmc help run' and spec/study.md"
exit $fail
