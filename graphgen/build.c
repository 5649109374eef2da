/*
 * build.c — dc_graph_build: checks that the point describes a DLRM the
 * builder can lay out, places the embedding tables on ranks, then builds
 * each rank's iteration in the order the reference training loop runs it
 * (dlrm_s_pytorch.py; spec/frameworks.md):
 *
 *   H2D copies → forward → loss (+ .cpu() sync) → zero_grad → backward
 *   → optimizer step
 *
 * and finally applies the study's transforms.
 *
 * Multi-GPU is hybrid parallel, as the reference DLRM runs with
 * ext_dist: each table lives on one rank (table-wise) and is looked up for
 * the global batch; an all-to-all hands every rank the pooled embeddings
 * of its local batch (global batch / gpus); the MLPs are data-parallel
 * (DDP) and their gradients are all-reduced in buckets.
 *
 * Table placement (plan auto / table_wise): tables pinned by an explicit
 * plan go to their rank; the others, largest (rows × dim) first, go to
 * the least loaded rank (ties: lowest rank, then table order), which is
 * the greedy load balance TorchRec's planner starts from.
 */
#include <stdlib.h>
#include <string.h>

#include "graphgen/graphgen_int.h"

static const dc_span no_span = {0};

static bool check_point(const dc_point *p, dc_diags *d) {
  bool ok = true;
  if (p->n_bottom < 2 || !p->bottom_mlp) {
    dc_diag_error(d, DC_DIAG_GRAPH, no_span,
                  "the bottom MLP needs the dense-feature count and at least "
                  "one layer (got %d entries)", p->n_bottom);
    ok = false;
  }
  if (p->n_top < 1 || !p->top_mlp) {
    dc_diag_error(d, DC_DIAG_GRAPH, no_span,
                  "the top MLP needs at least one layer");
    ok = false;
  }
  if (p->n_tables < 1 || !p->tables) {
    dc_diag_error(d, DC_DIAG_GRAPH, no_span,
                  "the model needs at least one embedding table");
    ok = false;
  }
  if (!ok) return false;
  for (int32_t i = 0; i < p->n_bottom; i++)
    if (p->bottom_mlp[i] < 1) {
      dc_diag_error(d, DC_DIAG_GRAPH, no_span,
                    "bottom_mlp entry %d is %lld; widths must be positive",
                    i, (long long)p->bottom_mlp[i]);
      ok = false;
    }
  for (int32_t i = 0; i < p->n_top; i++)
    if (p->top_mlp[i] < 1) {
      dc_diag_error(d, DC_DIAG_GRAPH, no_span,
                    "top_mlp entry %d is %lld; widths must be positive", i,
                    (long long)p->top_mlp[i]);
      ok = false;
    }
  int64_t bk = p->bottom_mlp[p->n_bottom - 1];
  for (int32_t t = 0; t < p->n_tables; t++) {
    const dc_table *tb = &p->tables[t];
    if (tb->rows < 1 || tb->dim < 1 || !(tb->pooling > 0)) {
      dc_diag_error(d, DC_DIAG_GRAPH, tb->span,
                    "table '%s' needs positive rows, dim and pooling",
                    tb->name ? tb->name : "?");
      ok = false;
    } else if (p->interaction == DC_INTERACTION_DOT && tb->dim != bk) {
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_GRAPH, tb->span,
          "the dot interaction needs every table's dim to equal the bottom "
          "MLP's last width (%lld), but table '%s' has dim %d",
          (long long)bk, tb->name ? tb->name : "?", tb->dim);
      dc_diag_set_help(g, "use interaction: cat, or make the dims agree");
      ok = false;
    }
  }
  if (p->batch_size < 1) {
    dc_diag_error(d, DC_DIAG_GRAPH, no_span, "batch_size must be positive");
    ok = false;
  }
  int32_t gpus = p->gpus < 1 ? 1 : p->gpus;
  if (ok && p->batch_size % gpus != 0) {
    dc_diag *g = dc_diag_error(
        d, DC_DIAG_GRAPH, no_span,
        "the global batch %lld does not split evenly across %d GPUs",
        (long long)p->batch_size, gpus);
    dc_diag_set_help(g, "use a batch size that is a multiple of the GPU "
                        "count");
    ok = false;
  }
  if (gpus > 1 && p->hosts > 1 && p->gpus_per_host > 0 &&
      (int64_t)p->hosts * p->gpus_per_host != gpus) {
    dc_diag_error(d, DC_DIAG_GRAPH, no_span,
                  "%d hosts of %d GPUs are not %d GPUs", p->hosts,
                  p->gpus_per_host, gpus);
    ok = false;
  }
  return ok;
}

