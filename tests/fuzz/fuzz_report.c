/*
 * fuzz_report.c — libFuzzer target over the results reader of `dlrmc
 * report` (a saved CSV or JSON-lines table, runtime/report/report_read.c)
 * and the page drawn from what it accepts: the input is written to a
 * scratch file, loaded as `report` loads it, parsed, checked for the
 * default metric and rendered to HTML. Any crash, hang or sanitizer report
 * is a bug, and so is a page that renders to nothing; a rejected table or
 * a refused render (a coordinate that would not be finite, with its
 * diagnostic) is fine. Built with clang -fsanitize=fuzzer when DC_FUZZ=ON;
 * corpus_replay.c drives the same function over the corpus (and the
 * repo's result goldens) under any compiler.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>

#include "runtime/report/report.h"
#include "tests/fuzz/scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 18) ||
      !fuzz_write_scratch(scratch, "dlrmc-fuzz-report", data, size))
    return 0;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  d.max_errors = 50;
  dc_report r;
  const dc_source *src = dc_report_source_load(scratch, &a, &d);
  if (src && dc_report_parse(src, &r, &a, &d)) {
    dc_report_meta meta = {"fuzz", "dlrmc report fuzz", "0", NULL};
    if (dc_report_check_metric(&r, "e2e_ms", &d)) {
      dc_buf page = {0};
      if (dc_report_render(&r, &meta, &page, &d) && page.len == 0) abort();
      dc_buf_free(&page);
    }
  }
  dc_diags_free(&d);
  dc_arena_free(&a);
  return 0;
}
