/*
 * exchange.c — the collectives that move pooled embeddings between ranks
 * under a sharding plan (forward) and their gradients back (backward).
 * Only built with more than one GPU.
 *
 * Every rank needs, for its local batch B = global / W, the pooled
 * embedding of every table. Per class of shard (graphgen_int.h):
 *
 *   A2A (table_wise, column_wise, table_column_wise): the shard pooled
 *     the global batch
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
 * The torchrec style (gg_trec_embeddings) runs these per sharding type,
 * each right after its lookup: column-wise shards are a class of their
 * own (GG_CLS_CW) with their own all-to-all, table-column-wise ones
 * another (GG_CLS_TWCW: TorchRec's TwCw sharding is its column-wise one
 * under another type), and the TWRW chunks have theirs; every rank joins
 * every type's collectives.
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
#include "graphgen/graphgen_int.h"

#define F32 DC_DTYPE_FP32

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

/* The class of host-row-wise shards (TWRW, or in the torchrec style
 * GRID: partial pools reduce-scattered inside the host) whose chunks the
 * all-to-all of class k carries, or -1: in the torchrec style each of
 * those classes' own (one output distribution per sharding type); in the
 * others the one all-to-all (GG_CLS_A2A) carries the TWRW chunks with the
 * table-wise and column-wise shards. */
static int32_t host_cls(const gg_ctx *c, int32_t k) {
  if (k == GG_CLS_TWRW || k == GG_CLS_GRID) return k;
  return k == GG_CLS_A2A && !c->trec ? GG_CLS_TWRW : -1;
}

static bool carries_twrw(const gg_ctx *c, int32_t k) {
  return host_cls(c, k) >= 0;
}

/* Σ dims of the features class k's collective delivers (all ranks; the
 * plan's tables of the class, and the TWRW ones where its all-to-all
 * carries them): summed once per graph (build.c), not per rank. */
static int64_t plan_dims(const gg_ctx *c, int32_t k) {
  return c->plan_dims[k] + (k == GG_CLS_A2A && carries_twrw(c, k)
                                ? c->plan_dims[GG_CLS_TWRW]
                                : 0);
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

/* What this rank sends in class k's forward all-to-all, as inputs of the
 * open op: the class's shards' outputs and, where it carries them, its
 * TWRW chunk (or TWRW outputs). */
static void in_a2a_sends(gg_ctx *c, int32_t k) {
  int32_t h = host_cls(c, k);
  if (k != h) in_outputs(c, k);
  if (h < 0) return;
  if (c->chunk[h] >= 0)
    gg_in(c->b, c->chunk[h]);
  else
    in_outputs(c, h);
}

static int32_t hosts_spanned(const gg_ctx *c) {
  return hosts_of(c) < 1 ? 1 : hosts_of(c);
}

/* The world all-to-all of the pooled embeddings (or their gradients) of
 * `bytes` this rank sends, for the open op: hierarchical where the style
 * runs it so (dc_pooled_a2a_hier: the fused style across hosts), where
 * `railed` of them (the table-row-wise chunks, their gradients) are
 * already on the GPU of their rail: the host reduce-scatter left them
 * there, the host all-gather takes them from there. */
static void pooled_a2a(gg_ctx *c, int64_t bytes, int64_t railed) {
  dc_launch *l = gg_coll(c, DC_KERNEL_ALL_TO_ALL, bytes, c->n_ranks,
                         hosts_spanned(c), c->b->coll_next++);
  l->k.u.coll.hier = dc_pooled_a2a_hier(c->p);
  if (l->k.u.coll.hier) l->k.u.coll.railed = railed;
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
static dc_dtype wire_dtype(const gg_ctx *c) { return gg_wire_dtype(c->p); }

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
    int32_t cls = gg_class_of(c->plan->tables[t].type, c->trec);
    if (cls == GG_CLS_TWRW && carries_twrw(c, GG_CLS_A2A)) cls = GG_CLS_A2A;
    if (cls != k) continue;
    c->feat_cls[c->n_feat] = k;
    c->feat[c->n_feat++] = gg_t2(b, F32, c->batch, c->p->tables[t].dim);
  }
}

