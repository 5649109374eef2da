/*
 * runtime.h — from a graph to the numbers a user came for: host-overhead
 * profiles, the critical-path evaluator (the paper's Algorithm 1 extended
 * to streams and ranks), metrics, the sweep executor and the emitters.
 * The sharding planners are in runtime/plan/ (runtime/plan/plan.h).
 *
 * Dependencies: runtime/ stands on graphgen/ (the graph, the shard plan
 * and its memory arithmetic, which the metrics and the planners call),
 * kernels/ (prices) and compiler/support/; it never calls the front end
 * (compiler/). dc_runtime links dc_graphgen, dc_kernels and dc_support
 * (runtime/CMakeLists.txt), so a program that links dc_runtime alone
 * links (the linkage_dc_runtime test).
 *
 * Ownership: profiles are loaded into the arena the caller passes (or, for
 * built-ins, once per process); metrics are plain values.
 */
#ifndef DC_RUNTIME_H
#define DC_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/support/metric_names.h"
#include "compiler/support/support.h"
#include "graphgen/graphgen.h"
#include "kernels/kernels.h"

/* ---- host-overhead profiles (spec/design.md) ---------------------------- */

/* Mean, standard deviation and sample count of one overhead, in µs.
 * n == 0 and mean < 0 mark "not given" (fall back to defaults). */
typedef struct dc_stat {
  double mean;
  double std;
  int64_t n;
} dc_stat;

/* The five overhead types of the paper's Fig. 6. */
typedef struct dc_op_overheads {
  const char *op; /* PyTorch op name as in the trace */
  dc_stat t1, t2, t3, t5;
} dc_op_overheads;

typedef struct dc_runtime_overheads {
  const char *call; /* "cudaLaunchKernel", "cudaMemcpyAsync", ... */
  dc_stat t4;
} dc_runtime_overheads;

/*
 * The YAML form (spec/overheads/, written by `dlrmc overheads extract`):
 *
 *   name: paper-v100
 *   units: us
 *   source: "..."
 *   defaults: {t1: 7.7, t2: 20, t3: 10, t4: 10, t5: 8, kernel_gap: 1}
 *   ops:
 *     "aten::linear": {t2: 33, t3: 10.5, t5: 29, n: 120}
 *   runtime:
 *     cudaLaunchKernel: {t4: 5.0, n: 141}
 *
 * Per-op entries may also carry std: {t2_std: 3.1, ...} and per-type
 * counts (t2_n: 40); `n` alone is the count for all of them.
 */
typedef struct dc_profile {
  const char *name;
  const char *source;
  double t1_us, t2_us, t3_us, t4_us, t5_us; /* defaults (pooled means) */
  double kernel_gap_us;                     /* minimum gap on a stream */
  size_t n_ops;
  dc_op_overheads *ops;     /* sorted by op name */
  size_t n_runtime;
  dc_runtime_overheads *runtime; /* sorted by call name */
} dc_profile;

/* Loads a profile by catalog name (spec/overheads/) or path. */
bool dc_profile_load(const char *name, dc_profile *out, dc_arena *a,
                     dc_diags *d);
/* Writes the YAML form above (deterministic: sorted, fixed precision). */
void dc_profile_write(const dc_profile *p, dc_buf *out);


/* Overheads of one op, defaults filled in (µs). */
typedef struct dc_op_cost {
  double t1_us, t2_us, t3_us, t5_us;
} dc_op_cost;

/* Per-op lookup: binary search on the sorted ops, defaults for what the
 * profile does not give. */
dc_op_cost dc_profile_op(const dc_profile *p, const char *op);
/* T4 of one CUDA runtime call (NULL: cudaLaunchKernel), default t4. */
double dc_profile_t4(const dc_profile *p, const char *call);
/* Sorts ops and runtime calls by name (the loader and tests use it). */
void dc_profile_sort(dc_profile *p);

/* ---- the evaluator (spec/design.md, the paper's Algorithm 1) ------------ */

/* The price of one launched kernel in µs. Production passes the memoised
 * dc_kernel_time (runtime/memo.c); tests inject known times. */
typedef double (*dc_ktime_fn)(void *ctx, const dc_launch *l, int32_t rank);

/* What one top-level op cost (recorded only when asked: explain,
 * timelines). Times are µs from the start of the iteration. */
typedef struct dc_eval_op {
  int32_t op;               /* index of the top-level op in the graph */
  double cpu_start_us;      /* before its T1 */
  double cpu_end_us;        /* after its T3 (or T5 for kernel-less ops) */
  double t1_us, t2_us, t3_us, t4_us, t5_us; /* paid (T4, T5 summed) */
  double sync_wait_us;      /* host blocked on the GPU (host_sync) */
  int32_t n_kernels;
  double kernel_us;         /* sum of its kernels' predicted times */
  double gpu_idle_us;       /* stream idle right before its kernels */
} dc_eval_op;

