/*
 * planner.c — the `plan: auto` sharding planner (planner.h).
 *
 * Model. The embedding part of an iteration is synchronised by its
 * collectives: every rank's lookups must finish before the all-to-all (or
 * reduce-scatter) can, and the backward lookups wait for the gradients'
 * exchange. So the planner's objective for a plan is
 *
 *   cost = max_r fwd_r + max_r bwd_r + exchange + dp
 *
 * with fwd_r, bwd_r the summed prices (dc_kernel_time, the same models the
 * evaluator uses) of the embedding forward and backward kernels of rank
 * r's shards, `exchange` the prices of the collectives the plan needs —
 * the all-to-all forward at the largest rank's send buffer and backward at
 * B·Σdims·4, each host's TWRW reduce-scatter and all-gather (the slowest
 * host), the row-wise reduce-scatter and all-gather — and `dp` the data-
 * parallel tables' gradient all-reduces, zero-fills and dense updates. The
 * MLPs cost the same on every rank whatever the plan, so they are left
 * out. Memory is dc_shard_plan_memory's (graphgen/memory.c): a plan is
 * feasible when every rank's total ≤ HBM × hbm_fraction.
 *
 * Candidates per table: table_wise on each rank; column_wise in
 * n = min(W, D/32) blocks on n consecutive ranks (each start); row_wise;
 * table_row_wise on each host (more than one GPU per host); data_parallel;
 * filtered by the table's constraints (its fixed type, pinned ranks) and
 * the allowed types. Each candidate is priced once (kernel times per
 * shard, memory per shard as its increment over the empty plan).
 *
 * Search. (1) Greedy: tables by decreasing table-wise kernel time (then
 * size, then index), each given the feasible candidate that minimises the
 * cost of the partial plan (ties: smaller fullest rank, then candidate
 * order). (2) Local search: move a table of the slowest rank to the best
 * other candidate while that lowers the cost, at most 4·T moves. The same
 * local search also starts from greedy-by-size table-wise placement (the
 * default plan), and the cheaper result wins, so the planner never does
 * worse, under its own model, than the baseline it must beat.
 *
 * Cost of planning: C candidates per table (C ≤ 2W + H + 2), one cost
 * evaluation O(Σ shards + W) with a handful of collective prices; greedy
 * does T·C evaluations, each local-search move ≤ T·C. Memory per
 * candidate is precomputed in O(T) per shard. For 100 tables on 16 GPUs
 * that is a few thousand evaluations: milliseconds.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/planner.h"
#include "runtime/planner_torchrec.h"
#include "runtime/runtime.h"

typedef struct cand {
  dc_table_plan tp;
  double *fwd_us, *bwd_us; /* per shard */
  int64_t *mem;            /* per shard, bytes over the empty plan */
  double dp_us;            /* data-parallel: all-reduce + fill + update */
  int64_t rows_dim;
} cand;

typedef struct pctx {
  const dc_point *p;
  const dc_plan_opts *o;
  dc_arena *a;
  int32_t W, H, S, T;
  cand **cands;
  int32_t *n_cands;
  int32_t *cur;    /* chosen candidate per table, -1: not yet placed */
  dc_shard_plan *s;
  int64_t base_mem;
  double cap;
  double *rf, *rb, *send, *twrw;
  int64_t *rm;
} pctx;

static double ktime(const pctx *c, const dc_kernel *k) {
  return dc_kernel_time(k, c->o->dev, c->o->models);
}

static double emb_price(const pctx *c, dc_kernel_kind kind,
                        const dc_shard_work *w) {
  dc_emb_group g = {1, w->rows, w->cols, w->pooling};
  dc_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = kind;
  k.scale = 1;
  k.u.emb.batch = w->batch;
  k.u.emb.n_groups = 1;
  k.u.emb.groups = &g;
  k.u.emb.dtype = dc_storage_dtype(c->p->embedding_precision);
  k.u.emb.optimizer = c->p->sparse_optimizer;
  k.u.emb.fused_optimizer =
      c->p->embedding_kernel == DC_EMBEDDING_BATCHED;
  k.u.emb.model = c->p->embedding_model;
  return ktime(c, &k);
}

