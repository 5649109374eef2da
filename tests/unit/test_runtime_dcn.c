/*
 * test_runtime_dcn.c — the modern-DLRM keys reach the graph
 * and the answer: the DCNv2 cross network's GEMMs, parameters and memory
 * (checked by hand from the formulas in graphgen/crossnet.c), and each of
 * training.embedding_precision, comm_precision and sparse_optimizer
 * changes what it names. Every test compares a point with the same point
 * under another value of one key, so it fails if the key is ignored.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runtime/plan/plan.h"
#include "runtime/runtime.h"
#include "tests/golden/graph/points.h"
#include "tests/unit/graph_fixture.h"
#include "tests/unit/eval_fixture.h"

/* The model of tests/fixtures/traces/dcn_lowrank.yaml: bottom 13-64-16,
 * 4 tables of dim 16 (N = 80), 2 cross layers of rank 8, top 64-32-1. */
static void dcn(tp_cfg *c, int64_t rank) {
  static const int64_t bot[] = {13, 64, 16};
  static const int64_t top[] = {64, 32, 1};
  tp_init(c, bot, 3, top, 3, 4, 1000, 16, 2, 32);
  c->p.interaction = DC_INTERACTION_DCN;
  c->p.dcn_layers = 2;
  c->p.dcn_low_rank = rank;
  c->p.loss = DC_LOSS_BCE;
}

static int count_gemms(const dc_graph *g, int64_t m, int64_t n, int64_t k) {
  int found = 0;
  for (int32_t j = 0; j < g->n_ops; j++)
    for (int32_t i = 0; i < g->ops[j].n_launches; i++) {
      const dc_kernel *x = &g->ops[j].launches[i].k;
      if (x->kind == DC_KERNEL_GEMM && x->u.gemm.m == m &&
          x->u.gemm.n == n && x->u.gemm.k == k)
        found++;
    }
  return found;
}

static int count_kind(const dc_graph *g, dc_kernel_kind kind) {
  int found = 0;
  for (int32_t j = 0; j < g->n_ops; j++)
    for (int32_t i = 0; i < g->ops[j].n_launches; i++)
      found += g->ops[j].launches[i].k.kind == kind;
  return found;
}

/* Per layer, forward x·Vᵀ (32×8×80) and ·Wᵀ (32×80×8); backward, per
 * linear, grad input and grad weight: W (32×8×80, 80×8×32), V (32×80×8,
 * 8×80×32). The top MLP reads the cross width 80. */
static void test_lowrank_gemms(void **state) {
  (void)state;
  tp_cfg c;
  dcn(&c, 8);
  const dc_graph *g = build(&c);
  assert_int_equal(count_gemms(g, 32, 8, 80), 4);  /* fwd V, bwd W input */
  assert_int_equal(count_gemms(g, 32, 80, 8), 4);  /* fwd W, bwd V input */
  assert_int_equal(count_gemms(g, 80, 8, 32), 2);  /* grad W [N, R] */
  assert_int_equal(count_gemms(g, 8, 80, 32), 2);  /* grad V [R, N] */
  assert_int_equal(count_gemms(g, 32, 64, 80), 1); /* top MLP's first */
  assert_int_equal(count_kind(g, DC_KERNEL_GEMM), 26);
  /* parameters: 2 × (80·8 + 8·80 + 80), and the MLPs */
  int64_t mlps = (13 * 64 + 64) + (64 * 16 + 16) + (80 * 64 + 64) +
                 (64 * 32 + 32) + (32 * 1 + 1);
  assert_int_equal(dc_point_cross_params(&c.p), 2 * (640 + 640 + 80));
  assert_int_equal(dc_point_dense_params(&c.p), mlps + 2720);
  assert_int_equal(dc_point_top_in(&c.p), 80);
}

/* The fused style's cross layers price HugeCTR's element-wise passes
 * beside the GEMMs: per layer one forward pass (bias, ⊙ x0, + x_l) over
 * the [32, 80] output, and in the backward the ⊙ x0 pass (with the bias
 * gradient, a reduce) and the residual's matrix add. */
