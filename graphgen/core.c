/*
 * core.c — the graph builder's primitives: arena-grown arrays, tensors,
 * opening and closing ops, kernel launches, and the final fix-up that
 * turns pool offsets into the pointers of dc_op.
 *
 * Ops are opened and closed like calls (gg_begin/gg_end), which gives the
 * pre-order layout graphgen.h promises: children follow their parent and
 * `end` is one past the last descendant. Inputs, outputs and launches may
 * only be attached to the op created last, so each op's entries are
 * contiguous in their pool.
 */
#include <math.h>
#include <string.h>

#include "graphgen/core_int.h"

const char *dc_phase_name(dc_phase p) {
  switch (p) {
  case DC_PHASE_INPUT: return "input";
  case DC_PHASE_FORWARD: return "forward";
  case DC_PHASE_LOSS: return "loss";
  case DC_PHASE_BACKWARD: return "backward";
  case DC_PHASE_OPTIMIZER: return "optimizer";
  }
  return "?";
}

/* Makes room for `need` more elements, doubling in the arena. The arrays
 * grown here (and set up in gg_init) are not zeroed: an element is written
 * in full when it is appended (gg_begin, gg_tensor, gg_launch, gg_in,
 * gg_out) and never read before; a sweep builds a graph per point, and
 * zeroing them cost more than filling them. */
static void *grow(gg_b *b, void *arr, int32_t *cap, int32_t n, int32_t need,
                  size_t size) {
  if (n + need <= *cap) return arr;
  int64_t nc = *cap ? *cap : 16;
  while (nc < (int64_t)n + need) nc *= 2;
  DC_ASSERT(nc <= INT32_MAX);
  void *na = dc_arena_array_raw(b->a, (size_t)nc, size);
  if (n) memcpy(na, arr, (size_t)n * size);
  *cap = (int32_t)nc;
  return na;
}

void gg_init(gg_b *b, const dc_point *p, dc_arena *a, dc_diags *d,
             int32_t est_ops) {
  memset(b, 0, sizeof *b);
  b->a = a;
  b->d = d;
  b->p = p;
  b->n_streams = 1;
  if (est_ops < 64) est_ops = 64;
  b->cap_ops = est_ops;
  b->ops = dc_arena_array_raw(a, (size_t)est_ops, sizeof(dc_op));
  b->opx = dc_arena_array_raw(a, (size_t)est_ops, sizeof(gg_opx));
  b->cap_ins = est_ops * 2;
  b->ins = dc_arena_array_raw(a, (size_t)b->cap_ins, sizeof(int32_t));
  b->cap_outs = est_ops + est_ops / 2;
  b->outs = dc_arena_array_raw(a, (size_t)b->cap_outs, sizeof(int32_t));
  b->cap_lns = est_ops / 2 + 16;
  b->lns = dc_arena_array_raw(a, (size_t)b->cap_lns, sizeof(dc_launch));
  b->cap_ts = est_ops + est_ops / 4;
  b->ts = dc_arena_array_raw(a, (size_t)b->cap_ts, sizeof(dc_tensor));
}

int64_t gg_mul(gg_b *b, int64_t x, int64_t y) {
  int64_t r;
  if (!dc_mul_i64(x, y, &r)) {
    b->overflow = true;
    return 1;
  }
  return r;
}

int64_t gg_mul3(gg_b *b, int64_t x, int64_t y, int64_t z) {
  return gg_mul(b, gg_mul(b, x, y), z);
}

int64_t gg_lookups(gg_b *b, int64_t batch, double pooling) {
  double v = (double)batch * pooling;
  if (!(v < 9.0e18)) {
    b->overflow = true;
    return 1;
  }
  int64_t n = dc_f64_sat_i64(round(v));
  return n < 1 ? 1 : n;
}

