/*
 * test_graphgen_shard.c — every sharding type in the per-rank graphs, with
 * byte counts and lookup sizes worked out by hand.
 *
 * Model (as test_graphgen_multi): bottom [4, 4], top [2, 1], 4 tables of
 * 1000 × 4, L = 1, global batch 16, per_table lookups, SGD, DDP bucket cap
 * 10 bytes (so the top MLP makes buckets 2 and the bottom 2: see
 * test_graphgen_multi.c).
 *
 * row_wise on 2 GPUs (local batch 8): each rank holds rows [0,500) or
 * [500,1000) of every table; it pools the indices of the global batch
 * that fall in its rows, pooling 1 × 500/1000 = 0.5, so 16 × 0.5 = 8
 * lookups per table. Forward reduce-scatter input 16 × Σdims 16 × 4 B =
 * 1024 B; backward all-gather output the same 1024 B. No all-to-all.
 * Ids: RS 0, top buckets 1 2, AG 3, bottom buckets 4 5.
 *
 * data_parallel on 2 GPUs: each rank looks its replica up for its 8
 * samples (8 lookups), no exchange; each table's gradient 1000 × 4 × 4 =
 * 16000 B is all-reduced in its AccumulateGrad (t3, t2, t1, t0: the
 * per_table backward runs in reverse). Ids: top 0 1, tables 2..5, bottom
 * 6 7. SGD updates the whole replicas (dense: the _foreach_ path).
 *
 * column_wise t0 over ranks [0, 1] on 2 GPUs, the rest default: t0's
 * shards are columns [0,2) on 0 and [2,4) on 1 (2000 elements each);
 * greedy by size then puts t1 → 0 (tie), t2 → 1, t3 → 0. Forward
 * all-to-all send: rank 0 16 × (2 + 4 + 4) × 4 = 640 B, rank 1
 * 16 × (2 + 4) × 4 = 384 B; backward 8 × 16 × 4 = 512 B on both.
 *
 * table_row_wise t0 pinned to rank 2 on 2 hosts × 2 GPUs (local batch 4):
 * t0 rows [0,500) on rank 2, [500,1000) on rank 3. Greedy for the rest
 * (loads 0, 0, 2000, 2000): t1 → 0, t2 → 1, t3 → 2. Forward: host 1's
 * reduce-scatter of 16 × 4 × 4 = 256 B (group 2, 1 host, id 0 + host 1 =
 * 1); the all-to-all (id 2) sends rank 0 and 1: 16 × 4 × 4 = 256 B, rank
 * 2: t3 256 + chunk (16/2) × 4 × 4 = 128 → 384 B, rank 3: 128 B. Backward:
 * all-to-all 4 × 16 × 4 = 256 B (id 5), host 1's all-gather of
 * 16 × 4 × 4 = 256 B (id 6 + 1 = 7).
 *
 * grid_shard t0 over ranks [0, 2] on 2 hosts × 2 GPUs: block 0 (columns
 * [0,2)) row-wise on host 0 (rows [0,500) rank 0, [500,1000) rank 1),
 * block 1 (columns [2,4)) on host 1 (ranks 2, 3); 1000 elements each.
 * Greedy for the rest (loads 1000 each): t1 → 0, t2 → 1, t3 → 2. Forward:
 * every host reduce-scatters its block's partial pools, 16 × 2 × 4 =
 * 128 B (id = host); the all-to-all (id 2) sends each rank its chunk
 * (16/2) × 2 × 4 = 64 B, plus 256 B for t1, t2, t3 on ranks 0, 1, 2:
 * 320, 320, 320, 64. Backward: all-to-all 4 × 16 × 4 = 256 B (id 5), each
 * host's all-gather 128 B (id 6 + host).
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

static void model(tp_cfg *c, int gpus, int hosts) {
  static const int64_t bot[] = {4, 4};
  static const int64_t top[] = {2, 1};
  tp_init(c, bot, 2, top, 2, 4, 1000, 4, 1, 16);
  c->p.gpus = gpus;
  c->p.hosts = hosts;
  c->p.gpus_per_host = gpus / hosts;
  c->p.ddp_bucket_bytes = 10;
}

/* Table 0 of c of type `ty` on ranks r0 and r1 (c->ranks). */
static void pin_t0(tp_cfg *c, dc_sharding ty, int32_t r0, int32_t r1) {
  c->ranks[0] = r0;
  c->ranks[1] = r1;
  c->tables[0].sharding = ty;
  c->tables[0].n_ranks = 2;
  c->tables[0].ranks = c->ranks;
}