/* One kernel as scheduled (recorded only when asked). */
typedef struct dc_eval_kernel {
  int32_t op;       /* the op (top-level or descendant) that launched it */
  int32_t top;      /* its top-level op */
  int32_t launch;   /* index in that op's launches */
  int32_t rank, stream;
  double call_us;   /* CPU time the runtime call (T4) began */
  double t4_us;
  double start_us, end_us;
} dc_eval_kernel;

typedef struct dc_eval_rank {
  double e2e_us;         /* max(cpu, every stream) on this rank */
  double cpu_us;
  double gpu_active_us;  /* union of kernel intervals over streams */
  double compute_us;     /* the same, of the non-collective kernels only */
  double kernel_only_us; /* critical path with no host overheads, gap 0 */
  double kernel_sum_us;  /* plain sum of kernel times */
  double emb_us;         /* embedding forward + backward kernels */
  double comm_us;        /* collective kernels (their own duration) */
  double comm_wait_us;   /* its collectives' waits for the group's latest
                            arrival (start on it less its own ready time) */
  int64_t comm_bytes;    /* collective payload bytes */
} dc_eval_rank;

typedef struct dc_eval_result {
  double e2e_us;          /* the slowest rank's */
  int32_t critical_rank;  /* that rank (lowest index on ties) */
  int32_t n_ranks;
  dc_eval_rank *ranks;    /* [n_ranks], in the arena */
  size_t n_ops;           /* recorded top-level ops (all ranks) */
  dc_eval_op *ops;
  size_t n_kernels;       /* recorded kernels (all ranks) */
  dc_eval_kernel *kernels;
} dc_eval_result;

/* Op costs by op name kept across evaluations, for a caller that evaluates
 * many graphs with one profile that outlives them all (the sweep's
 * workers; see dc_eval_graph_names). A cache serves one profile at a
 * time: it empties itself when given another profile pointer. */
typedef struct dc_eval_names dc_eval_names;
dc_eval_names *dc_eval_names_new(void);
void dc_eval_names_free(dc_eval_names *n);

typedef struct dc_eval_opts {
  const dc_profile *profile;
  dc_ktime_fn ktime;
  void *ktime_ctx;
  bool record; /* fill ops and kernels (explain, timelines) */
} dc_eval_opts;

/* Evaluates one iteration of `g`. Fails (with a diagnostic) only when the
 * ranks' collectives cannot be matched (a deadlock in the real run too). */
bool dc_eval_graph(const dc_graph *g, const dc_eval_opts *o, dc_arena *a,
                   dc_eval_result *out, dc_diags *d);
/* The same, with op costs kept in `names` across calls (NULL: as
 * dc_eval_graph). o->profile must not change its contents at the same
 * address while the cache is in use. */
bool dc_eval_graph_names(const dc_graph *g, const dc_eval_opts *o,
                         dc_eval_names *names, dc_arena *a,
                         dc_eval_result *out, dc_diags *d);

/* ---- metrics (spec/design.md) ------------------------------------------- */

/* The first metric that is not in the default column set. */
#define DC_METRIC_FIRST_EXTRA DC_METRIC_EMB_TOTAL_VARIATION
/* The first metric that no default column set has (the breakdown). */
#define DC_METRIC_FIRST_DETAIL DC_METRIC_COMPUTE_MS

typedef enum dc_metric_id {
#define DC_METRIC_ENUM(sym, name) DC_METRIC_##sym,
  DC_METRIC_NAMES(DC_METRIC_ENUM)
#undef DC_METRIC_ENUM
  DC_METRIC_COUNT_
} dc_metric_id;

const char *dc_metric_name(dc_metric_id m);
/* False when `name` is not a metric. */
bool dc_metric_parse(const char *name, dc_metric_id *out);

/* Memory per GPU (the largest rank's), bytes. */
typedef struct dc_memory {
  int64_t params_bytes, optimizer_bytes, activations_bytes, workspace_bytes;
  int64_t hbm_bytes;
  /* tables beyond HBM (dc_memory_host; 0, 0 and 1 until it is called):
   * the fullest host's bytes, each host's memory, the lookup-weighted
   * cache hit rate */
  int64_t host_bytes, host_capacity;
  double cache_hit_rate;
} dc_memory;

/* Fills out's host fields for graph g on hosts of `host_capacity` bytes
 * (the point's system.host_memory, else the GPU catalog's). */
