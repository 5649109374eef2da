/*
 * exchange.c — the collectives that move pooled embeddings between ranks
 * under a sharding plan (forward) and their gradients back (backward).
 * Only built with more than one GPU.
 *
 * Every rank needs, for its local batch B = global / W, the pooled
 * embedding of every table. Per class of shard (internal.h):
 *
 *   A2A (table_wise, column_wise): the shard pooled the global batch
 *     [B·W, cols]; the world all-to-all sends each rank its B rows.
 *   TWRW (table_row_wise on host h): each of the S ranks of h pooled the
 *     indices falling in its rows for the global batch, [B·W, D] partial
 *     sums; a reduce-scatter inside the host (NVLink) sums them and leaves
 *     each rank a [B·W/S, D] chunk, which the same world all-to-all then
 *     delivers across hosts (TorchRec's TWRW: intra-host reduce-scatter,
 *     cross-host all-to-all).
 *   RW (row_wise): partial sums [B·W, D] on every rank; one world
 *     reduce-scatter leaves each rank its [B, D] — TorchRec's RW output
 *     dist.
 *   DP (data_parallel): the replica pooled the local batch; no exchange.
 *
 * Backward mirrors it: the all-to-all returns the gradients of A2A shards
 * and of the TWRW chunks, an intra-host all-gather rebuilds a TWRW
 * shard's [B·W, D] gradient, a world all-gather an RW shard's; DP
 * gradients are all-reduced in their AccumulateGrad (linear.c).
 *
 * Byte counts follow kernels/'s convention (graphgen.h): all-to-all, the
 * rank's send buffer; reduce-scatter, its input; all-gather, its output.
 * The pooled outputs are fp32 (under autocast too, and FBGEMM's lookups
 * return fp32 whatever the tables' precision); training.comm_precision
 * sends the all-to-all's payload quantized (see comm_dtype below). The
 * row-wise reduce-scatters and all-gathers stay fp32 there; the fused
 * style keeps all of them in the model's precision (dc_pooled_wire_bytes,
 * dc_pooled_reduce_bytes).
 *
 * The input side assumes the data loader hands each rank the indices of
 * its own shards for the global batch (as the reference DLRM's loader
 * does for table-wise tables), so there is no index all-to-all.
 *
 * Collective ids: the same sequence of stages on every rank — forward
 * TWRW reduce-scatters (one id per host), the all-to-all, the RW
 * reduce-scatter; backward the all-to-all, the TWRW all-gathers (one id
 * per host), the RW all-gather — each present when the plan has tables of
 * that kind, so ranks that sit a stage out still agree on the numbering,
 * and groups of one stage are disjoint (no cross-group wait cycles).
 */
#include "graphgen/internal.h"

#define F32 DC_DTYPE_FP32

int32_t gg_class_of(dc_sharding type) {
  switch (type) {
  case DC_SHARDING_TABLE_ROW_WISE: return GG_CLS_TWRW;
  case DC_SHARDING_ROW_WISE: return GG_CLS_RW;
  case DC_SHARDING_DATA_PARALLEL: return GG_CLS_DP;
  default: return GG_CLS_A2A;
  }
}

static int32_t hosts_of(const gg_ctx *c) { return c->plan->hosts; }

/* Ranks of this rank's host. */
static int32_t host_size(const gg_ctx *c) {
  int32_t first = c->host * c->gph, n = c->gph;
  if (first + n > c->n_ranks) n = c->n_ranks - first;
  return n;
}

static bool has_a2a(const gg_ctx *c) {
  return c->plan_cls[GG_CLS_A2A] || c->plan_cls[GG_CLS_TWRW];
}

/* Σ dims of the plan's tables of class k (all ranks; A2A includes the
 * TWRW tables, which the all-to-all also carries): summed once per graph
 * (build.c), not per rank. */
