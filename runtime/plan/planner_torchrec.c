/*
 * planner_torchrec.c — `plan: auto` under `sharding.objective: torchrec`
 * (plan.h): the plan TorchRec's own planner cost calls cheapest.
 * One file: the options, the seeds, the local search and the restarts
 * share one state and one step budget, and reading the search means
 * reading them together.
 *
 * Objective. TorchRec's planner prices every shard alone — its Perf:
 * forward and backward compute and comms — and calls a plan's cost the
 * slowest rank's sum of Perf.total over its shards (NoopPerfModel). A plan
 * is feasible when every rank's storage, the shards' hbm summed, stays
 * within what TorchRec's storage reservation leaves of the GPU's HBM
 * (dc_torchrec_usable_hbm). Both come from runtime/plan/torchrec_estimate.c
 * (dc_torchrec_price_shard): no formula is restated here.
 *
 * A shard's price depends on its table, type and columns, not on its rank
 * nor on the other tables, so the problem is a makespan one: pick an
 * option per table, then put its shards on ranks.
 *
 * Options per table, within its type, its pinned ranks (every shard on a
 * pinned rank) and the allowed types: table_wise (one shard, any allowed
 * rank); column_wise in n blocks on n distinct ranks the search picks
 * (pinned: those ranks), n = 2..8, the powers of two above, and the count
 * TorchRec's enumerator takes (blocks of its _find_base_dim(128, D)
 * columns), n ≤ min(W, D/32) save that last one; row_wise;
 * table_row_wise on each host (with one GPU per host too: one shard,
 * priced without table-wise's small-dim penalty); data_parallel; where a
 * table's own type is one, grid_shard on runs of hosts and
 * table_column_wise on runs of one host's GPUs (trec_opts.c).
 *
 * Search. (1) Seeds: greedy passes over the tables, most expensive first,
 * each table taking the option and ranks with the best score: "bound",
 * max(slowest rank after it, the mean load the placed tables and the
 * unplaced ones' cheapest options imply) — a makespan lower bound, so a
 * table keeps its cheapest option while the ranks can absorb it and
 * spreads when they cannot; "max", the slowest rank alone; "placed",
 * table- and column-wise only (longest processing time first);
 * "cheapest", every table its cheapest type; "storage", the fullest
 * rank's storage (largest tables first: a feasible plan when HBM is
 * tight); "uniform", one type for every table that has it (TorchRec's
 * uniform proposer). A placed option's shards go, heaviest first, to the
 * least-loaded allowed ranks with room. With few tables (≤ GRID_MAX
 * combinations of types) a greedy pass for every combination too, as
 * TorchRec's grid-search proposer; the best GRID_KEEP go on. (2) Local
 * search on each seed: on the slowest rank, move one shard to another
 * rank, or give one of its tables another option, or, when neither
 * helps, swap two one-shard tables (table-wise, or table-row-wise on a
 * one-GPU host) between two ranks — the best
 * move by (slowest rank, Σ load²), while that pair drops. Then RESTARTS
 * greedy passes in shuffled orders (a fixed xorshift seed), each with the
 * local search. (3) Kicks on
 * the best plan: one table forced to each other option, the local search
 * again, kept when cheaper. Costs are compared with their sums redone in
 * table order, as dc_torchrec_estimate_plan adds them.
 *
 * Cost. A greedy pass is O(T·C·W log W) (C options per table); a local-
 * search step touches the slowest rank's tables. Every local search runs
 * under a fixed budget of rank visits (LS_BUDGET; the restarts and the
 * kicks RESTART_BUDGET and KICK_BUDGET in all), so thousands of tables on
 * hundreds of GPUs stay within seconds and the result does not depend on the
 * machine. Ties go to the lower table, option, rank and seed.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/plan/trec_int.h"

#define GIB            1073741824.0
#define TIE            1e-12 /* relative: below it, two costs are equal */
#define GRID_MAX       3125  /* 5 types on 5 tables */
#define GRID_KEEP      4
#define LS_BUDGET      20000000  /* rank visits per local search */
#define KICK_BUDGET    100000000 /* rank visits of all the kicks */
#define KICK_ROUNDS    8
#define RESTARTS       64
#define RESTART_BUDGET 100000000 /* rank visits of all the restarts */

static bool lt(double a, double b) {
  return a < b - TIE * (b > 0 ? b : -b);
}

/* The options of each table: trec_opts.c (trec_make_opts). */

/* ---- state ------------------------------------------------------------- */

static int32_t srank(const tctx *c, int32_t t, int32_t i) {
  const topt *x = &c->opt[t][c->cur[t]];
  return x->placed ? c->rk[c->rk_off[t] + i] : x->tp.shards[i].rank;
}

