/*
 * test_support_units.c — sizes, durations, bandwidths and plain numbers as
 * users write them (compiler/support/units.c): SI and binary suffixes,
 * separators, scientific notation, whole-number and 64-bit limits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "compiler/support/support.h"

static int64_t size_of(const char *t, bool bytes) {
  int64_t v = -12345;
  const char *why = NULL;
  assert_true(dc_parse_size(t, bytes, &v, &why));
  return v;
}

static void size_fails(const char *t, bool bytes) {
  int64_t v;
  const char *why = NULL;
  assert_false(dc_parse_size(t, bytes, &v, &why));
  assert_non_null(why);
}

static void test_sizes(void **state) {
  (void)state;
  assert_int_equal(size_of("4096", false), 4096);
  assert_int_equal(size_of("1M", false), 1000000);
  assert_int_equal(size_of("1k", false), 1000);
  assert_int_equal(size_of("1K", false), 1000);
  assert_int_equal(size_of("14e6", false), 14000000);
  assert_int_equal(size_of("40Mi", false), 40 * 1048576);
  assert_int_equal(size_of("1_000_000", false), 1000000);
  assert_int_equal(size_of("80GB", true), 80000000000LL);
  assert_int_equal(size_of("80GiB", true), 80LL << 30);
  assert_int_equal(size_of("1.5k", false), 1500);
  assert_int_equal(size_of("9223372036854775807", false), INT64_MAX);
  assert_int_equal(size_of("-5", false), -5); /* ranges are the caller's */
}

static void test_size_errors(void **state) {
  (void)state;
  size_fails("", false);
  size_fails("abc", false);
  size_fails("1.5", false);           /* not whole */
  size_fails("1Q", false);            /* unknown suffix */
  size_fails("80GB", false);          /* B only for byte sizes */
  size_fails("9223372036854775808", false);
}

static void test_size_overflow(void **state) {
  (void)state;
  int64_t v;
  const char *why;
  assert_true(dc_parse_size("9P", false, &v, &why));
  assert_int_equal(v, 9000000000000000LL); /* P = 1e15 */
  assert_false(dc_parse_size("10000P", false, &v, &why));
  assert_false(dc_parse_size("8Ei", false, &v, &why));
  assert_false(dc_parse_size("1e30", false, &v, &why));
}

static void test_times(void **state) {
  (void)state;
  double us;
  const char *why;
  assert_true(dc_parse_time_us("5us", &us, &why));
  assert_true(us == 5.0);
  assert_true(dc_parse_time_us("1.5 ms", &us, &why));
  assert_true(us == 1500.0);
  assert_true(dc_parse_time_us("2s", &us, &why));
  assert_true(us == 2e6);
  assert_true(dc_parse_time_us("800ns", &us, &why));
  assert_true(us > 0.7999 && us < 0.8001);
  assert_true(dc_parse_time_us("7", &us, &why));
  assert_true(us == 7.0);
  assert_false(dc_parse_time_us("5 parsecs", &us, &why));
  assert_false(dc_parse_time_us("ms", &us, &why));
}

static void test_gbps_and_double(void **state) {
  (void)state;
  double v;
  const char *why;
  assert_true(dc_parse_gbps("900GB/s", &v, &why));
  assert_true(v == 900.0);
  assert_true(dc_parse_gbps("31.5 GB/s", &v, &why));
  assert_true(v == 31.5);
  assert_true(dc_parse_gbps("200Gb/s", &v, &why));
  assert_true(v == 25.0);
  assert_true(dc_parse_gbps("12", &v, &why));
  assert_true(v == 12.0);
  assert_false(dc_parse_gbps("fast", &v, &why));
  assert_true(dc_parse_double("1e-3", &v, &why));
  assert_true(v == 1e-3);
  assert_false(dc_parse_double("0x10", &v, &why));
  assert_false(dc_parse_double("inf", &v, &why));
  assert_false(dc_parse_double("nan", &v, &why));
}

static void test_checked_math(void **state) {
  (void)state;
  int64_t r;
  assert_true(dc_mul_i64(1 << 20, 1 << 20, &r));
  assert_int_equal(r, 1LL << 40);
  assert_false(dc_mul_i64(INT64_MAX, 2, &r));
  assert_false(dc_mul_i64(INT64_MIN, -1, &r));
  assert_false(dc_add_i64(INT64_MAX, 1, &r));
  assert_true(dc_add_i64(INT64_MAX, -1, &r));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_size_errors),
      cmocka_unit_test(test_size_overflow),
      cmocka_unit_test(test_times),
      cmocka_unit_test(test_gbps_and_double),
      cmocka_unit_test(test_checked_math),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