typedef struct coll {
  dc_kernel_kind kind;
  int64_t bytes;
  int32_t id, ranks, hosts;
} coll;

static int collectives(const dc_graph *g, int32_t r, coll *out, int max) {
  int n = 0;
  for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1]; i++)
    for (int32_t l = 0; l < g->ops[i].n_launches; l++) {
      const dc_launch *x = &g->ops[i].launches[l];
      if (x->k.kind < DC_KERNEL_ALL_TO_ALL) continue;
      assert_true(n < max);
      assert_int_equal(x->stream, 1);
      out[n].kind = x->k.kind;
      out[n].bytes = x->k.u.coll.bytes;
      out[n].id = x->k.u.coll.coll_id;
      out[n].ranks = x->k.u.coll.ranks;
      out[n].hosts = x->k.u.coll.hosts;
      n++;
    }
  return n;
}

/* The embedding kernels of rank r of one direction, in order. */
static int emb_kernels(const dc_graph *g, int32_t r, dc_kernel_kind kind,
                       const dc_kernel **out, int max) {
  int n = 0;
  for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1]; i++)
    for (int32_t l = 0; l < g->ops[i].n_launches; l++)
      if (g->ops[i].launches[l].k.kind == kind) {
        assert_true(n < max);
        out[n++] = &g->ops[i].launches[l].k;
      }
  return n;
}

static void test_row_wise(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 2, 1);
  c.p.sharding = DC_SHARDING_ROW_WISE;
  const dc_graph *g = build(&c);
  assert_non_null(g->plan);
  assert_int_equal(g->plan->tables[2].n_shards, 2);
  assert_int_equal(g->plan->tables[2].shards[1].row_off, 500);
  for (int32_t r = 0; r < 2; r++) {
    coll cs[16];
    int n = collectives(g, r, cs, 16);
    assert_int_equal(n, 6);
    assert_int_equal(cs[0].kind, DC_KERNEL_REDUCE_SCATTER);
    assert_int_equal(cs[0].bytes, 1024);
    assert_int_equal(cs[0].id, 0);
    assert_int_equal(cs[0].ranks, 2);
    assert_int_equal(cs[3].kind, DC_KERNEL_ALL_GATHER);
    assert_int_equal(cs[3].bytes, 1024);
    assert_int_equal(cs[3].id, 3);
    for (int i = 1; i < 6; i++)
      if (i != 3) assert_int_equal(cs[i].kind, DC_KERNEL_ALL_REDUCE);
    const dc_kernel *ks[8];
    int nk = emb_kernels(g, r, DC_KERNEL_EMBEDDING_FWD, ks, 8);
    assert_int_equal(nk, 4);
    for (int i = 0; i < nk; i++) {
      assert_int_equal(ks[i]->u.emb.batch, 16);
      assert_int_equal(ks[i]->u.emb.groups[0].rows, 500);
      assert_int_equal(ks[i]->u.emb.groups[0].dim, 4);
      assert_true(ks[i]->u.emb.groups[0].pooling == 0.5);
    }
  }
}

static void test_data_parallel(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 2, 1);
  c.p.sharding = DC_SHARDING_DATA_PARALLEL;
  const dc_graph *g = build(&c);
  for (int32_t r = 0; r < 2; r++) {
    coll cs[16];
    int n = collectives(g, r, cs, 16);
    assert_int_equal(n, 8);
    for (int i = 0; i < n; i++) {
      assert_int_equal(cs[i].kind, DC_KERNEL_ALL_REDUCE);
      assert_int_equal(cs[i].id, i);
    }
    for (int i = 2; i < 6; i++) assert_int_equal(cs[i].bytes, 16000);
    const dc_kernel *ks[8];
    assert_int_equal(emb_kernels(g, r, DC_KERNEL_EMBEDDING_FWD, ks, 8), 4);
    assert_int_equal(ks[0]->u.emb.batch, 8);
    assert_int_equal(ks[0]->u.emb.groups[0].rows, 1000);
    /* no gradient is sparse, so SGD takes the multi-tensor path: one
     * _foreach_add_ over 4 replicas × 4000 + 53 MLP elements = 16053 */
    int nf = 0;
    for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1]; i++)
      if (strcmp(g->ops[i].name, "aten::_foreach_add_") == 0) {
        assert_int_equal(g->ops[i].launches[0].k.u.ew.elements, 16053);
        nf++;
      }
    assert_int_equal(nf, 1);
  }
}

