/*
 * forward.c — the parameters, the host-to-device copies of the batch, the
 * forward pass and the loss of one rank, op for op as stock PyTorch runs
 * facebookresearch/dlrm's DLRM_Net (spec/frameworks.md):
 *
 *   aten::to ×T (indices), aten::to (offsets), aten::to (dense)
 *   [aten::linear, aten::relu] ×k                       bottom MLP
 *   aten::embedding_bag ×T   | LookupFunction           embeddings
 *   c10d::alltoall_base_                                 (multi-GPU only)
 *   dot: aten::cat, aten::view, aten::transpose, aten::bmm,
 *        (aten::empty, aten::to, aten::lift_fresh, aten::detach_) ×2,
 *        aten::slice, aten::index, aten::cat
 *   cat: aten::cat
 *   [aten::linear, aten::relu] ×(m−1), aten::linear, aten::sigmoid
 *   aten::to (targets), [aten::broadcast_tensors,] aten::mse_loss |
 *   aten::binary_cross_entropy, aten::detach, aten::to (.cpu(): sync)
 *
 * Element-wise kernels carry (flops, accesses) per element from the
 * authors' implementation (owensgroup/ml_perf_model): relu (1, 2),
 * sigmoid (4, 2), mse_loss (3, 3), binary_cross_entropy (7, 3), copies and
 * casts 2 accesses; bytes = accesses × element size of the dtype involved
 * (a cast reads one size and writes the other).
 *
 * Autocast (fp16/bf16): aten::linear and aten::bmm cast their fp32
 * arguments (weights every iteration) and run in half precision; relu,
 * sigmoid, index and a cat of half tensors stay half; a cat mixing half
 * and fp32 promotes to fp32 (the half input is cast); the losses run in
 * fp32 (their input is cast). Embedding tables and the optimizer stay
 * fp32. Casts are `aten::to` children of the op whose autocast wrapper
 * makes them, and the GEMM then runs in a nested child of the same name,
 * as the dispatcher records it. (PyTorch refuses binary_cross_entropy
 * under autocast; we model the fp32 loss a user must write instead.)
 */
#include "graphgen/internal.h"

#define F32 DC_DTYPE_FP32
#define I64 DC_DTYPE_INT64

/* Host-to-device copy of a host tensor: aten::to with one memcpy. */
int32_t gg_h2d(gg_b *b, int32_t host) {
  int32_t dev = gg_like(b, host);
  b->ts[dev].on_host = false;
  gg_begin(b, "aten::to");
  gg_in(b, host);
  gg_out(b, dev);
  gg_copy(b, DC_KERNEL_MEMCPY_H2D,
          gg_mul(b, gg_numel(b, host), gg_es(b->ts[host].dtype)), false);
  gg_end(b);
  return dev;
}

int32_t gg_host_t2(gg_b *b, dc_dtype t, int64_t d0, int64_t d1) {
  int32_t x = gg_t2(b, t, d0, d1);
  b->ts[x].on_host = true;
  return x;
}

int32_t gg_host_t1(gg_b *b, dc_dtype t, int64_t d0) {
  int32_t x = gg_t1(b, t, d0);
  b->ts[x].on_host = true;
  return x;
}

/* Parameters in registration order: tables (emb_l), bottom MLP, the cross
 * net (dcn), top MLP, as DLRM_Net.__init__ (DLRM_DCN) creates them; that
 * order drives zero_grad and the optimizer loop. */