static void put(tctx *c, int32_t t, double sign) {
  const topt *x = &c->opt[t][c->cur[t]];
  for (int32_t i = 0; i < x->tp.n_shards; i++) {
    int32_t r = srank(c, t, i);
    c->load[r] += sign * x->ms[i];
    c->mem[r] += sign * x->hbm[i];
  }
}

static void assign(tctx *c, int32_t t, int32_t k, const int32_t *ranks) {
  c->cur[t] = k;
  const topt *x = &c->opt[t][k];
  if (x->placed)
    memcpy(&c->rk[c->rk_off[t]], ranks,
           (size_t)x->tp.n_shards * sizeof(int32_t));
  put(c, t, 1);
}

/* Takes table t off its ranks, keeping their exact loads for unplace. */
static void lift(tctx *c, int32_t t) {
  const topt *x = &c->opt[t][c->cur[t]];
  for (int32_t i = 0; i < x->tp.n_shards; i++) {
    int32_t r = srank(c, t, i);
    c->save_load[i] = c->load[r];
    c->save_mem[i] = c->mem[r];
  }
  put(c, t, -1);
}

static void unlift(tctx *c, int32_t t) {
  const topt *x = &c->opt[t][c->cur[t]];
  for (int32_t i = x->tp.n_shards - 1; i >= 0; i--) {
    int32_t r = srank(c, t, i);
    c->load[r] = c->save_load[i];
    c->mem[r] = c->save_mem[i];
  }
}

static int cmp_rslot(const void *a, const void *b) {
  const rslot *x = a, *y = b;
  if (x->load != y->load) return x->load < y->load ? -1 : 1;
  if (x->mem != y->mem) return x->mem < y->mem ? -1 : 1;
  return x->r < y->r ? -1 : x->r > y->r;
}

static void sort_ranks(tctx *c) {
  for (int32_t r = 0; r < c->W; r++)
    c->slots[r] = (rslot){c->load[r], c->mem[r], r};
  qsort(c->slots, (size_t)c->W, sizeof *c->slots, cmp_rslot);
}

/* Where option x of table t (not on the ranks now) would go: its ranks in
 * out[] (placed options), its slowest rank's load and fullest rank's
 * storage after it, and the change of Σ load². False when a shard finds
 * no rank with room. `sorted` says whether c->slots is current. */
static bool choose(tctx *c, int32_t t, const topt *x, int32_t *out,
                   double *peak, double *peak_mem, double *dsq, bool *sorted) {
  const dc_table *tb = &c->p->tables[t];
  int32_t n = x->tp.n_shards;
  *peak = *peak_mem = *dsq = 0;
  if (!x->placed) {
    for (int32_t i = 0; i < n; i++) {
      int32_t r = x->tp.shards[i].rank;
      double l = c->load[r] + x->ms[i], m = c->mem[r] + x->hbm[i];
      if (m > c->cap) return false;
      if (l > *peak) *peak = l;
      if (m > *peak_mem) *peak_mem = m;
      *dsq += l * l - c->load[r] * c->load[r];
    }
    return true;
  }
  if (n == 1) {
    int32_t b = -1;
    c->budget -= c->W;
    for (int32_t r = 0; r < c->W; r++) {
      if (!allowed_rank(tb, r) || c->mem[r] + x->hbm[0] > c->cap) continue;
      if (b < 0 || c->load[r] < c->load[b] ||
          (c->load[r] == c->load[b] && c->mem[r] < c->mem[b]))
        b = r;
    }
    if (b < 0) return false;
    out[0] = b;
    *peak = c->load[b] + x->ms[0];
    *peak_mem = c->mem[b] + x->hbm[0];
    *dsq = *peak * *peak - c->load[b] * c->load[b];
    return true;
  }
  if (!*sorted) {
    sort_ranks(c);
    *sorted = true;
    c->budget -= c->W;
  }
  /* heaviest shard to the least-loaded rank; a rank skipped for lack of
   * room stays skipped (the shards' storage differs by a row at most) */
  int32_t j = 0, i = 0;
  bool ok = true;
  for (; i < n; i++) {
    int32_t s = x->heavy[i];
    while (j < c->W && (!allowed_rank(tb, c->slots[j].r) ||
                        c->mem[c->slots[j].r] + x->hbm[s] > c->cap))
      j++;
    if (j == c->W) {
      ok = false;
      break;
    }
    int32_t r = c->slots[j++].r;
    out[s] = r;
    double l = c->load[r] + x->ms[s], m = c->mem[r] + x->hbm[s];
    if (l > *peak) *peak = l;
    if (m > *peak_mem) *peak_mem = m;
    *dsq += l * l - c->load[r] * c->load[r];
  }
  c->budget -= n;
  return ok;
}

