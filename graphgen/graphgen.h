/*
 * graphgen.h — one DLRM training iteration as PyTorch executes it, built
 * from a dc_point without running PyTorch (spec/design.md,
 * spec/frameworks.md).
 *
 * Ops are stored in execution order per rank, pre-order: an op's children
 * (the aten::mm inside AddmmBackward0, say) follow it, and `end` is one
 * past its last descendant. Top-level ops (parent == -1) are what the
 * paper's Algorithm 1 walks; kernels hang on the op that launches them.
 *
 * Ownership: a dc_graph and everything in it live in the arena passed to
 * dc_graph_build; the point must outlive the graph (names are borrowed).
 *
 * Conventions the pricing side (kernels/) relies on:
 *  - GEMM: described in PyTorch's row-major view, C[m, n] = op(A)[m, k] ·
 *    op(B)[k, n], `batch` times; A is the first matrix operand of the
 *    aten::mm / addmm / bmm. m, n are the output's rows and columns, k
 *    the inner size. aten::linear (addmm): m = batch rows, n = out
 *    features, k = in features, transb (the weight is [out, in]). Backward:
 *    input grad m=B n=in k=out; weight grad m=out n=in k=B, transa. bmm of
 *    the dot interaction: m=n=F, k=D, batch=B, transb. (cuBLAS, being
 *    column-major, computes the transpose; the sizes are the same.)
 *  - dtype of a GEMM: FP32 (SIMT), TF32 (precision tf32), FP16 / BF16
 *    (autocast); element-wise bytes_per_elem already includes the element
 *    size (accesses × bytes, a cast reads one size and writes another).
 *  - embedding: `batch` is the number of samples this rank looks up (the
 *    global batch when tables are sharded table-wise); identical tables
 *    are grouped, different ones get their own group.
 *  - collectives: `bytes` is what this rank puts in (its send buffer);
 *    all-to-all of pooled embeddings forward (Σ local tables B·D·4) and
 *    backward (local batch · Σ all D · 4); all-reduce of a DDP bucket
 *    (its fp32 gradient bytes). Every rank has the same collectives in the
 *    same order with the same coll_id. Stream 0 computes, stream 1 is
 *    NCCL's.
 *  - H2D copies of the batch are pageable (pinned = false).
 */
#ifndef DC_GRAPHGEN_H
#define DC_GRAPHGEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/support/kdesc.h"
#include "compiler/support/point.h"
#include "compiler/support/support.h"

typedef enum dc_phase {
  DC_PHASE_INPUT,
  DC_PHASE_FORWARD,
  DC_PHASE_LOSS,
  DC_PHASE_BACKWARD,
  DC_PHASE_OPTIMIZER
} dc_phase;

const char *dc_phase_name(dc_phase p);

#define DC_TENSOR_MAX_DIMS 4

typedef struct dc_tensor {
  int32_t id;
  dc_dtype dtype;
  int32_t ndim;
  int64_t shape[DC_TENSOR_MAX_DIMS];
  int32_t producer; /* op index that writes it, -1 for inputs/params */
  bool on_host;     /* host tensors (batch before its copy, index lists) */
  int32_t view_of;  /* 1 + the tensor this is the transposed view of
                       (gg_t_view: same storage, last two dims swapped);
                       0: none. Read by the ET export only. */
} dc_tensor;

/* A kernel as launched by an op: the descriptor plus where it runs. */
typedef struct dc_launch {
  dc_kernel k;
  int32_t stream;      /* 0: the default compute stream */
  const char *runtime; /* "cudaLaunchKernel", "cudaMemcpyAsync", ... */
} dc_launch;

