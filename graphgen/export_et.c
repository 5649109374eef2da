/*
 * export_et.c — one rank of the graph as a PyTorch execution trace (the
 * JSON that torch.profiler.ExecutionTraceObserver writes), so that a
 * synthesized iteration reads like a recorded one and loads in the tools
 * that read real traces: PARAM's et_replay (execution_trace.py) and
 * Chakra's PyTorch converter (pytorch_node.py).
 *
 * Schema "1.1.1-chakra.0.0.4", the layout torch 2.x writes (and the one
 * of our recorded fixtures): both consumers accept it (PARAM: 1.0.1 to
 * 1.1.1; Chakra: 1.0.2 to 1.1.1, not 1.0.1), and unlike 1.0.2 it carries
 * each tensor's strides, which is what tells a transposed view from a
 * contiguous tensor. A node is
 *
 *   {"id", "name", "ctrl_deps": parent id,
 *    "inputs":  {"values", "shapes", "types", "strides"},
 *    "outputs": {"values", "shapes", "types", "strides"},
 *    "attrs": [{"name", "type", "value"}: rf_id, fw_parent, seq_id, scope,
 *              tid, fw_tid, op_schema, kernel_backend, kernel_file,
 *              tensor_range (+ the comm attributes of record_param_comms)]}
 *
 * A tensor value is [tensor_id, storage_id, offset, numel, element_size,
 * device]; a view (aten::t, transpose, view, narrow, ..., and the
 * transposed operands graphgen makes with gg_t_view) has its own tensor id
 * and its base's storage id, offset and strides. Leaf ops list their
 * arguments as the op's schema does (et_schema.c: scalars with their
 * types, a TensorList as one GenericList); ops without a known schema
 * list their tensors with an empty op_schema.
 *
 * Structure added around the graph's ops, as PyTorch records it:
 *  - each "autograd::engine::evaluate_function: X" holds an X node
 *    (scope 1, fw_tid 1, fw_parent the evaluate_function node, seq_id the
 *    forward op that made it: the last not yet matched forward op of the
 *    same name, PyTorch running the backward in reverse); the graph op's
 *    tensors and children move to X;
 *  - each c10d:: collective holds a record_param_comms node (the buffers,
 *    the collective's name and sizes, with the comm attributes PARAM
 *    reads) which holds the nccl:<collective> node; the c10d op keeps its
 *    tensors (inputs: what it sends, outputs: what it receives) and, its
 *    argument list not being modelled, an empty op_schema;
 *  - with more than one rank, a "## process_group:init ##" node first
 *    describes the default process group. A graph imported from one
 *    rank's trace keeps that rank's number and the group's size
 *    (dc_graph.rank_base, world_ranks), so its export is the original's.
 *
 * Ids grow in execution order (a parent's id is below its children's);
 * nodes are listed children first as the observer writes them on op exit,
 * the thread roots first and the process node last. Timestamps are 0 and
 * the time string is fixed so output is byte-stable.
 *
 * With a schedule (dc_graph_write_et, `graph --with-device`), the trace
 * is the one chakra_trace_link makes of a recorded trace and its Kineto
 * twin (spec/astra-sim.md): the timed host ops carry ts, inclusive_dur
 * and exclusive_dur, an op whose kernels wait for another stream's kernel
 * that kernel's id as inter_thread_dep, and each scheduled kernel is a
 * device node (a copy
 * of its op's tensors and attributes with the kernel's name, cat, ph,
 * ts, durations, stream and, for a collective, pg_name) under the node of
 * the op that launched it (an evaluate_function's X, a collective's
 * record_param_comms), ids after every host node's, listed before the
 * process node. The host nodes are otherwise the host-only trace's.
 *
 * One file: one writer, one pass over the graph, whose parts (tensor
 * layouts and views, arguments by schema, collective and autograd nodes,
 * the ids that tie them) all read and write one et_ctx; split, they would
 * share it through a header for no reader's gain.
 */
#include <stdlib.h>
#include <string.h>

#include "graphgen/graphgen_int.h"

#define ET_PROCESS_ID 1
#define ET_THREAD0_ID 2 /* main thread, tid 1 */
#define ET_THREAD1_ID 3 /* autograd engine, tid 2 */
#define ET_FIRST_OP_ID 4
#define ET_EVAL "autograd::engine::evaluate_function: "
#define ET_KEY 48

/* Where a tensor's elements are: its storage (the tensor id of the
 * storage's owner), offset and strides, in elements. */
typedef struct et_layout {
  int32_t storage;
  bool done;
  int64_t offset;
  int64_t stride[DC_TENSOR_MAX_DIMS];
} et_layout;

typedef struct et_ctx {
  const dc_graph *g;
  int32_t rank, lo, hi; /* rank: in the job (an imported rank's own) */
  int32_t world;        /* ranks in the job's default process group */
  et_layout *lay;  /* [n_tensors] */
  int32_t *id;     /* [hi - lo]: node id of each op */
  int32_t *seq;    /* [hi - lo]: autograd sequence number, -1 */
  int32_t next_tensor; /* ids of the views the exporter makes */
  int32_t tbase;       /* the rank's lowest tensor index: ids count from it */
  int32_t n_coll;
  bool first;      /* no node written yet */
  const dc_et_schedule *sched; /* NULL: host ops only */
  int32_t first_device;        /* the first device node's id */
  dc_buf *out;
} et_ctx;

/* One side (inputs or outputs) of a node, its four parallel lists. */
typedef struct et_io {
  dc_buf v, s, t, st;
  int32_t n;
} et_io;

static void io_free(et_io *io) {
  dc_buf_free(&io->v);
  dc_buf_free(&io->s);
  dc_buf_free(&io->t);
  dc_buf_free(&io->st);
}

