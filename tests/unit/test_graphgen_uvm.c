/*
 * test_graphgen_uvm.c — the torchrec style's graph for tables cached in
 * HBM (graphgen/uvm_graph.c): before the table-batched lookup of a class
 * holding a uvm_caching table, FBGEMM's prefetch ops in the order its
 * forward runs them, the lookup reading the cache slots they produce, its
 * kernel the LOOKUP part and the populate's insert the PREFETCH part;
 * none of it for tables in HBM or host memory alone, nor in the stock
 * PyTorch style.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "compiler/compiler.h"
#include "graphgen/graphgen.h"

/* memory of the second group, and the framework */
static const char base[] =
    "study: cached\n"
    "model:\n"
    "  bottom_mlp: [13, 64, 32]\n"
    "  top_mlp: [64, 1]\n"
    "  embedding:\n"
    "    dim: 32\n"
    "    tables:\n"
    "      - {count: 2, rows: 1M, pooling: 4}\n"
    "      - {count: 3, rows: 2M, pooling: 8, memory: %s}\n"
    "training: {batch_size: 1024, optimizer: rowwise_adagrad}\n"
    "system: {gpu: H100, gpus: 1, framework: %s}\n"
    "sharding: {cache_load_factor: 0.1}\n";

typedef struct built {
  dc_study *s;
  dc_arena a;
  dc_point p;
  const dc_graph *g;
} built;

static void build(built *b, const char *memory, const char *framework) {
  dc_diags d = {0};
  char text[1024];
  snprintf(text, sizeof text, base, memory, framework);
  b->s = dc_study_load_memory("t.yaml", text, strlen(text), NULL, 0, &d);
  if (!b->s) dc_diags_render(&d, stderr, false);
  assert_non_null(b->s);
  dc_arena_init(&b->a);
  dc_study_point(b->s, 0, &b->a, &b->p);
  b->g = dc_graph_build(&b->p, &b->a, &d);
  if (!b->g) dc_diags_render(&d, stderr, false);
  assert_non_null(b->g);
  dc_diags_free(&d);
}

static void drop(built *b) {
  dc_arena_free(&b->a);
  dc_study_free(b->s);
}

static int32_t find(const dc_graph *g, const char *name, int32_t from) {
  for (int32_t i = from; i < g->n_ops; i++)
    if (strcmp(g->ops[i].name, name) == 0) return i;
  return -1;
}

static bool reads(const dc_op *o, int32_t t) {
  for (int32_t i = 0; i < o->n_inputs; i++)
    if (o->inputs[i] == t) return true;
  return false;
}

static void prefetch_before_lookup(void **state) {
  (void)state;
  built b;
  build(&b, "uvm_caching", "torchrec");
  const dc_graph *g = b.g;
  int32_t lookup =
      find(g, "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_"
              "function_pt2",
           0);
  assert_true(lookup >= 0);
  static const char *const order[] = {
      "fbgemm::bounds_check_indices",   "aten::empty_like",
      "aten::zeros",                    "fbgemm::linearize_cache_indices",
      "aten::cat",                      "fbgemm::lru_cache_populate",
      "fbgemm::lxu_cache_lookup"};
  int32_t at = 0;
  int32_t op[7];
  for (size_t i = 0; i < 7; i++) {
    op[i] = find(g, order[i], at);
    if (op[i] < 0 || op[i] > lookup)
      fail_msg("%s missing before the lookup", order[i]);
    at = op[i] + 1;
  }
  /* the lookup reads the slots lxu_cache_lookup writes */
  const dc_op *lx = &g->ops[op[6]];
  assert_int_equal(lx->n_outputs, 1);
  assert_true(reads(&g->ops[lookup], lx->outputs[0]));
  /* one index per pooled lookup: 1024 × (2 × 4 + 3 × 8) */
  const dc_op *lin = &g->ops[op[3]];
  assert_int_equal(lin->n_launches, 1);
  assert_int_equal(lin->launches[0].k.u.ew.elements, 1024 * (2 * 4 + 3 * 8));
  /* the populate: its find-uncached pass, then the insert (PREFETCH) */
  const dc_op *pop = &g->ops[op[5]];
  assert_int_equal(pop->n_launches, 2);
  assert_int_equal(pop->launches[0].k.kind, DC_KERNEL_ELEMENTWISE);
  assert_int_equal(pop->launches[1].k.kind, DC_KERNEL_EMBEDDING_FWD);
  assert_int_equal(pop->launches[1].k.u.emb.part, DC_EMB_PREFETCH);
  const dc_op *lk = &g->ops[lookup];
  assert_int_equal(lk->n_launches, 1);
  assert_int_equal(lk->launches[0].k.u.emb.part, DC_EMB_LOOKUP);
  /* the backward's kernel is whole: the cache is updated in place */
  for (int32_t i = lookup + 1; i < g->n_ops; i++)
    for (int32_t l = 0; l < g->ops[i].n_launches; l++)
      if (g->ops[i].launches[l].k.kind == DC_KERNEL_EMBEDDING_BWD)
        assert_int_equal(g->ops[i].launches[l].k.u.emb.part, DC_EMB_WHOLE);
  /* one prefetch per step */
  assert_int_equal(find(g, "fbgemm::lru_cache_populate", op[5] + 1), -1);
  drop(&b);
}

/* No cache, no prefetch: every table in HBM, a uvm table (no cache), or
 * the stock PyTorch style (one nn.EmbeddingBag per table). */
static void no_cache_no_prefetch(void **state) {
  (void)state;
  static const char *const cases[][2] = {
      {"hbm", "torchrec"}, {"uvm", "torchrec"}, {"uvm_caching", "pytorch"}};
  for (size_t i = 0; i < 3; i++) {
    built b;
    build(&b, cases[i][0], cases[i][1]);
    assert_int_equal(find(b.g, "fbgemm::lru_cache_populate", 0), -1);
    assert_int_equal(find(b.g, "fbgemm::linearize_cache_indices", 0), -1);
    for (int32_t o = 0; o < b.g->n_ops; o++)
      for (int32_t l = 0; l < b.g->ops[o].n_launches; l++) {
        const dc_kernel *k = &b.g->ops[o].launches[l].k;
        if (k->kind == DC_KERNEL_EMBEDDING_FWD)
          assert_int_equal(k->u.emb.part, DC_EMB_WHOLE);
      }
    drop(&b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(prefetch_before_lookup),
      cmocka_unit_test(no_cache_no_prefetch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
