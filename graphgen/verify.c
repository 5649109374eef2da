/*
 * verify.c — dc_graph_verify: every structural invariant a later stage
 * relies on, checked without trusting the builder. Reports each violation
 * (up to a limit, so a badly broken graph does not flood the output).
 *
 * Invariants:
 *  - ranks: rank_first is non-decreasing from 0 to n_ops, and every op in
 *    [rank_first[r], rank_first[r+1]) has rank r;
 *  - tree: an op's parent comes before it, in the same rank and thread
 *    group, and contains it (i < end ≤ parent's end); top-level ops of a
 *    rank tile its range;
 *  - tensors: ids in range; shapes have 0..4 positive dimensions; an
 *    op's output is produced by the op or one of its descendants; an
 *    op's input was produced (if by anyone) by an op of the same rank
 *    that finished before it began (producer.end ≤ consumer);
 *  - shapes: aten::mm/addmm/bmm, aten::linear, aten::cat and the
 *    element-wise activations agree on their operands' sizes;
 *  - kernels: sizes positive, scale positive and finite, stream within
 *    n_streams, collectives with at least two ranks, embedding groups
 *    non-empty;
 *  - collectives across ranks: the launches of one coll_id have the same
 *    kind and group size, come from distinct ranks, and there are exactly
 *    group-size of them (else the run would hang).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graphgen/graphgen_int.h"

#define VERIFY_MAX_REPORTS 20

typedef struct vctx {
  const dc_graph *g;
  dc_diags *d;
  int32_t reports;
  bool ok;
} vctx;

static void bad(vctx *v, int32_t op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void bad(vctx *v, int32_t op, const char *fmt, ...) {
  v->ok = false;
  if (v->reports++ >= VERIFY_MAX_REPORTS) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dc_span none = {0};
  if (op >= 0 && op < v->g->n_ops)
    dc_diag_error(v->d, DC_DIAG_GRAPH, none, "invalid graph: op %d (%s): %s",
                  op, v->g->ops[op].name ? v->g->ops[op].name : "?", msg);
  else
    dc_diag_error(v->d, DC_DIAG_GRAPH, none, "invalid graph: %s", msg);
}

static const dc_tensor *tin(const dc_graph *g, const dc_op *o, int32_t k) {
  return k < o->n_inputs ? &g->tensors[o->inputs[k]] : NULL;
}

static const dc_tensor *tout(const dc_graph *g, const dc_op *o, int32_t k) {
  return k < o->n_outputs ? &g->tensors[o->outputs[k]] : NULL;
}

static bool same_shape(const dc_tensor *a, const dc_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int32_t i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

static void check_shapes(vctx *v, int32_t i) {
  const dc_graph *g = v->g;
  const dc_op *o = &g->ops[i];
  const char *n = o->name;
  const dc_tensor *a = tin(g, o, 0), *b = tin(g, o, 1), *c = tin(g, o, 2);
  const dc_tensor *y = tout(g, o, 0);
  if (strcmp(n, "aten::linear") == 0 && a && b && y) {
    /* [M, K] · [N, K]^T (+ [N]) → [M, N] */
    if (a->ndim != 2 || b->ndim != 2 || y->ndim != 2 ||
        a->shape[1] != b->shape[1] || y->shape[0] != a->shape[0] ||
        y->shape[1] != b->shape[0] ||
        (c && (c->ndim != 1 || c->shape[0] != b->shape[0])))
      bad(v, i, "linear operand shapes disagree");
  } else if (strcmp(n, "aten::addmm") == 0 && a && b && c && y) {
    if (b->ndim != 2 || c->ndim != 2 || y->ndim != 2 ||
        b->shape[1] != c->shape[1] || y->shape[0] != b->shape[0] ||
        y->shape[1] != c->shape[0])
      bad(v, i, "addmm operand shapes disagree");
  } else if (strcmp(n, "aten::mm") == 0 && a && b && y) {
    /* the weight-gradient mm takes g^T: accept [M, K]·[K, N] or
     * [K, M]^T·[K, N] */
    bool plain = a->ndim == 2 && b->ndim == 2 && y->ndim == 2 &&
                 a->shape[1] == b->shape[0] && y->shape[0] == a->shape[0] &&
                 y->shape[1] == b->shape[1];
    bool ta = a->ndim == 2 && b->ndim == 2 && y->ndim == 2 &&
              a->shape[0] == b->shape[0] && y->shape[0] == a->shape[1] &&
              y->shape[1] == b->shape[1];
    if (!plain && !ta) bad(v, i, "mm operand shapes disagree");
  } else if (strcmp(n, "aten::bmm") == 0 && a && b && y) {
    bool plain = a->ndim == 3 && b->ndim == 3 && y->ndim == 3 &&
                 a->shape[0] == b->shape[0] && y->shape[0] == a->shape[0] &&
                 a->shape[2] == b->shape[1] && y->shape[1] == a->shape[1] &&
                 y->shape[2] == b->shape[2];
    bool ta = a->ndim == 3 && b->ndim == 3 && y->ndim == 3 &&
              a->shape[0] == b->shape[0] && y->shape[0] == a->shape[0] &&
              a->shape[1] == b->shape[1] && y->shape[1] == a->shape[2] &&
              y->shape[2] == b->shape[2];
    if (!plain && !ta) bad(v, i, "bmm operand shapes disagree");
  } else if (strcmp(n, "aten::cat") == 0 && y && o->n_inputs > 0 &&
             y->ndim == 1) {
    /* 1-D (FBGEMM's cache prefetch appends its linear indices) */
    int64_t w = 0;
    bool ok = true;
    for (int32_t k = 0; k < o->n_inputs; k++) {
      const dc_tensor *x = tin(g, o, k);
      if (x->ndim != 1) ok = false;
      else w += x->shape[0];
    }
    if (!ok || w != y->shape[0])
      bad(v, i, "cat inputs do not add up to its output");
  } else if (strcmp(n, "aten::cat") == 0 && y && o->n_inputs > 0) {
    int64_t w = 0;
    bool rows_ok = y->ndim == 2;
    for (int32_t k = 0; k < o->n_inputs; k++) {
      const dc_tensor *x = tin(g, o, k);
      if (x->ndim != 2 || (y->ndim == 2 && x->shape[0] != y->shape[0]))
        rows_ok = false;
      else
        w += x->shape[1];
    }
    if (!rows_ok || w != y->shape[1])
      bad(v, i, "cat inputs do not add up to its output");
  } else if ((strcmp(n, "aten::relu") == 0 ||
              strcmp(n, "aten::sigmoid") == 0 ||
              strcmp(n, "aten::threshold_backward") == 0 ||
              strcmp(n, "aten::sigmoid_backward") == 0) &&
             a && y) {
    if (!same_shape(a, y)) bad(v, i, "element-wise op changes the shape");
  }
}

