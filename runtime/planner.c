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
 * Cost of planning (issue #20). A shard's work, kernel prices and memory
 * do not depend on its rank, so each way of cutting a table (a template:
 * table-wise, column-wise in n blocks, row-wise, table-row-wise,
 * data-parallel) is priced once, and a candidate is a template plus a
 * rotation of its ranks: O(T) prices and O(T) memory, not O(T·W·C).
 * The search keeps the current assignment's per-rank sums (fwd, bwd,
 * memory, all-to-all send) in 128-bit fixed point (2^-60 µs or byte
 * units: adding and removing a candidate is exact, and a sum does not
 * depend on the order of placements) with a max-tree over the ranks and
 * one over the hosts' TWRW collectives, and caches collective prices by
 * byte count. Trying a candidate then costs O(its shards · log W) rather
 * than a walk over every table and rank: greedy is O(T·C·log W), a local-
 * search step O(tables on two ranks · C · log W). 1,000 tables on 64 GPUs
 * plan in about 0.15 s (16 s before). Both searches also skip the rest
 * of a table's table-wise and column-wise candidates once the floor of
 * their cost (a2a_floor: the state's maxima kept, the dim added to the
 * all-to-all; the cost is monotone in the maxima) is not better than the
 * best found, which leaves the choice as it was. The reported cost
 * (dc_plan_cost_of and the planner's `cost`) is still the table-by-table
 * sum. (About 1,180 lines, over the house's ~700: the incremental state,
 * its trees, caches and bounds are the search's own and share its
 * context.)
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/planner.h"
#include "runtime/planner_torchrec.h"
#include "runtime/runtime.h"

/* Fixed point for the per-rank sums the search updates: 2^-60 µs (or
 * byte) units in 128 bits, so adding and removing a candidate is exact and
 * a sum does not depend on the order of placements. */
__extension__ typedef __int128 fx;
__extension__ typedef unsigned __int128 ufx;

static fx to_fx(double x) {
  if (!(x > 0)) return 0;
  if (x > 1e18) x = 1e18;
  return (fx)(x * 0x1p60);
}

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

/* One way of cutting a table, priced once: a candidate is a template and a
 * rotation (its shards' ranks + rot, mod W), since a shard's work and
 * memory do not depend on its rank. */
typedef struct tmpl {
  dc_table_plan tp;
  double *fwd_us, *bwd_us; /* per shard */
  int64_t *mem;            /* per shard, bytes over the empty plan */
  fx *ffwd, *fbwd, *fmem, *fsend;
  double dp_us;            /* data-parallel: all-reduce + fill + update */
  fx fdp;
  int32_t n_rot, rot_step; /* rotations j·rot_step, j < n_rot ... */
  const int32_t *rots;     /* ... or these */
  bool quick;              /* shards on distinct ranks: try_cost
                            * prices it without touching the state */
  bool in_scratch;         /* tp.shards in the scratch arena (add_tmpl) */
  /* Compact (row-wise, data-parallel: shard i on rank i): the per-shard
   * arrays hold the distinct values of consecutive shards and vi[i] is
   * shard i's; tp.shards is NULL (cand_plan cuts the table again). At
   * 5,000 tables × 256 GPUs this is 315 MB of the search's 331. */
  int32_t *vi;
  bool ident;
} tmpl;

/* Shard i's index into a template's value arrays. */
static inline int32_t vix(const tmpl *x, int32_t i) {
  return x->vi ? x->vi[i] : i;
}

/* A direct-mapped cache of collective prices by byte count. */
#define CMEMO 256
typedef struct cmemo {
  int64_t key[CMEMO];
  double val[CMEMO];
} cmemo;

/* A max-tree over n leaves of type T (P a power of two ≥ n; node 1 the
 * root): NAME_init, NAME_set (a leaf, then its path while the maximum
 * changes) and NAME_max. mtree holds doubles; xtree holds fixed-point
 * sums: of_fx and the int128 → double cast are monotone, so the converted
 * maximum is the maximum of the converted leaves (the doubles a tree of
 * doubles would hold), with one conversion per use instead of one per
 * update. */
#define DC_MAX_TREE(NAME, T)                                                 \
  typedef struct NAME {                                                      \
    int32_t P;                                                               \
    T *v;                                                                    \
  } NAME;                                                                    \
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

typedef struct pctx {
  const dc_point *p;
  const dc_plan_opts *o;
  dc_arena *a;
  int32_t W, H, S, T;
  tmpl **tm;       /* per table: its templates, in candidate order */
  int32_t *n_tm;
  int32_t *n_cands;
  int32_t *cur;    /* chosen candidate per table, -1: not yet placed */
  dc_shard_plan *s;
  int64_t base_mem;
  double cap;
  double *rf, *rb, *send, *twrw;
  int64_t *rm;
  /* incremental state of the current assignment */
  fx *sf, *sb, *sm, *ss, sdp;
  double *tw_dims;
  double d_a2a, d_rw;
  xtree tf, tb, tmem, tsend;
  mtree thost;
  cmemo a2a, twp, rwp;
  int32_t *mark, stamp; /* per rank, for price_tmpl's distinct-rank test */
  dc_arena scratch;     /* a table's wide templates while they are priced */
  bool memo_ok;         /* cost_from's last inputs and result */
  double memo_key[7];
  fx memo_sdp;
  dc_plan_cost memo_out;
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
  k.u.coll.bytes = dc_f64_sat_i64(bytes);
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
  double v = coll_price(c, kind, bytes, ranks, hosts);
  if (pair)
    v = v + coll_price(c, DC_KERNEL_ALL_GATHER, bytes, ranks, hosts);
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

/* Candidate k of table t: its template and rotation. */
static const tmpl *cand_of(const pctx *c, int32_t t, int32_t k,
                           int32_t *rot) {
  for (int32_t j = 0; j < c->n_tm[t]; j++) {
    const tmpl *x = &c->tm[t][j];
    if (k < x->n_rot) {
      *rot = x->rots ? x->rots[k] : k * x->rot_step;
      return x;
    }
    k -= x->n_rot;
  }
  *rot = 0;
  return NULL;
}

static int32_t rank_of(const pctx *c, const tmpl *x, int32_t i, int32_t rot) {
  int32_t r = (x->ident ? i : x->tp.shards[i].rank) + rot;
  return r >= c->W ? r - c->W : r;
}

/* Prices template x of table t (its shards set in x->tp). A template cut
 * in the scratch arena is kept compact when its shard i sits on rank i
 * (row-wise, data-parallel), else its shards are copied out. */
static void price_tmpl(pctx *c, int32_t t, tmpl *x) {
  const dc_point *p = c->p;
  int32_t n = x->tp.n_shards;
  bool compact = x->in_scratch && n == c->W && n > 1;
  for (int32_t i = 0; i < n && compact; i++)
    compact = x->tp.shards[i].rank == i;
  dc_arena *va = compact ? &c->scratch : c->a;
  x->fwd_us = dc_arena_array(va, (size_t)n, sizeof(double));
  x->bwd_us = dc_arena_array(va, (size_t)n, sizeof(double));
  x->mem = dc_arena_array(va, (size_t)n, sizeof(int64_t));
  x->ffwd = dc_arena_array(va, (size_t)n, sizeof(fx));
  x->fbwd = dc_arena_array(va, (size_t)n, sizeof(fx));
  x->fmem = dc_arena_array(va, (size_t)n, sizeof(fx));
  x->fsend = dc_arena_array(va, (size_t)n, sizeof(fx));
  dc_table_plan saved = c->s->tables[t];
  c->s->tables[t] = x->tp;
  double Bg = (double)p->batch_size;
  dc_shard_work prev = {0};
  for (int32_t i = 0; i < n; i++) {
    /* a shard cut like the previous one (row-wise and data-parallel
     * shards all are but the remainder's) has its work, prices, memory
     * and send: they are pure functions of the shard's rows and columns
     * (graphgen's dc_shard_plan_work, dc_shard_memory) */
    if (i > 0 && x->tp.shards[i].rows == x->tp.shards[i - 1].rows &&
        x->tp.shards[i].cols == x->tp.shards[i - 1].cols) {
      x->fwd_us[i] = x->fwd_us[i - 1];
      x->bwd_us[i] = x->bwd_us[i - 1];
      x->mem[i] = x->mem[i - 1];
      x->ffwd[i] = x->ffwd[i - 1];
      x->fbwd[i] = x->fbwd[i - 1];
      x->fmem[i] = x->fmem[i - 1];
      x->fsend[i] = x->fsend[i - 1];
      continue;
    }
    dc_shard_work w = dc_shard_plan_work(p, c->s, t, i);
    /* row-wise and data-parallel shards are mostly alike: a shard with
     * the previous one's work has its prices (the models are pure) */
    if (i > 0 && w.batch == prev.batch && w.pooling == prev.pooling &&
        w.rows == prev.rows && w.cols == prev.cols) {
      x->fwd_us[i] = x->fwd_us[i - 1];
      x->bwd_us[i] = x->bwd_us[i - 1];
    } else {
      x->fwd_us[i] = emb_price(c, DC_KERNEL_EMBEDDING_FWD, &w);
      x->bwd_us[i] = emb_price(c, DC_KERNEL_EMBEDDING_BWD, &w);
    }
    prev = w;
    int64_t b;
    if (dc_shard_memory(p, c->s, t, i, &b)) {
      x->mem[i] = b;
    } else { /* saturated: what the whole-rank formula gives */
      dc_rank_memory m;
      dc_shard_plan_memory(p, c->s, x->tp.shards[i].rank, &m);
      x->mem[i] = m.total - c->base_mem;
    }
    if (i > 0 && x->fwd_us[i] == x->fwd_us[i - 1] &&
        x->bwd_us[i] == x->bwd_us[i - 1]) { /* to_fx is pure */
      x->ffwd[i] = x->ffwd[i - 1];
      x->fbwd[i] = x->fbwd[i - 1];
    } else {
      x->ffwd[i] = to_fx(x->fwd_us[i]);
      x->fbwd[i] = to_fx(x->bwd_us[i]);
    }
    x->fmem[i] = x->mem[i];
    double sd = 0;
    if (x->tp.type == DC_SHARDING_TABLE_WISE ||
        x->tp.type == DC_SHARDING_COLUMN_WISE)
      sd = Bg * x->tp.shards[i].cols * 4;
    else if (x->tp.type == DC_SHARDING_TABLE_ROW_WISE)
      sd = Bg / c->S * x->tp.shards[i].cols * 4;
    x->fsend[i] = to_fx(sd);
  }
  c->s->tables[t] = saved;
  x->dp_us = 0;
  if (x->tp.type == DC_SHARDING_DATA_PARALLEL && c->W > 1) {
    int64_t e = p->tables[t].rows * (int64_t)p->tables[t].dim;
    x->dp_us = coll_price(c, DC_KERNEL_ALL_REDUCE, (double)e * 4, c->W,
                          c->H) +
               ew_price(c, e, 0, 4) +
               ew_price(c, e, 1, 12.0 * opt_steps(p->optimizer));
  }
  x->fdp = to_fx(x->dp_us);
  /* quick: shards on distinct ranks (a stamp per rank) */
  x->quick = n <= c->W && n > 0;
  c->stamp++;
  for (int32_t i = 0; i < n && x->quick; i++) {
    int32_t r = x->tp.shards[i].rank;
    if (r < 0 || r >= c->W || c->mark[r] == c->stamp) x->quick = false;
    else c->mark[r] = c->stamp;
  }
  if (compact) {
    /* runs of equal values (bit for bit) share one entry */
    int32_t *vi = dc_arena_array(c->a, (size_t)n, sizeof(int32_t));
    int32_t nd = 0;
    for (int32_t i = 0; i < n; i++) {
      int32_t j = nd - 1;
      if (i == 0 || memcmp(&x->fwd_us[i], &x->fwd_us[j], sizeof(double)) ||
          memcmp(&x->bwd_us[i], &x->bwd_us[j], sizeof(double)) ||
          x->mem[i] != x->mem[j] || x->fsend[i] != x->fsend[j]) {
        j = nd++;
        x->fwd_us[j] = x->fwd_us[i];
        x->bwd_us[j] = x->bwd_us[i];
        x->mem[j] = x->mem[i];
        x->ffwd[j] = x->ffwd[i];
        x->fbwd[j] = x->fbwd[i];
        x->fmem[j] = x->fmem[i];
        x->fsend[j] = x->fsend[i];
      }
      vi[i] = j;
    }
#define KEEP(f) do { void *q = dc_arena_array(c->a, (size_t)nd, sizeof *x->f); \
    memcpy(q, x->f, (size_t)nd * sizeof *x->f); x->f = q; } while (0)
    KEEP(fwd_us); KEEP(bwd_us); KEEP(mem);
    KEEP(ffwd); KEEP(fbwd); KEEP(fmem); KEEP(fsend);
#undef KEEP
    x->vi = vi;
    x->ident = true;
    x->tp.shards = NULL;
  } else if (x->in_scratch && n > 0) {
    dc_shard *sh = dc_arena_array(c->a, (size_t)n, sizeof(dc_shard));
    memcpy(sh, x->tp.shards, (size_t)n * sizeof(dc_shard));
    x->tp.shards = sh;
  }
  x->in_scratch = false;
}

static uint32_t allowed_of(const pctx *c, int32_t t) {
  return dc_plan_table_types(c->p, c->o, t);
}

static bool pinned_has(const dc_table *tb, int32_t r) {
  for (int32_t i = 0; i < tb->n_ranks; i++)
    if (tb->ranks[i] == r) return true;
  return false;
}

/* Adds a template of `type` on `ranks` (false when the table cannot be
 * cut that way); its rotations are set by the caller. */
static tmpl *add_tmpl(pctx *c, int32_t t, dc_sharding type, int32_t n,
                      const int32_t *ranks, tmpl *out, int32_t *k) {
  dc_diags quiet = {0};
  dc_shard_plan *tmp = c->s;
  dc_table_plan saved = tmp->tables[t];
  bool wide = type == DC_SHARDING_ROW_WISE ||
              type == DC_SHARDING_DATA_PARALLEL;
  bool ok = dc_shard_plan_set(tmp, c->p, t, type, n, ranks,
                              wide ? &c->scratch : c->a, &quiet);
  dc_diags_free(&quiet);
  tmpl *x = NULL;
  if (ok) {
    x = &out[(*k)++];
    memset(x, 0, sizeof *x);
    x->tp = tmp->tables[t];
    x->n_rot = 1;
    x->in_scratch = wide;
  }
  tmp->tables[t] = saved;
  return x;
}

/* The candidates of table t, in the order the search tries them:
 * table-wise on each (allowed) rank, column-wise from each start rank,
 * row-wise, table-row-wise on each (allowed) host, data-parallel. */
static void make_cands(pctx *c, int32_t t) {
  const dc_table *tb = &c->p->tables[t];
  uint32_t m = allowed_of(c, t);
  int32_t W = c->W;
  tmpl *x = dc_arena_array(c->a, 6, sizeof(tmpl));
  int32_t k = 0;
  int32_t *rk = dc_arena_array(c->a, (size_t)W, sizeof(int32_t));
  bool pinned = tb->n_ranks > 0;
  tmpl *y;
  if (m & DC_PLAN_TYPE(DC_SHARDING_TABLE_WISE)) {
    int32_t n = 0, *rots = dc_arena_array(c->a, (size_t)W, sizeof(int32_t));
    for (int32_t r = 0; r < W; r++)
      if (!pinned || pinned_has(tb, r)) rots[n++] = r;
    rk[0] = 0;
    if (n > 0 && (y = add_tmpl(c, t, DC_SHARDING_TABLE_WISE, 1, rk, x, &k))) {
      y->n_rot = n;
      y->rots = rots;
    }
  }
  if ((m & DC_PLAN_TYPE(DC_SHARDING_COLUMN_WISE)) && W > 1) {
    if (pinned) {
      add_tmpl(c, t, DC_SHARDING_COLUMN_WISE, tb->n_ranks, tb->ranks, x, &k);
    } else {
      int32_t n = tb->dim / 32;
      if (n > W) n = W;
      if (n >= 2) {
        for (int32_t i = 0; i < n; i++) rk[i] = i;
        if ((y = add_tmpl(c, t, DC_SHARDING_COLUMN_WISE, n, rk, x, &k))) {
          y->n_rot = W;
          y->rot_step = 1;
        }
      }
    }
  }
  if ((m & DC_PLAN_TYPE(DC_SHARDING_ROW_WISE)) && W > 1 &&
      (!pinned || tb->n_ranks == W))
    add_tmpl(c, t, DC_SHARDING_ROW_WISE, 0, NULL, x, &k);
  if ((m & DC_PLAN_TYPE(DC_SHARDING_TABLE_ROW_WISE)) && c->S > 1 &&
      c->H > 1) {
    int32_t n = 0, *rots = dc_arena_array(c->a, (size_t)c->H, sizeof(int32_t));
    for (int32_t h = 0; h < c->H; h++) {
      bool ok = !pinned;
      for (int32_t i = 0; i < tb->n_ranks; i++)
        if (tb->ranks[i] / c->S == h) ok = true;
      if (ok) rots[n++] = h * c->S;
    }
    rk[0] = 0;
    if (n > 0 &&
        (y = add_tmpl(c, t, DC_SHARDING_TABLE_ROW_WISE, 1, rk, x, &k))) {
      y->n_rot = n;
      y->rots = rots;
    }
  }
  if ((m & DC_PLAN_TYPE(DC_SHARDING_DATA_PARALLEL)) && W > 1 &&
      (!pinned || tb->n_ranks == W))
    add_tmpl(c, t, DC_SHARDING_DATA_PARALLEL, 0, NULL, x, &k);
  if (W == 1 && k == 0) {
    rk[0] = 0;
    add_tmpl(c, t, DC_SHARDING_TABLE_WISE, 1, rk, x, &k);
  }
  int32_t nc = 0;
  for (int32_t i = 0; i < k; i++) {
    price_tmpl(c, t, &x[i]);
    nc += x[i].n_rot;
  }
  dc_arena_free(&c->scratch); /* nothing left there: no leak on any path */
  c->tm[t] = x;
  c->n_tm[t] = k;
  c->n_cands[t] = nc;
}

/* Candidate k of table t as a table plan of its own (arena-allocated). */
static dc_table_plan cand_plan(const pctx *c, int32_t t, int32_t k) {
  int32_t rot;
  const tmpl *x = cand_of(c, t, k, &rot);
  if (x->ident) { /* compact: cut the table again (the same shards) */
    dc_diags quiet = {0};
    dc_table_plan saved = c->s->tables[t];
    bool ok = dc_shard_plan_set(c->s, c->p, t, x->tp.type, 0, NULL, c->a,
                                &quiet);
    dc_diags_free(&quiet);
    DC_ASSERT(ok && c->s->tables[t].n_shards == x->tp.n_shards);
    dc_table_plan tp = c->s->tables[t];
    c->s->tables[t] = saved;
    return tp;
  }
  dc_table_plan tp = x->tp;
  tp.shards = dc_arena_array(c->a, (size_t)tp.n_shards, sizeof(dc_shard));
  for (int32_t i = 0; i < tp.n_shards; i++) {
    tp.shards[i] = x->tp.shards[i];
    tp.shards[i].rank = rank_of(c, x, i, rot);
  }
  if (tp.type == DC_SHARDING_TABLE_ROW_WISE && tp.n_shards > 0)
    tp.host = dc_shard_plan_host(c->s, tp.shards[0].rank);
  return tp;
}

/* The objective of the current (possibly partial) assignment, summed
 * table by table (the reported cost of a plan). */
static void eval_full(pctx *c, dc_plan_cost *out) {
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
    int32_t rot;
    const tmpl *x = cand_of(c, t, c->cur[t], &rot);
    double dim = p->tables[t].dim;
    for (int32_t i = 0; i < x->tp.n_shards; i++) {
      int32_t r = rank_of(c, x, i, rot), v = vix(x, i);
      c->rf[r] += x->fwd_us[v];
      c->rb[r] += x->bwd_us[v];
      c->rm[r] += x->mem[v];
      if (x->tp.type == DC_SHARDING_TABLE_WISE ||
          x->tp.type == DC_SHARDING_COLUMN_WISE)
        c->send[r] += Bg * x->tp.shards[i].cols * 4;
      else if (x->tp.type == DC_SHARDING_TABLE_ROW_WISE)
        c->send[r] += Bg / c->S * x->tp.shards[i].cols * 4;
    }
    switch (x->tp.type) {
    case DC_SHARDING_TABLE_WISE:
    case DC_SHARDING_COLUMN_WISE: d_a2a += dim; break;
    case DC_SHARDING_TABLE_ROW_WISE:
      d_a2a += dim;
      c->twrw[rank_of(c, x, 0, rot) / c->S] += dim;
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

static double host_price(pctx *c, int32_t h) {
  if (!(c->tw_dims[h] > 0)) return 0;
  return coll_cached(c, &c->twp, DC_KERNEL_REDUCE_SCATTER, true,
                     (double)c->p->batch_size * c->tw_dims[h] * 4, c->S, 1);
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
  case DC_SHARDING_COLUMN_WISE: c->d_a2a += dim; break;
  case DC_SHARDING_TABLE_ROW_WISE: {
    int32_t h = rank_of(c, x, 0, rot) / c->S;
    c->d_a2a += dim;
    c->tw_dims[h] += dim;
    mtree_set(&c->thost, h, host_price(c, h));
    break;
  }
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
                          B * d_a2a * 4, W, c->H);
    }
    comm += hmax;
    if (d_rw > 0)
      comm += coll_cached(c, &c->rwp, DC_KERNEL_REDUCE_SCATTER, true,
                          Bg * d_rw * 4, W, c->H);
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
  case DC_SHARDING_TABLE_ROW_WISE: d_a2a += dim; break;
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
                       (double)c->p->batch_size * tw * 4, c->S, 1);
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
  for (int32_t t = 0; t < c->T; t++) out->tables[t] = cand_plan(c, t, c->cur[t]);
}

