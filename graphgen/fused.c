/*
 * fused.c — one rank's iteration in the `fused` execution style
 * (system.framework: fused; spec/frameworks.md): what the vendor-tuned
 * DLRM implementations run — NVIDIA's DeepLearningExamples DLRM (PyTorch,
 * hybrid parallel) and HugeCTR, which every MLPerf DLRM-DCNv2 submission
 * uses — rather than stock PyTorch's op-by-op dispatch:
 *
 *   copy of the next batch (outside the graph, copy stream, prefetched)
 *   ── CUDA graph, replayed with one cudaGraphLaunch ──────────────────
 *   fused::linear_relu ×k             bottom MLP: GEMM, bias+ReLU epilogue
 *   LookupFunction [+ exchange]       one table-batched lookup
 *   fused::dot_interaction            one kernel (INTERACTION_FWD), or
 *   fused::concat + fused::cross_layer ×l   dcn: GEMMs, epilogue-fused
 *   fused::linear_relu ×(m−1), fused::linear
 *   fused::bce_loss                   sigmoid + loss + its gradient, one
 *                                     kernel, no host sync
 *   fused::linear_backward ×m         dgrad (dReLU epilogue) + wgrad
 *                                     (bias-gradient epilogue) GEMMs
 *   fused::dot_interaction_backward | fused::cross_layer_backward ×l
 *   one GPU: LookupFunctionBackward (optimizer fused),
 *            fused::linear_backward ×k
 *   sharded: exchange backward, fused::linear_backward ×k, the
 *            data-parallel replicas' LookupFunctionBackward,
 *            nccl:all_reduce (the dense and replica gradients, one
 *            buffer, on the communication stream), the sharded tables'
 *            LookupFunctionBackward: the all-reduce overlaps it
 *   fused::optimizer_step             one multi-tensor update kernel
 *
 * What it keeps from the stock graph: the parameters, the table-batched
 * lookup with its optimizer fused into the backward, and the pooled-
 * embedding exchange (gg_exchange_*; its ops are captured like the rest).
 * Activations are in the precision's dtype (fp16/bf16 or fp32) with no
 * cast kernels: the vendors keep half copies of the weights and fold the
 * casts into the kernels' loads. The epilogues' extra reads (the bias, a
 * ReLU mask, x0 and x_l of a cross layer) are not priced: they are a few
 * bytes per output element next to the GEMM's own traffic.
 */
#include "graphgen/graphgen_int.h"

#define F32 DC_DTYPE_FP32

static dc_dtype act_dtype(const gg_ctx *c) {
  return c->autocast ? c->adt : F32;
}

/* y = x·Wᵀ + b, with ReLU in the epilogue when `relu`: one GEMM. */
static int32_t linear(gg_ctx *c, gg_lin *L, int32_t x, bool x_grad,
                      bool relu) {
  gg_b *b = c->b;
  L->x = L->xg = x;
  L->wg = L->w;
  L->x_grad = x_grad;
  L->y = gg_t2(b, act_dtype(c), c->batch, L->out);
  gg_begin(b, relu ? "fused::linear_relu" : "fused::linear");
  gg_in(b, x);
  gg_in(b, L->w);
  gg_in(b, L->bias);
  gg_out(b, L->y);
  gg_gemm(b, c->batch, L->out, L->in, 1, false, true, c->gdt);
  gg_end(b);
  L->act = relu ? L->y : -1;
  return L->y;
}

/* wgrad gW[out, in] = gᵀ·x (the bias gradient in its epilogue), then
 * dgrad gx[B, in] = g·W (the previous layer's dReLU in its epilogue). */
static int32_t linear_backward(gg_ctx *c, gg_lin *L, int32_t g) {
  gg_b *b = c->b;
  dc_dtype t = act_dtype(c);
  int32_t gw = gg_t2(b, t, L->out, L->in), gb = gg_t1(b, t, L->out);
  int32_t gx = L->x_grad ? gg_t2(b, t, c->batch, L->in) : -1;
  gg_begin(b, "fused::linear_backward");
  gg_in(b, g);
  gg_in(b, L->xg);
  gg_in(b, L->wg);
  gg_out(b, gw);
  gg_out(b, gb);
  if (gx >= 0) gg_out(b, gx);
  gg_gemm(b, L->out, L->in, c->batch, 1, true, false, c->gdt);
  if (gx >= 0) gg_gemm(b, c->batch, L->in, L->out, 1, false, false, c->gdt);
  gg_end(b);
  c->params[L->pw].grad = gw;
  c->params[L->pb].grad = gb;
  return gx;
}

