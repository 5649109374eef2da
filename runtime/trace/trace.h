/*
 * trace.h — PyTorch profiler (Kineto) traces, the trace-reading component
 * (runtime/trace/, library dc_trace): the loader (load.c), the event tree
 * and its analysis (tree.c), which GPU activity each op launched
 * (attrib.c), the host-overhead extraction T1–T5 (overheads.c) and the
 * per-step breakdown (stats.c). It sits beside the
 * evaluator, not inside it: it reads measurements, which graph import,
 * overhead profiles and kernel fitting consume; it fills and checks the
 * runtime's profiles (dc_profile), and the evaluator includes nothing of
 * it. The driver's
 * `overheads extract` and `trace stats` commands are thin wrappers over
 * these functions.
 *
 * Memory model. A Kineto trace of 200 MB holds about a million events
 * whose JSON is mostly keys, args and call stacks we never read. The
 * loader streams the JSON through yajl's SAX parser and keeps, per
 * complete ("ph": "X") event, one 40-byte record; names and thread ids
 * are interned once. Memory is therefore proportional to the number of
 * events, never to the size of the JSON text (no DOM is ever built).
 * CPU ops recorded with shapes (record_shapes=True) and annotations
 * (record_function scopes) also keep their args — Input Dims, Input type, Input Strides, External id, Record
 * function id, Sequence number, Fwd thread id — in side tables the
 * record points into (dc_trace_args, dc_trace_input, dc_trace_shape,
 * one pool of int64 dims, interned type names): proportional to the
 * ops and their ranks. Every other arg of every event is skipped.
 *
 * Times are int64 nanoseconds as read (Kineto writes µs with up to three
 * decimals; epoch-scale µs with a fraction do not fit a double exactly),
 * converted to double µs relative to the trace's first event for the
 * arithmetic.
 *
 * Ownership: a dc_trace owns its arrays (dc_trace_free); strings live in
 * the arena passed to dc_trace_load. A dc_trace_model borrows its trace
 * and owns its own arrays (dc_trace_model_free).
 */
#ifndef DC_RUNTIME_TRACE_TRACE_H
#define DC_RUNTIME_TRACE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/support/support.h"
#include "runtime/runtime.h"

/* What an event is, from its "cat" (current and 2021 spellings). */
typedef enum dc_trace_kind {
  DC_TRACE_OP,      /* cpu_op, Operator */
  DC_TRACE_ANNOT,   /* user_annotation (record_function) */
  DC_TRACE_PYTHON,  /* python_function: transparent for the tree */
  DC_TRACE_RUNTIME, /* cuda_runtime, cuda_driver, Runtime */
  DC_TRACE_KERNEL,  /* kernel, Kernel */
  DC_TRACE_MEMCPY,  /* gpu_memcpy, Memcpy */
  DC_TRACE_MEMSET,  /* gpu_memset, Memset */
  DC_TRACE_KIND_COUNT_
} dc_trace_kind;

static inline bool dc_trace_kind_is_gpu(uint8_t k) {
  return k == DC_TRACE_KERNEL || k == DC_TRACE_MEMCPY || k == DC_TRACE_MEMSET;
}

/* The loader's bound on ts and dur (each in [0, 2^62) ns, about 146
 * years): ends and differences of event times never overflow int64. */
#define DC_TRACE_MAX_NS (INT64_C(1) << 62)

/* "No such entry" for the uint32 indices below. */
#define DC_TRACE_NONE UINT32_MAX

typedef struct dc_trace_event {
  int64_t ts_ns;   /* [0, DC_TRACE_MAX_NS) */
  int64_t dur_ns;  /* [0, DC_TRACE_MAX_NS) */
  int64_t corr;    /* args.correlation, -1 when absent */
  uint32_t name;   /* index into dc_trace.names */
  uint32_t thread; /* index into dc_trace.threads: "pid/tid" (GPU: stream) */
  uint8_t kind;    /* dc_trace_kind */
  uint32_t args;   /* CPU ops: index into dc_trace.args, else DC_TRACE_NONE */
} dc_trace_event;

