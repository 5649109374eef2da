/*
 * test_runtime_links.c — `system.links` reaches the prices:
 * dc_device_apply_links maps each key onto the device fields the kernel
 * models read, and each key moves the evaluated iteration the way a user
 * expects — less NVLink bandwidth or more latency: longer collectives
 * inside a host; less NIC bandwidth: longer collectives across hosts
 * only; less PCIe bandwidth: longer input copies. Every test compares a
 * point with the same point under another link value, so each fails if
 * the value is ignored. The last test runs a sweep over links on one
 * worker thread, whose device cache must not hand one point's links to
 * the next.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "runtime/plan/plan.h"
#include "runtime/runtime.h"
#include "tests/golden/graph/points.h"
#include "tests/unit/graph_fixture.h"
#include "tests/unit/eval_fixture.h"

/* A small DLRM, table-wise on `hosts` × `per_host` V100s (a fixed plan,
 * so only the links change between the points a test compares). */
static void model(tp_cfg *c, int32_t hosts, int32_t per_host) {
  static const int64_t bot[] = {13, 512, 256, 64};
  static const int64_t top[] = {512, 256, 1};
  tp_init(c, bot, 4, top, 3, 16, 1000000, 64, 20, 16384);
  c->p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c->p.sharding = DC_SHARDING_TABLE_WISE;
  for (int t = 0; t < 16; t++) c->tables[t].sharding = DC_SHARDING_TABLE_WISE;
  c->p.hosts = hosts;
  c->p.gpus_per_host = per_host;
  c->p.gpus = hosts * per_host;
}

typedef struct outcome {
  double e2e_us;
  double comm_us; /* the slowest rank's collectives */
  double h2d_us;  /* rank 0's host-to-device copies */
} outcome;

/* Builds and evaluates `p` as `dlrmc run` does (dc_plan_build_graph, then
 * dc_eval_point with the point's device). */
static outcome evaluate(const dc_point *p) {
  dc_eval_result r;
  dc_metrics m;
  const dc_graph *g = evaluate_point(p, &r, &m);
  outcome o = {r.e2e_us, m.v[DC_METRIC_COMM_MS] * 1000, 0};
  for (size_t i = 0; i < r.n_kernels; i++) {
    const dc_eval_kernel *k = &r.kernels[i];
    const dc_launch *l = &g->ops[k->op].launches[k->launch];
    if (k->rank == 0 && l->k.kind == DC_KERNEL_MEMCPY_H2D)
      o.h2d_us += k->end_us - k->start_us;
  }
  return o;
}

static dc_device catalog(const char *name) {
  dc_device dev;
  dc_diags d = {0};
  assert_true(dc_device_lookup(name, &dev, &arena, &d));
  dc_diags_free(&d);
  return dev;
}

/* The mapping itself: unset keys keep the catalog's figures (the device
 * is unchanged byte for byte); each key sets its fields; pcie scales the
 * pageable rate by the same ratio (V100: 15.75 and 8.10 GB/s). */
static void test_apply(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 1, 1);
  dc_device cat = catalog("V100-SXM2-16GB"), dev = cat;
  dc_device_apply_links(&dev, &c.p);
  assert_memory_equal(&dev, &cat, sizeof dev);

  c.p.nvlink_gbps = 150;
  c.p.pcie_gbps = 31.5;
  c.p.nic_gbps = 25;
  c.p.link_latency_us = 0; /* zero is a value, not "unset" */
  dev = cat;
  dc_device_apply_links(&dev, &c.p);
  assert_true(dev.nvlink_gbps == 150);
  assert_true(dev.pcie_gbps == 31.5);
  assert_true(fabs(dev.h2d_pageable_gbps -
                   cat.h2d_pageable_gbps * 31.5 / cat.pcie_gbps) < 1e-12);
  assert_true(dev.h2d_pageable_gbps > cat.h2d_pageable_gbps);
  assert_true(dev.nic_gbps == 25);
  assert_true(dev.link_latency_us == 0 && dev.nic_latency_us == 0);
  /* nothing else moves */
  dev.nvlink_gbps = cat.nvlink_gbps;
  dev.pcie_gbps = cat.pcie_gbps;
  dev.h2d_pageable_gbps = cat.h2d_pageable_gbps;
  dev.nic_gbps = cat.nic_gbps;
  dev.link_latency_us = cat.link_latency_us;
  dev.nic_latency_us = cat.nic_latency_us;
  assert_memory_equal(&dev, &cat, sizeof dev);

  /* dc_device_of_point = lookup + apply */
  dc_device q;
  dc_diags d = {0};
  assert_true(dc_device_of_point(&c.p, &q, &arena, &d));
  assert_true(q.nvlink_gbps == 150 && q.nic_latency_us == 0);
  dc_diags_free(&d);
}

