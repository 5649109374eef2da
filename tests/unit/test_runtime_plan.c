/*
 * test_runtime_plan.c — the `plan: auto` planner: it respects every
 * rank's HBM, honours per-table constraints, reports when nothing fits,
 * and beats greedy-by-size table-wise placement on a skewed model, both
 * under its own cost model and on the slowest rank's full iteration time
 * from the evaluator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "runtime/plan/plan.h"
#include "runtime/runtime.h"
#include "tests/golden/graph/points.h"
#include "tests/unit/graph_fixture.h"

static dc_device dev_of(const char *name) {
  dc_device dev;
  dc_diags d = {0};
  assert_true(dc_device_lookup(name, &dev, &arena, &d));
  dc_diags_free(&d);
  return dev;
}

/* 26 tables with skewed sizes and pooling, dot interaction (dim 64), on
 * 8 GPUs: the first table alone is as hot as all the others together, so
 * table-wise placement leaves one rank with far more lookups. */
static void skewed(tp_cfg *c, int gpus) {
  static const int64_t bot[] = {13, 256, 64};
  static const int64_t top[] = {512, 256, 1};
  tp_init(c, bot, 3, top, 3, 26, 100000, 64, 1, 8192);
  for (int t = 0; t < 26; t++) {
    c->tables[t].rows = 200000 + 50000 * (int64_t)((t * 7) % 13);
    c->tables[t].pooling = t == 0 ? 200 : 4 + (t % 5) * 2;
  }
  c->tables[0].rows = 4000000;
  c->p.gpu = "A100-SXM4-80GB";
  c->p.overheads = "paper-v100";
  c->p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c->p.gpus = gpus;
  c->p.hosts = 1;
  c->p.gpus_per_host = gpus;
}

static double e2e_of(const dc_point *p, const dc_shard_plan *s) {
  dc_diags d = {0};
  const dc_graph *g = dc_graph_build_plan(p, s, &arena, &d);
  if (!g) dc_diags_render(&d, stderr, false);
  assert_non_null(g);
  assert_true(dc_graph_verify(g, &d));
  dc_eval_result r;
  dc_metrics m;
  dc_profile prof;
  bool ok = dc_eval_point(g, false, &arena, &r, &m, &prof, &d);
  if (!ok) dc_diags_render(&d, stderr, false);
  assert_true(ok);
  dc_diags_free(&d);
  return r.e2e_us;
}

static void test_beats_greedy(void **state) {
  (void)state;
  tp_cfg c;
  skewed(&c, 8);
  dc_device dev = dev_of(c.p.gpu);
  dc_plan_opts o = {.dev = &dev, .models = dc_kmodels_for(&dev)};
  dc_diags d = {0};
  dc_plan_cost ca, cg;
  dc_shard_plan *a = dc_plan_auto(&c.p, &o, &arena, &d, &ca);
  assert_non_null(a);
  assert_true(dc_shard_plan_check(&c.p, a, &d));
  dc_shard_plan *g = dc_shard_plan_default(&c.p, &arena, &d);
  assert_non_null(g);
  dc_plan_cost_of(&c.p, g, &o, &arena, &cg);
  assert_true(ca.fits);
  /* under its own model: strictly better than greedy-by-size */
  assert_true(ca.total_us < cg.total_us);
  /* the hot table is no longer on one rank alone */
  assert_true(a->tables[0].n_shards > 1);
  /* and on the evaluator's slowest rank */
  double ta = e2e_of(&c.p, a), tg = e2e_of(&c.p, g);
  printf("# auto %.1f us (model %.1f), greedy %.1f us (model %.1f)\n", ta,
         ca.total_us, tg, cg.total_us);
  assert_true(ta < tg);
  dc_diags_free(&d);
}

/* HBM: a V100-16GB-sized device shrunk to 1 GiB; one table of 5M × 64 ×
 * 4 B = 1.28 GB cannot live on one rank, so table-wise is infeasible and
 * the planner must split it; every rank stays within the capacity. */
