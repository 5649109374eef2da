/*
 * planner.c — the `plan: auto` sharding planner (plan.h).
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
 * B·Σdims, both in the bytes the graph sends (dc_pooled_wire_bytes: half
 * precision in the fused style, comm_precision's codec when it
 * quantizes), each host's TWRW reduce-scatter and all-gather (the slowest
 * host), the row-wise reduce-scatter and all-gather — and `dp` the data-
 * parallel tables' gradient all-reduces, zero-fills and dense updates
 * (each update the optimizer's recipe, graphgen's dc_optimizer_cost). The
 * MLPs cost the same on every rank whatever the plan, so they are left
 * out. Memory is dc_shard_plan_memory's (graphgen/memory.c): a plan is
 * feasible when every rank's total ≤ HBM × hbm_fraction.
 *
 * Candidates per table (candidates.c): table_wise on each rank;
 * column_wise in n = min(W, D/32) blocks on n consecutive ranks (each
 * start); row_wise; table_row_wise on each host (more than one GPU per
 * host); data_parallel; filtered by the table's constraints (its fixed
 * type, pinned ranks) and the allowed types. Each way of cutting a table
 * (a template) is priced once; a candidate is a template plus a rotation
 * of its ranks.
 *
 * Search. (1) Greedy: tables by decreasing table-wise kernel time (then
 * size, then index), each given the feasible candidate that minimises the
 * cost of the partial plan (ties: smaller fullest rank, then candidate
 * order). (2) Local search: move a table of the slowest rank to the best
 * other candidate while that lowers the cost, at most 4·T moves. The same
 * local search also starts from greedy-by-size table-wise placement (the
 * default plan), and the cheaper result wins, so the planner never does
 * worse, under its own model, than the baseline it must beat. (3)
 * Replication: each table, smallest first, takes its data-parallel
 * candidate when that lowers the cost and every rank still fits, so no
 * table of the result is cheaper replicated. (4) The final choice: with a
 * pricer in the options (dc_plan_build_graph's: the evaluator's step
 * time), the plans the searches ended on, before and after replication,
 * the default plan, the balanced all-to-all (balance_a2a: the
 * all-to-all's tables cut in column blocks spread so that every rank
 * sends about the same bytes) and the searched plans with their row-wise
 * tables cut grid_shard (grid_hot) are priced by it and the fastest is
 * returned (choose), since the cost above adds what the evaluator
 * overlaps. Tables too hot for one host get grid_shard candidates in the
 * search too (pl_add_grid).
 *
 * Cost of planning. The search keeps the current assignment's per-rank
 * sums (fwd, bwd, memory, all-to-all send) in 128-bit fixed point (2^-60
 * µs or byte units: adding and removing a candidate is exact, and a sum
 * does not depend on the order of placements) with a max-tree over the
 * ranks and one over the hosts' TWRW collectives, and caches collective
 * prices by byte count. Trying a candidate then costs O(its shards ·
 * log W) rather than a walk over every table and rank: greedy is
 * O(T·C·log W), a local-search step O(tables on two ranks · C · log W).
 * Both searches also skip the rest of a table's table-wise and
 * column-wise candidates once the floor of their cost (a2a_floor: the
 * state's maxima kept, the dim added to the all-to-all; the cost is
 * monotone in the maxima) is not better than the best found, which
 * leaves the choice as it was. The reported cost (dc_plan_cost_of and
 * the planner's `cost`) is still the table-by-table sum. The incremental
 * state, its trees, caches and bounds are the search's own and share its
 * context, so they stay in this file.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/plan/plan_int.h"
#include "runtime/runtime.h"

/* Round to nearest, like (double)v * 2^-60, without libgcc's int128
 * conversion: a value of n > 63 bits is shifted to 63 bits with the
 * dropped bits OR-ed into the lowest (sticky), which rounds to 53 bits
 * exactly as v would (the sticky bit sits below the rounding bit), and the
 * shift comes back as an exact power-of-two scale. */
static double of_fx(fx v) {
  if (v >= 0 && v <= (fx)INT64_MAX) return (double)(int64_t)v * 0x1p-60;
  if (v < 0) return (double)v * 0x1p-60;
  uint64_t hi = (uint64_t)((ufx)v >> 64);
  int n = hi ? 128 - __builtin_clzll(hi) : 64; /* bits of v, > 63 */
  int sh = n - 63;                             /* 1 .. 64 */
  ufx u = (ufx)v;
  uint64_t m = (uint64_t)(u >> sh);
  if (u & (((ufx)1 << sh) - 1)) m |= 1;
  static const double scale[65] = {
#define S4(k) 0x1p-60 * (double)(1ull << (k)), 0x1p-60 * (double)(1ull << ((k) + 1)), \
              0x1p-60 * (double)(1ull << ((k) + 2)), 0x1p-60 * (double)(1ull << ((k) + 3))
      S4(0), S4(4), S4(8), S4(12), S4(16), S4(20), S4(24), S4(28),
      S4(32), S4(36), S4(40), S4(44), S4(48), S4(52), S4(56), S4(60),
      0x1p4
#undef S4
  };
  return (double)(int64_t)m * scale[sh];
}

/* The max-trees' operations (their types in plan_int.h): NAME_init,
 * NAME_set (a leaf, then its path while the maximum changes) and
 * NAME_max. */