static int64_t plan_dims(const gg_ctx *c, int32_t k) {
  return c->plan_dims[k] + (k == GG_CLS_A2A ? c->plan_dims[GG_CLS_TWRW] : 0);
}

/* Σ cols of this rank's shards of class k. */
static int64_t local_cols(const gg_ctx *c, int32_t k) {
  int64_t s = 0;
  for (int32_t i = c->cls_first[k]; i < c->cls_first[k + 1]; i++)
    s += c->sh_cols[c->local[i]];
  return s;
}

static int32_t n_class(const gg_ctx *c, int32_t k) {
  return c->cls_first[k + 1] - c->cls_first[k];
}

/* Inputs of the lookup outputs of class k (per_table: one per shard). */
static void in_outputs(gg_ctx *c, int32_t k) {
  if (c->batched) {
    if (c->out_cls[k] >= 0) gg_in(c->b, c->out_cls[k]);
    return;
  }
  for (int32_t i = c->cls_first[k]; i < c->cls_first[k + 1]; i++)
    gg_in(c->b, c->emb_out[i]);
}

/* What this rank sends in the forward all-to-all, as inputs of the open
 * op: its A2A shards' outputs and its TWRW chunk (or TWRW outputs). */
static void in_a2a_sends(gg_ctx *c) {
  in_outputs(c, GG_CLS_A2A);
  if (c->chunk >= 0)
    gg_in(c->b, c->chunk);
  else
    in_outputs(c, GG_CLS_TWRW);
}

static int32_t hosts_spanned(const gg_ctx *c) {
  return hosts_of(c) < 1 ? 1 : hosts_of(c);
}

/* training.comm_precision: the all-to-all's payload, as TorchRec's qcomm
 * codecs send it — FBGEMM quantizes the fp32 pooled embeddings (their
 * gradients in the backward) before the collective and dequantizes what
 * arrives, one element-wise kernel each (1 flop, 4 + q bytes). */
static dc_dtype comm_dtype(const gg_ctx *c) {
  return dc_storage_dtype(c->p->comm_precision);
}

/* The unquantized payload's dtype on the wire: fp32 pooled outputs, but
 * the fused style (HugeCTR's MLPerf DLRM-DCNv2) keeps its embeddings and
 * their gradients in the model's half precision end to end, so it sends
 * fp16/bf16 with no quantize kernels (spec/frameworks.md). */
static dc_dtype wire_dtype_of(const dc_point *p) {
  if (p->framework != DC_FRAMEWORK_FUSED) return F32;
  if (p->precision == DC_PRECISION_FP16) return DC_DTYPE_FP16;
  if (p->precision == DC_PRECISION_BF16) return DC_DTYPE_BF16;
  return F32;
}

static dc_dtype wire_dtype(const gg_ctx *c) { return wire_dtype_of(c->p); }

int dc_pooled_wire_bytes(const dc_point *p) {
  dc_dtype q = dc_storage_dtype(p->comm_precision);
  return gg_es(q != F32 ? q : wire_dtype_of(p));
}

int dc_pooled_reduce_bytes(const dc_point *p) {
  return gg_es(wire_dtype_of(p));
}

/* A data-parallel replica's gradient: the fused style sends it in the
 * model's precision with the dense gradients (fused.c's all-reduce). */
bool dc_dp_grad_grouped(const dc_point *p) {
  return p->framework == DC_FRAMEWORK_FUSED;
}

int dc_dp_grad_bytes(const dc_point *p) {
  return dc_dp_grad_grouped(p) ? gg_es(wire_dtype_of(p)) : 4;
}

static const char *quantize_name(dc_dtype t) {
  switch (t) {
  case DC_DTYPE_FP16: return "fbgemm::FloatToFP16Quantized";
  case DC_DTYPE_BF16: return "fbgemm::FloatToBfloat16Quantized";
  default: return "fbgemm::FloatToHFP8Quantized";
  }
}

