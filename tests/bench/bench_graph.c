/*
 * bench_graph.c — how long dc_graph_build takes for the DLRM_MLPerf graph
 * (26 tables, batch 2048, per_table, SGD, one GPU), the per-point cost of
 * graph synthesis in a sweep. Not a timed test: a build target whose
 * figure goes into the README.
 *
 *   bench_graph [ITERATIONS] [batched|per_table] [GPUS]
 *
 * Each build reuses one arena (reset between builds, as the sweep executor
 * does per point); the verifier is run once, outside the timing. Prints
 * the mean and the best of 5 rounds, in µs per build.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graphgen/graphgen.h"
#include "tests/golden/graph/points.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 20000;
  if (iters < 1) iters = 1;
  tp_cfg c;
  tp_paper(&c, "DLRM_MLPerf", 2048);
  if (argc > 2 && strcmp(argv[2], "batched") == 0)
    c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  if (argc > 3) {
    c.p.gpus = atoi(argv[3]);
    c.p.gpus_per_host = c.p.gpus;
  }
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_graph *g = dc_graph_build(&c.p, &a, &d);
  if (!g || !dc_graph_verify(g, &d)) {
    dc_diags_render(&d, stderr, false);
    return 1;
  }
  int32_t ops = g->n_ops, tensors = g->n_tensors;
  double best = 1e300, sum = 0;
  for (int round = 0; round < 5; round++) {
    double t0 = now_us();
    for (long i = 0; i < iters; i++) {
      dc_arena_reset(&a);
      g = dc_graph_build(&c.p, &a, &d);
      if (!g) return 1;
    }
    double per = (now_us() - t0) / (double)iters;
    sum += per;
    if (per < best) best = per;
  }
  printf("DLRM_MLPerf graph (%s, %d GPU%s, %d ops, %d tensors): "
         "%.2f us per build (best of 5 rounds of %ld), mean %.2f us\n",
         dc_embedding_kernel_name(c.p.embedding_kernel), c.p.gpus,
         c.p.gpus == 1 ? "" : "s", ops, tensors, best, iters, sum / 5);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return 0;
}