static void test_capacity(void **state) {
  (void)state;
  tp_cfg c;
  skewed(&c, 4);
  c.p.n_tables = 4;
  c.tables[0].rows = 5000000;
  c.p.batch_size = 1024;
  dc_device dev = dev_of("V100-SXM2-16GB");
  dev.hbm_bytes = (int64_t)1 << 30;
  dc_plan_opts o = {.dev = &dev};
  dc_diags d = {0};
  dc_plan_cost cost;
  dc_shard_plan *a = dc_plan_auto(&c.p, &o, &arena, &d, &cost);
  assert_non_null(a);
  assert_true(cost.fits);
  assert_true(a->tables[0].type != DC_SHARDING_TABLE_WISE);
  assert_true(a->tables[0].type != DC_SHARDING_DATA_PARALLEL);
  for (int32_t r = 0; r < 4; r++) {
    dc_rank_memory m;
    assert_true(dc_shard_plan_memory(&c.p, a, r, &m));
    assert_true(m.total <= dev.hbm_bytes);
  }
  /* with only table-wise allowed nothing fits: E0503 */
  o.allowed = DC_PLAN_TYPE(DC_SHARDING_TABLE_WISE);
  assert_null(dc_plan_auto(&c.p, &o, &arena, &d, NULL));
  assert_int_equal(d.items[d.count - 1].code, DC_DIAG_NO_PLAN);
  dc_diags_free(&d);
}

/* Constraints: a table pinned to rank 3 (type left to auto) stays
 * table-wise on rank 3 or column-wise over exactly [3]; a table whose type
 * is fixed keeps it; a per-table allowed mask is obeyed. */
static void test_constraints(void **state) {
  (void)state;
  tp_cfg c;
  skewed(&c, 4);
  c.ranks[0] = 3;
  c.tables[0].n_ranks = 1;
  c.tables[0].ranks = c.ranks;
  c.tables[1].sharding = DC_SHARDING_DATA_PARALLEL;
  uint32_t allowed[26] = {0};
  allowed[2] = DC_PLAN_TYPE(DC_SHARDING_ROW_WISE);
  dc_device dev = dev_of(c.p.gpu);
  dc_plan_opts o = {.dev = &dev, .table_allowed = allowed};
  dc_diags d = {0};
  dc_shard_plan *a = dc_plan_auto(&c.p, &o, &arena, &d, NULL);
  assert_non_null(a);
  assert_int_equal(a->tables[0].n_shards, 1);
  assert_int_equal(a->tables[0].shards[0].rank, 3);
  assert_int_equal(a->tables[1].type, DC_SHARDING_DATA_PARALLEL);
  assert_int_equal(a->tables[2].type, DC_SHARDING_ROW_WISE);
  dc_diags_free(&d);
}

/* One GPU: everything table-wise on rank 0. */
static void test_single(void **state) {
  (void)state;
  tp_cfg c;
  skewed(&c, 1);
  dc_device dev = dev_of(c.p.gpu);
  dc_plan_opts o = {.dev = &dev};
  dc_diags d = {0};
  dc_shard_plan *a = dc_plan_auto(&c.p, &o, &arena, &d, NULL);
  assert_non_null(a);
  for (int32_t t = 0; t < 26; t++) {
    assert_int_equal(a->tables[t].type, DC_SHARDING_TABLE_WISE);
    assert_int_equal(a->tables[t].shards[0].rank, 0);
  }
  dc_diags_free(&d);
}

/* A plan of one table, data-parallel on 2 GPUs, in the fused style. */
static void dp_point(tp_cfg *c, dc_optimizer opt) {
  static const int64_t bot[] = {13, 64};
  static const int64_t top[] = {64, 1};
  tp_init(c, bot, 2, top, 2, 1, 4000000, 64, 4, 4096);
  c->p.gpu = "A100-SXM4-80GB";
  c->p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c->p.framework = DC_FRAMEWORK_FUSED;
  c->p.gpus = 2;
  c->p.gpus_per_host = 2;
  c->p.optimizer = opt;
  c->p.sparse_optimizer = DC_OPTIMIZER_SGD;
}