static void check_kernel(vctx *v, int32_t i, const dc_launch *l) {
  const dc_kernel *k = &l->k;
  if (l->stream < 0 || l->stream >= v->g->n_streams)
    bad(v, i, "kernel on stream %d, graph has %d", l->stream,
        v->g->n_streams);
  if (!(k->scale > 0) || !isfinite(k->scale))
    bad(v, i, "kernel scale %g is not positive", k->scale);
  if (!l->runtime) bad(v, i, "kernel without a runtime call");
  switch (k->kind) {
  case DC_KERNEL_GEMM:
    if (k->u.gemm.m < 1 || k->u.gemm.n < 1 || k->u.gemm.k < 1 ||
        k->u.gemm.batch < 1)
      bad(v, i, "gemm with a non-positive size");
    break;
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD:
    if (k->u.emb.batch < 1 || k->u.emb.n_groups < 1 || !k->u.emb.groups)
      bad(v, i, "embedding kernel without batch or tables");
    else
      for (int32_t j = 0; j < k->u.emb.n_groups; j++) {
        const dc_emb_group *gr = &k->u.emb.groups[j];
        if (gr->tables < 1 || gr->rows < 1 || gr->dim < 1 ||
            !(gr->pooling > 0))
          bad(v, i, "embedding group %d has a non-positive size", j);
      }
    break;
  case DC_KERNEL_ELEMENTWISE:
  case DC_KERNEL_REDUCE:
    if (k->u.ew.elements < 1 || !(k->u.ew.bytes_per_elem > 0) ||
        k->u.ew.flops_per_elem < 0)
      bad(v, i, "element-wise kernel with a non-positive size");
    break;
  case DC_KERNEL_CONCAT:
  case DC_KERNEL_MEMCPY_H2D:
  case DC_KERNEL_MEMCPY_D2H:
  case DC_KERNEL_MEMCPY_D2D:
    if (k->u.copy.bytes < 1) bad(v, i, "copy of %lld bytes",
                                 (long long)k->u.copy.bytes);
    break;
  case DC_KERNEL_TRANSPOSE:
  case DC_KERNEL_TRIL_FWD:
  case DC_KERNEL_TRIL_BWD:
  case DC_KERNEL_INTERACTION_FWD:
  case DC_KERNEL_INTERACTION_BWD:
    if (k->u.mat.batch < 1 || k->u.mat.m < 1 || k->u.mat.n < 1)
      bad(v, i, "matrix kernel with a non-positive size");
    break;
  case DC_KERNEL_ALL_TO_ALL:
  case DC_KERNEL_ALL_REDUCE:
  case DC_KERNEL_REDUCE_SCATTER:
  case DC_KERNEL_ALL_GATHER:
    if (k->u.coll.bytes < 0 || k->u.coll.ranks < 2 || k->u.coll.hosts < 1 ||
        k->u.coll.hosts > k->u.coll.ranks || k->u.coll.coll_id < 0)
      bad(v, i, "collective with bad bytes, ranks or hosts");
    break;
  default:
    bad(v, i, "unknown kernel kind %d", (int)k->kind);
  }
}