#define DC_MAX_TREE(NAME, T)                                                 \
  static void NAME##_init(NAME *t, int32_t n, dc_arena *a) {                 \
    int32_t P = 1;                                                           \
    while (P < n) P *= 2;                                                    \
    t->P = P;                                                                \
    t->v = dc_arena_array(a, (size_t)(2 * P), sizeof(T));                    \
  }                                                                          \
  static void NAME##_set(NAME *t, int32_t i, T x) {                          \
    int32_t j = t->P + i;                                                    \
    if (t->v[j] == x) return;                                                \
    t->v[j] = x;                                                             \
    for (j /= 2; j >= 1; j /= 2) {                                           \
      T m = t->v[2 * j] > t->v[2 * j + 1] ? t->v[2 * j] : t->v[2 * j + 1];   \
      if (t->v[j] == m) break;                                               \
      t->v[j] = m;                                                           \
    }                                                                        \
  }                                                                          \
  static T NAME##_max(const NAME *t) { return t->v[1]; }
DC_MAX_TREE(mtree, double)
DC_MAX_TREE(xtree, fx)
#undef DC_MAX_TREE

static void cmemo_init(cmemo *m) {
  for (int32_t i = 0; i < CMEMO; i++) m->key[i] = -1;
}

static int64_t coll_bytes(double bytes) {
  return dc_f64_sat_i64(bytes);
}

/* coll_price through a cache; `pair` adds the all-gather's price to the
 * reduce-scatter's (one entry for the pair, summed as the search does). */
static double coll_cached(const pctx *c, cmemo *m, dc_kernel_kind kind,
                          bool pair, double bytes, int32_t ranks,
                          int32_t hosts) {
  int64_t key = coll_bytes(bytes);
  uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15u;
  uint32_t i = (uint32_t)(h >> 56) % CMEMO;
  if (m->key[i] == key) return m->val[i];
  double v = pl_coll_price(c, kind, bytes, ranks, hosts);
  if (pair)
    v = v + pl_coll_price(c, DC_KERNEL_ALL_GATHER, bytes, ranks, hosts);
  m->key[i] = key;
  m->val[i] = v;
  return v;
}

/* Leaf i set without fixing its path (xtree_rebuild after a batch). */
static void xtree_leaf(xtree *t, int32_t i, fx x) { t->v[t->P + i] = x; }

static void xtree_rebuild(xtree *t) {
  for (int32_t j = t->P - 1; j >= 1; j--)
    t->v[j] = t->v[2 * j] > t->v[2 * j + 1] ? t->v[2 * j] : t->v[2 * j + 1];
}

/* (double)v, with int64's conversion when it fits (byte counts do). */
static double fx_d(fx v) {
  if (v >= 0 && v <= (fx)INT64_MAX) return (double)(int64_t)v;
  return (double)v;
}

static double host_price(pctx *c, int32_t h) {
  if (!(c->tw_dims[h] > 0)) return 0;
  return coll_cached(c, &c->twp, DC_KERNEL_REDUCE_SCATTER, true,
                     (double)c->p->batch_size * c->tw_dims[h] *
                         c->reduce_bytes,
                     c->S, 1);
}

/* Adds (sign 1) or removes (-1) candidate k of table t from the
 * incremental state: only the ranks (and host) it touches change. */
static void apply(pctx *c, int32_t t, int32_t k, int sign) {
  if (k < 0) return;
  int32_t rot;
  const tmpl *x = cand_of(c, t, k, &rot);
  /* a candidate over many ranks sets their leaves and rebuilds the trees
   * (O(W)) instead of fixing each path (O(W log W)) */
  bool wide = x->tp.n_shards >= 8 && x->tp.n_shards * 4 >= c->W;
  void (*set)(xtree *, int32_t, fx) = wide ? xtree_leaf : xtree_set;
  bool sends = false;
  for (int32_t i = 0; i < x->tp.n_shards; i++) {
    int32_t r = rank_of(c, x, i, rot), v = vix(x, i);
    if (sign > 0) {
      c->sf[r] += x->ffwd[v];
      c->sb[r] += x->fbwd[v];
      c->sm[r] += x->fmem[v];
      c->ss[r] += x->fsend[v];
    } else {
      c->sf[r] -= x->ffwd[v];
      c->sb[r] -= x->fbwd[v];
      c->sm[r] -= x->fmem[v];
      c->ss[r] -= x->fsend[v];
    }
    set(&c->tf, r, c->sf[r]);
    set(&c->tb, r, c->sb[r]);
    set(&c->tmem, r, c->sm[r]);
    if (x->fsend[v] != 0) {
      set(&c->tsend, r, c->ss[r]);
      sends = true;
    }
  }
  if (wide) {
    xtree_rebuild(&c->tf);
    xtree_rebuild(&c->tb);
    xtree_rebuild(&c->tmem);
    if (sends) xtree_rebuild(&c->tsend);
  }
  double dim = (double)c->p->tables[t].dim * sign;
  switch (x->tp.type) {
  case DC_SHARDING_TABLE_WISE:
  case DC_SHARDING_COLUMN_WISE:
  case DC_SHARDING_TABLE_COLUMN_WISE: c->d_a2a += dim; break;
  case DC_SHARDING_TABLE_ROW_WISE: {
    int32_t h = rank_of(c, x, 0, rot) / c->S;
    c->d_a2a += dim;
    c->tw_dims[h] += dim;
    mtree_set(&c->thost, h, host_price(c, h));
    break;
  }
  case DC_SHARDING_GRID_SHARD: /* each block on its own host */
    c->d_a2a += dim;
    for (int32_t i = 0; i < x->tp.n_shards; i++) {
      int32_t h = rank_of(c, x, i, rot) / c->S;
      if (i > 0 && rank_of(c, x, i - 1, rot) / c->S == h) continue;
      c->tw_dims[h] += (double)x->tp.shards[i].cols * sign;
      mtree_set(&c->thost, h, host_price(c, h));
    }
    break;
  case DC_SHARDING_ROW_WISE: c->d_rw += dim; break;
  case DC_SHARDING_DATA_PARALLEL:
    if (sign > 0) c->sdp += x->fdp;
    else c->sdp -= x->fdp;
    break;
  default: break;
  }
}

