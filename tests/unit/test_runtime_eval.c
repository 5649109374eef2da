/*
 * test_runtime_eval.c — the evaluator (runtime/eval.c) against timelines
 * worked out by hand, on graphs built here op by op (1–3 ops, 1–2 streams,
 * 1–2 ranks). Kernel times are injected: the fake pricer reads a kernel's
 * time from its descriptor (elements for element-wise kernels, bytes for
 * collectives), so every expected number below follows from Algorithm 1
 * alone. The hand computations are in the comments above each test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "runtime/emit_int.h"
#include "runtime/runtime.h"

static double fake_time(void *ctx, const dc_launch *l, int32_t rank) {
  (void)ctx;
  (void)rank;
  if (dc_kernel_is_collective(l->k.kind)) return (double)l->k.u.coll.bytes;
  if (l->k.kind == DC_KERNEL_MEMCPY_H2D) return (double)l->k.u.copy.bytes;
  return (double)l->k.u.ew.elements;
}

/* defaults t1=2 t2=3 t3=4 t4=10 t5=5 gap=1; op "b" has t5=50. */
static dc_op_overheads test_ops[1];
static dc_profile test_profile(void) {
  dc_profile p;
  memset(&p, 0, sizeof p);
  p.name = "test";
  p.t1_us = 2;
  p.t2_us = 3;
  p.t3_us = 4;
  p.t4_us = 10;
  p.t5_us = 5;
  p.kernel_gap_us = 1;
  test_ops[0] = (dc_op_overheads){
      "b", {-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}, {50, 0, 1}};
  p.ops = test_ops;
  p.n_ops = 1;
  return p;
}

/* A small graph under construction. */
typedef struct gb {
  dc_arena a;
  dc_graph g;
  dc_op ops[16];
  dc_tensor tensors[8];
  int32_t rank_first[4];
} gb;

static void gb_init(gb *b, int32_t ranks, int32_t streams) {
  memset(b, 0, sizeof *b);
  dc_arena_init(&b->a);
  b->g.n_ranks = ranks;
  b->g.n_streams = streams;
  b->g.ops = b->ops;
  b->g.tensors = b->tensors;
  b->g.rank_first = b->rank_first;
  for (int i = 0; i < 8; i++) {
    b->tensors[i].id = i;
    b->tensors[i].producer = -1;
    b->tensors[i].dtype = DC_DTYPE_FP32;
  }
  b->g.n_tensors = 8;
}

/* Appends a top-level op on `rank` with kernels of the given times (µs)
 * on `stream`; returns its index. */
static int32_t gb_op(gb *b, const char *name, int32_t rank, int32_t stream,
                     int n, const double *times) {
  int32_t j = b->g.n_ops++;
  dc_op *op = &b->ops[j];
  op->name = name;
  op->rank = rank;
  op->parent = -1;
  op->end = j + 1;
  op->phase = DC_PHASE_FORWARD;
  op->n_launches = n;
  op->launches = dc_arena_array(&b->a, (size_t)n + 1, sizeof(dc_launch));
  for (int i = 0; i < n; i++) {
    op->launches[i].k.kind = DC_KERNEL_ELEMENTWISE;
    op->launches[i].k.scale = 1;
    op->launches[i].k.u.ew.elements = (int64_t)times[i];
    op->launches[i].stream = stream;
    op->launches[i].runtime = "cudaLaunchKernel";
  }
  b->rank_first[rank + 1] = b->g.n_ops;
  return j;
}

static void gb_io(gb *b, int32_t op, int32_t in, int32_t out) {
  int32_t *v = dc_arena_array(&b->a, 2, sizeof *v);
  if (in >= 0) {
    v[0] = in;
    b->ops[op].inputs = v;
    b->ops[op].n_inputs = 1;
  }
  if (out >= 0) {
    v[1] = out;
    b->ops[op].outputs = v + 1;
    b->ops[op].n_outputs = 1;
    b->tensors[out].producer = op;
  }
}

static void gb_coll(gb *b, int32_t op, int32_t coll_id, int64_t time) {
  dc_launch *l = &b->ops[op].launches[0];
  l->k.kind = DC_KERNEL_ALL_REDUCE;
  l->k.u.coll.bytes = time;
  l->k.u.coll.ranks = 2;
  l->k.u.coll.hosts = 1;
  l->k.u.coll.coll_id = coll_id;
}

