/*
 * candidates.c — the candidates of `plan: auto` (plan.h; the search that
 * chooses among them is planner.c): for each table, every way of cutting
 * it that its constraints and the allowed types permit — table-wise on
 * each (allowed) rank, column-wise in n = min(W, D/32) blocks from each
 * start rank, row-wise, table-row-wise on each (allowed) host, data-
 * parallel — and what each costs.
 *
 * A shard's work, kernel prices and memory do not depend on its rank, so
 * each way of cutting a table (a template) is priced once, and a
 * candidate is a template plus a rotation of its ranks: O(T) prices and
 * O(T) memory, not O(T·W·C). Prices are dc_kernel_time of the embedding
 * kernels (the evaluator's models) and of the collectives; memory is each
 * shard's increment over the empty plan (graphgen's dc_shard_memory).
 * Row-wise and data-parallel templates, which have a shard on every rank,
 * are kept compact: runs of equal values share one entry.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/plan/plan_int.h"
#include "runtime/runtime.h"

static fx to_fx(double x) {
  if (!(x > 0)) return 0;
  if (x > 1e18) x = 1e18;
  return (fx)(x * 0x1p60);
}

static double ktime(const pctx *c, const dc_kernel *k) {
  return dc_kernel_time(k, c->o->dev, c->o->models);
}

static double emb_price(const pctx *c, dc_kernel_kind kind, int32_t t,
                        const dc_shard_work *w) {
  dc_emb_group g = dc_shard_emb_group(c->p, t, w->rows, w->cols, w->pooling);
  g.tables = 1;
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

double pl_coll_price(const pctx *c, dc_kernel_kind kind, double bytes,
                     int32_t ranks, int32_t hosts) {
  if (ranks < 2) return 0;
  dc_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = kind;
  k.scale = 1;
  k.u.coll.bytes = dc_f64_sat_i64(bytes);
  k.u.coll.ranks = ranks;
  k.u.coll.hosts = hosts;
  /* the planner's all-to-all is the pooled one, as the graph runs it */
  k.u.coll.hier = kind == DC_KERNEL_ALL_TO_ALL && dc_pooled_a2a_hier(c->p);
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

/* A replica's gradient all-reduce of `bytes`: a collective of its own,
 * or, where the graph groups it with the dense gradients
 * (dc_dp_grad_grouped), what it adds to their one all-reduce — bytes on
 * the wire, no latency of its own. */
static double dp_reduce_price(const pctx *c, double bytes) {
  if (!dc_dp_grad_grouped(c->p))
    return pl_coll_price(c, DC_KERNEL_ALL_REDUCE, bytes, c->W, c->H);
  double dense = (double)dc_point_dense_params(c->p) * dc_dp_grad_bytes(c->p);
  double more = pl_coll_price(c, DC_KERNEL_ALL_REDUCE, dense + bytes, c->W,
                              c->H) -
                pl_coll_price(c, DC_KERNEL_ALL_REDUCE, dense, c->W, c->H);
  return more > 0 ? more : 0;
}

/* Prices template x of table t (its shards set in x->tp). A template cut
 * in the scratch arena is kept compact when its shard i sits on rank i
 * (row-wise, data-parallel), else its shards are copied out. */
void pl_price_tmpl(pctx *c, int32_t t, tmpl *x) {
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
      x->fwd_us[i] = emb_price(c, DC_KERNEL_EMBEDDING_FWD, t, &w);
      x->bwd_us[i] = emb_price(c, DC_KERNEL_EMBEDDING_BWD, t, &w);
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
        x->tp.type == DC_SHARDING_COLUMN_WISE ||
        x->tp.type == DC_SHARDING_TABLE_COLUMN_WISE)
      sd = Bg * x->tp.shards[i].cols * c->wire_bytes;
    else if (x->tp.type == DC_SHARDING_TABLE_ROW_WISE ||
             x->tp.type == DC_SHARDING_GRID_SHARD)
      sd = Bg / c->S * x->tp.shards[i].cols * c->wire_bytes;
    x->fsend[i] = to_fx(sd);
  }
  c->s->tables[t] = saved;
  x->dp_us = 0;
  if (x->tp.type == DC_SHARDING_DATA_PARALLEL && c->W > 1) {
    int64_t e = p->tables[t].rows * (int64_t)p->tables[t].dim;
    double flops, bytes;
    dc_optimizer_cost(dc_dp_table_optimizer(p), &flops, &bytes);
    x->dp_us = dp_reduce_price(c, (double)e * dc_dp_grad_bytes(p)) +
               ew_price(c, e, 0, 4) + ew_price(c, e, flops, bytes);
  }
  x->fdp = to_fx(x->dp_us);
  /* quick: shards on distinct ranks (a stamp per rank), and no host
   * collectives but one table-row-wise host's (try_cost's quick path
   * prices that one; a grid table changes several hosts', so it goes
   * through apply) */
  x->quick = n <= c->W && n > 0 && x->tp.type != DC_SHARDING_GRID_SHARD;
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

