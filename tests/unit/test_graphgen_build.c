/*
 * test_graphgen_build.c — the DLRM builder against spec/frameworks.md:
 * the top-level sequence of a small configuration written out by hand, the
 * op counts of the "quick check" for several (k, m, T), the batched
 * variant, autocast, legacy zero_grad, optimizers, losses, the cat
 * interaction and the kernel parameters the pricing needs. Every graph
 * built here is verified.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "graphgen/graphgen.h"
#include "tests/golden/graph/points.h"
#include "tests/unit/graph_fixture.h"

#define EVP "autograd::engine::evaluate_function: "

/* Short name: without the autograd prefix and "torch::autograd::". */
static const char *short_name(const char *n) {
  if (strncmp(n, EVP, strlen(EVP)) == 0) n += strlen(EVP);
  if (strncmp(n, "torch::autograd::", 17) == 0) n += 17;
  return n;
}

static int count_top(const dc_graph *g, int32_t rank, const char *name) {
  int n = 0;
  for (int32_t i = g->rank_first[rank]; i < g->rank_first[rank + 1];
       i = g->ops[i].end)
    if (strcmp(short_name(g->ops[i].name), name) == 0) n++;
  return n;
}

static int count_all(const dc_graph *g, const char *name) {
  int n = 0;
  for (int32_t i = 0; i < g->n_ops; i++)
    if (strcmp(short_name(g->ops[i].name), name) == 0) n++;
  return n;
}

static int first_top(const dc_graph *g, const char *name) {
  for (int32_t i = 0; i < g->n_ops; i = g->ops[i].end)
    if (strcmp(short_name(g->ops[i].name), name) == 0) return i;
  return -1;
}

/* The first kernel of kind `k` in op i's subtree. */
static const dc_kernel *kernel_in(const dc_graph *g, int32_t i,
                                  dc_kernel_kind k, int nth) {
  for (int32_t j = i; j < g->ops[i].end; j++)
    for (int32_t l = 0; l < g->ops[j].n_launches; l++)
      if (g->ops[j].launches[l].k.kind == k && nth-- == 0)
        return &g->ops[j].launches[l].k;
  return NULL;
}

static void small(tp_cfg *c) {
  static const int64_t bot[] = {4, 3};
  static const int64_t top[] = {5, 1};
  tp_init(c, bot, 2, top, 2, 2, 10, 3, 2, 8);
}

static void assert_shape(const dc_graph *g, int32_t t, int nd, int64_t a,
                         int64_t b) {
  assert_int_equal(g->tensors[t].ndim, nd);
  if (nd > 0) assert_int_equal(g->tensors[t].shape[0], a);
  if (nd > 1) assert_int_equal(g->tensors[t].shape[1], b);
}