typedef struct dc_op {
  const char *name;  /* "aten::linear", "autograd::engine::evaluate_function:
                        AddmmBackward0", "Optimizer.step#SGD.step", ... */
  dc_phase phase;
  int32_t rank;
  int32_t thread;    /* 0: main thread; 1: autograd engine thread */
  int32_t parent;    /* op index, -1 for top-level */
  int32_t end;       /* one past the last descendant */
  int32_t n_inputs, n_outputs;
  const int32_t *inputs;  /* tensor ids */
  const int32_t *outputs;
  int32_t n_launches;
  dc_launch *launches;
  bool host_sync;    /* blocks the host until the GPU is idle (.cpu()) */
  bool annotation;   /* a record_function scope ("## forward ##"): no
                        cost of its own; its children are priced as
                        top-level ops (runtime/eval.c) */
  bool captured;     /* replayed from a CUDA graph: no host overhead of its
                        own; a run of captured top-level ops costs one
                        cudaGraphLaunch (runtime/eval.c) */
  bool loader;       /* issued by the data loader's own host thread (the
                        fused style's prefetch of the next batch): its host
                        time runs on that thread's clock, off the training
                        thread's (runtime/eval.c) */
} dc_op;

/* ---- sharding plans -----------------------------------------
 * Where every embedding table lives on a multi-GPU system. A table is cut
 * into shards; a shard is a block of rows × columns on one rank. Types:
 *
 *   table_wise      one shard, the whole table, on one rank
 *   column_wise     n shards of the columns (n ≤ ranks), on distinct ranks
 *   row_wise        one shard of the rows per rank, all ranks
 *   table_row_wise  row-wise over the ranks of one host
 *   data_parallel   a full replica on every rank (one shard per rank)
 *   grid_shard      n column blocks on n distinct hosts, each row-wise
 *                   over its host's ranks (shards block by block)
 *   table_column_wise  n column blocks on distinct ranks of one host
 *
 * A rank holds at most one shard of a table. The shards of a table are in
 * rank order for row-wise types and in column order for column-wise. */
typedef struct dc_shard {
  int32_t rank;
  int64_t row_off, rows;
  int32_t col_off, cols;
} dc_shard;

typedef struct dc_table_plan {
  dc_sharding type; /* TABLE_WISE .. DATA_PARALLEL, never AUTO/EXPLICIT */
  int32_t host;     /* TABLE_ROW_WISE, TABLE_COLUMN_WISE: its host;
                       otherwise -1 (a grid table's hosts are its
                       shards') */
  int32_t n_shards;
  dc_shard *shards;
} dc_table_plan;

typedef struct dc_shard_plan {
  int32_t n_ranks, hosts, gpus_per_host;
  int32_t n_tables;
  dc_table_plan *tables; /* [n_tables], same order as the point's */
} dc_shard_plan;

/* What one shard looks up per iteration: `batch` samples of `pooling`
 * indices each (row-wise shards see the indices that fall in their rows,
 * pooling × rows_shard / rows under uniform hashing), on a block of
 * rows × cols. */
typedef struct dc_shard_work {
  int64_t batch;
  double pooling;
  int64_t rows;
  int32_t cols;
} dc_shard_work;

dc_shard_work dc_shard_plan_work(const dc_point *p, const dc_shard_plan *s,
                                 int32_t table, int32_t shard);

/* The kernel group (tables 0) of a shard of table t with `rows` × `cols`
 * looked up `pooling` times a sample: where its rows live and, for a
 * uvm_caching table, its cache's rows (cache_load_factor × rows, at
 * least one; graphgen/launch.c). The lookup kernels and the planners
 * describe a shard with it. */
dc_emb_group dc_shard_emb_group(const dc_point *p, int32_t t, int64_t rows,
                                int32_t cols, double pooling);

/* Host of a rank under the plan's layout. */
int32_t dc_shard_plan_host(const dc_shard_plan *s, int32_t rank);

/* An empty plan for the point's system (every table still unset: type
 * AUTO, no shards). */
dc_shard_plan *dc_shard_plan_new(const dc_point *p, dc_arena *a);

/* Cuts table t as `type` (TABLE_WISE .. DATA_PARALLEL) over `ranks`
 * (n_ranks entries): table_wise one rank; column_wise the ranks of its
 * shards (n ≥ 1; with n_ranks == 0 the default count min(ranks, D/32),
 * at least 1, placed on ranks 0..n−1); table_row_wise one rank naming
 * the host (or none: host 0); grid_shard one rank naming each block's host
 * (distinct hosts; none: min(hosts, D/32) blocks, at least 1, on hosts
 * 0..n−1); table_column_wise the ranks of its shards, all on one host
 * (none: min(GPUs a host, D/32) blocks on host 0's first ranks); row_wise
 * and data_parallel ignore ranks.
 * False (with E0502 at the table's span) when the ranks do not fit. */