/* At most this many grid_shard templates a table (block counts 2, 4, 8,
 * ... and the largest). */
#define GRID_MAX_TMPL 16

/* grid_shard templates of table t (appended to x at *k): n column blocks
 * on n consecutive hosts, each rotation a whole host further, for n = 2,
 * 4, 8, ... up to one 32-column block per host and that largest count
 * itself (HugeCTR's MLPerf planner splits a hot table across nodes in
 * powers of two). None for a pinned table, one GPU per host (column-wise
 * is that) or hosts of unequal size. Blocks over every host have one
 * rotation: the others only permute equal blocks. */
static void add_grid(pctx *c, int32_t t, tmpl *x, int32_t *k, int32_t *rk) {
  const dc_table *tb = &c->p->tables[t];
  if (tb->n_ranks > 0 || c->S < 2 || c->H < 2 ||
      (int64_t)c->H * c->S != c->W)
    return;
  int32_t top = tb->dim / 32 < c->H ? tb->dim / 32 : c->H;
  int32_t *rots = dc_arena_array(c->a, (size_t)c->H, sizeof(int32_t));
  for (int32_t h = 0; h < c->H; h++) rots[h] = h * c->S;
  for (int32_t n = 2, g = 0; n <= top && g < GRID_MAX_TMPL; g++) {
    for (int32_t j = 0; j < n; j++) rk[j] = j * c->S;
    tmpl *y = add_tmpl(c, t, DC_SHARDING_GRID_SHARD, n, rk, x, k);
    if (y) {
      y->n_rot = n == c->H ? 1 : c->H;
      y->rots = rots;
    }
    n = n * 2 > top && n < top ? top : n * 2;
  }
}

double pl_table_work(pctx *c, int32_t t) {
  const dc_table *tb = &c->p->tables[t];
  dc_shard_work w = {c->p->batch_size, tb->pooling, tb->rows, tb->dim};
  return emb_price(c, DC_KERNEL_EMBEDDING_FWD, t, &w) +
         emb_price(c, DC_KERNEL_EMBEDDING_BWD, t, &w);
}

void pl_add_grid(pctx *c, int32_t t) {
  uint32_t m = allowed_of(c, t);
  if (!(m & DC_PLAN_TYPE(DC_SHARDING_GRID_SHARD)) ||
      m == DC_PLAN_TYPE(DC_SHARDING_GRID_SHARD))
    return; /* not allowed, or added with the others */
  tmpl *x = c->tm[t];
  int32_t k = c->n_tm[t], k0 = k;
  int32_t *rk = dc_arena_array(c->a, (size_t)c->W, sizeof(int32_t));
  add_grid(c, t, x, &k, rk);
  for (int32_t i = k0; i < k; i++) {
    pl_price_tmpl(c, t, &x[i]);
    c->n_cands[t] += x[i].n_rot;
  }
  dc_arena_free(&c->scratch);
  c->n_tm[t] = k;
}

/* table_column_wise templates of table t (appended to x at *k): pinned,
 * its ranks; else min(GPUs a host, D/32) blocks (at least one) on
 * consecutive ranks of one host, from each start rank that keeps them
 * there. */
static void add_twcw(pctx *c, int32_t t, tmpl *x, int32_t *k, int32_t *rk) {
  const dc_table *tb = &c->p->tables[t];
  if (tb->n_ranks > 0) {
    add_tmpl(c, t, DC_SHARDING_TABLE_COLUMN_WISE, tb->n_ranks, tb->ranks, x,
             k);
    return;
  }
  int32_t S = c->S, n = tb->dim / 32;
  if (n > S) n = S;
  if (n < 1) n = 1;
  for (int32_t i = 0; i < n; i++) rk[i] = i;
  tmpl *y = add_tmpl(c, t, DC_SHARDING_TABLE_COLUMN_WISE, n, rk, x, k);
  if (!y) return;
  int32_t *rots = dc_arena_array(c->a, (size_t)c->W, sizeof(int32_t));
  int32_t nr = 0;
  for (int32_t h = 0; h < c->H; h++)
    for (int32_t j = 0; j + n <= S && h * S + j + n <= c->W; j++)
      rots[nr++] = h * S + j;
  y->n_rot = nr;
  y->rots = rots;
}