/* k=1, m=2, T=2, D=3, B=8, L=2: F=3, NI=3, top input 3+3=6. */
static void test_small_sequence(void **state) {
  (void)state;
  static const char *const want[] = {
      "aten::to", "aten::to", "aten::to", "aten::to",
      "aten::linear", "aten::relu", "aten::embedding_bag",
      "aten::embedding_bag", "aten::cat", "aten::view", "aten::transpose",
      "aten::bmm", "aten::empty", "aten::to", "aten::lift_fresh",
      "aten::detach_", "aten::empty", "aten::to", "aten::lift_fresh",
      "aten::detach_", "aten::slice", "aten::index", "aten::cat",
      "aten::linear", "aten::relu", "aten::linear", "aten::sigmoid",
      "aten::to", "aten::broadcast_tensors", "aten::mse_loss",
      "aten::detach", "aten::to", "aten::zeros",
      "Optimizer.zero_grad#SGD.zero_grad", "aten::ones_like",
      "MseLossBackward0", "SigmoidBackward0", "AddmmBackward0",
      "AccumulateGrad", "TBackward0", "AccumulateGrad", "ReluBackward0",
      "AddmmBackward0", "AccumulateGrad", "TBackward0", "AccumulateGrad",
      "CatBackward0", "IndexBackward0", "SliceBackward0", "BmmBackward0",
      "TransposeBackward0", "ViewBackward0", "CatBackward0",
      "EmbeddingBagBackward0", "AccumulateGrad", "EmbeddingBagBackward0",
      "AccumulateGrad", "ReluBackward0", "AddmmBackward0", "AccumulateGrad",
      "TBackward0", "AccumulateGrad", "aten::zeros",
      "Optimizer.step#SGD.step"};
  tp_cfg c;
  small(&c);
  const dc_graph *g = build(&c);
  int32_t top[128];
  int32_t n = dc_graph_top_level(g, 0, top, 128);
  assert_int_equal(n, (int32_t)DC_COUNTOF(want));
  for (int32_t i = 0; i < n; i++) {
    const char *got = short_name(g->ops[top[i]].name);
    if (strcmp(got, want[i]) != 0)
      fail_msg("top-level op %d: got '%s', want '%s'", i, got, want[i]);
  }
  /* input shapes of the copies: indices [B·L] per table, offsets [T, B],
   * dense [B, n0]; each a pageable H2D copy of its bytes */
  assert_shape(g, g->ops[top[0]].inputs[0], 1, 16, 0);
  assert_shape(g, g->ops[top[2]].inputs[0], 2, 2, 8);
  assert_shape(g, g->ops[top[3]].inputs[0], 2, 8, 4);
  assert_true(g->tensors[g->ops[top[3]].inputs[0]].on_host);
  const dc_kernel *k = kernel_in(g, top[0], DC_KERNEL_MEMCPY_H2D, 0);
  assert_non_null(k);
  assert_int_equal(k->u.copy.bytes, 16 * 8);
  assert_false(k->u.copy.pinned);
  /* aten::linear [B, in] [out, in] [out] */
  const dc_op *lin = &g->ops[top[4]];
  assert_int_equal(lin->n_inputs, 3);
  assert_shape(g, lin->inputs[0], 2, 8, 4);
  assert_shape(g, lin->inputs[1], 2, 3, 4);
  assert_shape(g, lin->inputs[2], 1, 3, 0);
  /* embedding_bag [E, D] [B·L] [B] */
  const dc_op *eb = &g->ops[top[6]];
  assert_shape(g, eb->inputs[0], 2, 10, 3);
  assert_shape(g, eb->inputs[1], 1, 16, 0);
  assert_shape(g, eb->inputs[2], 1, 8, 0);
  assert_shape(g, eb->outputs[0], 2, 8, 3);
  /* cat [B, D] × F → [B, F·D] */
  const dc_op *cat = &g->ops[top[8]];
  assert_int_equal(cat->n_inputs, 3);
  assert_shape(g, cat->outputs[0], 2, 8, 9);
  /* bmm [B, F, D] [B, D, F] → [B, F, F] */
  const dc_op *bmm = &g->ops[top[11]];
  assert_int_equal(g->tensors[bmm->inputs[0]].shape[1], 3);
  assert_int_equal(g->tensors[bmm->outputs[0]].ndim, 3);
  /* index [B, F, F] [NI] [NI] → [B, NI]; second cat → [B, D + NI] */
  const dc_op *ix = &g->ops[top[21]];
  assert_int_equal(ix->n_inputs, 3);
  assert_shape(g, ix->inputs[1], 1, 3, 0);
  assert_shape(g, ix->outputs[0], 2, 8, 3);
  assert_shape(g, g->ops[top[22]].outputs[0], 2, 8, 6);
  /* loss: [B, 1] [B, 1]; .cpu() blocks the host */
  assert_shape(g, g->ops[top[29]].inputs[0], 2, 8, 1);
  assert_shape(g, g->ops[top[29]].inputs[1], 2, 8, 1);
  assert_true(g->ops[top[31]].host_sync);
  assert_false(g->ops[top[30]].host_sync);
  /* backward runs on the autograd thread, the rest on the main thread */
  assert_int_equal(g->ops[top[34]].thread, 0);
  assert_int_equal(g->ops[top[35]].thread, 1);
  assert_int_equal(g->ops[top[62]].thread, 0);
  assert_int_equal(g->ops[top[0]].phase, DC_PHASE_INPUT);
  assert_int_equal(g->ops[top[4]].phase, DC_PHASE_FORWARD);
  assert_int_equal(g->ops[top[29]].phase, DC_PHASE_LOSS);
  assert_int_equal(g->ops[top[40]].phase, DC_PHASE_BACKWARD);
  assert_int_equal(g->ops[top[63]].phase, DC_PHASE_OPTIMIZER);
  assert_int_equal(g->n_ranks, 1);
  assert_int_equal(g->n_streams, 1);
}