static double coll_price(const pctx *c, dc_kernel_kind kind, double bytes,
                         int32_t ranks, int32_t hosts) {
  if (ranks < 2) return 0;
  dc_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = kind;
  k.scale = 1;
  k.u.coll.bytes = bytes > 9e18 ? INT64_MAX : (int64_t)bytes;
  k.u.coll.ranks = ranks;
  k.u.coll.hosts = hosts;
  return ktime(c, &k);
}

static double ew_price(const pctx *c, int64_t elems, double flops,
                       double bytes) {
  dc_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = DC_KERNEL_ELEMENTWISE;
  k.scale = 1;
  k.u.ew.elements = elems;
  k.u.ew.flops_per_elem = flops;
  k.u.ew.bytes_per_elem = bytes;
  return ktime(c, &k);
}

static int32_t opt_steps(dc_optimizer o) {
  switch (o) {
  case DC_OPTIMIZER_SGD: return 1;
  case DC_OPTIMIZER_ADAGRAD:
  case DC_OPTIMIZER_ROWWISE_ADAGRAD: return 4;
  case DC_OPTIMIZER_ADAM: return 7;
  }
  return 1;
}

/* Prices candidate `x` of table t (its shards set in x->tp). */
static void price_cand(pctx *c, int32_t t, cand *x) {
  const dc_point *p = c->p;
  int32_t n = x->tp.n_shards;
  x->fwd_us = dc_arena_array(c->a, (size_t)n, sizeof(double));
  x->bwd_us = dc_arena_array(c->a, (size_t)n, sizeof(double));
  x->mem = dc_arena_array(c->a, (size_t)n, sizeof(int64_t));
  dc_table_plan saved = c->s->tables[t];
  c->s->tables[t] = x->tp;
  for (int32_t i = 0; i < n; i++) {
    dc_shard_work w = dc_shard_plan_work(p, c->s, t, i);
    x->fwd_us[i] = emb_price(c, DC_KERNEL_EMBEDDING_FWD, &w);
    x->bwd_us[i] = emb_price(c, DC_KERNEL_EMBEDDING_BWD, &w);
    dc_rank_memory m;
    dc_shard_plan_memory(p, c->s, x->tp.shards[i].rank, &m);
    x->mem[i] = m.total - c->base_mem;
  }
  c->s->tables[t] = saved;
  x->rows_dim = p->tables[t].rows * (int64_t)p->tables[t].dim;
  x->dp_us = 0;
  if (x->tp.type == DC_SHARDING_DATA_PARALLEL && c->W > 1) {
    int64_t e = x->rows_dim;
    x->dp_us = coll_price(c, DC_KERNEL_ALL_REDUCE, (double)e * 4, c->W,
                          c->H) +
               ew_price(c, e, 0, 4) +
               ew_price(c, e, 1, 12.0 * opt_steps(p->optimizer));
  }
}

static uint32_t allowed_of(const pctx *c, int32_t t) {
  return dc_plan_table_types(c->p, c->o, t);
}

static bool pinned_has(const dc_table *tb, int32_t r) {
  for (int32_t i = 0; i < tb->n_ranks; i++)
    if (tb->ranks[i] == r) return true;
  return false;
}

static void add_cand(pctx *c, int32_t t, dc_sharding type, int32_t n,
                     const int32_t *ranks, cand *out, int32_t *k) {
  dc_diags quiet = {0};
  dc_shard_plan *tmp = c->s;
  dc_table_plan saved = tmp->tables[t];
  bool ok = dc_shard_plan_set(tmp, c->p, t, type, n, ranks, c->a, &quiet);
  dc_diags_free(&quiet);
  if (ok) {
    out[*k].tp = tmp->tables[t];
    (*k)++;
  }
  tmp->tables[t] = saved;
}

