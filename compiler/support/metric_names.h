/*
 * metric_names.h — the one table of the metrics a point is reported as:
 * the symbol each stage names it by and the column name a user writes
 * (output.columns) and reads. runtime/runtime.h makes dc_metric_id of
 * it, the front end checks output.columns against it (compiler/schema.c),
 * and `dlrmc help run` and spec/study.md are checked against it
 * (tests/cli/check_metrics.sh). Order: the default columns, then the
 * sharding figures, then the breakdown of e2e_ms.
 */
#ifndef DC_METRIC_NAMES_H
#define DC_METRIC_NAMES_H

#define DC_METRIC_NAMES(X)                                                  \
  X(E2E_MS, "e2e_ms")                                                       \
  X(GPU_ACTIVE_MS, "gpu_active_ms")                                         \
  X(GPU_IDLE_MS, "gpu_idle_ms")                                             \
  X(GPU_UTIL, "gpu_util")                                                   \
  X(CPU_MS, "cpu_ms")                                                       \
  X(KERNEL_ONLY_MS, "kernel_only_ms")                                       \
  X(SAMPLES_PER_S, "samples_per_s")                                         \
  X(PARAMS_GIB, "params_gib")                                               \
  X(OPTIMIZER_GIB, "optimizer_gib")                                         \
  X(ACTIVATIONS_GIB, "activations_gib")                                     \
  X(WORKSPACE_GIB, "workspace_gib")                                         \
  X(FITS, "fits")                                                           \
  X(EMB_MS, "emb_ms")                                                       \
  X(EMB_IMBALANCE, "emb_imbalance")                                         \
  X(COMM_MS, "comm_ms")                                                     \
  X(COMM_BYTES, "comm_bytes")                                               \
  X(SPEEDUP, "speedup")                                                     \
  /* sharding (reported by default only with sharding.estimator:        \
   * torchrec; any study may name them in output.columns) */             \
  X(EMB_TOTAL_VARIATION, "emb_total_variation")                             \
  X(EMB_TOTAL_DISTANCE, "emb_total_distance")                               \
  X(EMB_CHI_DIVERGENCE, "emb_chi_divergence")                               \
  X(EMB_KL_DIVERGENCE, "emb_kl_divergence")                                 \
  X(TORCHREC_MS, "torchrec_ms")                                             \
  X(TORCHREC_FWD_COMPUTE_MS, "torchrec_fwd_compute_ms")                     \
  X(TORCHREC_FWD_COMMS_MS, "torchrec_fwd_comms_ms")                         \
  X(TORCHREC_BWD_COMPUTE_MS, "torchrec_bwd_compute_ms")                     \
  X(TORCHREC_BWD_COMMS_MS, "torchrec_bwd_comms_ms")                         \
  X(TORCHREC_HBM_GIB, "torchrec_hbm_gib")                                   \
  X(TORCHREC_IMBALANCE, "torchrec_imbalance")                               \
  /* where e2e_ms goes on the critical rank (never in the              \
   * default set; JSON lines carry them in each row's "detail") */      \
  X(COMPUTE_MS, "compute_ms")                                               \
  X(EXPOSED_COMM_MS, "exposed_comm_ms")                                     \
  X(EXPOSED_HOST_MS, "exposed_host_ms")                                     \
  X(OTHER_IDLE_MS, "other_idle_ms")                                         \
  /* tables beyond HBM: the fullest host's memory, the lookup-weighted    \
   * HBM-cache hit rate */                                              \
  X(HOST_GIB, "host_gib")                                                   \
  X(CACHE_HIT_RATE, "cache_hit_rate")

#endif /* DC_METRIC_NAMES_H */
