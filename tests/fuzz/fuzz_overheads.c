/*
 * fuzz_overheads.c — libFuzzer target over the overhead-profile reader
 * (spec/overheads/ files, `system.overheads: path`): the input is written
 * to a scratch file and loaded as a path; when it loads, the profile is
 * written back (`overheads extract`'s writer), reloaded, and looked up
 * for a known op, an unknown op and the launch call; every cost must be
 * finite and not negative, and the rewritten profile must load again.
 * Any crash, hang, sanitizer report or broken round trip is a bug; a
 * rejected file (with its diagnostic) is fine. Built with clang
 * -fsanitize=fuzzer when DC_FUZZ=ON; corpus_replay.c drives the same
 * function over the corpus under any compiler.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/runtime.h"
#include "tests/fuzz/scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];

static void cost_ok(double x) {
  if (!isfinite(x) || x < 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 18) ||
      !fuzz_write_scratch(scratch, "dlrmc-fuzz-ovh", data, size))
    return 0;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  d.max_errors = 50;
  dc_profile p;
  if (dc_profile_load(scratch, &p, &a, &d)) {
    static const char *const ops[] = {"aten::linear", "aten::nosuchop", ""};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
      dc_op_cost c = dc_profile_op(&p, ops[i]);
      cost_ok(c.t1_us);
      cost_ok(c.t2_us);
      cost_ok(c.t3_us);
      cost_ok(c.t5_us);
    }
    cost_ok(dc_profile_t4(&p, NULL));
    cost_ok(dc_profile_t4(&p, "cudaMemcpyAsync"));
    dc_buf out = {0};
    dc_profile_write(&p, &out);
    dc_profile again;
    if (!fuzz_write_scratch(scratch, "dlrmc-fuzz-ovh", (const uint8_t *)out.data,
                            out.len) ||
        !dc_profile_load(scratch, &again, &a, &d))
      abort(); /* what the writer writes, the reader reads */
    dc_buf_free(&out);
  }
  fuzz_render_diags(&d);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return 0;
}