static void io_next(et_io *io) {
  if (io->n++ == 0) return;
  dc_buf_puts(&io->v, ", ");
  dc_buf_puts(&io->s, ", ");
  dc_buf_puts(&io->t, ", ");
  dc_buf_puts(&io->st, ", ");
}

static const char *et_dtype_name(dc_dtype t) {
  switch (t) {
  case DC_DTYPE_FP32:
  case DC_DTYPE_TF32: return "float";
  case DC_DTYPE_FP16: return "c10::Half";
  case DC_DTYPE_BF16: return "c10::BFloat16";
  case DC_DTYPE_INT64: return "long int";
  case DC_DTYPE_INT32: return "int";
  case DC_DTYPE_BOOL: return "bool";
  case DC_DTYPE_INT8: return "signed char";
  case DC_DTYPE_FP8: return "c10::Float8_e4m3fn";
  }
  return "float";
}

/* c10::ScalarType, as aten::to's `dtype` argument records it. */
static int et_scalar_type(dc_dtype t) {
  switch (t) {
  case DC_DTYPE_FP32:
  case DC_DTYPE_TF32: return 6;
  case DC_DTYPE_FP16: return 5;
  case DC_DTYPE_BF16: return 15;
  case DC_DTYPE_INT64: return 4;
  case DC_DTYPE_INT32: return 3;
  case DC_DTYPE_BOOL: return 11;
  case DC_DTYPE_INT8: return 1;
  case DC_DTYPE_FP8: return 24;
  }
  return 6;
}

/* The collective's name in record_param_comms (as ProcessGroupNCCL
 * records it) and in the NCCL kernel's record function. */
static const char *const et_colls[][3] = {
    {"c10d::alltoall_base_", "all_to_all", "nccl:all_to_all"},
    {"c10d::allreduce_", "allreduce", "nccl:all_reduce"},
    {"c10d::_reduce_scatter_base_", "_reduce_scatter_base",
     "nccl:_reduce_scatter_base"},
    {"c10d::_allgather_base_", "_allgather_base", "nccl:_all_gather_base"},
};

static const char *const *et_coll(const char *name) {
  for (size_t i = 0; i < sizeof et_colls / sizeof et_colls[0]; i++)
    if (strcmp(name, et_colls[i][0]) == 0) return et_colls[i];
  return NULL;
}

/* The process group a collective op runs in, as PyTorch names groups:
 * "0" the default group of every rank; a group of fewer ranks (TorchRec's
 * intra-host groups: `ranks` consecutive ranks) is numbered from 1 in
 * rank order, as every rank creates them all. `rank`: in the job. */
typedef struct et_pg {
  char name[16];
  int32_t size, first; /* ranks, the lowest */
} et_pg;

static et_pg pg_of(const dc_op *o, int32_t rank, int32_t world) {
  et_pg pg = {"0", world, 0};
  int32_t ranks = 0;
  for (int32_t k = 0; k < o->n_launches && !ranks; k++)
    if (dc_kernel_is_collective(o->launches[k].k.kind))
      ranks = o->launches[k].k.u.coll.ranks;
  if (ranks > 0 && ranks < world && world % ranks == 0) {
    pg.size = ranks;
    pg.first = rank / ranks * ranks;
    snprintf(pg.name, sizeof pg.name, "%d", (int)(1 + rank / ranks));
  }
  return pg;
}

static bool is_eval(const dc_op *o) {
  return strncmp(o->name, ET_EVAL, strlen(ET_EVAL)) == 0;
}

/* ---- layouts ---------------------------------------------------------- */

static void contiguous(const dc_tensor *x, int64_t *stride) {
  int64_t s = 1;
  for (int32_t d = x->ndim - 1; d >= 0; d--) {
    stride[d] = s;
    s *= x->shape[d] > 0 ? x->shape[d] : 1;
  }
}

static void swap_last2(const dc_tensor *x, int64_t *stride) {
  if (x->ndim < 2) return;
  int64_t s = stride[x->ndim - 1];
  stride[x->ndim - 1] = stride[x->ndim - 2];
  stride[x->ndim - 2] = s;
}

static et_layout *layout(et_ctx *e, int32_t t) {
  et_layout *L = &e->lay[t];
  if (L->done) return L;
  const dc_tensor *x = &e->g->tensors[t];
  if (x->view_of > 0) { /* gg_t_view: transposed, the base's storage */
    *L = *layout(e, x->view_of - 1);
    swap_last2(x, L->stride);
  } else {
    L->storage = t + 1 - e->tbase;
    L->offset = 0;
    contiguous(x, L->stride);
  }
  L->done = true;
  return L;
}

/* The dim where a narrow's output differs from its input. */
static int32_t narrow_dim(const dc_tensor *in, const dc_tensor *out) {
  for (int32_t d = 0; d < in->ndim && d < out->ndim; d++)
    if (in->shape[d] != out->shape[d]) return d;
  return 0;
}

/* A cat's backward narrows the gradient once per input, in order: the
 * start is what the earlier narrows of the same tensor took. */
static int64_t narrow_start(const et_ctx *e, int32_t i, int32_t dim) {
  const dc_graph *g = e->g;
  const dc_op *o = &g->ops[i];
  int64_t start = 0;
  int32_t first = o->parent >= 0 ? o->parent + 1 : e->lo;
  for (int32_t j = first; j < i; j++) {
    const dc_op *p = &g->ops[j];
    if (p->parent == o->parent && strcmp(p->name, "aten::narrow") == 0 &&
        p->n_inputs > 0 && p->n_outputs > 0 &&
        p->inputs[0] == o->inputs[0])
      start += g->tensors[p->outputs[0]].shape[dim];
  }
  return start;
}