static const char *dequantize_name(dc_dtype t) {
  switch (t) {
  case DC_DTYPE_FP16: return "fbgemm::FP16QuantizedToFloat";
  case DC_DTYPE_BF16: return "fbgemm::Bfloat16QuantizedToFloat";
  default: return "fbgemm::HFP8QuantizedToFloat";
  }
}

/* The features of class k (GG_CLS_A2A, which takes the TWRW tables too,
 * or GG_CLS_RW) a collective delivers to this rank: one [B, dim] per
 * table in table order, or in a PRICED graph (graphgen.h) one [B, Σ dims]
 * for the class. Appended to c->feat. */
static void received_features(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  if (b->priced) {
    c->feat_cls[c->n_feat] = k;
    c->feat[c->n_feat++] = gg_t2(b, F32, c->batch, plan_dims(c, k));
    return;
  }
  for (int32_t t = 0; t < c->p->n_tables; t++) {
    int32_t cls = gg_class_of(c->plan->tables[t].type);
    if (cls == GG_CLS_TWRW) cls = GG_CLS_A2A;
    if (cls != k) continue;
    c->feat_cls[c->n_feat] = k;
    c->feat[c->n_feat++] = gg_t2(b, F32, c->batch, c->p->tables[t].dim);
  }
}

static void codec_kernel(gg_b *b, int64_t elems, dc_dtype q) {
  gg_ew(b, DC_KERNEL_ELEMENTWISE, elems, 1, 4.0 + gg_es(q));
}

/* The column-wise shards' pooled outputs, received in shard order, put
 * back in table order (TorchRec's column-wise output dist, in its wait):
 * fbgemm::permute_pooled_embs_auto_grad_split over the features the
 * all-to-all delivered, B × Σ column-wise dims moved (fp32, read and
 * written). The features are replaced by the permuted ones. */
static void cw_permute_forward(gg_ctx *c, int32_t f0, int32_t f1) {
  gg_b *b = c->b;
  if (!c->trec || c->plan_cw_dims <= 0 || f0 == f1) return;
  gg_begin(b, "fbgemm::permute_pooled_embs_auto_grad_split");
  for (int32_t i = f0; i < f1; i++) {
    gg_in(b, c->feat[i]);
    c->feat[i] = gg_like(b, c->feat[i]);
    gg_out(b, c->feat[i]);
  }
  gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_mul(b, c->batch, c->plan_cw_dims), 0,
        8);
  gg_end(b);
}

/* Its backward, before the all-to-all's: the autograd node runs
 * fbgemm::permute_pooled_embs_split on the gradients (the inverse
 * permutation), which replace c->gfeat of the all-to-all's features. */
static void cw_permute_backward(gg_ctx *c) {
  gg_b *b = c->b;
  if (!c->trec || c->plan_cw_dims <= 0) return;
  int32_t n = 0;
  for (int32_t i = 0; i < c->n_feat; i++)
    if (c->feat_cls[i] == GG_CLS_A2A) n++;
  if (n == 0) return;
  gg_begin(b, EV("torch::autograd::CppNode<fbgemm_gpu::"
                 "PermutePooledEmbsFunctionSplit<&fbgemm_gpu::"
                 "permute_pooled_embs_split_dispatch_call> >"));
  int32_t first = b->n_ts;
  for (int32_t i = 0; i < c->n_feat; i++)
    if (c->feat_cls[i] == GG_CLS_A2A) gg_in(b, c->gfeat[i]);
  for (int32_t i = 0; i < c->n_feat; i++)
    if (c->feat_cls[i] == GG_CLS_A2A) gg_out(b, gg_like(b, c->gfeat[i]));
  gg_begin(b, "fbgemm::permute_pooled_embs_split");
  for (int32_t i = 0, j = first; i < c->n_feat; i++) {
    if (c->feat_cls[i] != GG_CLS_A2A) continue;
    gg_in(b, c->gfeat[i]);
    c->gfeat[i] = j++;
    gg_out(b, c->gfeat[i]);
  }
  gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_mul(b, c->batch, c->plan_cw_dims), 0,
        8);
  gg_end(b);
  gg_end(b);
}

