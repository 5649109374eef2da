/*
 * fuzz_trace.c — libFuzzer target over the trace readers
 * (runtime/trace/): the input is written to a scratch file (the loader
 * reads paths, through zlib, plain or gzip), classified (execution trace
 * or Kineto trace, as `dlrmc replay` sorts its files) and loaded as a
 * Kineto trace;
 * when it loads, the event tree is built, the profiler correction
 * measured, a profile extracted and written, the self-consistency check
 * run and every stats table written. Any crash, hang, sanitizer report or
 * non-finite number in the profile is a bug; a rejected input (with its
 * diagnostic) is fine. Built with clang -fsanitize=fuzzer when DC_FUZZ=ON;
 * corpus_replay.c drives the same function over the corpus under any compiler.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "runtime/trace/trace.h"
#include "tests/fuzz/scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];


static void finite_or_abort(double x) {
  if (!isfinite(x)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20) ||
      !fuzz_write_scratch(scratch, "dlrmc-fuzz-trace", data, size))
    return 0;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  d.max_errors = 50;
  /* the classifier `dlrmc replay` sorts its files with (a format, or a
   * diagnostic) */
  dc_trace_format fmt;
  (void)dc_trace_classify(scratch, &fmt, &a, &d);
  dc_trace t;
  if (dc_trace_load(scratch, &t, &a, &d)) {
    dc_trace_steps_sel sel = {0};
    dc_trace_model m;
    if (dc_trace_model_build(&t, &sel, &m, &d)) {
      dc_ovh_correction c = dc_ovh_measure_correction(&m);
      finite_or_abort(c.cpu_us);
      dc_ovh_acc *acc = dc_ovh_acc_new();
      dc_ovh_acc_add(acc, &m, c);
      dc_profile p;
      dc_ovh_acc_profile(acc, "fuzz", "fuzz", &p, &a);
      finite_or_abort(p.t1_us + p.t2_us + p.t3_us + p.t4_us + p.t5_us +
                      p.kernel_gap_us);
      dc_buf out = {0};
      dc_profile_write(&p, &out);
      double meas, pred;
      dc_ovh_host_check(&m, &p, c, &meas, &pred);
      finite_or_abort(meas + pred);
      dc_trace_stats_write(&m, true, DC_TRACE_TABLE_ALL, 20, &out);
      dc_buf_free(&out);
      dc_ovh_acc_free(acc);
      dc_trace_model_free(&m);
    }
    dc_trace_free(&t);
  }
  dc_diags_free(&d);
  dc_arena_free(&a);
  return 0;
}
