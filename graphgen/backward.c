/*
 * backward.c — the seed gradient and the backward pass of one rank, in the
 * order PyTorch's autograd engine runs it (spec/frameworks.md).
 *
 * The engine runs the ready node with the highest sequence number first
 * (the one created last in the forward), and AccumulateGrad before any
 * other; that gives, per Linear layer, AddmmBackward0, AccumulateGrad
 * (bias), TBackward0, AccumulateGrad (weight), and under autocast
 * AddmmBackward0, TBackward0, ToCopyBackward0, AccumulateGrad (bias),
 * ToCopyBackward0, AccumulateGrad (weight) — the casts of the weight and
 * bias were made before `t()`. The table gradients are sparse (no dense
 * [E, D] tensor); the batched lookup's backward applies the optimizer
 * itself (FBGEMM's table-batched embedding), so it has no AccumulateGrad.
 *
 * Multi-GPU: the embeddings' gradients go back to their owners through an
 * all-to-all before the lookups' backward; each dense gradient reaches
 * DDP's hook in its AccumulateGrad, and the all-reduce of a bucket is
 * launched inside the AccumulateGrad that completes it. Buckets are filled
 * in reverse registration order, separately for the bottom and the top MLP
 * (the reference wraps each in its own DDP), and a bucket closes once it
 * holds at least ddp_bucket_bytes (DDP's rule: the last tensor may make it
 * exceed the cap).
 *
 * The linear layers' backward and AccumulateGrad are linear.c's (the
 * cross network shares them). GEMMs of BmmBackward0 of Z = T·T^T
 * (T [B, F, D]):
 *   gA[F, D] = gZ[F, F] · T[F, D]                        m=F n=D k=F
 *   gB[D, F] = T^T[D, F] · gZ[F, F]                      m=D n=F k=F, ta
 */
#include "graphgen/graphgen_int.h"

#define F32 DC_DTYPE_FP32

/* The params of MLP L[0..n) in the order their gradients arrive: layer
 * by layer from the last, bias then weight. */
static int32_t mlp_arrival(const gg_lin *L, int32_t n, int32_t *out) {
  int32_t k = 0;
  for (int32_t i = n - 1; i >= 0; i--) {
    if (L[i].pb >= 0) out[k++] = L[i].pb;
    out[k++] = L[i].pw;
  }
  return k;
}

/* Fills DDP buckets from params qs[0..n) in arrival order: bucket number
 * into bno, the param that completes a bucket gets bucket_last and
 * bucket_elems. A bucket closes once it holds at least its cap (DDP's
 * rule: the last tensor may make it exceed the cap); the first bucket's
 * cap is `first`. */
static void fill_buckets(gg_ctx *c, const int32_t *qs, int32_t n,
                         int64_t first, int64_t cap, int32_t *bno,
                         int32_t *nb) {
  int64_t elems = 0, lim = first; /* fp32 gradients: 4 bytes each */
  int32_t last = -1;
  for (int32_t j = 0; j < n; j++) {
    int32_t q = qs[j];
    bno[q] = *nb;
    elems += gg_numel(c->b, c->params[q].t);
    last = q;
    if (elems * 4 >= lim) {
      c->params[q].bucket_last = (*nb)++;
      c->params[q].bucket_elems = elems;
      elems = 0;
      last = -1;
      lim = cap;
    }
  }
  if (last >= 0) {
    c->params[last].bucket_last = (*nb)++;
    c->params[last].bucket_elems = elems;
  }
}

/* DDP buckets: bno[q] is the bucket number of dense param q (-1: none).
 * Stock DLRM wraps the bottom and the top MLP (with the cross net) in a
 * DDP each; TorchRec's DistributedModelParallel wraps the whole dense
 * part in one, whose first bucket is capped at DDP's first-bucket size
 * (1 MiB) and the rest at ddp_bucket_bytes. Order: the order DDP
 * rebuilds its buckets in after the first iterations, the gradients'
 * arrival (top MLP, cross net layer by layer from the last: bias, W, V,
 * bottom MLP). */
static void assign_buckets(gg_ctx *c, int32_t *bno) {
  int64_t cap = c->p->ddp_bucket_bytes > 0 ? c->p->ddp_bucket_bytes
                                           : 25 * 1000 * 1000;
  int32_t nb = 0;
  for (int32_t q = 0; q < c->n_params; q++) bno[q] = -1;
  int32_t *qs = dc_arena_array(c->s, (size_t)c->n_params + 1,
                               sizeof(int32_t));
  int32_t n = mlp_arrival(c->top, c->m, qs);
  for (int32_t l = c->n_cross - 1; l >= 0; l--) {
    const gg_cross *x = &c->cross[l];
    if (x->pb >= 0) qs[n++] = x->pb;
    for (int32_t i = x->n_lin - 1; i >= 0; i--) qs[n++] = x->lin[i].pw;
  }
  if (c->trec) {
    n += mlp_arrival(c->bot, c->k, qs + n);
    int64_t first = GG_DDP_FIRST_BUCKET < cap ? GG_DDP_FIRST_BUCKET : cap;
    fill_buckets(c, qs, n, first, cap, bno, &nb);
    return;
  }
  fill_buckets(c, qs, n, cap, cap, bno, &nb);
  n = mlp_arrival(c->bot, c->k, qs);
  fill_buckets(c, qs, n, cap, cap, bno, &nb);
}