void gg_declare_params(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  int32_t T = p->n_tables;
  /* the tables follow the sparse optimizer, their state stays fp32 */
  dc_optimizer so = p->sparse_optimizer;
  bool s_adagrad = so == DC_OPTIMIZER_ADAGRAD ||
                   so == DC_OPTIMIZER_ROWWISE_ADAGRAD;
  bool s_adam = so == DC_OPTIMIZER_ADAM;
  dc_dtype edt = dc_storage_dtype(p->embedding_precision);
  c->w_tab = dc_arena_array(c->s, (size_t)T, sizeof(int32_t));
  c->p_tab = dc_arena_array(c->s, (size_t)T, sizeof(int32_t));
  c->st_tab[0] = dc_arena_array(c->s, (size_t)T, sizeof(int32_t));
  c->st_tab[1] = dc_arena_array(c->s, (size_t)T, sizeof(int32_t));
  c->n_idx = dc_arena_array(c->s, (size_t)T, sizeof(int64_t));
  int64_t dp_elems = 0;
  for (int32_t i = 0; i < c->n_local; i++) {
    int32_t t = c->local[i];
    const dc_table *tb = &p->tables[t];
    (void)tb;
    bool dp = c->sharded && i >= c->cls_first[GG_CLS_DP];
    int64_t batch = c->cls_batch[dp ? GG_CLS_DP : GG_CLS_A2A];
    c->w_tab[t] = gg_t2(b, edt, c->sh_rows[t], c->sh_cols[t]);
    c->n_idx[t] = gg_lookups(b, batch, c->sh_pool[t]);
    int32_t s0 = -1, s1 = -1;
    if (s_adagrad) {
      s0 = so == DC_OPTIMIZER_ROWWISE_ADAGRAD
               ? gg_t1(b, F32, c->sh_rows[t])
               : gg_like_dtype(b, c->w_tab[t], F32);
    } else if (s_adam) {
      s0 = gg_like_dtype(b, c->w_tab[t], F32);
      s1 = gg_like_dtype(b, c->w_tab[t], F32);
    }
    c->st_tab[0][t] = s0;
    c->st_tab[1][t] = s1;
    c->p_tab[t] = -1;
    if (c->trec && dp) {
      /* TorchRec: one flat weight for the data-parallel group (below) */
      dp_elems += gg_mul(b, c->sh_rows[t], c->sh_cols[t]);
    } else if (!c->batched || dp) {
      int32_t q = gg_param_add(c, c->w_tab[t], t);
      c->params[q].rows = dp ? c->sh_rows[t] : c->n_idx[t];
      c->params[q].dense = dp;
      c->params[q].state[0] = s0;
      c->params[q].state[1] = s1;
      c->p_tab[t] = q;
    }
  }
  if (dp_elems > 0) {
    /* TorchRec's data-parallel tables: FBGEMM's dense table-batched
     * module holds them in one weight tensor, a dense parameter that DDP
     * all-reduces on its own and the dense optimizer updates (its state
     * the dense optimizer's, like the weight) */
    int32_t q = gg_param_dense(c, gg_t1(b, edt, dp_elems));
    c->params[q].dense = true;
    c->params[q].rows = dp_elems;
    for (int32_t i = c->cls_first[GG_CLS_DP]; i < c->n_local; i++)
      c->p_tab[c->local[i]] = q;
  }
  c->bot = dc_arena_array(c->s, (size_t)c->k, sizeof(gg_lin));
  c->top = dc_arena_array(c->s, (size_t)c->m, sizeof(gg_lin));
  for (int32_t pass = 0; pass < 2; pass++) {
    if (pass == 1) gg_cross_declare(c);
    int32_t n = pass ? c->m : c->k;
    gg_lin *L = pass ? c->top : c->bot;
    for (int32_t i = 0; i < n; i++) {
      L[i].out = pass ? p->top_mlp[i] : p->bottom_mlp[i + 1];
      L[i].in = pass ? 0 : p->bottom_mlp[i]; /* top[0].in: interaction */
      if (pass && i > 0) L[i].in = p->top_mlp[i - 1];
      if (pass && i == 0) L[i].in = dc_point_top_in(p);
      L[i].w = gg_t2(b, F32, L[i].out, L[i].in);
      L[i].bias = gg_t1(b, F32, L[i].out);
      L[i].pw = gg_param_dense(c, L[i].w);
      L[i].pb = gg_param_dense(c, L[i].bias);
      L[i].sigmoid = pass && i == c->m - 1;
      L[i].act = -1;
    }
  }
}