/* The stock iteration's op and kernel counts (spec/frameworks.md, style
 * pytorch) for k bottom layers, m top layers and T tables. */
static void check_counts(int k, int m, int T) {
  int64_t bot[8], top[8];
  bot[0] = 13;
  for (int i = 1; i <= k; i++) bot[i] = i == k ? 16 : 32 + i;
  for (int i = 0; i < m; i++) top[i] = i == m - 1 ? 1 : 64 - i;
  tp_cfg c;
  tp_init(&c, bot, k + 1, top, m, T, 1000, 16, 3, 64);
  const dc_graph *g = build(&c);
  assert_int_equal(count_top(g, 0, "aten::linear"), k + m);
  assert_int_equal(count_top(g, 0, "aten::relu"), k + m - 1);
  assert_int_equal(count_top(g, 0, "aten::sigmoid"), 1);
  assert_int_equal(count_top(g, 0, "aten::embedding_bag"), T);
  assert_int_equal(count_top(g, 0, "aten::cat"), 2);
  assert_int_equal(count_top(g, 0, "aten::bmm"), 1);
  assert_int_equal(count_top(g, 0, "aten::index"), 1);
  assert_int_equal(count_top(g, 0, "AddmmBackward0"), k + m);
  assert_int_equal(count_top(g, 0, "ReluBackward0"), k + m - 1);
  assert_int_equal(count_top(g, 0, "EmbeddingBagBackward0"), T);
  assert_int_equal(count_top(g, 0, "AccumulateGrad"), 2 * (k + m) + T);
  /* H2D: T index copies + offsets + dense + targets + 2 index lists
   * inside aten::index and 2 inside IndexBackward0 */
  int h2d = 0, gemm = 0;
  for (int32_t i = 0; i < g->n_ops; i++)
    for (int32_t l = 0; l < g->ops[i].n_launches; l++) {
      h2d += g->ops[i].launches[l].k.kind == DC_KERNEL_MEMCPY_H2D;
      gemm += g->ops[i].launches[l].k.kind == DC_KERNEL_GEMM;
    }
  assert_int_equal(h2d, T + 3 + 4);
  /* forward k+m addmm + 1 bmm; backward 2(k+m)−1 mm + 2 bmm */
  assert_int_equal(gemm, (k + m) + 1 + 2 * (k + m) - 1 + 2);
  /* SGD: one add_ per parameter */
  int32_t st = first_top(g, "Optimizer.step#SGD.step");
  int adds = 0;
  for (int32_t j = st + 1; j < g->ops[st].end; j++)
    adds += strcmp(g->ops[j].name, "aten::add_") == 0;
  assert_int_equal(adds, 2 * (k + m) + T);
}

static void test_counts(void **state) {
  (void)state;
  check_counts(1, 1, 1);
  check_counts(2, 4, 8);
  check_counts(3, 5, 26);
  check_counts(4, 2, 3);
}