/* The objective from the incremental state's maxima and sums (slowest_rank
 * left 0): what cost_now and try_cost share. */
static void cost_from(pctx *c, double mf, double mb, double mm, double ms,
                      double hmax, double d_a2a, double d_rw, fx sdp,
                      dc_plan_cost *out) {
  /* one-entry memo: the rotations of a candidate that raise no maximum
   * (most of them) give the same inputs, hence the same cost */
  double key[7] = {mf, mb, mm, ms, hmax, d_a2a, d_rw};
  if (c->memo_ok && c->memo_sdp == sdp &&
      memcmp(key, c->memo_key, sizeof key) == 0) {
    *out = c->memo_out;
    return;
  }
  int32_t W = c->W;
  double Bg = (double)c->p->batch_size, B = Bg / W;
  memset(out, 0, sizeof *out);
  double comm = 0;
  if (W > 1) {
    if (d_a2a > 0) {
      comm += coll_cached(c, &c->a2a, DC_KERNEL_ALL_TO_ALL, false, ms, W,
                          c->H);
      comm += coll_cached(c, &c->a2a, DC_KERNEL_ALL_TO_ALL, false,
                          B * d_a2a * c->wire_bytes, W, c->H);
    }
    comm += hmax;
    if (d_rw > 0)
      comm += coll_cached(c, &c->rwp, DC_KERNEL_REDUCE_SCATTER, true,
                          Bg * d_rw * c->reduce_bytes, W, c->H);
  }
  out->max_fwd_us = mf;
  out->max_bwd_us = mb + of_fx(sdp);
  out->max_mem_bytes = dc_f64_sat_i64(mm);
  out->comm_us = comm;
  out->total_us = out->max_fwd_us + out->max_bwd_us + comm;
  out->fits = (double)out->max_mem_bytes <= c->cap;
  memcpy(c->memo_key, key, sizeof key);
  c->memo_sdp = sdp;
  c->memo_out = *out;
  c->memo_ok = true;
}

/* The objective of the incremental state. */
static void cost_now(pctx *c, dc_plan_cost *out) {
  cost_from(c, of_fx(xtree_max(&c->tf)), of_fx(xtree_max(&c->tb)),
            fx_d(xtree_max(&c->tmem)), of_fx(xtree_max(&c->tsend)),
            mtree_max(&c->thost), c->d_a2a, c->d_rw, c->sdp, out);
}

/* The fixed-point maxima of fwd, bwd, memory and send that a quick
 * candidate (template x at rotation rot) would leave: each is the old
 * root or one of its ranks' new sums. */
typedef struct qmax {
  fx f, b, m, s;
} qmax;

static void quick_maxima(const pctx *c, const tmpl *x, int32_t rot,
                         qmax *q) {
  fx mf = xtree_max(&c->tf), mb = xtree_max(&c->tb);
  fx mm = xtree_max(&c->tmem), ms = xtree_max(&c->tsend);
  for (int32_t i = 0; i < x->tp.n_shards; i++) {
    int32_t r = rank_of(c, x, i, rot), j = vix(x, i);
    fx v = c->sf[r] + x->ffwd[j];
    if (v > mf) mf = v;
    v = c->sb[r] + x->fbwd[j];
    if (v > mb) mb = v;
    v = c->sm[r] + x->fmem[j];
    if (v > mm) mm = v;
    if (x->fsend[j] != 0) {
      v = c->ss[r] + x->fsend[j];
      if (v > ms) ms = v;
    }
  }
  *q = (qmax){mf, mb, mm, ms};
}

/* The objective of a quick candidate of table t from its maxima (hmax:
 * the slowest host's TWRW collectives with it). */
static void quick_cost(pctx *c, int32_t t, const tmpl *x, const qmax *q,
                       double hmax, dc_plan_cost *out) {
  double dim = (double)c->p->tables[t].dim, d_a2a = c->d_a2a, d_rw = c->d_rw;
  fx sdp = c->sdp;
  switch (x->tp.type) {
  case DC_SHARDING_TABLE_WISE:
  case DC_SHARDING_COLUMN_WISE:
  case DC_SHARDING_TABLE_COLUMN_WISE:
  case DC_SHARDING_TABLE_ROW_WISE:
  case DC_SHARDING_GRID_SHARD: d_a2a += dim; break;
  case DC_SHARDING_ROW_WISE: d_rw += dim; break;
  case DC_SHARDING_DATA_PARALLEL: sdp += x->fdp; break;
  default: break;
  }
  cost_from(c, of_fx(q->f), of_fx(q->b), fx_d(q->m), of_fx(q->s), hmax,
            d_a2a, d_rw, sdp, out);
}

/* The objective with candidate k of table t added (t not placed), state
 * unchanged. A quick candidate's shards sit on distinct ranks, so each
 * new maximum is the old root or one of its ranks' new sums — the same
 * doubles apply + cost_now would reach, in O(shards) instead of
 * O(shards · log W) twice; the others go through apply. */