static dc_eval_result eval(gb *b, const dc_profile *p, bool ok_expected) {
  dc_eval_opts o = {p, fake_time, NULL, true};
  dc_eval_result r;
  dc_diags d = {0};
  bool ok = dc_eval_graph(&b->g, &o, &b->a, &r, &d);
  assert_int_equal(ok, ok_expected);
  assert_int_equal(d.errors, ok_expected ? 0 : 1);
  dc_diags_free(&d);
  return r;
}

/* cmocka 1.1 has no double assertion: print both operands ourselves. */
#define NEAR(a, b) near_((a), (b), #a, __FILE__, __LINE__)
static void near_(double got, double want, const char *what,
                  const char *file, int line) {
  if (got - want > 1e-9 || want - got > 1e-9) {
    print_error("%s = %.9f, expected %.9f\n", what, got, want);
    _fail(file, line);
  }
}

/* One op, two kernels (20, 30) on one stream:
 *   cpu: T1 → 2, T2 → 5
 *   k1: start = max(0+1, 5+10/2) = 10, end 30; cpu += T4 → 15, += T5 → 20
 *   k2: start = max(30+1, 20+5) = 31, end 61; cpu += T4 → 30 (last: no T5)
 *   T3 → 34;  e2e = max(34, 61) = 61; active 50; kernel-only 20+30 = 50;
 *   idle before its kernels: (10-0) + (31-30) = 11. */
static void test_one_op_two_kernels(void **state) {
  (void)state;
  gb b;
  gb_init(&b, 1, 1);
  gb_op(&b, "a", 0, 0, 2, (double[]){20, 30});
  dc_profile p = test_profile();
  dc_eval_result r = eval(&b, &p, true);
  NEAR(r.e2e_us, 61);
  NEAR(r.ranks[0].cpu_us, 34);
  NEAR(r.ranks[0].gpu_active_us, 50);
  NEAR(r.ranks[0].kernel_only_us, 50);
  assert_int_equal(r.n_ops, 1);
  assert_int_equal(r.n_kernels, 2);
  NEAR(r.kernels[0].start_us, 10);
  NEAR(r.kernels[0].call_us, 5);
  NEAR(r.kernels[1].start_us, 31);
  NEAR(r.kernels[1].call_us, 20);
  NEAR(r.ops[0].t4_us, 20);
  NEAR(r.ops[0].t5_us, 5);
  NEAR(r.ops[0].gpu_idle_us, 11);
  NEAR(r.ops[0].cpu_end_us, 34);
  dc_arena_free(&b.a);
}

/* Three ops: a (kernel 5), b (no kernel; its own T5 = 50), c (kernel 100):
 *   a: 2, 5; k start max(1, 10) = 10, end 15; cpu 15; T3 → 19
 *   b: T1 → 21; T5(b) → 71
 *   c: T1 → 73, T2 → 76; k start max(15+1, 76+5) = 81, end 181; cpu 86; T3 90
 *   e2e 181, cpu 90, active 105, kernel-only 105. */
static void test_op_without_kernels_and_lookup(void **state) {
  (void)state;
  gb b;
  gb_init(&b, 1, 1);
  gb_op(&b, "a", 0, 0, 1, (double[]){5});
  gb_op(&b, "b", 0, 0, 0, NULL);
  gb_op(&b, "c", 0, 0, 1, (double[]){100});
  dc_profile p = test_profile();
  dc_eval_result r = eval(&b, &p, true);
  NEAR(r.e2e_us, 181);
  NEAR(r.ranks[0].cpu_us, 90);
  NEAR(r.ranks[0].gpu_active_us, 105);
  NEAR(r.ops[1].t5_us, 50);
  NEAR(r.ops[1].cpu_start_us, 19);
  NEAR(r.ops[1].cpu_end_us, 71);
  NEAR(r.kernels[1].start_us, 81);
  /* The same graph with no host overheads and gap 0 is the kernel sum. */
  dc_profile none;
  memset(&none, 0, sizeof none);
  r = eval(&b, &none, true);
  NEAR(r.e2e_us, 105);
  NEAR(r.ranks[0].kernel_only_us, 105);
  dc_arena_free(&b.a);
}