static void test_column_wise(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 2, 1);
  pin_t0(&c, DC_SHARDING_COLUMN_WISE, 0, 1);
  c.p.sharding = DC_SHARDING_EXPLICIT;
  const dc_graph *g = build(&c);
  const dc_table_plan *t0 = &g->plan->tables[0];
  assert_int_equal(t0->n_shards, 2);
  assert_int_equal(t0->shards[1].col_off, 2);
  assert_int_equal(t0->shards[1].cols, 2);
  assert_int_equal(g->plan->tables[1].shards[0].rank, 0);
  assert_int_equal(g->plan->tables[2].shards[0].rank, 1);
  assert_int_equal(g->plan->tables[3].shards[0].rank, 0);
  static const int64_t fwd[2] = {640, 384};
  for (int32_t r = 0; r < 2; r++) {
    coll cs[16];
    int n = collectives(g, r, cs, 16);
    assert_int_equal(n, 6);
    assert_int_equal(cs[0].kind, DC_KERNEL_ALL_TO_ALL);
    assert_int_equal(cs[0].bytes, fwd[r]);
    assert_int_equal(cs[3].kind, DC_KERNEL_ALL_TO_ALL);
    assert_int_equal(cs[3].bytes, 512);
    const dc_kernel *ks[8];
    int nk = emb_kernels(g, r, DC_KERNEL_EMBEDDING_FWD, ks, 8);
    assert_int_equal(nk, r == 0 ? 3 : 2);
    assert_int_equal(ks[0]->u.emb.groups[0].dim, 2); /* t0's block */
  }
}

static void test_table_row_wise(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 4, 2);
  c.ranks[0] = 2;
  c.tables[0].sharding = DC_SHARDING_TABLE_ROW_WISE;
  c.tables[0].n_ranks = 1;
  c.tables[0].ranks = c.ranks;
  const dc_graph *g = build(&c);
  const dc_table_plan *t0 = &g->plan->tables[0];
  assert_int_equal(t0->host, 1);
  assert_int_equal(t0->shards[0].rank, 2);
  assert_int_equal(t0->shards[1].rank, 3);
  assert_int_equal(g->plan->tables[3].shards[0].rank, 2);
  static const int64_t a2a[4] = {256, 256, 384, 128};
  for (int32_t r = 0; r < 4; r++) {
    coll cs[16];
    int n = collectives(g, r, cs, 16);
    int i = 0;
    if (r >= 2) {
      assert_int_equal(cs[i].kind, DC_KERNEL_REDUCE_SCATTER);
      assert_int_equal(cs[i].bytes, 256);
      assert_int_equal(cs[i].ranks, 2);
      assert_int_equal(cs[i].hosts, 1);
      assert_int_equal(cs[i].id, 1);
      i++;
    }
    assert_int_equal(cs[i].kind, DC_KERNEL_ALL_TO_ALL);
    assert_int_equal(cs[i].bytes, a2a[r]);
    assert_int_equal(cs[i].id, 2);
    assert_int_equal(cs[i].ranks, 4);
    assert_int_equal(cs[i].hosts, 2);
    i += 3; /* two top buckets */
    assert_int_equal(cs[i].kind, DC_KERNEL_ALL_TO_ALL);
    assert_int_equal(cs[i].bytes, 256);
    assert_int_equal(cs[i].id, 5);
    i++;
    if (r >= 2) {
      assert_int_equal(cs[i].kind, DC_KERNEL_ALL_GATHER);
      assert_int_equal(cs[i].bytes, 256);
      assert_int_equal(cs[i].id, 7);
      i++;
    }
    assert_int_equal(n, i + 2);
    assert_int_equal(cs[i].id, 8);
  }
}