static void try_cost(pctx *c, int32_t t, int32_t k, dc_plan_cost *out) {
  int32_t rot;
  const tmpl *x = cand_of(c, t, k, &rot);
  double hmax = mtree_max(&c->thost);
  if (x->quick && x->tp.type == DC_SHARDING_TABLE_ROW_WISE) {
    /* the slowest host's collectives: host h's new price against the
     * others' maximum (a scan over the hosts' leaves, O(H): h's old
     * price may have been the only maximum, and a price need not grow
     * with its bytes) */
    int32_t h = rank_of(c, x, 0, rot) / c->S;
    double tw = c->tw_dims[h] + (double)c->p->tables[t].dim;
    double np = 0, *leaf = c->thost.v + c->thost.P;
    if (leaf[h] >= hmax && hmax > 0) {
      hmax = 0;
      for (int32_t g = 0; g < c->H; g++)
        if (g != h && leaf[g] > hmax) hmax = leaf[g];
    }
    if (tw > 0)
      np = coll_cached(c, &c->twp, DC_KERNEL_REDUCE_SCATTER, true,
                       (double)c->p->batch_size * tw * c->reduce_bytes, c->S, 1);
    if (np > hmax) hmax = np;
  }
  if (!x->quick) {
    apply(c, t, k, 1);
    cost_now(c, out);
    apply(c, t, k, -1);
    return;
  }
  qmax q;
  quick_maxima(c, x, rot, &q);
  quick_cost(c, t, x, &q, hmax, out);
}

/* The least cost any all-to-all candidate of table t (table-wise,
 * column-wise) can have, t not placed: the state's maxima kept and the
 * table's dim added to the all-to-all. A candidate's cost is cost_from of
 * maxima no lower than these (each new maximum is the old one or above
 * it) and cost_from does not decrease in any of them — sums of doubles,
 * of_fx and the collectives' prices (a latency plus bytes over a
 * bandwidth) are monotone — so no such candidate is `better` than a best
 * this floor is not better than (the search skips them). */
static void a2a_floor(pctx *c, int32_t t, dc_plan_cost *out) {
  cost_from(c, of_fx(xtree_max(&c->tf)), of_fx(xtree_max(&c->tb)),
            fx_d(xtree_max(&c->tmem)), of_fx(xtree_max(&c->tsend)),
            mtree_max(&c->thost), c->d_a2a + (double)c->p->tables[t].dim,
            c->d_rw, c->sdp, out);
}

/* Makes candidate k (-1: none) table t's choice. */
static void set_cur(pctx *c, int32_t t, int32_t k) {
  if (c->cur[t] == k) return;
  apply(c, t, c->cur[t], -1);
  c->cur[t] = k;
  apply(c, t, k, 1);
}

static bool better(const dc_plan_cost *x, const dc_plan_cost *best) {
  if (x->total_us < best->total_us * (1 - 1e-12)) return true;
  if (x->total_us > best->total_us * (1 + 1e-12)) return false;
  return x->max_mem_bytes < best->max_mem_bytes;
}

static bool is_a2a(const tmpl *x) {
  return x->quick && (x->tp.type == DC_SHARDING_TABLE_WISE ||
                      x->tp.type == DC_SHARDING_COLUMN_WISE);
}

/* The candidate of table t (not placed; candidate `skip` left out) that
 * trying them all in order would pick: the first fitting one strictly
 * `better` than *best (when *have; else the first fitting one), then any
 * better than that. Returns its index with *best and *have updated, or
 * -1. Table-wise and column-wise candidates are skipped where they
 * cannot be better, so the pick is the same: the rest of their templates
 * once the floor is not (a2a_floor), and one whose maxima are each at
 * least the best's, the best being such a candidate too (the same
 * all-to-all dims, hosts and data-parallel sum: cost_from gives it no
 * smaller a total, and its memory is no smaller). */
static int32_t pick(pctx *c, int32_t t, int32_t skip, dc_plan_cost *best,
                    bool *have) {
  dc_plan_cost floor;
  a2a_floor(c, t, &floor);
  double hmax = mtree_max(&c->thost);
  int32_t bk = -1;
  qmax bq = {0};
  bool bq_ok = false; /* bq: the maxima of *best, an a2a candidate */
  for (int32_t j = 0, k0 = 0; j < c->n_tm[t]; k0 += c->tm[t][j++].n_rot) {
    const tmpl *x = &c->tm[t][j];
    bool a2a = is_a2a(x);
    for (int32_t k = k0; k < k0 + x->n_rot; k++) {
      if (*have && a2a && !better(&floor, best)) break;
      if (k == skip) continue;
      dc_plan_cost y;
      qmax q;
      if (a2a) {
        int32_t rot = x->rots ? x->rots[k - k0] : (k - k0) * x->rot_step;
        quick_maxima(c, x, rot, &q);
        if (*have && bq_ok && q.f >= bq.f && q.b >= bq.b && q.m >= bq.m &&
            q.s >= bq.s)
          continue;
        quick_cost(c, t, x, &q, hmax, &y);
      } else {
        try_cost(c, t, k, &y);
      }
      if (!y.fits || (*have && !better(&y, best))) continue;
      *best = y;
      *have = true;
      bk = k;
      bq = q;
      bq_ok = a2a;
    }
  }
  return bk;
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
  c->wire_bytes = dc_pooled_wire_bytes(p);
  c->reduce_bytes = dc_pooled_reduce_bytes(p);
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
  c->tm = dc_arena_array(a, T, sizeof(tmpl *));
  c->n_tm = dc_arena_array(a, T, sizeof(int32_t));
  c->n_cands = dc_arena_array(a, T, sizeof(int32_t));
  c->cur = dc_arena_array(a, T, sizeof(int32_t));
  for (int32_t t = 0; t < c->T; t++) c->cur[t] = -1;
  c->sf = dc_arena_array(a, W, sizeof(fx));
  c->sb = dc_arena_array(a, W, sizeof(fx));
  c->sm = dc_arena_array(a, W, sizeof(fx));
  c->ss = dc_arena_array(a, W, sizeof(fx));
  c->tw_dims = dc_arena_array(a, (size_t)c->H, sizeof(double));
  c->mark = dc_arena_array(a, W, sizeof(int32_t));
  xtree_init(&c->tf, c->W, a);
  xtree_init(&c->tb, c->W, a);
  xtree_init(&c->tmem, c->W, a);
  xtree_init(&c->tsend, c->W, a);
  mtree_init(&c->thost, c->H, a);
  for (int32_t r = 0; r < c->W; r++) {
    c->sm[r] = c->base_mem;
    xtree_set(&c->tmem, r, c->sm[r]);
  }
  cmemo_init(&c->a2a);
  cmemo_init(&c->twp);
  cmemo_init(&c->rwp);
}

