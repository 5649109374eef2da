/*
 * placement.c — where the tables live under `sharding.memory: auto`: in
 * HBM, in host memory with a cache in HBM (uvm_caching), or in host memory
 * alone (uvm), chosen together with the sharding plan (plan.h).
 *
 * A placement is a pair (n_off, n_uvm) over the tables the point leaves
 * to the planner, taken in a fixed order — fewest lookups per byte first
 * (pooling / (rows · dim)), then the larger, then the lower index: the
 * first n_uvm of that order are uvm, the next n_off − n_uvm uvm_caching,
 * the rest HBM.
 *
 *   n_max   the most tables whose weights and optimizer state the hosts
 *           can hold together (hosts × host memory), in that order;
 *   fits(n_off, n_uvm)  the planner (dc_plan_auto, either objective;
 *           graphgen's default plan when the plan is not `auto` or there
 *           is one GPU, with every rank's HBM checked) finds a plan, and
 *           every host holds its ranks' tables;
 *   (1) all in HBM when that fits (n_off = 0), and nothing else is tried;
 *   (2) else, at a cache share g, the least n_off ≤ n_max with
 *       fits(n_off, 0), by bisection (HBM use falls as tables leave it);
 *   (3) else the least n_uvm with fits(n_max, n_uvm), then the least
 *       n_off ≥ n_uvm with fits(n_off, n_uvm), both by bisection.
 * Fewest tables off HBM is not always fastest: a tight fit can force the
 * planner into row-wise shards whose exchange costs more than a few more
 * cached tables would. So (2)/(3)'s answer (n_off, n_uvm) and the
 * placements with 2, 4, ... times as many tables off HBM (up to n_max)
 * are candidates, each with its plan at g.
 *
 * Shares. g runs over a fixed ladder, 1, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01,
 * then decades to 1e-6 (the least cache_load_factor a study may give),
 * the rungs at most the study's cache_load_factor (clf). A candidate
 * keeps its plan and is priced at the largest share ≤ clf at which that
 * plan still fits (fit_limit; never below g): a smaller share may let
 * more tables be cached rather than uvm, or stay in HBM, and the largest
 * that fits hits most. The candidate the caller's pricer finds fastest
 * wins, one whose row fits before one whose row does not
 * (dc_plan_build_graph prices with the evaluator, so the step time ranked
 * is the one the row reports; without a pricer, the planner's cost,
 * dc_plan_cost_of). The graph is built with its plan at its share.
 *
 * Less cache is never faster. A larger clf has every candidate of a
 * smaller one (the same rungs, and more), each found the same way and
 * priced at a share no smaller; with its plan fixed, a larger cache only
 * raises hit rates (kernels/uvm.c), so no candidate gets slower, and the
 * least of them cannot either (a row that fits wins over one that does
 * not, so this is among rows that fit alike). Every share search is a
 * bisection whose steps do not depend on clf (it stops early only once
 * clf is known to fit), so this holds exactly where the planner's memory
 * check and the row's agree; where they do not (price_cand), to the
 * bisection's precision: a row's share may fall short of the largest
 * that fits by 1/4096 of log(1/g).
 *
 * When nothing fits the answer is the placement that needs the least HBM
 * (n_max tables, all uvm) on graphgen's default plan, and its row says
 * fits = false. One GPU, or a plan that is not `auto`: the HBM check is
 * graphgen's per-rank formula (graphgen/memory.c), which on one GPU
 * counts activations a little below the graph walk behind that row's
 * `fits` (spec/study.md, "Per-rank memory and fits"); price_cand lowers
 * a candidate's share until its row fits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/plan/plan.h"

/* The shares whose placements are candidates: 1-2-5 steps from 1 to
 * 0.01, then decades down to the least cache_load_factor a study may
 * give (1e-6), so every study's share has one at or below it, and the
 * candidates of a share are among those of any larger share. */
static const double SHARES[] = {1,    0.5,  0.2,  0.1,  0.05, 0.02,
                                0.01, 1e-3, 1e-4, 1e-5, 1e-6};
