/*
 * fuzz_study.c — libFuzzer target over the whole study front end: parse a
 * study from memory, run every check, and lower a few points (first, last,
 * a middle one, and their baselines). Lines at the top of the input that
 * start with "#D " are taken as -D overrides, so the fuzzer reaches the
 * override and comma-sweep code too. Any crash, hang, sanitizer report or
 * failed internal assertion (dc_study_point must not fail on a study that
 * loaded) is a bug. Built with clang -fsanitize=fuzzer when DC_FUZZ=ON;
 * corpus_replay.c drives the same function over the corpus under any compiler.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "tests/fuzz/scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OV 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20)) return 0;
  char *buf = dc_xmalloc(size + 1);
  memcpy(buf, data, size);
  buf[size] = '\0';
  dc_override ov[MAX_OV];
  size_t n_ov = 0;
  char *p = buf;
  while (n_ov < MAX_OV && strncmp(p, "#D ", 3) == 0) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = '\0';
    char *eq = strchr(p + 3, '=');
    if (eq) {
      *eq = '\0';
      ov[n_ov].path = p + 3;
      ov[n_ov].value = eq + 1;
      n_ov++;
    }
    if (!nl) break;
    *nl = ' '; /* keep the line count: the comment stays a comment */
    if (eq) *eq = ' ';
    p = nl + 1;
  }
  /* Overrides point into buf; give the parser its own copy. */
  char *text = dc_xmalloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  dc_diags d = {0};
  d.max_errors = 50;
  dc_study *s = dc_study_load_memory("fuzz.yaml", text, size, ov, n_ov, &d);
  if (s) {
    int64_t n = dc_study_point_count(s);
    int64_t pick[4] = {0, n - 1, n / 2, n / 3};
    dc_arena a;
    dc_arena_init(&a);
    for (size_t i = 0; i < 4; i++) {
      if (pick[i] < 0 || pick[i] >= n) continue;
      dc_point pt;
      dc_arena_reset(&a);
      dc_study_point(s, pick[i], &a, &pt);
      int64_t b = dc_study_baseline_of(s, pick[i]);
      if (b >= 0) {
        DC_ASSERT(b < n);
        dc_study_point(s, b, &a, &pt);
      }
    }
    dc_arena_free(&a);
    const char *const *cols;
    dc_study_columns(s, &cols);
    dc_study_free(s);
  } else {
    fuzz_render_diags(&d);
  }
  dc_diags_free(&d);
  dc_study_release_failed();
  free(text);
  free(buf);
  return 0;
}