static void clear(tctx *c) {
  for (int32_t t = 0; t < c->T; t++)
    c->cur[t] = -1;
  for (int32_t r = 0; r < c->W; r++)
    c->load[r] = c->mem[r] = 0;
}

/* ---- seeds ------------------------------------------------------------- */

typedef enum score { SCORE_BOUND, SCORE_MAX, SCORE_STORAGE } score;

static uint32_t types_of(const tctx *c, int32_t t) {
  uint32_t m = 0;
  for (int32_t k = 0; k < c->n_opt[t]; k++)
    m |= DC_PLAN_TYPE(c->opt[t][k].tp.type);
  return m;
}

/* The seed's types for table t: `mask` where the table has one of them,
 * else all of its own. */
static uint32_t seed_mask(const tctx *c, const uint32_t *mask, int32_t t) {
  uint32_t own = types_of(c, t);
  if (!mask || !(mask[t] & own)) return own;
  return mask[t] & own;
}

static double cheapest(const tctx *c, int32_t t, uint32_t m) {
  double v = -1;
  for (int32_t k = 0; k < c->n_opt[t]; k++) {
    const topt *x = &c->opt[t][k];
    if ((m & DC_PLAN_TYPE(x->tp.type)) && (v < 0 || x->total_ms < v))
      v = x->total_ms;
  }
  return v < 0 ? 0 : v;
}

/* One greedy pass in `order`; false (the table in *failed) when a table
 * has no option with room. */
static bool greedy(tctx *c, const int32_t *order, score how,
                   const uint32_t *mask, int32_t *failed) {
  clear(c);
  double rest = 0, sum = 0, gmax = 0, gmem = 0;
  for (int32_t t = 0; t < c->T; t++)
    rest += cheapest(c, t, seed_mask(c, mask, t));
  for (int32_t j = 0; j < c->T; j++) {
    int32_t t = order[j];
    uint32_t m = seed_mask(c, mask, t);
    rest -= cheapest(c, t, m);
    if (rest < 0) rest = 0;
    bool sorted = false;
    int32_t bk = -1;
    double b1 = 0, b2 = 0, b3 = 0, bpeak = 0, bmem = 0;
    for (int32_t k = 0; k < c->n_opt[t]; k++) {
      const topt *x = &c->opt[t][k];
      if (!(m & DC_PLAN_TYPE(x->tp.type))) continue;
      double peak, pm, dsq;
      if (!choose(c, t, x, c->pick, &peak, &pm, &dsq, &sorted)) continue;
      double mx = peak > gmax ? peak : gmax, mm = pm > gmem ? pm : gmem;
      double bound = (sum + x->total_ms + rest) / c->W;
      double bnd = mx > bound ? mx : bound;
      double s1 = how == SCORE_BOUND ? bnd : how == SCORE_MAX ? mx : mm;
      double s2 = how == SCORE_STORAGE ? bnd : mx;
      double s3 = x->total_ms;
      bool take = bk < 0 || lt(s1, b1) ||
                  (!lt(b1, s1) && (lt(s2, b2) || (!lt(b2, s2) && lt(s3, b3))));
      if (take) {
        bk = k;
        b1 = s1;
        b2 = s2;
        b3 = s3;
        bpeak = peak;
        bmem = pm;
        if (x->placed)
          memcpy(c->best_pick, c->pick,
                 (size_t)x->tp.n_shards * sizeof(int32_t));
      }
    }
    if (bk < 0) {
      *failed = t;
      return false;
    }
    assign(c, t, bk, c->best_pick);
    sum += c->opt[t][bk].total_ms;
    if (bpeak > gmax) gmax = bpeak;
    if (bmem > gmem) gmem = bmem;
  }
  return true;
}

/* ---- local search ------------------------------------------------------ */

static bool improves(double mx, double sq, double bmx, double bsq) {
  return lt(mx, bmx) || (mx <= bmx && lt(sq, bsq));
}

typedef struct move {
  int kind; /* 0 none, 1 shard move, 2 new option, 3 swap */
  int32_t t, u, i, k, r;
  double mx, sq;
} move;

/* The highest load among ranks other than x and y, from the top three. */
static double max_but(const tctx *c, const int32_t *top, int32_t x, int32_t y) {
  for (int32_t j = 0; j < 3; j++)
    if (top[j] >= 0 && top[j] != x && top[j] != y) return c->load[top[j]];
  return 0;
}