/* The slowest rank (fwd + bwd) and the one sending the most, first of
 * equals. */
static void slow_heavy(const pctx *c, int32_t *slow, int32_t *heavy) {
  int32_t s = 0, h = 0;
  double bs = of_fx(c->sf[0]) + of_fx(c->sb[0]);
  for (int32_t r = 1; r < c->W; r++) {
    double x = of_fx(c->sf[r]) + of_fx(c->sb[r]);
    if (x > bs) {
      bs = x;
      s = r;
    }
    if (c->ss[r] > c->ss[h]) h = r;
  }
  *slow = s;
  *heavy = h;
}

/* Moves a table of the slowest rank (or of the one sending the most) to
 * its best other candidate while that lowers the cost. Each try prices
 * only what the move changes. */
static void local_search(pctx *c, dc_plan_cost *cost) {
  for (int32_t it = 0; it < 4 * c->T; it++) {
    cost_now(c, cost);
    int32_t slow, heavy, bt = -1, bc = -1;
    slow_heavy(c, &slow, &heavy);
    dc_plan_cost best = *cost;
    for (int32_t t = 0; t < c->T; t++) {
      int32_t rot, keep = c->cur[t];
      const tmpl *x = cand_of(c, t, keep, &rot);
      bool on = false;
      for (int32_t i = 0; i < x->tp.n_shards && !on; i++) {
        int32_t r = rank_of(c, x, i, rot);
        on = r == slow || r == heavy;
      }
      if (!on) continue;
      apply(c, t, keep, -1);
      bool have = true;
      int32_t k = pick(c, t, keep, &best, &have);
      if (k >= 0) {
        bt = t;
        bc = k;
      }
      apply(c, t, keep, 1);
    }
    if (bt < 0) break;
    set_cur(c, bt, bc);
  }
  cost_now(c, cost);
}

/* The index of table t's data-parallel candidate (its last, when it may
 * take that type), else -1. */
static int32_t dp_cand(const pctx *c, int32_t t) {
  int32_t k = c->n_cands[t] - 1, rot;
  if (k < 0) return -1;
  const tmpl *x = cand_of(c, t, k, &rot);
  return x && x->tp.type == DC_SHARDING_DATA_PARALLEL ? k : -1;
}

/* Replication: each table, smallest first, is replicated when its
 * replica lowers the objective and every rank still fits — a replica
 * costs its lookups on every rank, its reduction and its update, and
 * saves its exchange. The searches above only move the slowest rank's
 * tables, so a small table placed early on an idle rank would otherwise
 * keep its exchange when replicating it has become the cheaper way. */
static void replicate(pctx *c, dc_arena *a) {
  dc_plan_order *ord =
      dc_arena_array(a, (size_t)(c->T > 0 ? c->T : 1), sizeof *ord);
  for (int32_t t = 0; t < c->T; t++)
    ord[t] = (dc_plan_order){
        t, -(double)(c->p->tables[t].rows * (int64_t)c->p->tables[t].dim),
        0};
  dc_plan_sort_order(ord, c->T);
  dc_plan_cost now;
  cost_now(c, &now);
  for (int32_t i = 0; i < c->T; i++) {
    int32_t t = ord[i].t, kd = dp_cand(c, t), k0 = c->cur[t];
    if (kd < 0 || kd == k0) continue;
    set_cur(c, t, kd);
    dc_plan_cost alt;
    cost_now(c, &alt);
    if ((alt.fits || !now.fits) && better(&alt, &now)) now = alt;
    else set_cur(c, t, k0);
  }
}



/* The balanced all-to-all (spec/planner.md, "The balanced all-to-all"):
 * the tables the current assignment sends through the pooled all-to-all
 * (table-wise, column-wise) are placed again, largest pooled row (dim)
 * first, then largest table: one that can be cut column-wise in its
 * 32-column blocks takes the start rank whose n consecutive ranks would
 * send the least at their most (their shards' pooled bytes added; ties:
 * the least lookup time, forward and backward, of the busiest of them,
 * then the lower rank), else table-wise on the
 * rank sending the least, always where every rank still fits its HBM
 * (else the table keeps its place). Equal blocks fill the ranks round
 * by round, so no rank sends a block more than another: the per-rank
 * send the forward all-to-all waits for, mostly over the NICs across
 * hosts, is within one block of the mean. Tables replicated or cut
 * row-wise keep their choice. */