/* nvlink, 8 GPUs in one host: the catalog's 300 GB/s, then half, then a
 * PCIe-class 16 GB/s: the all-to-alls and the all-reduce slow down at
 * each step, and the iteration with them. */
static void test_nvlink(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 1, 8);
  outcome base = evaluate(&c.p);
  c.p.nvlink_gbps = 300; /* the catalog's own figure: the same answer */
  outcome same = evaluate(&c.p);
  assert_true(same.comm_us == base.comm_us && same.e2e_us == base.e2e_us);
  c.p.nvlink_gbps = 150;
  outcome half = evaluate(&c.p);
  c.p.nvlink_gbps = 16;
  outcome slow = evaluate(&c.p);
  assert_true(base.comm_us > 0);
  assert_true(half.comm_us > base.comm_us);
  assert_true(slow.comm_us > 2 * half.comm_us);
  assert_true(slow.e2e_us > half.e2e_us && half.e2e_us >= base.e2e_us);
}

/* nic, 2 hosts × 8 GPUs: a slower network lengthens the collectives that
 * span hosts; on one host of 8 the NIC is not used, so the same setting
 * changes nothing there. */
static void test_nic(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 2, 8);
  c.p.nic_gbps = 25;
  outcome fast = evaluate(&c.p);
  c.p.nic_gbps = 3.125;
  outcome slow = evaluate(&c.p);
  assert_true(fast.comm_us > 0);
  assert_true(slow.comm_us > 2 * fast.comm_us);
  assert_true(slow.e2e_us > fast.e2e_us);

  model(&c, 1, 8);
  outcome one = evaluate(&c.p);
  c.p.nic_gbps = 3.125;
  outcome one_slow = evaluate(&c.p);
  assert_true(one_slow.comm_us == one.comm_us);
}

/* latency: every step of every collective pays it, inside a host (the
 * link latency) and across hosts (the NIC latency) alike. Ring steps:
 * 7 per all-to-all of 8 ranks, so 27 µs more per step is at least
 * 189 µs more per collective. */
static void test_latency(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 1, 8);
  c.p.link_latency_us = 3;
  outcome lo = evaluate(&c.p);
  c.p.link_latency_us = 30;
  outcome hi = evaluate(&c.p);
  assert_true(hi.comm_us >= lo.comm_us + 7 * 27);
  assert_true(hi.e2e_us > lo.e2e_us);

  model(&c, 2, 8);
  c.p.link_latency_us = 8;
  outcome lo2 = evaluate(&c.p);
  c.p.link_latency_us = 80;
  outcome hi2 = evaluate(&c.p);
  assert_true(hi2.comm_us >= lo2.comm_us + 15 * 72);
}

/* pcie, one GPU: the batch's input copies (dense features, indices,
 * offsets, labels) take longer over a slower host link; the iteration
 * takes at least as long. */
static void test_pcie(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 1, 1);
  c.p.pcie_gbps = 32;
  outcome fast = evaluate(&c.p);
  c.p.pcie_gbps = 4;
  outcome slow = evaluate(&c.p);
  assert_true(fast.h2d_us > 0);
  assert_true(slow.h2d_us > 2 * fast.h2d_us);
  assert_true(slow.e2e_us >= fast.e2e_us);
  assert_true(slow.comm_us == 0 && fast.comm_us == 0);
}

/* ---- a sweep over links, on one worker --------------------------------
 * The executor caches devices per worker and memoises kernel prices per
 * device: a cache keyed by the GPU's name alone would give every point
 * the first point's links. Each row must equal the same point evaluated
 * on its own, and the rows must differ where the links do. (The group
 * spans both hosts, so NVLink matters only below the NIC's 6.25 GB/s:
 * the slowest link of the group.) */