static void codec_kernel(gg_b *b, int64_t elems, dc_dtype q) {
  gg_ew(b, DC_KERNEL_ELEMENTWISE, elems, 1, 4.0 + gg_es(q));
}

/* The sharding type of the shards class k permutes (TorchRec's
 * column-wise, table-column-wise and grid output distributions), or
 * AUTO: none. */
static dc_sharding permuted_type(int32_t k) {
  return k == GG_CLS_CW     ? DC_SHARDING_COLUMN_WISE
         : k == GG_CLS_TWCW ? DC_SHARDING_TABLE_COLUMN_WISE
         : k == GG_CLS_GRID ? DC_SHARDING_GRID_SHARD
                            : DC_SHARDING_AUTO;
}

/* Whether TorchRec's column-wise (or grid) output distribution permutes
 * at all: the all-to-all delivers the column shards rank by rank (grid:
 * the column blocks host by host, one per host's first rank) and, on a
 * rank (host), in table order; TorchRec orders them by table, in the
 * order the tables first arrive, each table's by column offset, and
 * builds no permute when that is the order they arrive in (every table's
 * shards arriving together, by offset: `ranks: [0, 3]`, but not
 * `[3, 0]`). */
static bool cw_permuted(const gg_ctx *c, int32_t cls) {
  const dc_shard_plan *s = c->plan;
  dc_sharding ty = permuted_type(cls);
  int32_t T = c->p->n_tables, n = 0;
  int32_t step = ty == DC_SHARDING_GRID_SHARD ? s->gpus_per_host : 1;
  if (step < 1) step = 1;
  for (int32_t t = 0; t < T; t++)
    if (s->tables[t].type == ty) n += s->tables[t].n_shards;
  if (n == 0) return false;
  int32_t *at = dc_arena_array(c->s, (size_t)n, sizeof(int32_t));
  int32_t *off = dc_arena_array(c->s, (size_t)n, sizeof(int32_t));
  int32_t *count = dc_arena_array(c->s, (size_t)T, sizeof(int32_t));
  bool *seen = dc_arena_array(c->s, (size_t)T, sizeof(bool));
  int32_t k = 0;
  for (int32_t r = 0; r < s->n_ranks; r += step)
    for (int32_t t = 0; t < T; t++) {
      const dc_table_plan *tp = &s->tables[t];
      if (tp->type != ty) continue;
      for (int32_t i = 0; i < tp->n_shards; i++)
        if (tp->shards[i].rank == r) {
          at[k] = t;
          off[k++] = tp->shards[i].col_off;
          count[t]++;
        }
    }
  for (int32_t i = 0; i < k;) {
    int32_t t = at[i], j = i + 1;
    if (seen[t]) return true;
    seen[t] = true;
    for (; j < k && at[j] == t; j++)
      if (off[j] < off[j - 1]) return true;
    if (j - i != count[t]) return true;
    i = j;
  }
  return false;
}

/* Class k's (column-wise, grid) shards' pooled outputs, received in
 * shard order, put back in table order (TorchRec's output dist, in its
 * wait): fbgemm::permute_pooled_embs_auto_grad_split over the features
 * the all-to-all delivered, B × Σ the class's dims moved (fp32, read and
 * written). The features are replaced by the permuted ones. */
static void cw_permute_forward(gg_ctx *c, int32_t k, int32_t f0,
                               int32_t f1) {
  gg_b *b = c->b;
  if (!c->trec || c->plan_dims[k] <= 0 || f0 == f1 || !cw_permuted(c, k))
    return;
  gg_begin(b, "fbgemm::permute_pooled_embs_auto_grad_split");
  for (int32_t i = f0; i < f1; i++) {
    gg_in(b, c->feat[i]);
    c->feat[i] = gg_like(b, c->feat[i]);
    gg_out(b, c->feat[i]);
  }
  gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_mul(b, c->batch, c->plan_dims[k]), 0,
        8);
  gg_end(b);
}

