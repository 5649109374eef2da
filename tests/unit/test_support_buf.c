/*
 * test_support_buf.c — the string buffer's writers that every emitter
 * shares: RFC 4180 CSV fields, JSON string literals, locale-free doubles
 * (no "-0.000"), and the hash map.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_csv_field),
      cmocka_unit_test(test_json_string),
      cmocka_unit_test(test_put_double),
      cmocka_unit_test(test_map),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