#define LEAST_SHARE 1e-6

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
  bool planner;                 /* plans come from dc_plan_auto */
  double clf;                   /* the study's cache_load_factor */
  const dc_plan_pricer *pricer; /* may be NULL: the planner's cost */
  /* the candidates considered, plans in `keep` */
  dc_arena keep;
  struct cand {
    int32_t n_off, n_uvm;
    const dc_shard_plan *plan;
    double limit;   /* the plan's fit limit (fit_limit) */
    double share;   /* the share it is priced at */
    double cost;    /* the planner's cost there */
    bool priced;    /* the pricer priced it: */
    double step_us; /* its step time */
    bool row_fits;  /* and whether its row says fits */
  } * cands;
  int32_t n_cands, cap_cands;
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
  /* Every table in HBM: the plan `memory: hbm` would get, chosen among
   * the planner's candidates by the evaluator (planner.c) — the same for
   * every cache_load_factor, so the search stays monotone in it. The
   * placements with a cache keep the objective's plan (one evaluation
   * each, not one per candidate plan). */
  dc_plan_opts all_hbm = *c->o;
  if (n_off == 0 && n_uvm == 0 && c->pricer) all_hbm.pricer = c->pricer;
  if (planner)
    s = dc_plan_auto(q, &all_hbm, a, &pd, NULL);
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

/* Whether `plan`, made for another share, still fits at `share`: the
 * planner's own check (its cost's `fits`) when it chose the plan, every
 * rank's HBM otherwise, and the hosts either way. */
static bool plan_fits_at(place *c, const dc_shard_plan *plan, double share,
                         bool planner) {
  c->q.cache_load_factor = share;
  if (!planner) return hosts_hold(c, &c->q, plan, true);
  dc_arena a;
  dc_arena_init(&a);
  dc_plan_cost cost;
  dc_plan_cost_of(&c->q, plan, c->o, &a, &cost);
  dc_arena_free(&a);
  return cost.fits && hosts_hold(c, &c->q, plan, false);
}

/* The largest share at which `plan` fits, to 1/4096 of the log-range
 * [LEAST_SHARE, 1] (0.34 %), by bisection in log(share); at least `clf`
 * when that fits (the bisection stops there). Its steps depend on the
 * plan alone, never on the share the plan was made at, so a plan found
 * at two shares gets one answer. HBM use grows with the share. */
static double fit_limit(place *c, const dc_shard_plan *plan, double clf,
                        bool planner) {
  if (plan_fits_at(c, plan, 1.0, planner)) return 1.0;
  double lo = log(LEAST_SHARE), hi = 0;
  for (int i = 0; i < 12 && exp(lo) < clf; i++) {
    double mid = lo + (hi - lo) / 2;
    if (plan_fits_at(c, plan, exp(mid), planner))
      lo = mid;
    else
      hi = mid;
  }
  return exp(lo);
}

static bool same_plan(const dc_shard_plan *x, const dc_shard_plan *y) {
  if (x->n_ranks != y->n_ranks || x->hosts != y->hosts ||
      x->gpus_per_host != y->gpus_per_host || x->n_tables != y->n_tables)
    return false;
  for (int32_t t = 0; t < x->n_tables; t++) {
    const dc_table_plan *a = &x->tables[t], *b = &y->tables[t];
    if (a->type != b->type || a->host != b->host || a->n_shards != b->n_shards)
      return false;
    for (int32_t i = 0; i < a->n_shards; i++) {
      const dc_shard *u = &a->shards[i], *v = &b->shards[i];
      if (u->rank != v->rank || u->row_off != v->row_off ||
          u->rows != v->rows || u->col_off != v->col_off || u->cols != v->cols)
        return false;
    }
  }
  return true;
}

/* The pricer's step time and row fit for placement (n_off, n_uvm) with
 * `plan` at `share`. */
static bool price_at(place *c, int32_t n_off, int32_t n_uvm,
                     const dc_shard_plan *plan, double share, double *step_us,
                     bool *row_fits) {
  assign(c, n_off, n_uvm);
  c->q.cache_load_factor = share;
  return c->pricer->step_us(c->pricer->ctx, &c->q, plan, step_us, row_fits) &&
         isfinite(*step_us);
}