/* One recorded shape or stride vector: dc_trace.dims[first .. +rank). */
typedef struct dc_trace_shape {
  uint32_t first, rank;
} dc_trace_shape;

/* One input of a CPU op as the profiler recorded it (record_shapes). */
typedef struct dc_trace_input {
  /* Input Dims: n_shapes entries of dc_trace.shapes from `shape` — one
   * for a tensor (rank 0 for a scalar, None or an empty list), one per
   * element for a list of tensors (`list`); DC_TRACE_NONE and 0 when the
   * op has no Input Dims or this entry is neither. */
  uint32_t shape, n_shapes;
  /* Input Strides in the same layout (DC_TRACE_NONE: not recorded). */
  uint32_t strides, n_strides;
  /* Input type: index into dc_trace.types ("float", "c10::Half",
   * "Scalar", "" for None), DC_TRACE_NONE when not recorded. */
  uint32_t type;
  bool list;
} dc_trace_input;

/* The args kept for one CPU op; integers are -1 when absent. */
typedef struct dc_trace_args {
  int64_t external_id, record_function_id, sequence, fwd_thread;
  uint32_t first_input, n_inputs; /* dc_trace.inputs[first_input ..) */
} dc_trace_args;

typedef struct dc_trace {
  const char *path;
  const dc_source *src; /* the path only, for diagnostics' spans */
  dc_trace_event *ev;
  size_t n_ev, cap_ev;
  const char **names; /* interned event names */
  size_t n_names, cap_names;
  const char **threads; /* interned "pid/tid" */
  size_t n_threads, cap_threads;
  int64_t t0_ns;         /* earliest kept ts */
  int64_t n_json_events; /* every element of traceEvents */
  /* CPU op args (see dc_trace_args), each array owned */
  dc_trace_args *args;
  size_t n_args, cap_args;
  dc_trace_input *inputs;
  size_t n_inputs, cap_inputs;
  dc_trace_shape *shapes;
  size_t n_shapes, cap_shapes;
  int64_t *dims;
  size_t n_dims, cap_dims;
  const char **types; /* interned Input type names */
  size_t n_types, cap_types;
  int64_t n_args_dropped; /* ops whose args did not fit 32-bit indices */
  /* "distributedInfo": the recording rank and world size, -1: absent */
  int32_t dist_rank, dist_world;
  /* interning tables (open addressing on indices) */
  uint32_t *name_slots, *thread_slots, *type_slots;
  size_t name_cap, thread_cap, type_cap;
} dc_trace;

/* What the loader found when the file is not a Kineto trace. */
typedef enum dc_trace_format {
  DC_TRACE_FMT_KINETO,
  DC_TRACE_FMT_EXECUTION_TRACE, /* PyTorch ET / Chakra JSON (has "nodes") */
  DC_TRACE_FMT_UNKNOWN
} dc_trace_format;

/* Reads a Kineto Chrome-trace JSON file, plain or gzip. Errors (I/O,
 * truncated gzip, invalid JSON with line:col, wrong types, no traceEvents,
 * an execution trace given instead) go to `d` as E0801 and return false;
 * `t` is then freed. Strings are allocated in `a`. */
bool dc_trace_load(const char *path, dc_trace *t, dc_arena *a, dc_diags *d);
void dc_trace_free(dc_trace *t);
/* Which format `path` holds, from its first top-level key that only one
 * format has (the stream stops there). False with E0801 when the file
 * cannot be read or is neither. */
bool dc_trace_classify(const char *path, dc_trace_format *fmt, dc_arena *a,
                       dc_diags *d);

/* The args of event `ev` (NULL: not a CPU op, or none recorded). */
static inline const dc_trace_args *dc_trace_args_of(const dc_trace *t,
                                                    size_t ev) {
  uint32_t i = t->ev[ev].args;
  return i == DC_TRACE_NONE ? NULL : &t->args[i];
}
/* Input `i` of `a` (NULL when the op recorded fewer inputs). */
static inline const dc_trace_input *
dc_trace_input_at(const dc_trace *t, const dc_trace_args *a, uint32_t i) {
  return a && i < a->n_inputs ? &t->inputs[a->first_input + i] : NULL;
}
/* The tensor shape of an input (its first shape; NULL when it has none,
 * or is a list); *rank is set. Strides: the same for Input Strides. */