void gg_exchange_forward(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  int64_t Bg = p->batch_size, B = c->batch;
  int32_t S = host_size(c);
  c->chunk = -1;

  /* 1. TWRW: reduce-scatter inside each host holding such tables */
  if (c->plan_cls[GG_CLS_TWRW]) {
    int32_t base = b->coll_next;
    b->coll_next += hosts_of(c);
    if (n_class(c, GG_CLS_TWRW) > 0 && S > 1) {
      int64_t cols = local_cols(c, GG_CLS_TWRW);
      c->chunk = gg_t2(b, F32, Bg / S, cols);
      gg_begin(b, "c10d::_reduce_scatter_base_");
      in_outputs(c, GG_CLS_TWRW);
      gg_out(b, c->chunk);
      gg_coll(c, DC_KERNEL_REDUCE_SCATTER, gg_mul3(b, Bg, cols, dc_pooled_reduce_bytes(p)), S, 1,
              base + c->host);
      gg_end(b);
    }
  }

  /* 2. the world all-to-all of pooled embeddings */
  int32_t a2a_first = c->n_feat;
  if (has_a2a(c)) {
    int64_t n_send = 0; /* elements */
    for (int32_t i = c->cls_first[GG_CLS_A2A];
         i < c->cls_first[GG_CLS_A2A + 1]; i++)
      n_send += gg_mul(b, Bg, c->sh_cols[c->local[i]]);
    if (n_class(c, GG_CLS_TWRW) > 0)
      n_send += gg_mul(b, S > 1 ? Bg / S : Bg, local_cols(c, GG_CLS_TWRW));
    int32_t f0 = c->n_feat;
    received_features(c, GG_CLS_A2A);
    dc_dtype qt = comm_dtype(c);
    int32_t q = -1, recv = -1;
    if (qt != F32) {
      q = gg_t1(b, qt, n_send);
      gg_begin(b, quantize_name(qt));
      in_a2a_sends(c);
      gg_out(b, q);
      codec_kernel(b, n_send, qt);
      gg_end(b);
      recv = gg_t2(b, qt, B, plan_dims(c, GG_CLS_A2A));
    }
    gg_begin(b, "c10d::alltoall_base_");
    if (q >= 0) {
      gg_in(b, q);
      gg_out(b, recv);
    } else {
      in_a2a_sends(c);
      for (int32_t i = f0; i < c->n_feat; i++) gg_out(b, c->feat[i]);
    }
    gg_coll(c, DC_KERNEL_ALL_TO_ALL,
            gg_mul(b, n_send, gg_es(q >= 0 ? qt : wire_dtype(c))),
            c->n_ranks, hosts_spanned(c), b->coll_next++);
    gg_end(b);
    if (q >= 0) {
      gg_begin(b, dequantize_name(qt));
      gg_in(b, recv);
      for (int32_t i = f0; i < c->n_feat; i++) gg_out(b, c->feat[i]);
      codec_kernel(b, gg_numel(b, recv), qt);
      gg_end(b);
    }
  }

  int32_t a2a_f0 = a2a_first, a2a_f1 = c->n_feat;

  /* 3. RW: the world reduce-scatter of partial pools */
  if (c->plan_cls[GG_CLS_RW]) {
    int32_t f0 = c->n_feat;
    received_features(c, GG_CLS_RW);
    gg_begin(b, "c10d::_reduce_scatter_base_");
    in_outputs(c, GG_CLS_RW);
    for (int32_t i = f0; i < c->n_feat; i++) gg_out(b, c->feat[i]);
    gg_coll(c, DC_KERNEL_REDUCE_SCATTER,
            gg_mul3(b, Bg, local_cols(c, GG_CLS_RW), dc_pooled_reduce_bytes(p)), c->n_ranks,
            hosts_spanned(c), b->coll_next++);
    gg_end(b);
  }

  cw_permute_forward(c, a2a_f0, a2a_f1);

  /* 4. DP: the replicas' outputs are the features */
  if (c->batched) {
    if (c->out_cls[GG_CLS_DP] >= 0) {
      c->feat_cls[c->n_feat] = GG_CLS_DP;
      c->feat[c->n_feat++] = c->out_cls[GG_CLS_DP];
    }
  } else {
    for (int32_t i = c->cls_first[GG_CLS_DP]; i < c->cls_first[GG_CLS_DP + 1];
         i++) {
      c->feat_cls[c->n_feat] = GG_CLS_DP;
      c->feat[c->n_feat++] = c->emb_out[i];
    }
  }
}