static void make_cands(pctx *c, int32_t t) {
  const dc_table *tb = &c->p->tables[t];
  uint32_t m = allowed_of(c, t);
  int32_t W = c->W, cap = 2 * W + c->H + 2;
  cand *x = dc_arena_array(c->a, (size_t)cap, sizeof(cand));
  int32_t k = 0;
  int32_t *rk = dc_arena_array(c->a, (size_t)W, sizeof(int32_t));
  bool pinned = tb->n_ranks > 0;
  if (m & DC_PLAN_TYPE(DC_SHARDING_TABLE_WISE))
    for (int32_t r = 0; r < W; r++)
      if (!pinned || pinned_has(tb, r)) {
        rk[0] = r;
        add_cand(c, t, DC_SHARDING_TABLE_WISE, 1, rk, x, &k);
      }
  if ((m & DC_PLAN_TYPE(DC_SHARDING_COLUMN_WISE)) && W > 1) {
    if (pinned) {
      add_cand(c, t, DC_SHARDING_COLUMN_WISE, tb->n_ranks, tb->ranks, x, &k);
    } else {
      int32_t n = tb->dim / 32;
      if (n > W) n = W;
      if (n >= 2)
        for (int32_t r = 0; r < W; r++) {
          for (int32_t i = 0; i < n; i++) rk[i] = (r + i) % W;
          add_cand(c, t, DC_SHARDING_COLUMN_WISE, n, rk, x, &k);
        }
    }
  }
  if ((m & DC_PLAN_TYPE(DC_SHARDING_ROW_WISE)) && W > 1 &&
      (!pinned || tb->n_ranks == W))
    add_cand(c, t, DC_SHARDING_ROW_WISE, 0, NULL, x, &k);
  if ((m & DC_PLAN_TYPE(DC_SHARDING_TABLE_ROW_WISE)) && c->S > 1 &&
      c->H > 1)
    for (int32_t h = 0; h < c->H; h++) {
      rk[0] = h * c->S;
      bool ok = !pinned;
      for (int32_t i = 0; i < tb->n_ranks; i++)
        if (tb->ranks[i] / c->S == h) ok = true;
      if (ok) add_cand(c, t, DC_SHARDING_TABLE_ROW_WISE, 1, rk, x, &k);
    }
  if ((m & DC_PLAN_TYPE(DC_SHARDING_DATA_PARALLEL)) && W > 1 &&
      (!pinned || tb->n_ranks == W))
    add_cand(c, t, DC_SHARDING_DATA_PARALLEL, 0, NULL, x, &k);
  if (W == 1 && k == 0) {
    rk[0] = 0;
    add_cand(c, t, DC_SHARDING_TABLE_WISE, 1, rk, x, &k);
  }
  for (int32_t i = 0; i < k; i++) price_cand(c, t, &x[i]);
  c->cands[t] = x;
  c->n_cands[t] = k;
}

