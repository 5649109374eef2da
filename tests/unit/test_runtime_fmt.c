/*
 * test_runtime_fmt.c — the row formatter's own number printing
 * (runtime/emit.c rt_emit_put_double, rt_emit_put_int) must write exactly
 * the bytes of the reference, dc_buf_put_double (printf "%.*f" plus its
 * nan/inf words and its "rounds to zero prints as zero" rule) and printf
 * "%lld", for every value. Checked here on a few hand-picked cases
 * (halfway ties, negative values that round to zero, the 1e9 edge) and on
 * millions of pseudo-random values of several kinds: random bit patterns
 * in range, exact ties k/2^j at each decimal count, decimal numbers one ulp
 * either side of a tie, integers, tiny and subnormal values. Set
 * DC_FMT_TEST_N to run more (the change was checked with 100,000,000).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/emit_int.h"

static uint64_t rng = 1; /* the seed of support's splitmix64 */
static uint64_t next(void) { return dc_splitmix64(&rng); }

static int n_bad;

static void check(double v, int d) {
  static dc_buf a, b;
  dc_buf_clear(&a);
  dc_buf_clear(&b);
  dc_buf_puts(&a, "");
  dc_buf_puts(&b, "");
  dc_buf_put_double(&a, v, d);
  rt_emit_put_double(&b, v, d);
  if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
    if (n_bad++ < 10)
      print_error("%.17g with %d decimals: printf '%s', fast '%s'\n", v, d,
                  a.data, b.data);
  }
}

static void check_int(int64_t v) {
  static dc_buf b;
  char want[32];
  snprintf(want, sizeof want, "%lld", (long long)v);
  dc_buf_clear(&b);
  dc_buf_puts(&b, "");
  rt_emit_put_int(&b, v);
  if (b.len != strlen(want) || memcmp(b.data, want, b.len) != 0) {
    if (n_bad++ < 10) print_error("%s: fast '%s'\n", want, b.data);
  }
}

static void hand_cases(void **state) {
  (void)state;
  n_bad = 0;
  static const double v[] = {
      0.0,       -0.0,       0.5,        1.5,         2.5,       0.125,
      0.375,     0.03125,    -0.03125,   0.00005,     -0.00005,  0.00004,
      -0.00004,  4.3173,     231.55,     999999999.9, 1e9,       -1e9,
      1e9 - 0.5, 123456.78125, 0x1p-1074, -0x1p-1074, 0x1p-1022, 1e-300,
      NAN,       INFINITY,   -INFINITY,  1e300,       -1e20,     0.99995,
      9.99995,   0.049999999999999996};
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    for (int d = 0; d <= 12; d++) check(v[i], d);
  check(-1.0, -1);
  static const int64_t iv[] = {0, 1, -1, 9, 10, INT64_MAX, INT64_MIN,
                               1234567890123, -42};
  for (size_t i = 0; i < sizeof iv / sizeof *iv; i++) check_int(iv[i]);
  /* the zero rule uses a table for pow(10, d): the same doubles */
  for (int d = 0; d <= 9; d++) {
    char s[32];
    snprintf(s, sizeof s, "1e%d", d);
    assert_true(pow(10.0, d) == strtod(s, NULL));
  }
  assert_int_equal(n_bad, 0);
}

static double from_bits(uint64_t b) {
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

static void random_values(void **state) {
  (void)state;
  n_bad = 0;
  const char *e = getenv("DC_FMT_TEST_N");
  long n = e ? atol(e) : 150000;
  static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5,
                               1e6, 1e7, 1e8, 1e9, 1e10};
  for (long i = 0; i < n; i++) {
    int d = (int)(next() % 10);
    uint64_t r = next();
    double sign = (r & 1) ? -1.0 : 1.0;
    /* random bit patterns: exponents spread over the whole range */
    double v = from_bits(next());
    check(v, d);
    /* uniform magnitudes below 1e9 on a log scale */
    double mag = pow(10.0, (double)(next() % 2000000) / 1e5 - 10.0);
    check(sign * mag * ((double)(next() >> 11) / 0x1p53 + 0.5), d);
    /* exact ties: odd multiples of 2^-j land on a half at some decimals */
    int j = 1 + (int)(next() % 12);
    double tie = (double)(int64_t)(next() % (1ull << 40) | 1) /
                 (double)(1ull << j);
    if (tie < 1e9) {
      check(sign * tie, d);
      check(sign * tie / 1024.0, d);
    }
    /* decimal halves n + 0.5·10^-d and their neighbours */
    double h = ((double)(next() % 100000000) + 0.5) / p10[d];
    check(sign * h, d);
    check(sign * nextafter(h, 0), d);
    check(sign * nextafter(h, INFINITY), d);
    /* small values near the zero rule's edge */
    double z = 0.5 / p10[d] * (1.0 + ((double)(int64_t)(next() % 2001) -
                                      1000.0) * 0x1p-52);
    check(sign * z, d);
    check(sign * (double)(next() % 1000000000), d);
    check(ldexp((double)(next() >> 11), -(int)(next() % 1100)), d);
    check_int((int64_t)next());
    check_int((int64_t)(next() % 100000) - 50000);
  }
  assert_int_equal(n_bad, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hand_cases),
      cmocka_unit_test(random_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
