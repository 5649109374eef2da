/*
 * linear.c — what the MLPs and the DCN's cross layers (crossnet.c) share:
 * aten::linear with autocast's casts, forward (addmm, or t + matmul → mm
 * for a bias-free layer), its backward (AddmmBackward0 / MmBackward0 and
 * the casts' ToCopyBackward0), and the gradients' accumulation
 * (AccumulateGrad, with DDP's bucket all-reduce launched inside the one
 * that completes a bucket; aten::add_ where the engine sums two
 * gradients). Below both passes and the cross network, which all call it.
 *
 * GEMMs of AddmmBackward0 (row-major, PyTorch's view; graphgen.h):
 *   grad input  gx[B, in]  = g[B, out] · W[out, in]      m=B   n=in k=out
 *   grad weight gW[out,in] = g^T[out, B] · x[B, in]      m=out n=in k=B, ta
 */
#include "graphgen/graphgen_int.h"

#define F32 DC_DTYPE_FP32

/* A cast child: `aten::to` from t to dtype `to`. */
int32_t gg_cast_child(gg_b *b, int32_t t, dc_dtype to) {
  int32_t o = gg_like_dtype(b, t, to);
  gg_begin(b, "aten::to");
  gg_in(b, t);
  gg_out(b, o);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, t), 0,
        gg_es(b->ts[t].dtype) + gg_es(to));
  gg_end(b);
  return o;
}

/* aten::linear (+ autocast casts) → addmm; without a bias, F.linear runs
 * matmul(x, W.t()): aten::t (a view) then aten::matmul → aten::mm. */
void gg_linear(gg_ctx *c, gg_lin *L, int32_t x, bool x_grad) {
  gg_b *b = c->b;
  L->x = x;
  L->x_grad = x_grad;
  L->x_cast = c->autocast && b->ts[x].dtype == F32;
  dc_dtype yt = c->autocast ? c->adt : F32;
  L->y = gg_t2(b, yt, c->batch, L->out);
  gg_begin(b, "aten::linear");
  gg_in(b, x);
  gg_in(b, L->w);
  if (!L->no_bias) gg_in(b, L->bias);
  gg_out(b, L->y);
  int32_t xg = x, w = L->w, bias = L->bias;
  if (c->autocast) {
    if (L->x_cast) xg = gg_cast_child(b, x, c->adt);
    w = gg_cast_child(b, L->w, c->adt);
    if (!L->no_bias) bias = gg_cast_child(b, L->bias, c->adt);
  }
  L->xg = xg;
  if (L->no_bias) {
    int32_t wt = gg_t2(b, b->ts[w].dtype, L->in, L->out);
    gg_begin(b, "aten::t");
    gg_in(b, w);
    gg_out(b, wt);
    gg_end(b);
    gg_begin(b, "aten::matmul");
    gg_in(b, xg);
    gg_in(b, wt);
    gg_out(b, L->y);
    gg_begin(b, "aten::mm");
    gg_in(b, xg);
    gg_in(b, wt);
  } else {
    gg_begin(b, "aten::addmm");
    gg_in(b, bias);
    gg_in(b, xg);
    gg_in(b, w);
  }
  gg_out(b, L->y);
  /* out[B, out] = x[B, in] · W[out, in]^T */
  gg_gemm(b, c->batch, L->out, L->in, 1, false, true, c->gdt);
  gg_end(b);
  if (L->no_bias) gg_end(b);
  gg_end(b);
  L->wg = w; /* the weight as the GEMM saw it (the backward reuses it) */
}

/* acc += g in place (aten::add_, 1 flop, 3 accesses) in the open op: the
 * engine adding a tensor's second gradient to the first where it arrives;
 * returns the sum's new version. */
int32_t gg_accumulate_into(gg_b *b, int32_t acc, int32_t g) {
  int32_t o = gg_like(b, acc);
  gg_begin(b, "aten::add_");
  gg_in(b, acc);
  gg_in(b, g);
  gg_out(b, o);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, o), 1,
        3.0 * gg_es(b->ts[o].dtype));
  gg_end(b);
  return o;
}

/* ToCopyBackward0; with acc >= 0 the cast gradient is added into acc. */
static int32_t to_copy_backward_acc(gg_b *b, int32_t g, dc_dtype to,
                                    int32_t acc) {
  int32_t o = gg_like_dtype(b, g, to);
  double bytes = gg_es(b->ts[g].dtype) + gg_es(to);
  gg_begin(b, EV("ToCopyBackward0"));
  gg_in(b, g);
  if (acc < 0) {
    gg_out(b, o);
    gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, g), 0, bytes);
  } else { /* the cast (aten::to), then the sum reads it */
    gg_begin(b, "aten::to");
    gg_in(b, g);
    gg_out(b, o);
    gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, g), 0, bytes);
    gg_end(b);
    o = gg_accumulate_into(b, acc, o);
  }
  gg_end(b);
  return o;
}

int32_t gg_to_copy_backward(gg_b *b, int32_t g, dc_dtype to) {
  return to_copy_backward_acc(b, g, to, -1);
}

