/*
 * memory.c — what one rank must hold in HBM for a training iteration under
 * a sharding plan, in bytes (no time: the planner's capacity constraint
 * and the per-rank `fits` column both come from here).
 *
 * Per rank, with B the local batch, es the activation element size (2
 * under fp16/bf16 autocast, else 4), ee the tables' storage size
 * (training.embedding_precision), optimizer state in fp32:
 *
 *   emb_weights     Σ over its shards rows·cols·ee (replicas included),
 *                   int8 rows + 4 bytes (FBGEMM's fp16 scale and bias)
 *   emb_optimizer   by training.sparse_optimizer: sgd 0; adagrad
 *                   rows·cols·4; rowwise_adagrad rows·4 per shard; adam
 *                   2 × rows·cols·4 (torch.optim / FBGEMM state)
 *   emb_grad        data-parallel replicas: a dense rows·cols·4 gradient;
 *                   per_table (sparse) gradients: lookups·cols·4 values +
 *                   lookups·8 indices; batched: none (the update is fused)
 *   dense_weights   Σ MLP and cross-net weights and biases · 4 (replicated)
 *   dense_optimizer adagrad and rowwise_adagrad 1×, adam 2× the weights
 *   dense_grad      1× the weights, 2× with DDP (W > 1: flat buckets)
 *   activations     per MLP layer B·out·es twice (linear out, activation);
 *                   dot: B·F·D·4 (cat) + B·F·F·es (bmm) + B·NI·es (index) +
 *                   B·(D+NI)·es (cat); cat: B·(D + Σ dims)·4; dcn:
 *                   that cat, and per cross layer B·N·12 (bias add,
 *                   product, residual, fp32) + B·N·es + B·R·es (GEMMs);
 *                   the pooled
 *                   outputs of its shards batch·cols·4; with W > 1 the
 *                   received features B·Σ dims·4
 *   inputs          indices Σ lookups·8, offsets Σ (batch+1)·8 per shard,
 *                   dense B·n0·4, targets B·out·4
 *   workspace       transient buffers of the backward: twice the largest
 *                   gradient tensor it creates (dot: B·F·D·4, cat:
 *                   B·(D + Σ dims)·4, an MLP layer: B·width·es — the one
 *                   being produced and the one consumed), and with W > 1
 *                   the exchanged embedding gradients: B·Σ dims·4 sent
 *                   back plus batch·cols·4 per shard received. Every term
 *                   is per shard or independent of the plan, so the
 *                   planner's per-shard increments stay exact.
 *
 * Tables beyond HBM (point.h's dc_table_memory): a uvm shard's weights
 * and optimizer state are in its host's memory (host_bytes), nothing of
 * them in HBM; a uvm_caching shard adds the same to host_bytes and holds
 * its cache in HBM as emb_weights: cache_load_factor × rows slots of a
 * row plus 16 bytes (FBGEMM's cache state and LRU/LFU counter, int64
 * each). FBGEMM keeps the optimizer state of both in host memory.
 *
 * It is an upper bound of the peak (everything saved for the backward is
 * counted live at once; the caching allocator's rounding is not), which
 * is what a capacity planner needs. Sums saturate at INT64_MAX.
 * dc_shard_memory gives one shard's per-shard terms alone (rank-
 * independent), so the planner prices a candidate in O(its shards)
 * instead of re-walking every table for each.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graphgen/graphgen_int.h"

typedef struct macc {
  bool ovf;
} macc;

static int64_t mul(macc *m, int64_t a, int64_t b) {
  int64_t r;
  if (!dc_mul_i64(a, b, &r)) {
    m->ovf = true;
    return INT64_MAX;
  }
  return r;
}

static int64_t add(macc *m, int64_t a, int64_t b) {
  int64_t r;
  if (!dc_add_i64(a, b, &r)) {
    m->ovf = true;
    return INT64_MAX;
  }
  return r;
}

static int64_t lookups(int64_t batch, double pooling) {
  double n = (double)batch * pooling + 0.5;
  if (n < 1) return 1;
  return dc_f64_sat_i64(n);
}

/* Rows of a uvm_caching shard's HBM cache: cache_load_factor × rows, at
 * least one (gg_emb_group_of's). */
static int64_t cache_slots(const dc_point *p, int64_t rows) {
  double cr = ceil(p->cache_load_factor * (double)rows);
  return cr < 1 ? 1 : cr > (double)rows ? rows : (int64_t)cr;
}

/* Adds shard i of table t (on whatever rank it is) to *out's per-shard
 * terms. */