bool dc_shard_plan_set(dc_shard_plan *s, const dc_point *p, int32_t t,
                       dc_sharding type, int32_t n_ranks,
                       const int32_t *ranks, dc_arena *a, dc_diags *d);

/* The plan the point asks for without the planner: the global type
 * (auto: table_wise), per-table types and pinned ranks from the point;
 * table-wise tables that are not pinned are placed greedily, largest
 * (rows × dim) first, on the rank with the least table bytes so far
 * (ties: lowest rank); column-wise shards likewise on distinct ranks. On
 * one GPU every table is table-wise on rank 0. NULL with diagnostics when
 * the point's constraints cannot be met. */
dc_shard_plan *dc_shard_plan_default(const dc_point *p, dc_arena *a,
                                     dc_diags *d);

/* Checks a plan against the point: every table set, shards inside the
 * table and covering it exactly (replicas for data_parallel), ranks in
 * range, at most one shard of a table per rank. */
bool dc_shard_plan_check(const dc_point *p, const dc_shard_plan *s,
                         dc_diags *d);

/* A copy of `s` in `a` (shards included). */
dc_shard_plan *dc_shard_plan_copy(const dc_shard_plan *s, dc_arena *a);

/* One line per table: "t3 row_wise 0:[0,250)x64 1:[250,500)x64 ...". */
void dc_shard_plan_write(const dc_point *p, const dc_shard_plan *s,
                         dc_buf *out);

/* Per-rank memory in bytes (no time): what the rank must hold in HBM for
 * one training iteration, and in its host's memory for tables kept there.
 * Formulas in graphgen/memory.c. */
typedef struct dc_rank_memory {
  int64_t emb_weights;   /* its shards (replicas for data_parallel) */
  int64_t emb_optimizer; /* optimizer state of those shards */
  int64_t emb_grad;      /* dense gradients of data-parallel replicas */
  int64_t dense_weights; /* MLP parameters (replicated) */
  int64_t dense_optimizer;
  int64_t dense_grad;    /* MLP gradients (+ DDP buckets) */
  int64_t activations;   /* forward tensors kept for the backward */
  int64_t inputs;        /* the batch on the device: indices, offsets,
                            dense features, targets */
  int64_t workspace;     /* transient backward buffers: the gradients
                            exchanged for the embeddings, twice the
                            largest dense gradient tensor */
  int64_t total;
  /* Host memory for the rank's tables beyond HBM: their weights and
   * optimizer state (not in `total`, which is HBM). */
  int64_t host_bytes;
} dc_rank_memory;

/* Fills *out for `rank`; false when a product overflows 64 bits (the
 * fields then saturate at INT64_MAX). */
bool dc_shard_plan_memory(const dc_point *p, const dc_shard_plan *s,
                          int32_t rank, dc_rank_memory *out);
/* Every rank's (out: s->n_ranks entries) in one pass over the plan, each
 * the same to the bit as dc_shard_plan_memory's; false when any rank's
 * product overflows. */
bool dc_shard_plan_memory_all(const dc_point *p, const dc_shard_plan *s,
                              dc_rank_memory *out);
/* The per-shard terms of shard i of table t alone (what it adds to its
 * rank's HBM total, whichever rank that is), in *bytes; false on
 * overflow. dc_shard_host_memory: what it adds to its host's memory. */
bool dc_shard_host_memory(const dc_point *p, const dc_shard_plan *s,
                          int32_t t, int32_t i, int64_t *bytes);
bool dc_shard_memory(const dc_point *p, const dc_shard_plan *s, int32_t t,
                     int32_t i, int64_t *bytes);

/* ---- what a step moves and updates, as the graph builds it -------------
 * The facts the graph's exchange and optimizer are built from, shared
 * with the planners so that a plan is chosen on the bytes and flops the
 * graph then prices (runtime/plan/).
 *
 * dc_optimizer_cost: one update by optimizer `o`, per element of the
 * parameter: its recipe's flops and the bytes its kernels move, summed
 * over the recipe's steps (optim.c; the fused style runs the sum as one
 * multi-tensor kernel). */