void dc_memory_host(const dc_graph *g, int64_t host_capacity,
                    dc_memory *out);

void dc_memory_estimate(const dc_graph *g, int64_t hbm_bytes,
                        dc_memory *out);
/* One rank's memory (the same model as dc_memory_estimate, which reports
 * the fullest rank): on more than one GPU, graphgen's per-rank formula
 * (dc_shard_plan_memory, the planner's capacity constraint); on one GPU,
 * the walk over the graph's tensors. */
void dc_memory_rank(const dc_graph *g, int32_t rank, int64_t hbm_bytes,
                    dc_memory *out);
/* Every rank's (out: g->n_ranks entries), as dc_memory_rank gives each,
 * in one pass over the plan on several GPUs. */
void dc_memory_ranks(const dc_graph *g, int64_t hbm_bytes, dc_memory *out);
/* params + optimizer + activations + workspace, saturating. */
int64_t dc_memory_total(const dc_memory *m);

typedef struct dc_metrics {
  double v[DC_METRIC_COUNT_]; /* every metric as a double */
  bool has_speedup;
} dc_metrics;

/* Fills every metric but speedup from an evaluation. */
void dc_metrics_compute(const dc_graph *g, const dc_eval_result *r,
                        const dc_memory *mem, dc_metrics *out);
/* Fills the sharding metrics (imbalance statistics over the ranks'
 * embedding time, TorchRec's estimate of the graph's plan with the
 * point's constants); `a` holds the scratch. */
void dc_metrics_sharding(const dc_graph *g, const dc_eval_result *r,
                         dc_arena *a, dc_metrics *out);
/* Appends metric `m` of `x` in its fixed output precision. */
void dc_metric_format(dc_metric_id m, const dc_metrics *x, dc_buf *out);

/* ---- a point's device (runtime/links.c) -------------------------------- */

/* Applies the point's `system.links` overrides to a device looked up from
 * the catalog: nvlink → nvlink_gbps; pcie → pcie_gbps, h2d_pageable_gbps
 * scaled by the same ratio; nic → nic_gbps; latency → link_latency_us and
 * nic_latency_us. A field the study leaves unset keeps the catalog's. */
void dc_device_apply_links(dc_device *dev, const dc_point *p);
/* dc_device_lookup of p->gpu, then dc_device_apply_links: the device every
 * path that prices a point must use. Strings borrowed as the lookup's. */
bool dc_device_of_point(const dc_point *p, dc_device *out, dc_arena *a,
                        dc_diags *d);

/* ---- kernel-time memo cache (runtime/memo.c) ---------------------------- */

/* A per-thread cache of kernel prices keyed by the descriptor's bytes and
 * the device: a kernel repeated across points is priced once. Bounded: it
 * is cleared when full, so memory stays constant on any sweep. */
typedef struct dc_memo dc_memo;
dc_memo *dc_memo_new(void);
void dc_memo_free(dc_memo *m);
/* Prices with dc_kernel_time through the cache. `device_id` tells devices
 * apart (an index in the caller's device table): two devices that differ
 * in any field, links included (dc_device_apply_links), need two ids. */
double dc_memo_time(dc_memo *m, const dc_kernel *k, int32_t device_id,
                    const dc_device *dev, const dc_kmodels *km);
/* Hits and misses, for the benchmark. */
void dc_memo_stats(const dc_memo *m, int64_t *hits, int64_t *misses);

/* ---- the sweep executor and emitters (runtime/sweep_exec.c, emit.c) ---- */

typedef enum dc_format {
  DC_FORMAT_CSV,   /* RFC 4180 */
  DC_FORMAT_MD,    /* a Markdown table */
  DC_FORMAT_JSONL  /* one JSON object per line */
} dc_format;

/* Where the points come from: the driver owns the study and chooses the
 * graph builder (usually dc_plan_build_graph); the executor calls it and
 * never the front end. */
typedef struct dc_sweep_source {
  void *ctx;
  int64_t n_points;
  /* Builds point `index`'s graph into `a` (reset by the caller per point)
   * with at least `detail` (graphgen.h: PRICED where only metrics are
   * read, FULL for a timeline). Must be thread-safe. NULL with a
   * diagnostic on failure. */
  const dc_graph *(*build)(void *ctx, int64_t index, dc_graph_detail detail,
                           dc_arena *a, dc_diags *d);
  /* Baseline point of `index`, or -1 (may be NULL: no baseline). */
  int64_t (*baseline_of)(void *ctx, int64_t index);
  size_t n_params;
  const char *const *param_paths;
  /* output.columns (swept parameters and metrics by name), or NULL for
   * the default set: every parameter, then every metric. */
  size_t n_columns;
  const char *const *columns;
  /* The study asks for TorchRec's estimate (sharding.estimator: torchrec):
   * its columns join the default set and the per-rank/per-shard rows. */
  bool torchrec;
} dc_sweep_source;