/* Two streams and a data dependency: a (100 on s0, writes t0), b (10 on
 * s1, independent), c (10 on s1, reads t0):
 *   a: 2, 5; start max(1, 10) = 10, end 110; cpu 15; T3 19
 *   b: 21, 24; start max(0+1, 29) = 29, end 39; cpu 34; T3 38
 *   c: 40, 43; start max(39+1, 48, ready 110) = 110, end 120; cpu 53; T3 57
 *   e2e 120; active = |[10,110] ∪ [29,39] ∪ [110,120]| = 110;
 *   kernel-only: a 0..100, b 0..10 (s1), c max(10, 100) → 110. */
static void test_two_streams_dependency(void **state) {
  (void)state;
  gb b;
  gb_init(&b, 1, 2);
  int32_t a = gb_op(&b, "a", 0, 0, 1, (double[]){100});
  int32_t x = gb_op(&b, "x", 0, 1, 1, (double[]){10});
  int32_t c = gb_op(&b, "c", 0, 1, 1, (double[]){10});
  gb_io(&b, a, -1, 0);
  gb_io(&b, x, 1, -1);
  gb_io(&b, c, 0, -1);
  dc_profile p = test_profile();
  dc_eval_result r = eval(&b, &p, true);
  NEAR(r.kernels[1].start_us, 29);
  NEAR(r.kernels[2].start_us, 110);
  NEAR(r.e2e_us, 120);
  NEAR(r.ranks[0].cpu_us, 57);
  NEAR(r.ranks[0].gpu_active_us, 110);
  NEAR(r.ranks[0].kernel_sum_us, 120);
  NEAR(r.ranks[0].kernel_only_us, 110);
  /* Without the dependency c starts right after b on stream 1. */
  b.ops[c].n_inputs = 0;
  r = eval(&b, &p, true);
  NEAR(r.kernels[2].start_us, 48);
  NEAR(r.e2e_us, 110);
  dc_arena_free(&b.a);
}

/* An op with no kernels passes its inputs' readiness on: a (100 on s0,
 * writes t0), m (no kernel: reads t0, writes t1), c (10 on s1, reads t1):
 *   a: 2, 5; start 10, end 110; cpu 15; T3 19
 *   m: T1 21, T5 26 (ready when t0 is: 110)
 *   c: 28, 31; start max(0+1, 31+5, ready 110) = 110, end 120.
 * Then the same inside one op whose kernel-less child reads its kernel
 * child's output: p { k (100 on s0, writes t0), m (reads t0, writes t2) },
 * c (10 on s1, reads t2):
 *   p: T1 2, T2 5; k start 10, end 110; cpu 15; T3 19
 *   c: 21, 24; start max(1, 29, ready 110) = 110, end 120.
 * Were m's output taken as ready at 0, c would start before k ends. */
static void test_kernelless_op_passes_readiness(void **state) {
  (void)state;
  gb b;
  gb_init(&b, 1, 2);
  int32_t a = gb_op(&b, "a", 0, 0, 1, (double[]){100});
  int32_t m = gb_op(&b, "m", 0, 0, 0, NULL);
  int32_t c = gb_op(&b, "c", 0, 1, 1, (double[]){10});
  gb_io(&b, a, -1, 0);
  gb_io(&b, m, 0, 1);
  gb_io(&b, c, 1, -1);
  dc_profile p = test_profile();
  dc_eval_result r = eval(&b, &p, true);
  NEAR(r.ops[1].cpu_end_us, 26);
  NEAR(r.kernels[1].start_us, 110);
  NEAR(r.e2e_us, 120);
  dc_arena_free(&b.a);

  gb_init(&b, 1, 2);
  int32_t top = gb_op(&b, "p", 0, 0, 0, NULL);
  int32_t k = gb_op(&b, "k", 0, 0, 1, (double[]){100});
  m = gb_op(&b, "m", 0, 0, 0, NULL);
  c = gb_op(&b, "c", 0, 1, 1, (double[]){10});
  b.ops[top].end = m + 1;
  b.ops[k].parent = top;
  b.ops[m].parent = top;
  gb_io(&b, k, -1, 0);
  gb_io(&b, m, 0, 2);
  gb_io(&b, c, 2, -1);
  r = eval(&b, &p, true);
  assert_int_equal(r.n_ops, 2);
  NEAR(r.ops[0].cpu_end_us, 19);
  NEAR(r.kernels[1].start_us, 110);
  NEAR(r.e2e_us, 120);
  dc_arena_free(&b.a);
}

