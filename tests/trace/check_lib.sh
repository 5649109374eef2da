# check_lib.sh — sourced by the shell tests that run dlrmc and look for
# lines in what it printed (tests/trace/replay.sh, tests/calibrate/
# calibrate.sh): a scratch folder $tmp removed on exit, the failure flag
# $fail (exit with it), and check FILE PATTERN WHAT, which fails the test
# and shows FILE when the fixed string PATTERN is not in it.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # check FILE PATTERN WHAT
  if ! grep -qF -- "$2" "$1"; then
    echo "FAIL $3: no '$2' in:"
    cat "$1"
    fail=1
  fi
}