/* What one output row stands for. */
typedef enum dc_rows {
  DC_ROWS_POINT,    /* one row per point (the default) */
  DC_ROWS_RANK,     /* --per-rank: one row per point and rank */
  DC_ROWS_SHARD,    /* --per-shard: one row per point and table shard */
  DC_ROWS_CAPACITY  /* capacity: one row per point and GPU type */
} dc_rows;

/* Receives the output in order, chunk by chunk. */
typedef bool (*dc_sink_fn)(void *ctx, const char *data, size_t len);

/* The mark of a Markdown row whose point does not fit in GPU memory. */
#define DC_EMIT_UNFIT "✗"

typedef struct dc_sweep_opts {
  int jobs;              /* worker threads, >= 1 */
  int64_t shard_k;       /* 1-based shard, 1..shard_n */
  int64_t shard_n;       /* 1: no sharding */
  dc_format format;
  dc_sink_fn sink;
  void *sink_ctx;
  /* Receives each point's Chrome-trace timeline (NULL: none). Called from
   * worker threads: must be thread-safe. */
  bool (*timeline_sink)(void *ctx, int64_t index, const char *json,
                        size_t len);
  void *timeline_ctx;
  bool progress;            /* a progress bar on stderr */
  dc_rows rows;             /* DC_ROWS_POINT unless asked */
  /* > 0 (--digits): numbers with this many significant digits instead of
   * each column's fixed decimals, for comparisons with other tools */
  int digits;
  /* output.precision when the study sets it: decimals of every metric
   * (--digits wins); otherwise each metric's own decimals */
  bool has_precision;
  int precision;
  int64_t memo_hits, memo_misses; /* out: cache statistics */
  int64_t n_points;         /* out: points evaluated (this shard's) */
  int64_t n_unfit;          /* out: of them, those that do not fit in GPU
                               memory (Markdown marks their rows with
                               DC_EMIT_UNFIT) */
} dc_sweep_opts;

/* Evaluates every point of the shard and streams the table to the sink in
 * index order: byte-identical output for any `jobs`, memory bounded by a
 * reorder window whatever the number of points. */
bool dc_sweep_run(const dc_sweep_source *src, dc_sweep_opts *o, dc_diags *d);

/* Evaluates one graph with the production pricing (the device and the
 * overhead profile its point names, looked up through the catalogs), and
 * computes its metrics (speedup left unset). Used by explain. */
bool dc_eval_point(const dc_graph *g, bool record, dc_arena *a,
                   dc_eval_result *out, dc_metrics *m, dc_profile *prof_out,
                   dc_diags *d);

/* ---- timelines and explain (runtime/timeline.c, explain.c) ------------- */

/* Chrome trace JSON (Perfetto opens it): one process per rank, the CPU
 * thread with ops and T1–T5 slices, one track per stream with kernels. */
void dc_timeline_write(const dc_graph *g, const dc_eval_result *r,
                       dc_buf *out);
/* One rank of an evaluated point (dc_eval_point with record) as the
 * schedule the execution trace with device nodes carries
 * (dc_graph_write_et, spec/astra-sim.md): its kernels in start order with
 * their predicted start and duration, named as the profiler names them
 * (collectives as NCCL's kernels, with the algorithm and protocol the
 * collective model picks on `dev`), and each top-level op's host time.
 * Arrays in the arena. */
void dc_et_schedule_of(const dc_graph *g, const dc_eval_result *r,
                       const dc_device *dev, int32_t rank, dc_arena *a,
                       dc_et_schedule *out);
/* The per-op table of one rank of an evaluated point. */
void dc_explain_write(const dc_graph *g, const dc_eval_result *r,
                      const dc_profile *p, int32_t rank, dc_buf *out);

/* `dlrmc explain`'s collectives of one rank: per collective kernel, the
 * algorithm and protocol NCCL's tuner would pick (kernels/coll.c), the
 * bytes, the NVLink domains, and the time inside and across a domain. */
/* The point's sharding plan (more than one GPU), one line per table:
 * its type, its shards and where they are (ranks as ranges, a table-row-
 * wise table's host, a grid table's hosts and blocks). */
void dc_explain_plan(const dc_point *p, const dc_shard_plan *s, dc_buf *out);
void dc_explain_collectives(const dc_graph *g, const dc_eval_result *r,
                            const dc_device *dev, int32_t rank, dc_buf *out);

#endif /* DC_RUNTIME_H */