/* The objective of the current (possibly partial) assignment. */
static void eval(pctx *c, dc_plan_cost *out) {
  const dc_point *p = c->p;
  int32_t W = c->W;
  double Bg = (double)p->batch_size, B = Bg / W;
  for (int32_t r = 0; r < W; r++) {
    c->rf[r] = c->rb[r] = c->send[r] = 0;
    c->rm[r] = c->base_mem;
  }
  for (int32_t h = 0; h < c->H; h++) c->twrw[h] = 0;
  double d_a2a = 0, d_rw = 0, dp = 0;
  for (int32_t t = 0; t < c->T; t++) {
    if (c->cur[t] < 0) continue;
    const cand *x = &c->cands[t][c->cur[t]];
    double dim = p->tables[t].dim;
    for (int32_t i = 0; i < x->tp.n_shards; i++) {
      const dc_shard *sh = &x->tp.shards[i];
      c->rf[sh->rank] += x->fwd_us[i];
      c->rb[sh->rank] += x->bwd_us[i];
      c->rm[sh->rank] += x->mem[i];
      if (x->tp.type == DC_SHARDING_TABLE_WISE ||
          x->tp.type == DC_SHARDING_COLUMN_WISE)
        c->send[sh->rank] += Bg * sh->cols * 4;
      else if (x->tp.type == DC_SHARDING_TABLE_ROW_WISE)
        c->send[sh->rank] += Bg / c->S * sh->cols * 4;
    }
    switch (x->tp.type) {
    case DC_SHARDING_TABLE_WISE:
    case DC_SHARDING_COLUMN_WISE: d_a2a += dim; break;
    case DC_SHARDING_TABLE_ROW_WISE:
      d_a2a += dim;
      c->twrw[x->tp.host] += dim;
      break;
    case DC_SHARDING_ROW_WISE: d_rw += dim; break;
    case DC_SHARDING_DATA_PARALLEL: dp += x->dp_us; break;
    default: break;
    }
  }
  memset(out, 0, sizeof *out);
  double comm = 0;
  if (W > 1) {
    if (d_a2a > 0) {
      double mx = 0;
      for (int32_t r = 0; r < W; r++)
        if (c->send[r] > mx) mx = c->send[r];
      comm += coll_price(c, DC_KERNEL_ALL_TO_ALL, mx, W, c->H);
      comm += coll_price(c, DC_KERNEL_ALL_TO_ALL, B * d_a2a * 4, W, c->H);
    }
    double tw = 0;
    for (int32_t h = 0; h < c->H; h++)
      if (c->twrw[h] > 0) {
        double x =
            coll_price(c, DC_KERNEL_REDUCE_SCATTER, Bg * c->twrw[h] * 4,
                       c->S, 1) +
            coll_price(c, DC_KERNEL_ALL_GATHER, Bg * c->twrw[h] * 4, c->S,
                       1);
        if (x > tw) tw = x;
      }
    comm += tw;
    if (d_rw > 0)
      comm += coll_price(c, DC_KERNEL_REDUCE_SCATTER, Bg * d_rw * 4, W,
                         c->H) +
              coll_price(c, DC_KERNEL_ALL_GATHER, Bg * d_rw * 4, W, c->H);
  }
  int32_t slow = 0;
  for (int32_t r = 0; r < W; r++) {
    if (c->rf[r] > out->max_fwd_us) out->max_fwd_us = c->rf[r];
    if (c->rb[r] > out->max_bwd_us) out->max_bwd_us = c->rb[r];
    if (c->rf[r] + c->rb[r] > c->rf[slow] + c->rb[slow]) slow = r;
    if (c->rm[r] > out->max_mem_bytes) out->max_mem_bytes = c->rm[r];
  }
  out->max_bwd_us += dp;
  out->comm_us = comm;
  out->slowest_rank = slow;
  out->total_us = out->max_fwd_us + out->max_bwd_us + comm;
  out->fits = (double)out->max_mem_bytes <= c->cap;
}

static bool better(const dc_plan_cost *x, const dc_plan_cost *best) {
  if (x->total_us < best->total_us * (1 - 1e-12)) return true;
  if (x->total_us > best->total_us * (1 + 1e-12)) return false;
  return x->max_mem_bytes < best->max_mem_bytes;
}

static void init_ctx(pctx *c, const dc_point *p, const dc_plan_opts *o,
                     dc_arena *a) {
  memset(c, 0, sizeof *c);
  c->p = p;
  c->o = o;
  c->a = a;
  c->s = dc_shard_plan_new(p, a);
  c->W = c->s->n_ranks;
  c->H = c->s->hosts;
  c->S = c->s->gpus_per_host;
  c->T = p->n_tables;
  dc_rank_memory m;
  dc_shard_plan_memory(p, c->s, 0, &m);
  c->base_mem = m.total;
  double f = o->hbm_fraction > 0 ? o->hbm_fraction : 1.0;
  c->cap = (double)o->dev->hbm_bytes * f;
  size_t W = (size_t)c->W, T = (size_t)(c->T > 0 ? c->T : 1);
  c->rf = dc_arena_array(a, W, sizeof(double));
  c->rb = dc_arena_array(a, W, sizeof(double));
  c->send = dc_arena_array(a, W, sizeof(double));
  c->rm = dc_arena_array(a, W, sizeof(int64_t));
  c->twrw = dc_arena_array(a, (size_t)c->H, sizeof(double));
  c->cands = dc_arena_array(a, T, sizeof(cand *));
  c->n_cands = dc_arena_array(a, T, sizeof(int32_t));
  c->cur = dc_arena_array(a, T, sizeof(int32_t));
  for (int32_t t = 0; t < c->T; t++) c->cur[t] = -1;
}

