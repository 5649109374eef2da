#!/bin/sh
# tests/ux: a stand-in for cmake in `make demo`'s test. It prints as much
# as a real build does; `--build DIR` links DIR/compiler/dlrmc to the
# dlrmc under test ($DLRMC). With FAKE_CMAKE_FAIL set, the build fails.
i=0
while [ $i -lt 500 ]; do echo "[ $((i / 5))%] Building C object noise$i.o"; i=$((i + 1)); done
if [ "$1" = "--build" ]; then
  if [ -n "${FAKE_CMAKE_FAIL:-}" ]; then
    echo "fake.c:1:1: error: the build broke here" >&2
    exit 1
  fi
  mkdir -p "$2/compiler" && ln -sf "$DLRMC" "$2/compiler/dlrmc"
fi
exit 0