/* The interaction kernel (forward or backward) for the open op. */
static void interaction_kernel(gg_ctx *c, dc_kernel_kind kind) {
  dc_launch *l = gg_launch(c->b, kind, GG_STREAM_COMPUTE);
  l->k.u.mat.batch = c->batch;
  l->k.u.mat.m = c->F;
  l->k.u.mat.n = c->D;
  l->k.u.mat.diag = c->p->interaction_self;
  l->k.u.mat.dtype = c->gdt;
}

/* The features' gradients, outputs of the open op. */
static void out_feature_grads(gg_ctx *c) {
  for (int32_t i = 0; i < c->n_feat; i++) {
    c->gfeat[i] = gg_like(c->b, c->feat[i]);
    gg_out(c->b, c->gfeat[i]);
  }
}

/* The dot interaction as one kernel: reads the bottom output and the F−1
 * pooled features, writes [B, D + NI] (the bottom output and the pairs). */
static void dot_forward(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  int64_t D = p->bottom_mlp[p->n_bottom - 1], F = p->n_tables + 1;
  c->D = D;
  c->F = F;
  c->NI = p->interaction_self ? F * (F + 1) / 2 : F * (F - 1) / 2;
  dc_dtype t = act_dtype(c);
  int32_t o = gg_t2(b, t, c->batch, D + c->NI);
  gg_begin(b, "fused::dot_interaction");
  gg_in(b, c->x_bot);
  for (int32_t i = 0; i < c->n_feat; i++) gg_in(b, c->feat[i]);
  gg_out(b, o);
  interaction_kernel(c, DC_KERNEL_INTERACTION_FWD);
  gg_end(b);
  c->top_in = o;
}

/* Its backward: the bottom output's gradient and each feature's. */
static int32_t dot_backward(gg_ctx *c, int32_t g) {
  gg_b *b = c->b;
  int32_t gx = gg_like(b, c->x_bot);
  gg_begin(b, "fused::dot_interaction_backward");
  gg_in(b, g);
  gg_in(b, c->x_bot);
  for (int32_t i = 0; i < c->n_feat; i++) gg_in(b, c->feat[i]);
  gg_out(b, gx);
  out_feature_grads(c);
  interaction_kernel(c, DC_KERNEL_INTERACTION_BWD);
  gg_end(b);
  return gx;
}

/* x0 = [bottom output] + features, flat [B, N] in the activation dtype. */
static int32_t concat(gg_ctx *c) {
  gg_b *b = c->b;
  dc_dtype t = act_dtype(c);
  int32_t o = gg_t2(b, t, c->batch, dc_point_x0_width(c->p));
  gg_begin(b, "fused::concat");
  gg_in(b, c->x_bot);
  for (int32_t i = 0; i < c->n_feat; i++) gg_in(b, c->feat[i]);
  gg_out(b, o);
  gg_copy(b, DC_KERNEL_CONCAT, gg_mul(b, gg_numel(b, o), gg_es(t)), false);
  gg_end(b);
  return o;
}

/* The concat's backward: each input's slice is a view (no kernel). */
static int32_t concat_backward(gg_ctx *c, int32_t g) {
  gg_b *b = c->b;
  int32_t gx = gg_like(b, c->x_bot);
  gg_begin(b, "fused::concat_backward");
  gg_in(b, g);
  gg_out(b, gx);
  out_feature_grads(c);
  gg_end(b);
  return gx;
}

/* One cross layer, x_{l+1} = x0 ⊙ (x_l·Wᵀ + b) + x_l: low rank, x_l·Vᵀ
 * then ·Wᵀ; full rank, one [N, N] GEMM; then, as HugeCTR's
 * MultiCrossLayer runs it, one element-wise pass over the [B, N] output
 * adding the bias, multiplying by x0 and adding x_l (reads h, x0, x_l,
 * writes the output: 4 elements moved, 3 flops per element). */