/* Ops whose output 0 is a view of input 0 (no copy: PyTorch returns a
 * tensor on the same storage). */
static void view_op(et_ctx *e, int32_t i) {
  const dc_graph *g = e->g;
  const dc_op *o = &g->ops[i];
  if (o->n_inputs < 1 || o->n_outputs < 1) return;
  static const char *const same[] = {
      "aten::view",   "aten::reshape",    "aten::detach", "aten::detach_",
      "aten::lift_fresh", "aten::slice",  "aten::t",      "aten::transpose",
      "aten::narrow"};
  bool hit = false;
  for (size_t k = 0; k < sizeof same / sizeof same[0]; k++)
    hit = hit || strcmp(o->name, same[k]) == 0;
  const dc_tensor *in = &g->tensors[o->inputs[0]];
  const dc_tensor *out = &g->tensors[o->outputs[0]];
  /* aten::to to the same device and dtype returns its input */
  if (!hit && strcmp(o->name, "aten::to") == 0)
    hit = in->dtype == out->dtype && in->on_host == out->on_host;
  if (!hit) return;
  et_layout base = *layout(e, o->inputs[0]);
  et_layout *L = &e->lay[o->outputs[0]];
  L->storage = base.storage;
  L->offset = base.offset;
  L->done = true;
  bool same_shape = in->ndim == out->ndim;
  for (int32_t d = 0; same_shape && d < in->ndim; d++)
    same_shape = in->shape[d] == out->shape[d];
  if (strcmp(o->name, "aten::t") == 0 ||
      strcmp(o->name, "aten::transpose") == 0) {
    memcpy(L->stride, base.stride, sizeof L->stride);
    swap_last2(out, L->stride);
  } else if (strcmp(o->name, "aten::narrow") == 0 &&
             in->ndim == out->ndim) {
    int32_t dim = narrow_dim(in, out);
    memcpy(L->stride, base.stride, sizeof L->stride);
    L->offset += narrow_start(e, i, dim) * base.stride[dim];
  } else if (same_shape) {
    memcpy(L->stride, base.stride, sizeof L->stride);
  } else {
    contiguous(out, L->stride);
  }
}

/* ---- values ----------------------------------------------------------- */

static int64_t numel(const dc_tensor *x) {
  int64_t n = 1;
  for (int32_t d = 0; d < x->ndim; d++) n *= x->shape[d];
  return n;
}

static void put_dims(dc_buf *b, const int64_t *v, int32_t n) {
  dc_buf_putc(b, '[');
  for (int32_t d = 0; d < n; d++)
    dc_buf_printf(b, "%s%lld", d ? ", " : "", (long long)v[d]);
  dc_buf_putc(b, ']');
}

/* One tensor into the four lists (no separator); `transposed`: as its
 * `.t()` view, with a tensor id of its own. Its type goes to `ty`
 * unquoted. */
static void put_tensor(et_ctx *e, int32_t t, bool transposed, et_io *io) {
  const dc_tensor *x = &e->g->tensors[t];
  et_layout L = *layout(e, t);
  dc_tensor shown = *x;
  int32_t tid = t + 1 - e->tbase;
  if (transposed && x->ndim >= 2) {
    shown.shape[x->ndim - 2] = x->shape[x->ndim - 1];
    shown.shape[x->ndim - 1] = x->shape[x->ndim - 2];
    swap_last2(x, L.stride);
    tid = e->next_tensor++;
  }
  dc_buf_printf(&io->v, "[%d, %d, %lld, %lld, %d, ", tid, L.storage,
                (long long)L.offset, (long long)numel(x),
                dc_dtype_bytes(x->dtype));
  if (x->on_host)
    dc_buf_puts(&io->v, "\"cpu\"]");
  else
    dc_buf_printf(&io->v, "\"cuda:%d\"]", e->rank);
  put_dims(&io->s, shown.shape, shown.ndim);
  put_dims(&io->st, L.stride, x->ndim);
  dc_buf_printf(&io->t, "Tensor(%s)", et_dtype_name(x->dtype));
}

static void put_scalar(et_io *io, const char *type, const char *value) {
  io_next(io);
  dc_buf_puts(&io->v, value);
  dc_buf_puts(&io->s, "[]");
  dc_buf_printf(&io->t, "\"%s\"", type);
  dc_buf_puts(&io->st, "[]");
}

static void put_int(et_io *io, long long v) {
  char s[32];
  snprintf(s, sizeof s, "%lld", v);
  put_scalar(io, "Int", s);
}

static void put_ints(et_io *io, const int64_t *v, int32_t n) {
  io_next(io);
  put_dims(&io->v, v, n);
  dc_buf_puts(&io->t, "\"GenericList[");
  dc_buf_putc(&io->s, '[');
  dc_buf_putc(&io->st, '[');
  for (int32_t d = 0; d < n; d++) {
    dc_buf_puts(&io->t, d ? ",Int" : "Int");
    dc_buf_puts(&io->s, d ? ", []" : "[]");
    dc_buf_puts(&io->st, d ? ", []" : "[]");
  }
  dc_buf_puts(&io->t, "]\"");
  dc_buf_putc(&io->s, ']');
  dc_buf_putc(&io->st, ']');
}

/* A GenericList of tensors: ts[0], ts[step], ... below n, led by an
 * undefined tensor (lead 'u') or a None (lead 'n'). */