const int64_t *dc_trace_input_dims(const dc_trace *t, const dc_trace_input *in,
                                   uint32_t *rank);
const int64_t *dc_trace_input_strides(const dc_trace *t,
                                      const dc_trace_input *in,
                                      uint32_t *rank);
/* Its Input type ("" when not recorded). */
const char *dc_trace_input_type(const dc_trace *t, const dc_trace_input *in);

/* Microseconds of ts relative to the trace's start. */
static inline double dc_trace_us(const dc_trace *t, int64_t ts_ns) {
  return (double)(ts_ns - t->t0_ns) / 1000.0;
}

/* ---- the event tree (tree.c) --------------------------------------- */

/* One ProfilerStep#N window. */
typedef struct dc_trace_step {
  int64_t number; /* N */
  int64_t ts_ns, end_ns;
} dc_trace_step;

/* One top-level op: the first non-container CPU op on its tree path. */
typedef struct dc_trace_top {
  uint32_t ev;         /* its event */
  uint32_t first_desc; /* its descendants: cpu[first_desc .. end_desc) */
  uint32_t end_desc;
  int32_t parent;   /* event index of its container, -1 at the root */
  int32_t step;     /* index into steps, -1 when the trace has none */
  double kernel_us; /* GPU time launched from its subtree */
  int32_t n_gpu;    /* GPU activities launched from its subtree */
} dc_trace_top;

typedef struct dc_trace_model {
  const dc_trace *t;
  /* CPU events grouped by thread, each group sorted by (ts, -dur): */
  uint32_t *cpu; /* event indices */
  size_t n_cpu;
  int32_t *parent;      /* per position in cpu[]: parent position, -1 */
  size_t *thread_start; /* [n_threads + 1] ranges into cpu[] per thread */
  size_t n_threads;
  /* per event (indexed by event): */
  int32_t *launcher; /* GPU event -> runtime event, -1 if unlinked */
  int32_t *n_gpu;    /* runtime event -> number of GPU activities */
  double *gpu_us;    /* runtime event -> their total duration */
  int64_t *wait_ns;  /* runtime call or host collective -> its wait */
  /* steps (sorted by ts) and the selection */
  dc_trace_step *steps;
  size_t n_steps;
  bool *step_selected; /* [n_steps] */
  /* top-level ops of the selected steps, in (thread, ts) order */
  dc_trace_top *tops;
  size_t n_tops;
} dc_trace_model;

/* Steps A:B select ProfilerStep numbers A..B inclusive; either side may
 * be open (INT64_MIN / INT64_MAX). */
typedef struct dc_trace_steps_sel {
  bool given;
  int64_t first, last;
} dc_trace_steps_sel;

/* Parses "A:B", "A:", ":B" or "N" (non-negative integers, A <= B). */
bool dc_trace_steps_parse(const char *text, dc_trace_steps_sel *out);

/* True for names that are containers, not ops (ProfilerStep#, "## x ##",
 * module::, DistributedDataParallel, "[param|...]", ...). */
bool dc_trace_is_container(const char *name);
/* True for runtime calls that count as launches although they launch no
 * GPU activity (cudaStreamSynchronize). */
bool dc_trace_is_sync_call(const char *name);
/* True for ops that run a collective on the host thread (`c10d::*`,
 * `record_param_comms`): with no GPU activity beneath them (gloo on CPU
 * tensors) the thread waits in them for the other ranks and the
 * transfer (the blocking-call rule below). */
bool dc_trace_is_host_collective(const char *name);
/* True for the events a collective library's worker thread records
 * while it runs a collective (`gloo:*`): the collective's own execution,
 * as an NCCL kernel is on a GPU, not a host op. */