static void test_grid_shard(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 4, 2);
  pin_t0(&c, DC_SHARDING_GRID_SHARD, 0, 2);
  const dc_graph *g = build(&c);
  const dc_table_plan *t0 = &g->plan->tables[0];
  assert_int_equal(t0->type, DC_SHARDING_GRID_SHARD);
  assert_int_equal(t0->n_shards, 4);
  dc_buf b = {0};
  dc_shard_plan_write(&c.p, g->plan, &b);
  assert_non_null(strstr(b.data, "t0 grid_shard 0:[0,500)x[0,2) "
                                 "1:[500,1000)x[0,2) 2:[0,500)x[2,4) "
                                 "3:[500,1000)x[2,4)\n"));
  assert_non_null(strstr(b.data, "t1 table_wise 0:"));
  assert_non_null(strstr(b.data, "t2 table_wise 1:"));
  assert_non_null(strstr(b.data, "t3 table_wise 2:"));
  dc_buf_free(&b);
  /* each shard pools the indices in its rows: 16 × 1 × 500/1000 */
  dc_shard_work w = dc_shard_plan_work(&c.p, g->plan, 0, 3);
  assert_int_equal(w.batch, 16);
  assert_true(w.pooling == 0.5);
  assert_int_equal(w.cols, 2);
  static const int64_t a2a[4] = {320, 320, 320, 64};
  for (int32_t r = 0; r < 4; r++) {
    coll cs[16];
    int n = collectives(g, r, cs, 16);
    assert_int_equal(n, 8);
    assert_int_equal(cs[0].kind, DC_KERNEL_REDUCE_SCATTER);
    assert_int_equal(cs[0].bytes, 128);
    assert_int_equal(cs[0].ranks, 2);
    assert_int_equal(cs[0].hosts, 1);
    assert_int_equal(cs[0].id, r / 2);
    assert_int_equal(cs[1].kind, DC_KERNEL_ALL_TO_ALL);
    assert_int_equal(cs[1].bytes, a2a[r]);
    assert_int_equal(cs[1].id, 2);
    assert_int_equal(cs[4].kind, DC_KERNEL_ALL_TO_ALL);
    assert_int_equal(cs[4].bytes, 256);
    assert_int_equal(cs[4].id, 5);
    assert_int_equal(cs[5].kind, DC_KERNEL_ALL_GATHER);
    assert_int_equal(cs[5].bytes, 128);
    assert_int_equal(cs[5].id, 6 + r / 2);
  }

  /* the fused style (HugeCTR) runs the pooled all-to-all hierarchically
   * across hosts; the grid chunk (64 B forward, its gradients 4 × 4 × 4
   * = 64 B of each rank's backward send) is already on its rail */
  c.p.framework = DC_FRAMEWORK_FUSED;
  g = build(&c);
  for (int32_t r = 0; r < 4; r++) {
    int seen = 0;
    for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1]; i++)
      for (int32_t l = 0; l < g->ops[i].n_launches; l++) {
        const dc_kernel *k = &g->ops[i].launches[l].k;
        if (k->kind != DC_KERNEL_ALL_TO_ALL) continue;
        assert_true(k->u.coll.hier);
        assert_int_equal(k->u.coll.railed, 64);
        seen++;
      }
    assert_int_equal(seen, 2);
  }
  c.p.framework = DC_FRAMEWORK_PYTORCH;

  /* the default count: min(hosts, dim / 32) blocks, here one (dim 4) */
  model(&c, 4, 2);
  c.p.sharding = DC_SHARDING_GRID_SHARD;
  g = build(&c);
  for (int32_t t = 0; t < 4; t++) {
    assert_int_equal(g->plan->tables[t].type, DC_SHARDING_GRID_SHARD);
    assert_int_equal(g->plan->tables[t].n_shards, 2);
  }

  /* two blocks on one host, more blocks than hosts: refused */
  model(&c, 4, 2);
  pin_t0(&c, DC_SHARDING_GRID_SHARD, 0, 1);
  dc_diags d = {0};
  assert_null(dc_graph_build(&c.p, &arena, &d));
  assert_int_equal(d.items[0].code, DC_DIAG_SHARDING);
  assert_non_null(strstr(d.items[0].message, "two grid blocks on host 0"));
  dc_diags_free(&d);
  c.ranks[1] = 2;
  c.ranks[2] = 3;
  c.tables[0].n_ranks = 3;
  dc_diags d2 = {0};
  assert_null(dc_graph_build(&c.p, &arena, &d2));
  assert_non_null(strstr(d2.items[0].message, "3 grid blocks"));
  dc_diags_free(&d2);

}

/* Rank r's collectives of one kind, in order. */
static int kind_colls(const dc_graph *g, int32_t r, dc_kernel_kind kind,
                      coll *out, int max) {
  coll all[64];
  int n = collectives(g, r, all, 64), m = 0;
  for (int i = 0; i < n; i++)
    if (all[i].kind == kind) {
      assert_true(m < max);
      out[m++] = all[i];
    }
  return m;
}

static int count_ops(const dc_graph *g, int32_t r, const char *name) {
  int n = 0;
  for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1]; i++)
    n += strcmp(g->ops[i].name, name) == 0;
  return n;
}

/* The torchrec style runs grid_shard as TorchRec's GRID_SHARD: a type of
 * its own (its lookup, its host reduce-scatter and all-to-all, apart
 * from table_row_wise's), its pooled output permuted back in table order
 * when the blocks arrive out of order. t0 grid over ranks [0, 2] (block 0
 * on host 0, block 1 on host 1), t2 table_row_wise on host 1, t1, t3
 * table-wise: forward, every host reduce-scatters its grid block's
 * partial pools, 16 × 2 × 4 = 128 B (2 ranks), then the table-row-wise
 * ones, host 0 an empty one (TorchRec runs it on every host), host 1
 * 16 × 4 × 4 = 256 B; backward the same sizes all-gathered, table-row-wise
 * first (the last type's first). */