/* A loader-thread op (dc_op.loader) keeps its host time off the training
 * thread: l (loader, 5 on s1), then g (10 on s0):
 *   l on the loader clock: 2, 5; start max(1, 10) = 10, end 15; cpu 15;
 *     T3 → 19
 *   g on the training clock from 0: 2, 5; start max(0+1, 5+5) = 10, end
 *     20; cpu 15; T3 19
 *   e2e max(19, 20) = 20; host time max(19, 19) = 19.
 * As one thread (no flag), g's host work follows l's: start 29, e2e 39. */
static void test_loader_thread(void **state) {
  (void)state;
  gb b;
  gb_init(&b, 1, 2);
  int32_t l = gb_op(&b, "l", 0, 1, 1, (double[]){5});
  gb_op(&b, "g", 0, 0, 1, (double[]){10});
  b.ops[l].loader = true;
  dc_profile p = test_profile();
  dc_eval_result r = eval(&b, &p, true);
  NEAR(r.kernels[0].start_us, 10);
  NEAR(r.kernels[1].start_us, 10);
  NEAR(r.e2e_us, 20);
  NEAR(r.ranks[0].cpu_us, 19);
  NEAR(r.ops[1].cpu_start_us, 0);
  b.ops[l].loader = false;
  r = eval(&b, &p, true);
  NEAR(r.kernels[1].start_us, 29);
  NEAR(r.e2e_us, 39);
  dc_arena_free(&b.a);
}

/* Host synchronisation: a (100), b (5, host_sync), c (no kernel):
 *   a: 2, 5; start 10, end 110; cpu 15; T3 19
 *   b: 21, 24; start max(111, 29) = 111, end 116; cpu 34; sync → 116;
 *      T3 → 120
 *   c: T1 → 122, T5 → 127;  e2e = max(127, 116) = 127. */
static void test_host_sync(void **state) {
  (void)state;
  gb b;
  gb_init(&b, 1, 1);
  gb_op(&b, "a", 0, 0, 1, (double[]){100});
  int32_t s = gb_op(&b, "s", 0, 0, 1, (double[]){5});
  b.ops[s].host_sync = true;
  gb_op(&b, "c", 0, 0, 0, NULL);
  dc_profile p = test_profile();
  dc_eval_result r = eval(&b, &p, true);
  NEAR(r.ranks[0].cpu_us, 127);
  NEAR(r.e2e_us, 127);
  NEAR(r.ops[1].sync_wait_us, 116 - 34);
  dc_arena_free(&b.a);
}

/* A host-to-device copy of 100 µs then c (5): pageable, the host waits
 * for the copy; pinned, it does not.
 *   h: T1 2, T2 5; start max(1, 5 + 10/2) = 10, end 110; cpu 15
 *      pageable: the host waits → 110; T3 → 114
 *      pinned:   T3 → 19
 *   c: T1, T2 → 119 / 24; start max(111, 124 / 29), end 129 / 116;
 *      cpu + 10 + 4 → 133 / 38;  e2e 133 / 116. */
static void test_pageable_copy_blocks(void **state) {
  (void)state;
  for (int pinned = 0; pinned < 2; pinned++) {
    gb b;
    gb_init(&b, 1, 1);
    int32_t h = gb_op(&b, "h", 0, 0, 1, (double[]){0});
    dc_launch *l = &b.ops[h].launches[0];
    l->k.kind = DC_KERNEL_MEMCPY_H2D;
    l->k.u.copy.bytes = 100;
    l->k.u.copy.pinned = pinned;
    l->runtime = "cudaMemcpyAsync";
    gb_op(&b, "c", 0, 0, 1, (double[]){5});
    dc_profile p = test_profile();
    dc_eval_result r = eval(&b, &p, true);
    NEAR(r.kernels[0].end_us, 110);
    NEAR(r.ops[0].sync_wait_us, pinned ? 0 : 110 - 15);
    NEAR(r.kernels[1].start_us, pinned ? 111 : 124);
    NEAR(r.e2e_us, pinned ? 116 : 133);
    dc_arena_free(&b.a);
  }
}