int32_t gg_tensor(gg_b *b, dc_dtype t, int32_t ndim, const int64_t *shape) {
  DC_ASSERT(ndim >= 0 && ndim <= DC_TENSOR_MAX_DIMS);
  if (b->n_ts == b->cap_ts)
    b->ts = grow(b, b->ts, &b->cap_ts, b->n_ts, 1, sizeof(dc_tensor));
  int32_t id = b->n_ts++;
  dc_tensor *x = &b->ts[id];
  *x = (dc_tensor){.id = id, .dtype = t, .ndim = ndim, .producer = -1};
  for (int32_t i = 0; i < ndim; i++) x->shape[i] = shape[i];
  return id;
}

int32_t gg_t0(gg_b *b, dc_dtype t) { return gg_tensor(b, t, 0, NULL); }
int32_t gg_t1(gg_b *b, dc_dtype t, int64_t d0) {
  return gg_tensor(b, t, 1, &d0);
}
int32_t gg_t2(gg_b *b, dc_dtype t, int64_t d0, int64_t d1) {
  int64_t s[2] = {d0, d1};
  return gg_tensor(b, t, 2, s);
}
int32_t gg_t3(gg_b *b, dc_dtype t, int64_t d0, int64_t d1, int64_t d2) {
  int64_t s[3] = {d0, d1, d2};
  return gg_tensor(b, t, 3, s);
}

int32_t gg_like_dtype(gg_b *b, int32_t like, dc_dtype t) {
  dc_tensor src = b->ts[like]; /* copy: the array may move */
  int32_t id = gg_tensor(b, t, src.ndim, src.shape);
  b->ts[id].on_host = src.on_host;
  return id;
}

int32_t gg_t_view(gg_b *b, int32_t t) {
  dc_tensor src = b->ts[t];
  DC_ASSERT(src.ndim >= 2);
  int64_t shape[DC_TENSOR_MAX_DIMS];
  for (int32_t i = 0; i < src.ndim; i++) shape[i] = src.shape[i];
  shape[src.ndim - 2] = src.shape[src.ndim - 1];
  shape[src.ndim - 1] = src.shape[src.ndim - 2];
  int32_t id = gg_tensor(b, src.dtype, src.ndim, shape);
  b->ts[id].on_host = src.on_host;
  b->ts[id].producer = src.producer;
  b->ts[id].view_of = t + 1;
  return id;
}

int32_t gg_like(gg_b *b, int32_t like) {
  return gg_like_dtype(b, like, b->ts[like].dtype);
}

int64_t gg_numel(const gg_b *b, int32_t t) {
  const dc_tensor *x = &b->ts[t];
  int64_t n = 1;
  for (int32_t i = 0; i < x->ndim; i++) {
    if (!dc_mul_i64(n, x->shape[i], &n)) return INT64_MAX;
  }
  return n;
}

/* The out-of-line half of gg_begin (graphgen_int.h). */
void gg_grow_ops(gg_b *b) {
  int32_t cap = b->cap_ops;
  b->ops = grow(b, b->ops, &cap, b->n_ops, 1, sizeof(dc_op));
  int32_t cap2 = b->cap_ops;
  b->opx = grow(b, b->opx, &cap2, b->n_ops, 1, sizeof(gg_opx));
  b->cap_ops = cap;
}

int32_t gg_leaf(gg_b *b, const char *name) {
  int32_t i = gg_begin(b, name);
  gg_end(b);
  return i;
}

/* The out-of-line halves of gg_in and gg_out (graphgen_int.h). */
void gg_grow_ins(gg_b *b) {
  b->ins = grow(b, b->ins, &b->cap_ins, b->n_ins, 1, sizeof(int32_t));
}

void gg_grow_outs(gg_b *b) {
  b->outs = grow(b, b->outs, &b->cap_outs, b->n_outs, 1, sizeof(int32_t));
}

