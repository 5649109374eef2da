/*
 * test_runtime_plan_uvm.c — tables beyond HBM end to end (study →
 * placement → graph → evaluation): the 2.6 TB model (100 tables × 50M
 * rows × 128, fp32, row-wise Adagrad) plans on one host of 8 H100s under
 * sharding.memory: auto and reports host memory and a hit rate; it does
 * not fit in HBM alone; on 32 GPUs it stays in HBM; a host too small
 * fails; and for a fixed placement less cache is never faster.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/compiler.h"
#include "runtime/plan/plan.h"
#include "runtime/runtime.h"

static const char big[] =
    "study: big\n"
    "model:\n"
    "  bottom_mlp: [13, 512, 256, 128]\n"
    "  top_mlp: [1024, 1024, 512, 256, 1]\n"
    "  embedding:\n"
    "    dim: 128\n"
    "    tables:\n"
    "      - {count: 100, rows: 50M, pooling: 20, zipf: 1.05}\n"
    "training: {batch_size: 65536, optimizer: rowwise_adagrad}\n"
    "system: {gpu: H100, gpus: 8, framework: torchrec}\n"
    "sharding: {memory: auto}\n";

/* Evaluates point 0 of `text` with -D overrides; returns its metrics. */
static dc_metrics run(const char *text, const dc_override *ov, size_t n) {
  dc_diags d = {0};
  dc_study *s = dc_study_load_memory("t.yaml", text, strlen(text), ov, n, &d);
  if (!s) dc_diags_render(&d, stderr, false);
  assert_non_null(s);
  dc_arena a;
  dc_arena_init(&a);
  dc_point p;
  dc_study_point(s, 0, &a, &p);
  const dc_graph *g = dc_plan_build_graph(&p, DC_GRAPH_PRICED, &a, &d);
  if (!g) dc_diags_render(&d, stderr, false);
  assert_non_null(g);
  dc_eval_result r;
  dc_metrics m;
  dc_profile prof;
  bool ok = dc_eval_point(g, false, &a, &r, &m, &prof, &d);
  if (!ok) dc_diags_render(&d, stderr, false);
  assert_true(ok);
  for (int i = 0; i < DC_METRIC_COUNT_; i++) assert_true(isfinite(m.v[i]));
  dc_arena_free(&a);
  dc_study_free(s);
  dc_diags_free(&d);
  return m;
}

static void plans_on_one_host(void **state) {
  (void)state;
  dc_metrics m = run(big, NULL, 0);
  assert_true(m.v[DC_METRIC_FITS] != 0);
  double host = m.v[DC_METRIC_HOST_GIB];
  assert_true(host > 1500 && host <= 2048); /* the DGX H100's 2 TiB */
  double hit = m.v[DC_METRIC_CACHE_HIT_RATE];
  assert_true(hit > 0 && hit < 1);
  /* every table in HBM does not fit */
  dc_override hbm = {"sharding.memory", "hbm"};
  dc_metrics h = run(big, &hbm, 1);
  assert_true(h.v[DC_METRIC_FITS] == 0);
  assert_true(h.v[DC_METRIC_HOST_GIB] == 0);
  assert_true(h.v[DC_METRIC_CACHE_HIT_RATE] == 1);
  /* the host link makes the step slower than the (unfitting) HBM one */
  assert_true(m.v[DC_METRIC_E2E_MS] > h.v[DC_METRIC_E2E_MS]);
}

static void more_gpus_stay_in_hbm(void **state) {
  (void)state;
  /* 64: on 32 the tables alone take 74.5 of the H100's 80 GiB and the
   * step's activations and workspace do not fit beside them */
  dc_override ov[] = {{"system.gpus", "64"}, {"system.gpus_per_host", "8"}};
  dc_metrics m = run(big, ov, 2);
  assert_true(m.v[DC_METRIC_FITS] != 0);
  assert_true(m.v[DC_METRIC_HOST_GIB] == 0);
  assert_true(m.v[DC_METRIC_CACHE_HIT_RATE] == 1);
}

static void small_host_does_not_fit(void **state) {
  (void)state;
  dc_override ov = {"system.host_memory", "512GiB"};
  dc_metrics m = run(big, &ov, 1);
  assert_true(m.v[DC_METRIC_FITS] == 0);
}

/* A fixed placement (the group says uvm_caching): the step time and the
 * embedding time never fall as the cache shrinks, and the hit rate
 * falls. */
static void less_cache_never_faster(void **state) {
  (void)state;
  static const char fixed[] =
      "study: fixed\n"
      "model:\n"
      "  bottom_mlp: [13, 512, 256, 128]\n"
      "  top_mlp: [1024, 1024, 512, 256, 1]\n"
      "  embedding:\n"
      "    dim: 128\n"
      "    tables:\n"
      "      - {count: 8, rows: 50M, pooling: 20}\n"
      "      - {count: 8, rows: 50M, pooling: 20, memory: uvm_caching,"
      " zipf: 1.05}\n"
      "training: {batch_size: 65536, optimizer: rowwise_adagrad}\n"
      "system: {gpu: H100, gpus: 8, framework: torchrec}\n";
  const char *clf[] = {"1", "0.5", "0.2", "0.1", "0.05", "0.01", "0.001"};
  double e2e = 0, emb = 0, hit = 2;
  for (size_t i = 0; i < sizeof clf / sizeof *clf; i++) {
    dc_override ov = {"sharding.cache_load_factor", clf[i]};
    dc_metrics m = run(fixed, &ov, 1);
    assert_true(m.v[DC_METRIC_E2E_MS] >= e2e);
    assert_true(m.v[DC_METRIC_EMB_MS] >= emb);
    assert_true(m.v[DC_METRIC_CACHE_HIT_RATE] < hit);
    e2e = m.v[DC_METRIC_E2E_MS];
    emb = m.v[DC_METRIC_EMB_MS];
    hit = m.v[DC_METRIC_CACHE_HIT_RATE];
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plans_on_one_host),
      cmocka_unit_test(more_gpus_stay_in_hbm),
      cmocka_unit_test(small_host_does_not_fit),
      cmocka_unit_test(less_cache_never_faster),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