static void test_grid_torchrec(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 4, 2);
  c.p.framework = DC_FRAMEWORK_TORCHREC;
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c.ranks[0] = 0;
  c.ranks[1] = 2;
  c.ranks[2] = 2;
  c.tables[0].sharding = DC_SHARDING_GRID_SHARD;
  c.tables[0].n_ranks = 2;
  c.tables[0].ranks = c.ranks;
  c.tables[2].sharding = DC_SHARDING_TABLE_ROW_WISE;
  c.tables[2].n_ranks = 1;
  c.tables[2].ranks = c.ranks + 2;
  c.tables[1].sharding = c.tables[3].sharding = DC_SHARDING_TABLE_WISE;
  const dc_graph *g = build(&c);
  for (int32_t r = 0; r < 4; r++) {
    coll rs[8], ag[8];
    assert_int_equal(kind_colls(g, r, DC_KERNEL_REDUCE_SCATTER, rs, 8), 2);
    assert_int_equal(rs[0].bytes, 128);
    assert_int_equal(rs[0].ranks, 2);
    assert_int_equal(rs[1].bytes, r < 2 ? 0 : 256);
    assert_int_equal(kind_colls(g, r, DC_KERNEL_ALL_GATHER, ag, 8), 2);
    assert_int_equal(ag[0].bytes, r < 2 ? 0 : 256);
    assert_int_equal(ag[1].bytes, 128);
    /* one TBE lookup per type held: grid, table-wise (greedy: t1 on
     * rank 0, t3 on rank 1), table-row-wise (host 1) */
    int tbe = count_ops(
        g, r, "fbgemm::split_embedding_codegen_lookup_sgd_function_pt2");
    assert_int_equal(tbe, 1 + (r < 2) + (r >= 2));
    assert_int_equal(
        count_ops(g, r, "fbgemm::permute_pooled_embs_auto_grad_split"), 0);
  }

  /* blocks on the hosts in reverse order: host 0's block (columns
   * [2,4)) arrives first, so TorchRec permutes the pooled output */
  c.ranks[0] = 2;
  c.ranks[1] = 0;
  g = build(&c);
  for (int32_t r = 0; r < 4; r++)
    assert_int_equal(
        count_ops(g, r, "fbgemm::permute_pooled_embs_auto_grad_split"), 1);

  /* the pytorch style: grid shards join the table-row-wise class, one
   * host reduce-scatter of both (host 0: the grid block alone) */
  c.p.framework = DC_FRAMEWORK_PYTORCH;
  g = build(&c);
  for (int32_t r = 0; r < 4; r++) {
    coll rs[8];
    assert_int_equal(kind_colls(g, r, DC_KERNEL_REDUCE_SCATTER, rs, 8), 1);
    assert_int_equal(rs[0].bytes, r < 2 ? 128 : 384);
  }
}

/* table_column_wise t0 over ranks [2, 3] (host 1 of 2 hosts × 2 GPUs):
 * columns [0,2) on rank 2, [2,4) on rank 3 (2000 elements each); greedy
 * for the rest (loads 0, 0, 2000, 2000): t1 → 0, t2 → 1, t3 → 2. The
 * pytorch style exchanges the blocks as column shards through the one
 * all-to-all: forward sends 16 × 4 × 4 = 256 B on ranks 0 and 1, rank 2
 * t0's 16 × 2 × 4 = 128 B + t3's 256 = 384 B, rank 3 128 B; backward 4 ×
 * 16 × 4 = 256 B everywhere. The torchrec style runs it as TorchRec's
 * TwCw sharding: a type of its own (its lookup, its all-to-all apart from
 * table-wise's), permuted back into table order when the blocks arrive
 * out of order. */
