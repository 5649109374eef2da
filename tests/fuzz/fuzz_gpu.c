/*
 * fuzz_gpu.c — libFuzzer target over the GPU file reader (spec/gpus/ files
 * and a study's `gpu: path/to/file.yaml`): the input is written to a
 * scratch file and looked up as a path, as `system.gpu` does; when it
 * loads, every kernel kind is priced on it (a small kernel of each kind,
 * fitted models of the file's `models:` folder included), and each price
 * must be finite. Any crash, hang, sanitizer report or non-finite price
 * of a device that loaded is a bug; a rejected file (with its
 * diagnostic) is fine. Built with clang -fsanitize=fuzzer when DC_FUZZ=ON;
 * corpus_replay.c drives the same function over the corpus under any
 * compiler.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/kernels.h"
#include "tests/fuzz/scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 18) ||
      !fuzz_write_scratch(scratch, "dlrmc-fuzz-gpu", data, size))
    return 0;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  d.max_errors = 50;
  dc_device dev;
  if (dc_device_lookup(scratch, &dev, &a, &d)) {
    const dc_kmodels *km = dc_kmodels_for(&dev);
    for (int kind = 0; kind < DC_KERNEL_KIND_COUNT_; kind++) {
      dc_kernel k;
      dc_kernel_params_init(&k, (dc_kernel_kind)kind, &a);
      double us = dc_kernel_time(&k, &dev, km);
      if (!isfinite(us) || us < 0) abort();
    }
  }
  fuzz_render_diags(&d);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return 0;
}
