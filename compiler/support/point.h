/*
 * point.h — dc_point, one fully resolved configuration of a study (one
 * sweep point), the value the front end hands to graphgen and runtime.
 *
 * Everything is resolved: presets expanded, defaults filled in, sizes in
 * plain integers, names checked against the catalogs. Nothing here refers
 * back to YAML; spans are kept only for diagnostics raised by later stages
 * (a graph that cannot be built points at the key that made it so).
 *
 * Ownership: a dc_point and every array it points to live in the arena
 * passed to dc_study_point(); strings may also point into the study's own
 * arena, which outlives every point.
 */
#ifndef DC_POINT_H
#define DC_POINT_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/support/support.h"

typedef enum dc_interaction {
  DC_INTERACTION_DOT, /* pairwise dot products, lower triangle (default) */
  DC_INTERACTION_CAT, /* concatenation */
  DC_INTERACTION_DCN  /* DCNv2 cross network (TorchRec's LowRankCrossNet) */
} dc_interaction;

typedef enum dc_loss { DC_LOSS_MSE, DC_LOSS_BCE } dc_loss;

typedef enum dc_embedding_kernel {
  DC_EMBEDDING_PER_TABLE, /* one aten::embedding_bag per table (stock) */
  DC_EMBEDDING_BATCHED    /* one table-batched op, backward fused with opt */
} dc_embedding_kernel;

/* How the iteration is run (system.framework; spec/frameworks.md). */
typedef enum dc_framework {
  DC_FRAMEWORK_PYTORCH, /* stock PyTorch, facebookresearch/dlrm (2019) */
  DC_FRAMEWORK_TORCHREC, /* TorchRec + FBGEMM (DistributedModelParallel) */
  DC_FRAMEWORK_FUSED     /* vendor kernels and CUDA-graph replay */
} dc_framework;

/* In-switch reductions a system has (system.links.sharp, the catalog's
 * `sharp`): NVLink SHARP in the NVSwitch (NCCL's NVLS algorithms) and
 * SHARP in the InfiniBand switches (NCCL's CollNet). spec/collectives.md. */
enum { DC_SHARP_NVLS = 1, DC_SHARP_IB = 2 };

typedef enum dc_precision {
  DC_PRECISION_FP32,
  DC_PRECISION_TF32,
  DC_PRECISION_FP16,
  DC_PRECISION_BF16
} dc_precision;

/* Storage precision of embedding tables and of the pooled embeddings'
 * all-to-all payload (training.embedding_precision, comm_precision). */
typedef enum dc_storage {
  DC_STORAGE_FP32,
  DC_STORAGE_FP16,
  DC_STORAGE_BF16,
  DC_STORAGE_INT8, /* tables only: row-wise quantised (scale, bias per row) */
  DC_STORAGE_FP8   /* e4m3 */
} dc_storage;

typedef enum dc_optimizer {
  DC_OPTIMIZER_SGD,
  DC_OPTIMIZER_ADAGRAD,
  DC_OPTIMIZER_ROWWISE_ADAGRAD,
  DC_OPTIMIZER_ADAM
} dc_optimizer;

typedef enum dc_sharding {
  DC_SHARDING_AUTO, /* the planner chooses (single GPU: everything local) */
  DC_SHARDING_TABLE_WISE,
  DC_SHARDING_ROW_WISE,
  DC_SHARDING_COLUMN_WISE,
  DC_SHARDING_TABLE_ROW_WISE,
  DC_SHARDING_DATA_PARALLEL,
  DC_SHARDING_GRID_SHARD, /* column blocks across hosts, each row-wise
                             over its host's GPUs (TorchRec's grid_shard) */
  DC_SHARDING_TABLE_COLUMN_WISE, /* column blocks on distinct GPUs of one
                                    host (TorchRec's table_column_wise) */
  DC_SHARDING_EXPLICIT /* per-table type and ranks in dc_table */
} dc_sharding;

/* What `plan: auto` minimises (sharding.objective; runtime/plan/plan.h). */
typedef enum dc_objective {
  DC_OBJECTIVE_DLRMC,   /* dlrmc's step-time model of the embeddings */
  DC_OBJECTIVE_TORCHREC /* TorchRec's planner cost
                           (runtime/plan/torchrec_estimate.c) */
} dc_objective;

/* Where a table's rows live (sharding.memory, tables[].memory; spec/
 * study.md, "Tables beyond HBM"). HBM: every row on the GPU. UVM: the
 * rows and their optimizer state in host memory, read and written over
 * the host link (TorchRec's fused_uvm). UVM_CACHING: the same, with a
 * cache of cache_load_factor × rows in HBM (fused_uvm_caching). AUTO: the
 * planner chooses (only under sharding.memory: auto). */