/* Two ranks; each runs x (rank 0: 10 µs, rank 1: 50 µs) then an all-reduce
 * (coll 7, 20 µs):
 *   x: 2, 5; start 10, end 20 (rank 0) / 60 (rank 1); cpu 15; T3 19
 *   ar: 21, 24; own start max(end+1, 29): rank 0 29, rank 1 61;
 *       the group starts at 61 on both, ends 81; cpu 34; T3 38
 *   e2e 81 on both ranks; active 30 and 70; comm 20 each; kernel-only 70
 *   (rank 0: 0..10 then the group's 50..70). */
static void test_two_ranks_collective(void **state) {
  (void)state;
  gb b;
  gb_init(&b, 2, 1);
  gb_op(&b, "x", 0, 0, 1, (double[]){10});
  int32_t a0 = gb_op(&b, "ar", 0, 0, 1, (double[]){0});
  gb_coll(&b, a0, 7, 20);
  b.rank_first[1] = 2;
  gb_op(&b, "x", 1, 0, 1, (double[]){50});
  int32_t a1 = gb_op(&b, "ar", 1, 0, 1, (double[]){0});
  gb_coll(&b, a1, 7, 20);
  b.rank_first[2] = 4;
  dc_profile p = test_profile();
  dc_eval_result r = eval(&b, &p, true);
  NEAR(r.e2e_us, 81);
  NEAR(r.ranks[0].e2e_us, 81);
  NEAR(r.ranks[1].e2e_us, 81);
  NEAR(r.ranks[0].gpu_active_us, 30);
  NEAR(r.ranks[1].gpu_active_us, 70);
  NEAR(r.ranks[0].comm_us, 20);
  assert_int_equal(r.ranks[1].comm_bytes, 20);
  NEAR(r.ranks[0].kernel_only_us, 70);
  NEAR(r.ranks[0].cpu_us, 38);
  assert_int_equal(r.critical_rank, 0); /* tie: the lowest rank */
  dc_memory mem = {.hbm_bytes = 1, .cache_hit_rate = 1};
  dc_metrics m;
  dc_metrics_compute(&b.g, &r, &mem, &m);
  NEAR(m.v[DC_METRIC_E2E_MS], 0.081);
  NEAR(m.v[DC_METRIC_GPU_ACTIVE_MS], 0.030);
  NEAR(m.v[DC_METRIC_GPU_IDLE_MS], 0.051);
  NEAR(m.v[DC_METRIC_KERNEL_ONLY_MS], 0.070);
  NEAR(m.v[DC_METRIC_COMM_MS], 0.020);
  assert_true(m.v[DC_METRIC_KERNEL_ONLY_MS] <= m.v[DC_METRIC_E2E_MS]);
  /* the breakdown on rank 0: compute x (10), the all-reduce exposed (20),
   * host 81 − 70 = 11, the rest of the idle 51 − 11 = 40 (waiting for
   * rank 1 at the collective) */
  NEAR(r.ranks[0].compute_us, 10);
  NEAR(m.v[DC_METRIC_COMPUTE_MS], 0.010);
  NEAR(m.v[DC_METRIC_EXPOSED_COMM_MS], 0.020);
  NEAR(m.v[DC_METRIC_EXPOSED_HOST_MS], 0.011);
  NEAR(m.v[DC_METRIC_OTHER_IDLE_MS], 0.040);
  dc_arena_free(&b.a);
}

/* Communication beside compute (the breakdown of e2e_ms): a (100 µs) on
 * stream 0, a collective c (150 µs, one rank) on stream 1:
 *   a: 2, 5; start 10, end 110; cpu 15; T3 19
 *   c: 21, 24; start max(0+1, 24+5) = 29, end 179; cpu 34; T3 38
 *   e2e 179; active = union 10..179 = 169; compute = a alone = 100, so 69
 *   of the collective is exposed (10..110 of it hides behind a);
 *   kernel-only 150 (both from 0), host 179 − 150 = 29 clamped to the
 *   idle 179 − 169 = 10; other idle 0; 100 + 69 + 10 + 0 = 179. */
