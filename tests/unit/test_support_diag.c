/*
 * test_support_diag.c — diagnostic rendering as spec/diagnostics.md shows it (file,
 * line, column, the source line, a caret underline, help), positions
 * without a source line (the command line), the error cap, and the code
 * table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "compiler/support/support.h"

static void test_render_caret(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  const char *text = "training:\n  bacth: 2048\n";
  const dc_source *s = dc_source_from_memory("studies/bad.yaml", text,
                                             strlen(text), &a);
  dc_diags d = {0};
  dc_span sp = {s, 2, 3, 5};
  dc_diag *g = dc_diag_error(&d, DC_DIAG_UNKNOWN_KEY, sp,
                             "unknown key '%s' in 'training'", "bacth");
  dc_diag_set_help(g, "did you mean '%s'?", "batch_size");
  dc_buf b = {0};
  dc_diag_render_one(&d.items[0], &b, false);
  assert_string_equal(b.data,
                      "studies/bad.yaml:2:3: error: unknown key 'bacth' in "
                      "'training' [E0101]\n"
                      "   2 |   bacth: 2048\n"
                      "     |   ^~~~~\n"
                      "     = help: did you mean 'batch_size'?\n");
  assert_int_equal(d.errors, 1);
  dc_buf_free(&b);
  dc_diags_free(&d);
  dc_arena_free(&a);
}

static void test_render_no_line(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  const dc_source *s = dc_source_from_memory("<command line>", "", 0, &a);
  dc_diags d = {0};
  dc_span sp = {s, 0, 0, 0};
  dc_diag_error(&d, DC_DIAG_BAD_OVERRIDE, sp, "-D x: empty value");
  dc_buf b = {0};
  dc_diag_render_one(&d.items[0], &b, false);
  assert_string_equal(b.data,
                      "<command line>: error: -D x: empty value [E0306]\n");
  dc_buf_free(&b);
  dc_diags_free(&d);
  dc_arena_free(&a);
}

static void test_render_past_end_and_tab(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  const char *text = "a:\tb\n";
  const dc_source *s = dc_source_from_memory("t.yaml", text, strlen(text), &a);
  dc_diags d = {0};
  dc_span sp = {s, 1, 10, 3}; /* beyond the line: one caret at the end */
  dc_diag_error(&d, DC_DIAG_YAML_SYNTAX, sp, "x");
  dc_buf b = {0};
  dc_diag_render_one(&d.items[0], &b, false);
  assert_non_null(strstr(b.data, "   1 | a:\tb\n"));
  assert_non_null(strstr(b.data, "^"));
  dc_buf_free(&b);
  dc_diags_free(&d);
  dc_arena_free(&a);
}

static void test_color(void **state) {
  (void)state;
  dc_diags d = {0};
  dc_diag_error(&d, DC_DIAG_IO, (dc_span){0}, "cannot read 'x'");
  dc_buf b = {0};
  dc_diag_render_one(&d.items[0], &b, true);
  assert_non_null(strstr(b.data, "\033["));
  dc_buf_clear(&b);
  dc_diag_render_one(&d.items[0], &b, false);
  assert_null(strstr(b.data, "\033["));
  assert_string_equal(b.data, "dlrmc: error: cannot read 'x' [E0001]\n");
  dc_buf_free(&b);
  dc_diags_free(&d);
}

static void test_codes(void **state) {
  (void)state;
  assert_string_equal(dc_diag_code_id(DC_DIAG_UNKNOWN_KEY), "E0101");
  assert_string_equal(dc_diag_code_title(DC_DIAG_SWEEP_ZIP),
                      "zip sweep lists differ in length");
  /* ids are unique and well-formed */
  for (int i = 0; i < DC_DIAG_COUNT_; i++) {
    const char *id = dc_diag_code_id((dc_diag_code)i);
    assert_int_equal(strlen(id), 5);
    assert_int_equal(id[0], 'E');
    for (int j = 0; j < i; j++)
      assert_string_not_equal(id, dc_diag_code_id((dc_diag_code)j));
  }
}

static void test_warning_not_error(void **state) {
  (void)state;
  dc_diags d = {0};
  dc_diag_warning(&d, DC_DIAG_SEMANTIC, (dc_span){0}, "w");
  assert_int_equal(d.errors, 0);
  assert_int_equal(d.count, 1);
  dc_diags_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_render_caret),
      cmocka_unit_test(test_render_no_line),
      cmocka_unit_test(test_render_past_end_and_tab),
      cmocka_unit_test(test_color),
      cmocka_unit_test(test_codes),
      cmocka_unit_test(test_warning_not_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