static dc_shard_plan *dp_plan(const tp_cfg *c) {
  dc_diags d = {0};
  dc_shard_plan *s = dc_shard_plan_new(&c->p, &arena);
  assert_true(dc_shard_plan_set(s, &c->p, 0, DC_SHARDING_DATA_PARALLEL, 0,
                                NULL, &arena, &d));
  dc_diags_free(&d);
  return s;
}

/* The graph of point c under plan s, verified. */
static const dc_graph *plan_graph(const tp_cfg *c, const dc_shard_plan *s) {
  dc_diags d = {0};
  const dc_graph *g = dc_graph_build_plan(&c->p, s, &arena, &d);
  assert_non_null(g);
  bool ok = dc_graph_verify(g, &d);
  if (!ok) dc_diags_render(&d, stderr, false);
  assert_true(ok);
  dc_diags_free(&d);
  return g;
}

static double dp_bwd_us(dc_optimizer opt, const dc_device *dev) {
  tp_cfg c;
  dp_point(&c, opt);
  dc_shard_plan *s = dp_plan(&c);
  dc_plan_opts o = {.dev = dev};
  dc_plan_cost cost;
  dc_plan_cost_of(&c.p, s, &o, &arena, &cost);
  return cost.max_bwd_us;
}

static double update_us(int64_t elems, dc_optimizer opt,
                        const dc_device *dev) {
  dc_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = DC_KERNEL_ELEMENTWISE;
  k.scale = 1;
  k.u.ew.elements = elems;
  dc_optimizer_cost(opt, &k.u.ew.flops_per_elem, &k.u.ew.bytes_per_elem);
  return dc_kernel_time(&k, dev, NULL);
}

/* The optimizer's cost lives in one place: the planner prices a data-
 * parallel table's update with the recipe the graph's optimizer step is
 * built from (Adagrad: 7 flops and 44 bytes an element, not SGD's price
 * times its step count), and the fused graph's update kernel carries the
 * same figures. */
static void test_dp_update_is_the_graphs(void **state) {
  (void)state;
  dc_device dev = dev_of("A100-SXM4-80GB");
  double flops, bytes;
  dc_optimizer_cost(DC_OPTIMIZER_ADAGRAD, &flops, &bytes);
  assert_true(flops == 7 && bytes == 44);
  /* only the replica's update depends on the dense optimizer here */
  int64_t e = 4000000LL * 64;
  double got = dp_bwd_us(DC_OPTIMIZER_ADAGRAD, &dev) -
               dp_bwd_us(DC_OPTIMIZER_SGD, &dev);
  double want = update_us(e, DC_OPTIMIZER_ADAGRAD, &dev) -
                update_us(e, DC_OPTIMIZER_SGD, &dev);
  printf("# adagrad - sgd update: planner %.3f us, recipe %.3f us\n", got,
         want);
  assert_true(want > 0);
  assert_true(got > want * (1 - 1e-9) && got < want * (1 + 1e-9));
  /* the graph's one update kernel: the same recipe */
  tp_cfg c;
  dp_point(&c, DC_OPTIMIZER_ADAGRAD);
  const dc_graph *g = plan_graph(&c, dp_plan(&c));
  bool seen = false;
  for (int32_t j = 0; j < g->n_ops; j++) {
    if (strcmp(g->ops[j].name, "fused::optimizer_step") != 0) continue;
    assert_int_equal(g->ops[j].n_launches, 1);
    const dc_kernel *k = &g->ops[j].launches[0].k;
    assert_true(k->u.ew.flops_per_elem == flops);
    assert_true(k->u.ew.bytes_per_elem == bytes);
    seen = true;
  }
  assert_true(seen);
}