static void test_overlapped_comm(void **state) {
  (void)state;
  gb b;
  gb_init(&b, 1, 2);
  gb_op(&b, "a", 0, 0, 1, (double[]){100});
  int32_t c = gb_op(&b, "c", 0, 1, 1, (double[]){0});
  gb_coll(&b, c, 1, 150);
  dc_profile p = test_profile();
  dc_eval_result r = eval(&b, &p, true);
  NEAR(r.e2e_us, 179);
  NEAR(r.ranks[0].gpu_active_us, 169);
  NEAR(r.ranks[0].compute_us, 100);
  NEAR(r.ranks[0].kernel_only_us, 150);
  dc_memory mem = {.hbm_bytes = 1, .cache_hit_rate = 1};
  dc_metrics m;
  dc_metrics_compute(&b.g, &r, &mem, &m);
  NEAR(m.v[DC_METRIC_COMPUTE_MS], 0.100);
  NEAR(m.v[DC_METRIC_EXPOSED_COMM_MS], 0.069);
  NEAR(m.v[DC_METRIC_EXPOSED_HOST_MS], 0.010);
  NEAR(m.v[DC_METRIC_OTHER_IDLE_MS], 0.0);
  dc_arena_free(&b.a);
}

/* Ranks that launch two collectives in opposite orders never match. */
static void test_collective_deadlock(void **state) {
  (void)state;
  gb b;
  gb_init(&b, 2, 1);
  gb_coll(&b, gb_op(&b, "c1", 0, 0, 1, (double[]){0}), 1, 5);
  gb_coll(&b, gb_op(&b, "c2", 0, 0, 1, (double[]){0}), 2, 5);
  b.rank_first[1] = 2;
  gb_coll(&b, gb_op(&b, "c2", 1, 0, 1, (double[]){0}), 2, 5);
  gb_coll(&b, gb_op(&b, "c1", 1, 0, 1, (double[]){0}), 1, 5);
  b.rank_first[2] = 4;
  dc_profile p = test_profile();
  eval(&b, &p, false);
  dc_arena_free(&b.a);
}

/* Profile lookups: binary search with per-field fallback. */
static void test_profile_lookup(void **state) {
  (void)state;
  dc_op_overheads ops[3] = {
      {"z", {-1, 0, 0}, {7, 0, 1}, {-1, 0, 0}, {-1, 0, 0}},
      {"aten::linear", {-1, 0, 0}, {33, 0, 1}, {10.5, 0, 1}, {29, 0, 1}},
      {"m", {1, 0, 1}, {-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}}};
  dc_runtime_overheads rt[1] = {{"cudaMemcpyAsync", {12, 0, 3}}};
  dc_profile p = test_profile();
  p.ops = ops;
  p.n_ops = 3;
  p.runtime = rt;
  p.n_runtime = 1;
  dc_profile_sort(&p);
  dc_op_cost c = dc_profile_op(&p, "aten::linear");
  NEAR(c.t1_us, 2);
  NEAR(c.t2_us, 33);
  NEAR(c.t3_us, 10.5);
  NEAR(c.t5_us, 29);
  c = dc_profile_op(&p, "z");
  NEAR(c.t2_us, 7);
  NEAR(c.t3_us, 4);
  c = dc_profile_op(&p, "m");
  NEAR(c.t1_us, 1);
  c = dc_profile_op(&p, "nope");
  NEAR(c.t5_us, 5);
  NEAR(dc_profile_t4(&p, "cudaMemcpyAsync"), 12);
  NEAR(dc_profile_t4(&p, "cudaLaunchKernel"), 10);
  NEAR(dc_profile_t4(&p, NULL), 10);
}