static void test_gemm_params(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  const dc_graph *g = build(&c);
  /* addmm of the bottom layer: out[8, 3] = x[8, 4] · W[3, 4]^T */
  const dc_kernel *k = kernel_in(g, first_top(g, "aten::linear"),
                                 DC_KERNEL_GEMM, 0);
  assert_non_null(k);
  assert_int_equal(k->u.gemm.m, 8);
  assert_int_equal(k->u.gemm.n, 3);
  assert_int_equal(k->u.gemm.k, 4);
  assert_int_equal(k->u.gemm.batch, 1);
  assert_false(k->u.gemm.transa);
  assert_true(k->u.gemm.transb);
  assert_int_equal(k->u.gemm.dtype, DC_DTYPE_FP32);
  /* bmm: m=n=F=3, k=D=3, batch 8 */
  k = kernel_in(g, first_top(g, "aten::bmm"), DC_KERNEL_GEMM, 0);
  assert_int_equal(k->u.gemm.m, 3);
  assert_int_equal(k->u.gemm.k, 3);
  assert_int_equal(k->u.gemm.batch, 8);
  /* last AddmmBackward0 (bottom layer 0): weight grad only,
   * gW[3, 4] = g^T[3, 8] · x[8, 4] */
  int32_t last = -1;
  for (int32_t i = 0; i < g->n_ops; i = g->ops[i].end)
    if (strcmp(short_name(g->ops[i].name), "AddmmBackward0") == 0) last = i;
  assert_non_null(kernel_in(g, last, DC_KERNEL_GEMM, 0));
  assert_null(kernel_in(g, last, DC_KERNEL_GEMM, 1));
  k = kernel_in(g, last, DC_KERNEL_GEMM, 0);
  assert_int_equal(k->u.gemm.m, 3);
  assert_int_equal(k->u.gemm.n, 4);
  assert_int_equal(k->u.gemm.k, 8);
  assert_true(k->u.gemm.transa);
  /* bias gradient: a reduce over B·out elements */
  k = kernel_in(g, last, DC_KERNEL_REDUCE, 0);
  assert_int_equal(k->u.ew.elements, 24);
  /* first AddmmBackward0 (top layer 1: 5 → 1): input grad
   * gx[8, 5] = g[8, 1] · W[1, 5] */
  k = kernel_in(g, first_top(g, "AddmmBackward0"), DC_KERNEL_GEMM, 0);
  assert_int_equal(k->u.gemm.m, 8);
  assert_int_equal(k->u.gemm.n, 5);
  assert_int_equal(k->u.gemm.k, 1);
  /* relu: (1 flop, 2 accesses × 4 bytes) on 8·3 elements */
  k = kernel_in(g, first_top(g, "aten::relu"), DC_KERNEL_ELEMENTWISE, 0);
  assert_int_equal(k->u.ew.elements, 24);
  assert_true(k->u.ew.flops_per_elem == 1.0);
  assert_true(k->u.ew.bytes_per_elem == 8.0);
  /* embedding lookup: one table, B = 8, L = 2 */
  k = kernel_in(g, first_top(g, "aten::embedding_bag"),
                DC_KERNEL_EMBEDDING_FWD, 0);
  assert_int_equal(k->u.emb.batch, 8);
  assert_int_equal(k->u.emb.n_groups, 1);
  assert_int_equal(k->u.emb.groups[0].rows, 10);
  assert_int_equal(k->u.emb.groups[0].dim, 3);
  /* tril: batch 8, 3 × 3, no diagonal; the index lists go H2D first */
  int32_t ix = first_top(g, "aten::index");
  k = kernel_in(g, ix, DC_KERNEL_TRIL_FWD, 0);
  assert_int_equal(k->u.mat.batch, 8);
  assert_int_equal(k->u.mat.m, 3);
  assert_false(k->u.mat.diag);
  assert_int_equal(kernel_in(g, ix, DC_KERNEL_MEMCPY_H2D, 1)->u.copy.bytes,
                   3 * 8);
  assert_non_null(kernel_in(g, first_top(g, "IndexBackward0"),
                            DC_KERNEL_TRIL_BWD, 0));
  /* concat bytes: [8, 9] fp32 */
  k = kernel_in(g, first_top(g, "aten::cat"), DC_KERNEL_CONCAT, 0);
  assert_int_equal(k->u.copy.bytes, 8 * 9 * 4);
  /* the view and transpose are views: no kernel */
  assert_int_equal(g->ops[first_top(g, "aten::transpose")].n_launches, 0);
  /* loss .cpu(): 4 bytes back */
  int32_t cpu = first_top(g, "aten::detach") + 1;
  k = kernel_in(g, cpu, DC_KERNEL_MEMCPY_D2H, 0);
  assert_non_null(k);
  assert_int_equal(k->u.copy.bytes, 4);
  /* the sparse update touches B·L rows of D: 16 · 3 elements */
  int32_t st = first_top(g, "Optimizer.step#SGD.step");
  k = kernel_in(g, st, DC_KERNEL_ELEMENTWISE, 0);
  assert_int_equal(k->u.ew.elements, 48);
  assert_true(k->u.ew.bytes_per_elem == 12.0);
}

