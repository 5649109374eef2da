/*
 * bench_frontend.c — how fast the front end checks and lowers a big sweep.
 * Loads (checks) a 1,000,000-point study (1000 batch sizes × 1000 GPU
 * counts... see STUDY below: two range axes, one of them cross-checked
 * against the other for every combination), then lowers N points, and
 * prints the wall time of each and the peak RSS. Not a ctest (timing is
 * not a pass/fail criterion); run it by hand:
 *   build/tests/bench_frontend [points-to-lower]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "compiler/compiler.h"

static const char STUDY[] =
    "study: bench-1M\n"
    "model: {preset: dlrm_mlperf}\n"
    "sweep:\n"
    "  training.batch_size: {from: 1024, to: 1024000, step: 1024}\n"
    "  system.gpus: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]\n"
    "  model.embedding.pooling: {from: 1, to: 100, step: 1}\n";

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int64_t lower = argc > 1 ? atoll(argv[1]) : 100000;
  dc_diags d = {0};
  double t0 = now_s();
  dc_study *s = dc_study_load_memory("bench.yaml", STUDY, strlen(STUDY), NULL,
                                     0, &d);
  double t1 = now_s();
  if (!s) {
    dc_diags_render(&d, stderr, false);
    return 1;
  }
  int64_t n = dc_study_point_count(s);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("check: %lld points in %.3f s, peak RSS %ld MiB\n", (long long)n,
         t1 - t0, ru.ru_maxrss / 1024);
  if (lower > n) lower = n;
  dc_arena a;
  dc_arena_init(&a);
  int64_t sum = 0;
  double t2 = now_s();
  for (int64_t i = 0; i < lower; i++) {
    dc_point p;
    dc_arena_reset(&a);
    dc_study_point(s, (i * 7919) % n, &a, &p);
    sum += p.batch_size + p.n_tables;
  }
  double t3 = now_s();
  getrusage(RUSAGE_SELF, &ru);
  printf("lower: %lld points in %.3f s (%.2f us/point), peak RSS %ld MiB "
         "[%lld]\n",
         (long long)lower, t3 - t2, (t3 - t2) * 1e6 / (double)lower,
         ru.ru_maxrss / 1024, (long long)(sum % 1000));
  dc_arena_free(&a);
  dc_study_free(s);
  dc_diags_free(&d);
  return 0;
}