static int32_t cross_forward(gg_ctx *c, gg_cross *L, int32_t x0, int32_t x) {
  gg_b *b = c->b;
  L->x = x;
  L->out = gg_like(b, x);
  gg_begin(b, "fused::cross_layer");
  gg_in(b, x0);
  gg_in(b, x);
  for (int32_t j = 0; j < L->n_lin; j++) gg_in(b, L->lin[j].w);
  gg_in(b, L->bias);
  gg_out(b, L->out);
  for (int32_t j = 0; j < L->n_lin; j++) {
    gg_lin *q = &L->lin[j];
    q->xg = q->x = j ? -1 : x;
    q->wg = q->w;
    gg_gemm(b, c->batch, q->out, q->in, 1, false, true, c->gdt);
  }
  int64_t es = gg_es(act_dtype(c));
  gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, L->out), 3, 4.0 * es);
  gg_end(b);
  return L->out;
}

/* Its backward, as HugeCTR's MultiCrossLayer runs it: the output
 * gradient times x0 (one element-wise pass, reading g and x0, writing the
 * GEMM's output gradient, its bias gradient reduced in the same pass),
 * per GEMM the weight's gradient then the input's, and the residual's
 * gradient added to the last dgrad (a matrix add: reads two [B, N],
 * writes one). */
static int32_t cross_backward(gg_ctx *c, gg_cross *L, int32_t g) {
  gg_b *b = c->b;
  int32_t gx = gg_like(b, L->x);
  gg_begin(b, "fused::cross_layer_backward");
  gg_in(b, g);
  gg_in(b, L->x);
  gg_out(b, gx);
  int64_t es = gg_es(act_dtype(c)), n = gg_numel(b, L->x);
  gg_ew(b, DC_KERNEL_REDUCE, n, 2, 3.0 * es);
  for (int32_t j = L->n_lin - 1; j >= 0; j--) {
    gg_lin *q = &L->lin[j];
    int32_t gw = gg_like_dtype(b, q->w, act_dtype(c));
    gg_out(b, gw);
    gg_gemm(b, q->out, q->in, c->batch, 1, true, false, c->gdt);
    gg_gemm(b, c->batch, q->in, q->out, 1, false, false, c->gdt);
    c->params[q->pw].grad = gw;
  }
  gg_ew(b, DC_KERNEL_ELEMENTWISE, n, 1, 3.0 * es);
  int32_t gb = gg_like_dtype(b, L->bias, act_dtype(c));
  gg_out(b, gb);
  gg_end(b);
  c->params[L->pb].grad = gb;
  return gx;
}

/* Sigmoid, binary cross-entropy and its gradient in one kernel; the loss
 * stays on the device (no .cpu() per step). MSE likewise. */
static int32_t loss(gg_ctx *c) {
  gg_b *b = c->b;
  int64_t out = c->p->top_mlp[c->p->n_top - 1];
  c->target = gg_t2(b, F32, c->batch, out); /* prefetched with the batch */
  c->loss = gg_t0(b, F32);
  int32_t gz = gg_like(b, c->z);
  b->phase = DC_PHASE_LOSS;
  bool mse = c->p->loss == DC_LOSS_MSE;
  gg_begin(b, mse ? "fused::mse_loss" : "fused::bce_loss");
  gg_in(b, c->z);
  gg_in(b, c->target);
  gg_out(b, c->loss);
  gg_out(b, gz);
  int es = gg_es(b->ts[c->z].dtype);
  /* reads z and the target, writes the gradient; sigmoid (4) + loss (7 or
   * 3) + gradient (4 or 1) flops per element */
  gg_ew(b, DC_KERNEL_REDUCE, gg_numel(b, c->z), mse ? 4 : 15,
        2.0 * es + 4);
  gg_end(b);
  return gz;
}

/* Whether param q's gradient goes through the one flat all-reduce: the
 * dense parameters and the data-parallel tables' replicas. */
static bool reduced(const gg_param *q) { return q->table < 0 || q->dense; }

/* The dense gradients in one flat all-reduce in the model's precision
 * (HugeCTR, apex DDP with one bucket), the data-parallel tables' replica
 * gradients with them (HugeCTR's grouped all-reduce; dc_dp_grad_grouped):
 * one collective's latency for all of them. */
static void allreduce(gg_ctx *c) {
  gg_b *b = c->b;
  int64_t elems = 0;
  for (int32_t q = 0; q < c->n_params; q++)
    if (reduced(&c->params[q])) elems += gg_numel(b, c->params[q].t);
  int32_t buf = gg_t1(b, act_dtype(c), elems);
  gg_begin(b, "nccl:all_reduce");
  for (int32_t q = 0; q < c->n_params; q++)
    if (reduced(&c->params[q]) && c->params[q].grad >= 0)
      gg_in(b, c->params[q].grad);
  gg_out(b, buf);
  gg_coll(c, DC_KERNEL_ALL_REDUCE, gg_mul(b, elems, gg_es(act_dtype(c))),
          c->n_ranks, gg_world_hosts(c), b->coll_next++);
  gg_end(b);
  for (int32_t q = 0; q < c->n_params; q++)
    if (reduced(&c->params[q])) c->params[q].bucket = buf;
}