/* CSV quoting (RFC 4180) and JSON numbers. */
static void test_emit_row(void **state) {
  (void)state;
  dc_param params[2] = {{"system.gpu", "A,\"B\""}, {"training.batch_size",
                                                    "2048"}};
  dc_point pt;
  memset(&pt, 0, sizeof pt);
  pt.params = params;
  pt.n_params = 2;
  rt_emit_col cols[4] = {{"system.gpu", true, 0, 0},
                         {"training.batch_size", true, 1, 0},
                         {"e2e_ms", false, -1, DC_METRIC_E2E_MS},
                         {"fits", false, -1, DC_METRIC_FITS}};
  dc_metrics m;
  memset(&m, 0, sizeof m);
  m.v[DC_METRIC_E2E_MS] = 1.23456;
  m.v[DC_METRIC_FITS] = 1;
  dc_buf b = {0}, s = {0};
  rt_emit_row(DC_FORMAT_CSV, cols, 4, &pt, &m, 0, -1, &b, &s);
  assert_string_equal(b.data, "\"A,\"\"B\"\"\",2048,1.2346,true\r\n");
  dc_buf_clear(&b);
  rt_emit_row(DC_FORMAT_JSONL, cols, 4, &pt, &m, 0, -1, &b, &s);
  assert_string_equal(b.data,
                      "{\"system.gpu\":\"A,\\\"B\\\"\",\"training.batch_size\""
                      ":2048,\"e2e_ms\":1.2346,\"fits\":true}\n");
  /* --digits 17: the double itself (round-trips), fits still a word */
  dc_buf_clear(&b);
  m.v[DC_METRIC_E2E_MS] = 0.1 + 0.2;
  rt_emit_row(DC_FORMAT_CSV, cols, 4, &pt, &m, 17, 1, &b, &s);
  assert_string_equal(b.data,
                      "\"A,\"\"B\"\"\",2048,0.30000000000000004,true\r\n");
  /* output.precision 1 (it was parsed and unused):
   * one decimal for every metric, fits still a word */
  dc_buf_clear(&b);
  m.v[DC_METRIC_E2E_MS] = 1.26;
  rt_emit_row(DC_FORMAT_CSV, cols, 4, &pt, &m, 0, 1, &b, &s);
  assert_string_equal(b.data, "\"A,\"\"B\"\"\",2048,1.3,true\r\n");
  dc_buf_clear(&b);
  rt_emit_header(DC_FORMAT_MD, cols, 4, &b);
  assert_string_equal(b.data, "| system.gpu | training.batch_size | e2e_ms "
                              "| fits |\n|---|---|---:|---|\n");
  dc_buf_free(&b);
  dc_buf_free(&s);
}

/* --digits: significant digits for numbers, -0 and nan as fixed decimals
 * print them; per-rank/per-shard cells follow their cells' setting. */
static void test_emit_digits(void **state) {
  (void)state;
  dc_buf b = {0};
  rt_emit_put_sig(&b, 1.0 / 3.0, 17);
  assert_string_equal(b.data, "0.33333333333333331");
  dc_buf_clear(&b);
  rt_emit_put_sig(&b, -0.0, 17);
  assert_string_equal(b.data, "0");
  dc_buf_clear(&b);
  rt_emit_put_sig(&b, 1.5e-7, 6);
  assert_string_equal(b.data, "1.5e-07");
  dc_buf_free(&b);
  rt_cells c = {0};
  rt_cells_num(&c, 1.0 / 3.0, 4);
  c.digits = 9;
  rt_cells_num(&c, 1.0 / 3.0, 4);
  assert_int_equal(c.n, 2);
  assert_string_equal(c.buf.data + c.off[0], "0.3333");
  assert_string_equal(c.buf.data + c.off[1], "0.333333333");
  rt_cells_free(&c);
}