static void set_all(pctx *c, const int32_t *ks) {
  for (int32_t t = 0; t < c->T; t++) set_cur(c, t, ks[t]);
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
    price_tmpl(&c, t, &c.tm[t][0]);
    c.n_tm[t] = 1;
    c.n_cands[t] = 1;
    c.cur[t] = 0;
  }
  eval_full(&c, out);
}

/* Whether candidate k of table t is the table plan y. */
static bool cand_is(const pctx *c, int32_t t, int32_t k,
                    const dc_table_plan *y) {
  int32_t rot;
  const tmpl *x = cand_of(c, t, k, &rot);
  if (x->tp.type != y->type || x->tp.n_shards != y->n_shards) return false;
  if (x->ident) { /* compact: compare with the table cut again */
    dc_table_plan z = cand_plan(c, t, k);
    return memcmp(z.shards, y->shards,
                  (size_t)y->n_shards * sizeof(dc_shard)) == 0;
  }
  for (int32_t i = 0; i < y->n_shards; i++) {
    dc_shard sh = x->tp.shards[i];
    sh.rank = rank_of(c, x, i, rot);
    if (memcmp(&sh, &y->shards[i], sizeof sh) != 0) return false;
  }
  return true;
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
    const tmpl *x = &c.tm[t][0];
    double w = 0;
    for (int32_t i = 0; i < x->tp.n_shards; i++)
      w += x->fwd_us[vix(x, i)] + x->bwd_us[vix(x, i)];
    ord[t] = (worder){t, w, p->tables[t].rows * (int64_t)p->tables[t].dim};
  }
  qsort(ord, (size_t)c.T, sizeof *ord, cmp_worder);
  for (int32_t i = 0; i < c.T; i++) {
    int32_t t = ord[i].t;
    dc_plan_cost best = {0};
    bool have = false;
    int32_t bk = pick(&c, t, -1, &best, &have);
    if (bk < 0) {
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_NO_PLAN, p->tables[t].span,
          "no placement of table '%s' fits in the %d GPUs' memory",
          p->tables[t].name ? p->tables[t].name : "?", c.W);
      dc_diag_set_help(g, "add GPUs, use GPUs with more HBM, or shrink "
                          "the tables or the batch");
      return NULL;
    }
    set_cur(&c, t, bk);
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
  int32_t *start = dc_arena_array(a, (size_t)(c.T > 0 ? c.T : 1),
                                  sizeof(int32_t));
  for (int32_t t = 0; have && t < c.T; t++) {
    int32_t found = -1;
    for (int32_t k = 0; k < c.n_cands[t] && found < 0; k++)
      if (cand_is(&c, t, k, &base->tables[t])) found = k;
    if (found < 0) have = false;
    else start[t] = found;
  }
  if (have) {
    set_all(&c, start);
    dc_plan_cost g0;
    cost_now(&c, &g0);
    if (g0.fits) {
      dc_plan_cost g2;
      local_search(&c, &g2);
      if (!better(&g2, &g1)) set_all(&c, keep);
    } else {
      set_all(&c, keep);
    }
  }
  dc_shard_plan *out = dc_shard_plan_new(p, a);
  materialize(&c, out);
  if (cost) eval_full(&c, cost);
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

dc_graph *dc_plan_build_graph(const dc_point *p, dc_graph_detail detail,
                              dc_arena *a, dc_diags *d) {
  if (p->gpus <= 1 || p->sharding != DC_SHARDING_AUTO)
    return dc_graph_build_detail(p, NULL, detail, a, d);
  dc_device dev;
  if (!dc_device_of_point(p, &dev, a, d)) return NULL;
  dc_plan_opts o = {.dev = &dev, .models = dc_kmodels_for(&dev)};
  /* When no placement fits, the point still gets a row (fits = false):
   * the greedy default plan, as the capacity question needs. Constraint
   * errors (E0502) are real errors. */
  /* The search's state (templates, per-shard prices: O(T·W) at most)
   * lives in an arena of its own, dropped before the graph is built, so
   * the peak is the larger of the two, not their sum. */
  dc_diags pd = {0};
  dc_arena pa;
  dc_arena_init(&pa);
  dc_shard_plan *s = dc_plan_auto(p, &o, &pa, &pd, NULL);
  if (s) s = dc_shard_plan_copy(s, a);
  dc_arena_free(&pa);
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
  return dc_graph_build_detail(p, s, detail, a, d);
}
