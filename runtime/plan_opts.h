/*
 * plan_opts.h — what both sharding planners take and give: the options of
 * a run (dc_plan_opts), the planner's view of a plan's cost
 * (dc_plan_cost), the type masks, and the types each table may take
 * (plan_opts.c). The planner of the default objective (planner.c) calls
 * the torchrec objective's (planner_torchrec.c) for such a point; both
 * stand on this file, so neither depends on the other's.
 *
 * Ownership: plain values; the pointers in dc_plan_opts are borrowed.
 */
#ifndef DC_RUNTIME_PLAN_OPTS_H
#define DC_RUNTIME_PLAN_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "graphgen/graphgen.h"
#include "kernels/kernels.h"

/* Bit (1u << dc_sharding) for each type a table may take. */
#define DC_PLAN_TYPE(t) (1u << (unsigned)(t))
#define DC_PLAN_ALL_TYPES                                                   \
  (DC_PLAN_TYPE(DC_SHARDING_TABLE_WISE) |                                  \
   DC_PLAN_TYPE(DC_SHARDING_ROW_WISE) |                                    \
   DC_PLAN_TYPE(DC_SHARDING_COLUMN_WISE) |                                 \
   DC_PLAN_TYPE(DC_SHARDING_TABLE_ROW_WISE) |                              \
   DC_PLAN_TYPE(DC_SHARDING_DATA_PARALLEL))

typedef struct dc_plan_opts {
  const dc_device *dev;      /* prices and HBM capacity */
  const dc_kmodels *models;  /* may be NULL */
  double hbm_fraction;       /* usable share of HBM; 0: 1.0 */
  uint32_t allowed;          /* types for tables the point leaves to auto;
                                0: all */
  const uint32_t *table_allowed; /* per table, overrides `allowed`; may be
                                    NULL or hold 0 for "no restriction" */
} dc_plan_opts;

/* The planner's view of a plan. Times in µs. Under the torchrec
 * objective: total_us is TorchRec's cost (slowest rank's Σ Perf.total),
 * max_fwd_us / max_bwd_us that rank's forward / backward terms (compute
 * and comms), comm_us its comms, max_mem_bytes the fullest rank's
 * TorchRec storage and fits that storage ≤ dc_torchrec_usable_hbm. */
typedef struct dc_plan_cost {
  double total_us;     /* the objective: max fwd + max bwd + exchange */
  double max_fwd_us;   /* slowest rank's lookup forward */
  double max_bwd_us;   /* slowest rank's lookup backward (+ DP update) */
  double comm_us;      /* collectives of the embeddings */
  int32_t slowest_rank;
  int64_t max_mem_bytes; /* fullest rank (dc_shard_plan_memory total) */
  bool fits;
} dc_plan_cost;

/* The types table t may take: its own fixed type, else the per-table or
 * global `allowed` of `o` (all when 0). */
uint32_t dc_plan_table_types(const dc_point *p, const dc_plan_opts *o,
                             int32_t t);

#endif /* DC_RUNTIME_PLAN_OPTS_H */