/* Its backward, before the all-to-all's: the autograd node runs
 * fbgemm::permute_pooled_embs_split on the gradients (the inverse
 * permutation), which replace c->gfeat of the all-to-all's features. */
static void cw_permute_backward(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  if (!c->trec || c->plan_dims[k] <= 0 || !cw_permuted(c, k)) return;
  int32_t n = 0;
  for (int32_t i = 0; i < c->n_feat; i++)
    if (c->feat_cls[i] == k) n++;
  if (n == 0) return;
  gg_begin(b, EV("torch::autograd::CppNode<fbgemm_gpu::"
                 "PermutePooledEmbsFunctionSplit<&fbgemm_gpu::"
                 "permute_pooled_embs_split_dispatch_call> >"));
  int32_t first = b->n_ts;
  for (int32_t i = 0; i < c->n_feat; i++)
    if (c->feat_cls[i] == k) gg_in(b, c->gfeat[i]);
  for (int32_t i = 0; i < c->n_feat; i++)
    if (c->feat_cls[i] == k) gg_out(b, gg_like(b, c->gfeat[i]));
  gg_begin(b, "fbgemm::permute_pooled_embs_split");
  for (int32_t i = 0, j = first; i < c->n_feat; i++) {
    if (c->feat_cls[i] != k) continue;
    gg_in(b, c->gfeat[i]);
    c->gfeat[i] = j++;
    gg_out(b, c->gfeat[i]);
  }
  gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_mul(b, c->batch, c->plan_dims[k]), 0,
        8);
  gg_end(b);
  gg_end(b);
}

/* TWRW (and the torchrec style's GRID, class k): the reduce-scatter
 * inside this rank's host of its class-k shards' partial pools, leaving
 * c->chunk[k] [B·W/S, cols]. The other styles run it only on hosts
 * holding such shards; TorchRec runs it on every host (an empty one where
 * the host holds none). */
static void twrw_reduce_scatter(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  int64_t Bg = c->p->batch_size;
  int32_t S = host_size(c);
  int32_t base = b->coll_next;
  b->coll_next += hosts_of(c);
  if (S <= 1 || (n_class(c, k) == 0 && !c->trec)) return;
  int64_t cols = local_cols(c, k);
  c->chunk[k] = gg_t2(b, F32, Bg / S, cols);
  gg_begin(b, "c10d::_reduce_scatter_base_");
  in_outputs(c, k);
  gg_out(b, c->chunk[k]);
  gg_coll(c, DC_KERNEL_REDUCE_SCATTER,
          gg_mul3(b, Bg, cols, dc_pooled_reduce_bytes(c->p)), S, 1,
          base + c->host);
  gg_end(b);
}

/* The world all-to-all of class k's pooled embeddings (in_a2a_sends),
 * delivering the class's features (received_features), its payload
 * quantized under training.comm_precision. */
static void a2a_forward(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  int64_t Bg = c->p->batch_size, B = c->batch;
  int32_t S = host_size(c);
  int32_t h = host_cls(c, k);
  int64_t n_send = 0, n_chunk = 0; /* elements */
  if (k != h) n_send += gg_mul(b, Bg, local_cols(c, k));
  if (h >= 0 && n_class(c, h) > 0) {
    n_chunk = gg_mul(b, S > 1 ? Bg / S : Bg, local_cols(c, h));
    n_send += n_chunk;
  }
  int32_t f0 = c->n_feat;
  received_features(c, k);
  dc_dtype qt = comm_dtype(c);
  int32_t q = -1, recv = -1;
  if (qt != F32) {
    q = gg_t1(b, qt, n_send);
    gg_begin(b, quantize_name(qt));
    in_a2a_sends(c, k);
    gg_out(b, q);
    codec_kernel(b, n_send, qt);
    gg_end(b);
    recv = gg_t2(b, qt, B, plan_dims(c, k));
  }
  gg_begin(b, "c10d::alltoall_base_");
  if (q >= 0) {
    gg_in(b, q);
    gg_out(b, recv);
  } else {
    in_a2a_sends(c, k);
    for (int32_t i = f0; i < c->n_feat; i++) gg_out(b, c->feat[i]);
  }
  int es = gg_es(q >= 0 ? qt : wire_dtype(c));
  pooled_a2a(c, gg_mul(b, n_send, es), gg_mul(b, n_chunk, es));
  gg_end(b);
  if (q >= 0) {
    gg_begin(b, dequantize_name(qt));
    gg_in(b, recv);
    for (int32_t i = f0; i < c->n_feat; i++) gg_out(b, c->feat[i]);
    codec_kernel(b, gg_numel(b, recv), qt);
    gg_end(b);
  }
}

