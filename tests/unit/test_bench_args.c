/*
 * test_bench_args.c — dlrmc-bench's command line
 * (kernels/bench/bench_args.c): defaults (the paper's 5 + 30 protocol),
 * every option in both spellings, the help forms, and each usage error
 * with its message and "did you mean" hint.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "kernels/bench/bench.h"

/* argv from string literals (const under -Wwrite-strings); the parser
 * never writes to its arguments. */
#define ARGV(...) ((char **)(const char *[]){"dlrmc-bench", __VA_ARGS__, NULL})
#define ARGC(...)                                                      \
  ((int)(sizeof((const char *[]){"dlrmc-bench", __VA_ARGS__}) /        \
         sizeof(const char *)))
#define PARSE(o, err, hint, ...)                                         \
  dc_bench_args_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), (o), (err), \
                      (hint))

static void test_defaults(void **state) {
  (void)state;
  dc_bench_opts o;
  dc_buf err = {0}, hint = {0};
  assert_true(PARSE(&o, &err, &hint, "gemm"));
  assert_int_equal(o.action, DC_BENCH_ACT_RUN);
  assert_ptr_equal(o.kind, dc_bench_kind_find("gemm"));
  assert_int_equal(o.warmup, 5);
  assert_int_equal(o.iters, 30);
  assert_int_equal(o.device, 0);
  assert_int_equal(o.samples, -1);
  assert_int_equal(o.seed, 1);
  assert_int_equal(o.max_bytes, INT64_C(4) << 30);
  assert_null(o.out_path);
  assert_false(o.list);
  for (int d = 0; d < DC_BENCH_MAX_DIMS; d++)
    assert_null(o.lists[d]);
}

static void test_options(void **state) {
  (void)state;
  dc_bench_opts o;
  dc_buf err = {0}, hint = {0};
  assert_true(PARSE(&o, &err, &hint, "tril", "-o", "t.csv", "--iters=10",
                    "--warmup", "0", "--device", "1", "--samples=7",
                    "--seed", "42", "--max-bytes", "1GiB", "--list",
                    "--kind", "tril_bwd", "--n=9,27"));
  assert_string_equal(o.out_path, "t.csv");
  assert_int_equal(o.iters, 10);
  assert_int_equal(o.warmup, 0);
  assert_int_equal(o.device, 1);
  assert_int_equal(o.samples, 7);
  assert_int_equal(o.seed, 42);
  assert_int_equal(o.max_bytes, INT64_C(1) << 30);
  assert_true(o.list);
  assert_string_equal(o.lists[DC_TRIL_KIND], "tril_bwd");
  assert_string_equal(o.lists[DC_TRIL_N], "9,27");
  assert_null(o.lists[DC_TRIL_BATCH]);
  assert_true(PARSE(&o, &err, &hint, "memcpy", "--output", "m.csv"));
  assert_string_equal(o.out_path, "m.csv");
}

static void test_help_forms(void **state) {
  (void)state;
  dc_bench_opts o;
  dc_buf err = {0}, hint = {0};
  assert_true(PARSE(&o, &err, &hint, "--help"));
  assert_int_equal(o.action, DC_BENCH_ACT_HELP);
  assert_null(o.kind);
  assert_true(PARSE(&o, &err, &hint, "-h"));
  assert_int_equal(o.action, DC_BENCH_ACT_HELP);
  assert_true(PARSE(&o, &err, &hint, "help"));
  assert_null(o.kind);
  assert_true(PARSE(&o, &err, &hint, "help", "embedding"));
  assert_int_equal(o.action, DC_BENCH_ACT_HELP);
  assert_ptr_equal(o.kind, dc_bench_kind_find("embedding"));
  assert_true(PARSE(&o, &err, &hint, "memcpy", "--bytes", "1", "--help"));
  assert_int_equal(o.action, DC_BENCH_ACT_HELP);
  assert_ptr_equal(o.kind, dc_bench_kind_find("memcpy"));
  assert_true(PARSE(&o, &err, &hint, "--version"));
  assert_int_equal(o.action, DC_BENCH_ACT_VERSION);
  assert_true(PARSE(&o, &err, &hint, "devices"));
  assert_int_equal(o.action, DC_BENCH_ACT_DEVICES);
}