/* With a pricer: candidate k's step time and row fit at its share
 * min(clf, max(g, its fit limit)), unless its row does not fit there
 * (the row's memory model is not the planner's: the graph walk on one
 * GPU, graphgen's formula where the planner checked TorchRec's storage).
 * Then the share is the largest in [g, 1] at which both the plan and its
 * row fit, by bisection in log(share) whose steps do not depend on clf
 * (it stops early once clf is known to fit, and takes clf then); g
 * itself when none is found. */
static void price_cand(place *c, struct cand *k, double g) {
  double st;
  bool f;
  k->priced =
      price_at(c, k->n_off, k->n_uvm, k->plan, k->share, &k->step_us, &f);
  k->row_fits = f;
  if (!k->priced || f || k->share <= g) return;
  double lo = g, hi = 1.0;
  bool lo_tested = false;
  for (int i = 0; i < 12 && !(lo_tested && lo >= c->clf); i++) {
    double mid = exp(log(lo) + (log(hi) - log(lo)) / 2);
    bool ok = plan_fits_at(c, k->plan, mid, c->planner) &&
              price_at(c, k->n_off, k->n_uvm, k->plan, mid, &st, &f) && f;
    if (ok) {
      lo = mid;
      lo_tested = true;
      k->step_us = st;
    } else {
      hi = mid;
    }
  }
  if (lo_tested && lo < c->clf) {
    k->share = lo;
    k->row_fits = true;
    return;
  }
  k->share = lo_tested ? c->clf : g;
  k->priced = price_at(c, k->n_off, k->n_uvm, k->plan, k->share, &k->step_us,
                       &k->row_fits);
}

/* Candidate (n_off, n_uvm) found at share g: its plan at g, its cache
 * widened to min(clf, the plan's fit limit) (never below g), priced
 * (price_cand with a pricer, and the planner's cost), and added to the
 * list unless it is there already (same placement, plan and share, and a
 * row that fits). A placement and plan met before reuse their fit
 * limit. */
static void consider(place *c, int32_t n_off, int32_t n_uvm, double g) {
  dc_arena s;
  dc_arena_init(&s);
  c->q.cache_load_factor = g;
  dc_shard_plan *sp = try_place(c, n_off, n_uvm, &s);
  if (sp) sp = dc_shard_plan_copy(sp, &c->keep);
  dc_arena_free(&s);
  if (!sp) return;
  double limit = -1;
  for (int32_t i = 0; i < c->n_cands && limit < 0; i++)
    if (c->cands[i].n_off == n_off && c->cands[i].n_uvm == n_uvm &&
        same_plan(c->cands[i].plan, sp)) {
      limit = c->cands[i].limit;
      sp = (dc_shard_plan *)c->cands[i].plan;
    }
  if (limit < 0) limit = fit_limit(c, sp, c->clf, c->planner);
  double share = limit > g ? limit : g;
  if (share > c->clf) share = c->clf;
  /* a repeat adds nothing, unless its row does not fit: then the share
   * it falls to depends on g (price_cand) */
  for (int32_t i = 0; i < c->n_cands; i++)
    if (c->cands[i].plan == sp && c->cands[i].share == share &&
        c->cands[i].n_off == n_off && c->cands[i].n_uvm == n_uvm &&
        (!c->pricer || c->cands[i].row_fits))
      return;
  struct cand k = {n_off, n_uvm, sp, limit, share, 0, false, 0, false};
  if (c->pricer) price_cand(c, &k, g);
  assign(c, n_off, n_uvm);
  c->q.cache_load_factor = k.share;
  dc_arena_init(&s);
  dc_plan_cost cost;
  dc_plan_cost_of(&c->q, sp, c->o, &s, &cost);
  dc_arena_free(&s);
  k.cost = cost.total_us;
  if (c->n_cands == c->cap_cands) {
    int32_t cap = c->cap_cands ? 2 * c->cap_cands : 16;
    struct cand *x = dc_arena_array(&c->keep, (size_t)cap, sizeof *x);
    if (c->n_cands) memcpy(x, c->cands, (size_t)c->n_cands * sizeof *x);
    c->cands = x;
    c->cap_cands = cap;
  }
  c->cands[c->n_cands++] = k;
}