void dc_optimizer_cost(dc_optimizer o, double *flops, double *bytes);

/* The optimizer that updates a data-parallel table's replica: the dense
 * one in the torchrec and fused styles (the replica is a dense
 * parameter), training.sparse_optimizer in the stock graph (its step
 * groups parameters by table). */
dc_optimizer dc_dp_table_optimizer(const dc_point *p);

/* Bytes per element of the pooled-embedding all-to-all's payload:
 * training.comm_precision when it quantizes, else fp32, except in the
 * fused style, which keeps the pooled embeddings and their gradients in
 * the model's half precision (spec/frameworks.md). */
int dc_pooled_wire_bytes(const dc_point *p);
/* Bytes per element of the pooled partial sums' reduce-scatter and their
 * gradients' all-gather (table-row-wise inside a host, row-wise over the
 * world): fp32 (comm_precision does not quantize them), the model's half
 * precision in the fused style, as its all-to-all. */
int dc_pooled_reduce_bytes(const dc_point *p);
/* Whether the pooled all-to-all runs hierarchically: NVLink writes
 * inside each host, then an all-to-all among each rail's GPUs (one per
 * host) — HugeCTR's Hierarchical communication strategy, which its MLPerf
 * DLRM-DCNv2 script sets across nodes: the fused style on more than one
 * host. Elsewhere NCCL's flat all-to-all (TorchRec, the stock DLRM). */
bool dc_pooled_a2a_hier(const dc_point *p);

/* Bytes per element of a data-parallel table's gradient all-reduce, and
 * whether it joins the dense gradients' one all-reduce (grouped: the
 * fused style, as HugeCTR's grouped all-reduce, in the model's precision)
 * or is reduced on its own (fp32, in its AccumulateGrad). */
int dc_dp_grad_bytes(const dc_point *p);
bool dc_dp_grad_grouped(const dc_point *p);

typedef struct dc_graph {
  const dc_point *point;
  int32_t n_ranks;
  int32_t n_streams;
  int32_t n_ops;
  dc_op *ops;        /* all ranks; rank r's ops are contiguous */
  int32_t *rank_first; /* [n_ranks + 1]: op range of each rank */
  int32_t n_tensors;
  dc_tensor *tensors;
  const dc_shard_plan *plan; /* the placement the graph was built for */
  /* Every op name is a string literal (graphgen's graphs): two ops whose
   * name pointers are equal have the same name, in any graph. A graph put
   * together otherwise leaves it false. */
  bool literal_names;
  /* How much of the step it spells out (dc_graph_detail below). */
  int32_t detail;
  /* A graph imported from one rank's execution trace (runtime/trace/)
   * holds that rank alone: rank_base is its number in the job and
   * world_ranks the size of the job's default process group, which the
   * ET export writes back. graphgen's graphs hold every rank: 0, 0. */
  int32_t rank_base, world_ranks;
} dc_graph;

/* Whether op j is priced as a unit (the paper's top-level op): not an
 * annotation, and its parent is none or an annotation. */
static inline bool dc_op_is_unit(const dc_graph *g, int32_t j) {
  const dc_op *o = &g->ops[j];
  return !o->annotation &&
         (o->parent < 0 || g->ops[o->parent].annotation);
}

/* Builds (and applies the point's transforms). Returns NULL with a
 * diagnostic when the configuration cannot be built. */
dc_graph *dc_graph_build(const dc_point *p, dc_arena *a, dc_diags *d);

/* Builds for an explicit plan (the planner's, or a copy of the default
 * edited); the plan is checked first and must outlive the graph. */
dc_graph *dc_graph_build_plan(const dc_point *p, const dc_shard_plan *s,
                              dc_arena *a, dc_diags *d);

