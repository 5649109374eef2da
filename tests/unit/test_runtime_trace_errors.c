/*
 * test_runtime_trace_errors.c — truncated and malformed traces: every one
 * gets an E0801 (or E0001 for I/O) diagnostic naming the file, with the
 * line:col yajl or the type check stopped at, and never a crash. Inputs
 * are written to temporary files here (gzip ones with zlib), so nothing
 * large or broken is committed.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "runtime/trace/trace.h"

static char tmp_path[64];

static const char *write_tmp(const char *text, size_t len, bool gzip) {
  snprintf(tmp_path, sizeof tmp_path, "/tmp/dc_trace_err_XXXXXX");
  int fd = mkstemp(tmp_path);
  assert_true(fd >= 0);
  if (gzip) {
    gzFile g = gzdopen(fd, "wb");
    assert_non_null(g);
    assert_int_equal(gzwrite(g, text, (unsigned)len), (int)len);
    gzclose(g);
  } else {
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
  }
  return tmp_path;
}

/* Loads `text` and expects failure with one error whose message contains
 * `want` at line:col (0: do not check that part). */
static void expect_error(const char *text, size_t len, bool gzip,
                         const char *want, int line, int col) {
  const char *path = write_tmp(text, len, gzip);
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_trace t;
  bool ok = dc_trace_load(path, &t, &a, &d);
  if (d.count) dc_diags_render(&d, stderr, false);
  assert_false(ok);
  assert_int_equal(d.errors, 1);
  assert_non_null(strstr(d.items[0].message, want));
  assert_non_null(d.items[0].span.src);
  assert_string_equal(d.items[0].span.src->path, path);
  if (line) {
    assert_int_equal(d.items[0].span.line, line);
    if (col) assert_int_equal(d.items[0].span.col, col);
  }
  /* Rendering never crashes and starts with "file:". */
  dc_buf r = {0};
  dc_diag_render_one(&d.items[0], &r, false);
  assert_true(strncmp(r.data, path, strlen(path)) == 0);
  dc_buf_free(&r);
  dc_trace_free(&t);
  dc_diags_free(&d);
  dc_arena_free(&a);
  remove(path);
}

#define EXPECT(text, want, line, col)                                          \
  expect_error(text, strlen(text), false, want, line, col)

static void test_invalid_json(void **state) {
  (void)state;
  /* The stray comma on line 2, column 31 (the '}' after it). */
  EXPECT("{\"traceEvents\": [\n  {\"ph\": \"X\", \"name\": \"a\", }\n]}",
         "invalid JSON", 2, 29);
  EXPECT("{\"traceEvents\": [ nope ]}", "invalid JSON", 1, 0);
  EXPECT("[{\"ph\": \"X\"", "premature EOF", 0, 0);
  EXPECT("{\"traceEvents\": []} trailing", "invalid JSON", 0, 0);
}

static void test_wrong_shapes(void **state) {
  (void)state;
  EXPECT("{\"foo\": 1}", "no 'traceEvents' array", 0, 0);
  EXPECT("{\"traceEvents\": 5}",
         "'traceEvents' must be an array, not a "
         "number",
         1, 0);
  EXPECT("{\"traceEvents\": {\"a\": 1}}", "must be an array, not an object", 0,
         0);
  EXPECT("{\"traceEvents\": [1]}", "element #1 of 'traceEvents' is a number", 0,
         0);
  EXPECT("{\"traceEvents\": [{\"ph\": \"X\"}, [2]]}",
         "element #2 of 'traceEvents' is an array", 0, 0);
  EXPECT("\"just a string\"", "no 'traceEvents'", 0, 0);
}

static void test_wrong_types(void **state) {
  (void)state;
  EXPECT("{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"cpu_op\", "
         "\"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": \"12\", "
         "\"dur\": 3}]}",
         "'ts' of event #1 must be a number, not a string", 2, 0);
  EXPECT("{\"traceEvents\": [{\"ph\": \"X\", \"name\": 7}]}",
         "'name' of event #1 must be a string, not a number", 0, 0);
  EXPECT("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, "
         "\"dur\": 2, \"args\": {\"correlation\": \"x\"}}]}",
         "'args.correlation' of event #1 is not an integer", 0, 0);
  EXPECT("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"ts\": 1, "
         "\"dur\": -2}]}",
         "negative 'dur'", 0, 0);
  EXPECT("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", "
         "\"dur\": 2}]}",
         "has no 'ts'", 0, 0);
  EXPECT("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", "
         "\"ts\": 99999999999999999999, \"dur\": 2}]}",
         "'ts' of event #1 is out of range", 0, 0);
  EXPECT("{\"traceEvents\": [{\"ph\": \"X\", \"tid\": [1]}]}",
         "'tid' of event #1 cannot be an array", 1, 37);
}

