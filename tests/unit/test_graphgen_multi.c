/*
 * test_graphgen_multi.c — hybrid parallelism with byte counts worked out
 * by hand. Model: bottom [4, 4], top [2, 1], 4 tables of 1000 × 4, L = 1,
 * global batch 16 on 2 GPUs (local batch 8). F = 5, NI = 10, top input 14.
 *
 * Placement (greedy, equal sizes): t0 → 0, t1 → 1, t2 → 0, t3 → 1.
 * Forward all-to-all, bytes a rank sends: 2 tables × 16 samples × 4 dims ×
 * 4 B = 512. Backward: local batch 8 × Σ dims 16 × 4 B = 512.
 * DDP buckets with a 10-byte cap, reverse order per MLP:
 *   top:    b1 (1 elem, 4 B) + W1 (2, 8 B) → 12 B ≥ 10: bucket of 3
 *           b0 (2, 8 B) + W0 (28, 112 B) → bucket of 30 (120 B)
 *   bottom: b (4, 16 B) → bucket of 4; W (16, 64 B) → bucket of 16
 * Collective ids: a2a fwd 0, top buckets 1 and 2, a2a bwd 3, bottom 4, 5.
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

static void model(tp_cfg *c) {
  static const int64_t bot[] = {4, 4};
  static const int64_t top[] = {2, 1};
  tp_init(c, bot, 2, top, 2, 4, 1000, 4, 1, 16);
  c->p.gpus = 2;
  c->p.gpus_per_host = 2;
  c->p.ddp_bucket_bytes = 10;
}

typedef struct coll {
  dc_kernel_kind kind;
  int64_t bytes;
  int32_t id, stream;
  const char *op;
} coll;

static int collectives(const dc_graph *g, int32_t r, coll *out, int max) {
  int n = 0;
  for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1]; i++)
    for (int32_t l = 0; l < g->ops[i].n_launches; l++) {
      const dc_launch *x = &g->ops[i].launches[l];
      if (x->k.kind < DC_KERNEL_ALL_TO_ALL) continue;
      assert_true(n < max);
      out[n].kind = x->k.kind;
      out[n].bytes = x->k.u.coll.bytes;
      out[n].id = x->k.u.coll.coll_id;
      out[n].stream = x->stream;
      out[n].op = g->ops[i].name;
      assert_int_equal(x->k.u.coll.ranks, 2);
      assert_int_equal(x->k.u.coll.hosts, 1);
      n++;
    }
  return n;
}

static void test_hybrid(void **state) {
  (void)state;
  tp_cfg c;
  model(&c);
  const dc_graph *g = build(&c);
  assert_int_equal(g->n_ranks, 2);
  assert_int_equal(g->n_streams, 2);
  for (int32_t r = 0; r < 2; r++) {
    coll cs[16];
    int n = collectives(g, r, cs, 16);
    static const struct {
      dc_kernel_kind kind;
      int64_t bytes;
    } want[] = {{DC_KERNEL_ALL_TO_ALL, 512}, {DC_KERNEL_ALL_REDUCE, 12},
                {DC_KERNEL_ALL_REDUCE, 120}, {DC_KERNEL_ALL_TO_ALL, 512},
                {DC_KERNEL_ALL_REDUCE, 16},  {DC_KERNEL_ALL_REDUCE, 64}};
    assert_int_equal(n, (int)DC_COUNTOF(want));
    for (int i = 0; i < n; i++) {
      assert_int_equal(cs[i].kind, want[i].kind);
      assert_int_equal(cs[i].bytes, want[i].bytes);
      assert_int_equal(cs[i].id, i);
      assert_int_equal(cs[i].stream, 1);
    }
    assert_string_equal(cs[0].op, "c10d::alltoall_base_");
    assert_string_equal(cs[1].op, "c10d::allreduce_");
    /* each rank looks up its 2 tables for the global batch, and runs the
     * MLPs on its local batch */
    int eb = 0;
    for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1]; i++) {
      const dc_op *o = &g->ops[i];
      assert_int_equal(o->rank, r);
      if (strcmp(o->name, "aten::embedding_bag") == 0) {
        eb++;
        assert_int_equal(o->launches[0].k.u.emb.batch, 16);
        assert_int_equal(g->tensors[o->inputs[1]].shape[0], 16);
      }
      if (strcmp(o->name, "aten::addmm") == 0)
        assert_int_equal(o->launches[0].k.u.gemm.m, 8);
    }
    assert_int_equal(eb, 2);
  }
  /* the all-reduce completing a bucket sits in the AccumulateGrad of its
   * last gradient; the optimizer reads the reduced bucket */
  int32_t lo = g->rank_first[0];
  int32_t ar = -1;
  for (int32_t i = lo; i < g->rank_first[1]; i++)
    if (strcmp(g->ops[i].name, "c10d::allreduce_") == 0) {
      ar = i;
      break;
    }
  assert_true(ar > lo);
  assert_non_null(strstr(g->ops[g->ops[ar].parent].name, "AccumulateGrad"));
  int32_t bucket = g->ops[ar].outputs[0];
  bool used = false;
  for (int32_t i = ar + 1; i < g->rank_first[1]; i++)
    for (int32_t k = 0; k < g->ops[i].n_inputs; k++)
      if (g->ops[i].inputs[k] == bucket &&
          g->ops[i].phase == DC_PHASE_OPTIMIZER)
        used = true;
  assert_true(used);
}