/* New gradient tensors like the class-k lookup outputs; records them in
 * c->eg and makes them outputs of the open op. */
static void out_grads(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  if (c->batched) {
    if (c->out_cls[k] < 0) return;
    c->eg[k] = gg_like(b, c->out_cls[k]);
    gg_out(b, c->eg[k]);
    return;
  }
  for (int32_t i = c->cls_first[k]; i < c->cls_first[k + 1]; i++) {
    c->eg[i] = gg_like(b, c->emb_out[i]);
    gg_out(b, c->eg[i]);
  }
}

/* The class-k gradients again, as outputs of the collective itself. */
static void reout_grads(gg_ctx *c, int32_t k) {
  if (c->batched) {
    if (c->eg[k] >= 0) gg_out(c->b, c->eg[k]);
    return;
  }
  for (int32_t i = c->cls_first[k]; i < c->cls_first[k + 1]; i++)
    if (c->eg[i] >= 0) gg_out(c->b, c->eg[i]);
}

/* The all-to-all's gradients as outputs of the open op: the A2A shards'
 * and the TWRW chunk's (returned; -1 when the TWRW shards get theirs
 * directly). */
static int32_t out_a2a_grads(gg_ctx *c) {
  out_grads(c, GG_CLS_A2A);
  if (c->chunk < 0) {
    out_grads(c, GG_CLS_TWRW);
    return -1;
  }
  int32_t gchunk = gg_like(c->b, c->chunk);
  gg_out(c->b, gchunk);
  return gchunk;
}

static void in_gfeat(gg_ctx *c, int32_t cls) {
  for (int32_t i = 0; i < c->n_feat; i++)
    if (c->feat_cls[i] == cls) gg_in(c->b, c->gfeat[i]);
}

/* The pooled all-to-all's backward node: stock DLRM's All2All_Req, or
 * TorchRec's All2All_Pooled_Wait (its backward issues the exchange). */
static const char *a2a_backward_name(const gg_ctx *c) {
  return c->trec ? EV("All2All_Pooled_WaitBackward")
                 : EV("All2All_ReqBackward");
}

