/*
 * bench_kernels.c — how fast a kernel is priced (a benchmark, not a timed
 * test): the analytic models must cost under 100 ns per kernel and an
 * MLP-priced GEMM under 20 µs. Prices each kind many times on
 * the catalog's V100 (which has a fitted GEMM model) and prints ns per call.
 *   <build dir>/tests/bench_kernels [iterations [only]]
 * With `only`, just the lines whose name contains it: so that valgrind
 * can count the instructions of one model, a figure that does not depend
 * on the machine's clock or its neighbours:
 *   valgrind --tool=callgrind --toggle-collect=dc_kernel_time \
 *     build/tests/bench_kernels 10000 mix
 * counts ("Collected") the instructions of 10,010 GEMMs: 385 rounds of
 * the 26 (a batch of kernels runs whole rounds).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/kernels.h"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static volatile double sink;
static const char *only; /* run only the lines whose name contains it */

static bool wanted(const char *what) { return !only || strstr(what, only); }

static void bench(const char *what, const dc_kernel *k, const dc_device *v,
                  const dc_kmodels *km, long iters) {
  if (!wanted(what)) return;
  dc_kernel kk = *k;
  double t0 = now_ns();
  for (long i = 0; i < iters; i++) {
    kk.u.gemm.m = k->u.gemm.m + (i & 7); /* defeat hoisting (gemm only) */
    if (k->kind != DC_KERNEL_GEMM) kk = *k;
    sink += dc_kernel_time(&kk, v, km);
  }
  double ns = (now_ns() - t0) / (double)iters;
  printf("%-28s %10.1f ns per kernel (%s)\n", what, ns,
         dc_kernel_model_used(k, km));
}

/* The GEMMs of one DLRM_MLPerf iteration at batch 2048 (bottom MLP
 * 13-512-256-128, top MLP 479-1024-1024-512-256-1; forward, input
 * gradient and weight gradient of each layer, and the interaction's two
 * batched products), priced in turn: the mix a run prices, and no single
 * shape for the branch predictor to learn. */
static void bench_mix(const dc_device *v, dc_arena *a, long iters) {
  static const char what[] = "gemm (MLPerf mix)";
  if (!wanted(what)) return;
  static const int64_t bottom[] = {13, 512, 256, 128};
  static const int64_t top[] = {479, 1024, 1024, 512, 256, 1};
  const int64_t B = 2048;
  dc_kernel mix[64];
  int n = 0;
  for (int which = 0; which < 2; which++) {
    const int64_t *w = which ? top : bottom;
    int layers = which ? 5 : 3;
    for (int i = 0; i < layers; i++) {
      int64_t shapes[3][3] = {{B, w[i + 1], w[i]},  /* forward */
                              {B, w[i], w[i + 1]},  /* input gradient */
                              {w[i + 1], w[i], B}}; /* weight gradient */
      for (int s = 0; s < 3; s++) {
        dc_kernel *k = &mix[n++];
        dc_kernel_params_init(k, DC_KERNEL_GEMM, a);
        k->u.gemm.m = shapes[s][0];
        k->u.gemm.n = shapes[s][1];
        k->u.gemm.k = shapes[s][2];
      }
    }
  }
  for (int s = 0; s < 2; s++) { /* Z = X·Xᵀ over 27 vectors of 128 */
    dc_kernel *k = &mix[n++];
    dc_kernel_params_init(k, DC_KERNEL_GEMM, a);
    k->u.gemm.batch = B;
    k->u.gemm.m = 27;
    k->u.gemm.n = s ? 128 : 27;
    k->u.gemm.k = s ? 27 : 128;
  }
  long rounds = iters / n + 1;
  double t0 = now_ns();
  for (long r = 0; r < rounds; r++)
    for (int i = 0; i < n; i++) sink += dc_kernel_time(&mix[i], v, NULL);
  double ns = (now_ns() - t0) / (double)(rounds * n);
  printf("%-28s %10.1f ns per kernel (analytic, %d shapes)\n", what, ns,
         n);
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 200000;
  if (iters < 1) iters = 1;
  only = argc > 2 ? argv[2] : NULL;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_device v;
  if (!dc_device_lookup("V100", &v, &a, &d)) return 1;
  const dc_kmodels *km = dc_kmodels_for(&v);
  dc_kernel k;
  dc_kernel_params_init(&k, DC_KERNEL_ELEMENTWISE, &a);
  k.u.ew.elements = 1 << 20, k.u.ew.flops_per_elem = 1;
  k.u.ew.bytes_per_elem = 8;
  bench("elementwise", &k, &v, km, iters);
  dc_kernel_params_init(&k, DC_KERNEL_EMBEDDING_FWD, &a);
  dc_emb_group g = {.tables = 8, .rows = 1000000, .dim = 64, .pooling = 100};
  k.u.emb.groups = &g, k.u.emb.batch = 2048;
  bench("embedding_fwd (enhanced)", &k, &v, km, iters);
  dc_kernel_params_init(&k, DC_KERNEL_ALL_REDUCE, &a);
  k.u.coll.bytes = 100 << 20, k.u.coll.ranks = 8;
  bench("all_reduce", &k, &v, km, iters);
  dc_kernel_params_init(&k, DC_KERNEL_GEMM, &a);
  k.u.gemm.m = 2048, k.u.gemm.n = 1024, k.u.gemm.k = 512;
  bench("gemm (analytic)", &k, &v, NULL, iters);
  bench("gemm (fitted MLP)", &k, &v, km, iters / 10 + 1);
  bench_mix(&v, &a, iters);
  printf("(checksum %.3f)\n", sink);
  dc_arena_free(&a);
  return 0;
}