static void test_execution_trace(void **state) {
  (void)state;
  EXPECT("{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": [{\"id\": 1}]}",
         "execution trace", 0, 0);
}

static void test_empty_and_missing(void **state) {
  (void)state;
  expect_error("", 0, false, "empty file", 0, 0);
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_trace t;
  assert_false(dc_trace_load("/nonexistent/dir/trace.json", &t, &a, &d));
  assert_int_equal(d.errors, 1);
  assert_int_equal(d.items[0].code, DC_DIAG_IO);
  assert_non_null(strstr(d.items[0].message, "cannot open"));
  dc_diags_free(&d);
  dc_diags d2 = {0};
  assert_false(dc_trace_load("/tmp", &t, &a, &d2));
  assert_int_equal(d2.errors, 1);
  dc_diags_free(&d2);
  dc_arena_free(&a);
}

static const char *good =
    "{\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::relu\", "
    "\"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 20},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
    "\"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 12, \"dur\": 5, "
    "\"args\": {\"correlation\": 4}}\n"
    "]}\n";

/* A trace cut in the middle: premature EOF from yajl (plain), and a gzip
 * stream cut short: zlib's "unexpected end of file". */
static void test_truncated(void **state) {
  (void)state;
  size_t n = strlen(good);
  expect_error(good, n / 2, false, "premature EOF", 0, 0);
}

static void test_truncated_gzip(void **state) {
  (void)state;
  /* Compress `good`, then cut the compressed bytes. */
  char full[512];
  size_t clen;
  /* gzip container: write with gz*, read back the bytes. */
  const char *p = write_tmp(good, strlen(good), true);
  FILE *f = fopen(p, "rb");
  assert_non_null(f);
  clen = fread(full, 1, sizeof full, f);
  fclose(f);
  remove(p);
  assert_true(clen > 20);
  expect_error(full, clen - 12, false,
               "truncated gzip data: unexpected end "
               "of file",
               0, 0);
  /* Corrupt the deflate data. */
  for (size_t i = 12; i < 24 && i < clen; i++)
    full[i] ^= 0x5a;
  const char *q = write_tmp(full, clen, false);
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_trace t;
  assert_false(dc_trace_load(q, &t, &a, &d));
  assert_true(d.errors >= 1);
  dc_diags_free(&d);
  dc_arena_free(&a);
  remove(q);
}

/* A well-formed trace loads: the events we keep, with ns times. */
static void test_good(void **state) {
  (void)state;
  const char *path = write_tmp(good, strlen(good), true);
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_trace t;
  assert_true(dc_trace_load(path, &t, &a, &d));
  assert_int_equal(t.n_ev, 2);
  assert_int_equal(t.n_json_events, 2);
  assert_int_equal(t.ev[1].ts_ns, 12000);
  assert_int_equal(t.ev[1].dur_ns, 5000);
  assert_int_equal(t.ev[1].corr, 4);
  assert_string_equal(t.names[t.ev[1].name], "cudaLaunchKernel");
  assert_string_equal(t.threads[t.ev[1].thread], "1/1");
  dc_trace_free(&t);
  dc_diags_free(&d);
  dc_arena_free(&a);
  remove(path);
}

/* Fractional µs with ns resolution, epoch-scale: exact in int64 ns. */
static void test_ns_times(void **state) {
  (void)state;
  const char *text =
      "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
      "\"tid\": \"stream 7\", \"ts\": 1689360788493697.123, "
      "\"dur\": 2.5}]";
  const char *path = write_tmp(text, strlen(text), false);
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_trace t;
  assert_true(dc_trace_load(path, &t, &a, &d));
  assert_int_equal(t.n_ev, 1);
  assert_true(t.ev[0].ts_ns == INT64_C(1689360788493697123));
  assert_int_equal(t.ev[0].dur_ns, 2500);
  assert_string_equal(t.threads[t.ev[0].thread], "0/stream 7");
  dc_trace_free(&t);
  dc_diags_free(&d);
  dc_arena_free(&a);
  remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_json),
      cmocka_unit_test(test_wrong_shapes),
      cmocka_unit_test(test_wrong_types),
      cmocka_unit_test(test_execution_trace),
      cmocka_unit_test(test_empty_and_missing),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_truncated_gzip),
      cmocka_unit_test(test_good),
      cmocka_unit_test(test_ns_times),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