bool dc_trace_is_comm_worker(const char *name);

/* Blocking-call wait (tree.c, the one place it is decided): the part of
 * a runtime call the host spent waiting for GPU work, not running the
 * call. A call blocked when the trace shows it returned only after GPU
 * work it had to wait for: a synchronisation call (above), or a call
 * whose copies (gpu_memcpy, Memcpy) had all finished before it returned
 * (an asynchronous call returns once its work is queued), or one that
 * returned during its copies having overlapped at least half of them (a
 * copy from pageable memory returns once its last chunk is staged, a few
 * µs before that chunk's transfer ends). Its wait runs from its start to
 * the end of that work — for a copy, its own copy's end or its return
 * (the copy ran after the work queued before it on its stream); for a
 * synchronisation call, the last end inside the call of GPU activity
 * launched before it (on any stream). What follows is the call's own
 * host overhead (T4). A copy from pageable memory to the device is
 * host-synchronous: the driver waits for the stream, then stages the
 * data through a pinned buffer chunk by chunk and returns once the last
 * chunk is staged, a little before the copy ends. So a call whose copies
 * are all pageable host-to-device and started before it returned waited
 * from its start to its return (or the copy's end, if sooner); one whose
 * copy started after it returned was asynchronous (wait 0). A host collective (dc_trace_is_host_collective,
 * the outermost of nested ones) under which nothing launched GPU work
 * ran the collective on the host thread (gloo): the thread waited in it,
 * for the other ranks and for the transfer, from its start to its end —
 * its whole span is wait, none of it host overhead. 0 for every other
 * event. */

/* Builds the tree, links GPU activity to runtime calls by correlation,
 * computes the blocking-call waits, finds steps and top-level ops. Fails
 * (E0801) when --steps selects nothing or the trace has no CPU events at
 * all; `m` is then freed. */
bool dc_trace_model_build(const dc_trace *t, const dc_trace_steps_sel *sel,
                          dc_trace_model *m, dc_diags *d);
void dc_trace_model_free(dc_trace_model *m);
/* The step a timestamp falls in (-1: none or unselected when the trace
 * has steps; 0 when it has none and everything counts). */
int32_t dc_trace_model_step_of(const dc_trace_model *m, int64_t ts_ns);

/* ---- op -> GPU activity attribution (attrib.c) ---------------------
 * What each CPU event launched: GPU activity (kernels, copies, memsets)
 * belongs to the runtime call with its correlation id (the model's
 * `launcher`), and a runtime call to every CPU event that contains it on
 * its host thread (the tree). An op's GPU activity is therefore that of
 * the runtime calls in its subtree — its own and its children's, so a
 * top-level op's is everything it caused, and aten::linear's includes
 * that of the aten::addmm under it. Each subtree is a contiguous range
 * of the model's cpu[] order, so the activity launched from it is one
 * contiguous range of `gpu` below and its time one difference of prefix
 * sums: building is O(n log n), a query O(1). Activity whose launch call
 * is not linked (no correlation) belongs to no op. */
typedef struct dc_trace_attrib {
  const dc_trace_model *m;
  uint32_t *pos;   /* per event: position in m->cpu[] (DC_TRACE_NONE: GPU) */
  uint32_t *end;   /* per position: one past its last descendant */
  uint32_t *first; /* [n_cpu + 1]: gpu[first[p] ..) launched by p's call */
  uint32_t *gpu;   /* GPU events by launching position, then by ts */
  size_t n_gpu;
  int64_t *ns_before;        /* [n_gpu + 1]: durations of gpu[0 .. j) */
  int64_t *kernel_ns_before; /* the same counting kernels only */
  uint32_t *kernels_before;  /* [n_gpu + 1]: kernels among gpu[0 .. j) */
} dc_trace_attrib;

/* The GPU activity launched from one CPU event's subtree. */
typedef struct dc_trace_launched {
  const uint32_t *gpu; /* n event indices (kernels, memcpys, memsets) */
  uint32_t n;
  uint32_t n_kernels;  /* how many of them are kernels */
  double us;           /* their summed duration */
  double kernel_us;    /* the kernels' alone */
} dc_trace_launched;