typedef enum dc_table_memory {
  DC_MEMORY_HBM,
  DC_MEMORY_UVM,
  DC_MEMORY_UVM_CACHING,
  DC_MEMORY_AUTO
} dc_table_memory;

typedef enum dc_embedding_model {
  DC_EMBMODEL_ENHANCED, /* L2 hit-rate estimate (paper §III-B, default) */
  DC_EMBMODEL_PLAIN     /* DRAM traffic only */
} dc_embedding_model;

/* One embedding table (tables given as groups are expanded to one entry
 * per table: `{count: 8, rows: 1M}` gives 8 entries). */
typedef struct dc_table {
  const char *name;     /* "t0", "t1", ... or the user's name */
  int64_t rows;         /* E */
  int32_t dim;          /* D */
  double pooling;       /* L, mean lookups per sample (may be fractional) */
  dc_sharding sharding; /* DC_SHARDING_AUTO: follow the plan */
  int32_t n_ranks;      /* explicit placement; 0 when not pinned */
  const int32_t *ranks;
  dc_table_memory memory; /* HBM unless the study says otherwise */
  double zipf;          /* access skew: Zipf exponent, 0 uniform */
  double hit_rate;      /* measured cache hit rate, < 0 when not given */
  dc_span span;         /* where the table (group) was written */
  dc_span plan_span;    /* where its sharding or ranks were written (an
                           entry of sharding.plan); none: span */
} dc_table;

/* Where a diagnostic about table t's sharding points: the plan entry that
 * placed it, else the table. */
static inline dc_span dc_table_plan_span(const dc_table *t) {
  return t->plan_span.src ? t->plan_span : t->span;
}

typedef enum dc_transform_kind {
  DC_TRANSFORM_SCALE,  /* multiply the time of matching kernels by factor */
  DC_TRANSFORM_REMOVE, /* drop matching ops (and their kernels) */
  DC_TRANSFORM_STREAM  /* move matching ops' kernels to stream `stream` */
} dc_transform_kind;

/* A what-if transform. `match` is a PCRE2 pattern (already compiled once by
 * the front end to check it) matched against op names and, for SCALE,
 * kernel kind names ("gemm", "embedding_fwd", ...). */
typedef struct dc_transform {
  dc_transform_kind kind;
  const char *match;
  double factor;  /* SCALE */
  int32_t stream; /* STREAM */
  dc_span span;
} dc_transform;

/* A swept parameter of this point, for the output's leading columns. */
typedef struct dc_param {
  const char *path;  /* "training.batch_size" */
  const char *value; /* as written, or as generated ("2048") */
} dc_param;

