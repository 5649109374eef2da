/*
 * plan.h — the sharding planners of runtime/plan/ and the TorchRec
 * estimate they share: the folder's one header.
 *
 * The `plan: auto` planner (planner.c, candidates.c) chooses a type and
 * ranks for every embedding table so that the slowest rank's predicted
 * embedding time (lookups, their exchange, data-parallel all-reduces and
 * updates) is smallest, subject to every rank's HBM. With
 * `sharding.objective: torchrec` (the point's `objective`) it minimises
 * TorchRec's planner cost instead — the slowest rank's sum of Perf.total
 * (torchrec_estimate.c) — within TorchRec's storage budget
 * (planner_torchrec.c). Both planners ask plan_opts.c which types a table
 * may take, so a table's constraints mean the same to both. Under
 * `sharding.memory: auto`, placement.c decides which tables stay in HBM,
 * which are cached and which live in host memory, running the planner
 * for each placement it tries.
 *
 * The planners price shards with graphgen's plan arithmetic
 * (dc_shard_plan_work, dc_shard_memory) and kernels' dc_kernel_time, and
 * dc_plan_build_graph builds the point's graph with graphgen: runtime/
 * links graphgen/ (runtime/CMakeLists.txt).
 *
 * Ownership: plans, costs' and estimates' arrays live in the arena passed
 * in; the pointers in dc_plan_opts are borrowed; the rest are plain
 * values.
 */
#ifndef DC_RUNTIME_PLAN_H
#define DC_RUNTIME_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "graphgen/graphgen.h"
#include "kernels/kernels.h"

/* ---- options and costs, shared by both planners (plan_opts.c) ---------- */

/* Bit (1u << dc_sharding) for each type a table may take. */
#define DC_PLAN_TYPE(t) (1u << (unsigned)(t))
#define DC_PLAN_ALL_TYPES                                                   \
  (DC_PLAN_TYPE(DC_SHARDING_TABLE_WISE) |                                  \
   DC_PLAN_TYPE(DC_SHARDING_ROW_WISE) |                                    \
   DC_PLAN_TYPE(DC_SHARDING_COLUMN_WISE) |                                 \
   DC_PLAN_TYPE(DC_SHARDING_TABLE_ROW_WISE) |                              \
   DC_PLAN_TYPE(DC_SHARDING_DATA_PARALLEL) |                               \
   DC_PLAN_TYPE(DC_SHARDING_GRID_SHARD) |                                  \
   DC_PLAN_TYPE(DC_SHARDING_TABLE_COLUMN_WISE))

/* A point's step time under a plan (µs) and whether its row fits
 * (false when it cannot say), by which dc_plan_auto chooses among
 * its candidate plans and dc_plan_place ranks its placements:
 * dc_plan_build_graph gives the evaluator's. */
typedef struct dc_plan_pricer {
  bool (*step_us)(void *ctx, const dc_point *p, const dc_shard_plan *s,
                  double *step_us, bool *fits);
  void *ctx;
} dc_plan_pricer;

