/*
 * export.c — dc_graph_write and the two human-facing formats:
 *
 * text: one line per op, indented by depth, with phase, host thread,
 *   input and output tensors (dtype[shape], "@cpu" on the host), then one
 *   line per kernel with every parameter the pricing uses. Meant for
 *   reading and for golden tests, so it is fully deterministic.
 * dot: Graphviz. One box per top-level op (its kernels summarised in the
 *   label), a cluster per rank, and an edge from the op that produced a
 *   tensor to each later top-level op that reads it (children's reads
 *   count for their top-level op). Edges are deduplicated.
 *
 * The ET exporter is export_et.c.
 */
#include <stdlib.h>
#include <string.h>

#include "graphgen/graphgen_int.h"

bool dc_graph_format_parse(const char *s, dc_graph_format *out) {
  if (strcmp(s, "text") == 0) *out = DC_GRAPH_TEXT;
  else if (strcmp(s, "dot") == 0) *out = DC_GRAPH_DOT;
  else if (strcmp(s, "et") == 0) *out = DC_GRAPH_ET;
  else return false;
  return true;
}

void dc_graph_write(const dc_graph *g, dc_graph_format f, dc_buf *out) {
  dc_graph_write_rank(g, f, f == DC_GRAPH_ET ? 0 : -1, out);
}

void dc_graph_write_rank(const dc_graph *g, dc_graph_format f, int32_t rank,
                         dc_buf *out) {
  DC_ASSERT(g->detail == DC_GRAPH_FULL); /* a listing shows every op */
  switch (f) {
  case DC_GRAPH_TEXT: gg_write_text(g, rank, out); break;
  case DC_GRAPH_DOT: gg_write_dot(g, rank, out); break;
  case DC_GRAPH_ET: gg_write_et(g, rank < 0 ? 0 : rank, NULL, out); break;
  }
}

void dc_graph_write_et(const dc_graph *g, int32_t rank,
                       const dc_et_schedule *s, dc_buf *out) {
  DC_ASSERT(g->detail == DC_GRAPH_FULL);
  gg_write_et(g, rank < 0 ? 0 : rank, s, out);
}

int32_t dc_graph_top_level(const dc_graph *g, int32_t rank, int32_t *ops,
                           int32_t max) {
  int32_t n = 0;
  for (int32_t i = g->rank_first[rank]; i < g->rank_first[rank + 1];
       i = g->ops[i].end) {
    if (ops && n < max) ops[n] = i;
    n++;
  }
  return n;
}

static void put_tensor(const dc_graph *g, int32_t t, dc_buf *out) {
  const dc_tensor *x = &g->tensors[t];
  dc_buf_printf(out, "%s[", dc_dtype_name(x->dtype));
  for (int32_t i = 0; i < x->ndim; i++)
    dc_buf_printf(out, "%s%lld", i ? "," : "", (long long)x->shape[i]);
  dc_buf_putc(out, ']');
  if (x->on_host) dc_buf_puts(out, "@cpu");
}

void gg_put_kernel(const dc_kernel *k, dc_buf *out) {
  dc_buf_puts(out, dc_kernel_kind_name(k->kind));
  switch (k->kind) {
  case DC_KERNEL_GEMM:
    dc_buf_printf(out, " m=%lld n=%lld k=%lld batch=%lld ta=%d tb=%d %s",
                  (long long)k->u.gemm.m, (long long)k->u.gemm.n,
                  (long long)k->u.gemm.k, (long long)k->u.gemm.batch,
                  k->u.gemm.transa, k->u.gemm.transb,
                  dc_dtype_name(k->u.gemm.dtype));
    break;
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD:
    dc_buf_printf(out, " batch=%lld %s opt=%s fused=%d groups=",
                  (long long)k->u.emb.batch, dc_dtype_name(k->u.emb.dtype),
                  dc_optimizer_name(k->u.emb.optimizer),
                  k->u.emb.fused_optimizer);
    for (int32_t i = 0; i < k->u.emb.n_groups; i++) {
      const dc_emb_group *gr = &k->u.emb.groups[i];
      dc_buf_printf(out, "%s%dx(E=%lld,D=%d,L=", i ? "," : "", gr->tables,
                    (long long)gr->rows, gr->dim);
      dc_buf_put_double(out, gr->pooling, 2);
      dc_buf_putc(out, ')');
    }
    break;
  case DC_KERNEL_ELEMENTWISE:
  case DC_KERNEL_REDUCE:
    dc_buf_printf(out, " elems=%lld flops=", (long long)k->u.ew.elements);
    dc_buf_put_double(out, k->u.ew.flops_per_elem, 1);
    dc_buf_puts(out, " bytes=");
    dc_buf_put_double(out, k->u.ew.bytes_per_elem, 1);
    break;
  case DC_KERNEL_CONCAT:
  case DC_KERNEL_MEMCPY_H2D:
  case DC_KERNEL_MEMCPY_D2H:
  case DC_KERNEL_MEMCPY_D2D:
    dc_buf_printf(out, " bytes=%lld", (long long)k->u.copy.bytes);
    if (k->kind != DC_KERNEL_CONCAT && k->kind != DC_KERNEL_MEMCPY_D2D)
      dc_buf_puts(out, k->u.copy.pinned ? " pinned" : " pageable");
    break;
  case DC_KERNEL_TRANSPOSE:
  case DC_KERNEL_TRIL_FWD:
  case DC_KERNEL_TRIL_BWD:
  case DC_KERNEL_INTERACTION_FWD:
  case DC_KERNEL_INTERACTION_BWD:
    dc_buf_printf(out, " batch=%lld m=%lld n=%lld", (long long)k->u.mat.batch,
                  (long long)k->u.mat.m, (long long)k->u.mat.n);
    if (k->kind != DC_KERNEL_TRANSPOSE)
      dc_buf_printf(out, " diag=%d", k->u.mat.diag);
    dc_buf_printf(out, " %s", dc_dtype_name(k->u.mat.dtype));
    break;
  default:
    dc_buf_printf(out, " bytes=%lld ranks=%d hosts=%d id=%d",
                  (long long)k->u.coll.bytes, k->u.coll.ranks,
                  k->u.coll.hosts, k->u.coll.coll_id);
    break;
  }
  if (k->scale != 1.0) {
    dc_buf_puts(out, " scale=");
    dc_buf_put_double(out, k->scale, 3);
  }
}