typedef struct vcoll {
  int32_t id, rank, ranks, op;
  dc_kernel_kind kind;
} vcoll;

static int cmp_vcoll(const void *a, const void *b) {
  const vcoll *x = a, *y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static void check_collectives(vctx *v) {
  const dc_graph *g = v->g;
  size_t n = 0;
  for (int32_t i = 0; i < g->n_ops; i++)
    for (int32_t l = 0; l < g->ops[i].n_launches; l++)
      n += dc_kernel_is_collective(g->ops[i].launches[l].k.kind);
  if (n == 0) return;
  vcoll *c = dc_xmalloc(n * sizeof *c);
  size_t k = 0;
  for (int32_t i = 0; i < g->n_ops; i++)
    for (int32_t l = 0; l < g->ops[i].n_launches; l++) {
      const dc_kernel *kk = &g->ops[i].launches[l].k;
      if (!dc_kernel_is_collective(kk->kind)) continue;
      c[k++] = (vcoll){kk->u.coll.coll_id, g->ops[i].rank, kk->u.coll.ranks,
                       i, kk->kind};
    }
  qsort(c, n, sizeof *c, cmp_vcoll);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    bool same = true;
    while (j < n && c[j].id == c[i].id) {
      if (c[j].kind != c[i].kind || c[j].ranks != c[i].ranks ||
          c[j].rank == c[j - 1].rank)
        same = false;
      j++;
    }
    if (!same || (int64_t)(j - i) != c[i].ranks)
      bad(v, c[i].op,
          "collective %d: %d launches of group size %d that disagree",
          c[i].id, (int)(j - i), c[i].ranks);
    i = j;
  }
  free(c);
}

