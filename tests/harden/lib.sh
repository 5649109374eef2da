# lib.sh — helpers the reproducer cases of tests/harden/ source (run.sh
# sets DLRMC, T (a scratch directory) and the limits first).
#   run STATUS ARGS...  runs dlrmc ARGS, output in $T/out and $T/err,
#                       and fails unless it exits with STATUS
#   err_has TEXT / out_has TEXT / err_lacks TEXT  fixed-string checks
#   utf8 FILE           fails when FILE is not valid UTF-8
fail() {
  echo "FAIL: $*"
  [ -s "$T/err" ] && { echo "--- stderr"; head -c 4000 "$T/err"; }
  exit 1
}
run() {
  want=$1
  shift
  "$DLRMC" "$@" >"$T/out" 2>"$T/err"
  rc=$?
  [ "$rc" -eq "$want" ] || fail "dlrmc $* exited $rc, expected $want"
}
err_has() { grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1'"; }
err_lacks() { ! grep -qF -- "$1" "$T/err" || fail "stderr has '$1'"; }
out_has() { grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1'"; }
utf8() {
  LC_ALL=C.UTF-8 grep -qaxv '.*' "$1" && fail "$1 is not valid UTF-8"
  return 0
}
