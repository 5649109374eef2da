/*
 * export_et.c — one rank of the graph as a PyTorch execution trace (the
 * JSON that torch.profiler.ExecutionTraceObserver writes, schema 1.0.1),
 * so a synthesized iteration reads like a recorded one and loads in the
 * tools that read real traces (Chakra's converter, PARAM's replay).
 *
 * Format, as in a real trace: a top-level object {schema, pid, time,
 * start_ts, nodes, finish_ts}; a process root node (id 1, its own
 * parent), one thread root per host thread (tid 1: main, tid 2: the
 * autograd engine), and one node per op with the fields id, name, parent,
 * rf_id, fw_parent, seq_id, scope, tid, fw_tid, op_schema, inputs,
 * input_shapes, input_types, outputs, output_shapes, output_types. Ids
 * grow in execution order (a parent's id is below its children's), nodes
 * are listed children first as the observer writes them on op exit, and
 * the process node comes last. A tensor argument is
 * [tensor_id, storage_id, offset, numel, element_size, device]. Only
 * tensor arguments are written (a recorded trace also lists the scalars);
 * timestamps are 0 and the time string is fixed so output is byte-stable.
 */
#include "graphgen/internal.h"

#define ET_PROCESS_ID 1
#define ET_THREAD0_ID 2 /* main thread, tid 1 */
#define ET_THREAD1_ID 3 /* autograd engine, tid 2 */
#define ET_FIRST_OP_ID 4

static const char *et_type(dc_dtype t) {
  switch (t) {
  case DC_DTYPE_FP32:
  case DC_DTYPE_TF32: return "Tensor(float)";
  case DC_DTYPE_FP16: return "Tensor(c10::Half)";
  case DC_DTYPE_BF16: return "Tensor(c10::BFloat16)";
  case DC_DTYPE_INT64: return "Tensor(long int)";
  case DC_DTYPE_INT32: return "Tensor(int)";
  case DC_DTYPE_BOOL: return "Tensor(bool)";
  case DC_DTYPE_INT8: return "Tensor(signed char)";
  case DC_DTYPE_FP8: return "Tensor(c10::Float8_e4m3fn)";
  }
  return "Tensor(float)";
}

static void tensor_lists(const dc_graph *g, const int32_t *ts, int32_t n,
                         int32_t rank, const char *what, dc_buf *out) {
  dc_buf_printf(out, ", \"%ss\": [", what);
  for (int32_t k = 0; k < n; k++) {
    const dc_tensor *x = &g->tensors[ts[k]];
    int64_t numel = 1;
    for (int32_t d = 0; d < x->ndim; d++) numel *= x->shape[d];
    dc_buf_printf(out, "%s[%d, %d, 0, %lld, %d, ", k ? ", " : "", x->id + 1,
                  x->id + 1, (long long)numel, dc_dtype_bytes(x->dtype));
    if (x->on_host)
      dc_buf_puts(out, "\"cpu\"]");
    else
      dc_buf_printf(out, "\"cuda:%d\"]", rank);
  }
  dc_buf_printf(out, "], \"%s_shapes\": [", what);
  for (int32_t k = 0; k < n; k++) {
    const dc_tensor *x = &g->tensors[ts[k]];
    dc_buf_puts(out, k ? ", [" : "[");
    for (int32_t d = 0; d < x->ndim; d++)
      dc_buf_printf(out, "%s%lld", d ? ", " : "", (long long)x->shape[d]);
    dc_buf_putc(out, ']');
  }
  dc_buf_printf(out, "], \"%s_types\": [", what);
  for (int32_t k = 0; k < n; k++) {
    if (k) dc_buf_puts(out, ", ");
    dc_buf_put_json_string(out, et_type(g->tensors[ts[k]].dtype));
  }
  dc_buf_putc(out, ']');
}

static void root_node(const char *name, int32_t id, int32_t parent,
                      int32_t tid, dc_buf *out) {
  dc_buf_printf(out,
                "    {\"name\": \"%s\", \"id\": %d, \"rf_id\": 0, "
                "\"parent\": %d, \"fw_parent\": 0, \"seq_id\": -1, "
                "\"scope\": 7, \"tid\": %d, \"fw_tid\": 0, \"op_schema\": "
                "\"\", \"inputs\": [], \"input_shapes\": [], "
                "\"input_types\": [], \"outputs\": [], \"output_shapes\": "
                "[], \"output_types\": []}",
                name, id, parent, tid);
}

typedef struct et_ctx {
  const dc_graph *g;
  int32_t rank, lo;
  dc_buf *out;
} et_ctx;

static void op_node(et_ctx *e, int32_t i) {
  const dc_graph *g = e->g;
  const dc_op *o = &g->ops[i];
  int32_t id = ET_FIRST_OP_ID + (i - e->lo);
  int32_t parent = o->parent >= 0 ? ET_FIRST_OP_ID + (o->parent - e->lo)
                   : o->thread ? ET_THREAD1_ID
                               : ET_THREAD0_ID;
  dc_buf *out = e->out;
  dc_buf_puts(out, ",\n    {\"name\": ");
  dc_buf_put_json_string(out, o->name);
  dc_buf_printf(out,
                ", \"id\": %d, \"rf_id\": %d, \"parent\": %d, "
                "\"fw_parent\": 0, \"seq_id\": -1, \"scope\": 0, "
                "\"tid\": %d, \"fw_tid\": 0, \"op_schema\": \"\"",
                id, id - ET_FIRST_OP_ID + 1, parent, o->thread + 1);
  tensor_lists(g, o->inputs, o->n_inputs, e->rank, "input", out);
  tensor_lists(g, o->outputs, o->n_outputs, e->rank, "output", out);
  dc_buf_putc(out, '}');
}

/* Children first, as the observer records ops when they exit. */
static void subtree(et_ctx *e, int32_t i) {
  for (int32_t c = i + 1; c < e->g->ops[i].end; c = e->g->ops[c].end)
    subtree(e, c);
  op_node(e, i);
}

void gg_write_et(const dc_graph *g, int32_t rank, dc_buf *out) {
  if (rank < 0 || rank >= g->n_ranks) rank = 0;
  et_ctx e = {g, rank, g->rank_first[rank], out};
  dc_buf_printf(out,
                "{\n  \"schema\": \"1.0.1\", \"pid\": %d, \"time\": "
                "\"1970-01-01 00:00:00\", \"start_ts\": 0,\n  \"nodes\": [\n",
                rank + 1);
  root_node("[pytorch|profiler|execution_trace|thread]", ET_THREAD0_ID,
            ET_PROCESS_ID, 1, out);
  dc_buf_puts(out, ",\n");
  root_node("[pytorch|profiler|execution_trace|thread]", ET_THREAD1_ID,
            ET_PROCESS_ID, 2, out);
  for (int32_t i = g->rank_first[rank]; i < g->rank_first[rank + 1];
       i = g->ops[i].end)
    subtree(&e, i);
  dc_buf_puts(out, ",\n");
  root_node("[pytorch|profiler|execution_trace|process]", ET_PROCESS_ID,
            ET_PROCESS_ID, 0, out);
  dc_buf_puts(out, "\n  ],\n  \"finish_ts\": 0\n}\n");
}