/* RW: the world reduce-scatter of partial pools. */
static void rw_reduce_scatter(gg_ctx *c) {
  gg_b *b = c->b;
  int32_t f0 = c->n_feat;
  received_features(c, GG_CLS_RW);
  gg_begin(b, "c10d::_reduce_scatter_base_");
  in_outputs(c, GG_CLS_RW);
  for (int32_t i = f0; i < c->n_feat; i++) gg_out(b, c->feat[i]);
  gg_coll(c, DC_KERNEL_REDUCE_SCATTER,
          gg_mul3(b, c->p->batch_size, local_cols(c, GG_CLS_RW),
                  dc_pooled_reduce_bytes(c->p)),
          c->n_ranks, hosts_spanned(c), b->coll_next++);
  gg_end(b);
}

/* DP: the replicas' outputs are the features. */
static void dp_features(gg_ctx *c) {
  if (c->batched) {
    if (c->out_cls[GG_CLS_DP] >= 0) {
      c->feat_cls[c->n_feat] = GG_CLS_DP;
      c->feat[c->n_feat++] = c->out_cls[GG_CLS_DP];
    }
    return;
  }
  for (int32_t i = c->cls_first[GG_CLS_DP]; i < c->cls_first[GG_CLS_DP + 1];
       i++) {
    c->feat_cls[c->n_feat] = GG_CLS_DP;
    c->feat[c->n_feat++] = c->emb_out[i];
  }
}

void gg_exchange_forward(gg_ctx *c) {
  c->chunk[GG_CLS_TWRW] = -1;
  if (c->plan_cls[GG_CLS_TWRW]) twrw_reduce_scatter(c, GG_CLS_TWRW);
  if (has_a2a(c)) a2a_forward(c, GG_CLS_A2A);
  if (c->plan_cls[GG_CLS_RW]) rw_reduce_scatter(c);
  dp_features(c);
}

/* TorchRec's sharded EmbeddingBagCollection: per sharding type, in its
 * order (gg_plan_types), the type's lookup and its output distribution —
 * table-wise and column-wise the world all-to-all, row-wise the world
 * reduce-scatter, table-row-wise and grid the host reduce-scatter then
 * the all-to-all of the chunk, data-parallel none. Every rank joins every
 * type's collectives, sending nothing for a type of which it holds no
 * shard. The column-wise and grid features are put back in table order
 * in the awaitable's waits, after all the collectives, in type order. */
