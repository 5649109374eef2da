/*
 * core_int.h — the graph builder (core.c), the floor of graphgen/: ops are
 * opened and closed like a call stack, so the op array comes out in
 * pre-order with `end` filled in.
 *
 * The builder grows its arrays in the arena by doubling from an estimate
 * made from the point, so a typical build allocates a handful of blocks
 * and no op costs a malloc. Inputs, outputs and launches go to three
 * pools; an op records offsets while building (pools may move when they
 * grow) and gg_finish turns them into the pointers of dc_op.
 */
#ifndef DC_GRAPHGEN_CORE_INT_H
#define DC_GRAPHGEN_CORE_INT_H

#include "graphgen/graphgen.h"

#define GG_MAX_DEPTH 8

/* Streams: compute work runs on the default stream, NCCL on its own. */
#define GG_STREAM_COMPUTE 0
#define GG_STREAM_COMM 1
/* The next batch's host-to-device copies (fused, torchrec: prefetched). */
#define GG_STREAM_COPY 2

typedef struct gg_opx {
  int32_t in_off, out_off, ln_off;
} gg_opx;

typedef struct gg_b {
  dc_arena *a;
  dc_diags *d;
  const dc_point *p;

  dc_op *ops;
  gg_opx *opx;
  int32_t n_ops, cap_ops;
  int32_t *ins;
  int32_t n_ins, cap_ins;
  int32_t *outs;
  int32_t n_outs, cap_outs;
  dc_launch *lns;
  int32_t n_lns, cap_lns;
  dc_tensor *ts;
  int32_t n_ts, cap_ts;

  int32_t stack[GG_MAX_DEPTH];
  int32_t depth;

  /* attributes given to new ops */
  int32_t rank;
  int32_t thread;
  dc_phase phase;
  bool captured;     /* inside a CUDA-graph capture */

  int32_t coll_next; /* collective ids, restarted on every rank */
  int32_t n_streams;
  bool overflow;     /* a size product overflowed 64 bits */
  bool priced;       /* DC_GRAPH_PRICED (graphgen.h): received features
                        one tensor per class */
} gg_b;

void gg_init(gg_b *b, const dc_point *p, dc_arena *a, dc_diags *d,
             int32_t est_ops);
/* Fills the op pointers from the pools; returns the graph. */
dc_graph *gg_finish(gg_b *b, int32_t n_ranks, int32_t *rank_first);

int32_t gg_tensor(gg_b *b, dc_dtype t, int32_t ndim, const int64_t *shape);
int32_t gg_t1(gg_b *b, dc_dtype t, int64_t d0);
int32_t gg_t2(gg_b *b, dc_dtype t, int64_t d0, int64_t d1);
int32_t gg_t3(gg_b *b, dc_dtype t, int64_t d0, int64_t d1, int64_t d2);
int32_t gg_t0(gg_b *b, dc_dtype t); /* a scalar, shape [] */
/* Same shape and dtype as `like`, new id (a new version of a tensor). */
int32_t gg_like(gg_b *b, int32_t like);
int32_t gg_like_dtype(gg_b *b, int32_t like, dc_dtype t);
int64_t gg_numel(const gg_b *b, int32_t t);
/* The transposed view of t (last two dims swapped), as PyTorch records a
 * `.t()` / `.transpose(1, 2)` operand: no kernel, and the same producer,
 * so whatever reads it waits for t. */
int32_t gg_t_view(gg_b *b, int32_t t);

/* gg_begin, gg_end, gg_in and gg_out run a few hundred times per graph, a
 * graph per sweep point: inline, with the rare growth of a pool out of
 * line (core.c). */
void gg_grow_ops(gg_b *b);
void gg_grow_ins(gg_b *b);
void gg_grow_outs(gg_b *b);

/* Opens an op as a child of the innermost open op (top-level when none).
 * `name` must be a string literal: the graph promises literal_names. */
static inline int32_t gg_begin(gg_b *b, const char *name) {
  DC_ASSERT(b->depth < GG_MAX_DEPTH);
  if (b->n_ops == b->cap_ops) gg_grow_ops(b);
  int32_t i = b->n_ops++;
  b->ops[i] = (dc_op){.name = name,
                      .phase = b->phase,
                      .rank = b->rank,
                      .thread = b->thread,
                      .parent = b->depth ? b->stack[b->depth - 1] : -1,
                      .captured = b->captured,
                      .end = i + 1};
  b->opx[i].in_off = b->n_ins;
  b->opx[i].out_off = b->n_outs;
  b->opx[i].ln_off = b->n_lns;
  b->stack[b->depth++] = i;
  return i;
}

/* begin + end: an op without children. */
int32_t gg_leaf(gg_b *b, const char *name);

static inline void gg_end(gg_b *b) {
  DC_ASSERT(b->depth > 0);
  int32_t i = b->stack[--b->depth];
  b->ops[i].end = b->n_ops;
}

/* Inputs, outputs and launches go to the most recently created op. */
static inline void gg_in(gg_b *b, int32_t t) {
  DC_ASSERT(t >= 0 && t < b->n_ts);
  if (b->n_ins == b->cap_ins) gg_grow_ins(b);
  b->ins[b->n_ins++] = t;
  b->ops[b->n_ops - 1].n_inputs++;
}

static inline void gg_out(gg_b *b, int32_t t) {
  DC_ASSERT(t >= 0 && t < b->n_ts);
  if (b->n_outs == b->cap_outs) gg_grow_outs(b);
  b->outs[b->n_outs++] = t;
  b->ops[b->n_ops - 1].n_outputs++;
  /* The innermost op that lists a tensor produces it: children come after
   * their parent, so the last claim wins. */
  b->ts[t].producer = b->n_ops - 1;
}
dc_launch *gg_launch(gg_b *b, dc_kernel_kind kind, int32_t stream);
/* Checked products; an overflow sets b->overflow and yields 1. */
int64_t gg_mul(gg_b *b, int64_t x, int64_t y);
int64_t gg_mul3(gg_b *b, int64_t x, int64_t y, int64_t z);

/* Kernel helpers. */
void gg_gemm(gg_b *b, int64_t m, int64_t n, int64_t k, int64_t batch,
             bool ta, bool tb, dc_dtype dt);
/* Element-wise / reduce kernel: `acc` tensor accesses of `es` bytes each. */
dc_launch *gg_ew(gg_b *b, dc_kernel_kind kind, int64_t elems, double flops,
                 double bytes_per_elem);
void gg_copy(gg_b *b, dc_kernel_kind kind, int64_t bytes, bool pinned);
/* Pooled index count of a table for `batch` samples: round(batch·L),
 * at least 1. */
int64_t gg_lookups(gg_b *b, int64_t batch, double pooling);

/* Ops [first, n_ops) work on the *next* batch while this one computes:
 * with `copy_stream` their launches move to the copy stream from pinned
 * host buffers (else they keep their streams: the input all-to-all); they
 * write the next batch's tensors, and this batch's (the ones the
 * iteration reads) are resident from the start (no producer), as a
 * prefetching loader leaves them. */
void gg_prefetched(gg_b *b, int32_t first, bool copy_stream);

#endif /* DC_GRAPHGEN_CORE_INT_H */