void gg_build_input(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  gg_declare_params(c);
  b->phase = DC_PHASE_INPUT;
  int32_t T = p->n_tables;
  c->idx = dc_arena_array(c->s, (size_t)T, sizeof(int32_t));
  c->offs_t = dc_arena_array(c->s, (size_t)T, sizeof(int32_t));
  /* one index tensor per lookup (batched: per class) and the offsets of
   * each class, as [n, batch] (per_table) or n·batch + 1 (batched) */
  for (int32_t k = 0; k < GG_N_CLS; k++) {
    int32_t lo = c->cls_first[k], hi = c->cls_first[k + 1];
    int64_t batch = c->cls_batch[k];
    c->idx_cls[k] = c->offs_cls[k] = c->out_cls[k] = -1;
    if (lo == hi) continue;
    if (c->batched) {
      int64_t total = 0;
      for (int32_t i = lo; i < hi; i++) total += c->n_idx[c->local[i]];
      c->idx_cls[k] = gg_h2d(b, gg_host_t1(b, I64, total));
      c->offs_cls[k] =
          gg_h2d(b, gg_host_t1(b, I64, gg_mul(b, hi - lo, batch) + 1));
    } else {
      for (int32_t i = lo; i < hi; i++) {
        int32_t t = c->local[i];
        c->idx[i] = gg_h2d(b, gg_host_t1(b, I64, c->n_idx[t]));
      }
      c->offs_cls[k] = gg_h2d(b, gg_host_t2(b, I64, hi - lo, batch));
      /* lS_o[k]: a [B] view of the stacked offsets per table */
      for (int32_t i = lo; i < hi; i++) {
        c->offs_t[i] = gg_t1(b, I64, batch);
        b->ts[c->offs_t[i]].producer = b->ts[c->offs_cls[k]].producer;
      }
    }
  }
  c->dense_h = gg_host_t2(b, F32, c->batch, p->bottom_mlp[0]);
  c->dense = gg_h2d(b, c->dense_h);
}

static void activation(gg_ctx *c, gg_lin *L) {
  gg_b *b = c->b;
  L->act = gg_like(b, L->y);
  int es = gg_es(b->ts[L->y].dtype);
  gg_begin(b, L->sigmoid ? "aten::sigmoid" : "aten::relu");
  gg_in(b, L->y);
  gg_out(b, L->act);
  if (L->sigmoid)
    gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, L->y), 4, 2.0 * es);
  else
    gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, L->y), 1, 2.0 * es);
  gg_end(b);
}

