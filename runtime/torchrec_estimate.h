/*
 * torchrec_estimate.h — TorchRec's sharding-planner cost model (`sharding:
 * {estimator: torchrec}`), restated from its published formulas
 * (reference/torchrec-estimator.md; pytorch/torchrec, BSD-3,
 * torchrec/distributed/planner/shard_estimators.py and constants.py). It
 * prices embedding shards only — no MLPs, host overheads, latencies or
 * overlap — with TorchRec's default constants unless the study overrides
 * them, so the figures equal what TorchRec's planner prints; dlrmc reports
 * them beside its own estimate.
 *
 * Units: bytes, milliseconds; bandwidths are given in GiB/s as TorchRec
 * writes them and converted to bytes/ms (· 1024³ / 1000).
 *
 * Ownership: an estimate's arrays live in the arena passed in.
 */
#ifndef DC_RUNTIME_TORCHREC_ESTIMATE_H
#define DC_RUNTIME_TORCHREC_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

#include "graphgen/graphgen.h"

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

#endif /* DC_RUNTIME_TORCHREC_ESTIMATE_H */