static void put_list(et_ctx *e, const int32_t *ts, int32_t n, int32_t step,
                     char lead, et_io *io) {
  io_next(io);
  et_io in = {0};
  dc_buf_puts(&io->t, "\"GenericList[");
  if (lead == 'u') {
    io_next(&in);
    dc_buf_printf(&in.v, "[%d, 0, 0, 0, 0, \"\"]", e->next_tensor++);
    dc_buf_puts(&in.s, "[]");
    dc_buf_puts(&in.st, "[]");
    dc_buf_puts(&in.t, "Tensor(nullptr (uninitialized))");
  } else if (lead == 'n') {
    io_next(&in);
    dc_buf_puts(&in.v, "\"<None>\"");
    dc_buf_puts(&in.s, "[]");
    dc_buf_puts(&in.st, "[]");
    dc_buf_puts(&in.t, "None");
  }
  for (int32_t k = 0; k < n; k += step) {
    if (in.n++) {
      dc_buf_puts(&in.v, ", ");
      dc_buf_puts(&in.s, ", ");
      dc_buf_puts(&in.st, ", ");
      dc_buf_putc(&in.t, ',');
    }
    put_tensor(e, ts[k], false, &in);
  }
  dc_buf_printf(&io->v, "[%s]", in.v.data ? in.v.data : "");
  dc_buf_printf(&io->s, "[%s]", in.s.data ? in.s.data : "");
  dc_buf_printf(&io->st, "[%s]", in.st.data ? in.st.data : "");
  dc_buf_printf(&io->t, "%s]\"", in.t.data ? in.t.data : "");
  io_free(&in);
}

static void put_one(et_ctx *e, int32_t t, bool transposed, et_io *io) {
  io_next(io);
  dc_buf_putc(&io->t, '"');
  put_tensor(e, t, transposed, io);
  dc_buf_putc(&io->t, '"');
}

static void put_device(et_ctx *e, const dc_tensor *x, et_io *io) {
  char s[32];
  if (x->on_host)
    snprintf(s, sizeof s, "\"cpu\"");
  else
    snprintf(s, sizeof s, "\"cuda:%d\"", e->rank);
  put_scalar(io, "Device", s);
}

/* The op's inputs by its schema's argument list (et_schema.c); false when
 * its tensors do not fit the list. */
static bool put_args(et_ctx *e, int32_t i, const char *spec, et_io *io) {
  const dc_graph *g = e->g;
  const dc_op *o = &g->ops[i];
  const dc_tensor *out0 =
      o->n_outputs > 0 ? &g->tensors[o->outputs[0]] : NULL;
  const dc_tensor *in0 = o->n_inputs > 0 ? &g->tensors[o->inputs[0]] : NULL;
  int32_t k = 0, n = o->n_inputs;
  for (const char *p = spec; *p;) {
    size_t len = strcspn(p, " ");
    char tok[40];
    if (len >= sizeof tok) return false;
    memcpy(tok, p, len);
    tok[len] = '\0';
    p += len + (p[len] == ' ');
    if (strcmp(tok, "t") == 0 || strcmp(tok, "T") == 0) {
      if (k >= n) return false;
      put_one(e, o->inputs[k++], tok[0] == 'T', io);
    } else if (strcmp(tok, "t?") == 0) {
      if (k < n)
        put_one(e, o->inputs[k++], false, io);
      else
        put_scalar(io, "None", "\"<None>\"");
    } else if (strcmp(tok, "L") == 0 || strcmp(tok, "uL") == 0) {
      if (k >= n) return false;
      put_list(e, o->inputs + k, n - k, 1, tok[0], io);
      k = n;
    } else if (strcmp(tok, "nL2") == 0) {
      if (k + 2 > n) return false;
      put_list(e, o->inputs + k, 2, 1, 'n', io);
      k += 2;
    } else if (strcmp(tok, "E") == 0 || strcmp(tok, "O") == 0) {
      int32_t off = tok[0] == 'O';
      if ((n - k) % 2 != 0 || n - k < 2) return false;
      put_list(e, o->inputs + k + off, n - k - off, 2, 0, io);
      if (off) k = n;
    } else if (strncmp(tok, "i=", 2) == 0) {
      put_scalar(io, "Int", tok + 2);
    } else if (strncmp(tok, "d=", 2) == 0) {
      put_scalar(io, "Double", tok + 2);
    } else if (strncmp(tok, "b=", 2) == 0) {
      put_scalar(io, "Bool", tok[2] == '1' ? "true" : "false");
    } else if (strcmp(tok, "none") == 0) {
      put_scalar(io, "None", "\"<None>\"");
    } else if (strcmp(tok, "dev") == 0) {
      if (!out0) return false;
      put_device(e, out0, io);
    } else if (strcmp(tok, "dtype") == 0) {
      if (!out0) return false;
      put_int(io, et_scalar_type(out0->dtype));
    } else if (strcmp(tok, "size") == 0) {
      if (!out0) return false;
      put_ints(io, out0->shape, out0->ndim);
    } else if (strncmp(tok, "ints=", 5) == 0) {
      int64_t v[DC_TENSOR_MAX_DIMS];
      int32_t m = 0;
      for (char *q = tok + 5; *q && m < DC_TENSOR_MAX_DIMS;) {
        v[m++] = strtoll(q, &q, 10);
        if (*q == ';') q++;
      }
      put_ints(io, v, m);
    } else if (strcmp(tok, "catdim") == 0) {
      if (!out0 || !in0) return false;
      put_int(io, narrow_dim(in0, out0));
    } else if (strcmp(tok, "trdims") == 0) {
      if (!in0 || in0->ndim < 2) return false;
      put_int(io, in0->ndim - 2);
      put_int(io, in0->ndim - 1);
    } else if (strcmp(tok, "narrow") == 0) {
      if (!out0 || !in0 || in0->ndim != out0->ndim) return false;
      int32_t dim = narrow_dim(in0, out0);
      put_int(io, dim);
      put_int(io, narrow_start(e, i, dim));
      put_int(io, out0->shape[dim]);
    } else {
      DC_ASSERT(!"unknown et_schema.c token");
    }
  }
  return k == n;
}