static void test_fused_cross_elementwise(void **state) {
  (void)state;
  tp_cfg c;
  dcn(&c, 8);
  c.p.framework = DC_FRAMEWORK_FUSED;
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c.p.gpu = "A100-SXM4-80GB";
  const dc_graph *g = build(&c);
  int fwd = 0, mul = 0, add = 0;
  for (int32_t j = 0; j < g->n_ops; j++) {
    bool f = strcmp(g->ops[j].name, "fused::cross_layer") == 0;
    bool bw = strcmp(g->ops[j].name, "fused::cross_layer_backward") == 0;
    for (int32_t i = 0; i < g->ops[j].n_launches; i++) {
      const dc_kernel *x = &g->ops[j].launches[i].k;
      if ((!f && !bw) ||
          (x->kind != DC_KERNEL_ELEMENTWISE && x->kind != DC_KERNEL_REDUCE))
        continue;
      assert_int_equal(x->u.ew.elements, 32 * 80);
      fwd += f;
      mul += bw && x->kind == DC_KERNEL_REDUCE;
      add += bw && x->kind == DC_KERNEL_ELEMENTWISE;
    }
  }
  assert_int_equal(fwd, 2);
  assert_int_equal(mul, 2);
  assert_int_equal(add, 2);
}

static void test_fullrank_gemms(void **state) {
  (void)state;
  tp_cfg c;
  dcn(&c, 0);
  const dc_graph *g = build(&c);
  assert_int_equal(count_gemms(g, 32, 80, 80), 4); /* fwd + grad input */
  assert_int_equal(count_gemms(g, 80, 80, 32), 2); /* grad kernel */
  assert_int_equal(count_kind(g, DC_KERNEL_GEMM), 20);
  assert_int_equal(dc_point_cross_params(&c.p), 2 * (80 * 80 + 80));
}

typedef struct outcome {
  double e2e_us, emb_us, comm_us;
  int64_t comm_bytes, params_bytes, optimizer_bytes;
} outcome;

static outcome evaluate(const dc_point *p) {
  dc_eval_result r;
  dc_metrics m;
  evaluate_point(p, &r, &m);
  /* GiB are bytes / 2^30: exact in a double, so exact back */
  outcome o = {r.e2e_us,
               m.v[DC_METRIC_EMB_MS] * 1000,
               m.v[DC_METRIC_COMM_MS] * 1000,
               llround(m.v[DC_METRIC_COMM_BYTES]),
               llround(m.v[DC_METRIC_PARAMS_GIB] * 1073741824.0),
               llround(m.v[DC_METRIC_OPTIMIZER_GIB] * 1073741824.0)};
  return o;
}

/* MLPerf-like tables on 8 H100s, table-wise, batched lookups. */
static void sharded(tp_cfg *c) {
  static const int64_t bot[] = {13, 512, 256, 128};
  static const int64_t top[] = {1024, 512, 256, 1};
  tp_init(c, bot, 4, top, 4, 16, 4000000, 128, 10, 65536);
  c->p.interaction = DC_INTERACTION_DCN;
  c->p.dcn_layers = 3;
  c->p.dcn_low_rank = 512;
  c->p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c->p.gpu = "H100-SXM5-80GB";
  c->p.gpus = c->p.gpus_per_host = 8;
  c->p.sharding = DC_SHARDING_TABLE_WISE;
  for (int t = 0; t < 16; t++) c->tables[t].sharding = DC_SHARDING_TABLE_WISE;
}

/* fp16 tables: half the table bytes, and the lookups read half. */
static void test_embedding_precision(void **state) {
  (void)state;
  tp_cfg c;
  sharded(&c);
  outcome a = evaluate(&c.p);
  c.p.embedding_precision = DC_STORAGE_FP16;
  outcome b = evaluate(&c.p);
  c.p.embedding_precision = DC_STORAGE_INT8;
  outcome q = evaluate(&c.p);
  assert_true(b.params_bytes < a.params_bytes);
  assert_true(q.params_bytes < b.params_bytes);
  assert_true(b.emb_us < a.emb_us);
  assert_true(q.emb_us <= b.emb_us);
  assert_true(b.e2e_us < a.e2e_us);
}

