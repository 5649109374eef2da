/*
 * placement.c — where the tables live under `sharding.memory: auto`: in
 * HBM, in host memory with a cache in HBM (uvm_caching), or in host memory
 * alone (uvm), chosen together with the sharding plan (plan.h).
 *
 * A placement is a pair (n_off, n_uvm) over the tables the point leaves
 * to the planner, taken in a fixed order — fewest lookups per byte first
 * (pooling / (rows · dim)), then the larger, then the lower index: the
 * first n_uvm of that order are uvm, the next n_off − n_uvm uvm_caching,
 * the rest HBM. Under both objectives a table priced in HBM is never
 * slower than cached, nor cached than uvm at the same place, so of the
 * placements that fit, the one with the fewest tables off HBM and, among
 * those, the fewest uvm is taken:
 *
 *   n_max   the most tables whose weights and optimizer state the hosts
 *           can hold together (hosts × host memory), in that order;
 *   fits(n_off, n_uvm)  the planner (dc_plan_auto, either objective;
 *           graphgen's default plan when the plan is not `auto` or there
 *           is one GPU, with every rank's HBM checked) finds a plan, and
 *           every host holds its ranks' tables;
 *   (1) all in HBM when that fits (n_off = 0: today's answer);
 *   (2) else the least n_off ≤ n_max with fits(n_off, 0), by bisection
 *       (HBM use falls as tables leave it);
 *   (3) else the least n_uvm with fits(n_max, n_uvm), then the least
 *       n_off ≥ n_uvm with fits(n_off, n_uvm), both by bisection.
 * That is O(log T) planner runs, repeated for cache shares of
 * cache_load_factor, its half, ... down to 1/1024 (a smaller cache
 * may let more tables be cached rather than uvm); the placement with the
 * least planner cost (dc_plan_cost_of, the point's objective) wins, and
 * the graph is built at its share. So the study's cache_load_factor is
 * the largest share a table gets, and doubling it never makes the
 * answer dearer under the planner's cost (the shares tried nest). When
 * nothing fits the answer is the placement that needs the least HBM
 * (n_max tables, all uvm) on graphgen's default plan, and its row says
 * fits = false. One GPU, or a plan that is not `auto`: the HBM check is
 * graphgen's per-rank formula (graphgen/memory.c), which on one GPU
 * counts activations a little below the graph walk behind that row's
 * `fits` (spec/study.md, "Per-rank memory and fits").
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/plan/plan.h"

/* Cache shares tried: cache_load_factor, its half, ... while at least
 * this (so the shares of two studies a power of two apart nest). */
#define MIN_SHARE (1.0 / 1024)

typedef struct pord {
  int32_t t;
  double heat; /* lookups per byte */
  int64_t bytes;
} pord;

static int cmp_pord(const void *x, const void *y) {
  const pord *a = x, *b = y;
  if (a->heat != b->heat) return a->heat < b->heat ? -1 : 1;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  return a->t < b->t ? -1 : a->t > b->t;
}

/* A table's weights and optimizer state, bytes. */
static int64_t table_bytes(const dc_point *p, int32_t t) {
  const dc_table *tb = &p->tables[t];
  dc_dtype edt = dc_storage_dtype(p->embedding_precision);
  int64_t w = dc_sat_mul_i64(tb->rows, dc_emb_row_bytes(edt, tb->dim));
  int64_t st = dc_optimizer_state_bytes(p->sparse_optimizer, tb->rows,
                                        dc_sat_mul_i64(tb->rows, tb->dim));
  return dc_sat_add_i64(w, st);
}

typedef struct place {
  const dc_point *p;
  const dc_plan_opts *o;
  int64_t host_cap;
  int32_t n; /* tables left to the planner */
  const pord *ord;
  dc_table *tables; /* the working copy's tables */
  dc_point q;       /* the working copy */
  bool hard_error;  /* a constraint error (not a capacity one) */
  dc_diags errs;
} place;

static void assign(place *c, int32_t n_off, int32_t n_uvm) {
  for (int32_t i = 0; i < c->n; i++) {
    dc_table *tb = &c->tables[c->ord[i].t];
    tb->memory = i < n_uvm   ? DC_MEMORY_UVM
                 : i < n_off ? DC_MEMORY_UVM_CACHING
                             : DC_MEMORY_HBM;
  }
}