static bool on_rank(const tctx *c, int32_t t, int32_t r) {
  const topt *x = &c->opt[t][c->cur[t]];
  if (x->tp.type == DC_SHARDING_GRID_SHARD || /* its blocks' hosts */
      x->tp.type == DC_SHARDING_TABLE_COLUMN_WISE) {
    for (int32_t i = 0; i < x->tp.n_shards; i++)
      if (x->tp.shards[i].rank == r) return true;
    return false;
  }
  if (!x->placed && x->tp.type != DC_SHARDING_COLUMN_WISE) {
    /* consecutive ranks: all, or a host's */
    int32_t first = x->tp.shards[0].rank;
    return r >= first && r < first + x->tp.n_shards;
  }
  for (int32_t i = 0; i < x->tp.n_shards; i++)
    if (c->rk[c->rk_off[t] + i] == r) return true;
  return false;
}

/* Moves shard i of table t (a placed option) from rank `from` to each
 * other rank. */
static void try_shard_moves(tctx *c, const int32_t *top, double sumsq,
                            int32_t t, int32_t i, int32_t from, move *b) {
  const topt *x = &c->opt[t][c->cur[t]];
  const dc_table *tb = &c->p->tables[t];
  double a = c->load[from] - x->ms[i];
  c->budget -= c->W;
  for (int32_t r = 0; r < c->W; r++) {
    if (r == from || !allowed_rank(tb, r) || c->mem[r] + x->hbm[i] > c->cap ||
        on_rank(c, t, r))
      continue;
    double l = c->load[r] + x->ms[i], o = max_but(c, top, from, r);
    double mx = o > a ? o : a;
    if (l > mx) mx = l;
    double sq = sumsq - c->load[from] * c->load[from] + a * a -
                c->load[r] * c->load[r] + l * l;
    if (improves(mx, sq, b->mx, b->sq)) *b = (move){1, t, -1, i, -1, r, mx, sq};
  }
}

static void try_options(tctx *c, int32_t t, move *b) {
  int32_t keep = c->cur[t];
  lift(c, t);
  double base = 0, bsq = 0;
  for (int32_t r = 0; r < c->W; r++) {
    if (c->load[r] > base) base = c->load[r];
    bsq += c->load[r] * c->load[r];
  }
  c->budget -= c->W;
  bool sorted = false;
  for (int32_t k = 0; k < c->n_opt[t]; k++) {
    const topt *x = &c->opt[t][k];
    double peak, pm, dsq;
    if (!choose(c, t, x, c->pick, &peak, &pm, &dsq, &sorted)) continue;
    double mx = peak > base ? peak : base, sq = bsq + dsq;
    if (improves(mx, sq, b->mx, b->sq)) {
      *b = (move){2, t, -1, -1, k, -1, mx, sq};
      if (x->placed)
        memcpy(c->best_pick, c->pick, (size_t)x->tp.n_shards * sizeof(int32_t));
    }
  }
  c->cur[t] = keep;
  unlift(c, t);
}

/* The option that puts table t, now one shard on one rank (table-wise,
 * or table-row-wise on a host of one GPU), on rank r instead; −1 when it
 * may not go there. */
static int32_t unit_opt(const tctx *c, int32_t t, int32_t r) {
  const topt *x = &c->opt[t][c->cur[t]];
  if (x->placed) return allowed_rank(&c->p->tables[t], r) ? c->cur[t] : -1;
  for (int32_t k = 0; k < c->n_opt[t]; k++) {
    const topt *y = &c->opt[t][k];
    if (y->tp.type == x->tp.type && y->tp.n_shards == 1 &&
        y->tp.shards[0].rank == r)
      return k;
  }
  return -1;
}

static bool is_unit(const topt *x) {
  return x->tp.n_shards == 1 &&
         (x->placed || x->tp.type == DC_SHARDING_TABLE_ROW_WISE);
}

/* Swaps a one-shard table on rank `from` with a lighter one elsewhere.
 * They are first gathered in c->sw (cache-friendly pairs). */