/* How much of the iteration a graph spells out.
 *
 * FULL: every op and tensor of the training step, as PyTorch runs it —
 * what `graph`, `explain`, timelines and the ET export show.
 *
 * PRICED: what pricing and the metrics read, and nothing they do not.
 * On more than one GPU the stock and fused styles receive one pooled
 * embedding per table from the exchange, and the interaction's cat takes
 * them and its backward narrows its gradient once per table: W ranks ×
 * T tables of tensors and views that carry no kernel, no host cost of
 * their own (the narrows are children of CatBackward0) and no dependency
 * the collective's one output would not give. PRICED keeps one tensor per
 * class of received feature ([local batch, Σ dims], written by the same
 * collective) and one narrow each. Every kernel, collective, top-level op
 * and data dependency is the full graph's, so an evaluation of either is
 * the same to the bit (ctest graph_detail checks it); `dlrmc run` builds
 * PRICED graphs unless it writes timelines. */
typedef enum dc_graph_detail {
  DC_GRAPH_FULL,
  DC_GRAPH_PRICED
} dc_graph_detail;

dc_graph *dc_graph_build_detail(const dc_point *p, const dc_shard_plan *s,
                                dc_graph_detail detail, dc_arena *a,
                                dc_diags *d);

/* Checks every structural invariant; reports each violation. */
bool dc_graph_verify(const dc_graph *g, dc_diags *d);

typedef enum dc_graph_format {
  DC_GRAPH_TEXT,
  DC_GRAPH_DOT,
  DC_GRAPH_ET /* PyTorch execution-trace JSON, 1.1.1-chakra.0.0.4 */
} dc_graph_format;

/* Writes every rank (text, dot) or rank 0 (et). */
void dc_graph_write(const dc_graph *g, dc_graph_format f, dc_buf *out);

/* ---- one rank's export, format names, top-level ops --------------------- */

/* One rank (rank < 0: all ranks, except et which is always one rank: an
 * execution trace is one process's). */
void dc_graph_write_rank(const dc_graph *g, dc_graph_format f, int32_t rank,
                         dc_buf *out);
/* A rank's predicted schedule, for the execution trace with device nodes
 * (spec/astra-sim.md): every kernel the rank launched, as the evaluator
 * placed it, named as the profiler names it, and the host time of each
 * top-level op. Filled by the runtime (dc_et_schedule_of); the exporter
 * only writes it. */
typedef struct dc_et_kernel {
  int32_t op, launch;   /* the op that launched it, index in its launches */
  int32_t stream;
  const char *name;     /* "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ... */
  const char *cat;      /* Kineto's category: "kernel", "gpu_memcpy" */
  double ts_us, dur_us; /* start (µs from the iteration's) and duration */
} dc_et_kernel;

typedef struct dc_et_schedule {
  const dc_et_kernel *kernels; /* the rank's, in start order */
  size_t n_kernels;
  const double *op_ts_us;  /* [g->n_ops]: an op's host start and host */
  const double *op_dur_us; /* time, for the ops the evaluator times (top-
                              level and under annotations); dur < 0: none */
  /* [g->n_ops] or NULL: for an op whose kernels wait for a kernel on
   * another stream (its inputs' latest producer), that kernel's index in
   * `kernels`; -1: none. Written as the op's inter_thread_dep, the one
   * dependency on another node Chakra's converter keeps. */
  const int32_t *op_dep;
} dc_et_schedule;

/* The execution trace of one rank (dc_graph_write_rank's et); with a
 * schedule, the host + device layout of a trace linked with its Kineto
 * twin (chakra_trace_link): each kernel a device node under the op that
 * launched it (a collective's under its record_param_comms), the host
 * ops with their start and duration. */
void dc_graph_write_et(const dc_graph *g, int32_t rank,
                       const dc_et_schedule *s, dc_buf *out);

/* The process groups the ranks' execution traces name (pg_name "0" the
 * whole job, "1", "2", ... each host's group where a collective runs in
 * one) as ASTRA-sim's communicator-group file: {"0": [0, 1, ...], ...}. */
void dc_graph_write_comm_groups(const dc_graph *g, dc_buf *out);

/* "text" | "dot" | "et"; false when unknown. */
bool dc_graph_format_parse(const char *s, dc_graph_format *out);
/* The top-level op indices of `rank` in order, up to `max` stored in
 * `ops` (may be NULL); returns how many there are. */
int32_t dc_graph_top_level(const dc_graph *g, int32_t rank, int32_t *ops,
                           int32_t max);

#endif /* DC_GRAPHGEN_H */
