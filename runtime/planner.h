/*
 * planner.h — the `plan: auto` sharding planner (issue #7): chooses a type
 * and ranks for every embedding table so that the slowest rank's
 * predicted embedding time (lookups, their exchange, data-parallel
 * all-reduces and updates) is smallest, subject to every rank's HBM.
 * Algorithm and cost in runtime/planner.c. With `sharding.objective:
 * torchrec` (the point's `objective`) it minimises TorchRec's planner
 * cost instead — the slowest rank's Σ Perf.total, runtime/torchrec_estimate.c —
 * within TorchRec's storage budget (runtime/planner_torchrec.c).
 *
 * Ownership: the plan and the cost's arrays live in the arena passed in.
 */
#ifndef DC_RUNTIME_PLANNER_H
#define DC_RUNTIME_PLANNER_H

#include <stdbool.h>
#include <stdint.h>

#include "graphgen/graphgen.h"
#include "kernels/kernels.h"
#include "runtime/plan_opts.h"

/* Prices a plan with the planner's model (the point's objective). */
void dc_plan_cost_of(const dc_point *p, const dc_shard_plan *s,
                     const dc_plan_opts *o, dc_arena *a, dc_plan_cost *out);

/* The planner. Tables the point fixes (a type, pinned ranks) are
 * constraints; the rest are free within `allowed`. Returns NULL with E0503
 * when some table cannot be placed without exceeding a rank's HBM, E0502
 * when a table's constraints allow no placement. */
dc_shard_plan *dc_plan_auto(const dc_point *p, const dc_plan_opts *o,
                            dc_arena *a, dc_diags *d, dc_plan_cost *cost);

/* The planner's price of one shard's lookups alone (µs): its embedding
 * forward and backward kernels priced with dc_kernel_time on `dev`, as
 * the planner's objective sums them (the graph batches a rank's shards
 * into one kernel, so the shards of a rank need not add up to its
 * emb_ms). For --per-shard rows. */
void dc_plan_shard_times(const dc_point *p, const dc_shard_plan *s,
                         int32_t table, int32_t shard, const dc_device *dev,
                         const dc_kmodels *km, double *fwd_us,
                         double *bwd_us);

/* The graph of a point with the planner in the loop: `plan: auto` on more
 * than one GPU runs dc_plan_auto on the point's GPU (its catalog entry:
 * prices and HBM) and builds for that plan; every other point is built
 * with graphgen's own plan (dc_graph_build), as is an auto point that
 * nothing fits (its row then says fits = false). The driver's entry;
 * `detail` as graphgen.h's dc_graph_detail (PRICED when only the metrics
 * are wanted). */
dc_graph *dc_plan_build_graph(const dc_point *p, dc_graph_detail detail,
                              dc_arena *a, dc_diags *d);

#endif /* DC_RUNTIME_PLANNER_H */