/* Every rank's shards, found in one pass over the plan: rank r's are
 * at[first[r] .. first[r + 1]), by class (GG_CLS_*), then table, as the
 * builder lists them in gg_ctx.local. */
typedef struct rank_shards {
  int32_t *first;        /* [n_ranks + 1] */
  int32_t *table, *shard, *cls;
  bool plan_cls[GG_N_CLS];
  int64_t plan_dims[GG_N_CLS]; /* Σ dims per gg_class_of class */
} rank_shards;

static void index_shards(const dc_point *p, const dc_shard_plan *s,
                         dc_arena *a, rank_shards *out) {
  int32_t W = s->n_ranks, T = p->n_tables;
  bool sharded = W > 1, trec = p->framework == DC_FRAMEWORK_TORCHREC;
  memset(out, 0, sizeof *out);
  out->first = dc_arena_array(a, (size_t)W + 1, sizeof(int32_t));
  int64_t total = 0;
  for (int32_t t = 0; t < T; t++) {
    out->plan_dims[gg_class_of(s->tables[t].type, trec)] += p->tables[t].dim;
    total += s->tables[t].n_shards;
    for (int32_t i = 0; i < s->tables[t].n_shards; i++)
      out->first[s->tables[t].shards[i].rank + 1]++;
  }
  for (int32_t r = 0; r < W; r++) out->first[r + 1] += out->first[r];
  size_t n = (size_t)(total > 0 ? total : 1);
  out->table = dc_arena_array_raw(a, n, sizeof(int32_t));
  out->shard = dc_arena_array_raw(a, n, sizeof(int32_t));
  out->cls = dc_arena_array_raw(a, n, sizeof(int32_t));
  int32_t *next = dc_arena_array_raw(a, (size_t)W, sizeof(int32_t));
  memcpy(next, out->first, (size_t)W * sizeof(int32_t));
  for (int32_t k = 0; k < GG_N_CLS; k++)
    for (int32_t t = 0; t < T; t++) {
      const dc_table_plan *tp = &s->tables[t];
      int32_t cls = sharded ? gg_class_of(tp->type, trec) : GG_CLS_A2A;
      if (cls != k) continue;
      out->plan_cls[k] = true;
      for (int32_t i = 0; i < tp->n_shards; i++) {
        int32_t j = next[tp->shards[i].rank]++;
        out->table[j] = t;
        out->shard[j] = i;
        out->cls[j] = k;
      }
    }
}

static void build_rank(gg_b *b, const dc_point *p, const dc_shard_plan *s,
                       const rank_shards *rs, int32_t rank,
                       dc_arena *scratch) {
  int32_t n_ranks = s->n_ranks, T = p->n_tables;
  gg_ctx c;
  memset(&c, 0, sizeof c);
  c.b = b;
  c.s = scratch;
  c.p = p;
  c.rank = rank;
  c.n_ranks = n_ranks;
  c.batch = p->batch_size / n_ranks;
  c.emb_batch = p->batch_size;
  c.autocast = p->precision == DC_PRECISION_FP16 ||
               p->precision == DC_PRECISION_BF16;
  c.adt = p->precision == DC_PRECISION_FP16   ? DC_DTYPE_FP16
          : p->precision == DC_PRECISION_BF16 ? DC_DTYPE_BF16
                                              : DC_DTYPE_FP32;
  c.gdt = p->precision == DC_PRECISION_TF32 ? DC_DTYPE_TF32 : c.adt;
  c.batched = p->embedding_kernel == DC_EMBEDDING_BATCHED;
  c.legacy = p->zero_grad_legacy;
  c.sharded = n_ranks > 1;
  c.plan = s;
  for (int32_t k = 0; k < GG_N_CLS; k++) c.chunk[k] = -1;
  c.gph = s->gpus_per_host;
  c.host = dc_shard_plan_host(s, rank);
  c.local = dc_arena_array(c.s, (size_t)T, sizeof(int32_t));
  c.sh_rows = dc_arena_array(c.s, (size_t)T, sizeof(int64_t));
  c.sh_cols = dc_arena_array(c.s, (size_t)T, sizeof(int32_t));
  c.sh_pool = dc_arena_array(c.s, (size_t)T, sizeof(double));
  int32_t lo = rs->first[rank], hi = rs->first[rank + 1];
  for (int32_t k = 0; k < GG_N_CLS; k++) {
    c.cls_batch[k] = k == GG_CLS_DP && c.sharded ? c.batch : p->batch_size;
    c.plan_cls[k] = rs->plan_cls[k];
    c.plan_dims[k] = rs->plan_dims[k];
    c.cls_first[k] = c.n_local;
    for (; lo < hi && rs->cls[lo] == k; lo++) {
      int32_t t = rs->table[lo];
      dc_shard_work w = dc_shard_plan_work(p, s, t, rs->shard[lo]);
      c.sh_rows[t] = w.rows;
      c.sh_cols[t] = w.cols;
      c.sh_pool[t] = w.pooling;
      c.local[c.n_local++] = t;
    }
  }
  c.cls_first[GG_N_CLS] = c.n_local;
  c.k = p->n_bottom - 1;
  c.m = p->n_top;

  b->rank = rank;
  b->thread = 0;
  b->coll_next = 0;
  c.trec = p->framework == DC_FRAMEWORK_TORCHREC;
  if (p->framework == DC_FRAMEWORK_FUSED) {
    gg_build_fused(&c);
    return;
  }
  if (c.trec) {
    gg_build_torchrec(&c);
    return;
  }
  gg_build_input(&c);
  gg_build_forward(&c);
  gg_build_loss(&c);
  gg_build_zero_grad(&c);
  gg_build_backward(&c);
  gg_build_step(&c);
}