/* bf16 / fp8 payloads: half / a quarter of the all-to-all's bytes. */
static void test_comm_precision(void **state) {
  (void)state;
  tp_cfg c;
  sharded(&c);
  outcome a = evaluate(&c.p);
  c.p.comm_precision = DC_STORAGE_BF16;
  outcome b = evaluate(&c.p);
  c.p.comm_precision = DC_STORAGE_FP8;
  outcome f = evaluate(&c.p);
  assert_true(b.comm_bytes < a.comm_bytes);
  assert_true(f.comm_bytes < b.comm_bytes);
  assert_true(b.comm_us < a.comm_us);
  assert_true(f.comm_us < b.comm_us);
  /* the table-wise all-to-all's payload halves exactly (fwd + bwd); the
   * DDP all-reduce stays */
  assert_true(a.comm_bytes - b.comm_bytes > 0);
  assert_true(a.comm_bytes - b.comm_bytes == 2 * (b.comm_bytes - f.comm_bytes));
}

/* int8 rows carry FBGEMM's 4-byte scale and bias, on one GPU (the graph
 * walk) as on eight (the per-rank formula the planner uses). */
static void test_int8_rows(void **state) {
  (void)state;
  tp_cfg c;
  dcn(&c, 8);
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c.p.embedding_precision = DC_STORAGE_INT8;
  outcome one = evaluate(&c.p);
  int64_t dense = dc_point_dense_params(&c.p) * 4;
  assert_int_equal(one.params_bytes - dense, 4 * 1000 * (16 + 4));
  sharded(&c);
  c.p.embedding_precision = DC_STORAGE_INT8;
  outcome eight = evaluate(&c.p);
  /* table-wise, 16 tables on 8 ranks: the fullest rank holds 2 */
  dense = dc_point_dense_params(&c.p) * 4;
  assert_int_equal(eight.params_bytes - dense, 2 * 4000000LL * (128 + 4));
}

/* The tables' optimizer apart from the dense one: Adagrad's state on the
 * tables (memory) and in the fused backward (time), SGD on the MLPs. */
static void test_sparse_optimizer(void **state) {
  (void)state;
  tp_cfg c;
  sharded(&c);
  outcome a = evaluate(&c.p); /* sgd everywhere */
  c.p.sparse_optimizer = DC_OPTIMIZER_ADAGRAD;
  outcome b = evaluate(&c.p);
  assert_true(b.optimizer_bytes > a.optimizer_bytes);
  assert_true(b.emb_us > a.emb_us);
  /* one GPU, per_table: a second optimizer step over the tables */
  tp_cfg s;
  dcn(&s, 8);
  s.p.sparse_optimizer = DC_OPTIMIZER_ADAGRAD;
  const dc_graph *g = build(&s);
  int sgd = 0, ada = 0;
  for (int32_t j = 0; j < g->n_ops; j++) {
    sgd += !strcmp(g->ops[j].name, "Optimizer.step#SGD.step");
    ada += !strcmp(g->ops[j].name, "Optimizer.step#Adagrad.step");
  }
  assert_int_equal(sgd, 1);
  assert_int_equal(ada, 1);
}

/* Memory counts the cross net: a DCN point holds more dense parameters
 * and activations than the cat interaction it starts from. */
static void test_dcn_memory(void **state) {
  (void)state;
  tp_cfg c;
  sharded(&c);
  outcome a = evaluate(&c.p);
  c.p.interaction = DC_INTERACTION_CAT;
  outcome b = evaluate(&c.p);
  assert_true(a.params_bytes - b.params_bytes ==
              4 * 3 * (2 * (128 * 17) * 512 + 128 * 17));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_lowrank_gemms, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fullrank_gemms, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fused_cross_elementwise, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_embedding_precision, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_comm_precision, setup, teardown),
      cmocka_unit_test_setup_teardown(test_int8_rows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sparse_optimizer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dcn_memory, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