typedef struct dc_point {
  int64_t index; /* 0-based position in the sweep */
  const char *study;

  /* model */
  const char *model_name;     /* preset name or "custom" */
  int32_t n_bottom;           /* entries of bottom_mlp */
  const int64_t *bottom_mlp;  /* [n0 dense features, b1, ..., bk] */
  int32_t n_top;              /* entries of top_mlp (input width derived) */
  const int64_t *top_mlp;     /* [t1, ..., 1] */
  int32_t n_tables;
  const dc_table *tables;
  dc_interaction interaction;
  bool interaction_self;      /* dot: include the diagonal (default false) */
  dc_loss loss;
  dc_embedding_kernel embedding_kernel;
  int32_t dcn_layers;         /* dcn: cross layers (>= 1) */
  int64_t dcn_low_rank;       /* dcn: rank R of W_l·V_l; 0 = full rank */

  /* training */
  int64_t batch_size;         /* global batch */
  dc_precision precision;
  dc_optimizer optimizer;         /* dense parameters */
  dc_optimizer sparse_optimizer;  /* embedding tables (default: optimizer) */
  dc_storage embedding_precision; /* table weights (default fp32) */
  dc_storage comm_precision;      /* pooled-embedding exchange payload */
  bool zero_grad_legacy;      /* PyTorch 1.13 zero_grad (fill kernels) */
  int64_t ddp_bucket_bytes;   /* gradient all-reduce bucket (25 MB) */

  /* system */
  const char *gpu;            /* catalog name (canonical) or a path */
  int32_t gpus;               /* total GPUs = hosts * gpus_per_host */
  int32_t hosts;
  int32_t gpus_per_host;
  const char *overheads;      /* overhead profile name or path */
  const char *kernel_models;  /* a fitted-model folder (dlrmc calibrate),
                                 resolved path; NULL: the GPU's own */
  double nvlink_gbps;         /* 0: from the GPU catalog */
  double pcie_gbps;           /* 0: from the GPU catalog */
  double nic_gbps;            /* per GPU; 0: default */
  double link_latency_us;     /* < 0: default */
  int32_t nvlink_domain;      /* GPUs per NVLink fabric; 0: the catalog's */
  int32_t sharp;              /* DC_SHARP_* bits; < 0: the catalog's */
  dc_framework framework;     /* execution style (default pytorch) */
  bool pipeline;              /* torchrec: TrainPipelineSparseDist overlap */

  /* sharding */
  dc_sharding sharding;
  dc_objective objective;     /* what `auto` minimises */
  bool memory_auto;           /* sharding.memory: auto */
  double cache_load_factor;   /* cached share of a uvm_caching table */
  int64_t host_memory_bytes;  /* per host; 0: the GPU catalog's host */

  /* kernel models */
  dc_embedding_model embedding_model;

  /* sharding estimator: sharding.estimator: torchrec reports
   * TorchRec's planner estimate beside dlrmc's; sharding.torchrec
   * overrides its bandwidth constants, in TorchRec's GB/s (1024³ bytes
   * per s); 0 keeps TorchRec's default. */
  bool torchrec;
  double torchrec_hbm_bw, torchrec_ddr_bw, torchrec_hbm_to_ddr_bw;
  double torchrec_intra_host_bw, torchrec_cross_host_bw;

  /* capacity inversion: with capacity_target_ms > 0, `run`
   * searches, per GPU type, the smallest GPU count that fits and meets
   * the target step time (spec/study.md, "Capacity"). */
  double capacity_target_ms;
  int32_t n_capacity_gpus;
  const int32_t *capacity_gpus;     /* candidate counts, ascending */
  int32_t n_capacity_types;
  const char *const *capacity_types; /* canonical GPU names */
  /* per type: GPUs per host of its candidates (capacity.gpus_per_host,
   * else the type's catalog host size) */
  const int32_t *capacity_gpus_per_host;

  /* what-if transforms, in study order */
  int32_t n_transforms;
  const dc_transform *transforms;

  /* the swept parameters' values, in sweep key order */
  int32_t n_params;
  const dc_param *params;
} dc_point;

/* The host layout of `gpus` GPUs when only their count is known
 * (spec/multi-gpu.md, "Hosts"): hosts of `host_size` GPUs (the GPU
 * catalog's gpus_per_host), or one host when they fit in one. False, with
 * *hosts and *per_host as if one host held them all, when the count is
 * not a whole number of hosts. The sweep's points and the capacity
 * search both lay GPUs out with it. */
bool dc_host_layout(int64_t gpus, int64_t host_size, int64_t *hosts,
                    int64_t *per_host);

/* "8 hosts × 8 GPUs", "1 host × 4 GPUs": how every header (explain,
 * graph, a Markdown table's caption) names a point's layout. */
void dc_point_layout(const dc_point *p, char *buf, size_t cap);

const char *dc_precision_name(dc_precision p);   /* "fp32" */
const char *dc_optimizer_name(dc_optimizer o);   /* "sgd" */
const char *dc_sharding_name(dc_sharding s);     /* "table_wise" */
const char *dc_loss_name(dc_loss l);
const char *dc_interaction_name(dc_interaction i);
const char *dc_embedding_kernel_name(dc_embedding_kernel k);
const char *dc_storage_name(dc_storage s);       /* "int8" */
const char *dc_framework_name(dc_framework f);   /* "torchrec" */
const char *dc_table_memory_name(dc_table_memory m); /* "uvm_caching" */

/* Derived widths, in one place for graphgen, memory and the estimators:
 * the width of the interaction's input x0 = cat(bottom output, pooled
 * embeddings) as one flat row (D + Σ dims), and the top MLP's input width
 * (dot: D + pairs; cat and dcn: the x0 width, a cross net keeps it). */
int64_t dc_point_x0_width(const dc_point *p);
int64_t dc_point_top_in(const dc_point *p);
/* Parameters of the cross network (0 unless dcn): per layer W [N, R],
 * V [R, N], bias [N]; full rank, one [N, N] kernel and the bias. */
int64_t dc_point_cross_params(const dc_point *p);
/* Dense parameters: bottom MLP, cross network, top MLP (weights and
 * biases). */
int64_t dc_point_dense_params(const dc_point *p);
/* fp32 optimizer state of `elems` values in `rows` rows: sgd none,
 * adagrad one per value, rowwise_adagrad one per row, adam two per value
 * (torch.optim and FBGEMM keep the state in fp32 whatever the weights). */
int64_t dc_optimizer_state_bytes(dc_optimizer o, int64_t rows, int64_t elems);

#endif /* DC_POINT_H */