static void try_swaps(tctx *c, const int32_t *top, double sumsq, int32_t from,
                      move *b) {
  int32_t n = 0;
  c->budget -= c->T;
  for (int32_t t = 0; t < c->T; t++) {
    const topt *x = &c->opt[t][c->cur[t]];
    if (is_unit(x))
      c->sw[n++] = (swslot){x->ms[0], x->hbm[0], t, srank(c, t, 0)};
  }
  for (int32_t i = 0; i < n && c->budget > 0; i++) {
    const swslot *x = &c->sw[i];
    if (x->r != from) continue;
    c->budget -= n;
    for (int32_t j = 0; j < n; j++) {
      const swslot *y = &c->sw[j];
      if (y->r == from || !(y->ms < x->ms)) continue;
      double a = c->load[from] - x->ms + y->ms;
      double l = c->load[y->r] - y->ms + x->ms;
      if (c->mem[from] - x->hbm + y->hbm > c->cap ||
          c->mem[y->r] - y->hbm + x->hbm > c->cap)
        continue;
      double o = max_but(c, top, from, y->r), mx = o > a ? o : a;
      if (l > mx) mx = l;
      double sq = sumsq - c->load[from] * c->load[from] + a * a -
                  c->load[y->r] * c->load[y->r] + l * l;
      if (!improves(mx, sq, b->mx, b->sq) || unit_opt(c, x->t, y->r) < 0 ||
          unit_opt(c, y->t, from) < 0)
        continue;
      *b = (move){3, x->t, y->t, -1, -1, y->r, mx, sq};
    }
  }
}

static void improve(tctx *c, int64_t budget) {
  c->budget = budget;
  int32_t top[3];
  for (int64_t it = 0; it < 50 * (int64_t)c->T + 1000 && c->budget > 0; it++) {
    top[0] = top[1] = top[2] = -1;
    double sumsq = 0;
    for (int32_t r = 0; r < c->W; r++) {
      double l = c->load[r];
      sumsq += l * l;
      if (top[0] < 0 || l > c->load[top[0]]) {
        top[2] = top[1];
        top[1] = top[0];
        top[0] = r;
      } else if (top[1] < 0 || l > c->load[top[1]]) {
        top[2] = top[1];
        top[1] = r;
      } else if (top[2] < 0 || l > c->load[top[2]]) {
        top[2] = r;
      }
    }
    c->budget -= c->W + c->T;
    int32_t from = top[0];
    move b = {0, -1, -1, -1, -1, -1, c->load[from], sumsq};
    for (int32_t t = 0; t < c->T && c->budget > 0; t++) {
      if (!on_rank(c, t, from)) continue;
      const topt *x = &c->opt[t][c->cur[t]];
      if (x->placed)
        for (int32_t i = 0; i < x->tp.n_shards; i++)
          if (srank(c, t, i) == from)
            try_shard_moves(c, top, sumsq, t, i, from, &b);
      try_options(c, t, &b);
    }
    if (b.kind == 0) try_swaps(c, top, sumsq, from, &b);
    if (b.kind == 0) break;
    if (b.kind == 1) {
      int32_t n = c->opt[b.t][c->cur[b.t]].tp.n_shards;
      memcpy(c->pick, &c->rk[c->rk_off[b.t]], (size_t)n * sizeof(int32_t));
      c->pick[b.i] = b.r;
      int32_t k = c->cur[b.t];
      put(c, b.t, -1);
      assign(c, b.t, k, c->pick);
    } else if (b.kind == 2) {
      put(c, b.t, -1);
      assign(c, b.t, b.k, c->best_pick);
    } else {
      int32_t rt = srank(c, b.t, 0), ru = srank(c, b.u, 0);
      int32_t kt = unit_opt(c, b.t, ru), ku = unit_opt(c, b.u, rt);
      put(c, b.t, -1);
      put(c, b.u, -1);
      assign(c, b.t, kt, &ru);
      assign(c, b.u, ku, &rt);
    }
  }
}

/* ---- the planner ------------------------------------------------------- */

/* The plan's cost from scratch, summed in table then shard order as
 * dc_torchrec_estimate_plan does; +inf-free: false when a rank's storage
 * exceeds the cap. */
static bool exact(tctx *c, double *cost) {
  for (int32_t r = 0; r < c->W; r++)
    c->save_load[r] = c->save_mem[r] = 0;
  for (int32_t t = 0; t < c->T; t++) {
    const topt *x = &c->opt[t][c->cur[t]];
    for (int32_t i = 0; i < x->tp.n_shards; i++) {
      int32_t r = srank(c, t, i);
      c->save_load[r] += x->ms[i];
      c->save_mem[r] += x->hbm[i];
    }
  }
  double mx = 0;
  bool fits = true;
  for (int32_t r = 0; r < c->W; r++) {
    if (c->save_load[r] > mx) mx = c->save_load[r];
    if (c->save_mem[r] > c->cap) fits = false;
  }
  *cost = mx;
  return fits;
}

typedef struct keep {
  bool have;
  double cost;
  int32_t *cur, *rk;
} keep;

static void keep_init(const tctx *c, keep *k) {
  k->have = false;
  k->cost = 0;
  k->cur = dc_arena_array(c->a, (size_t)(c->T > 0 ? c->T : 1), sizeof(int32_t));
  k->rk = dc_arena_array(c->a, (size_t)(c->n_rk > 0 ? c->n_rk : 1),
                         sizeof(int32_t));
}