static void test_batched(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  const dc_graph *g = build(&c);
  assert_int_equal(count_top(g, 0, "aten::embedding_bag"), 0);
  assert_int_equal(count_top(g, 0, "LookupFunction"), 1);
  assert_int_equal(count_top(g, 0, "LookupFunctionBackward"), 1);
  assert_int_equal(count_top(g, 0, "EmbeddingBagBackward0"), 0);
  /* only the dense parameters accumulate gradients */
  assert_int_equal(count_top(g, 0, "AccumulateGrad"), 2 * 3);
  /* one copy of all indices [T·B·L], one of the offsets [T·B + 1] */
  int32_t top[8];
  dc_graph_top_level(g, 0, top, 8);
  assert_string_equal(g->ops[top[0]].name, "aten::to");
  assert_shape(g, g->ops[top[0]].inputs[0], 1, 32, 0);
  assert_shape(g, g->ops[top[1]].inputs[0], 1, 17, 0);
  assert_shape(g, g->ops[top[2]].inputs[0], 2, 8, 4);
  assert_string_equal(g->ops[top[3]].name, "aten::linear");
  /* identical tables form one group; backward fuses the optimizer */
  const dc_kernel *k = kernel_in(g, first_top(g, "LookupFunction"),
                                 DC_KERNEL_EMBEDDING_FWD, 0);
  assert_int_equal(k->u.emb.n_groups, 1);
  assert_int_equal(k->u.emb.groups[0].tables, 2);
  k = kernel_in(g, first_top(g, "LookupFunctionBackward"),
                DC_KERNEL_EMBEDDING_BWD, 0);
  assert_true(k->u.emb.fused_optimizer);
  /* no sparse gradient left: SGD takes the multi-tensor path over the 6
   * dense parameters (3·4+3 + 6·5+5 + 5+1 = 56 elements) */
  int32_t st = first_top(g, "Optimizer.step#SGD.step");
  assert_int_equal(g->ops[st].end - st, 2);
  assert_string_equal(g->ops[st + 1].name, "aten::_foreach_add_");
  k = kernel_in(g, st, DC_KERNEL_ELEMENTWISE, 0);
  assert_int_equal(k->u.ew.elements, 56);
  /* tables that differ get their own groups */
  c.tables[1].rows = 20;
  g = build(&c);
  k = kernel_in(g, first_top(g, "LookupFunction"), DC_KERNEL_EMBEDDING_FWD,
                0);
  assert_int_equal(k->u.emb.n_groups, 2);
  assert_int_equal(k->u.emb.groups[1].rows, 20);
}