void dc_trace_attrib_build(const dc_trace_model *m, dc_trace_attrib *a);
void dc_trace_attrib_free(dc_trace_attrib *a);
/* For a CPU event `ev` (an op, annotation or runtime call; any other
 * event launched nothing). */
dc_trace_launched dc_trace_attrib_of(const dc_trace_attrib *a, size_t ev);

/* ---- kernel rows with shapes (krows.c) -----------------------------
 * `dlrmc trace kernels`: one CSV row per GEMM-like op (columns op, batch,
 * m, n, k, transa, transb, dtype, time_us, kernels, layout,
 * kernel_names) or element-wise op (op, elements, flops_per_elem,
 * bytes_per_elem, time_us, kernels, kernel_names) of the selected steps,
 * time_us being the kernels the op launched (attrib.c); the parameter
 * columns are those `dlrmc kernel --csv` and `dlrmc fit` read. Rules in
 * krows.c and spec/trace-kernels.md. */
typedef enum dc_trace_rows_kind {
  DC_TRACE_ROWS_GEMM,
  DC_TRACE_ROWS_ELEMENTWISE
} dc_trace_rows_kind;

typedef enum dc_trace_skip {
  DC_TRACE_SKIP_NO_SHAPES,
  DC_TRACE_SKIP_SHAPES,
  DC_TRACE_SKIP_EMPTY,
  DC_TRACE_SKIP_DTYPE,
  DC_TRACE_SKIP_NO_KERNEL,
  DC_TRACE_SKIP_RANGE, /* sizes the readers of the rows refuse */
  DC_TRACE_SKIP_TIME,  /* a time fit refuses (0.000 or past 10^9 µs) */
  DC_TRACE_SKIP_COUNT_,
  DC_TRACE_SKIP_NONE_ = DC_TRACE_SKIP_COUNT_
} dc_trace_skip;

typedef struct dc_trace_rows_report {
  int64_t rows;
  int64_t skipped[DC_TRACE_SKIP_COUNT_]; /* ops without a row, by reason */
  int64_t nested; /* ops whose GEMM-like (element-wise) child has the row */
  int64_t tf32;   /* float GEMMs whose kernel ran on TF32 tensor cores */
} dc_trace_rows_report;

/* The first GEMM kernel (a name with "gemm") among launched activity,
 * NULL when none. */
const char *dc_trace_gemm_kernel(const dc_trace *t,
                                 const dc_trace_launched *l);
/* A GEMM kernel that ran on TF32 tensor cores ("tf32" or "1688gemm" in
 * its name): a float GEMM is tf32 when its kernel says so, since neither
 * trace records PyTorch's allow_tf32 switch. False for NULL. */
bool dc_trace_kernel_is_tf32(const char *name);

/* Why ops were skipped, in words (for the driver's stderr). */
const char *dc_trace_skip_reason(dc_trace_skip r);
void dc_trace_rows_write(const dc_trace_attrib *at, dc_trace_rows_kind kind,
                         dc_buf *out, dc_trace_rows_report *rep);

/* ---- overheads (overheads.c) ------------------------------------- */

/* The profiler-overhead correction (§III-C): `cpu_us` per profiled CPU
 * event inside an interval, `gpu_us` per launching call for its GPU
 * activity record. The paper's 2021 setup measured 2 and 4 µs; current
 * Kineto costs far less (the A100 trace's launches last 5–6 µs in all),
 * so the default is measured from each trace (dc_ovh_measure_correction).
 * Whatever the correction, it takes at most half of an interval: a
 * corrected sample is never made zero or negative by it. */
typedef struct dc_ovh_correction {
  double cpu_us, gpu_us;
} dc_ovh_correction;
#define DC_TRACE_CPU_EVENT_US 2.0
#define DC_TRACE_GPU_EVENT_US 4.0
/* Measured from the trace: cpu_us is the 5th percentile of the gaps
 * between consecutive sibling CPU events (same thread, same parent) in the
 * selected steps — the time the profiler spends between leaving one event
 * and entering the next is in every such gap; gpu_us is 0 (one trace
 * cannot tell a launch's CUPTI record from the launch itself). */