static double coll_us(dc_kernel_kind kind, double bytes, int32_t ranks,
                      const dc_device *dev) {
  dc_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = kind;
  k.scale = 1;
  k.u.coll.bytes = (int64_t)bytes;
  k.u.coll.ranks = ranks;
  k.u.coll.hosts = 1;
  return dc_kernel_time(&k, dev, NULL);
}

/* The planner weighs the exchange in the bytes the graph sends: the
 * fused style's pooled all-to-all carries fp16 under fp16 training
 * (dc_pooled_wire_bytes), so a table-wise plan's exchange is priced at 2
 * bytes an element — the forward at the largest send buffer, the
 * backward at B·Σdims — and in fp32 at 4. */
static void test_exchange_in_wire_bytes(void **state) {
  (void)state;
  dc_device dev = dev_of("A100-SXM4-80GB");
  for (int half = 0; half < 2; half++) {
    tp_cfg c;
    dp_point(&c, DC_OPTIMIZER_SGD);
    c.p.n_tables = 4;
    for (int t = 0; t < 4; t++) c.tables[t] = c.tables[0];
    c.p.gpus = c.p.gpus_per_host = 4;
    c.p.precision = half ? DC_PRECISION_FP16 : DC_PRECISION_FP32;
    int wb = half ? 2 : 4;
    assert_int_equal(dc_pooled_wire_bytes(&c.p), wb);
    dc_diags d = {0};
    dc_shard_plan *s = dc_shard_plan_new(&c.p, &arena);
    for (int32_t t = 0; t < 4; t++)
      assert_true(dc_shard_plan_set(s, &c.p, t, DC_SHARDING_TABLE_WISE, 1,
                                    &t, &arena, &d));
    dc_diags_free(&d);
    dc_plan_opts o = {.dev = &dev};
    dc_plan_cost cost;
    dc_plan_cost_of(&c.p, s, &o, &arena, &cost);
    double Bg = 4096, B = Bg / 4;
    double want = coll_us(DC_KERNEL_ALL_TO_ALL, Bg * 64 * wb, 4, &dev) +
                  coll_us(DC_KERNEL_ALL_TO_ALL, B * 4 * 64 * wb, 4, &dev);
    printf("# fused %s exchange: planner %.3f us, wire %.3f us\n",
           half ? "fp16" : "fp32", cost.comm_us, want);
    assert_true(cost.comm_us > want * (1 - 1e-9) &&
                cost.comm_us < want * (1 + 1e-9));
  }
}

/* A replica's gradient in the fused style joins the dense gradients' one
 * all-reduce, in the model's precision (HugeCTR's grouped all-reduce):
 * the graph has one all-reduce of (dense parameters + replica) × 2 bytes
 * under fp16, and the planner prices the replica's reduction at what it
 * adds to that all-reduce, with no latency of its own. */