static void test_table_column_wise(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 4, 2);
  pin_t0(&c, DC_SHARDING_TABLE_COLUMN_WISE, 2, 3);
  const dc_graph *g = build(&c);
  const dc_table_plan *t0 = &g->plan->tables[0];
  assert_int_equal(t0->type, DC_SHARDING_TABLE_COLUMN_WISE);
  assert_int_equal(t0->host, 1);
  dc_buf b = {0};
  dc_shard_plan_write(&c.p, g->plan, &b);
  assert_non_null(strstr(b.data, "t0 table_column_wise 2:[0,1000)x[0,2) "
                                 "3:[0,1000)x[2,4)\n"));
  assert_non_null(strstr(b.data, "t1 table_wise 0:"));
  assert_non_null(strstr(b.data, "t2 table_wise 1:"));
  assert_non_null(strstr(b.data, "t3 table_wise 2:"));
  dc_buf_free(&b);
  dc_shard_work w = dc_shard_plan_work(&c.p, g->plan, 0, 1);
  assert_int_equal(w.batch, 16);
  assert_true(w.pooling == 1);
  assert_int_equal(w.cols, 2);
  static const int64_t fwd[4] = {256, 256, 384, 128};
  for (int32_t r = 0; r < 4; r++) {
    coll a[8];
    assert_int_equal(kind_colls(g, r, DC_KERNEL_ALL_TO_ALL, a, 8), 2);
    assert_int_equal(a[0].bytes, fwd[r]);
    assert_int_equal(a[1].bytes, 256);
  }

  /* torchrec: the blocks' all-to-all, then table-wise's; one TBE lookup
   * per type held (rank 2 both, rank 3 the block alone) */
  c.p.framework = DC_FRAMEWORK_TORCHREC;
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  g = build(&c);
  static const int tbe[4] = {1, 1, 2, 1};
  for (int32_t r = 0; r < 4; r++) {
    assert_int_equal(
        count_ops(g, r, "fbgemm::split_embedding_codegen_lookup_sgd_"
                        "function_pt2"),
        tbe[r]);
    assert_int_equal(
        count_ops(g, r, "fbgemm::permute_pooled_embs_auto_grad_split"), 0);
  }
  /* blocks in reverse rank order: TorchRec permutes the pooled output */
  c.ranks[0] = 3;
  c.ranks[1] = 2;
  g = build(&c);
  for (int32_t r = 0; r < 4; r++)
    assert_int_equal(
        count_ops(g, r, "fbgemm::permute_pooled_embs_auto_grad_split"), 1);

  /* the default: min(GPUs a host, dim / 32) blocks (here one) on the
   * least-loaded host's least-loaded ranks */
  model(&c, 4, 2);
  c.tables[0].sharding = DC_SHARDING_TABLE_COLUMN_WISE;
  g = build(&c);
  assert_int_equal(g->plan->tables[0].n_shards, 1);
  assert_int_equal(g->plan->tables[0].host, 0);

  /* blocks on two hosts: refused at the set and at the check */
  model(&c, 4, 2);
  pin_t0(&c, DC_SHARDING_TABLE_COLUMN_WISE, 1, 2);
  dc_diags d = {0};
  assert_null(dc_graph_build(&c.p, &arena, &d));
  assert_int_equal(d.items[0].code, DC_DIAG_SHARDING);
  assert_non_null(strstr(d.items[0].message, "on different hosts"));
  dc_diags_free(&d);
  c.tables[0].sharding = DC_SHARDING_COLUMN_WISE;
  dc_diags d2 = {0};
  dc_shard_plan *s = dc_shard_plan_default(&c.p, &arena, &d2);
  assert_non_null(s);
  s->tables[0].type = DC_SHARDING_TABLE_COLUMN_WISE;
  assert_false(dc_shard_plan_check(&c.p, s, &d2));
  assert_non_null(strstr(d2.items[0].message, "does not cover it"));
  dc_diags_free(&d2);
}

/* Random mixes of every type, grid_shard among them on random hosts and
 * table_column_wise on the last host, in the pytorch and fused styles: each graph builds and passes the
 * verifier (every collective the same id, group and size on every rank
 * of its group), and its lookups cover each table's pooling exactly. */