static int32_t act_backward(gg_ctx *c, gg_lin *L, int32_t g) {
  gg_b *b = c->b;
  int32_t o = gg_like(b, L->act);
  int es = gg_es(b->ts[L->act].dtype);
  gg_begin(b, L->sigmoid ? EV("SigmoidBackward0") : EV("ReluBackward0"));
  gg_in(b, g);
  gg_out(b, o);
  gg_begin(b, L->sigmoid ? "aten::sigmoid_backward"
                         : "aten::threshold_backward");
  gg_in(b, g);
  gg_in(b, L->act);
  gg_out(b, o);
  if (L->sigmoid)
    gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, o), 2, 2.0 * es);
  else
    gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, o), 1, 2.0 * es);
  gg_end(b);
  gg_end(b);
  return o;
}

/* A cat's backward hands each input its slice of the gradient: a view
 * (aten::narrow, no kernel). */
static void narrow(gg_b *b, int32_t g, int32_t view) {
  gg_begin(b, "aten::narrow");
  gg_in(b, g);
  gg_out(b, view);
  gg_end(b);
}

/* CatBackward0 of the first cat ([x] + ly): views for every input, plus
 * the add of x's two gradients when x also fed the second cat (gxa). */
int32_t gg_cat_backward(gg_ctx *c, int32_t gcat, int32_t gxa) {
  gg_b *b = c->b;
  int64_t B = c->batch, D = c->D;
  int32_t gpart = gg_t2(b, b->ts[c->x_cat].dtype, B, D);
  c->gfeat = dc_arena_array(c->s, (size_t)c->n_feat + 1, sizeof(int32_t));
  for (int32_t i = 0; i < c->n_feat; i++) c->gfeat[i] = gg_like(b, c->feat[i]);
  bool add_here = gxa >= 0 && !c->x_cat_cast;
  int32_t gsum = add_here ? gg_like(b, c->x_bot) : -1;
  gg_begin(b, EV("CatBackward0"));
  gg_in(b, gcat);
  gg_out(b, gpart);
  for (int32_t i = 0; i < c->n_feat; i++) gg_out(b, c->gfeat[i]);
  if (add_here) gg_out(b, gsum);
  narrow(b, gcat, gpart);
  for (int32_t i = 0; i < c->n_feat; i++) narrow(b, gcat, c->gfeat[i]);
  if (add_here) {
    gg_begin(b, "aten::add");
    gg_in(b, gxa);
    gg_in(b, gpart);
    gg_out(b, gsum);
    gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_mul(b, B, D), 1,
          3.0 * gg_es(b->ts[gsum].dtype));
    gg_end(b);
  }
  gg_end(b);
  if (!c->x_cat_cast) return add_here ? gsum : gpart;
  /* autocast: x was cast to fp32 for the cat; its ToCopyBackward0 casts
   * back and, if x fed the second cat too, adds the two gradients */
  dc_dtype xt = b->ts[c->x_bot].dtype;
  int32_t o = gg_like_dtype(b, gpart, xt);
  gg_begin(b, EV("ToCopyBackward0"));
  gg_in(b, gpart);
  if (gxa >= 0) gg_in(b, gxa);
  gg_out(b, o);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_mul(b, B, D), 0, 4.0 + gg_es(xt));
  if (gxa >= 0)
    gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_mul(b, B, D), 1, 3.0 * gg_es(xt));
  gg_end(b);
  return o;
}

/* aten::bmm out[b, m, n] = x · y (x transposed view when ta). */
static void bmm(gg_ctx *c, int32_t x, int32_t y, int32_t out, int64_t m,
                int64_t n, int64_t k, int64_t batch, bool ta) {
  gg_b *b = c->b;
  gg_begin(b, "aten::bmm");
  gg_in(b, x);
  gg_in(b, y);
  gg_out(b, out);
  gg_gemm(b, m, n, k, batch, ta, false, c->gdt);
  gg_end(b);
}