static void test_autocast(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  c.p.precision = DC_PRECISION_FP16;
  const dc_graph *g = build(&c);
  /* GEMMs in fp16; the linear casts weight and bias (and a fp32 input) */
  const dc_kernel *k = kernel_in(g, first_top(g, "aten::linear"),
                                 DC_KERNEL_GEMM, 0);
  assert_int_equal(k->u.gemm.dtype, DC_DTYPE_FP16);
  int32_t lin = first_top(g, "aten::linear");
  int casts = 0;
  for (int32_t j = lin + 1; j < g->ops[lin].end; j++)
    casts += strcmp(g->ops[j].name, "aten::to") == 0;
  assert_int_equal(casts, 3);
  /* a cast of [3, 4] fp32 → fp16 moves 4 + 2 bytes per element */
  k = kernel_in(g, lin, DC_KERNEL_ELEMENTWISE, 1);
  assert_int_equal(k->u.ew.elements, 12);
  assert_true(k->u.ew.bytes_per_elem == 6.0);
  /* relu runs in half: 2 accesses × 2 bytes */
  k = kernel_in(g, first_top(g, "aten::relu"), DC_KERNEL_ELEMENTWISE, 0);
  assert_true(k->u.ew.bytes_per_elem == 4.0);
  /* per layer: AddmmBackward0, TBackward0, ToCopyBackward0,
   * AccumulateGrad, ToCopyBackward0, AccumulateGrad */
  int32_t a = first_top(g, "AddmmBackward0");
  static const char *const want[] = {"AddmmBackward0", "TBackward0",
                                     "ToCopyBackward0", "AccumulateGrad",
                                     "ToCopyBackward0", "AccumulateGrad",
                                     "ReluBackward0"};
  for (size_t i = 0, j = (size_t)a; i < DC_COUNTOF(want);
       i++, j = (size_t)g->ops[j].end)
    assert_string_equal(short_name(g->ops[j].name), want[i]);
  /* the loss runs in fp32 on a cast input; the tables stay fp32 */
  assert_true(count_top(g, 0, "ToCopyBackward0") > 6);
  int32_t eb = first_top(g, "aten::embedding_bag");
  assert_int_equal(g->tensors[g->ops[eb].outputs[0]].dtype, DC_DTYPE_FP32);
  int32_t loss = first_top(g, "aten::mse_loss");
  assert_int_equal(g->tensors[g->ops[loss].inputs[0]].dtype, DC_DTYPE_FP16);
  /* the counts of the quick check still hold */
  assert_int_equal(count_top(g, 0, "AddmmBackward0"), 3);
  assert_int_equal(count_top(g, 0, "AccumulateGrad"), 8);
  /* tf32: same graph as fp32, GEMMs on tensor cores */
  c.p.precision = DC_PRECISION_TF32;
  g = build(&c);
  k = kernel_in(g, first_top(g, "aten::linear"), DC_KERNEL_GEMM, 0);
  assert_int_equal(k->u.gemm.dtype, DC_DTYPE_TF32);
  assert_int_equal(count_top(g, 0, "ToCopyBackward0"), 0);
}

static void test_legacy_zero_grad(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  const dc_graph *g = build(&c);
  int32_t z = first_top(g, "Optimizer.zero_grad#SGD.zero_grad");
  assert_int_equal(g->ops[z].end - z, 1); /* set_to_none: nothing */
  int32_t acc = first_top(g, "AccumulateGrad");
  assert_int_equal(g->ops[acc].end - acc, 1); /* steals the gradient */

  c.p.zero_grad_legacy = true;
  g = build(&c);
  z = first_top(g, "Optimizer.zero_grad#SGD.zero_grad");
  int zero = 0, fills = 0;
  for (int32_t j = z + 1; j < g->ops[z].end; j++) {
    zero += strcmp(g->ops[j].name, "aten::zero_") == 0;
    fills += g->ops[j].n_launches;
  }
  assert_int_equal(zero, 8);  /* every parameter */
  assert_int_equal(fills, 6); /* dense ones launch a fill */
  acc = first_top(g, "AccumulateGrad");
  assert_int_equal(g->ops[acc].end - acc, 2);
  assert_string_equal(g->ops[acc + 1].name, "aten::add_");
  /* the top-level sequence is the same in both */
  assert_int_equal(dc_graph_top_level(g, 0, NULL, 0), 64);
  /* 1.13 loops even without sparse gradients */
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  g = build(&c);
  int32_t st = first_top(g, "Optimizer.step#SGD.step");
  assert_int_equal(g->ops[st].end - st, 1 + 6);
}