static void test_dp_grouped_allreduce(void **state) {
  (void)state;
  dc_device dev = dev_of("A100-SXM4-80GB");
  tp_cfg c;
  dp_point(&c, DC_OPTIMIZER_SGD);
  c.p.precision = DC_PRECISION_FP16;
  assert_true(dc_dp_grad_grouped(&c.p));
  assert_int_equal(dc_dp_grad_bytes(&c.p), 2);
  const dc_graph *g = plan_graph(&c, dp_plan(&c));
  int n = 0;
  int64_t bytes = 0;
  for (int32_t j = g->rank_first[0]; j < g->rank_first[1]; j++)
    for (int32_t i = 0; i < g->ops[j].n_launches; i++)
      if (g->ops[j].launches[i].k.kind == DC_KERNEL_ALL_REDUCE) {
        n++;
        bytes = g->ops[j].launches[i].k.u.coll.bytes;
      }
  int64_t replica = 4000000LL * 64;
  assert_int_equal(n, 1);
  assert_int_equal(bytes, (dc_point_dense_params(&c.p) + replica) * 2);
  /* the planner: the replica's share of that all-reduce, its fill and
   * its update, on top of its lookups' backward */
  double dense = (double)dc_point_dense_params(&c.p) * 2;
  double share = coll_us(DC_KERNEL_ALL_REDUCE, dense + replica * 2.0, 2,
                         &dev) -
                 coll_us(DC_KERNEL_ALL_REDUCE, dense, 2, &dev);
  double alone = coll_us(DC_KERNEL_ALL_REDUCE, replica * 2.0, 2, &dev);
  assert_true(share > 0 && share < alone);
  tp_cfg f;
  dp_point(&f, DC_OPTIMIZER_SGD);
  f.p.precision = DC_PRECISION_FP16;
  f.p.framework = DC_FRAMEWORK_PYTORCH;
  assert_false(dc_dp_grad_grouped(&f.p));
  assert_int_equal(dc_dp_grad_bytes(&f.p), 4);
  /* the same replica in the stock style (an fp32 all-reduce of its own)
   * costs the planner that all-reduce instead of the share */
  dc_plan_opts o = {.dev = &dev};
  dc_plan_cost cf, cp;
  dc_plan_cost_of(&c.p, dp_plan(&c), &o, &arena, &cf);
  dc_plan_cost_of(&f.p, dp_plan(&f), &o, &arena, &cp);
  double got = cp.max_bwd_us - cf.max_bwd_us;
  double want = coll_us(DC_KERNEL_ALL_REDUCE, replica * 4.0, 2, &dev) - share;
  printf("# replica reduction: alone fp32 - grouped share: planner %.3f us,"
         " collectives %.3f us\n", got, want);
  assert_true(got > want * (1 - 1e-9) && got < want * (1 + 1e-9));
}

/* The fused style reduces row-wise partial sums in the model's precision
 * too (dc_pooled_reduce_bytes): a row-wise table on 4 GPUs under fp16
 * has a reduce-scatter of B·D·2 bytes in the graph, and the planner
 * prices its reduce-scatter and all-gather at those bytes. */
static void test_rw_reduce_in_model_precision(void **state) {
  (void)state;
  dc_device dev = dev_of("A100-SXM4-80GB");
  tp_cfg c;
  dp_point(&c, DC_OPTIMIZER_SGD);
  c.p.gpus = c.p.gpus_per_host = 4;
  c.p.precision = DC_PRECISION_FP16;
  assert_int_equal(dc_pooled_reduce_bytes(&c.p), 2);
  dc_diags d = {0};
  dc_shard_plan *s = dc_shard_plan_new(&c.p, &arena);
  assert_true(dc_shard_plan_set(s, &c.p, 0, DC_SHARDING_ROW_WISE, 0, NULL,
                                &arena, &d));
  dc_diags_free(&d);
  const dc_graph *g = plan_graph(&c, s);
  double Bg = 4096;
  int n = 0;
  for (int32_t j = g->rank_first[0]; j < g->rank_first[1]; j++)
    for (int32_t i = 0; i < g->ops[j].n_launches; i++) {
      const dc_kernel *k = &g->ops[j].launches[i].k;
      if (k->kind != DC_KERNEL_REDUCE_SCATTER &&
          k->kind != DC_KERNEL_ALL_GATHER)
        continue;
      assert_int_equal(k->u.coll.bytes, (int64_t)Bg * 64 * 2);
      n++;
    }
  assert_int_equal(n, 2);
  dc_plan_opts o = {.dev = &dev};
  dc_plan_cost cost;
  dc_plan_cost_of(&c.p, s, &o, &arena, &cost);
  double want = coll_us(DC_KERNEL_REDUCE_SCATTER, Bg * 64 * 2, 4, &dev) +
                coll_us(DC_KERNEL_ALL_GATHER, Bg * 64 * 2, 4, &dev);
  printf("# fused fp16 row-wise: planner %.3f us, model precision %.3f us\n",
         cost.comm_us, want);
  assert_true(cost.comm_us > want * (1 - 1e-9) &&
              cost.comm_us < want * (1 + 1e-9));
  c.p.framework = DC_FRAMEWORK_PYTORCH;
  assert_int_equal(dc_pooled_reduce_bytes(&c.p), 4);
}