/* ---- nodes ------------------------------------------------------------ */

static void put_side(dc_buf *out, const char *key, const et_io *io) {
  dc_buf_printf(out,
                ", \"%s\": {\"values\": [%s], \"shapes\": [%s], \"types\": "
                "[%s], \"strides\": [%s]}",
                key, io->v.data ? io->v.data : "",
                io->s.data ? io->s.data : "", io->t.data ? io->t.data : "",
                io->st.data ? io->st.data : "");
}

typedef struct et_attrs {
  int32_t rf_id, fw_parent, seq_id, scope, tid, fw_tid;
  const char *schema;
} et_attrs;

static void node_begin(et_ctx *e, int32_t id, const char *name,
                       int32_t parent) {
  dc_buf *out = e->out;
  dc_buf_puts(out, e->first ? "    {\"id\": " : ",\n    {\"id\": ");
  e->first = false;
  dc_buf_printf(out, "%d, \"name\": ", id);
  dc_buf_put_json_string(out, name);
  dc_buf_printf(out, ", \"ctrl_deps\": %d", parent);
}

/* A host op's start and duration, as a linked trace carries them (with a
 * schedule, for the ops the evaluator times: the top-level ones and those
 * under an annotation scope; nested ops' time is their parent's). */
static void put_times(dc_buf *out, double ts, double dur) {
  dc_buf_puts(out, ", \"ts\": ");
  dc_buf_put_double(out, ts, 3);
  dc_buf_puts(out, ", \"inclusive_dur\": ");
  dc_buf_put_double(out, dur, 3);
  dc_buf_puts(out, ", \"exclusive_dur\": ");
  dc_buf_put_double(out, dur, 3);
}

static void host_time(et_ctx *e, int32_t i) {
  if (!e->sched) return;
  if (e->sched->op_dur_us[i] >= 0)
    put_times(e->out, e->sched->op_ts_us[i], e->sched->op_dur_us[i]);
  if (e->sched->op_dep && e->sched->op_dep[i] >= 0)
    dc_buf_printf(e->out, ", \"inter_thread_dep\": %d",
                  (int)(e->first_device + e->sched->op_dep[i]));
}

/* Ends a node: its attributes, then `extra` (more attributes, each
 * starting with ", "), and the closing brackets. */
static void node_end(et_ctx *e, const et_attrs *a, const char *extra) {
  dc_buf *out = e->out;
  dc_buf_printf(out,
                ", \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", "
                "\"value\": %d}, {\"name\": \"fw_parent\", \"type\": "
                "\"uint64\", \"value\": %d}, {\"name\": \"seq_id\", "
                "\"type\": \"int64\", \"value\": %d}, {\"name\": \"scope\", "
                "\"type\": \"uint64\", \"value\": %d}, {\"name\": \"tid\", "
                "\"type\": \"uint64\", \"value\": %d}, {\"name\": "
                "\"fw_tid\", \"type\": \"uint64\", \"value\": %d}, "
                "{\"name\": \"op_schema\", \"type\": \"string\", \"value\": ",
                a->rf_id, a->fw_parent, a->seq_id, a->scope, a->tid,
                a->fw_tid);
  dc_buf_put_json_string(out, a->schema ? a->schema : "");
  dc_buf_puts(out, "}, {\"name\": \"kernel_backend\", \"type\": \"string\", "
                   "\"value\": \"\"}, {\"name\": \"kernel_file\", \"type\": "
                   "\"string\", \"value\": \"\"}, {\"name\": "
                   "\"tensor_range\", \"type\": \"string\", \"value\": "
                   "\"\"}");
  if (extra) dc_buf_puts(out, extra);
  dc_buf_puts(out, "]}");
}

static void empty_node(et_ctx *e, int32_t id, const char *name,
                       int32_t parent, const et_attrs *a) {
  et_io none = {0};
  node_begin(e, id, name, parent);
  put_side(e->out, "inputs", &none);
  put_side(e->out, "outputs", &none);
  node_end(e, a, NULL);
}

static void outputs_of(et_ctx *e, const dc_op *o, et_io *io) {
  for (int32_t k = 0; k < o->n_outputs; k++)
    put_one(e, o->outputs[k], false, io);
}

static void inputs_plain(et_ctx *e, const dc_op *o, et_io *io) {
  for (int32_t k = 0; k < o->n_inputs; k++)
    put_one(e, o->inputs[k], false, io);
}

static int32_t op_scope(const dc_op *o) {
  if (o->annotation || strncmp(o->name, "## ", 3) == 0 ||
      strncmp(o->name, "Optimizer.", 10) == 0)
    return 7; /* a record_function user scope */
  return 0;
}

static int32_t node_id(const et_ctx *e, int32_t i) {
  return e->id[i - e->lo];
}

/* The node the op's children hang from: the X node of an evaluate_function
 * (its id follows the evaluate_function's). */
static int32_t parent_id(const et_ctx *e, const dc_op *o) {
  if (o->parent < 0) return o->thread ? ET_THREAD1_ID : ET_THREAD0_ID;
  return node_id(e, o->parent) + (is_eval(&e->g->ops[o->parent]) ? 1 : 0);
}

