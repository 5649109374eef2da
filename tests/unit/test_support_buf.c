/*
 * test_support_buf.c — the string buffer's writers that every emitter
 * shares: RFC 4180 CSV fields, JSON string literals, locale-free doubles
 * (no "-0.000"), the hash map, printable names and UTF-8 checks, and
 * the checked float-to-integer conversions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "compiler/support/support.h"

static void check(void (*put)(dc_buf *, const char *), const char *in,
                  const char *want) {
  dc_buf b = {0};
  put(&b, in);
  assert_string_equal(b.data, want);
  dc_buf_free(&b);
}

static void test_csv_field(void **state) {
  (void)state;
  check(dc_buf_put_csv_field, "plain", "plain");
  check(dc_buf_put_csv_field, "a,b", "\"a,b\"");
  check(dc_buf_put_csv_field, "say \"hi\"", "\"say \"\"hi\"\"\"");
  check(dc_buf_put_csv_field, "two\nlines", "\"two\nlines\"");
  check(dc_buf_put_csv_field, "cr\r", "\"cr\r\"");
}

static void test_json_string(void **state) {
  (void)state;
  check(dc_buf_put_json_string, "aten::linear", "\"aten::linear\"");
  check(dc_buf_put_json_string, "q\"b\\", "\"q\\\"b\\\\\"");
  check(dc_buf_put_json_string, "t\tn\n\x01", "\"t\\tn\\n\\u0001\"");
  check(dc_buf_put_json_string, "\xc2\xb5s", "\"\xc2\xb5s\""); /* UTF-8 */
}

static void test_put_double(void **state) {
  (void)state;
  dc_buf b = {0};
  dc_buf_put_double(&b, -0.00001, 3);
  dc_buf_putc(&b, ' ');
  dc_buf_put_double(&b, 2.5, 0);
  dc_buf_putc(&b, ' ');
  dc_buf_put_double(&b, 1234.56789, 4);
  assert_string_equal(b.data, "0.000 2 1234.5679");
  dc_buf_free(&b);
}

static void test_map(void **state) {
  (void)state;
  dc_map m = {0};
  char keys[200][8];
  for (int i = 0; i < 200; i++) {
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    assert_null(dc_map_put(&m, keys[i], keys[i]));
  }
  assert_int_equal(m.count, 200);
  for (int i = 0; i < 200; i++) assert_ptr_equal(dc_map_get(&m, keys[i]), keys[i]);
  assert_null(dc_map_get(&m, "absent"));
  assert_ptr_equal(dc_map_put(&m, "k7", NULL), keys[7]);
  dc_map_free(&m);
}

static void put_printable(dc_buf *b, const char *s) {
  dc_buf_put_printable(b, s, strlen(s));
}

/* Names from traces: control bytes and invalid UTF-8 escaped, valid
 * UTF-8 kept. */
static void test_printable(void **state) {
  (void)state;
  assert_true(dc_printable("aten::mm", 8));
  assert_true(dc_printable("caf\xc3\xa9", 5));
  assert_false(dc_printable("a\nb", 3));
  assert_false(dc_printable("caf\xe9", 4));
  assert_false(dc_printable("a\x7f", 2));
  check(put_printable, "a\nb\tc\rd", "a\\nb\\tc\\rd");
  check(put_printable, "x\x07y", "x\\x07y");
  check(put_printable, "caf\xe9", "caf\\xE9");
  check(put_printable, "caf\xc3\xa9", "caf\xc3\xa9");
  /* overlong, surrogate and past U+10FFFF sequences are invalid */
  const unsigned char overlong[] = {0xE0, 0x80, 0xAF};
  const unsigned char surrogate[] = {0xED, 0xA0, 0x80};
  const unsigned char big[] = {0xF4, 0x90, 0x80, 0x80};
  const unsigned char euro[] = {0xE2, 0x82, 0xAC};
  assert_int_equal(dc_utf8_len(overlong, 3), 0);
  assert_int_equal(dc_utf8_len(surrogate, 3), 0);
  assert_int_equal(dc_utf8_len(big, 4), 0);
  assert_int_equal(dc_utf8_len(euro, 3), 3);
  assert_int_equal(dc_utf8_len(euro, 2), 0); /* cut */
}

/* Checked conversions: NaN, infinities and values past int64 refused or
 * clamped, never converted (C leaves that undefined). */
static void test_f64_to_int(void **state) {
  (void)state;
  int64_t v = 7;
  assert_false(dc_f64_to_i64(NAN, &v));
  assert_false(dc_f64_to_i64(INFINITY, &v));
  assert_false(dc_f64_to_i64(9223372036854775808.0, &v));
  assert_false(dc_f64_to_i64(-1e19, &v));
  assert_int_equal(v, 7);
  assert_true(dc_f64_to_i64(-9223372036854775808.0, &v));
  assert_true(v == INT64_MIN);
  assert_true(dc_f64_to_i64(9223372036854774784.0, &v)); /* 2^63 - 1024 */
  assert_true(v == 9223372036854774784LL);
  assert_true(dc_f64_to_i64(-2.9, &v));
  assert_int_equal(v, -2);
  assert_true(dc_f64_sat_i64(1e300) == INT64_MAX);
  assert_true(dc_f64_sat_i64(-INFINITY) == INT64_MIN);
  assert_int_equal(dc_f64_sat_i64(NAN), 0);
  assert_int_equal(dc_f64_sat_i32(3e9), INT32_MAX);
  assert_int_equal(dc_f64_sat_i32(-3e9), INT32_MIN);
  assert_int_equal(dc_f64_sat_i32(12.7), 12);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_printable),
      cmocka_unit_test(test_f64_to_int),
      cmocka_unit_test(test_csv_field),
      cmocka_unit_test(test_json_string),
      cmocka_unit_test(test_put_double),
      cmocka_unit_test(test_map),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