void gg_embeddings(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  int32_t T = p->n_tables;
  c->emb_out = dc_arena_array(c->s, (size_t)T + 1, sizeof(int32_t));
  c->n_emb_out = 0;
  if (c->trec) gg_tbe_dist(c);
  for (int32_t k = 0; k < GG_N_CLS; k++) {
    int32_t lo = c->cls_first[k], hi = c->cls_first[k + 1];
    int64_t batch = c->cls_batch[k];
    if (lo == hi) continue;
    if (c->trec) gg_tbe_inputs(c, k);
    int32_t slots = c->trec ? gg_tbe_prefetch(c, k) : -1;
    if (c->batched) {
      int64_t w = 0;
      for (int32_t i = lo; i < hi; i++) w += c->sh_cols[c->local[i]];
      int32_t o = gg_t2(b, F32, batch, w);
      const char *op = "LookupFunction";
      if (c->trec && k == GG_CLS_DP && c->sharded)
        op = "fbgemm::dense_embedding_codegen_lookup_function";
      else if (c->trec)
        op = gg_tbe_name(p->sparse_optimizer, false);
      gg_begin(b, op);
      if (c->trec && k == GG_CLS_DP && c->sharded)
        gg_in(b, c->params[c->p_tab[c->local[lo]]].t);
      else
        for (int32_t i = lo; i < hi; i++) gg_in(b, c->w_tab[c->local[i]]);
      gg_in(b, c->idx_cls[k]);
      gg_in(b, c->offs_cls[k]);
      if (slots >= 0) gg_in(b, slots); /* the cache's (uvm_graph.c) */
      gg_out(b, o);
      gg_emb_kernel(c, DC_KERNEL_EMBEDDING_FWD, &c->local[lo], hi - lo,
                    batch, false);
      /* prefetched: the lookup alone (kernels/uvm.c's parts) */
      if (slots >= 0) b->lns[b->n_lns - 1].k.u.emb.part = DC_EMB_LOOKUP;
      gg_end(b);
      c->out_cls[k] = o;
      c->emb_out[c->n_emb_out++] = o;
    } else {
      for (int32_t i = lo; i < hi; i++) {
        int32_t t = c->local[i];
        int32_t o = gg_t2(b, F32, batch, c->sh_cols[t]);
        gg_begin(b, "aten::embedding_bag");
        gg_in(b, c->w_tab[t]);
        gg_in(b, c->idx[i]);
        gg_in(b, c->offs_t[i]);
        gg_out(b, o);
        gg_emb_kernel(c, DC_KERNEL_EMBEDDING_FWD, &c->local[i], 1, batch,
                      false);
        gg_end(b);
        c->emb_out[c->n_emb_out++] = o;
      }
    }
  }
  c->feat = dc_arena_array(c->s, (size_t)T + 1, sizeof(int32_t));
  c->feat_cls = dc_arena_array(c->s, (size_t)T + 1, sizeof(int32_t));
  c->n_feat = 0;
  if (!c->sharded) {
    for (int32_t i = 0; i < c->n_emb_out; i++) {
      c->feat_cls[c->n_feat] = GG_CLS_A2A;
      c->feat[c->n_feat++] = c->emb_out[i];
    }
    return;
  }
  gg_exchange_forward(c);
}

static int32_t index_list(gg_b *b, int64_t ni) {
  int32_t t0 = gg_host_t1(b, I64, ni);
  gg_begin(b, "aten::empty");
  gg_out(b, t0);
  gg_end(b);
  static const char *const steps[] = {"aten::to", "aten::lift_fresh",
                                      "aten::detach_"};
  for (size_t i = 0; i < DC_COUNTOF(steps); i++) {
    int32_t t1 = gg_like(b, t0);
    gg_begin(b, steps[i]);
    gg_in(b, t0);
    gg_out(b, t1);
    gg_end(b);
    t0 = t1;
  }
  return t0;
}

/* The first cat: [x] + ly. Under autocast a half x is cast to fp32 (cat
 * promotes), so its gradient returns through a ToCopyBackward0. */
int32_t gg_cat_features(gg_ctx *c, int64_t width) {
  gg_b *b = c->b;
  c->x_cat_cast = c->autocast && b->ts[c->x_bot].dtype != F32;
  int32_t o = gg_t2(b, F32, c->batch, width);
  gg_begin(b, "aten::cat");
  gg_in(b, c->x_bot);
  for (int32_t i = 0; i < c->n_feat; i++) gg_in(b, c->feat[i]);
  gg_out(b, o);
  c->x_cat = c->x_bot;
  if (c->x_cat_cast) {
    c->x_cat = gg_cast_child(b, c->x_bot, F32);
    gg_begin(b, "aten::cat");
    gg_in(b, c->x_cat);
    for (int32_t i = 0; i < c->n_feat; i++) gg_in(b, c->feat[i]);
    gg_out(b, o);
  }
  gg_copy(b, DC_KERNEL_CONCAT, gg_mul(b, gg_numel(b, o), 4), false);
  if (c->x_cat_cast) gg_end(b);
  gg_end(b);
  return o;
}