static void test_optimizers(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  c.p.optimizer = DC_OPTIMIZER_ADAGRAD;
  c.p.sparse_optimizer = DC_OPTIMIZER_ADAGRAD;
  const dc_graph *g = build(&c);
  int32_t st = first_top(g, "Optimizer.step#Adagrad.step");
  assert_true(st >= 0);
  assert_true(first_top(g, "Optimizer.zero_grad#Adagrad.zero_grad") >= 0);
  /* per parameter: a host step counter + 4 update kernels */
  int kern = 0;
  for (int32_t j = st; j < g->ops[st].end; j++) kern += g->ops[j].n_launches;
  assert_int_equal(kern, 8 * 4);
  assert_int_equal(g->ops[st].end - st - 1, 8 * 5);

  c.p.optimizer = DC_OPTIMIZER_ADAM;
  c.p.sparse_optimizer = DC_OPTIMIZER_ADAM;
  g = build(&c);
  st = first_top(g, "Optimizer.step#Adam.step");
  kern = 0;
  for (int32_t j = st; j < g->ops[st].end; j++) kern += g->ops[j].n_launches;
  assert_int_equal(kern, 8 * 7);

  /* row-wise Adagrad: a table's state steps touch rows, not rows × D */
  c.p.optimizer = DC_OPTIMIZER_ROWWISE_ADAGRAD;
  c.p.sparse_optimizer = DC_OPTIMIZER_ROWWISE_ADAGRAD;
  g = build(&c);
  st = first_top(g, "Optimizer.step#RowWiseSparseAdagrad.step");
  assert_true(st >= 0);
  const dc_kernel *k = kernel_in(g, st, DC_KERNEL_ELEMENTWISE, 0);
  assert_int_equal(k->u.ew.elements, 16);     /* state: B·L rows */
  k = kernel_in(g, st, DC_KERNEL_ELEMENTWISE, 3);
  assert_int_equal(k->u.ew.elements, 16 * 3); /* param: rows × D */

  /* batched + adam: the lookup's backward carries the optimizer; the
   * dense parameters take the multi-tensor path, 7 foreach ops */
  c.p.optimizer = DC_OPTIMIZER_ADAM;
  c.p.sparse_optimizer = DC_OPTIMIZER_ADAM;
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  g = build(&c);
  k = kernel_in(g, first_top(g, "LookupFunctionBackward"),
                DC_KERNEL_EMBEDDING_BWD, 0);
  assert_int_equal(k->u.emb.optimizer, DC_OPTIMIZER_ADAM);
  assert_int_equal(count_all(g, "aten::_foreach_addcdiv_"), 1);
  st = first_top(g, "Optimizer.step#Adam.step");
  assert_int_equal(g->ops[st].end - st - 1, 1 + 7);
}

static void test_bce_and_cat(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  c.p.loss = DC_LOSS_BCE;
  c.p.interaction = DC_INTERACTION_CAT;
  c.tables[1].dim = 5; /* cat allows different dims */
  const dc_graph *g = build(&c);
  assert_int_equal(count_top(g, 0, "aten::binary_cross_entropy"), 1);
  assert_int_equal(count_top(g, 0, "aten::mse_loss"), 0);
  assert_int_equal(count_top(g, 0, "aten::broadcast_tensors"), 0);
  assert_int_equal(count_top(g, 0, "BinaryCrossEntropyBackward0"), 1);
  /* one cat of [B, 3] [B, 3] [B, 5] → [B, 11]; no bmm, no index */
  assert_int_equal(count_top(g, 0, "aten::cat"), 1);
  assert_int_equal(count_top(g, 0, "aten::bmm"), 0);
  assert_int_equal(count_top(g, 0, "aten::index"), 0);
  assert_int_equal(count_top(g, 0, "CatBackward0"), 1);
  int32_t cat = first_top(g, "aten::cat");
  assert_shape(g, g->ops[cat].outputs[0], 2, 8, 11);
  const dc_kernel *k = kernel_in(g, first_top(g, "aten::binary_cross_entropy"),
                                 DC_KERNEL_REDUCE, 0);
  assert_true(k->u.ew.flops_per_elem == 7.0);
  /* the top MLP's first layer takes 11 inputs */
  int32_t lin = -1;
  for (int32_t i = 0; i < g->n_ops; i = g->ops[i].end)
    if (strcmp(g->ops[i].name, "aten::linear") == 0 && i > cat) {
      lin = i;
      break;
    }
  assert_shape(g, g->ops[lin].inputs[1], 2, 5, 11);
}