static void balance_a2a(pctx *c, dc_arena *a) {
  if (c->W < 2) return;
  dc_plan_order *ord =
      dc_arena_array(a, (size_t)(c->T > 0 ? c->T : 1), sizeof *ord);
  int32_t n = 0;
  for (int32_t t = 0; t < c->T; t++) {
    if (!pl_cur_is(c, t, DC_SHARDING_TABLE_WISE, DC_SHARDING_COLUMN_WISE))
      continue;
    if (pl_rot_base(c, t, DC_SHARDING_COLUMN_WISE) < 0 &&
        pl_rot_base(c, t, DC_SHARDING_TABLE_WISE) < 0)
      continue; /* pinned: stays */
    const dc_table *tb = &c->p->tables[t];
    ord[n++] = (dc_plan_order){t, (double)tb->dim,
                               (double)(tb->rows * (int64_t)tb->dim)};
  }
  dc_plan_sort_order(ord, n);
  int32_t *old = dc_arena_array(a, (size_t)(n > 0 ? n : 1), sizeof *old);
  for (int32_t i = 0; i < n; i++) {
    old[i] = c->cur[ord[i].t];
    set_cur(c, ord[i].t, -1);
  }
  for (int32_t i = 0; i < n; i++) {
    int32_t t = ord[i].t, k0 = pl_rot_base(c, t, DC_SHARDING_COLUMN_WISE);
    if (k0 < 0) k0 = pl_rot_base(c, t, DC_SHARDING_TABLE_WISE);
    int32_t rot;
    const tmpl *x = cand_of(c, t, k0, &rot);
    int32_t best = -1;
    fx bmax = 0, bwork = 0;
    for (int32_t s = 0; s < c->W; s++) {
      fx mx = 0, work = 0;
      bool fits = true;
      for (int32_t j = 0; j < x->tp.n_shards && fits; j++) {
        int32_t r = rank_of(c, x, j, s), v = vix(x, j);
        fx snd = c->ss[r] + x->fsend[v];
        fx w = c->sf[r] + c->sb[r] + x->ffwd[v] + x->fbwd[v];
        fits = (double)(c->sm[r] + x->fmem[v]) <= c->cap;
        if (snd > mx) mx = snd;
        if (w > work) work = w;
      }
      if (fits && (best < 0 || mx < bmax || (mx == bmax && work < bwork))) {
        best = s;
        bmax = mx;
        bwork = work;
      }
    }
    set_cur(c, t, best >= 0 ? k0 + best : old[i]);
  }
}


/* Hot tables across hosts, grid_shard (spec/planner.md, "A table too hot
 * for one host"): the tables the current assignment cuts row-wise (over
 * every rank, or over one host) spread their lookups too, but pay a
 * world reduce-scatter through the NICs or load one host; each, heaviest
 * first, is cut grid_shard instead, in as many blocks as it has hosts
 * and 32-column blocks, at the rotation whose busiest rank has the least
 * lookup time (forward and backward) and whose ranks still fit. The
 * evaluator decides whether that is the faster step. */
static void grid_hot(pctx *c, dc_arena *a) {
  if (c->H < 2) return;
  dc_plan_order *ord =
      dc_arena_array(a, (size_t)(c->T > 0 ? c->T : 1), sizeof *ord);
  int32_t n = 0;
  for (int32_t t = 0; t < c->T; t++) {
    if (!pl_cur_is(c, t, DC_SHARDING_ROW_WISE, DC_SHARDING_TABLE_ROW_WISE))
      continue;
    int32_t nr = 0;
    if (pl_widest_grid(c, t, &nr) < 0) pl_add_grid(c, t);
    if (pl_widest_grid(c, t, &nr) < 0) continue;
    ord[n++] = (dc_plan_order){t, pl_table_work(c, t), 0};
  }
  dc_plan_sort_order(ord, n);
  for (int32_t i = 0; i < n; i++) {
    int32_t t = ord[i].t, nr = 0, k0 = pl_widest_grid(c, t, &nr), old = c->cur[t];
    set_cur(c, t, -1);
    int32_t rot, best = -1;
    const tmpl *x = cand_of(c, t, k0, &rot);
    fx bwork = 0;
    for (int32_t s = 0; s < nr; s++) {
      int32_t r0 = x->rots ? x->rots[s] : s * x->rot_step;
      fx work = 0;
      bool fits = true;
      for (int32_t j = 0; j < x->tp.n_shards && fits; j++) {
        int32_t r = rank_of(c, x, j, r0), v = vix(x, j);
        fx w = c->sf[r] + c->sb[r] + x->ffwd[v] + x->fbwd[v];
        fits = (double)(c->sm[r] + x->fmem[v]) <= c->cap;
        if (w > work) work = w;
      }
      if (fits && (best < 0 || work < bwork)) {
        best = s;
        bwork = work;
      }
    }
    set_cur(c, t, best >= 0 ? k0 + best : old);
  }
}

/* Greedy, heaviest first (ord): each table given the feasible candidate
 * that lowers the partial plan's cost most. Returns -1, or the first
 * table no candidate of which fits. */