typedef struct dc_plan_opts {
  const dc_device *dev;      /* prices and HBM capacity */
  const dc_kmodels *models;  /* may be NULL */
  double hbm_fraction;       /* usable share of HBM; 0: 1.0 */
  uint32_t allowed;          /* types for tables the point leaves to auto;
                                0: all */
  const uint32_t *table_allowed; /* per table, overrides `allowed`; may be
                                    NULL or hold 0 for "no restriction" */
  const dc_plan_pricer *pricer;  /* may be NULL: dc_plan_auto returns its
                                    own objective's choice */
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
 * global `allowed` of `o` (all when 0), less grid_shard under
 * `sharding.objective: torchrec` (TorchRec's planner takes it only where a
 * table's constraints ask for it). */
uint32_t dc_plan_table_types(const dc_point *p, const dc_plan_opts *o,
                             int32_t t);

/* The order both planners place tables in: by decreasing `w`, then
 * decreasing `size`, then increasing table index. */
typedef struct dc_plan_order {
  int32_t t;
  double w;
  double size;
} dc_plan_order;
void dc_plan_sort_order(dc_plan_order *o, int32_t n);

/* ---- the planner (planner.c, candidates.c) ----------------------------- */

/* Prices a plan with the planner's model (the point's objective). */
void dc_plan_cost_of(const dc_point *p, const dc_shard_plan *s,
                     const dc_plan_opts *o, dc_arena *a, dc_plan_cost *out);

/* The planner. Tables the point fixes (a type, pinned ranks) are
 * constraints; the rest are free within `allowed`. With `o->pricer` (and
 * the default objective), its answer is the candidate plan it built —
 * the greedy search's, the search's from the default table-wise plan,
 * that plan itself, each before and after the replication pass — whose
 * step time the pricer finds least, those whose row fits first (ties:
 * the planner's own choice, then that order). Returns NULL with E0503
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
 * nothing fits (its row then says fits = false; under the torchrec
 * objective with a warning, as TorchRec's planner fails there). The
 * driver's entry;
 * `detail` as graphgen.h's dc_graph_detail (PRICED when only the metrics
 * are wanted). */
dc_graph *dc_plan_build_graph(const dc_point *p, dc_graph_detail detail,
                              dc_arena *a, dc_diags *d);

/* ---- where tables live (placement.c) ---------------------------------- */

/* Under sharding.memory: auto: a copy of p (in `a`) whose AUTO tables are
 * each HBM, UVM_CACHING or UVM, with the sharding plan for it in *plan
 * (NULL: graphgen's own plan; also when nothing fits, and the copy is
 * then the placement that needs the least HBM). Hosts hold `host_cap`
 * bytes each. Candidates are ranked by `pricer` (those whose row fits
 * first), or by the planner's cost when it is NULL. NULL with diagnostics on a constraint error
 * (E0502). */
const dc_point *dc_plan_place(const dc_point *p, const dc_plan_opts *o,
                              int64_t host_cap, const dc_plan_pricer *pricer,
                              dc_arena *a, dc_diags *d,
                              dc_shard_plan **plan);

/* ---- the planner under the torchrec objective (planner_torchrec.c) ----- */

/* The planner and its cost under the torchrec objective (dc_plan_auto and
 * dc_plan_cost_of call them for such a point; planner_torchrec.c). */
dc_shard_plan *dc_plan_auto_torchrec(const dc_point *p,
                                     const dc_plan_opts *o, dc_arena *a,
                                     dc_diags *d, dc_plan_cost *cost);
void dc_plan_cost_torchrec(const dc_point *p, const dc_shard_plan *s,
                           const dc_plan_opts *o, dc_arena *a,
                           dc_plan_cost *out);

/* ---- TorchRec's planner estimate (torchrec_estimate.c) -----------------
 * TorchRec's sharding-planner cost model (`sharding: {estimator:
 * torchrec}`), restated from its published formulas (pytorch/torchrec,
 * BSD-3, torchrec/distributed/planner/shard_estimators.py and
 * constants.py; the formulas are in torchrec_estimate.c). It prices
 * embedding shards only — no MLPs, host overheads, latencies or overlap —
 * with TorchRec's default constants unless the study overrides them, so
 * the figures equal what TorchRec's planner prints; dlrmc reports them
 * beside its own estimate.
 *
 * Units: bytes, milliseconds; bandwidths are given in GiB/s as TorchRec
 * writes them and converted to bytes/ms (· 1024³ / 1000). */

/* TorchRec's EmbeddingComputeKernel, for the device bandwidth. */
typedef enum dc_torchrec_kernel {
  DC_TORCHREC_FUSED,            /* HBM */
  DC_TORCHREC_DENSE,            /* 0.5 · HBM */
  DC_TORCHREC_FUSED_UVM,        /* HBM↔DDR / 10 */
  DC_TORCHREC_FUSED_UVM_CACHING /* (r·HBM + (1−r)·HBM↔DDR) / 10 */
} dc_torchrec_kernel;

typedef struct dc_torchrec_consts {
  double hbm_gibps;        /* 897 */
  double ddr_gibps;        /* 51 */
  double hbm_to_ddr_gibps; /* 32 */
  double intra_host_gibps; /* 600 */
  double cross_host_gibps; /* 12.5, per GPU */
  double hbm_gib;          /* 32 per rank */
  double ddr_gib;          /* 128 per rank */
  double index_bytes;      /* 8 */
  double bwd_compute_mult; /* 2 */
  double weighted_mult;    /* 1.1 (weighted features; unused by DLRM) */
  double batched_copy;     /* 2.455 */
  double dp_optimizer;     /* 9.22 */
  int32_t full_block_dim;  /* 128 */
  double penalty_mid;      /* 1.15 for 64 ≤ D < 128 */
  double penalty_low;      /* 1.75 for D < 64 */
  double cache_load;       /* 0.2 */
  dc_torchrec_kernel kernel; /* compute kernel of sharded tables: fused */
} dc_torchrec_consts;

/* TorchRec's defaults (the values in the comments above). */
void dc_torchrec_defaults(dc_torchrec_consts *c);
/* The defaults with a point's overrides (sharding.torchrec: hbm_bw,
 * ddr_bw, hbm_to_ddr_bw, intra_host_bw, cross_host_bw; 0 keeps the
 * default). */
void dc_torchrec_consts_of(const dc_point *p, dc_torchrec_consts *c);

/* Device bandwidth of a compute kernel, bytes/ms. */
double dc_torchrec_device_bw(const dc_torchrec_consts *c,
                             dc_torchrec_kernel k);

/* One shard's cost: the four terms of TorchRec's Perf and its storage. */
typedef struct dc_torchrec_shard {
  int32_t table, shard, rank;
  dc_sharding type;
  double fwd_compute_ms, fwd_comms_ms, bwd_compute_ms, bwd_comms_ms;
  double total_ms;
  double hbm_bytes; /* weights + optimizer + input and output buffers */
  double ddr_bytes; /* UVM kernels: the weights and state in host memory */
} dc_torchrec_shard;

/* A rank's sums over its shards. */
typedef struct dc_torchrec_rank {
  double fwd_compute_ms, fwd_comms_ms, bwd_compute_ms, bwd_comms_ms;
  double total_ms;
  double hbm_bytes;
} dc_torchrec_rank;

/* Imbalance of a per-rank quantity v (p_i = v_i / Σ v, k ranks), as
 * TorchRec's planner stats print it. All 0 for k = 1 or Σ v = 0. */
typedef struct dc_imbalance {
  double max_over_mean;
  double total_variation; /* max |p_i − 1/k| */
  double total_distance;  /* Σ |p_i − 1/k| */
  double chi_divergence;  /* Σ k(p_i − 1/k)² / [((k−1)/k)²·k + (k−1)/k] */
  double kl_divergence;   /* Σ p_i ln(k p_i) / ln k */
} dc_imbalance;

void dc_imbalance_of(const double *v, int32_t k, dc_imbalance *out);

typedef struct dc_torchrec_estimate {
  int32_t n_shards;
  dc_torchrec_shard *shards; /* table order, then shard order */
  int32_t n_ranks;
  dc_torchrec_rank *ranks;
  int32_t max_rank;          /* the slowest rank (lowest on ties) */
  double max_ms;             /* the plan's cost: the slowest rank's */
  double max_hbm_bytes;      /* the fullest rank's storage */
  dc_imbalance perf, hbm;    /* over ranks' total_ms and hbm_bytes */
} dc_torchrec_estimate;

/* Prices every shard of `s` for point `p` (local batch = global / ranks;
 * element size 4: dlrmc's tables are fp32). */
void dc_torchrec_estimate_plan(const dc_point *p, const dc_shard_plan *s,
                               const dc_torchrec_consts *c, dc_arena *a,
                               dc_torchrec_estimate *out);

/* One shard alone (exposed for tests and the planner). */
dc_torchrec_shard dc_torchrec_price_shard(const dc_point *p,
                                          const dc_shard_plan *s,
                                          int32_t table, int32_t shard,
                                          const dc_torchrec_consts *c);

/* The HBM TorchRec's planner leaves for embeddings on each rank: it
 * reserves 15 % of HBM, then 6 × the dense parameters' bytes, then
 * Σ batch inputs · 8 · 20 for input batches in flight. Bytes. */
double dc_torchrec_usable_hbm(const dc_point *p, const dc_torchrec_consts *c);

#endif /* DC_RUNTIME_PLAN_H */