static void add_shard(macc *m, const dc_point *p, const dc_shard_plan *s,
                      int32_t t, int32_t i, dc_rank_memory *out) {
  const dc_table_plan *tp = &s->tables[t];
  const dc_shard *sh = &tp->shards[i];
  int32_t W = s->n_ranks < 1 ? 1 : s->n_ranks;
  bool batched = p->embedding_kernel == DC_EMBEDDING_BATCHED;
  dc_dtype edt = dc_storage_dtype(p->embedding_precision);
  dc_shard_work w = dc_shard_plan_work(p, s, t, i);
  int64_t elems = mul(m, sh->rows, sh->cols);
  int64_t wb = mul(m, sh->rows, dc_emb_row_bytes(edt, sh->cols));
  int64_t st = dc_optimizer_state_bytes(p->sparse_optimizer, sh->rows, elems);
  if (st == INT64_MAX) m->ovf = true;
  dc_table_memory where = p->tables[t].memory;
  if (where == DC_MEMORY_UVM || where == DC_MEMORY_UVM_CACHING) {
    out->host_bytes = add(m, out->host_bytes, add(m, wb, st));
    if (where == DC_MEMORY_UVM_CACHING) {
      int64_t slots = cache_slots(p, sh->rows);
      out->emb_weights =
          add(m, out->emb_weights,
              mul(m, slots, add(m, dc_emb_row_bytes(edt, sh->cols), 16)));
    }
  } else {
    out->emb_weights = add(m, out->emb_weights, wb);
    out->emb_optimizer = add(m, out->emb_optimizer, st);
  }
  int64_t n = lookups(w.batch, w.pooling);
  bool dp = tp->type == DC_SHARDING_DATA_PARALLEL && W > 1;
  if (dp)
    out->emb_grad = add(m, out->emb_grad, wb);
  else if (!batched)
    out->emb_grad = add(m, out->emb_grad,
                        mul(m, n, add(m, mul(m, w.cols, 4), 8)));
  out->activations =
      add(m, out->activations, mul(m, mul(m, w.batch, w.cols), 4));
  out->inputs = add(m, out->inputs,
                    add(m, mul(m, n, 8), mul(m, add(m, w.batch, 1), 8)));
  if (W > 1)
    out->workspace =
        add(m, out->workspace, mul(m, mul(m, w.batch, w.cols), 4));
}

static int64_t shard_terms_total(macc *m, const dc_rank_memory *x) {
  int64_t tot = 0;
  tot = add(m, tot, x->emb_weights);
  tot = add(m, tot, x->emb_optimizer);
  tot = add(m, tot, x->emb_grad);
  tot = add(m, tot, x->activations);
  tot = add(m, tot, x->inputs);
  tot = add(m, tot, x->workspace);
  return tot;
}

bool dc_shard_host_memory(const dc_point *p, const dc_shard_plan *s,
                          int32_t t, int32_t i, int64_t *bytes) {
  macc m = {false};
  dc_rank_memory x;
  memset(&x, 0, sizeof x);
  add_shard(&m, p, s, t, i, &x);
  *bytes = x.host_bytes;
  return !m.ovf;
}

bool dc_shard_memory(const dc_point *p, const dc_shard_plan *s, int32_t t,
                     int32_t i, int64_t *bytes) {
  macc m = {false};
  dc_rank_memory x;
  memset(&x, 0, sizeof x);
  add_shard(&m, p, s, t, i, &x);
  *bytes = shard_terms_total(&m, &x);
  return !m.ovf;
}

static int64_t sum_dims_of(const dc_point *p) {
  int64_t sum_dims = 0;
  for (int32_t t = 0; t < p->n_tables; t++) sum_dims += p->tables[t].dim;
  return sum_dims;
}

/* What a rank holds besides its shards (the MLPs, the interaction, the
 * batch, the exchange's buffers), added to *out after its shards. */