static void test_grid_random(void **state) {
  (void)state;
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (int it = 0; it < 60; it++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int hosts = 2 + (int)(x % 3), gph = 1 + (int)((x >> 8) % 3);
    static const int64_t bot[] = {4, 8};
    static const int64_t top[] = {4, 1};
    tp_cfg c;
    tp_init(&c, bot, 2, top, 2, 6, 64, 8, 2, 720);
    c.p.gpus = hosts * gph;
    c.p.hosts = hosts;
    c.p.gpus_per_host = gph;
    c.p.interaction = DC_INTERACTION_CAT;
    c.p.embedding_kernel = (x >> 16) & 1 ? DC_EMBEDDING_BATCHED
                                         : DC_EMBEDDING_PER_TABLE;
    c.p.framework = (x >> 17) & 1 ? DC_FRAMEWORK_FUSED : DC_FRAMEWORK_PYTORCH;
    int32_t rk[TP_MAX_TABLES][8];
    for (int t = 0; t < 6; t++) {
      uint64_t y = x >> (20 + 6 * t);
      static const dc_sharding types[] = {
          DC_SHARDING_TABLE_WISE, DC_SHARDING_ROW_WISE,
          DC_SHARDING_COLUMN_WISE, DC_SHARDING_TABLE_ROW_WISE,
          DC_SHARDING_DATA_PARALLEL, DC_SHARDING_GRID_SHARD,
          DC_SHARDING_TABLE_COLUMN_WISE};
      c.tables[t].sharding = types[(y ^ (uint64_t)it) % 7];
      if (c.tables[t].sharding == DC_SHARDING_TABLE_COLUMN_WISE &&
          (y >> 3) & 1) {
        /* blocks on the last host's GPUs, in reverse */
        int n = 1 + (int)((y >> 4) % (uint64_t)gph);
        for (int j = 0; j < n; j++) rk[t][j] = hosts * gph - 1 - j;
        c.tables[t].n_ranks = n;
        c.tables[t].ranks = rk[t];
      }
      if (c.tables[t].sharding == DC_SHARDING_GRID_SHARD && (y >> 3) & 1) {
        /* blocks on the last hosts, in reverse */
        int n = 1 + (int)((y >> 4) % (uint64_t)hosts);
        for (int j = 0; j < n; j++) rk[t][j] = (hosts - 1 - j) * gph;
        c.tables[t].n_ranks = n;
        c.tables[t].ranks = rk[t];
      }
    }
    const dc_graph *g = build(&c);
    for (int t = 0; t < 6; t++) {
      const dc_table_plan *tp = &g->plan->tables[t];
      if (tp->type != DC_SHARDING_GRID_SHARD) continue;
      double pool = 0;
      int64_t cells = 0;
      for (int32_t i = 0; i < tp->n_shards; i++) {
        dc_shard_work w = dc_shard_plan_work(&c.p, g->plan, t, i);
        pool += w.pooling * w.cols;
        cells += tp->shards[i].rows * tp->shards[i].cols;
      }
      /* every column block pools the table's L lookups once */
      assert_true(pool > 2.0 * 8 - 1e-9 && pool < 2.0 * 8 + 1e-9);
      assert_int_equal(cells, 64 * 8);
    }
  }
}

/* Every type at once, batched lookups, Adam, fp16: builds, verifies
 * (which checks that every collective matches across ranks), and each
 * class has its own LookupFunction. */
static void test_mixed_batched(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 4, 2);
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c.p.optimizer = DC_OPTIMIZER_ADAM;
  c.p.sparse_optimizer = DC_OPTIMIZER_ADAM;
  c.p.precision = DC_PRECISION_FP16;
  c.tables[0].sharding = DC_SHARDING_ROW_WISE;
  c.tables[1].sharding = DC_SHARDING_DATA_PARALLEL;
  c.tables[2].sharding = DC_SHARDING_TABLE_ROW_WISE;
  c.tables[3].sharding = DC_SHARDING_TABLE_WISE;
  const dc_graph *g = build(&c);
  for (int32_t r = 0; r < 4; r++) {
    int lookups = 0;
    for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1]; i++)
      lookups += strcmp(g->ops[i].name, "LookupFunction") == 0;
    /* RW and DP everywhere, TWRW on host 0 (ranks 0, 1), TW t3 on one */
    int want = 2 + (r < 2) + (g->plan->tables[3].shards[0].rank == r);
    assert_int_equal(lookups, want);
  }
  dc_buf b = {0};
  dc_shard_plan_write(&c.p, g->plan, &b);
  assert_non_null(strstr(b.data, "t2 table_row_wise 0:[0,500)"));
  dc_buf_free(&b);
}

/* Memory of rank 0 for row_wise, SGD, per_table on 2 GPUs, by hand:
 * weights 4 × 500 × 4 × 4 = 32000; optimizer 0; sparse gradients 4 tables
 * × 8 lookups × (4·4 + 8) = 768; dense weights (4·5 + 2·(14+1) + 1·3)
 * × 4 = (20 + 30 + 3) × 4 = 212, gradients 2 × 212 = 424 (DDP).
 * Activations: pooled 4 × 16 × 4 × 4 = 1024; MLP layers B=8: bottom
 * 8·4·2·4 = 256, top 8·2·8 + 8·1·8 = 128 + 64 = 192; dot F=5 D=4 NI=10:
 * 8·20·4 + 8·25·4 + 8·10·4 + 8·14·4 = 640 + 800 + 320 + 448 = 2208;
 * received features 8 × 16 × 4 = 512 → 4192. Inputs: indices 4 × 8 × 8
 * = 256, offsets 4 × 17 × 8 = 544, dense 8·4·4 = 128, targets 8·1·4 =
 * 32 → 960. Total 32000 + 768 + 212 + 424 + 4192 + 960 = 38556. */