static void keep_offer(const tctx *c, keep *k, double cost) {
  if (k->have && !(cost < k->cost)) return;
  k->have = true;
  k->cost = cost;
  memcpy(k->cur, c->cur, (size_t)c->T * sizeof(int32_t));
  memcpy(k->rk, c->rk, (size_t)c->n_rk * sizeof(int32_t));
}

static void keep_restore(tctx *c, const keep *k) {
  clear(c);
  memcpy(c->rk, k->rk, (size_t)c->n_rk * sizeof(int32_t));
  for (int32_t t = 0; t < c->T; t++) {
    c->cur[t] = k->cur[t];
    put(c, t, 1);
  }
}

static int32_t *order_by(const tctx *c, bool by_size) {
  size_t T = (size_t)(c->T > 0 ? c->T : 1);
  dc_plan_order *o = dc_arena_array(c->a, T, sizeof *o);
  for (int32_t t = 0; t < c->T; t++) {
    double sz = (double)c->p->tables[t].rows * c->p->tables[t].dim;
    double w = cheapest(c, t, types_of(c, t));
    o[t] = by_size ? (dc_plan_order){t, sz, w} : (dc_plan_order){t, w, sz};
  }
  dc_plan_sort_order(o, c->T);
  int32_t *out = dc_arena_array(c->a, T, sizeof(int32_t));
  for (int32_t t = 0; t < c->T; t++)
    out[t] = o[t].t;
  return out;
}

/* A seed: a greedy pass, then the local search; the result offered. */
static void seed(tctx *c, keep *best, const int32_t *order, score how,
                 const uint32_t *mask, int32_t *failed) {
  if (!greedy(c, order, how, mask, failed)) return;
  improve(c, LS_BUDGET);
  double cost;
  if (exact(c, &cost)) keep_offer(c, best, cost);
}

/* Restarts: greedy passes in shuffled orders (the bound score, then the
 * slowest-rank one, alternately), each with the local search, within
 * RESTART_BUDGET rank visits in all. The shuffles come from a fixed
 * xorshift seed: the same study gives the same plan. */
static void restarts(tctx *c, keep *best, const int32_t *order) {
  if (c->T < 2) return;
  int32_t *o = dc_arena_array(c->a, (size_t)c->T, sizeof(int32_t));
  uint64_t x = 0x9e3779b97f4a7c15u;
  int64_t left = RESTART_BUDGET;
  for (int32_t i = 0; i < RESTARTS && left > 0; i++) {
    memcpy(o, order, (size_t)c->T * sizeof(int32_t));
    for (int32_t j = c->T - 1; j > 0; j--) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      int32_t k = (int32_t)(x % (uint64_t)(j + 1)), v = o[j];
      o[j] = o[k];
      o[k] = v;
    }
    int32_t failed;
    c->budget = 0;
    if (!greedy(c, o, i % 2 ? SCORE_MAX : SCORE_BOUND, NULL, &failed)) {
      left += c->budget;
      continue;
    }
    left += c->budget;
    int64_t b = left < LS_BUDGET ? left : LS_BUDGET;
    improve(c, b);
    left -= b - (c->budget > 0 ? c->budget : 0);
    double cost;
    if (exact(c, &cost)) keep_offer(c, best, cost);
  }
}

/* Kicks: from the best plan, give one table another option (or its own
 * again, placed afresh), run the local search, keep the result when it is
 * cheaper; rounds over every table and option while that helps, within
 * KICK_BUDGET rank visits in all. */
static void kicks(tctx *c, keep *best) {
  int64_t left = KICK_BUDGET;
  bool again = true;
  for (int32_t round = 0; again && round < KICK_ROUNDS; round++) {
    again = false;
    for (int32_t t = 0; t < c->T && left > 0; t++)
      for (int32_t k = 0; k < c->n_opt[t] && left > 0; k++) {
        keep_restore(c, best);
        const topt *x = &c->opt[t][k];
        if (k == c->cur[t] && !x->placed) continue;
        put(c, t, -1);
        bool sorted = false;
        double peak, pm, dsq;
        c->budget = 0;
        bool ok = choose(c, t, x, c->pick, &peak, &pm, &dsq, &sorted);
        left += c->budget - c->T;
        if (!ok) {
          put(c, t, 1);
          continue;
        }
        assign(c, t, k, c->pick);
        int64_t b = left < LS_BUDGET ? left : LS_BUDGET;
        improve(c, b);
        left -= b - (c->budget > 0 ? c->budget : 0);
        double cost;
        if (exact(c, &cost) && cost < best->cost * (1 - TIE)) {
          keep_offer(c, best, cost);
          again = true;
        }
      }
  }
  keep_restore(c, best);
}