/* The best candidate: with `priced`, of those the pricer priced, one
 * whose row fits before one whose row does not, then the least step
 * time; else the least planner cost; ties: the first. -1 when there is
 * none. */
static int32_t best_cand(const place *c, bool priced) {
  int32_t best = -1;
  for (int32_t i = 0; i < c->n_cands; i++) {
    const struct cand *k = &c->cands[i];
    if (priced && !k->priced) continue;
    if (best < 0) {
      best = i;
      continue;
    }
    const struct cand *b = &c->cands[best];
    bool better = priced
                      ? (k->row_fits != b->row_fits ? k->row_fits
                                                    : k->step_us < b->step_us)
                      : k->cost < b->cost;
    if (better) best = i;
  }
  return best;
}

const dc_point *dc_plan_place(const dc_point *p, const dc_plan_opts *o,
                              int64_t host_cap, const dc_plan_pricer *pricer,
                              dc_arena *a, dc_diags *d, dc_shard_plan **plan) {
  *plan = NULL;
  place c;
  memset(&c, 0, sizeof c);
  c.p = p;
  c.o = o;
  c.host_cap = host_cap;
  c.pricer = pricer;
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

  /* The candidates: for each share g of SHARES at most the study's
   * cache_load_factor, the placement the search finds at g and those
   * with twice, four times, ... as many tables off HBM (up to n_max),
   * each with its plan at g, its cache widened as far as that plan
   * allows (consider); the fastest wins (best_cand). */
  c.clf = p->cache_load_factor;
  c.planner = p->gpus > 1 && p->sharding == DC_SHARDING_AUTO;
  dc_arena_init(&c.keep);
  /* (1): every table in HBM, its plan kept (priced once) */
  const dc_shard_plan *hbm_plan =
      hopeless ? NULL : try_place(&c, 0, 0, &c.keep);
  bool all_hbm = hbm_plan != NULL;
  if (all_hbm) hopeless = true; /* nothing more to search */
  size_t n_shares = sizeof SHARES / sizeof *SHARES;
  for (size_t i = 0; i < n_shares && !c.hard_error && !hopeless; i++) {
    double g = SHARES[i];
    if (g > c.clf) continue;
    c.q.cache_load_factor = g;
    int32_t n_off, n_uvm;
    if (!search(&c, n_max, &n_off, &n_uvm)) {
      /* all uvm has no cache: if that fails, no share helps */
      if (n_max > 0 && !fits(&c, n_max, n_max)) break;
      continue;
    }
    for (int32_t k = n_off;; k = k > n_max / 2 ? n_max : 2 * k) {
      consider(&c, k, n_uvm, g);
      if (k >= n_max || c.hard_error) break;
    }
  }
  if (c.hard_error) {
    dc_arena_free(&c.keep);
    for (size_t i = 0; i < c.errs.count; i++) {
      dc_diag *g = dc_diag_error(d, c.errs.items[i].code, c.errs.items[i].span,
                                 "%s", c.errs.items[i].message);
      if (c.errs.items[i].help) dc_diag_set_help(g, "%s", c.errs.items[i].help);
    }
    dc_diags_free(&c.errs);
    return NULL;
  }
  dc_diags_free(&c.errs);
  int32_t best;
  if (all_hbm) {
    c.q.cache_load_factor = c.clf;
    *plan = dc_shard_plan_copy(hbm_plan, a);
    assign(&c, 0, 0);
  } else if ((best = best_cand(&c, c.pricer != NULL)) >= 0 ||
             (best = best_cand(&c, false)) >= 0) {
    const struct cand *k = &c.cands[best];
    c.q.cache_load_factor = k->share;
    *plan = dc_shard_plan_copy(k->plan, a);
    assign(&c, k->n_off, k->n_uvm);
  } else {
    /* nothing fits: the placement that needs the least HBM */
    c.q.cache_load_factor = c.clf;
    assign(&c, n_max, n_max);
  }
  dc_arena_free(&c.keep);
  dc_point *q = dc_arena_alloc(a, sizeof *q);
  *q = c.q;
  return q;
}
