/*
 * trec_int.h — the state of the torchrec objective's planner
 * (planner_torchrec.c) and the options it chooses among (trec_opts.c):
 * the cuts of each table, priced shard by shard with TorchRec's
 * estimate.
 */
#ifndef DC_RUNTIME_PLAN_TREC_INT_H
#define DC_RUNTIME_PLAN_TREC_INT_H

#include "runtime/plan/plan.h"
#include "runtime/runtime.h"

typedef struct topt {
  dc_table_plan tp; /* the cut; ranks 0..n−1 when `placed` */
  bool placed;      /* table-/column-wise unpinned: the search picks */
  double *ms;       /* per shard: Perf.total */
  double *hbm;      /* per shard: storage, bytes */
  int32_t *heavy;   /* shard indices by decreasing ms */
  double total_ms;
} topt;

typedef struct rslot {
  double load, mem;
  int32_t r;
} rslot;

typedef struct swslot {
  double ms, hbm;
  int32_t t, r;
} swslot;

typedef struct tctx {
  const dc_point *p;
  dc_arena *a;
  dc_torchrec_consts tc;
  int32_t W, S, H, T;
  double cap; /* storage per rank, bytes */
  topt **opt;
  int32_t *n_opt;
  int32_t *cur;              /* option per table; −1: unplaced */
  int32_t *rk;               /* placed options: rank of each shard */
  int64_t *rk_off, n_rk;     /* table t's ranks at rk + rk_off[t] */
  double *load, *mem;        /* per rank */
  rslot *slots;              /* scratch: ranks by load */
  int32_t *pick, *best_pick; /* scratch: a placement's ranks */
  double *save_load, *save_mem;
  swslot *sw;    /* scratch: the table-wise tables */
  int32_t max_n; /* most shards of any option */
  int64_t budget;
} tctx;

static inline bool allowed_rank(const dc_table *tb, int32_t r) {
  if (tb->n_ranks == 0) return true;
  for (int32_t i = 0; i < tb->n_ranks; i++)
    if (tb->ranks[i] == r) return true;
  return false;
}

/* Sets table t's options (c->opt[t], c->n_opt[t]): every cut its type
 * set `m`, its pinned ranks and the machine allow, each priced. */
void trec_make_opts(tctx *c, dc_shard_plan *sp, uint32_t m, int32_t t);

#endif
