/*
 * plan_opts.c — what both planners (planner.c, planner_torchrec.c) ask
 * (plan.h): the types a table may take, so that a table's fixed type and
 * the per-table and global `allowed` sets mean the same to both, and the
 * order they place tables in.
 */
#include <stdlib.h>

#include "runtime/plan/plan.h"

uint32_t dc_plan_table_types(const dc_point *p, const dc_plan_opts *o,
                             int32_t t) {
  const dc_table *tb = &p->tables[t];
  if (tb->sharding != DC_SHARDING_AUTO &&
      tb->sharding != DC_SHARDING_EXPLICIT)
    return DC_PLAN_TYPE(tb->sharding);
  uint32_t m = o->allowed ? o->allowed : DC_PLAN_ALL_TYPES;
  if (o->table_allowed && o->table_allowed[t]) m = o->table_allowed[t];
  /* TorchRec's planner takes grid_shard only where a table's constraints
   * ask for it (its enumerator drops it otherwise): under its objective, a
   * table's own `sharding: grid_shard` (returned above) */
  if (p->objective == DC_OBJECTIVE_TORCHREC)
    m &= ~DC_PLAN_TYPE(DC_SHARDING_GRID_SHARD);
  return m;
}

static int cmp_order(const void *a, const void *b) {
  const dc_plan_order *x = a, *y = b;
  if (x->w != y->w) return x->w > y->w ? -1 : 1;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  return x->t < y->t ? -1 : x->t > y->t;
}

void dc_plan_sort_order(dc_plan_order *o, int32_t n) {
  if (n > 1) qsort(o, (size_t)n, sizeof *o, cmp_order);
}