static const dc_graph *build_cb(void *ctx, int64_t i,
                                dc_graph_detail detail, dc_arena *a,
                                dc_diags *d) {
  dc_point *p = dc_arena_alloc(a, sizeof *p);
  dc_study_point(ctx, i, a, p);
  return dc_plan_build_graph(p, detail, a, d);
}

static bool sink(void *ctx, const char *data, size_t len) {
  dc_buf_append(ctx, data, len);
  return true;
}

static const char sweep_study[] =
    "study: links\n"
    "model:\n"
    "  bottom_mlp: [13, 256, 64]\n"
    "  top_mlp: [256, 1]\n"
    "  embedding: {dim: 64, tables: [{count: 8, rows: 1M, pooling: 20}]}\n"
    "training: {batch_size: 16384}\n"
    "system: {gpu: V100-SXM2-16GB, hosts: 2, gpus_per_host: 8}\n"
    "sharding: {plan: table_wise}\n"
    "sweep:\n"
    "  mode: zip\n"
    "  system.links.nvlink: [300GB/s, 4GB/s, 300GB/s, 300GB/s, 300GB/s, "
    "300GB/s]\n"
    "  system.links.nic: [6.25GB/s, 6.25GB/s, 1GB/s, 6.25GB/s, 6.25GB/s, "
    "6.25GB/s]\n"
    "  system.links.latency: [3us, 3us, 3us, 50us, 3us, 3us]\n"
    "  system.links.pcie: [15.75GB/s, 15.75GB/s, 15.75GB/s, 15.75GB/s, "
    "2GB/s, 15.75GB/s]\n"
    "output: {columns: [e2e_ms, comm_ms, kernel_only_ms]}\n";

static void test_sweep_cache(void **state) {
  (void)state;
  dc_diags d = {0};
  dc_study *s = dc_study_load_memory("links.yaml", sweep_study,
                                     strlen(sweep_study), NULL, 0, &d);
  if (!s) dc_diags_render(&d, stderr, false);
  assert_non_null(s);
  int64_t n = dc_study_point_count(s);
  assert_int_equal(n, 6);
  const char *const *params = NULL;
  dc_sweep_source src;
  memset(&src, 0, sizeof src);
  src.ctx = s;
  src.n_points = n;
  src.build = build_cb;
  src.n_params = dc_study_params(s, &params);
  src.param_paths = params;
  static const char *const cols[] = {"e2e_ms", "comm_ms", "kernel_only_ms"};
  src.n_columns = 3;
  src.columns = cols;
  dc_buf out = {0};
  dc_sweep_opts o;
  memset(&o, 0, sizeof o);
  o.jobs = 1; /* one worker: one device cache and one memo for all */
  o.shard_k = o.shard_n = 1;
  o.format = DC_FORMAT_CSV;
  o.sink = sink;
  o.sink_ctx = &out;
  assert_true(dc_sweep_run(&src, &o, &d));
  dc_buf_putc(&out, '\0');

  /* Each point alone, with a device of its own: the expected rows. */
  char *rows[6];
  char *line = strchr(out.data, '\n') + 1; /* past the header */
  for (int64_t i = 0; i < n; i++) {
    char *end = strstr(line, "\r\n");
    assert_non_null(end);
    *end = '\0';
    rows[i] = line;
    line = end + 2;
    dc_point p;
    dc_study_point(s, i, &arena, &p);
    outcome x = evaluate(&p);
    char want[128];
    snprintf(want, sizeof want, "%.4f,%.4f,", x.e2e_us / 1000,
             x.comm_us / 1000);
    assert_true(strncmp(rows[i], want, strlen(want)) == 0);
  }
  /* the catalog's figures at rows 0 and 5; each other row moves a link */
  assert_string_equal(rows[0], rows[5]);
  for (int i = 1; i < 5; i++) assert_string_not_equal(rows[i], rows[0]);
  dc_buf_free(&out);
  dc_study_free(s);
  dc_diags_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_apply, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nvlink, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_latency, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pcie, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sweep_cache, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