static double storage_cap(const dc_point *p, const dc_plan_opts *o,
                          dc_torchrec_consts *tc) {
  double f = o->hbm_fraction > 0 ? o->hbm_fraction : 1.0;
  tc->hbm_gib = (double)o->dev->hbm_bytes * f / GIB;
  return dc_torchrec_usable_hbm(p, tc);
}

void dc_plan_cost_torchrec(const dc_point *p, const dc_shard_plan *s,
                           const dc_plan_opts *o, dc_arena *a,
                           dc_plan_cost *out) {
  dc_torchrec_consts tc;
  dc_torchrec_consts_of(p, &tc);
  double cap = storage_cap(p, o, &tc);
  dc_torchrec_estimate e;
  dc_torchrec_estimate_plan(p, s, &tc, a, &e);
  memset(out, 0, sizeof *out);
  const dc_torchrec_rank *r = &e.ranks[e.max_rank];
  out->total_us = e.max_ms * 1000;
  out->max_fwd_us = (r->fwd_compute_ms + r->fwd_comms_ms) * 1000;
  out->max_bwd_us = (r->bwd_compute_ms + r->bwd_comms_ms) * 1000;
  out->comm_us = (r->fwd_comms_ms + r->bwd_comms_ms) * 1000;
  out->slowest_rank = e.max_rank;
  out->max_mem_bytes = dc_f64_sat_i64(e.max_hbm_bytes);
  out->fits = e.max_hbm_bytes <= cap;
}

