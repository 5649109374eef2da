/*
 * et_int.h — what the two halves of the execution-trace import share
 * (internal to runtime/trace/): et_read.c streams the ET JSON into flat
 * node records, et_graph.c turns the records into a dc_graph and maps its
 * ops to kernel descriptors.
 *
 * et_map.c maps an op to its kernel.
 *
 * A node record keeps only what the graph and the kernel mapping read:
 * the node's ids, name, schema and thread, and its arguments flattened,
 * one et_val per argument or per element of a list argument (`arg` names
 * the argument it belongs to, `in_list` marks list elements), each a
 * tensor (ids, device, dtype, shape, strides when the schema records
 * them), a scalar (Int, Double, Bool, String) or something the mapping
 * never reads (None, Device, lists of ints, objects). Both ET layouts
 * reduce to it: 1.0.1 ("parent", flat "inputs"/"input_shapes"/
 * "input_types" and the attributes as keys of the node) and 1.0.2 and
 * later, Chakra's ("ctrl_deps", "inputs": {values, shapes, types,
 * strides}, "attrs": [{name, type, value}]).
 */
#ifndef DC_RUNTIME_TRACE_ET_INT_H
#define DC_RUNTIME_TRACE_ET_INT_H

#include <string.h>

#include "runtime/trace/trace.h"

#define ET_MAX_DIMS  8       /* recorded ranks above this are refused */
#define ET_MAX_RANKS 1000000 /* a process group's size (pg_size) */
/* An op's tensors (inputs and outputs, and a collective's message) hold
 * at most this many bytes, and a tensor's shape this many elements: the
 * mapping adds and doubles byte counts, and this bound keeps every one
 * inside 64 bits. Past it the op is E0703 (et_graph.c). */
#define ET_MAX_OP_BYTES ((int64_t)1 << 62)

typedef enum et_kind {
  ET_TENSOR,
  ET_INT,
  ET_DOUBLE,
  ET_BOOL,
  ET_STRING,
  ET_NONE, /* None, an undefined tensor, an object, a list of scalars */
} et_kind;

typedef struct et_val {
  uint8_t kind; /* et_kind */
  bool in_list; /* an element of a GenericList argument */
  bool cuda;    /* tensor on a GPU */
  bool strided; /* strides were recorded */
  bool tposed;  /* no strides: a transposed view (et_graph.c) */
  int16_t arg;  /* which argument of the node */
  int8_t ndim;
  uint8_t esize; /* bytes per element as recorded */
  dc_dtype dtype;
  int64_t tid, sid, offset, numel; /* tensor id, storage id, ... */
  int64_t shape[ET_MAX_DIMS], stride[ET_MAX_DIMS];
  int64_t i;     /* Int, Bool */
  double f;      /* Double */
  const char *s; /* String */
} et_val;

typedef struct et_node {
  int64_t id, parent, rf_id, tid, seq_id;
  int32_t scope;
  const char *name;
  const char *schema; /* op_schema, "" when none */
  et_val *in, *out;
  int32_t n_in, n_out;
  int32_t n_in_args; /* arguments (a list counts once) */
  /* record_param_comms attributes (0 / NULL when absent) */
  const char *coll_name;
  int64_t in_msg_nelems, pg_size;
  int32_t split_n; /* elements of in_split_size / out_split_size */
  int32_t line; /* where the node starts in the file, for diagnostics */
} et_node;

typedef struct et_file {
  const char *path;
  const char *schema;
  et_node *nodes; /* in file order */
  int64_t n_nodes;
  int64_t n_device; /* device nodes of a linked trace, skipped */
  bool any_cuda; /* some tensor is on a GPU */
  int64_t pid;   /* the recording process ("pid" at the top), -1: none */
} et_file;

static inline bool et_starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* et_map.c: what an op launches. */
typedef struct et_map_ctx {
  dc_arena *a;   /* embedding groups */
  bool cpu_only; /* every tensor counts as on the device */
  int32_t pg_size;
} et_map_ctx;

typedef struct et_mapped {
  int n;        /* kernels: 0, 1 */
  bool unknown; /* computes on the device; no model */
  bool sync;    /* blocks the host (a D2H copy, .item()) */
  dc_kernel k;  /* collectives: coll_id 0, numbered by the caller */
} et_mapped;

et_mapped et_map_op(const et_map_ctx *c, const char *name, bool annotation,
                    const et_node *n, const et_node *comm);
/* Views, metadata, allocation: nothing to launch. */
bool et_no_kernel(const char *name);
/* Ops that launch only when nothing beneath them does. */
bool et_is_composite(const char *name, dc_kernel_kind k);
/* FBGEMM's composite lookups (the autograd function, the *_wrapper ops):
 * only an embedding kernel beneath them stands for theirs. */
static inline bool et_is_tbe_composite(const char *n) {
  return et_starts(n, "fbgemm::split_embedding_codegen_lookup_") ||
         (et_starts(n, "fbgemm::split_embedding") && strstr(n, "_wrapper"));
}
/* The optimizer a TBE name says is fused (rowwise_adagrad, ...; SGD). */
dc_optimizer et_tbe_optimizer(const char *name);
/* Tensor k (0-based, tensors only) of the inputs / outputs; NULL. */
const et_val *et_tensor_in(const et_node *n, int32_t k);
const et_val *et_tensor_out(const et_node *n, int32_t k);
/* Product of dims [from, to) of a tensor's shape. */
int64_t et_rows_of(const et_val *v, int32_t from, int32_t to);

/* et_read.c: reads the file into `f` (records and strings in `a`). */
bool et_read_file(const char *path, et_file *f, dc_arena *a, dc_diags *d);
/* et_graph.c: the graph of the records. */
bool et_build_graph(et_file *f, dc_et_graph *out, dc_arena *a, dc_diags *d);

#endif /* DC_RUNTIME_TRACE_ET_INT_H */