/* Moves a table of the slowest rank while the cost drops. */
static void local_search(pctx *c, dc_plan_cost *cost) {
  eval(c, cost);
  for (int32_t it = 0; it < 4 * c->T; it++) {
    eval(c, cost); /* refreshes the per-rank sums of the current plan */
    int32_t slow = cost->slowest_rank, bt = -1, bc = -1, heavy = 0;
    for (int32_t r = 1; r < c->W; r++)
      if (c->send[r] > c->send[heavy]) heavy = r;
    dc_plan_cost best = *cost;
    for (int32_t t = 0; t < c->T; t++) {
      const cand *x = &c->cands[t][c->cur[t]];
      bool on = false;
      for (int32_t i = 0; i < x->tp.n_shards; i++)
        on |= x->tp.shards[i].rank == slow || x->tp.shards[i].rank == heavy;
      if (!on) continue;
      int32_t keep = c->cur[t];
      for (int32_t k = 0; k < c->n_cands[t]; k++) {
        if (k == keep) continue;
        c->cur[t] = k;
        dc_plan_cost y;
        eval(c, &y);
        if (y.fits && better(&y, &best)) {
          best = y;
          bt = t;
          bc = k;
        }
      }
      c->cur[t] = keep;
    }
    if (bt < 0) break;
    c->cur[bt] = bc;
    *cost = best;
  }
  eval(c, cost);
}


typedef struct worder {
  int32_t t;
  double w;
  int64_t size;
} worder;

static int cmp_worder(const void *a, const void *b) {
  const worder *x = a, *y = b;
  if (x->w != y->w) return x->w > y->w ? -1 : 1;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  return x->t < y->t ? -1 : x->t > y->t;
}

static void materialize(pctx *c, dc_shard_plan *out) {
  for (int32_t t = 0; t < c->T; t++) out->tables[t] = c->cands[t][c->cur[t]].tp;
}

void dc_plan_cost_of(const dc_point *p, const dc_shard_plan *s,
                     const dc_plan_opts *o, dc_arena *a, dc_plan_cost *out) {
  if (p->objective == DC_OBJECTIVE_TORCHREC) {
    dc_plan_cost_torchrec(p, s, o, a, out);
    return;
  }
  pctx c;
  init_ctx(&c, p, o, a);
  for (int32_t t = 0; t < c.T; t++) {
    c.cands[t] = dc_arena_array(a, 1, sizeof(cand));
    c.cands[t][0].tp = s->tables[t];
    price_cand(&c, t, &c.cands[t][0]);
    c.n_cands[t] = 1;
    c.cur[t] = 0;
  }
  eval(&c, out);
}