dc_launch *gg_launch(gg_b *b, dc_kernel_kind kind, int32_t stream) {
  if (b->n_lns == b->cap_lns)
    b->lns = grow(b, b->lns, &b->cap_lns, b->n_lns, 1, sizeof(dc_launch));
  dc_launch *l = &b->lns[b->n_lns++];
  *l = (dc_launch){.k = {.kind = kind, .scale = 1.0},
                   .stream = stream,
                   .runtime = "cudaLaunchKernel"};
  if (stream >= b->n_streams) b->n_streams = stream + 1;
  b->ops[b->n_ops - 1].n_launches++;
  return l;
}

void gg_gemm(gg_b *b, int64_t m, int64_t n, int64_t k, int64_t batch,
             bool ta, bool tb, dc_dtype dt) {
  dc_launch *l = gg_launch(b, DC_KERNEL_GEMM, GG_STREAM_COMPUTE);
  l->k = dc_kernel_gemm(m, n, k, batch, ta, tb, dt);
}

dc_launch *gg_ew(gg_b *b, dc_kernel_kind kind, int64_t elems, double flops,
                 double bytes_per_elem) {
  dc_launch *l = gg_launch(b, kind, GG_STREAM_COMPUTE);
  l->k.u.ew.elements = elems;
  l->k.u.ew.flops_per_elem = flops;
  l->k.u.ew.bytes_per_elem = bytes_per_elem;
  return l;
}

void gg_copy(gg_b *b, dc_kernel_kind kind, int64_t bytes, bool pinned) {
  dc_launch *l = gg_launch(b, kind, GG_STREAM_COMPUTE);
  l->k.u.copy.bytes = bytes;
  l->k.u.copy.pinned = pinned;
  if (kind == DC_KERNEL_MEMCPY_H2D || kind == DC_KERNEL_MEMCPY_D2H ||
      kind == DC_KERNEL_MEMCPY_D2D)
    l->runtime = "cudaMemcpyAsync";
}

dc_graph *gg_finish(gg_b *b, int32_t n_ranks, int32_t *rank_first) {
  DC_ASSERT(b->depth == 0);
  for (int32_t i = 0; i < b->n_ops; i++) {
    dc_op *o = &b->ops[i];
    o->inputs = o->n_inputs ? b->ins + b->opx[i].in_off : NULL;
    o->outputs = o->n_outputs ? b->outs + b->opx[i].out_off : NULL;
    o->launches = o->n_launches ? b->lns + b->opx[i].ln_off : NULL;
  }
  dc_graph *g = dc_arena_alloc(b->a, sizeof *g);
  g->point = b->p;
  g->n_ranks = n_ranks;
  g->n_streams = b->n_streams;
  g->n_ops = b->n_ops;
  g->ops = b->ops;
  g->rank_first = rank_first;
  g->n_tensors = b->n_ts;
  g->tensors = b->ts;
  g->literal_names = true; /* gg_begin is only given literals */
  return g;
}

void gg_prefetched(gg_b *b, int32_t first, bool copy_stream) {
  for (int32_t j = first; j < b->n_ops; j++) {
    int32_t ln = b->opx[j].ln_off;
    for (int32_t i = ln; i < ln + b->ops[j].n_launches; i++) {
      if (!copy_stream) continue;
      b->lns[i].stream = GG_STREAM_COPY;
      if (b->lns[i].k.kind == DC_KERNEL_MEMCPY_H2D)
        b->lns[i].k.u.copy.pinned = true; /* pinned staging buffers */
    }
    /* the op fills the next batch's buffer; this batch's was filled in
     * the previous iteration: resident, like a parameter */
    int32_t o = b->opx[j].out_off, n = b->ops[j].n_outputs;
    for (int32_t i = 0; i < n; i++) {
      int32_t cur = b->outs[o + i], next = gg_like(b, cur);
      b->ts[cur].producer = -1;
      b->ts[next].producer = j;
      b->outs[o + i] = next;
    }
  }
  if (copy_stream && b->n_lns > 0 && GG_STREAM_COPY >= b->n_streams)
    b->n_streams = GG_STREAM_COPY + 1;
}
