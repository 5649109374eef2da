/*
 * test_compiler_diagdoc.c — spec/diagnostics.md lists every code of
 * compiler/support/diag_codes.h in a table row ("| Ennnn | title |"), so
 * the catalogue users read can never fall behind the program.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/support/support.h"

static void test_every_code_documented(void **state) {
  (void)state;
  const char *root = getenv("DC_SOURCE_DIR");
  assert_non_null(root);
  char path[4096];
  snprintf(path, sizeof path, "%s/spec/diagnostics.md", root);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char text[1 << 17];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  int missing = 0;
  for (int i = 0; i < DC_DIAG_COUNT_; i++) {
    char row[128];
    snprintf(row, sizeof row, "| %s | %s |", dc_diag_code_id((dc_diag_code)i),
             dc_diag_code_title((dc_diag_code)i));
    if (!strstr(text, row)) {
      fprintf(stderr, "spec/diagnostics.md lacks the row \"%s\"\n", row);
      missing++;
    }
  }
  assert_int_equal(missing, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_code_documented),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
