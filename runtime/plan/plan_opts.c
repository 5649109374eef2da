/*
 * plan_opts.c — the types a table may take in a planner run (plan.h):
 * the one both planners (planner.c, planner_torchrec.c) ask, so that a
 * table's fixed type and the per-table and global `allowed` sets mean the
 * same to both.
 */
#include "runtime/plan/plan.h"

uint32_t dc_plan_table_types(const dc_point *p, const dc_plan_opts *o,
                             int32_t t) {
  const dc_table *tb = &p->tables[t];
  if (tb->sharding != DC_SHARDING_AUTO &&
      tb->sharding != DC_SHARDING_EXPLICIT)
    return DC_PLAN_TYPE(tb->sharding);
  uint32_t m = o->allowed ? o->allowed : DC_PLAN_ALL_TYPES;
  if (o->table_allowed && o->table_allowed[t]) m = o->table_allowed[t];
  return m;
}
