/*
 * fuzz_csv.c — libFuzzer target over the two CSV readers: `dlrmc fit`'s
 * benchmark reader (our columns or DeepBench's, for each kind fit
 * trains) and `dlrmc kernel --csv`'s row pricing (every column that is a
 * parameter of the kind set on a kernel, the kernel checked and priced on
 * a V100, for every kernel kind), and `dlrmc calibrate --micro`'s reader
 * of micro.py's kernel tables (kernels/micro.c). The input is written to
 * a scratch file (the readers take paths). Any crash, hang or sanitizer report is a
 * bug, and so is a non-finite or negative price of a row that passed the
 * checks, or a loaded sample whose time is not finite and positive; a
 * rejected file (with its diagnostic) is fine. Built with clang
 * -fsanitize=fuzzer when DC_FUZZ=ON; corpus_replay.c drives the same
 * function over the corpus under any compiler.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/kernels.h"
#include "tests/fuzz/scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];

/* Rows priced per kind: enough for every shape of row, small enough that
 * one input runs in milliseconds. */
#define MAX_ROWS 64

static void fit_reader(dc_arena *a) {
  static const dc_kernel_kind kinds[] = {DC_KERNEL_GEMM, DC_KERNEL_TRANSPOSE,
                                         DC_KERNEL_TRIL_FWD,
                                         DC_KERNEL_TRIL_BWD};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    dc_diags d = {0};
    d.max_errors = 50;
    dc_fit_sample *s = NULL;
    int32_t n = 0;
    if (dc_fit_load_csv(kinds[i], scratch, &s, &n, a, &d))
      for (int32_t r = 0; r < n; r++)
        if (!isfinite(s[r].time_us) || !(s[r].time_us > 0)) abort();
    dc_diags_free(&d);
  }
}

static void micro_reader(const dc_device *dev, dc_arena *a) {
  dc_diags d = {0};
  d.max_errors = 50;
  dc_fit_sample *s = NULL;
  int32_t n = 0, skipped = 0;
  if (dc_micro_load_csv(scratch, &s, &n, &skipped, a, &d))
    for (int32_t r = 0; r < n && r < MAX_ROWS; r++) {
      if (!isfinite(s[r].time_us) || !(s[r].time_us > 0)) abort();
      double us = dc_kernel_time(&s[r].k, dev, NULL);
      if (isnan(us) || us < 0) abort();
    }
  free(s);
  dc_diags_free(&d);
}

static void kernel_reader(const dc_device *dev, dc_arena *a) {
  dc_diags d = {0};
  d.max_errors = 50;
  dc_csv c;
  if (dc_csv_read(scratch, &c, a, &d)) {
    for (int kind = 0; kind < DC_KERNEL_KIND_COUNT_; kind++) {
      for (int32_t r = 0; r < c.n_rows && r < MAX_ROWS; r++) {
        dc_kernel k;
        dc_kernel_params_init(&k, (dc_kernel_kind)kind, a);
        bool ok = true;
        for (int32_t col = 0; col < c.n_cols; col++) {
          bool known = true;
          dc_diags quiet = {0};
          if (!dc_kernel_param_set(&k, c.cols[col], c.cells[r][col],
                                   dc_csv_span(&c, r, col), &known, &quiet) &&
              known)
            ok = false;
          dc_diags_free(&quiet);
        }
        dc_span row = {c.src, c.row_line[r], 1, 0};
        dc_diags quiet = {0};
        if (ok && dc_kernel_params_check(&k, row, &quiet)) {
          double us = dc_kernel_time(&k, dev, NULL);
          /* inf is reported by `kernel` as an error; NaN never is */
          if (isnan(us) || us < 0) abort();
        }
        dc_diags_free(&quiet);
      }
    }
  }
  dc_diags_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 16) ||
      !fuzz_write_scratch(scratch, "dlrmc-fuzz-csv", data, size))
    return 0;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_device dev;
  if (!dc_device_lookup("V100", &dev, &a, &d)) abort();
  dc_diags_free(&d);
  fit_reader(&a);
  kernel_reader(&dev, &a);
  micro_reader(&dev, &a);
  dc_arena_free(&a);
  return 0;
}