static void interaction(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  int64_t B = c->batch;
  int64_t D = p->bottom_mlp[p->n_bottom - 1];
  int64_t F = p->n_tables + 1;
  c->D = D;
  c->F = F;
  if (p->interaction != DC_INTERACTION_DOT) {
    c->cat1 = gg_cat_features(c, dc_point_x0_width(p));
    c->top_in = p->interaction == DC_INTERACTION_DCN
                    ? gg_cross_forward(c, c->cat1)
                    : c->cat1;
    return;
  }
  int64_t NI = p->interaction_self ? F * (F + 1) / 2 : F * (F - 1) / 2;
  c->NI = NI;
  c->cat1 = gg_cat_features(c, gg_mul(b, F, D));

  c->view1 = gg_t3(b, F32, B, F, D);
  gg_begin(b, "aten::view");
  gg_in(b, c->cat1);
  gg_out(b, c->view1);
  gg_end(b);

  c->tr = gg_t3(b, F32, B, D, F);
  gg_begin(b, "aten::transpose");
  gg_in(b, c->view1);
  gg_out(b, c->tr);
  gg_end(b);

  dc_dtype zt = c->autocast ? c->adt : F32;
  c->bmm_out = gg_t3(b, zt, B, F, F);
  gg_begin(b, "aten::bmm");
  gg_in(b, c->view1);
  gg_in(b, c->tr);
  gg_out(b, c->bmm_out);
  c->bmm_a = c->view1;
  c->bmm_b = c->tr;
  c->bmm_cast = c->autocast;
  if (c->autocast) {
    c->bmm_a = gg_cast_child(b, c->view1, c->adt);
    c->bmm_b = gg_cast_child(b, c->tr, c->adt);
    gg_begin(b, "aten::bmm");
    gg_in(b, c->bmm_a);
    gg_in(b, c->bmm_b);
    gg_out(b, c->bmm_out);
  }
  /* Z[F, F] = T[F, D] · T^T, batch B */
  gg_gemm(b, F, F, D, B, false, true, c->gdt);
  if (c->autocast) gg_end(b);
  gg_end(b);

  if (c->trec) {
    /* TorchRec's InteractionArch indexes with its triu_indices buffer,
     * resident on the device, and without a slice */
    c->li = gg_t1(b, I64, NI);
    c->lj = gg_t1(b, I64, NI);
    c->sl = c->bmm_out;
  } else {
    c->li = index_list(b, NI);
    c->lj = index_list(b, NI);
    c->sl = gg_like(b, c->bmm_out);
    gg_begin(b, "aten::slice");
    gg_in(b, c->bmm_out);
    gg_out(b, c->sl);
    gg_end(b);
  }

  c->idx_out = gg_t2(b, zt, B, NI);
  gg_begin(b, "aten::index");
  gg_in(b, c->sl);
  gg_in(b, c->li);
  gg_in(b, c->lj);
  gg_out(b, c->idx_out);
  gg_tril(b, DC_KERNEL_TRIL_FWD, B, F, NI, p->interaction_self, zt,
          !c->trec);
  gg_end(b);

  /* cat([x, Zflat]): both half under autocast, so no promotion */
  dc_dtype rt = b->ts[c->x_bot].dtype;
  if (rt != zt) rt = F32;
  int32_t o = gg_t2(b, rt, B, D + NI);
  gg_begin(b, "aten::cat");
  gg_in(b, c->x_bot);
  gg_in(b, c->idx_out);
  gg_out(b, o);
  gg_copy(b, DC_KERNEL_CONCAT, gg_mul(b, gg_numel(b, o), gg_es(rt)), false);
  gg_end(b);
  c->top_in = o;
}