static int32_t depth_of(const dc_graph *g, int32_t i) {
  int32_t d = 0;
  for (int32_t q = g->ops[i].parent; q >= 0; q = g->ops[q].parent) d++;
  return d;
}

void gg_write_text(const dc_graph *g, int32_t rank, dc_buf *out) {
  const dc_point *p = g->point;
  int32_t n_top = 0, n_k = 0;
  for (int32_t i = 0; i < g->n_ops; i++) {
    if (g->ops[i].parent < 0) n_top++;
    n_k += g->ops[i].n_launches;
  }
  dc_buf_printf(out, "# dlrmc graph: study %s, point %lld, model %s\n",
                p && p->study ? p->study : "-",
                p ? (long long)p->index : 0LL,
                p && p->model_name ? p->model_name : "-");
  if (p)
    dc_buf_printf(out,
                  "# batch %lld, %s, %s, %s, %s, %s, embedding %s, "
                  "zero_grad %s\n",
                  (long long)p->batch_size, dc_precision_name(p->precision),
                  dc_optimizer_name(p->optimizer),
                  dc_interaction_name(p->interaction),
                  dc_loss_name(p->loss),
                  p->gpus > 1 ? "hybrid parallel" : "1 GPU",
                  dc_embedding_kernel_name(p->embedding_kernel),
                  p->zero_grad_legacy ? "1.13" : "set_to_none");
  if (p && p->framework != DC_FRAMEWORK_PYTORCH)
    dc_buf_printf(out, "# framework %s%s\n", dc_framework_name(p->framework),
                  p->pipeline ? ", pipelined input distribution" : "");
  char lay[64] = "";
  if (p && g->n_ranks > 1) {
    lay[0] = ' ';
    lay[1] = '(';
    dc_point_layout(p, lay + 2, sizeof lay - 3);
    strcat(lay, ")");
  }
  dc_buf_printf(out,
                "# ranks %d%s, streams %d, ops %d (top-level %d), tensors "
                "%d, kernels %d\n",
                g->n_ranks, lay, g->n_streams, g->n_ops, n_top, g->n_tensors,
                n_k);
  for (int32_t r = 0; r < g->n_ranks; r++) {
    if (rank >= 0 && r != rank) continue;
    dc_buf_printf(out, "rank %d\n", r);
    for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1]; i++) {
      const dc_op *o = &g->ops[i];
      int32_t d = depth_of(g, i);
      for (int32_t s = 0; s < d + 1; s++) dc_buf_puts(out, "  ");
      dc_buf_printf(out, "%d %s", i, o->name);
      if (o->annotation)
        dc_buf_puts(out, " [annotation]");
      else if (dc_op_is_unit(g, i))
        dc_buf_printf(out, " [%s, thread %d%s%s]", dc_phase_name(o->phase),
                      o->thread, o->host_sync ? ", sync" : "",
                      o->captured ? ", cuda graph" : "");
      if (o->n_inputs) {
        dc_buf_puts(out, " (");
        for (int32_t k = 0; k < o->n_inputs; k++) {
          if (k) dc_buf_puts(out, ", ");
          put_tensor(g, o->inputs[k], out);
        }
        dc_buf_putc(out, ')');
      }
      if (o->n_outputs) {
        dc_buf_puts(out, " -> ");
        for (int32_t k = 0; k < o->n_outputs; k++) {
          if (k) dc_buf_puts(out, ", ");
          put_tensor(g, o->outputs[k], out);
        }
      }
      dc_buf_putc(out, '\n');
      for (int32_t l = 0; l < o->n_launches; l++) {
        for (int32_t s = 0; s < d + 2; s++) dc_buf_puts(out, "  ");
        dc_buf_puts(out, "> ");
        gg_put_kernel(&o->launches[l].k, out);
        dc_buf_printf(out, " stream=%d\n", o->launches[l].stream);
      }
    }
  }
}

