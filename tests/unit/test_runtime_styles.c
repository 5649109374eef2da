/*
 * test_runtime_styles.c — system.framework changes how the iteration is
 * run (spec/frameworks.md), each test comparing a point with the same
 * point in another style, so it fails if the key is ignored:
 *   fused: vendor kernels (one interaction kernel each way, ReLU and bias
 *   in GEMM epilogues, no host sync) replayed from a CUDA graph, whose
 *   host cost is one launch; the interaction kernel never beats the
 *   GPU's peaks;
 *   torchrec: the pipeline's annotated stages, the KJT all-to-alls, the
 *   FBGEMM lookup named by its optimizer and fused with it in the
 *   backward; the pipeline hides the input distribution.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kernels.h"
#include "runtime/plan/plan.h"
#include "runtime/runtime.h"
#include "tests/golden/graph/points.h"
#include "tests/unit/graph_fixture.h"
#include "tests/unit/eval_fixture.h"

/* bottom 13-512-256-64, 8 tables of dim 64, top 512-256-1, A100 fp16 */
static void model(tp_cfg *c, dc_framework f) {
  static const int64_t bot[] = {13, 512, 256, 64};
  static const int64_t top[] = {512, 256, 1};
  tp_init(c, bot, 4, top, 3, 8, 100000, 64, 20, 4096);
  c->p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c->p.loss = DC_LOSS_BCE;
  c->p.precision = DC_PRECISION_FP16;
  c->p.gpu = "A100-SXM4-80GB";
  c->p.framework = f;
}

static void multi(tp_cfg *c, dc_framework f, bool pipeline) {
  model(c, f);
  c->p.gpus = c->p.gpus_per_host = 4;
  c->p.sparse_optimizer = DC_OPTIMIZER_ROWWISE_ADAGRAD;
  c->p.sharding = DC_SHARDING_TABLE_WISE;
  c->p.pipeline = pipeline;
  for (int t = 0; t < 8; t++) c->tables[t].sharding = DC_SHARDING_TABLE_WISE;
}

static int count_kind(const dc_graph *g, int32_t rank, dc_kernel_kind k) {
  int n = 0;
  for (int32_t j = g->rank_first[rank]; j < g->rank_first[rank + 1]; j++)
    for (int32_t i = 0; i < g->ops[j].n_launches; i++)
      n += g->ops[j].launches[i].k.kind == k;
  return n;
}

static int count_named(const dc_graph *g, int32_t rank, const char *name) {
  int n = 0;
  for (int32_t j = g->rank_first[rank]; j < g->rank_first[rank + 1]; j++)
    n += strcmp(g->ops[j].name, name) == 0;
  return n;
}

static void test_fused_graph(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, DC_FRAMEWORK_FUSED);
  dc_eval_result r;
  dc_metrics m;
  const dc_graph *g = evaluate_point(&c.p, &r, &m);
  assert_int_equal(count_kind(g, 0, DC_KERNEL_INTERACTION_FWD), 1);
  assert_int_equal(count_kind(g, 0, DC_KERNEL_INTERACTION_BWD), 1);
  assert_int_equal(count_kind(g, 0, DC_KERNEL_TRIL_FWD), 0);
  /* 6 layers: 6 forward GEMMs, 2 per backward but the first layer's
   * (its input, the dense features, needs no gradient) */
  assert_int_equal(count_kind(g, 0, DC_KERNEL_GEMM), 6 + 2 * 6 - 1);
  assert_int_equal(count_named(g, 0, "aten::relu"), 0);
  for (int32_t j = 0; j < g->n_ops; j++) {
    assert_false(g->ops[j].host_sync);
    /* everything but the next batch's copies is in the CUDA graph */
    if (g->ops[j].parent < 0)
      assert_true(g->ops[j].captured == (g->ops[j].phase != DC_PHASE_INPUT));
  }

  /* The host: the copies' overheads and one graph launch, far below the
   * stock op-by-op dispatch of the same point; the GPU does less too. */
  tp_cfg s;
  model(&s, DC_FRAMEWORK_PYTORCH);
  dc_eval_result rs;
  evaluate_point(&s.p, &rs, &m);
  assert_true(r.ranks[0].cpu_us < 0.2 * rs.ranks[0].cpu_us);
  assert_true(r.ranks[0].kernel_sum_us < rs.ranks[0].kernel_sum_us);
  assert_true(r.e2e_us < rs.e2e_us);
}