dc_graph *dc_graph_build_detail(const dc_point *p, const dc_shard_plan *s,
                                dc_graph_detail detail, dc_arena *a,
                                dc_diags *d) {
  if (!check_point(p, d)) return NULL;
  if (!s) s = dc_shard_plan_default(p, a, d);
  if (!s) return NULL;
  if (!dc_shard_plan_check(p, s, d)) return NULL;
  int32_t n_ranks = s->n_ranks;
  int32_t layers = p->n_bottom + p->n_top;
  bool priced = detail == DC_GRAPH_PRICED && n_ranks > 1;
  /* ops per rank: measured 186 (DLRM_default) and 339 (DLRM_MLPerf) for
   * SGD with per-table embeddings, 146 (DLRM_MLPerf) batched; the arrays
   * double when an estimate is short. Kept tight: the arena zeroes what
   * it hands out, and a sweep builds a graph per point. A rank's tables
   * are its shards (about T/W of them) plus, in a full graph, one view
   * per received feature. */
  int64_t per_rank_tables = n_ranks > 1 ? p->n_tables / n_ranks + 1
                                        : p->n_tables;
  int64_t est = 32 + 12 * (int64_t)layers +
                (p->embedding_kernel == DC_EMBEDDING_BATCHED ? 1 : 8) *
                    per_rank_tables;
  if (p->optimizer != DC_OPTIMIZER_SGD)
    est += 6 * (int64_t)(2 * layers + per_rank_tables);
  if (n_ranks > 1 && !priced) est += p->n_tables;
  est *= n_ranks;
  if (est > (1 << 24)) est = 1 << 24;

  gg_b b;
  gg_init(&b, p, a, d, (int32_t)est);
  b.priced = priced;
  rank_shards rs;
  index_shards(p, s, a, &rs);
  int32_t *rank_first =
      dc_arena_array(a, (size_t)n_ranks + 1, sizeof(int32_t));
  /* One GPU: the rank's working arrays stay in the graph's arena (no
   * second arena per point of a sweep); several: a scratch arena reset
   * after each rank. */
  dc_arena scratch;
  dc_arena_init(&scratch);
  for (int32_t r = 0; r < n_ranks; r++) {
    rank_first[r] = b.n_ops;
    build_rank(&b, p, s, &rs, r, n_ranks > 1 ? &scratch : a);
    dc_arena_reset(&scratch);
  }
  dc_arena_free(&scratch);
  rank_first[n_ranks] = b.n_ops;
  if (b.overflow) {
    dc_diag_error(d, DC_DIAG_OVERFLOW, no_span,
                  "a tensor or kernel size of this configuration overflows "
                  "64 bits");
    return NULL;
  }
  dc_graph *g = gg_finish(&b, n_ranks, rank_first);
  g->plan = s;
  g->detail = priced ? DC_GRAPH_PRICED : DC_GRAPH_FULL;
  if (p->n_transforms > 0 && !gg_apply_transforms(g, p, a, d)) return NULL;
  return g;
}

dc_graph *dc_graph_build_plan(const dc_point *p, const dc_shard_plan *s,
                              dc_arena *a, dc_diags *d) {
  return dc_graph_build_detail(p, s, DC_GRAPH_FULL, a, d);
}

dc_graph *dc_graph_build(const dc_point *p, dc_arena *a, dc_diags *d) {
  return dc_graph_build_detail(p, NULL, DC_GRAPH_FULL, a, d);
}
