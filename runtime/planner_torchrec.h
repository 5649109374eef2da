/*
 * planner_torchrec.h — `plan: auto` under `sharding.objective: torchrec`
 * (planner_torchrec.c): the plan TorchRec's own planner cost calls
 * cheapest, within TorchRec's storage budget. dc_plan_auto and
 * dc_plan_cost_of (planner.h) call these for such a point.
 *
 * Ownership: the plan and the cost's arrays live in the arena passed in.
 */
#ifndef DC_RUNTIME_PLANNER_TORCHREC_H
#define DC_RUNTIME_PLANNER_TORCHREC_H

#include "runtime/plan_opts.h"

/* The planner and its cost under the torchrec objective (dc_plan_auto and
 * dc_plan_cost_of call them for such a point; planner_torchrec.c). */
dc_shard_plan *dc_plan_auto_torchrec(const dc_point *p,
                                     const dc_plan_opts *o, dc_arena *a,
                                     dc_diags *d, dc_plan_cost *cost);
void dc_plan_cost_torchrec(const dc_point *p, const dc_shard_plan *s,
                           const dc_plan_opts *o, dc_arena *a,
                           dc_plan_cost *out);

#endif /* DC_RUNTIME_PLANNER_TORCHREC_H */