static int32_t dot_backward(gg_ctx *c, int32_t g) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  int64_t B = c->batch, F = c->F, D = c->D, NI = c->NI;
  dc_dtype zt = b->ts[c->bmm_out].dtype;
  int es = gg_es(zt);
  int64_t bff = gg_mul3(b, B, F, F);

  int32_t gxa = gg_like(b, c->x_bot);
  int32_t gzf = gg_like(b, c->idx_out);
  gg_begin(b, EV("CatBackward0"));
  gg_in(b, g);
  gg_out(b, gxa);
  gg_out(b, gzf);
  narrow(b, g, gxa);
  narrow(b, g, gzf);
  gg_end(b);

  int32_t zz = gg_like(b, c->bmm_out);
  int32_t gZ = gg_like(b, c->bmm_out);
  gg_begin(b, EV("IndexBackward0"));
  gg_in(b, gzf);
  gg_out(b, gZ);
  gg_begin(b, "aten::new_zeros");
  gg_in(b, gzf);
  gg_out(b, zz);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, bff, 0, 2.0 * es);
  gg_end(b);
  gg_begin(b, "aten::_index_put_impl_");
  gg_in(b, zz);
  gg_in(b, c->li);
  gg_in(b, c->lj);
  gg_in(b, gzf);
  gg_out(b, gZ);
  gg_tril(b, DC_KERNEL_TRIL_BWD, B, F, NI, p->interaction_self, zt,
          !c->trec);
  gg_end(b);
  gg_end(b);

  /* slice_backward: zeros of the input's size, then a copy into the slice
   * (TorchRec indexes the bmm's output directly: no slice) */
  int32_t gZ2 = c->trec ? gZ : gg_like(b, gZ);
  if (!c->trec) {
    gg_begin(b, EV("SliceBackward0"));
    gg_in(b, gZ);
    gg_out(b, gZ2);
    gg_begin(b, "aten::slice_backward");
    gg_in(b, gZ);
    gg_out(b, gZ2);
    gg_ew(b, DC_KERNEL_ELEMENTWISE, bff, 0, 2.0 * es);
    gg_ew(b, DC_KERNEL_ELEMENTWISE, bff, 0, 2.0 * es);
    gg_end(b);
    gg_end(b);
  }

  int32_t gA = gg_t3(b, zt, B, F, D);
  int32_t gB = gg_t3(b, zt, B, D, F);
  gg_begin(b, EV("BmmBackward0"));
  gg_in(b, gZ2);
  gg_out(b, gA);
  gg_out(b, gB);
  /* gA = gZ·(mat2ᵀ = T), gB = Tᵀ·gZ. TorchRec's traces (torch 2.14,
   * tests/fixtures/torchrec) compute mat2's gradient first; the stock
   * style keeps the order of its recorded graphs. */
  if (!c->trec) bmm(c, gZ2, c->bmm_a, gA, F, D, F, B, false);
  bmm(c, gg_t_view(b, c->bmm_a), gZ2, gB, D, F, F, B, true);
  if (c->trec) bmm(c, gZ2, c->bmm_a, gA, F, D, F, B, false);
  gg_end(b);
  if (c->bmm_cast) {
    gB = gg_to_copy_backward(b, gB, F32);
    gA = gg_to_copy_backward(b, gA, F32);
  }

  /* T feeds the bmm twice: the transposed gradient is added to the other */
  int32_t gT = gg_like(b, c->view1);
  gg_begin(b, EV("TransposeBackward0"));
  gg_in(b, gB);
  gg_out(b, gT);
  gg_begin(b, "aten::add");
  gg_in(b, gA);
  gg_in(b, gB);
  gg_out(b, gT);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_mul3(b, B, F, D), 1, 3.0 * 4);
  gg_end(b);
  gg_end(b);

  /* the sum is laid out like the transposed operand, so the view's
   * backward (reshape) copies it into [B, F·D] order: a batched transpose */
  int32_t gflat = gg_like(b, c->cat1);
  gg_begin(b, EV("ViewBackward0"));
  gg_in(b, gT);
  gg_out(b, gflat);
  gg_begin(b, "aten::reshape");
  gg_in(b, gT);
  gg_out(b, gflat);
  dc_launch *l = gg_launch(b, DC_KERNEL_TRANSPOSE, GG_STREAM_COMPUTE);
  l->k.u.mat.batch = B;
  l->k.u.mat.m = D;
  l->k.u.mat.n = F;
  l->k.u.mat.dtype = F32;
  gg_end(b);
  gg_end(b);
  return gg_cat_backward(c, gflat, gxa);
}

void gg_embedding_backward(gg_ctx *c) {
  gg_embedding_backward_part(c, GG_EMB_ALL);
}