static void test_memory(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 2, 1);
  c.p.sharding = DC_SHARDING_ROW_WISE;
  dc_diags d = {0};
  dc_shard_plan *s = dc_shard_plan_default(&c.p, &arena, &d);
  assert_non_null(s);
  dc_rank_memory m;
  assert_true(dc_shard_plan_memory(&c.p, s, 0, &m));
  assert_int_equal(m.emb_weights, 32000);
  assert_int_equal(m.emb_optimizer, 0);
  assert_int_equal(m.emb_grad, 768);
  assert_int_equal(m.dense_weights, 212);
  assert_int_equal(m.dense_grad, 424);
  assert_int_equal(m.activations, 4192);
  assert_int_equal(m.inputs, 960);
  /* workspace: 2 × the largest backward gradient (dot: B·F·D·4 = 8·5·4·4
   * = 640 > the MLP's 8·4·4 = 128) = 1280, + the gradients sent back
   * 8 × 16 × 4 = 512, + those received for its shards 4 × 16 × 4 × 4 =
   * 1024 → 2816. */
  assert_int_equal(m.workspace, 2816);
  assert_int_equal(m.total, 38556 + 2816);
  /* Adam: 2 × the weights for tables and MLPs */
  c.p.optimizer = DC_OPTIMIZER_ADAM;
  c.p.sparse_optimizer = DC_OPTIMIZER_ADAM;
  assert_true(dc_shard_plan_memory(&c.p, s, 0, &m));
  assert_int_equal(m.emb_optimizer, 64000);
  assert_int_equal(m.dense_optimizer, 424);
  dc_diags_free(&d);
}

static void test_plan_errors(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 2, 1);
  c.tables[1].rows = 1; /* fewer rows than ranks */
  c.tables[1].sharding = DC_SHARDING_ROW_WISE;
  dc_diags d = {0};
  assert_null(dc_graph_build(&c.p, &arena, &d));
  assert_int_equal(d.items[0].code, DC_DIAG_SHARDING);
  assert_non_null(strstr(d.items[0].message, "fewer than"));
  dc_diags_free(&d);

  /* a column-wise table naming one rank twice */
  model(&c, 2, 1);
  pin_t0(&c, DC_SHARDING_COLUMN_WISE, 1, 1);
  dc_diags d2 = {0};
  assert_null(dc_graph_build(&c.p, &arena, &d2));
  assert_non_null(strstr(d2.items[0].message, "twice"));
  dc_diags_free(&d2);

  /* a hand-made plan with overlapping shards is refused */
  model(&c, 2, 1);
  dc_diags d3 = {0};
  dc_shard_plan *s = dc_shard_plan_default(&c.p, &arena, &d3);
  assert_non_null(s);
  dc_shard_plan *x = dc_shard_plan_copy(s, &arena);
  x->tables[0].shards[0].rows = 999;
  assert_null(dc_graph_build_plan(&c.p, x, &arena, &d3));
  assert_int_equal(d3.items[0].code, DC_DIAG_SHARDING);
  dc_diags_free(&d3);
}

/* One GPU: whatever the plan says, every table is local and table-wise,
 * so the graph is the single-GPU one (no collectives). */
static void test_single_gpu(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 1, 1);
  c.p.sharding = DC_SHARDING_ROW_WISE;
  const dc_graph *g = build(&c);
  coll cs[4];
  assert_int_equal(collectives(g, 0, cs, 4), 0);
  assert_int_equal(g->plan->tables[0].type, DC_SHARDING_TABLE_WISE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_row_wise, setup, teardown),
      cmocka_unit_test_setup_teardown(test_data_parallel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_column_wise, setup, teardown),
      cmocka_unit_test_setup_teardown(test_table_row_wise, setup, teardown),
      cmocka_unit_test_setup_teardown(test_grid_shard, setup, teardown),
      cmocka_unit_test_setup_teardown(test_grid_random, setup, teardown),
      cmocka_unit_test_setup_teardown(test_grid_torchrec, setup, teardown),
      cmocka_unit_test_setup_teardown(test_table_column_wise, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_mixed_batched, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory, setup, teardown),
      cmocka_unit_test_setup_teardown(test_plan_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_single_gpu, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