/* record_param_comms and its nccl: kernel node under collective i. */
static void comm_nodes(et_ctx *e, int32_t i, const char *const *coll) {
  const dc_graph *g = e->g;
  const dc_op *o = &g->ops[i];
  int32_t id = node_id(e, i);
  int64_t in_elems = 0, out_elems = 0;
  for (int32_t k = 0; k < o->n_inputs; k++)
    in_elems += numel(&g->tensors[o->inputs[k]]);
  for (int32_t k = 0; k < o->n_outputs; k++)
    out_elems += numel(&g->tensors[o->outputs[k]]);
  dc_dtype dt = o->n_inputs > 0    ? g->tensors[o->inputs[0]].dtype
                : o->n_outputs > 0 ? g->tensors[o->outputs[0]].dtype
                                   : DC_DTYPE_FP32;
  const char *dname = dt == DC_DTYPE_FP16   ? "Half"
                      : dt == DC_DTYPE_BF16 ? "BFloat16"
                      : dt == DC_DTYPE_INT64 ? "Long"
                                             : "Float";
  int32_t seq = e->n_coll++;
  et_pg pg = pg_of(o, e->rank, e->world);

  /* the NCCL kernel's record function: its send buffer */
  et_io in = {0}, out = {0};
  if (o->n_inputs > 0) put_one(e, o->inputs[0], false, &in);
  node_begin(e, id + 2, coll[2], id + 1);
  put_side(e->out, "inputs", &in);
  put_side(e->out, "outputs", &out);
  node_end(e, &(et_attrs){id + 2 - ET_FIRST_OP_ID + 1, 0, -1, 7,
                          o->thread + 1, 0, ""},
           NULL);
  io_free(&in);

  /* record_param_comms(inputs, seq, pg id, rank, name, in splits, out
   * splits, group size) -> outputs */
  in = (et_io){0};
  if (o->n_inputs > 0)
    put_list(e, o->inputs, o->n_inputs, 1, 0, &in);
  put_int(&in, seq);
  put_int(&in, 0);
  put_int(&in, e->rank);
  char name[48];
  snprintf(name, sizeof name, "\"%s\"", coll[1]);
  put_scalar(&in, "String", name);
  put_ints(&in, NULL, 0);
  put_ints(&in, NULL, 0);
  put_int(&in, pg.size);
  if (o->n_outputs > 0)
    put_list(e, o->outputs, o->n_outputs, 1, 0, &out);
  node_begin(e, id + 1, "record_param_comms", id);
  put_side(e->out, "inputs", &in);
  put_side(e->out, "outputs", &out);
  dc_buf extra = {0};
  dc_buf_printf(&extra,
                ", {\"name\": \"collective_name\", \"type\": \"string\", "
                "\"value\": \"%s\"}, {\"name\": \"dtype\", \"type\": "
                "\"string\", \"value\": \"%s\"}, {\"name\": "
                "\"in_msg_nelems\", \"type\": \"uint64\", \"value\": %lld}, "
                "{\"name\": \"out_msg_nelems\", \"type\": \"uint64\", "
                "\"value\": %lld}, {\"name\": \"in_split_size\", \"type\": "
                "\"string\", \"value\": \"[]\"}, {\"name\": "
                "\"out_split_size\", \"type\": \"string\", \"value\": "
                "\"[]\"}, {\"name\": \"global_rank_start\", \"type\": "
                "\"uint64\", \"value\": %d}, {\"name\": "
                "\"global_rank_stride\", \"type\": \"uint64\", \"value\": "
                "1}, {\"name\": \"pg_name\", \"type\": \"string\", "
                "\"value\": \"%s\"}, {\"name\": \"pg_desc\", \"type\": "
                "\"string\", \"value\": \"%s\"}, {\"name\": "
                "\"pg_size\", \"type\": \"uint64\", \"value\": %d}",
                coll[1], dname, (long long)in_elems, (long long)out_elems,
                (int)pg.first, pg.name, pg.size == e->world ? "default_pg" : "host_pg",
                pg.size);
  node_end(e, &(et_attrs){id + 1 - ET_FIRST_OP_ID + 1, 0, -1, 0,
                          o->thread + 1, 0, ""},
           extra.data);
  dc_buf_free(&extra);
  io_free(&in);
  io_free(&out);
}

static void op_node(et_ctx *e, int32_t i, int32_t fw_seq) {
  const dc_graph *g = e->g;
  const dc_op *o = &g->ops[i];
  int32_t id = node_id(e, i);
  int32_t rf = id - ET_FIRST_OP_ID + 1;
  int32_t tid = o->thread + 1;
  if (is_eval(o)) {
    /* X (the autograd node) with the op's tensors, then the
     * evaluate_function scope around it */
    et_io in = {0}, out = {0};
    inputs_plain(e, o, &in);
    outputs_of(e, o, &out);
    node_begin(e, id + 1, o->name + strlen(ET_EVAL), id);
    put_side(e->out, "inputs", &in);
    put_side(e->out, "outputs", &out);
    node_end(e, &(et_attrs){rf + 1, id, fw_seq, 1, tid, 1, ""}, NULL);
    io_free(&in);
    io_free(&out);
    et_io none = {0};
    node_begin(e, id, o->name, parent_id(e, o));
    host_time(e, i);
    put_side(e->out, "inputs", &none);
    put_side(e->out, "outputs", &none);
    node_end(e, &(et_attrs){rf, 0, -1, 0, tid, 0, ""}, NULL);
    return;
  }
  const char *const *coll = et_coll(o->name);
  if (coll) comm_nodes(e, i, coll);
  const gg_et_sig *sig = coll ? NULL : gg_et_sig_find(o->name);
  et_io in = {0}, out = {0};
  int32_t views = e->next_tensor;
  if (!sig || !put_args(e, i, sig->args, &in)) {
    io_free(&in);
    in = (et_io){0};
    e->next_tensor = views;
    sig = NULL;
    inputs_plain(e, o, &in);
  }
  outputs_of(e, o, &out);
  node_begin(e, id, o->name, parent_id(e, o));
  host_time(e, i);
  put_side(e->out, "inputs", &in);
  put_side(e->out, "outputs", &out);
  node_end(e,
           &(et_attrs){rf, 0, e->seq[i - e->lo], op_scope(o), tid, 0,
                       sig ? sig->schema : ""},
           NULL);
  io_free(&in);
  io_free(&out);
}