static int32_t greedy(pctx *c, const dc_plan_order *ord) {
  for (int32_t i = 0; i < c->T; i++) {
    int32_t t = ord[i].t;
    dc_plan_cost best = {0};
    bool have = false;
    int32_t bk = pick(c, t, -1, &best, &have);
    if (bk < 0) return t;
    set_cur(c, t, bk);
  }
  return -1;
}

static void materialize(pctx *c, dc_shard_plan *out) {
  for (int32_t t = 0; t < c->T; t++) out->tables[t] = pl_cand_plan(c, t, c->cur[t]);
}

static void set_all(pctx *c, const int32_t *ks) {
  for (int32_t t = 0; t < c->T; t++) set_cur(c, t, ks[t]);
}

/* A copy of the current assignment (nb bytes). */
static int32_t *dup_cur(const pctx *c, size_t nb, dc_arena *a) {
  int32_t *x = dc_arena_alloc(a, nb);
  memcpy(x, c->cur, nb);
  return x;
}

/* A candidate whose objective exceeds PRICE_WITHIN times the objective's
 * own choice is not priced. The evaluator overlaps at most the exchange
 * and the replicas' reductions with the lookups, so it hides at most half
 * of a plan's objective: such a candidate cannot be the faster step, and
 * pricing it would cost a graph as large as its plan (at 1,024 GPUs a
 * row-wise-heavy plan's graph is most of the run's time and memory). */
#define PRICE_WITHIN 2.0

/* Of the n candidate assignments, the index of the one whose step time
 * `pr` finds least, those whose row fits first; ties and candidates it
 * cannot price keep the earlier one (candidate 0, the objective's own
 * choice, when it prices none). An assignment seen before, or beyond
 * PRICE_WITHIN, is not priced, and nothing is when one candidate is
 * left. Each plan is built in an arena of its own, dropped after. */
static int32_t choose(pctx *c, const dc_plan_pricer *pr, int32_t *const *cands,
                      int32_t n) {
  /* which to price: new, within the bound */
  int32_t idx[10], m = 0;
  double first_us = 0;
  size_t nb = (size_t)(c->T > 0 ? c->T : 1) * sizeof(int32_t);
  for (int32_t i = 0; i < n && m < 10; i++) {
    bool seen = false;
    for (int32_t j = 0; j < i && !seen; j++)
      seen = memcmp(cands[i], cands[j], nb) == 0;
    if (seen) continue;
    set_all(c, cands[i]);
    dc_plan_cost pc;
    cost_now(c, &pc);
    if (i == 0) first_us = pc.total_us;
    else if (pc.total_us > PRICE_WITHIN * first_us) continue;
    idx[m++] = i;
  }
  if (m < 2) return 0; /* nothing to choose between */
  int32_t best = 0;
  double best_us = 0;
  bool best_fits = false, have = false;
  for (int32_t q = 0; q < m; q++) {
    int32_t i = idx[q];
    set_all(c, cands[i]);
    dc_arena sa;
    dc_arena_init(&sa);
    dc_arena *ca = c->a; /* pl_cand_plan cuts in c->a */
    c->a = &sa;
    dc_shard_plan *s = dc_shard_plan_new(c->p, &sa);
    materialize(c, s);
    c->a = ca;
    double us = 0;
    bool fits = false;
    bool ok = pr->step_us(pr->ctx, c->p, s, &us, &fits) && isfinite(us);
    dc_arena_free(&sa);
    if (!ok) continue;
    if (!have || (fits && !best_fits) ||
        (fits == best_fits && us < best_us)) {
      best = i;
      best_us = us;
      best_fits = fits;
      have = true;
    }
  }
  return best;
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
    c.tm[t] = dc_arena_array(a, 1, sizeof(tmpl));
    memset(c.tm[t], 0, sizeof(tmpl));
    c.tm[t][0].tp = s->tables[t];
    c.tm[t][0].n_rot = 1;
    pl_price_tmpl(&c, t, &c.tm[t][0]);
    c.n_tm[t] = 1;
    c.n_cands[t] = 1;
    c.cur[t] = 0;
  }
  pl_eval_full(&c, out);
}