/* The fused style's pooled all-to-all carries the model's half precision
 * with no codec kernels: 4 GPUs, table-wise, fp16: each all-to-all sends
 * half the bytes the same point sends in fp32, and no FBGEMM quantize op
 * is in the graph. */
static int64_t a2a_bytes(const dc_graph *g) {
  int64_t s = 0;
  for (int32_t j = g->rank_first[0]; j < g->rank_first[1]; j++)
    for (int32_t i = 0; i < g->ops[j].n_launches; i++)
      if (g->ops[j].launches[i].k.kind == DC_KERNEL_ALL_TO_ALL)
        s += g->ops[j].launches[i].k.u.coll.bytes;
  return s;
}

static void test_fused_half_payload(void **state) {
  (void)state;
  tp_cfg c;
  multi(&c, DC_FRAMEWORK_FUSED, false);
  dc_eval_result r;
  dc_metrics m;
  const dc_graph *g = evaluate_point(&c.p, &r, &m);
  int64_t half = a2a_bytes(g);
  assert_int_equal(count_kind(g, 0, DC_KERNEL_ALL_TO_ALL), 2);
  assert_int_equal(count_named(g, 0, "fbgemm::FloatToFP16Quantized"), 0);
  tp_cfg f;
  multi(&f, DC_FRAMEWORK_FUSED, false);
  f.p.precision = DC_PRECISION_FP32;
  g = evaluate_point(&f.p, &r, &m);
  assert_true(half > 0);
  assert_int_equal(2 * half, a2a_bytes(g));
}

/* Sharded, the fused style issues the dense all-reduce before the
 * embedding backward (HugeCTR's intra-iteration overlap): on rank 0 the
 * all-reduce's op comes first and its kernel starts before the embedding
 * backward's kernel ends. */
static void test_fused_allreduce_overlap(void **state) {
  (void)state;
  tp_cfg c;
  multi(&c, DC_FRAMEWORK_FUSED, false);
  dc_eval_result r;
  dc_metrics m;
  const dc_graph *g = evaluate_point(&c.p, &r, &m);
  int32_t ar = -1, lb = -1;
  for (int32_t j = g->rank_first[0]; j < g->rank_first[1]; j++) {
    if (ar < 0 && strcmp(g->ops[j].name, "nccl:all_reduce") == 0) ar = j;
    if (lb < 0 && strstr(g->ops[j].name, "LookupFunctionBackward")) lb = j;
  }
  assert_true(ar >= 0 && lb >= 0);
  assert_true(ar < lb);
  double ar_start = -1, lb_end = -1;
  for (size_t i = 0; i < r.n_kernels; i++) {
    if (r.kernels[i].rank != 0) continue;
    if (r.kernels[i].top == ar) ar_start = r.kernels[i].start_us;
    if (r.kernels[i].top == lb) lb_end = r.kernels[i].end_us;
  }
  assert_true(ar_start >= 0 && lb_end > ar_start);
}

/* One run of captured ops costs one cudaGraphLaunch: the fused graph's
 * host time is the later of the input copies' (the loader thread's) and
 * the profile's default T4 (the training thread's). */