static bool hosts_hold(const place *c, const dc_point *q,
                       const dc_shard_plan *s, bool check_hbm) {
  int32_t W = s->n_ranks < 1 ? 1 : s->n_ranks;
  int32_t H = s->hosts < 1 ? 1 : s->hosts;
  dc_rank_memory *m = dc_xmalloc((size_t)W * sizeof *m);
  int64_t *host = dc_xcalloc((size_t)H, sizeof *host);
  bool ok = dc_shard_plan_memory_all(q, s, m);
  double hbm = (double)c->o->dev->hbm_bytes *
               (c->o->hbm_fraction > 0 ? c->o->hbm_fraction : 1.0);
  for (int32_t r = 0; r < W && ok; r++) {
    if (check_hbm && (double)m[r].total > hbm) ok = false;
    int32_t h = dc_shard_plan_host(s, r);
    if (h < 0 || h >= H) h = 0;
    host[h] = dc_sat_add_i64(host[h], m[r].host_bytes);
  }
  for (int32_t h = 0; h < H && ok; h++)
    if (host[h] > c->host_cap) ok = false;
  free(host);
  free(m);
  return ok;
}

/* The plan of placement (n_off, n_uvm) in `a`, or NULL when it does not
 * fit (or a constraint error, recorded in c->errs). */
static dc_shard_plan *try_place(place *c, int32_t n_off, int32_t n_uvm,
                                dc_arena *a) {
  assign(c, n_off, n_uvm);
  const dc_point *q = &c->q;
  dc_diags pd = {0};
  dc_shard_plan *s = NULL;
  bool planner = q->gpus > 1 && q->sharding == DC_SHARDING_AUTO;
  if (planner)
    s = dc_plan_auto(q, c->o, a, &pd, NULL);
  else
    s = dc_shard_plan_default(q, a, &pd);
  if (!s && pd.count > 0 && pd.items[0].code != DC_DIAG_NO_PLAN &&
      !c->hard_error) {
    c->hard_error = true;
    for (size_t i = 0; i < pd.count; i++) {
      dc_diag *g = dc_diag_error(&c->errs, pd.items[i].code, pd.items[i].span,
                                 "%s", pd.items[i].message);
      if (pd.items[i].help) dc_diag_set_help(g, "%s", pd.items[i].help);
    }
  }
  dc_diags_free(&pd);
  if (s && !hosts_hold(c, q, s, !planner)) s = NULL;
  return s;
}

static bool fits(place *c, int32_t n_off, int32_t n_uvm) {
  dc_arena a;
  dc_arena_init(&a);
  bool ok = try_place(c, n_off, n_uvm, &a) != NULL;
  dc_arena_free(&a);
  return ok;
}

/* The least x in [lo, hi] for which the placement fits, fitting being
 * monotone in x; hi + 1 when none. x is the count of tables off HBM
 * (with `other` of them uncached) or, with `uvm`, the count uncached
 * (with `other` off HBM). */