static void dot_escape(const char *s, dc_buf *out) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') dc_buf_putc(out, '\\');
    dc_buf_putc(out, *s);
  }
}

/* Graphviz refuses a label past 16,384 bytes (its lexer's buffer): an op
 * name is cut at DOT_MAX_NAME bytes and a label's kernel lines stop at
 * DOT_MAX_LABEL bytes, each cut saying so, so that any graph renders. */
enum { DOT_MAX_NAME = 1024, DOT_MAX_LABEL = 8192 };

static void dot_name(const char *s, dc_buf *out) {
  size_t n = strlen(s);
  if (n <= DOT_MAX_NAME) {
    dot_escape(s, out);
    return;
  }
  char *cut = dc_xmalloc(DOT_MAX_NAME + 1);
  size_t k = dc_utf8_floor(s, DOT_MAX_NAME);
  memcpy(cut, s, k);
  cut[k] = '\0';
  dot_escape(cut, out);
  free(cut);
  dc_buf_printf(out, "... (%zu bytes)", n);
}

static const char *phase_color(dc_phase p) {
  switch (p) {
  case DC_PHASE_INPUT: return "lightyellow";
  case DC_PHASE_FORWARD: return "lightblue";
  case DC_PHASE_LOSS: return "pink";
  case DC_PHASE_BACKWARD: return "lightgreen";
  case DC_PHASE_OPTIMIZER: return "lightgrey";
  }
  return "white";
}

void gg_write_dot(const dc_graph *g, int32_t rank, dc_buf *out) {
  dc_buf_puts(out, "digraph dlrm {\n  rankdir=TB;\n"
                   "  node [shape=box, style=filled, fontname=\"Helvetica\", "
                   "fontsize=10];\n");
  /* top[i]: the top-level ancestor of op i; seen[]: dedup of edges */
  int32_t *top = dc_xcalloc((size_t)g->n_ops + 1, sizeof(int32_t));
  int32_t *seen = dc_xcalloc((size_t)g->n_ops + 1, sizeof(int32_t));
  for (int32_t i = 0; i < g->n_ops; i++) {
    top[i] = g->ops[i].parent < 0 ? i : top[g->ops[i].parent];
    seen[i] = -1;
  }
  for (int32_t r = 0; r < g->n_ranks; r++) {
    if (rank >= 0 && r != rank) continue;
    dc_buf_printf(out, "  subgraph cluster_rank%d {\n    label=\"rank %d\";\n",
                  r, r);
    for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1];
         i = g->ops[i].end) {
      const dc_op *o = &g->ops[i];
      dc_buf_printf(out, "    op%d [label=\"%d ", i, i);
      size_t label0 = out->len;
      dot_name(o->name, out);
      int64_t more = 0;
      for (int32_t j = i; j < o->end; j++)
        for (int32_t l = 0; l < g->ops[j].n_launches; l++) {
          if (out->len - label0 > DOT_MAX_LABEL) {
            more++;
            continue;
          }
          dc_buf_puts(out, "\\n");
          dc_buf tmp = {0};
          gg_put_kernel(&g->ops[j].launches[l].k, &tmp);
          dot_escape(tmp.data ? tmp.data : "", out);
          dc_buf_free(&tmp);
        }
      if (more) dc_buf_printf(out, "\\n... %lld more kernels", (long long)more);
      dc_buf_printf(out, "\", fillcolor=%s%s];\n", phase_color(o->phase),
                    o->host_sync ? ", peripheries=2" : "");
    }
    for (int32_t i = g->rank_first[r]; i < g->rank_first[r + 1];
         i = g->ops[i].end) {
      for (int32_t j = i; j < g->ops[i].end; j++)
        for (int32_t k = 0; k < g->ops[j].n_inputs; k++) {
          int32_t pr = g->tensors[g->ops[j].inputs[k]].producer;
          if (pr < 0 || top[pr] == i || seen[top[pr]] == i) continue;
          seen[top[pr]] = i;
          dc_buf_printf(out, "    op%d -> op%d;\n", top[pr], i);
        }
    }
    dc_buf_puts(out, "  }\n");
  }
  dc_buf_puts(out, "}\n");
  free(top);
  free(seen);
}