void gg_accumulate(gg_ctx *c, int32_t q, int32_t g) {
  gg_b *b = c->b;
  gg_param *pq = &c->params[q];
  gg_begin(b, EV("torch::autograd::AccumulateGrad"));
  gg_in(b, g);
  pq->grad = g;
  if (c->legacy && pq->g0 >= 0) {
    /* 1.13: the gradient was zeroed, so the new one is added into it */
    int32_t sum = gg_like(b, g);
    gg_begin(b, "aten::add_");
    gg_in(b, pq->g0);
    gg_in(b, g);
    gg_out(b, sum);
    if (pq->table >= 0 && !pq->dense) /* sparse += sparse: concatenated */
      gg_copy(b, DC_KERNEL_CONCAT, gg_mul(b, gg_numel(b, g), 4), false);
    else
      gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, g), 1, 3.0 * 4);
    gg_end(b);
    pq->grad = sum;
  }
  if (c->sharded && pq->bucket_last >= 0) {
    int32_t nb = pq->bucket_last;
    int32_t bucket = gg_t1(b, F32, pq->bucket_elems);
    gg_begin(b, "c10d::allreduce_");
    for (int32_t r = 0; r < c->n_params; r++)
      if (c->bno[r] == nb) gg_in(b, c->params[r].grad);
    gg_out(b, bucket);
    dc_launch *l = gg_launch(b, DC_KERNEL_ALL_REDUCE, GG_STREAM_COMM);
    l->k.u.coll.bytes = gg_mul(b, pq->bucket_elems, 4);
    l->k.u.coll.ranks = c->n_ranks;
    l->k.u.coll.hosts = gg_world_hosts(c);
    l->k.u.coll.coll_id = b->coll_next++;
    gg_end(b);
    for (int32_t r = 0; r < c->n_params; r++)
      if (c->bno[r] == nb) c->params[r].bucket = bucket;
  } else if (c->sharded && pq->dense && !dc_dp_grad_grouped(c->p)) {
    /* a data-parallel table: its dense gradient, all-reduced on its own
     * (grouped, the dense gradients' all-reduce takes it: fused.c) */
    int32_t red = gg_like(b, pq->grad);
    gg_begin(b, "c10d::allreduce_");
    gg_in(b, pq->grad);
    gg_out(b, red);
    gg_coll(c, DC_KERNEL_ALL_REDUCE, gg_mul(b, gg_numel(b, pq->grad), 4),
            c->n_ranks, gg_world_hosts(c), b->coll_next++);
    gg_end(b);
    pq->bucket = red;
  }
  gg_end(b);
}

/* The weight's gradient gW[out, in] = gᵀ·x (autograd passes gᵀ). */
static void grad_weight_mm(gg_ctx *c, const gg_lin *L, int32_t g,
                           int32_t gw) {
  gg_b *b = c->b;
  gg_begin(b, "aten::mm");
  gg_in(b, gg_t_view(b, g));
  gg_in(b, L->xg);
  gg_out(b, gw);
  gg_gemm(b, L->out, L->in, c->batch, 1, true, false, c->gdt);
  gg_end(b);
}

/* The input's gradient gx[B, in] = g·W. */
static void grad_input_mm(gg_ctx *c, const gg_lin *L, int32_t g,
                          int32_t gx) {
  gg_b *b = c->b;
  gg_begin(b, "aten::mm");
  gg_in(b, g);
  gg_in(b, L->wg);
  gg_out(b, gx);
  gg_gemm(b, c->batch, L->in, L->out, 1, false, false, c->gdt);
  gg_end(b);
}

/* Returns the input gradient, or -1 when the input needs none. A
 * bias-free linear's MmBackward0 has the same two GEMMs and no sum. */
int32_t gg_linear_backward(gg_ctx *c, gg_lin *L, int32_t g, int32_t acc) {
  gg_b *b = c->b;
  dc_dtype yt = b->ts[L->y].dtype;
  int es = gg_es(yt);
  int64_t B = c->batch;
  bool nb = L->no_bias;
  int32_t gx = L->x_grad ? gg_t2(b, yt, B, L->in) : -1;
  int32_t gw = gg_t2(b, yt, L->out, L->in);
  int32_t gb = nb ? -1 : gg_t1(b, yt, L->out);
  gg_begin(b, nb ? EV("MmBackward0") : EV("AddmmBackward0"));
  gg_in(b, g);
  if (gx >= 0) gg_out(b, gx);
  gg_out(b, gw);
  if (!nb) gg_out(b, gb);
  /* AddmmBackward0 computes the input's gradient first, MmBackward0 the
   * weight's (as recorded, tests/fixtures/traces/README-dcn.md) */
  if (nb) grad_weight_mm(c, L, g, gw);
  if (gx >= 0) grad_input_mm(c, L, g, gx);
  if (!nb) grad_weight_mm(c, L, g, gw);
  if (!nb) {
    gg_begin(b, "aten::sum");
    gg_in(b, g);
    gg_out(b, gb);
    gg_ew(b, DC_KERNEL_REDUCE, gg_mul(b, B, L->out), 1, 1.0 * es);
    gg_end(b);
  }
  if (acc >= 0 && gx >= 0 && !L->x_cast)
    gx = gg_accumulate_into(b, acc, gx);
  gg_end(b);

  int32_t gwt = gg_like(b, gw);
  if (!c->autocast) {
    if (!nb) gg_accumulate(c, L->pb, gb);
    gg_begin(b, EV("TBackward0"));
    gg_in(b, gw);
    gg_out(b, gwt);
    gg_end(b);
    gg_accumulate(c, L->pw, gwt);
    return gx;
  }
  gg_begin(b, EV("TBackward0"));
  gg_in(b, gw);
  gg_out(b, gwt);
  gg_end(b);
  if (!nb) gg_accumulate(c, L->pb, gg_to_copy_backward(b, gb, F32));
  gg_accumulate(c, L->pw, gg_to_copy_backward(b, gwt, F32));
  if (gx >= 0 && L->x_cast) /* the fp32 gradient arrives, and sums, here */
    gx = to_copy_backward_acc(b, gx, F32, acc);
  return gx;
}