static void expect_error(int argc, char **argv, const char *msg,
                         const char *want_hint) {
  dc_bench_opts o;
  dc_buf err = {0}, hint = {0};
  assert_false(dc_bench_args_parse(argc, argv, &o, &err, &hint));
  assert_non_null(err.data);
  if (!strstr(err.data, msg))
    fail_msg("message '%s' lacks '%s'", err.data, msg);
  if (want_hint) {
    assert_non_null(hint.data);
    if (!strstr(hint.data, want_hint))
      fail_msg("hint '%s' lacks '%s'", hint.data, want_hint);
  }
  dc_buf_free(&err);
  dc_buf_free(&hint);
}

#define EXPECT_ERROR(msg, hint, ...) \
  expect_error(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), (msg), (hint))

static void test_errors(void **state) {
  (void)state;
  expect_error(1, (char **)(const char *[]){"dlrmc-bench", NULL},
               "missing KIND", "--help");
  EXPECT_ERROR("unknown kind 'gemmm'", "did you mean 'gemm'?", "gemmm");
  EXPECT_ERROR("unknown kind 'trnaspose'", "did you mean 'transpose'?",
               "help", "trnaspose");
  EXPECT_ERROR("unknown option '--bacth' for gemm",
               "did you mean '--batch'?", "gemm", "--bacth", "1");
  EXPECT_ERROR("unknown option '--iter' for memcpy",
               "did you mean '--iters'?", "memcpy", "--iter", "3");
  EXPECT_ERROR("--iters needs a value", NULL, "gemm", "--iters");
  EXPECT_ERROR("--iters: 0 is out of range [1, 100000]", NULL, "gemm",
               "--iters", "0");
  EXPECT_ERROR("--warmup: 'five' is not a number", NULL, "gemm",
               "--warmup", "five");
  EXPECT_ERROR("--samples: 4000001 is out of range", NULL, "gemm",
               "--samples", "4000001");
  EXPECT_ERROR("--m: 0 is out of range", NULL, "gemm", "--m", "0,32");
  EXPECT_ERROR("--transa: unknown value 'X'", NULL, "gemm", "--transa", "X");
  EXPECT_ERROR("unexpected argument 'extra'", NULL, "gemm", "extra");
  EXPECT_ERROR("--list takes no value", NULL, "gemm", "--list=1");
  EXPECT_ERROR("-o needs a file name", NULL, "gemm", "-o", "");
  EXPECT_ERROR("devices takes no argument", NULL, "devices", "0");
  EXPECT_ERROR("help takes at most one KIND", NULL, "help", "gemm", "tril");
  /* A dimension of another kind is not an option of this one. */
  EXPECT_ERROR("unknown option '--pooling' for gemm", NULL, "gemm",
               "--pooling", "1");
}

static void test_help_text(void **state) {
  (void)state;
  dc_buf out = {0};
  dc_bench_help_overview(&out);
  for (int k = 0; k < DC_BENCH_KIND_COUNT_; k++)
    assert_non_null(strstr(out.data,
                           dc_bench_kind_get((dc_bench_kind)k)->name));
  assert_non_null(strstr(out.data, "--warmup N         untimed iterations "
                                   "per configuration (5)"));
  dc_buf_clear(&out);
  dc_bench_help_kind(dc_bench_kind_find("gemm"), &out);
  assert_non_null(strstr(out.data, "default set 'addmm' (2000 "
                                   "configurations drawn):"));
  assert_non_null(strstr(out.data, "  --m          32:4096:32,40:4104:32"));
  assert_non_null(strstr(out.data, "CSV columns: batch,m,n,k,transa,transb,"
                                   "dtype,time_us,mean_us\n"));
  dc_buf_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),   cmocka_unit_test(test_options),
      cmocka_unit_test(test_help_forms), cmocka_unit_test(test_errors),
      cmocka_unit_test(test_help_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