static void test_graph_launch(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, DC_FRAMEWORK_FUSED);
  dc_diags d = {0};
  const dc_graph *g = dc_plan_build_graph(&c.p, DC_GRAPH_FULL, &arena, &d);
  assert_non_null(g);
  dc_profile prof;
  assert_true(dc_profile_load(c.p.overheads, &prof, &arena, &d));
  double cpu = 0;
  int n_in = 0;
  for (int32_t j = 0; j < g->n_ops; j++) {
    const dc_op *o = &g->ops[j];
    if (o->parent >= 0 || o->captured) continue;
    assert_true(o->loader); /* the data loader's thread issues them */
    dc_op_cost oc = dc_profile_op(&prof, o->name);
    cpu += oc.t1_us + oc.t2_us + oc.t3_us;
    for (int32_t i = 0; i < o->n_launches; i++)
      cpu += dc_profile_t4(&prof, o->launches[i].runtime);
    n_in++;
  }
  assert_int_equal(n_in, 3); /* indices, offsets, dense */
  /* the loader's copies and the training thread's one graph launch run
   * on two host clocks: the host time is the later */
  double launch = dc_profile_t4(&prof, "cudaGraphLaunch");
  if (launch > cpu) cpu = launch;
  dc_eval_result r;
  dc_metrics m;
  evaluate_point(&c.p, &r, &m);
  assert_true(fabs(r.ranks[0].cpu_us - cpu) < 1e-9 * cpu);
  dc_diags_free(&d);
}

/* Physics: the fused interaction moves its bytes at most at the
 * datasheet bandwidth and computes at most at the datasheet peak. */
static void test_interaction_physics(void **state) {
  (void)state;
  dc_diags d = {0};
  dc_device dev;
  assert_true(dc_device_lookup("A100-SXM4-80GB", &dev, &arena, &d));
  dc_kernel k;
  dc_kernel_params_init(&k, DC_KERNEL_INTERACTION_FWD, &arena);
  k.u.mat.batch = 6912;
  k.u.mat.m = 27;
  k.u.mat.n = 128;
  k.u.mat.dtype = DC_DTYPE_FP16;
  double B = 6912, F = 27, D = 128, e = F * (F - 1) / 2;
  double bytes = 2 * B * (F * D + D + e), flops = 2 * B * F * F * D;
  double t = dc_kernel_time(&k, &dev, NULL);
  assert_true(t >= bytes / (dev.dram_gbps * 1e3));
  assert_true(t >= flops / (dev.fp16_tflops * 1e6));
  k.kind = DC_KERNEL_INTERACTION_BWD;
  double tb = dc_kernel_time(&k, &dev, NULL);
  assert_true(tb >= 2 * B * (D + e + 2 * F * D) / (dev.dram_gbps * 1e3));
  k.u.mat.dtype = DC_DTYPE_FP32; /* SIMT: slower than tensor cores */
  assert_true(dc_kernel_time(&k, &dev, NULL) > tb);
  assert_true(isfinite(t) && isfinite(tb));
  dc_diags_free(&d);
}

static void test_torchrec_graph(void **state) {
  (void)state;
  tp_cfg c;
  multi(&c, DC_FRAMEWORK_TORCHREC, true);
  dc_eval_result r;
  dc_metrics m;
  const dc_graph *g = evaluate_point(&c.p, &r, &m);
  static const char *const stages[] = {
      "## zero_grad ##",        "## wait_for_batch ##",
      "## start_sparse_data_dist ##", "## copy_batch_to_gpu ##",
      "## forward ##",          "## wait_sparse_data_dist ##",
      "## backward ##",         "## optimizer ##"};
  int32_t at = g->rank_first[0];
  for (size_t s = 0; s < DC_COUNTOF(stages); s++) {
    while (at < g->rank_first[1] &&
           !(g->ops[at].annotation && !strcmp(g->ops[at].name, stages[s])))
      at++;
    assert_true(at < g->rank_first[1]); /* present, and in this order */
  }
  const char *tbe = "fbgemm::split_embedding_codegen_lookup_rowwise_"
                    "adagrad_function_pt2";
  assert_int_equal(count_named(g, 0, tbe), 1);
  assert_int_equal(count_named(g, 0, "aten::binary_cross_entropy"), 0);
  /* the KJT: splits, lengths, values; the pooled embeddings each way */
  assert_int_equal(count_kind(g, 0, DC_KERNEL_ALL_TO_ALL), 3 + 2);
  for (int32_t j = 0; j < g->n_ops; j++) {
    assert_false(g->ops[j].host_sync);
    for (int32_t i = 0; i < g->ops[j].n_launches; i++)
      if (g->ops[j].launches[i].k.kind == DC_KERNEL_EMBEDDING_BWD)
        assert_true(g->ops[j].launches[i].k.u.emb.fused_optimizer);
  }

  /* The stock graph of the same point exchanges no indices. */
  tp_cfg s;
  multi(&s, DC_FRAMEWORK_PYTORCH, false);
  dc_eval_result rs;
  const dc_graph *gs = evaluate_point(&s.p, &rs, &m);
  assert_int_equal(count_kind(gs, 0, DC_KERNEL_ALL_TO_ALL), 2);
}