static int32_t least_fit(place *c, int32_t lo, int32_t hi, int32_t other,
                         bool uvm) {
  int32_t r = hi + 1;
  while (lo <= hi && !c->hard_error) {
    int32_t mid = lo + (hi - lo) / 2;
    if (uvm ? fits(c, other, mid) : fits(c, mid, other)) {
      r = mid;
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  return r;
}

/* Steps (2) and (3) at the working copy's cache share: false when no
 * placement fits. */
static bool search(place *c, int32_t n_max, int32_t *n_off, int32_t *n_uvm) {
  *n_off = -1;
  *n_uvm = 0;
  if (n_max <= 0 || c->hard_error) return false;
  /* the ends first: a failing bisection costs log T failing planner
   * runs, and failing runs are the planner's slowest */
  if (fits(c, n_max, 0)) {
    *n_off = least_fit(c, 1, n_max - 1, 0, false);
    if (*n_off > n_max - 1) *n_off = n_max;
    return true;
  }
  if (!fits(c, n_max, n_max)) return false;
  int32_t u = least_fit(c, 1, n_max - 1, n_max, true);
  if (u > n_max - 1) u = n_max;
  if (u > n_max) return false;
  *n_uvm = u;
  *n_off = least_fit(c, u, n_max, u, false);
  if (*n_off > n_max) *n_off = n_max;
  return true;
}

const dc_point *dc_plan_place(const dc_point *p, const dc_plan_opts *o,
                              int64_t host_cap, dc_arena *a, dc_diags *d,
                              dc_shard_plan **plan) {
  *plan = NULL;
  place c;
  memset(&c, 0, sizeof c);
  c.p = p;
  c.o = o;
  c.host_cap = host_cap;
  c.q = *p;
  c.tables = dc_arena_array(a, (size_t)(p->n_tables > 0 ? p->n_tables : 1),
                            sizeof *c.tables);
  memcpy(c.tables, p->tables, (size_t)p->n_tables * sizeof *c.tables);
  c.q.tables = c.tables;
  pord *ord = dc_arena_array(a, (size_t)(p->n_tables > 0 ? p->n_tables : 1),
                             sizeof *ord);
  for (int32_t t = 0; t < p->n_tables; t++) {
    const dc_table *tb = &p->tables[t];
    if (tb->memory != DC_MEMORY_AUTO) continue;
    ord[c.n++] = (pord){t, tb->pooling / ((double)tb->rows * tb->dim),
                        table_bytes(p, t)};
  }
  qsort(ord, (size_t)c.n, sizeof *ord, cmp_pord);
  c.ord = ord;

  /* n_max: what the hosts hold together, the tables already placed in
   * host memory by the study counted first */
  int64_t cap = dc_sat_mul_i64(host_cap, p->hosts < 1 ? 1 : p->hosts);
  int64_t used = 0;
  for (int32_t t = 0; t < p->n_tables; t++) {
    const dc_table *tb = &p->tables[t];
    if (tb->memory != DC_MEMORY_UVM && tb->memory != DC_MEMORY_UVM_CACHING)
      continue;
    used = dc_sat_add_i64(used, table_bytes(p, t));
  }
  int32_t n_max = 0;
  while (n_max < c.n && dc_sat_add_i64(used, ord[n_max].bytes) <= cap) {
    used = dc_sat_add_i64(used, ord[n_max].bytes);
    n_max++;
  }

  /* A bound first: the tables that stay in HBM at best (all but the
   * n_max coldest) must fit in the GPUs' HBM together. */
  int64_t stay = 0;
  for (int32_t t = 0; t < p->n_tables; t++)
    if (p->tables[t].memory == DC_MEMORY_HBM)
      stay = dc_sat_add_i64(stay, table_bytes(p, t));
  for (int32_t i = n_max; i < c.n; i++)
    stay = dc_sat_add_i64(stay, ord[i].bytes);
  double hbm_all = (double)o->dev->hbm_bytes *
                   (o->hbm_fraction > 0 ? o->hbm_fraction : 1.0) *
                   (p->gpus < 1 ? 1 : p->gpus);
  bool hopeless = (double)stay > hbm_all;

  /* the cache shares tried: the study's, then halved while at least
   * MIN_SHARE; the cheapest placement under the planner's cost wins
   * (ties: the larger share) */
  double clf = p->cache_load_factor;
  double best_cost = 0, best_clf = clf;
  int32_t best_off = -1, best_uvm = 0;
  if (!hopeless && fits(&c, 0, 0)) {
    best_off = 0; /* (1): every table in HBM */
    hopeless = true; /* nothing more to search */
  }
  for (double share = clf; !c.hard_error && !hopeless; share /= 2) {
    c.q.cache_load_factor = share;
    int32_t n_off, n_uvm;
    if (!search(&c, n_max, &n_off, &n_uvm)) {
      /* all uvm has no cache: if that fails, no share helps */
      if (n_max > 0 && !fits(&c, n_max, n_max)) break;
      if (share / 2 < MIN_SHARE) break;
      continue;
    }
    dc_arena s;
    dc_arena_init(&s);
    dc_shard_plan *sp = try_place(&c, n_off, n_uvm, &s);
    if (sp) {
      dc_plan_cost cost;
      dc_plan_cost_of(&c.q, sp, o, &s, &cost);
      if (best_off < 0 || cost.total_us < best_cost) {
        best_cost = cost.total_us;
        best_clf = c.q.cache_load_factor;
        best_off = n_off;
        best_uvm = n_uvm;
      }
    }
    dc_arena_free(&s);
    if (share / 2 < MIN_SHARE) break;
  }
  if (c.hard_error) {
    for (size_t i = 0; i < c.errs.count; i++) {
      dc_diag *g = dc_diag_error(d, c.errs.items[i].code, c.errs.items[i].span,
                                 "%s", c.errs.items[i].message);
      if (c.errs.items[i].help) dc_diag_set_help(g, "%s", c.errs.items[i].help);
    }
    dc_diags_free(&c.errs);
    return NULL;
  }
  dc_diags_free(&c.errs);
  if (best_off < 0) {
    /* nothing fits: the placement that needs the least HBM */
    c.q.cache_load_factor = clf;
    assign(&c, n_max, n_max);
  } else {
    c.q.cache_load_factor = best_clf;
    dc_arena s;
    dc_arena_init(&s);
    dc_shard_plan *sp = try_place(&c, best_off, best_uvm, &s);
    if (sp) *plan = dc_shard_plan_copy(sp, a);
    dc_arena_free(&s);
    assign(&c, best_off, best_uvm);
  }
  dc_point *q = dc_arena_alloc(a, sizeof *q);
  *q = c.q;
  return q;
}