/* Every dense parameter (and data-parallel table) updated by one
 * multi-tensor kernel: the optimizer's recipe summed (optim.c). */
static void step(gg_ctx *c) {
  gg_b *b = c->b;
  double flops = 0, bytes = 0;
  dc_optimizer_cost(c->p->optimizer, &flops, &bytes);
  int64_t elems = 0;
  gg_begin(b, "fused::optimizer_step");
  for (int32_t q = 0; q < c->n_params; q++) {
    const gg_param *pq = &c->params[q];
    if (pq->table >= 0 && !pq->dense) continue;
    elems += gg_numel(b, pq->t);
    gg_in(b, pq->t);
    int32_t g = pq->bucket >= 0 ? pq->bucket : pq->grad;
    if (g >= 0) gg_in(b, g);
    gg_out(b, gg_like(b, pq->t));
  }
  if (elems > 0) gg_ew(b, DC_KERNEL_ELEMENTWISE, elems, flops, bytes);
  gg_end(b);
}

void gg_build_fused(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  int32_t first = b->n_ops;
  gg_build_input(c);
  gg_prefetched(b, first, true);
  /* HugeCTR's data reader issues the next batch's copies from its own
   * threads: the training thread only launches the graph */
  for (int32_t j = first; j < b->n_ops; j++) b->ops[j].loader = true;

  b->captured = true;
  b->phase = DC_PHASE_FORWARD;
  int32_t x = c->dense;
  for (int32_t i = 0; i < c->k; i++) x = linear(c, &c->bot[i], x, i > 0, 1);
  c->x_bot = x;
  gg_embeddings(c);
  c->gfeat = dc_arena_array(c->s, (size_t)c->n_feat + 1, sizeof(int32_t));
  if (p->interaction == DC_INTERACTION_DOT) {
    dot_forward(c);
  } else {
    c->cat1 = concat(c);
    x = c->cat1;
    for (int32_t l = 0; l < c->n_cross; l++)
      x = cross_forward(c, &c->cross[l], c->cat1, x);
    c->top_in = x;
  }
  x = c->top_in;
  for (int32_t i = 0; i < c->m; i++)
    x = linear(c, &c->top[i], x, true, i < c->m - 1);
  c->z = x;
  int32_t g = loss(c);

  b->phase = DC_PHASE_BACKWARD;
  for (int32_t i = c->m - 1; i >= 0; i--)
    g = linear_backward(c, &c->top[i], g);
  if (p->interaction == DC_INTERACTION_DOT) {
    g = dot_backward(c, g);
  } else {
    for (int32_t l = c->n_cross - 1; l >= 0; l--)
      g = cross_backward(c, &c->cross[l], g);
    g = concat_backward(c, g);
  }
  /* the bottom output's gradient goes on to the bottom MLP */
  c->bno = dc_arena_array(c->s, (size_t)c->n_params + 1, sizeof(int32_t));
  for (int32_t q = 0; q < c->n_params; q++) c->bno[q] = -1;
  if (c->sharded) {
    /* HugeCTR's intra-iteration overlap: the exchange's backward is
     * issued first, the bottom MLP's backward and the dense all-reduce
     * (behind it on the communication stream) run while the embedding
     * backward waits for the exchange, and only the optimizer step waits
     * for the all-reduce. */
    gg_exchange_backward(c);
    for (int32_t i = c->k - 1; i >= 0; i--)
      g = linear_backward(c, &c->bot[i], g);
    gg_embedding_backward_part(c, GG_EMB_DP);
    allreduce(c);
    gg_embedding_backward_part(c, GG_EMB_SHARDED);
  } else {
    c->eg = c->gfeat;
    gg_embedding_backward(c);
    for (int32_t i = c->k - 1; i >= 0; i--)
      g = linear_backward(c, &c->bot[i], g);
  }
  (void)g;

  b->phase = DC_PHASE_OPTIMIZER;
  step(c);
  b->captured = false;
}