dc_ovh_correction dc_ovh_measure_correction(const dc_trace_model *m);

/* T1 gaps are kept when 2 < gap < 200 µs (owensgroup/ml_perf_model). */
#define DC_TRACE_T1_MIN_US 2.0
#define DC_TRACE_T1_MAX_US 200.0
/* kernel_gap when no back-to-back kernels were seen (the paper's +1). */
#define DC_TRACE_DEFAULT_GAP_US 1.0

/* Samples of T1–T5 pooled over any number of traces. */
typedef struct dc_ovh_acc dc_ovh_acc;
dc_ovh_acc *dc_ovh_acc_new(void);
void dc_ovh_acc_free(dc_ovh_acc *acc);
/* Adds the samples of one analysed trace, corrected by `c`. */
void dc_ovh_acc_add(dc_ovh_acc *acc, const dc_trace_model *m,
                    dc_ovh_correction c);
/* Number of top-level ops seen so far. */
int64_t dc_ovh_acc_ops(const dc_ovh_acc *acc);

/* Index of the overhead types in sample sets. */
enum { DC_OVH_T1, DC_OVH_T2, DC_OVH_T3, DC_OVH_T5, DC_OVH_NTYPES_ };

/* Clamps negatives to 0 (done by the caller), drops values outside
 * [Q1 − 1.5 IQR, Q3 + 1.5 IQR] (quartiles by linear interpolation,
 * numpy's default), and returns mean, sample std (n − 1; 0 when n == 1)
 * and the kept count. Sorts `v` in place. */
dc_stat dc_trace_iqr_stat(double *v, size_t n);

/* Builds the profile (arrays and strings in `a`). `defaults` are the
 * pooled means over instances: Σ over op names of (mean × kept count) /
 * Σ kept counts, so an op seen 1,000 times weighs 1,000 times one seen
 * once; the per-op values are kept beside them. */
void dc_ovh_acc_profile(const dc_ovh_acc *acc, const char *name,
                        const char *source, dc_profile *out, dc_arena *a);

/* Self-consistency: the host time of the selected steps' top-level ops
 * as measured (each op's duration, plus the gap before it where T1 was
 * sampled) and as the profile `p` charges it for the same op sequence
 * (T1 where the gap was sampled, T2 + T4 of each launch call + T5
 * between launches + T3; an op without launches T5), per op name with
 * the profile's defaults where it has no value. A blocking call (wait_ns)
 * first waits, as the evaluator's host sync does, until the GPU work it
 * waited on ended: the op's clock becomes max(clock, that end measured
 * from the op's start), so the wait is modelled, not charged as T4.
 * The measured side is corrected as the samples were (`c`: the
 * profiler's cost per CPU event inside an op or a gap, at most half of
 * it), so both sides are the host time without the profiler. Both in
 * µs, summed. */
void dc_ovh_host_check(const dc_trace_model *m, const dc_profile *p,
                       dc_ovh_correction c, double *measured_us,
                       double *predicted_us);

/* ---- execution traces (et_read.c, et_graph.c, et_map.c) --------------
 *
 * A PyTorch execution trace (the JSON torch.profiler's
 * ExecutionTraceObserver writes: schema 1.0.1, 1.0.2-chakra.0.0.4 to
 * 1.1.x-chakra.0.0.4; plain or gzip) read into the dc_graph graphgen
 * builds: one rank, the ops in execution order with their child ops,
 * tensors with shapes and dtypes, threads (0: the main thread, 1: any
 * other, the autograd engine's), and a kernel descriptor on each op that
 * launches one (spec/replay.md has the op mapping). Streamed like the
 * Kineto loader; memory is proportional to the number of nodes.
 */
