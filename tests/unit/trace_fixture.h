/*
 * trace_fixture.h — the path of a recorded trace fixture for the trace
 * readers' unit tests: tests/fixtures/traces/NAME under $DC_SOURCE_DIR
 * (ctest sets it; "." otherwise). The caller frees the string.
 */
#ifndef DC_TESTS_TRACE_FIXTURE_H
#define DC_TESTS_TRACE_FIXTURE_H

#include <stdlib.h>

#include "compiler/support/support.h"

static inline char *fixture(const char *name) {
  const char *root = getenv("DC_SOURCE_DIR");
  dc_buf b = {0};
  dc_buf_printf(&b, "%s/tests/fixtures/traces/%s", root ? root : ".", name);
  return b.data;
}

#endif