/* Replication as production planners decide it: in the plan the planner
 * returns, no table that is not replicated would lower the planner's
 * cost by being replicated. DLRM-DCNv2's 26 tables (3 to 40M rows,
 * pooling 1 to 100, dim 128) on 64 GPUs in 8 hosts, fused fp16: its tiny
 * tables, placed table-wise on idle ranks by the greedy pass, cost less
 * replicated once the plan is complete. */
static void test_replicate_when_cheaper(void **state) {
  (void)state;
  static const int64_t rows[26] = {
      40000000, 39060, 17295, 7424,    20265,    3,        7122,
      1543,     63,    40000000, 3067956, 405282, 10,       2209,
      11938,    155,   4,        976,     14,     40000000, 40000000,
      40000000, 590152, 12973,   108,     36};
  static const double pool[26] = {3, 2, 1, 2, 6,  1,   1,  1,  1,
                                  7, 3, 8, 1, 6,  9,   5,  1,  1,
                                  1, 12, 100, 27, 10, 3, 1, 1};
  tp_cfg c; /* DLRM_MLPerf's MLPs, DLRM-DCNv2's tables */
  assert_true(tp_paper(&c, "DLRM_MLPerf", 135168));
  for (int t = 0; t < 26; t++) {
    c.tables[t].rows = rows[t];
    c.tables[t].pooling = pool[t];
  }
  c.p.gpu = "H100-SXM5-80GB";
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c.p.framework = DC_FRAMEWORK_FUSED;
  c.p.precision = DC_PRECISION_FP16;
  c.p.optimizer = c.p.sparse_optimizer = DC_OPTIMIZER_ADAGRAD;
  c.p.gpus = 64;
  c.p.hosts = 8;
  c.p.gpus_per_host = 8;
  dc_device dev = dev_of(c.p.gpu);
  dc_plan_opts o = {.dev = &dev, .models = dc_kmodels_for(&dev)};
  dc_diags d = {0};
  dc_plan_cost cost;
  dc_shard_plan *a = dc_plan_auto(&c.p, &o, &arena, &d, &cost);
  assert_non_null(a);
  int n_dp = 0;
  for (int32_t t = 0; t < c.p.n_tables; t++) {
    if (a->tables[t].type == DC_SHARDING_DATA_PARALLEL) {
      n_dp++;
      continue;
    }
    dc_shard_plan *b = dc_shard_plan_copy(a, &arena);
    assert_true(dc_shard_plan_set(b, &c.p, t, DC_SHARDING_DATA_PARALLEL, 0,
                                  NULL, &arena, &d));
    dc_plan_cost alt;
    dc_plan_cost_of(&c.p, b, &o, &arena, &alt);
    if (alt.fits && alt.total_us < cost.total_us * (1 - 1e-9))
      fail_msg("table %d: replicated %.3f us < planned %.3f us", t,
               alt.total_us, cost.total_us);
  }
  printf("# 64 GPUs: %d of 26 tables replicated, cost %.1f us\n", n_dp,
         cost.total_us);
  assert_true(n_dp > 0);
  dc_diags_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_beats_greedy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_capacity, setup, teardown),
      cmocka_unit_test_setup_teardown(test_constraints, setup, teardown),
      cmocka_unit_test_setup_teardown(test_single, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dp_update_is_the_graphs, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_exchange_in_wire_bytes, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_dp_grouped_allreduce, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_rw_reduce_in_model_precision,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_replicate_when_cheaper, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