typedef struct dc_et_op {
  int64_t node_id; /* the ET node (an evaluate_function's, when folded) */
  int64_t rf_id;   /* its record-function id, 0 when not recorded */
  bool unpriced;   /* computes on the device but no kernel model fits */
  /* A composite op whose kernel was left to the ops beneath it
   * (aten::_embedding_bag_backward → gather): what it maps to as a whole,
   * for `dlrmc calibrate`, which fits the whole against the GPU time of
   * everything beneath it. */
  bool has_whole;
  dc_kernel whole;
} dc_et_op;

typedef struct dc_et_graph {
  dc_graph *g;
  dc_et_op *ops;      /* [g->n_ops] */
  const char *schema; /* as recorded */
  bool cpu_only;      /* no tensor on a GPU: priced as if it ran on one */
  int32_t n_unpriced;
  int32_t pg_size;    /* the default process group's size, 1 when none */
  int64_t n_nodes;    /* nodes read */
  int64_t n_device;   /* device nodes (a linked trace's), not read */
  int64_t pid;        /* the recording process (top-level "pid"), -1 */
  int32_t rank;       /* the rank its collectives record, -1: none */
} dc_et_graph;

/* Reads the trace at `path` into `out` (everything in `a`). Errors (I/O,
 * JSON with line:col, not an execution trace, an unknown schema, nodes
 * that do not form a tree) go to `d` as E0801 and return false. */
bool dc_et_import(const char *path, dc_et_graph *out, dc_arena *a,
                  dc_diags *d);
/* The ops no kernel model prices, one line each with their count. */
void dc_et_unpriced_write(const dc_et_graph *e, dc_buf *out);

/* ---- replay (replay.c) ---------------------------------------------
 * `dlrmc replay`: the imported graph priced on a GPU of the catalog and,
 * with the Kineto trace of the same run, compared with it (spec/replay.md:
 * matching, the iteration's metrics, per-family errors, the worst
 * kernels). The report is Markdown, or CSV rows (e2e, gpu_active,
 * gpu_idle, cpu, then one per kernel family). */
typedef struct dc_replay_opts {
  /* execution traces and Kineto traces in any order: one ET (with at
   * most one Kineto trace) is the one-rank replay; several, every rank
   * together (paired by process, numbered by rank: spec/replay.md) */
  const char *const *paths;
  int32_t n_paths;
  const char *gpu;         /* catalog name or path */
  const char *overheads;   /* profile, "self", or NULL: self with a Kineto
                              trace, else paper-v100 */
  bool csv;
} dc_replay_opts;

bool dc_replay(const dc_replay_opts *o, dc_buf *out, dc_arena *a,
               dc_diags *d);

/* The measured kernels of a recorded iteration, for `dlrmc calibrate`
 * (spec/calibrate.md): every matched op that launches a kernel, with the
 * GPU time it launched itself, and every composite lookup (has_whole)
 * with the GPU time of its subtree. Appends to *s (grown with realloc,
 * the kernels' arrays in `a`); `dev` is the device looked up by name. */
struct dc_fit_sample;
bool dc_replay_samples(const char *et_path, const char *kineto_path,
                       const dc_device *dev, struct dc_fit_sample **s,
                       int32_t *n, dc_arena *a, dc_diags *d);

/* ---- stats (stats.c) ------------------------------------------------
 */

typedef enum dc_trace_table {
  DC_TRACE_TABLE_ALL,
  DC_TRACE_TABLE_STEPS,
  DC_TRACE_TABLE_OPS,
  DC_TRACE_TABLE_KINDS,
  DC_TRACE_TABLE_KERNELS
} dc_trace_table;

/* The kernel kind of a GPU activity name (the one PCRE2 table in
 * stats.c); `memcpy`/`memset` for those categories. */
const char *dc_trace_kernel_kind(const char *name, uint8_t kind);

/* Writes the breakdown tables (CSV when !md). `top_kernels` limits the
 * kernel table. */
void dc_trace_stats_write(const dc_trace_model *m, bool md,
                          dc_trace_table which, int top_kernels, dc_buf *out);

#endif /* DC_RUNTIME_TRACE_H */