void gg_exchange_backward(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  int64_t Bg = p->batch_size, B = c->batch;
  int32_t S = host_size(c);
  int32_t n = (c->batched ? GG_N_CLS : c->n_local) + 1;
  c->eg = dc_arena_array(c->s, (size_t)n, sizeof(int32_t));
  for (int32_t i = 0; i < n; i++) c->eg[i] = -1;

  /* 1. the all-to-all returns gradients of A2A shards and TWRW chunks */
  cw_permute_backward(c);
  int32_t gchunk = -1;
  dc_dtype qt = comm_dtype(c);
  if (has_a2a(c) && qt != F32) {
    /* quantized: the gradients are packed, sent, and unpacked into the
     * shards' gradients */
    int64_t n_send = gg_mul(b, B, plan_dims(c, GG_CLS_A2A));
    int32_t q = gg_t1(b, qt, n_send);
    gg_begin(b, quantize_name(qt));
    in_gfeat(c, GG_CLS_A2A);
    gg_out(b, q);
    codec_kernel(b, n_send, qt);
    gg_end(b);
    int64_t n_recv = local_cols(c, GG_CLS_A2A) * Bg;
    if (c->chunk >= 0)
      n_recv += gg_numel(b, c->chunk);
    else
      n_recv += gg_mul(b, local_cols(c, GG_CLS_TWRW), Bg);
    int32_t recv = gg_t1(b, qt, n_recv);
    gg_begin(b, a2a_backward_name(c));
    gg_in(b, q);
    gg_out(b, recv);
    gg_begin(b, "c10d::alltoall_base_");
    gg_in(b, q);
    gg_out(b, recv);
    gg_coll(c, DC_KERNEL_ALL_TO_ALL, gg_mul(b, n_send, gg_es(qt)),
            c->n_ranks, hosts_spanned(c), b->coll_next++);
    gg_end(b);
    gg_end(b);
    gg_begin(b, dequantize_name(qt));
    gg_in(b, recv);
    gchunk = out_a2a_grads(c);
    codec_kernel(b, n_recv, qt);
    gg_end(b);
  } else if (has_a2a(c)) {
    gg_begin(b, a2a_backward_name(c));
    in_gfeat(c, GG_CLS_A2A);
    gchunk = out_a2a_grads(c);
    gg_begin(b, "c10d::alltoall_base_");
    in_gfeat(c, GG_CLS_A2A);
    /* the same gradient tensors, written by the collective */
    reout_grads(c, GG_CLS_A2A);
    if (gchunk >= 0)
      gg_out(b, gchunk);
    else
      reout_grads(c, GG_CLS_TWRW);
    gg_coll(c, DC_KERNEL_ALL_TO_ALL,
            gg_mul3(b, B, plan_dims(c, GG_CLS_A2A), gg_es(wire_dtype(c))),
            c->n_ranks,
            hosts_spanned(c), b->coll_next++);
    gg_end(b);
    gg_end(b);
  }

  /* 2. TWRW: all-gather inside the host */
  if (c->plan_cls[GG_CLS_TWRW]) {
    int32_t base = b->coll_next;
    b->coll_next += hosts_of(c);
    if (gchunk >= 0) {
      gg_begin(b, EV("ReduceScatter_ReqBackward"));
      gg_in(b, gchunk);
      out_grads(c, GG_CLS_TWRW);
      gg_begin(b, "c10d::_allgather_base_");
      gg_in(b, gchunk);
      reout_grads(c, GG_CLS_TWRW);
      gg_coll(c, DC_KERNEL_ALL_GATHER,
              gg_mul3(b, Bg, local_cols(c, GG_CLS_TWRW),
                      dc_pooled_reduce_bytes(p)), S, 1,
              base + c->host);
      gg_end(b);
      gg_end(b);
    }
  }

  /* 3. RW: the world all-gather of the pooled gradients */
  if (c->plan_cls[GG_CLS_RW]) {
    gg_begin(b, EV("ReduceScatter_ReqBackward"));
    in_gfeat(c, GG_CLS_RW);
    out_grads(c, GG_CLS_RW);
    gg_begin(b, "c10d::_allgather_base_");
    in_gfeat(c, GG_CLS_RW);
    reout_grads(c, GG_CLS_RW);
    gg_coll(c, DC_KERNEL_ALL_GATHER,
            gg_mul3(b, Bg, local_cols(c, GG_CLS_RW), dc_pooled_reduce_bytes(p)), c->n_ranks,
            hosts_spanned(c), b->coll_next++);
    gg_end(b);
    gg_end(b);
  }

  /* 4. DP: the interaction's gradients directly */
  int32_t j = 0;
  for (int32_t i = 0; i < c->n_feat; i++) {
    if (c->feat_cls[i] != GG_CLS_DP) continue;
    if (c->batched)
      c->eg[GG_CLS_DP] = c->gfeat[i];
    else
      c->eg[c->cls_first[GG_CLS_DP] + j++] = c->gfeat[i];
  }
}