static void test_explicit_and_default_buckets(void **state) {
  (void)state;
  tp_cfg c;
  model(&c);
  c.p.ddp_bucket_bytes = 25 * 1000 * 1000;
  c.p.sharding = DC_SHARDING_EXPLICIT;
  for (int t = 0; t < 4; t++) {
    c.ranks[t] = 1; /* everything on rank 1 */
    c.tables[t].n_ranks = 1;
    c.tables[t].ranks = &c.ranks[t];
  }
  const dc_graph *g = build(&c);
  coll cs[16];
  /* rank 0 holds no table: sends nothing forward, still 512 backward;
   * one bucket per MLP: top 33 elements, bottom 20 */
  int n = collectives(g, 0, cs, 16);
  assert_int_equal(n, 4);
  assert_int_equal(cs[0].bytes, 0);
  assert_int_equal(cs[1].bytes, 33 * 4);
  assert_int_equal(cs[2].bytes, 512);
  assert_int_equal(cs[3].bytes, 20 * 4);
  n = collectives(g, 1, cs, 16);
  assert_int_equal(cs[0].bytes, 4 * 16 * 4 * 4);
  /* a rank out of range is an error */
  c.ranks[2] = 5;
  dc_diags d = {0};
  assert_null(dc_graph_build(&c.p, &arena, &d));
  assert_true(d.errors > 0);
  dc_diags_free(&d);
}

static void test_batched_multi_host(void **state) {
  (void)state;
  tp_cfg c;
  model(&c);
  c.p.gpus = 4;
  c.p.hosts = 2;
  c.p.gpus_per_host = 2;
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  const dc_graph *g = build(&c);
  assert_int_equal(g->n_ranks, 4);
  for (int32_t r = 0; r < 4; r++) {
    int lookups = 0;
    for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1]; i++) {
      for (int32_t l = 0; l < g->ops[i].n_launches; l++) {
        const dc_kernel *k = &g->ops[i].launches[l].k;
        if (dc_kernel_is_collective(k->kind))
          assert_int_equal(k->u.coll.hosts, 2);
        if (k->kind == DC_KERNEL_ALL_TO_ALL && k->u.coll.coll_id == 0)
          assert_int_equal(k->u.coll.bytes, 16 * 4 * 4); /* one table */
      }
      lookups += strcmp(g->ops[i].name, "LookupFunction") == 0;
    }
    assert_int_equal(lookups, 1);
  }
}

/* A plan the builder cannot lay out is refused with E0502: a table-wise
 * table pinned to two ranks, and one pinned past the last rank. */
static void test_bad_plan(void **state) {
  (void)state;
  tp_cfg c;
  model(&c);
  c.ranks[0] = 0;
  c.ranks[1] = 1;
  c.tables[0].sharding = DC_SHARDING_TABLE_WISE;
  c.tables[0].n_ranks = 2;
  c.tables[0].ranks = c.ranks;
  dc_diags d = {0};
  assert_null(dc_graph_build(&c.p, &arena, &d));
  assert_true(d.errors > 0);
  assert_int_equal(d.items[0].code, DC_DIAG_SHARDING);
  assert_non_null(strstr(d.items[0].message, "table-wise"));
  dc_diags_free(&d);

  model(&c);
  c.ranks[0] = 5;
  c.tables[2].n_ranks = 1;
  c.tables[2].ranks = c.ranks;
  dc_diags d2 = {0};
  assert_null(dc_graph_build(&c.p, &arena, &d2));
  assert_non_null(strstr(d2.items[0].message, "rank 5"));
  dc_diags_free(&d2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_hybrid, setup, teardown),
      cmocka_unit_test_setup_teardown(test_explicit_and_default_buckets,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_batched_multi_host, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_bad_plan, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