/* The built-in profiles load from the embedded catalog. */
static void test_profile_builtin(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_profile p;
  assert_true(dc_profile_load("paper-v100", &p, &a, &d));
  NEAR(p.t1_us, 7.7);
  NEAR(p.t4_us, 10);
  NEAR(p.kernel_gap_us, 1);
  dc_op_cost c = dc_profile_op(&p, "aten::linear");
  NEAR(c.t2_us, 33);
  NEAR(c.t3_us, 10.5);
  NEAR(c.t5_us, 29);
  c = dc_profile_op(&p, "LookupFunction");
  NEAR(c.t2_us, 72);
  NEAR(c.t5_us, 8); /* not given: the default */
  assert_true(dc_profile_load("none", &p, &a, &d));
  NEAR(p.t1_us + p.t2_us + p.t3_us + p.t4_us + p.t5_us + p.kernel_gap_us, 0);
  assert_int_equal(d.errors, 0);
  assert_false(dc_profile_load("paper-v10", &p, &a, &d));
  assert_int_equal(d.errors, 1);
  assert_int_equal(d.items[0].code, DC_DIAG_UNKNOWN_PROFILE);
  assert_non_null(d.items[0].help);
  assert_non_null(strstr(d.items[0].help, "paper-v100"));
  dc_diags_free(&d);
  dc_arena_free(&a);
}

/* The memo returns dc_kernel_time's price, once priced; closed-form kinds
 * (a collective here) are priced directly, neither hit nor miss. */
static void test_memo(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_device dev;
  assert_true(dc_device_lookup("V100-SXM2-16GB", &dev, &a, &d));
  dc_memo *m = dc_memo_new();
  dc_kernel k;
  memset(&k, 0xff, sizeof k); /* garbage in padding must not matter */
  k.kind = DC_KERNEL_GEMM;
  k.scale = 1;
  k.u.gemm.m = 2048;
  k.u.gemm.n = 512;
  k.u.gemm.k = 512;
  k.u.gemm.batch = 1;
  k.u.gemm.transa = k.u.gemm.transb = false;
  k.u.gemm.dtype = DC_DTYPE_FP32;
  double want = dc_kernel_time(&k, &dev, NULL);
  assert_true(want > 0);
  NEAR(dc_memo_time(m, &k, 0, &dev, NULL), want);
  dc_kernel k2;
  memset(&k2, 0, sizeof k2);
  k2.kind = DC_KERNEL_GEMM;
  k2.scale = 1;
  k2.u.gemm = k.u.gemm;
  NEAR(dc_memo_time(m, &k2, 0, &dev, NULL), want);
  int64_t hits, misses;
  dc_memo_stats(m, &hits, &misses);
  assert_int_equal(hits, 1);
  assert_int_equal(misses, 1);
  k2.u.gemm.k = 1024; /* a different kernel */
  assert_true(dc_memo_time(m, &k2, 0, &dev, NULL) > want);
  k2.u.gemm.k = 512; /* the same kernel on another device id: a miss */
  dc_memo_time(m, &k2, 1, &dev, NULL);
  dc_memo_stats(m, &hits, &misses);
  assert_int_equal(misses, 3);
  dc_kernel c;
  memset(&c, 0, sizeof c);
  c.kind = DC_KERNEL_ALL_REDUCE;
  c.scale = 1;
  c.u.coll.bytes = 1 << 20;
  c.u.coll.ranks = 8;
  c.u.coll.hosts = 1;
  c.u.coll.coll_id = 1;
  double t = dc_memo_time(m, &c, 0, &dev, NULL);
  NEAR(t, dc_kernel_time(&c, &dev, NULL));
  c.u.coll.coll_id = 2;
  NEAR(dc_memo_time(m, &c, 0, &dev, NULL), t);
  dc_memo_stats(m, &hits, &misses);
  assert_int_equal(hits, 1);
  assert_int_equal(misses, 3);
  dc_memo_free(m);
  dc_diags_free(&d);
  dc_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_op_two_kernels),
      cmocka_unit_test(test_op_without_kernels_and_lookup),
      cmocka_unit_test(test_two_streams_dependency),
      cmocka_unit_test(test_kernelless_op_passes_readiness),
      cmocka_unit_test(test_loader_thread),
      cmocka_unit_test(test_host_sync),
      cmocka_unit_test(test_pageable_copy_blocks),
      cmocka_unit_test(test_two_ranks_collective),
      cmocka_unit_test(test_overlapped_comm),
      cmocka_unit_test(test_collective_deadlock),
      cmocka_unit_test(test_profile_lookup),
      cmocka_unit_test(test_emit_row),
      cmocka_unit_test(test_emit_digits),
      cmocka_unit_test(test_profile_builtin),
      cmocka_unit_test(test_memo),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