dc_shard_plan *dc_plan_auto(const dc_point *p, const dc_plan_opts *o,
                            dc_arena *a, dc_diags *d, dc_plan_cost *cost) {
  if (p->objective == DC_OBJECTIVE_TORCHREC)
    return dc_plan_auto_torchrec(p, o, a, d, cost);
  pctx c;
  init_ctx(&c, p, o, a);
  for (int32_t t = 0; t < c.T; t++) {
    make_cands(&c, t);
    if (c.n_cands[t] == 0) {
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_SHARDING, p->tables[t].span,
          "table '%s' has no placement its constraints allow",
          p->tables[t].name ? p->tables[t].name : "?");
      dc_diag_set_help(g, "check its sharding type and pinned ranks");
      return NULL;
    }
  }
  /* (1) greedy, heaviest first */
  worder *ord = dc_arena_array(a, (size_t)(c.T > 0 ? c.T : 1), sizeof *ord);
  for (int32_t t = 0; t < c.T; t++) {
    const cand *x = &c.cands[t][0];
    double w = 0;
    for (int32_t i = 0; i < x->tp.n_shards; i++)
      w += x->fwd_us[i] + x->bwd_us[i];
    ord[t] = (worder){t, w, x->rows_dim};
  }
  qsort(ord, (size_t)c.T, sizeof *ord, cmp_worder);
  for (int32_t i = 0; i < c.T; i++) {
    int32_t t = ord[i].t, bk = -1;
    dc_plan_cost best = {0};
    for (int32_t k = 0; k < c.n_cands[t]; k++) {
      c.cur[t] = k;
      dc_plan_cost y;
      eval(&c, &y);
      if (!y.fits) continue;
      if (bk < 0 || better(&y, &best)) {
        best = y;
        bk = k;
      }
    }
    if (bk < 0) {
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_NO_PLAN, p->tables[t].span,
          "no placement of table '%s' fits in the %d GPUs' memory",
          p->tables[t].name ? p->tables[t].name : "?", c.W);
      dc_diag_set_help(g, "add GPUs, use GPUs with more HBM, or shrink "
                          "the tables or the batch");
      return NULL;
    }
    c.cur[t] = bk;
  }
  dc_plan_cost g1;
  local_search(&c, &g1);
  int32_t *keep = dc_arena_array(a, (size_t)(c.T > 0 ? c.T : 1),
                                 sizeof(int32_t));
  memcpy(keep, c.cur, (size_t)c.T * sizeof(int32_t));

  /* (2) the same search from greedy-by-size table-wise placement */
  dc_diags quiet = {0};
  dc_shard_plan *base = dc_shard_plan_default(p, a, &quiet);
  dc_diags_free(&quiet);
  bool have = base != NULL;
  for (int32_t t = 0; have && t < c.T; t++) {
    int32_t found = -1;
    for (int32_t k = 0; k < c.n_cands[t] && found < 0; k++) {
      const dc_table_plan *x = &c.cands[t][k].tp;
      const dc_table_plan *y = &base->tables[t];
      if (x->type == y->type && x->n_shards == y->n_shards &&
          memcmp(x->shards, y->shards,
                 (size_t)x->n_shards * sizeof(dc_shard)) == 0)
        found = k;
    }
    if (found < 0) have = false;
    else c.cur[t] = found;
  }
  if (have) {
    dc_plan_cost g0;
    eval(&c, &g0);
    if (g0.fits) {
      dc_plan_cost g2;
      local_search(&c, &g2);
      if (!better(&g2, &g1)) memcpy(c.cur, keep, (size_t)c.T * sizeof *keep);
    } else {
      memcpy(c.cur, keep, (size_t)c.T * sizeof *keep);
    }
  } else {
    memcpy(c.cur, keep, (size_t)c.T * sizeof *keep);
  }
  dc_shard_plan *out = dc_shard_plan_new(p, a);
  materialize(&c, out);
  if (cost) eval(&c, cost);
  return out;
}

void dc_plan_shard_times(const dc_point *p, const dc_shard_plan *s,
                         int32_t table, int32_t shard, const dc_device *dev,
                         const dc_kmodels *km, double *fwd_us,
                         double *bwd_us) {
  dc_plan_opts o = {.dev = dev, .models = km};
  pctx c;
  memset(&c, 0, sizeof c);
  c.p = p;
  c.o = &o;
  dc_shard_work w = dc_shard_plan_work(p, s, table, shard);
  *fwd_us = emb_price(&c, DC_KERNEL_EMBEDDING_FWD, &w);
  *bwd_us = emb_price(&c, DC_KERNEL_EMBEDDING_BWD, &w);
}

dc_graph *dc_plan_build_graph(const dc_point *p, dc_arena *a, dc_diags *d) {
  if (p->gpus <= 1 || p->sharding != DC_SHARDING_AUTO)
    return dc_graph_build(p, a, d);
  dc_device dev;
  if (!dc_device_of_point(p, &dev, a, d)) return NULL;
  dc_plan_opts o = {.dev = &dev, .models = dc_kmodels_for(&dev)};
  /* When no placement fits, the point still gets a row (fits = false):
   * the greedy default plan, as the capacity question needs. Constraint
   * errors (E0502) are real errors. */
  dc_diags pd = {0};
  dc_shard_plan *s = dc_plan_auto(p, &o, a, &pd, NULL);
  bool no_fit = !s && pd.count > 0 && pd.items[0].code == DC_DIAG_NO_PLAN;
  if (!s && !no_fit) {
    for (size_t i = 0; i < pd.count; i++) {
      dc_diag *g = dc_diag_error(d, pd.items[i].code, pd.items[i].span, "%s",
                                 pd.items[i].message);
      if (pd.items[i].help) dc_diag_set_help(g, "%s", pd.items[i].help);
    }
    dc_diags_free(&pd);
    return NULL;
  }
  dc_diags_free(&pd);
  if (!s) return dc_graph_build(p, a, d);
  return dc_graph_build_plan(p, s, a, d);
}