static void test_self_interaction(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  c.p.interaction_self = true;
  const dc_graph *g = build(&c);
  /* NI = F(F+1)/2 = 6; top input 3 + 6 */
  int32_t ix = first_top(g, "aten::index");
  assert_shape(g, g->ops[ix].outputs[0], 2, 8, 6);
  assert_true(kernel_in(g, ix, DC_KERNEL_TRIL_FWD, 0)->u.mat.diag);
}

static void test_rejects(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  c.tables[1].dim = 4; /* dot needs D == bottom output */
  dc_diags d = {0};
  assert_null(dc_graph_build(&c.p, &arena, &d));
  assert_true(d.errors > 0);
  assert_int_equal(d.items[0].code, DC_DIAG_GRAPH);
  dc_diags_free(&d);

  small(&c);
  c.p.gpus = 3; /* 8 does not split across 3 */
  c.p.hosts = 1;
  assert_null(dc_graph_build(&c.p, &arena, &d));
  assert_true(d.errors > 0);
  dc_diags_free(&d);

  small(&c);
  c.tables[0].rows = INT64_MAX / 2; /* fine: rows are not multiplied */
  c.p.batch_size = INT64_MAX / 2;   /* B·L overflows */
  assert_null(dc_graph_build(&c.p, &arena, &d));
  assert_true(d.errors > 0);
  dc_diags_free(&d);
}

static void test_paper_configs(void **state) {
  (void)state;
  static const char *const names[] = {"DLRM_default", "DLRM_MLPerf",
                                      "DLRM_DDP"};
  for (size_t i = 0; i < DC_COUNTOF(names); i++) {
    tp_cfg c;
    assert_true(tp_paper(&c, names[i], 2048));
    const dc_graph *g = build(&c);
    int k = c.p.n_bottom - 1, m = c.p.n_top, T = c.p.n_tables;
    assert_int_equal(count_top(g, 0, "aten::linear"), k + m);
    assert_int_equal(count_top(g, 0, "AccumulateGrad"), 2 * (k + m) + T);
    c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
    g = build(&c);
    assert_int_equal(count_top(g, 0, "LookupFunction"), 1);
  }
  /* MLPerf: top input 128 + 27·26/2 = 479 */
  tp_cfg c;
  tp_paper(&c, "DLRM_MLPerf", 2048);
  const dc_graph *g = build(&c);
  int32_t ix = first_top(g, "aten::index");
  assert_shape(g, g->ops[ix].outputs[0], 2, 2048, 351);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_small_sequence, setup, teardown),
      cmocka_unit_test_setup_teardown(test_counts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_params, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batched, setup, teardown),
      cmocka_unit_test_setup_teardown(test_autocast, setup, teardown),
      cmocka_unit_test_setup_teardown(test_legacy_zero_grad, setup, teardown),
      cmocka_unit_test_setup_teardown(test_optimizers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bce_and_cat, setup, teardown),
      cmocka_unit_test_setup_teardown(test_self_interaction, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rejects, setup, teardown),
      cmocka_unit_test_setup_teardown(test_paper_configs, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