dc_shard_plan *dc_plan_auto(const dc_point *p, const dc_plan_opts *o,
                            dc_arena *a, dc_diags *d, dc_plan_cost *cost) {
  if (p->objective == DC_OBJECTIVE_TORCHREC)
    return dc_plan_auto_torchrec(p, o, a, d, cost);
  pctx c;
  init_ctx(&c, p, o, a);
  for (int32_t t = 0; t < c.T; t++) {
    pl_make_cands(&c, t);
    if (c.n_cands[t] == 0) {
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_SHARDING, dc_table_plan_span(&p->tables[t]),
          "table '%s' has no placement its constraints allow",
          p->tables[t].name ? p->tables[t].name : "?");
      dc_diag_set_help(g, "check its sharding type and pinned ranks");
      return NULL;
    }
  }
  /* grid_shard where a table is too hot for one host: its lookups
   * spread over one host's GPUs would still exceed a rank's share of all
   * the lookups (Σ work / W); a lighter table has nothing to gain from
   * more hosts, and leaving it out keeps the search's cost in check */
  size_t nb = (size_t)(c.T > 0 ? c.T : 1) * sizeof(int32_t);
  int32_t *ntm0 = dc_arena_alloc(a, nb), *nc0 = dc_arena_alloc(a, nb);
  memcpy(ntm0, c.n_tm, nb);
  memcpy(nc0, c.n_cands, nb);
  bool grid = false;
  if (c.H > 1) {
    double *work = dc_arena_array(a, (size_t)(c.T > 0 ? c.T : 1),
                                  sizeof(double));
    double total = 0;
    for (int32_t t = 0; t < c.T; t++) total += work[t] = pl_table_work(&c, t);
    for (int32_t t = 0; t < c.T; t++)
      if (work[t] / c.S > total / c.W) pl_add_grid(&c, t);
    grid = memcmp(ntm0, c.n_tm, nb) != 0;
  }
  /* (1) greedy, heaviest first */
  dc_plan_order *ord =
      dc_arena_array(a, (size_t)(c.T > 0 ? c.T : 1), sizeof *ord);
  for (int32_t t = 0; t < c.T; t++) {
    const tmpl *x = &c.tm[t][0];
    double w = 0;
    for (int32_t i = 0; i < x->tp.n_shards; i++)
      w += x->fwd_us[vix(x, i)] + x->bwd_us[vix(x, i)];
    ord[t] = (dc_plan_order){
        t, w, (double)(p->tables[t].rows * (int64_t)p->tables[t].dim)};
  }
  dc_plan_sort_order(ord, c.T);
  int32_t t_bad = greedy(&c, ord);
  if (t_bad >= 0) {
    dc_diag *g = dc_diag_error(
        d, DC_DIAG_NO_PLAN, p->tables[t_bad].span,
        "no placement of table '%s' fits in the %d GPUs' memory",
        p->tables[t_bad].name ? p->tables[t_bad].name : "?", c.W);
    dc_diag_set_help(g, "add GPUs, use GPUs with more HBM, or shrink "
                        "the tables or the batch");
    return NULL;
  }
  dc_plan_cost g1;
  local_search(&c, &g1);
  int32_t *keep = dc_arena_alloc(a, nb);
  memcpy(keep, c.cur, nb);
  /* the same search without the hot tables' grid candidates: more
   * candidates can lead a greedy search elsewhere, so the plan it would
   * have ended on is kept for the evaluator too */
  int32_t *nogrid = NULL;
  if (grid && o->pricer) {
    int32_t *ntm1 = dc_arena_alloc(a, nb), *nc1 = dc_arena_alloc(a, nb);
    memcpy(ntm1, c.n_tm, nb);
    memcpy(nc1, c.n_cands, nb);
    for (int32_t t = 0; t < c.T; t++) set_cur(&c, t, -1);
    memcpy(c.n_tm, ntm0, nb);
    memcpy(c.n_cands, nc0, nb);
    if (greedy(&c, ord) < 0) {
      local_search(&c, &g1);
      replicate(&c, a);
      nogrid = dup_cur(&c, nb, a);
    }
    for (int32_t t = 0; t < c.T; t++) set_cur(&c, t, -1);
    memcpy(c.n_tm, ntm1, nb);
    memcpy(c.n_cands, nc1, nb);
    set_all(&c, keep);
  }

  /* (2) the same search from greedy-by-size table-wise placement */
  dc_diags quiet = {0};
  dc_shard_plan *base = dc_shard_plan_default(p, a, &quiet);
  dc_diags_free(&quiet);
  bool have = base != NULL;
  int32_t *start = dc_arena_alloc(a, nb);
  for (int32_t t = 0; have && t < c.T; t++) {
    int32_t found = -1;
    for (int32_t k = 0; k < c.n_cands[t] && found < 0; k++)
      if (pl_cand_is(&c, t, k, &base->tables[t])) found = k;
    if (found < 0) have = false;
    else start[t] = found;
  }
  /* The candidate plans (assignments), the planner's own answer first */
  int32_t *cands[9];
  int32_t n = 0;
  int32_t *other = NULL; /* the searched plan the objective passed over */
  if (have) {
    set_all(&c, start);
    dc_plan_cost g0;
    cost_now(&c, &g0);
    if (g0.fits) {
      dc_plan_cost g2;
      local_search(&c, &g2);
      other = dc_arena_alloc(a, nb);
      memcpy(other, c.cur, nb);
      if (!better(&g2, &g1)) {
        set_all(&c, keep);
      } else {
        int32_t *x = other;
        other = keep;
        keep = x;
      }
    } else {
      set_all(&c, keep);
      have = false;
    }
  }
  replicate(&c, a);
  if (o->pricer) {
    cands[n++] = dup_cur(&c, nb, a);
    cands[n++] = keep;
    if (other) {
      cands[n++] = other;
      set_all(&c, other);
      replicate(&c, a);
      cands[n++] = dup_cur(&c, nb, a);
    }
    if (have) cands[n++] = start;
    /* (5) the balanced all-to-all, from the replicated answer: balanced,
     * replicated where that now pays, balanced again */
    set_all(&c, cands[0]);
    balance_a2a(&c, a);
    replicate(&c, a);
    balance_a2a(&c, a);
    cands[n++] = dup_cur(&c, nb, a);
    /* (6) the row-wise tables of the searches' answers (replicated) as
     * grid_shard */
    int32_t searched = other ? 3 : 1;
    for (int32_t i = 0; i < searched; i += 2) {
      set_all(&c, cands[i]);
      grid_hot(&c, a);
      replicate(&c, a);
      cands[n++] = dup_cur(&c, nb, a);
    }
    if (nogrid) cands[n++] = nogrid;
    set_all(&c, cands[choose(&c, o->pricer, cands, n)]);
  }
  dc_shard_plan *out = dc_shard_plan_new(p, a);
  materialize(&c, out);
  if (cost) pl_eval_full(&c, cost);
  return out;
}