dc_shard_plan *dc_plan_auto_torchrec(const dc_point *p, const dc_plan_opts *o,
                                     dc_arena *a, dc_diags *d,
                                     dc_plan_cost *cost) {
  tctx c;
  memset(&c, 0, sizeof c);
  c.p = p;
  c.a = a;
  dc_torchrec_consts_of(p, &c.tc);
  c.cap = storage_cap(p, o, &c.tc);
  dc_shard_plan *sp = dc_shard_plan_new(p, a);
  c.W = sp->n_ranks;
  c.S = sp->gpus_per_host;
  c.H = sp->hosts;
  c.T = p->n_tables;
  size_t T = (size_t)(c.T > 0 ? c.T : 1), W = (size_t)c.W;
  c.opt = dc_arena_array(a, T, sizeof(topt *));
  c.n_opt = dc_arena_array(a, T, sizeof(int32_t));
  c.cur = dc_arena_array(a, T, sizeof(int32_t));
  c.rk_off = dc_arena_array(a, T, sizeof(int64_t));
  for (int32_t t = 0; t < c.T; t++) {
    trec_make_opts(&c, sp, dc_plan_table_types(p, o, t), t);
    if (c.n_opt[t] == 0) {
      dc_diag *g =
          dc_diag_error(d, DC_DIAG_SHARDING,
                        dc_table_plan_span(&p->tables[t]),
                        "table '%s' has no placement its constraints allow",
                        p->tables[t].name ? p->tables[t].name : "?");
      dc_diag_set_help(g, "check its sharding type and pinned ranks");
      return NULL;
    }
    int32_t most = 0;
    for (int32_t k = 0; k < c.n_opt[t]; k++)
      if (c.opt[t][k].placed && c.opt[t][k].tp.n_shards > most)
        most = c.opt[t][k].tp.n_shards;
    c.rk_off[t] = c.n_rk;
    c.n_rk += most; /* ≤ T · W: no overflow in 64 bits */
  }
  c.rk = dc_arena_array(a, (size_t)(c.n_rk > 0 ? c.n_rk : 1), sizeof(int32_t));
  c.load = dc_arena_array(a, W, sizeof(double));
  c.mem = dc_arena_array(a, W, sizeof(double));
  c.slots = dc_arena_array(a, W, sizeof(rslot));
  size_t n = (size_t)(c.max_n > c.W ? c.max_n : c.W);
  c.pick = dc_arena_array(a, n, sizeof(int32_t));
  c.best_pick = dc_arena_array(a, n, sizeof(int32_t));
  c.save_load = dc_arena_array(a, n, sizeof(double));
  c.save_mem = dc_arena_array(a, n, sizeof(double));
  c.sw = dc_arena_array(a, T, sizeof(swslot));

  keep best;
  keep_init(&c, &best);
  int32_t *by_cost = order_by(&c, false), *by_size = order_by(&c, true);
  int32_t failed = -1, f2 = -1;
  uint32_t *mask = dc_arena_array(a, T, sizeof(uint32_t));
  seed(&c, &best, by_cost, SCORE_BOUND, NULL, &failed);
  seed(&c, &best, by_cost, SCORE_MAX, NULL, &f2);
  for (int32_t t = 0; t < c.T; t++)
    mask[t] = DC_PLAN_TYPE(DC_SHARDING_TABLE_WISE) |
              DC_PLAN_TYPE(DC_SHARDING_COLUMN_WISE);
  seed(&c, &best, by_cost, SCORE_BOUND, mask, &f2);
  for (int32_t t = 0; t < c.T; t++) {
    int32_t bk = 0;
    for (int32_t k = 1; k < c.n_opt[t]; k++)
      if (c.opt[t][k].total_ms < c.opt[t][bk].total_ms) bk = k;
    mask[t] = DC_PLAN_TYPE(c.opt[t][bk].tp.type);
  }
  seed(&c, &best, by_cost, SCORE_BOUND, mask, &f2);
  seed(&c, &best, by_size, SCORE_STORAGE, NULL, &failed);
  /* one type for every table that has it (TorchRec's uniform proposer) */
  for (int32_t y = DC_SHARDING_TABLE_WISE; y <= DC_SHARDING_DATA_PARALLEL;
       y++) {
    for (int32_t t = 0; t < c.T; t++)
      mask[t] = DC_PLAN_TYPE(y);
    seed(&c, &best, by_cost, SCORE_BOUND, mask, &f2);
  }
  restarts(&c, &best, by_cost);

  /* every combination of types, when there are few */
  int64_t combos = 1;
  for (int32_t t = 0; t < c.T && combos <= GRID_MAX; t++) {
    uint32_t m = types_of(&c, t);
    combos *= __builtin_popcount(m);
  }
  if (c.T > 0 && combos <= GRID_MAX && combos > 1) {
    keep top[GRID_KEEP];
    for (int32_t j = 0; j < GRID_KEEP; j++)
      keep_init(&c, &top[j]);
    for (int64_t g = 0; g < combos; g++) {
      int64_t v = g;
      for (int32_t t = 0; t < c.T; t++) {
        uint32_t m = types_of(&c, t), pick = 0;
        int32_t cnt = __builtin_popcount(m), want = (int32_t)(v % cnt);
        v /= cnt;
        for (uint32_t bit = 0; bit < 32; bit++)
          if (m & (1u << bit)) {
            if (want-- == 0) pick = 1u << bit;
          }
        mask[t] = pick;
      }
      if (!greedy(&c, by_cost, SCORE_BOUND, mask, &f2)) continue;
      double x;
      if (!exact(&c, &x)) continue;
      /* insert into the GRID_KEEP cheapest, in order */
      int32_t j = GRID_KEEP;
      while (j > 0 && (!top[j - 1].have || x < top[j - 1].cost))
        j--;
      if (j == GRID_KEEP) continue;
      keep last = top[GRID_KEEP - 1];
      for (int32_t q = GRID_KEEP - 1; q > j; q--)
        top[q] = top[q - 1];
      top[j] = last;
      top[j].have = false;
      keep_offer(&c, &top[j], x);
    }
    for (int32_t j = 0; j < GRID_KEEP && top[j].have; j++) {
      keep_restore(&c, &top[j]);
      improve(&c, LS_BUDGET);
      double x;
      if (exact(&c, &x)) keep_offer(&c, &best, x);
    }
  }

  if (best.have) kicks(&c, &best);
  if (!best.have) {
    int32_t t = failed >= 0 ? failed : 0;
    dc_diag *g = dc_diag_error(
        d, DC_DIAG_NO_PLAN, p->tables[t].span,
        "no placement of table '%s' fits TorchRec's storage budget on the "
        "%d GPUs (%.3f GiB each)",
        p->tables[t].name ? p->tables[t].name : "?", c.W, c.cap / GIB);
    dc_diag_set_help(g, "add GPUs, use GPUs with more HBM, or shrink the "
                        "tables or the batch");
    return NULL;
  }
  keep_restore(&c, &best);
  dc_shard_plan *out = dc_shard_plan_new(p, a);
  for (int32_t t = 0; t < c.T; t++) {
    const topt *x = &c.opt[t][c.cur[t]];
    if (!x->placed) {
      out->tables[t] = x->tp;
      continue;
    }
    dc_diags quiet = {0};
    bool ok = dc_shard_plan_set(out, p, t, x->tp.type, x->tp.n_shards,
                                &c.rk[c.rk_off[t]], a, &quiet);
    dc_diags_free(&quiet);
    DC_ASSERT(ok);
  }
  if (cost) dc_plan_cost_torchrec(p, out, o, a, cost);
  return out;
}