void gg_trec_embeddings(gg_ctx *c) {
  dc_sharding types[8];
  int32_t n = gg_plan_types(c, types), f0[8], f1[8];
  for (int32_t i = 0; i < n; i++) {
    int32_t k = gg_class_of(types[i], true);
    c->chunk[k] = -1;
    gg_lookup_class(c, k);
    f0[i] = c->n_feat;
    switch (k) {
    case GG_CLS_DP: dp_features(c); break;
    case GG_CLS_RW: rw_reduce_scatter(c); break;
    case GG_CLS_TWRW:
    case GG_CLS_GRID:
      twrw_reduce_scatter(c, k);
      a2a_forward(c, k);
      break;
    default: a2a_forward(c, k); break;
    }
    f1[i] = c->n_feat;
  }
  for (int32_t i = 0; i < n; i++) {
    int32_t k = gg_class_of(types[i], true);
    if (permuted_type(k) != DC_SHARDING_AUTO)
      cw_permute_forward(c, k, f0[i], f1[i]);
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

/* Class k's all-to-all gradients as outputs of the open op: its shards'
 * and, where it carries them, the TWRW chunk's (returned; -1 when the
 * TWRW shards get theirs directly or it carries none). */
static int32_t out_a2a_grads(gg_ctx *c, int32_t k) {
  int32_t h = host_cls(c, k);
  if (k != h) out_grads(c, k);
  if (h < 0) return -1;
  if (c->chunk[h] < 0) {
    out_grads(c, h);
    return -1;
  }
  int32_t gchunk = gg_like(c->b, c->chunk[h]);
  gg_out(c->b, gchunk);
  return gchunk;
}

/* The same gradients, written by the collective. */
static void reout_a2a_grads(gg_ctx *c, int32_t k, int32_t gchunk) {
  int32_t h = host_cls(c, k);
  if (k != h) reout_grads(c, k);
  if (h < 0) return;
  if (gchunk >= 0)
    gg_out(c->b, gchunk);
  else
    reout_grads(c, h);
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

/* Of class k's backward send, the bytes of the table-row-wise (grid)
 * features' gradients (they go to the chunks' holders, then the host
 * all-gather). */
static int64_t twrw_grad_bytes(gg_ctx *c, int32_t k, dc_dtype t) {
  int32_t h = host_cls(c, k);
  if (h < 0) return 0;
  return gg_mul3(c->b, c->batch, c->plan_dims[h], gg_es(t));
}

/* Class k's all-to-all backward: it returns the gradients of the class's
 * shards and of the TWRW chunk it carried (returned, or -1). */
static int32_t a2a_backward(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  int64_t Bg = c->p->batch_size, B = c->batch;
  dc_dtype qt = comm_dtype(c);
  int32_t gchunk = -1;
  if (qt != F32) {
    /* quantized: the gradients are packed, sent, and unpacked into the
     * shards' gradients */
    int64_t n_send = gg_mul(b, B, plan_dims(c, k));
    int32_t q = gg_t1(b, qt, n_send);
    gg_begin(b, quantize_name(qt));
    in_gfeat(c, k);
    gg_out(b, q);
    codec_kernel(b, n_send, qt);
    gg_end(b);
    int32_t h = host_cls(c, k);
    int64_t n_recv = k != h ? local_cols(c, k) * Bg : 0;
    if (h >= 0 && c->chunk[h] >= 0)
      n_recv += gg_numel(b, c->chunk[h]);
    else if (h >= 0)
      n_recv += gg_mul(b, local_cols(c, h), Bg);
    int32_t recv = gg_t1(b, qt, n_recv);
    gg_begin(b, a2a_backward_name(c));
    gg_in(b, q);
    gg_out(b, recv);
    gg_begin(b, "c10d::alltoall_base_");
    gg_in(b, q);
    gg_out(b, recv);
    pooled_a2a(c, gg_mul(b, n_send, gg_es(qt)), twrw_grad_bytes(c, k, qt));
    gg_end(b);
    gg_end(b);
    gg_begin(b, dequantize_name(qt));
    gg_in(b, recv);
    gchunk = out_a2a_grads(c, k);
    codec_kernel(b, n_recv, qt);
    gg_end(b);
    return gchunk;
  }
  gg_begin(b, a2a_backward_name(c));
  in_gfeat(c, k);
  gchunk = out_a2a_grads(c, k);
  gg_begin(b, "c10d::alltoall_base_");
  in_gfeat(c, k);
  reout_a2a_grads(c, k, gchunk);
  pooled_a2a(c, gg_mul3(b, B, plan_dims(c, k), gg_es(wire_dtype(c))),
             twrw_grad_bytes(c, k, wire_dtype(c)));
  gg_end(b);
  gg_end(b);
  return gchunk;
}

/* TWRW (GRID, class k): the all-gather inside the host that rebuilds a
 * class-k shard's [B·W, D] gradient from the chunk's (`gchunk`; -1: none
 * here). */
static void twrw_all_gather(gg_ctx *c, int32_t k, int32_t gchunk) {
  gg_b *b = c->b;
  int32_t base = b->coll_next;
  b->coll_next += hosts_of(c);
  if (gchunk < 0) return;
  gg_begin(b, EV("ReduceScatter_ReqBackward"));
  gg_in(b, gchunk);
  out_grads(c, k);
  gg_begin(b, "c10d::_allgather_base_");
  gg_in(b, gchunk);
  reout_grads(c, k);
  gg_coll(c, DC_KERNEL_ALL_GATHER,
          gg_mul3(b, c->p->batch_size, local_cols(c, k),
                  dc_pooled_reduce_bytes(c->p)),
          host_size(c), 1, base + c->host);
  gg_end(b);
  gg_end(b);
}

/* RW: the world all-gather of the pooled gradients. */
static void rw_all_gather(gg_ctx *c) {
  gg_b *b = c->b;
  gg_begin(b, EV("ReduceScatter_ReqBackward"));
  in_gfeat(c, GG_CLS_RW);
  out_grads(c, GG_CLS_RW);
  gg_begin(b, "c10d::_allgather_base_");
  in_gfeat(c, GG_CLS_RW);
  reout_grads(c, GG_CLS_RW);
  gg_coll(c, DC_KERNEL_ALL_GATHER,
          gg_mul3(b, c->p->batch_size, local_cols(c, GG_CLS_RW),
                  dc_pooled_reduce_bytes(c->p)),
          c->n_ranks, hosts_spanned(c), b->coll_next++);
  gg_end(b);
  gg_end(b);
}

/* DP: the interaction's gradients directly. */
static void dp_grads(gg_ctx *c) {
  int32_t j = 0;
  for (int32_t i = 0; i < c->n_feat; i++) {
    if (c->feat_cls[i] != GG_CLS_DP) continue;
    if (c->batched)
      c->eg[GG_CLS_DP] = c->gfeat[i];
    else
      c->eg[c->cls_first[GG_CLS_DP] + j++] = c->gfeat[i];
  }
}

static void alloc_grads(gg_ctx *c) {
  int32_t n = (c->batched ? GG_N_CLS : c->n_local) + 1;
  c->eg = dc_arena_array(c->s, (size_t)n, sizeof(int32_t));
  for (int32_t i = 0; i < n; i++) c->eg[i] = -1;
}

void gg_exchange_backward(gg_ctx *c) {
  alloc_grads(c);
  int32_t gchunk = -1;
  if (has_a2a(c)) gchunk = a2a_backward(c, GG_CLS_A2A);
  if (c->plan_cls[GG_CLS_TWRW]) twrw_all_gather(c, GG_CLS_TWRW, gchunk);
  if (c->plan_cls[GG_CLS_RW]) rw_all_gather(c);
  dp_grads(c);
}

/* The backward of gg_trec_embeddings in the order the autograd engine
 * runs it (it takes the ready node of the highest sequence number, that
 * is the latest created): first the nodes the awaitables' waits created,
 * last type first — a column-wise type's permute then its all-to-all, a
 * row-wise type's all-gather, the others' all-to-all; then, last type
 * first again, what the output distributions created in the forward and
 * the lookup before them: a table-row-wise type's host all-gather, each
 * type's lookup backward (the TBE's, applying the sparse optimizer, or
 * the dense TBE's). */
void gg_trec_dist_backward(gg_ctx *c) {
  dc_sharding types[8];
  int32_t n = gg_plan_types(c, types), gchunk[GG_N_CLS];
  alloc_grads(c);
  for (int32_t i = n - 1; i >= 0; i--) {
    int32_t k = gg_class_of(types[i], true);
    gchunk[k] = -1;
    switch (k) {
    case GG_CLS_DP: dp_grads(c); break;
    case GG_CLS_RW: rw_all_gather(c); break;
    default:
      if (permuted_type(k) != DC_SHARDING_AUTO) cw_permute_backward(c, k);
      gchunk[k] = a2a_backward(c, k);
      break;
    }
  }
  for (int32_t i = n - 1; i >= 0; i--) {
    int32_t k = gg_class_of(types[i], true);
    if (host_cls(c, k) == k) twrw_all_gather(c, k, gchunk[k]);
    gg_lookup_class_backward(c, k);
  }
}
