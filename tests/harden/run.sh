#!/bin/sh
# run.sh DLRMC NAME — one reproducer of tests/harden/ (NAME.sh) under the
# bounds every hostile input must meet: 20 s of wall time and 2 GB of
# address space (ulimit -v; not in sanitizer builds, whose shadow memory
# reserves terabytes of address space: DC_HARDEN_NO_ULIMIT=1). The case
# runs in tests/harden/ with a scratch directory $T.
DLRMC=$1
name=$2
cd "$(dirname "$0")" || exit 2
T=$(mktemp -d) || exit 2
trap 'rm -rf "$T"' EXIT
export DLRMC T
if [ -z "${DC_HARDEN_NO_ULIMIT:-}" ]; then
  ulimit -v 2097152 || exit 2
fi
timeout 20 sh -c '. ./lib.sh; . "./$1.sh"' sh "$name"
rc=$?
[ $rc -eq 124 ] && echo "FAIL: $name ran past 20 s"
exit $rc