/* ---- autograd links --------------------------------------------------- */

/* A name reduced for matching an autograd node with its forward op:
 * "aten::mse_loss" and "MseLossBackward0" both give "mseloss". */
static void match_key(const char *name, bool backward, char *key) {
  const char *p = strrchr(name, ':');
  p = p ? p + 1 : name;
  size_t n = 0;
  for (; *p && n + 1 < ET_KEY; p++)
    if (*p != '_') key[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
  key[n] = '\0';
  if (!backward) return;
  while (n > 0 && key[n - 1] >= '0' && key[n - 1] <= '9') key[--n] = '\0';
  if (n > 8 && strcmp(key + n - 8, "backward") == 0) key[n - 8] = '\0';
}

/* Forward and loss ops of the main thread get sequence numbers in order;
 * each autograd node takes the last unmatched forward op of its name (a
 * TBackward0 with no aten::t: the aten::linear whose weight it turned). */
static void link_autograd(et_ctx *e, int32_t *fw_seq) {
  const dc_graph *g = e->g;
  int32_t n = e->hi - e->lo, next = 0;
  char(*keys)[ET_KEY] = dc_xcalloc((size_t)n + 1, sizeof *keys);
  bool *used = dc_xcalloc((size_t)n + 1, sizeof *used);
  for (int32_t i = e->lo; i < e->hi; i++) {
    const dc_op *o = &g->ops[i];
    e->seq[i - e->lo] = -1;
    fw_seq[i - e->lo] = -1;
    if (o->thread == 0 && !o->annotation &&
        (o->phase == DC_PHASE_FORWARD || o->phase == DC_PHASE_LOSS)) {
      e->seq[i - e->lo] = next++;
      match_key(o->name, false, keys[i - e->lo]);
    }
  }
  for (int32_t i = e->lo; i < e->hi; i++) {
    if (!is_eval(&g->ops[i])) continue;
    char key[ET_KEY];
    match_key(g->ops[i].name + strlen(ET_EVAL), true, key);
    for (int32_t pass = 0; pass < 2 && fw_seq[i - e->lo] < 0; pass++) {
      if (pass == 1) {
        if (strcmp(key, "t") != 0) break;
        strcpy(key, "linear");
      }
      for (int32_t j = i - 1; j >= e->lo; j--)
        if (!used[j - e->lo] && e->seq[j - e->lo] >= 0 &&
            strcmp(keys[j - e->lo], key) == 0) {
          used[j - e->lo] = true;
          fw_seq[i - e->lo] = e->seq[j - e->lo];
          break;
        }
    }
  }
  free(keys);
  free(used);
}

/* ---- device nodes ----------------------------------------------------- */

/* Each scheduled kernel as chakra_trace_link writes it: a copy of the
 * node that launched it (its tensors and attributes) with the Kineto
 * kernel's name, category, stream, start and duration, and for a
 * collective the process group's name; ids after every host node's. */
static void device_nodes(et_ctx *e, int32_t next_id) {
  const dc_graph *g = e->g;
  for (size_t k = 0; k < e->sched->n_kernels; k++) {
    const dc_et_kernel *x = &e->sched->kernels[k];
    DC_ASSERT(x->op >= e->lo && x->op < e->hi);
    const dc_op *o = &g->ops[x->op];
    DC_ASSERT(x->launch >= 0 && x->launch < o->n_launches);
    int32_t parent = node_id(e, x->op);
    if (is_eval(o) || et_coll(o->name)) parent += 1; /* X, record_param_comms */
    node_begin(e, next_id++, x->name, parent);
    dc_buf *out = e->out;
    dc_buf_puts(out, ", \"cat\": ");
    dc_buf_put_json_string(out, x->cat);
    dc_buf_puts(out, ", \"ph\": \"X\"");
    put_times(out, x->ts_us, x->dur_us);
    dc_buf_printf(out, ", \"stream\": %d", (int)x->stream);
    if (dc_kernel_is_collective(o->launches[x->launch].k.kind)) {
      dc_buf_puts(out, ", \"pg_name\": ");
      dc_buf_put_json_string(out, pg_of(o, e->rank, e->world).name);
    }
    et_io in = {0}, outs = {0};
    inputs_plain(e, o, &in);
    outputs_of(e, o, &outs);
    put_side(out, "inputs", &in);
    put_side(out, "outputs", &outs);
    node_end(e, &(et_attrs){parent - ET_FIRST_OP_ID + 1, 0, -1, 0,
                            o->thread + 1, 0, ""},
             NULL);
    io_free(&in);
    io_free(&outs);
  }
}

/* ---- the trace -------------------------------------------------------- */

/* Children first, as the observer records ops when they exit. */
static void subtree(et_ctx *e, int32_t i, const int32_t *fw_seq) {
  for (int32_t c = i + 1; c < e->g->ops[i].end; c = e->g->ops[c].end)
    subtree(e, c, fw_seq);
  op_node(e, i, fw_seq[i - e->lo]);
}

static void process_group_init(et_ctx *e, int32_t id) {
  char desc[200];
  snprintf(desc, sizeof desc,
           "[{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
           "\"backend_config\": \"cuda:nccl\", \"ranks\": [], "
           "\"group_size\": %d, \"group_count\": 1}]",
           e->world);
  dc_buf v = {0};
  dc_buf_put_json_string(&v, desc);
  et_io in = {0}, none = {0};
  put_scalar(&in, "String", v.data);
  dc_buf_free(&v);
  node_begin(e, id, "## process_group:init ##", ET_THREAD0_ID);
  put_side(e->out, "inputs", &in);
  put_side(e->out, "outputs", &none);
  node_end(e, &(et_attrs){id - ET_FIRST_OP_ID + 1, 0, -1, 7, 1, 0, ""},
           NULL);
  io_free(&in);
}

void gg_write_et(const dc_graph *g, int32_t rank, const dc_et_schedule *s,
                 dc_buf *out) {
  if (rank < 0 || rank >= g->n_ranks) rank = 0;
  int32_t lo = g->rank_first[rank], hi = g->rank_first[rank + 1];
  size_t n = (size_t)(hi - lo) + 1;
  et_ctx e = {.g = g, .rank = g->rank_base + rank, .lo = lo, .hi = hi,
              .world = g->world_ranks > g->n_ranks ? g->world_ranks
                                                   : g->n_ranks,
              .first = true, .sched = s, .out = out};
  e.lay = dc_xcalloc((size_t)g->n_tensors + 1, sizeof *e.lay);
  e.id = dc_xcalloc(n, sizeof *e.id);
  e.seq = dc_xcalloc(n, sizeof *e.seq);
  int32_t *fw_seq = dc_xcalloc(n, sizeof *fw_seq);
  /* Tensor ids count from this rank's lowest tensor (and its views' bases)
   * and the views' ids follow its highest, so one rank's trace does not
   * depend on the others' and exporting an imported rank gives the same
   * ids back (rank 63 of 64 would otherwise start near the graph's
   * 85,000th tensor, too sparse for the importer to keep the ids). */
  int32_t top = 0, bottom = g->n_tensors;
  for (int32_t i = lo; i < hi; i++) {
    const dc_op *o = &g->ops[i];
    for (int32_t side = 0; side < 2; side++) {
      const int32_t *ts = side ? o->outputs : o->inputs;
      int32_t nt = side ? o->n_outputs : o->n_inputs;
      for (int32_t k = 0; k < nt; k++) {
        if (ts[k] + 1 > top) top = ts[k] + 1;
        for (int32_t t = ts[k]; t >= 0; t = g->tensors[t].view_of - 1)
          if (t < bottom) bottom = t;
      }
    }
  }
  e.tbase = bottom < top ? bottom : 0;
  e.next_tensor = top + 1 - e.tbase;

  /* ids in execution order, the added nodes after the op they belong to */
  int32_t next = ET_FIRST_OP_ID, pg_init = 0;
  if (e.world > 1) pg_init = next++;
  for (int32_t i = lo; i < hi; i++) {
    e.id[i - lo] = next++;
    if (is_eval(&g->ops[i]))
      next += 1;
    else if (et_coll(g->ops[i].name))
      next += 2;
    view_op(&e, i);
  }
  link_autograd(&e, fw_seq);
  e.first_device = next;

  dc_buf_printf(out,
                "{\n  \"schema\": \"1.1.1-chakra.0.0.4\", \"pid\": %d, "
                "\"time\": \"1970-01-01 00:00:00\", \"start_ts\": 0,\n"
                "  \"nodes\": [\n",
                e.rank + 1);
  et_attrs root = {0, 0, -1, 7, 1, 0, ""};
  empty_node(&e, ET_THREAD0_ID, "[pytorch|profiler|execution_trace|thread]",
             ET_PROCESS_ID, &root);
  root.tid = 2;
  empty_node(&e, ET_THREAD1_ID, "[pytorch|profiler|execution_trace|thread]",
             ET_PROCESS_ID, &root);
  if (pg_init) process_group_init(&e, pg_init);
  for (int32_t i = lo; i < hi; i = g->ops[i].end) subtree(&e, i, fw_seq);
  if (s) device_nodes(&e, next);
  root.tid = 0;
  empty_node(&e, ET_PROCESS_ID, "[pytorch|profiler|execution_trace|process]",
             ET_PROCESS_ID, &root);
  double finish = 0;
  for (size_t k = 0; s && k < s->n_kernels; k++)
    if (s->kernels[k].ts_us + s->kernels[k].dur_us > finish)
      finish = s->kernels[k].ts_us + s->kernels[k].dur_us;
  dc_buf_printf(out, "\n  ],\n  \"finish_ts\": %lld\n}\n",
                (long long)(finish + 0.999));
  free(fw_seq);
  free(e.seq);
  free(e.id);
  free(e.lay);
}

void dc_graph_write_comm_groups(const dc_graph *g, dc_buf *out) {
  int32_t world = g->world_ranks > g->n_ranks ? g->world_ranks : g->n_ranks;
  /* the group sizes below the world's that some collective uses */
  bool *used = dc_xcalloc((size_t)world + 1, sizeof *used);
  for (int32_t i = 0; i < g->n_ops; i++) {
    et_pg pg = pg_of(&g->ops[i], g->rank_base + g->ops[i].rank, world);
    if (pg.size < world) used[pg.size] = true;
  }
  dc_buf_printf(out, "{\n  \"0\": [");
  for (int32_t r = 0; r < world; r++)
    dc_buf_printf(out, "%s%d", r ? ", " : "", (int)r);
  dc_buf_putc(out, ']');
  for (int32_t s = 1; s < world; s++) {
    if (!used[s]) continue;
    for (int32_t first = 0; first < world; first += s) {
      et_pg pg = {"", s, first};
      snprintf(pg.name, sizeof pg.name, "%d", (int)(1 + first / s));
      dc_buf_printf(out, ",\n  \"%s\": [", pg.name);
      for (int32_t r = first; r < first + s; r++)
        dc_buf_printf(out, "%s%d", r > first ? ", " : "", (int)r);
      dc_buf_putc(out, ']');
    }
  }
  dc_buf_puts(out, "\n}\n");
  free(used);
}