void gg_embedding_backward_part(gg_ctx *c, gg_emb_part part) {
  gg_b *b = c->b;
  if (c->n_local == 0) return;
  if (c->batched) {
    for (int32_t k = 0; k < GG_N_CLS; k++)
      if (part == GG_EMB_ALL || (part == GG_EMB_DP) == (k == GG_CLS_DP))
        gg_lookup_class_backward(c, k);
    return;
  }
  for (int32_t i = c->n_local - 1; i >= 0; i--) {
    int32_t t = c->local[i];
    bool dense = c->sharded && i >= c->cls_first[GG_CLS_DP];
    if (part != GG_EMB_ALL && (part == GG_EMB_DP) != dense) continue;
    int32_t k = dense ? GG_CLS_DP : GG_CLS_A2A;
    /* sparse: one row per lookup; dense (data-parallel): the whole
     * replica, zero-filled first (embedding_bag_dense_backward) */
    int32_t sg = dense ? gg_like(b, c->w_tab[t])
                       : gg_t2(b, F32, c->n_idx[t], c->sh_cols[t]);
    gg_begin(b, EV("EmbeddingBagBackward0"));
    gg_in(b, c->eg[i]);
    gg_out(b, sg);
    gg_begin(b, "aten::_embedding_bag_backward");
    gg_in(b, c->eg[i]);
    gg_in(b, c->idx[i]);
    gg_in(b, c->offs_t[i]);
    gg_out(b, sg);
    if (dense) gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, sg), 0, 4);
    gg_emb_kernel(c, DC_KERNEL_EMBEDDING_BWD, &c->local[i], 1,
                  c->cls_batch[k], false);
    gg_end(b);
    gg_end(b);
    gg_accumulate(c, c->p_tab[t], sg);
  }
}

int32_t gg_backward_seed(gg_ctx *c) {
  gg_b *b = c->b;
  b->phase = DC_PHASE_BACKWARD;
  b->thread = 0;
  int32_t seed = gg_t0(b, F32);
  gg_begin(b, "aten::ones_like");
  gg_in(b, c->loss);
  gg_out(b, seed);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, 1, 0, 2.0 * 4);
  gg_end(b);
  return seed;
}

void gg_build_backward(gg_ctx *c) {
  gg_build_backward_from(c, gg_backward_seed(c));
}

void gg_build_backward_from(gg_ctx *c, int32_t seed) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  b->phase = DC_PHASE_BACKWARD;

  b->thread = 1; /* the autograd engine's device thread */
  int32_t *bno = dc_arena_array(c->s, (size_t)c->n_params, sizeof(int32_t));
  if (c->sharded) assign_buckets(c, bno);
  else
    for (int32_t q = 0; q < c->n_params; q++) bno[q] = -1;
  c->bno = bno;

  bool mse = p->loss == DC_LOSS_MSE, logits = c->trec && !mse;
  int32_t gz = gg_like(b, c->z_loss);
  gg_begin(b, mse      ? EV("MseLossBackward0")
              : logits ? EV("BinaryCrossEntropyWithLogitsBackward0")
                       : EV("BinaryCrossEntropyBackward0"));
  gg_in(b, seed);
  gg_out(b, gz);
  gg_begin(b, mse      ? "aten::mse_loss_backward"
              : logits ? "aten::binary_cross_entropy_with_logits_backward"
                       : "aten::binary_cross_entropy_backward");
  gg_in(b, seed);
  gg_in(b, c->z_loss);
  gg_in(b, c->target);
  gg_out(b, gz);
  if (mse)
    gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, gz), 1, 3.0 * 4);
  else
    gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, gz), 4, 3.0 * 4);
  gg_end(b);
  gg_end(b);
  int32_t g = gz;
  if (c->z_cast) g = gg_to_copy_backward(b, gz, b->ts[c->z].dtype);

  for (int32_t i = c->m - 1; i >= 0; i--) {
    if (!(c->trec && i == c->m - 1)) g = act_backward(c, &c->top[i], g);
    g = gg_linear_backward(c, &c->top[i], g, -1);
  }
  if (p->interaction == DC_INTERACTION_DOT)
    g = dot_backward(c, g);
  else if (p->interaction == DC_INTERACTION_DCN)
    g = gg_cat_backward(c, gg_cross_backward(c, g), -1);
  else
    g = gg_cat_backward(c, g, -1);
  if (c->sharded && c->trec) {
    gg_trec_dist_backward(c); /* with the lookups' backward */
  } else if (c->sharded) {
    gg_exchange_backward(c);
    gg_embedding_backward(c);
  } else {
    /* one GPU: the lookups' gradients come straight from the interaction */
    c->eg = c->gfeat;
    gg_embedding_backward(c);
  }
  for (int32_t i = c->k - 1; i >= 0; i--) {
    g = act_backward(c, &c->bot[i], g);
    g = gg_linear_backward(c, &c->bot[i], g, -1);
  }
  b->thread = 0;
}