bool dc_graph_verify(const dc_graph *g, dc_diags *d) {
  vctx v = {g, d, 0, true};
  if (g->n_ranks < 1 || !g->rank_first || g->rank_first[0] != 0 ||
      g->rank_first[g->n_ranks] != g->n_ops) {
    bad(&v, -1, "rank ranges do not cover the ops");
    return false;
  }
  for (int32_t t = 0; t < g->n_tensors; t++) {
    const dc_tensor *x = &g->tensors[t];
    if (x->id != t) bad(&v, -1, "tensor %d has id %d", t, x->id);
    if (x->ndim < 0 || x->ndim > DC_TENSOR_MAX_DIMS)
      bad(&v, -1, "tensor %d has %d dimensions", t, x->ndim);
    else
      for (int32_t k = 0; k < x->ndim; k++)
        if (x->shape[k] < 0)
          bad(&v, -1, "tensor %d has dimension %d of size %lld", t, k,
              (long long)x->shape[k]);
    if (x->producer < -1 || x->producer >= g->n_ops)
      bad(&v, -1, "tensor %d has producer %d", t, x->producer);
  }
  for (int32_t r = 0; r < g->n_ranks; r++) {
    int32_t lo = g->rank_first[r], hi = g->rank_first[r + 1];
    if (lo > hi) {
      bad(&v, -1, "rank %d has a negative op range", r);
      continue;
    }
    for (int32_t i = lo; i < hi; i++) {
      const dc_op *o = &g->ops[i];
      if (o->rank != r) bad(&v, i, "op of rank %d in rank %d's range",
                            o->rank, r);
      if (!o->name || !o->name[0]) bad(&v, i, "op without a name");
      if (o->end <= i || o->end > hi)
        bad(&v, i, "subtree end %d outside (%d, %d]", o->end, i, hi);
      if (o->parent >= 0) {
        const dc_op *pa = &g->ops[o->parent];
        if (o->parent >= i || o->parent < lo || pa->end < o->end)
          bad(&v, i, "parent %d does not contain it", o->parent);
      } else if (i > lo && g->ops[i - 1].parent >= 0) {
        /* the previous subtree must have ended here */
        int32_t top = i - 1;
        while (g->ops[top].parent >= 0) top = g->ops[top].parent;
        if (g->ops[top].end != i) bad(&v, i, "top-level ops overlap");
      }
      if (o->n_inputs < 0 || o->n_outputs < 0 || o->n_launches < 0 ||
          (o->n_inputs && !o->inputs) || (o->n_outputs && !o->outputs) ||
          (o->n_launches && !o->launches)) {
        bad(&v, i, "bad input, output or launch list");
        continue;
      }
      bool ids_ok = true;
      for (int32_t k = 0; k < o->n_inputs; k++) {
        int32_t t = o->inputs[k];
        if (t < 0 || t >= g->n_tensors) {
          bad(&v, i, "input %d is tensor %d (out of range)", k, t);
          ids_ok = false;
          continue;
        }
        int32_t pr = g->tensors[t].producer;
        if (pr >= 0 && (pr >= i || g->ops[pr].end > i ||
                        g->ops[pr].rank != o->rank))
          bad(&v, i, "input tensor %d is used before op %d produces it", t,
              pr);
      }
      for (int32_t k = 0; k < o->n_outputs; k++) {
        int32_t t = o->outputs[k];
        if (t < 0 || t >= g->n_tensors) {
          bad(&v, i, "output %d is tensor %d (out of range)", k, t);
          ids_ok = false;
          continue;
        }
        int32_t pr = g->tensors[t].producer;
        if (pr < i || pr >= o->end)
          bad(&v, i, "output tensor %d is produced by op %d outside it", t,
              pr);
      }
      if (ids_ok) check_shapes(&v, i);
      for (int32_t l = 0; l < o->n_launches; l++)
        check_kernel(&v, i, &o->launches[l]);
    }
  }
  check_collectives(&v);
  if (v.reports > VERIFY_MAX_REPORTS) {
    dc_span none = {0};
    dc_diag_error(d, DC_DIAG_GRAPH, none,
                  "invalid graph: %d more violations not shown",
                  v.reports - VERIFY_MAX_REPORTS);
  }
  return v.ok;
}