/* The pipeline: this batch's indices were distributed during the last
 * iteration, so the lookups start without waiting for the all-to-all
 * (a large batch of long bags: 210 MB of indices per rank to exchange). */
static void big(tp_cfg *c, bool pipeline) {
  multi(c, DC_FRAMEWORK_TORCHREC, pipeline);
  c->p.batch_size = 65536;
  for (int t = 0; t < 8; t++) c->tables[t].pooling = 200;
}

static void test_torchrec_pipeline(void **state) {
  (void)state;
  tp_cfg c;
  big(&c, true);
  dc_eval_result on, off;
  dc_metrics m;
  const dc_graph *g = evaluate_point(&c.p, &on, &m);
  big(&c, false);
  const dc_graph *h = evaluate_point(&c.p, &off, &m);
  assert_true(on.e2e_us < off.e2e_us);
  const char *tbe = "fbgemm::split_embedding_codegen_lookup_rowwise_"
                    "adagrad_function_pt2";
  /* pipelined, the lookups read indices received in the last iteration
   * (resident); without it, this iteration's values all-to-all. The
   * offsets come from the lengths by a cumsum either way. */
  for (int pass = 0; pass < 2; pass++) {
    const dc_graph *x = pass ? h : g;
    int32_t n = 0;
    for (int32_t j = 0; j < x->rank_first[1]; j++) {
      if (strcmp(x->ops[j].name, tbe)) continue;
      n++;
      int32_t idx = x->ops[j].inputs[x->ops[j].n_inputs - 2];
      int32_t offs = x->ops[j].inputs[x->ops[j].n_inputs - 1];
      /* the received values, regrouped by feature in the forward */
      const dc_op *recat = &x->ops[x->tensors[idx].producer];
      assert_string_equal(recat->name, "fbgemm::permute_2D_sparse_data");
      int32_t prod = x->tensors[recat->inputs[1]].producer;
      if (pass == 0) assert_int_equal(prod, -1);
      else assert_string_equal(x->ops[prod].name, "c10d::alltoall_base_");
      assert_string_equal(x->ops[x->tensors[offs].producer].name,
                          "fbgemm::asynchronous_complete_cumsum");
    }
    assert_true(n > 0);
  }
  assert_int_equal(count_named(h, 0, "## wait_sparse_data_dist ##"), 0);
}

/* The verifier pairs collectives across ranks: the fused style's
 * interaction kernels, whose kinds are numbered after the collectives',
 * are no collective, and a sharded fused graph verifies. */
static void test_fused_multi_verifies(void **state) {
  (void)state;
  tp_cfg c;
  multi(&c, DC_FRAMEWORK_FUSED, false);
  const dc_graph *g = build(&c);
  assert_true(count_kind(g, 0, DC_KERNEL_INTERACTION_FWD) == 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_fused_graph, setup, teardown),
      cmocka_unit_test_setup_teardown(test_graph_launch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fused_half_payload, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_fused_allreduce_overlap, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_interaction_physics, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_torchrec_graph, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fused_multi_verifies, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_torchrec_pipeline, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