static void rank_rest(macc *mp, const dc_point *p, const dc_shard_plan *s,
                      int64_t sum_dims, dc_rank_memory *out) {
  macc m = *mp;
  int32_t W = s->n_ranks < 1 ? 1 : s->n_ranks;
  int64_t B = p->batch_size / W;
  bool half = p->precision == DC_PRECISION_FP16 ||
              p->precision == DC_PRECISION_BF16;
  int64_t es = half ? 2 : 4;

  /* the MLPs: bottom [n0, b1..bk], top [in, t1..tm] */
  int64_t D = p->bottom_mlp[p->n_bottom - 1];
  int64_t F = p->n_tables + 1;
  int64_t top_in = dc_point_top_in(p);
  int64_t NI = p->interaction_self ? F * (F + 1) / 2 : F * (F - 1) / 2;
  int64_t params = dc_point_cross_params(p), big = 0;
  for (int32_t i = 1; i < p->n_bottom; i++) {
    params = add(&m, params,
                 mul(&m, p->bottom_mlp[i], p->bottom_mlp[i - 1] + 1));
    out->activations = add(&m, out->activations,
                           mul(&m, mul(&m, B, p->bottom_mlp[i]), 2 * es));
    int64_t gb = mul(&m, mul(&m, B, p->bottom_mlp[i]), es);
    if (gb > big) big = gb;
  }
  int64_t in = top_in;
  for (int32_t i = 0; i < p->n_top; i++) {
    params = add(&m, params, mul(&m, p->top_mlp[i], in + 1));
    out->activations = add(&m, out->activations,
                           mul(&m, mul(&m, B, p->top_mlp[i]), 2 * es));
    int64_t gb = mul(&m, mul(&m, B, p->top_mlp[i]), es);
    if (gb > big) big = gb;
    in = p->top_mlp[i];
  }
  int64_t ig = p->interaction == DC_INTERACTION_DOT
                   ? mul(&m, mul(&m, B, mul(&m, F, D)), 4)
                   : mul(&m, mul(&m, B, D + sum_dims), 4);
  if (ig > big) big = ig;
  out->workspace = add(&m, out->workspace, mul(&m, big, 2));
  if (W > 1)
    out->workspace =
        add(&m, out->workspace, mul(&m, mul(&m, B, sum_dims), 4));
  out->dense_weights = mul(&m, params, 4);
  int64_t ds = 0;
  if (p->optimizer == DC_OPTIMIZER_ADAGRAD ||
      p->optimizer == DC_OPTIMIZER_ROWWISE_ADAGRAD)
    ds = out->dense_weights;
  else if (p->optimizer == DC_OPTIMIZER_ADAM)
    ds = mul(&m, out->dense_weights, 2);
  out->dense_optimizer = ds;
  out->dense_grad = mul(&m, out->dense_weights, W > 1 ? 2 : 1);

  int64_t inter;
  if (p->interaction == DC_INTERACTION_DOT) {
    inter = mul(&m, mul(&m, B, mul(&m, F, D)), 4);
    inter = add(&m, inter, mul(&m, mul(&m, B, mul(&m, F, F)), es));
    inter = add(&m, inter, mul(&m, mul(&m, B, NI), es));
    inter = add(&m, inter, mul(&m, mul(&m, B, D + NI), es));
  } else {
    inter = mul(&m, mul(&m, B, D + sum_dims), 4);
  }
  if (p->interaction == DC_INTERACTION_DCN) {
    /* per cross layer: x·V [B, R] (or x·K [B, N]) and x·V·W [B, N] in
     * es, the bias add, the product and the residual add [B, N] fp32 */
    int64_t N = D + sum_dims, R = p->dcn_low_rank;
    int64_t per = mul(&m, mul(&m, B, N), 12);
    per = add(&m, per, mul(&m, mul(&m, B, N), es));
    if (R > 0) per = add(&m, per, mul(&m, mul(&m, B, R), es));
    inter = add(&m, inter, mul(&m, per, p->dcn_layers));
  }
  out->activations = add(&m, out->activations, inter);
  if (W > 1)
    out->activations =
        add(&m, out->activations, mul(&m, mul(&m, B, sum_dims), 4));
  out->inputs = add(&m, out->inputs,
                    mul(&m, mul(&m, B, p->bottom_mlp[0]), 4));
  out->inputs = add(&m, out->inputs,
                    mul(&m, mul(&m, B, p->top_mlp[p->n_top - 1]), 4));

  int64_t tot = 0;
  tot = add(&m, tot, out->emb_weights);
  tot = add(&m, tot, out->emb_optimizer);
  tot = add(&m, tot, out->emb_grad);
  tot = add(&m, tot, out->dense_weights);
  tot = add(&m, tot, out->dense_optimizer);
  tot = add(&m, tot, out->dense_grad);
  tot = add(&m, tot, out->activations);
  tot = add(&m, tot, out->inputs);
  tot = add(&m, tot, out->workspace);
  out->total = tot;
  *mp = m;
}

bool dc_shard_plan_memory(const dc_point *p, const dc_shard_plan *s,
                          int32_t rank, dc_rank_memory *out) {
  macc m = {false};
  memset(out, 0, sizeof *out);
  for (int32_t t = 0; t < s->n_tables; t++) {
    const dc_table_plan *tp = &s->tables[t];
    for (int32_t i = 0; i < tp->n_shards; i++)
      if (tp->shards[i].rank == rank) add_shard(&m, p, s, t, i, out);
  }
  rank_rest(&m, p, s, sum_dims_of(p), out);
  return !m.ovf;
}

bool dc_shard_plan_memory_all(const dc_point *p, const dc_shard_plan *s,
                              dc_rank_memory *out) {
  int32_t W = s->n_ranks < 1 ? 1 : s->n_ranks;
  macc *m = dc_xcalloc((size_t)W, sizeof *m);
  memset(out, 0, (size_t)W * sizeof *out);
  /* each rank's shards in the order dc_shard_plan_memory adds them */
  for (int32_t t = 0; t < s->n_tables; t++) {
    const dc_table_plan *tp = &s->tables[t];
    for (int32_t i = 0; i < tp->n_shards; i++) {
      int32_t r = tp->shards[i].rank;
      if (r >= 0 && r < W) add_shard(&m[r], p, s, t, i, &out[r]);
    }
  }
  int64_t sum_dims = sum_dims_of(p);
  bool ok = true;
  for (int32_t r = 0; r < W; r++) {
    rank_rest(&m[r], p, s, sum_dims, &out[r]);
    ok &= !m[r].ovf;
  }
  free(m);
  return ok;
}