void gg_build_forward(gg_ctx *c) {
  gg_b *b = c->b;
  b->phase = DC_PHASE_FORWARD;
  int32_t x = c->dense;
  for (int32_t i = 0; i < c->k; i++) {
    gg_linear(c, &c->bot[i], x, i > 0);
    activation(c, &c->bot[i]);
    x = c->bot[i].act;
  }
  c->x_bot = x;
  gg_embeddings(c);
  interaction(c);
  x = c->top_in;
  for (int32_t i = 0; i < c->m; i++) {
    gg_linear(c, &c->top[i], x, true);
    if (c->trec && i == c->m - 1) { /* TorchRec's OverArch: logits */
      x = c->top[i].y;
      break;
    }
    activation(c, &c->top[i]);
    x = c->top[i].act;
  }
  c->z = x;
}

void gg_build_loss(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  b->phase = DC_PHASE_INPUT;
  int64_t out = p->top_mlp[p->n_top - 1];
  /* TorchRec: the labels came with the batch (copy_batch_to_gpu) */
  if (!c->trec) c->target = gg_h2d(b, gg_host_t2(b, F32, c->batch, out));
  b->phase = DC_PHASE_LOSS;
  bool mse = p->loss == DC_LOSS_MSE;
  bool logits = c->trec && !mse;
  if (mse) {
    gg_begin(b, "aten::broadcast_tensors");
    gg_in(b, c->z);
    gg_in(b, c->target);
    gg_end(b);
  }
  const char *name = mse      ? "aten::mse_loss"
                     : logits ? "aten::binary_cross_entropy_with_logits"
                              : "aten::binary_cross_entropy";
  c->loss = gg_t0(b, F32);
  c->z_cast = b->ts[c->z].dtype != F32;
  gg_begin(b, name);
  gg_in(b, c->z);
  gg_in(b, c->target);
  gg_out(b, c->loss);
  c->z_loss = c->z;
  if (c->z_cast) {
    c->z_loss = gg_cast_child(b, c->z, F32);
    gg_begin(b, name);
    gg_in(b, c->z_loss);
    gg_in(b, c->target);
    gg_out(b, c->loss);
  }
  int64_t n = gg_numel(b, c->z);
  if (mse)
    gg_ew(b, DC_KERNEL_REDUCE, n, 3, 3.0 * 4);
  else /* with logits: the sigmoid's 4 flops more */
    gg_ew(b, DC_KERNEL_REDUCE, n, logits ? 11 : 7, 3.0 * 4);
  if (c->z_cast) gg_end(b);
  gg_end(b);
  if (c->trec) return; /* the pipeline returns the loss; no .cpu() */

  /* L = E.detach().cpu(): a blocking 4-byte copy */
  int32_t det = gg_like(b, c->loss);
  gg_begin(b, "aten::detach");
  gg_in(b, c->loss);
  gg_out(b, det);
  gg_end(b);
  int32_t host = gg_like(b, c->loss);
  b->ts[host].on_host = true;
  int32_t op = gg_begin(b, "aten::to");
  gg_in(b, det);
  gg_out(b, host);
  gg_copy(b, DC_KERNEL_MEMCPY_D2H, 4, false);
  b->ops[op].host_sync = true;
  gg_end(b);
}

void gg_tril(gg_b *b, dc_kernel_kind kind, int64_t batch, int64_t F,
             int64_t NI, bool diag, dc_dtype t, bool copy_idx) {
  if (copy_idx) {
    gg_copy(b, DC_KERNEL_MEMCPY_H2D, gg_mul(b, NI, 8), false);
    gg_copy(b, DC_KERNEL_MEMCPY_H2D, gg_mul(b, NI, 8), false);
  }
  dc_launch *l = gg_launch(b, kind, GG_STREAM_COMPUTE);
  l->k.u.mat.batch = batch;
  l->k.u.mat.m = F;
  l->k.u.mat.n = F;
  l->k.u.mat.diag = diag;
  l->k.u.mat.dtype = t;
}