/* The candidates of table t, in the order the search tries them:
 * table-wise on each (allowed) rank, column-wise from each start rank,
 * row-wise, table-row-wise on each (allowed) host, data-parallel, then
 * grid_shard from each start host (or table_column_wise, add_twcw). */
void pl_make_cands(pctx *c, int32_t t) {
  const dc_table *tb = &c->p->tables[t];
  uint32_t m = allowed_of(c, t);
  int32_t W = c->W;
  tmpl *x = dc_arena_array(c->a, 6 + GRID_MAX_TMPL, sizeof(tmpl));
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
  /* a table that may only be grid_shard gets its grid templates here;
   * the others where pl_add_grid finds them worth it */
  if (m == DC_PLAN_TYPE(DC_SHARDING_GRID_SHARD)) add_grid(c, t, x, &k, rk);
  /* table_column_wise only where it is the table's one type: elsewhere the
   * column-wise templates' rotations already hold every run of ranks
   * inside a host, built alike in the pytorch and fused styles and with
   * one all-to-all fewer in the torchrec style */
  if (m == DC_PLAN_TYPE(DC_SHARDING_TABLE_COLUMN_WISE) && W > 1)
    add_twcw(c, t, x, &k, rk);
  if (W == 1 && k == 0) {
    rk[0] = 0;
    add_tmpl(c, t, DC_SHARDING_TABLE_WISE, 1, rk, x, &k);
  }
  int32_t nc = 0;
  for (int32_t i = 0; i < k; i++) {
    pl_price_tmpl(c, t, &x[i]);
    nc += x[i].n_rot;
  }
  dc_arena_free(&c->scratch); /* nothing left there: no leak on any path */
  c->tm[t] = x;
  c->n_tm[t] = k;
  c->n_cands[t] = nc;
}

/* Candidate k of table t as a table plan of its own (arena-allocated). */
dc_table_plan pl_cand_plan(const pctx *c, int32_t t, int32_t k) {
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
  if ((tp.type == DC_SHARDING_TABLE_ROW_WISE ||
       tp.type == DC_SHARDING_TABLE_COLUMN_WISE) &&
      tp.n_shards > 0)
    tp.host = dc_shard_plan_host(c->s, tp.shards[0].rank);
  return tp;
}

/* Whether candidate k of table t is the table plan y. */
bool pl_cand_is(const pctx *c, int32_t t, int32_t k,
                const dc_table_plan *y) {
  int32_t rot;
  const tmpl *x = cand_of(c, t, k, &rot);
  if (x->tp.type != y->type || x->tp.n_shards != y->n_shards) return false;
  if (x->ident) { /* compact: compare with the table cut again */
    dc_table_plan z = pl_cand_plan(c, t, k);
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

/* The first candidate index of table t's unpinned template of `type`
 * whose rotations are every start rank (candidate k0 + r starts its
 * shards at rank r), else -1. */
int32_t pl_rot_base(const pctx *c, int32_t t, dc_sharding type) {
  for (int32_t j = 0, k0 = 0; j < c->n_tm[t]; k0 += c->tm[t][j++].n_rot) {
    const tmpl *x = &c->tm[t][j];
    if (x->tp.type != type || x->ident || x->n_rot != c->W) continue;
    bool every = true; /* rotation r is r: table-wise rots, or step 1 */
    for (int32_t r = 0; r < c->W && every; r++)
      every = (x->rots ? x->rots[r] : r * x->rot_step) == r;
    if (every) return k0;
  }
  return -1;
}
/* The first candidate index of table t's grid_shard template with the
 * most blocks (its rotations follow), else -1; *n_rot its rotations. */
int32_t pl_widest_grid(const pctx *c, int32_t t, int32_t *n_rot) {
  int32_t best = -1, most = 0;
  for (int32_t j = 0, k0 = 0; j < c->n_tm[t]; k0 += c->tm[t][j++].n_rot) {
    const tmpl *x = &c->tm[t][j];
    if (x->tp.type != DC_SHARDING_GRID_SHARD || x->tp.n_shards <= most)
      continue;
    most = x->tp.n_shards;
    best = k0;
    *n_rot = x->n_rot;
  }
  return best;
}
/* Whether table t's current candidate is of type a or b. */
bool pl_cur_is(const pctx *c, int32_t t, dc_sharding a, dc_sharding b) {
  int32_t rot;
  const tmpl *x = c->cur[t] >= 0 ? cand_of(c, t, c->cur[t], &rot) : NULL;
  return x && (x->tp.type == a || x->tp.type == b);
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
  *fwd_us = emb_price(&c, DC_KERNEL_EMBEDDING_FWD, table, &w);
  *bwd_us = emb_price(&c, DC_KERNEL_EMBEDDING_BWD, table, &w);
}

