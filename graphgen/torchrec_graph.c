/*
 * torchrec_graph.c — one rank's iteration in the `torchrec` execution style
 * (system.framework: torchrec; spec/frameworks.md): a DLRM or DLRM-DCNv2
 * (torchrec.models.dlrm) wrapped in DistributedModelParallel, its tables
 * in FBGEMM table-batched embeddings with the sparse optimizer fused into
 * the backward, driven by TrainPipelineSparseDist. The step is the
 * pipeline's progress(), each stage in its record_function scope
 * (annotations: they cost nothing, their children are priced), in the
 * order recorded TorchRec steps show (tests/fixtures/torchrec; the ctest
 * torchrec_graph compares): batch i trains while batch i+1's input is
 * distributed and batch i+2 is copied.
 *
 *   ## zero_grad ##              Optimizer.zero_grad (set to None)
 *   ## wait_for_batch ##         the copy stream's event (no kernel)
 *   ## start_sparse_data_dist ## i+1: the local KJT permuted by
 *                                destination, the splits all-to-all
 *   ## copy_batch_to_gpu ##      i+2: dense, labels, the local batch's KJT
 *                                (values int64, lengths int32): aten::to
 *   ## forward ##                i: bottom MLP; the received KJT regrouped
 *                                by feature (recat); per sharding class
 *                                the offsets (asynchronous_complete_cumsum),
 *                                bounds_check_indices and one
 *                                fbgemm::split_embedding_codegen_lookup_
 *                                <opt>_function; the pooled all-to-all;
 *                                the interaction (InteractionArch: no host
 *                                index lists, no slice; or the DCN); the
 *                                over arch to logits; BCE with logits
 *   ## wait_sparse_data_dist ##  i+1: the lengths and values all-to-alls
 *   ## backward ##               aten::ones_like; then, on the autograd
 *                                thread, the backward ops: the TBE backward
 *                                applies the sparse optimizer; DDP's
 *                                bucket all-reduces
 *   ## optimizer ##              the dense optimizer's step
 *
 * The copies run on a copy stream from pinned memory and the all-to-alls
 * on NCCL's stream; this batch's inputs (copied and distributed in the
 * previous iterations) are resident from the start. Without
 * system.pipeline the batch is copied first and the sharded module
 * distributes its input inside the forward, before the lookups.
 *
 * Every class of shard gets its indices through the one KJT all-to-all
 * (TorchRec runs one per sharding type; the bytes are the same, the
 * launches fewer: noted in spec/frameworks.md); data-parallel tables read
 * the local batch.
 */
#include "graphgen/internal.h"

#define F32 DC_DTYPE_FP32
#define I32 DC_DTYPE_INT32
#define I64 DC_DTYPE_INT64

const char *gg_tbe_name(dc_optimizer o, bool backward) {
#define TBE(x)                                                               \
  (backward ? EV("torch::autograd::CppNode<SplitLookupFunction_" x          \
                 "_Op_pt2>")                                                 \
            : "fbgemm::split_embedding_codegen_lookup_" x "_function_pt2")
  switch (o) {
  case DC_OPTIMIZER_SGD: return TBE("sgd");
  case DC_OPTIMIZER_ADAGRAD: return TBE("adagrad");
  case DC_OPTIMIZER_ROWWISE_ADAGRAD: return TBE("rowwise_adagrad");
  case DC_OPTIMIZER_ADAM: return TBE("adam");
  }
  return TBE("sgd");
#undef TBE
}

static void annotation(gg_b *b, const char *name) {
  int32_t i = gg_begin(b, name);
  b->ops[i].annotation = true;
}

/* Σ over all tables of the pooled lookups of `batch` samples. */
static int64_t all_lookups(gg_ctx *c, int64_t batch) {
  int64_t n = 0;
  for (int32_t t = 0; t < c->p->n_tables; t++)
    n += gg_lookups(c->b, batch, c->p->tables[t].pooling);
  return n;
}

/* The local batch on the device: dense, labels, KJT values and lengths. */
static void copy_batch(gg_ctx *c, int32_t *values, int32_t *lengths) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  b->phase = DC_PHASE_INPUT;
  annotation(b, "## copy_batch_to_gpu ##");
  c->dense_h = gg_host_t2(b, F32, c->batch, p->bottom_mlp[0]);
  c->dense = gg_h2d(b, c->dense_h);
  *values = gg_h2d(b, gg_host_t1(b, I64, all_lookups(c, c->batch)));
  *lengths = gg_h2d(b, gg_host_t1(b, I32, gg_mul(b, p->n_tables, c->batch)));
  c->target =
      gg_h2d(b, gg_host_t2(b, F32, c->batch, p->top_mlp[p->n_top - 1]));
  gg_end(b);
}

/* The KJT input distribution, in TorchRec's two halves: the splits
 * all-to-all (each rank tells every other how many lengths and values it
 * will send: 3 int64 per rank) and, once the host has read them, the
 * lengths and values all-to-alls. Each rank sends the lengths and values
 * of its local batch to the ranks holding the tables and receives, for its
 * own shards, those of the global batch. The received tensors are written
 * to `*recv_l` and `*recv_v` (fresh tensors; the caller decides whether
 * they are this batch's or the next one's). Single rank: nothing. */
/* fbgemm::permute_2D_sparse_data: a KJT's lengths and values reordered
 * (by destination rank before the all-to-all, by feature after it) into
 * `*len`, `*val`: one kernel reading and writing both. */
static void kjt_permute(gg_ctx *c, int32_t in_len, int32_t in_val,
                        int32_t *len, int32_t *val) {
  gg_b *b = c->b;
  int64_t nl = gg_numel(b, in_len), nv = gg_numel(b, in_val);
  *len = gg_like(b, in_len);
  *val = gg_like(b, in_val);
  gg_begin(b, "fbgemm::permute_2D_sparse_data");
  gg_in(b, in_len);
  gg_in(b, in_val);
  gg_out(b, *len);
  gg_out(b, *val);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, nl + nv, 0,
        (8.0 * (double)nl + 16.0 * (double)nv) / (double)(nl + nv));
  gg_end(b);
}

/* One all-to-all of the KJT in its record_function scope, on NCCL's
 * stream over every rank (`splits` < 0: none read). */
static void kjt_a2a(gg_ctx *c, const char *scope, int64_t bytes, int32_t in,
                    int32_t splits, int32_t out) {
  gg_b *b = c->b;
  annotation(b, scope);
  gg_begin(b, "c10d::alltoall_base_");
  gg_in(b, in);
  if (splits >= 0) gg_in(b, splits);
  gg_out(b, out);
  gg_coll(c, DC_KERNEL_ALL_TO_ALL, bytes, c->n_ranks, gg_world_hosts(c),
          b->coll_next++);
  gg_end(b);
  gg_end(b);
}

static int32_t kjt_splits(gg_ctx *c, int32_t *send_l, int32_t *send_v) {
  gg_b *b = c->b;
  kjt_permute(c, c->kjt_len, c->kjt_val, send_l, send_v);
  int32_t splits = gg_t1(b, I64, gg_mul(b, c->n_ranks, 3));
  int32_t rs = gg_like(b, splits);
  kjt_a2a(c, "## all2all_data:kjt splits ##",
          gg_mul(b, gg_mul(b, c->n_ranks, 3), 8), splits, -1, rs);
  return rs;
}

/* The lengths and values this rank receives: those of its non-replicated
 * shards over the samples each class looks up. */
static void kjt_received(gg_ctx *c, int64_t *n_len, int64_t *n_val) {
  *n_len = *n_val = 0;
  for (int32_t k = 0; k < GG_N_CLS; k++) {
    if (k == GG_CLS_DP) continue;
    for (int32_t i = c->cls_first[k]; i < c->cls_first[k + 1]; i++) {
      *n_len += c->cls_batch[k];
      *n_val += c->n_idx[c->local[i]];
    }
  }
  if (*n_len < 1) *n_len = 1;
  if (*n_val < 1) *n_val = 1;
}

/* The second half: lengths then values, into fresh tensors. */
static void kjt_tensors(gg_ctx *c, int32_t splits, int32_t send_l,
                        int32_t send_v, int32_t *recv_l, int32_t *recv_v) {
  gg_b *b = c->b;
  int64_t n_len, n_val;
  kjt_received(c, &n_len, &n_val);
  *recv_l = gg_t1(b, I32, n_len);
  *recv_v = gg_t1(b, I64, n_val);
  kjt_a2a(c, "## all2all_data:kjt lengths ##",
          gg_mul(b, gg_mul(b, c->p->n_tables, c->batch), 4), send_l, splits,
          *recv_l);
  kjt_a2a(c, "## all2all_data:kjt values ##",
          gg_mul(b, all_lookups(c, c->batch), 8), send_v, splits, *recv_v);
}

/* In the forward, before the lookups (called by gg_embeddings): without
 * the pipeline the sharded module distributes its input here; then the
 * received KJT is regrouped by feature (TorchRec's recat, in the
 * awaitable's wait). */
void gg_tbe_dist(gg_ctx *c) {
  if (!c->sharded) return;
  if (!c->p->pipeline) {
    int32_t sl, sv, splits = kjt_splits(c, &sl, &sv);
    kjt_tensors(c, splits, sl, sv, &c->kjt_rlen, &c->kjt_rval);
  }
  annotation(c->b, "## dist_init:recat_values ##");
  kjt_permute(c, c->kjt_rlen, c->kjt_rval, &c->kjt_rlen, &c->kjt_rval);
  gg_end(c->b);
}

/* Class k's lookup inputs, as FBGEMM's table-batched module prepares them
 * in the forward: the offsets from the lengths
 * (fbgemm::asynchronous_complete_cumsum) and the indices checked against
 * the tables' rows (fbgemm::bounds_check_indices, FBGEMM's default
 * BoundsCheckMode.WARNING), both on the device. The indices are the
 * class's slice of the KJT values (a view). Called by gg_embeddings. */
void gg_tbe_inputs(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  int32_t lo = c->cls_first[k], hi = c->cls_first[k + 1];
  bool local = k == GG_CLS_DP || !c->sharded;
  int64_t total = 0;
  for (int32_t i = lo; i < hi; i++) total += c->n_idx[c->local[i]];
  int64_t n_off = gg_mul(b, hi - lo, c->cls_batch[k]);
  c->idx_cls[k] = gg_t1(b, I64, total);
  c->offs_cls[k] = gg_t1(b, I64, n_off + 1);
  b->ts[c->idx_cls[k]].producer = b->ts[local ? c->kjt_val : c->kjt_rval]
                                      .producer;
  gg_begin(b, "fbgemm::asynchronous_complete_cumsum");
  gg_in(b, local ? c->kjt_len : c->kjt_rlen);
  gg_out(b, c->offs_cls[k]);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, n_off + 1, 1, 4 + 8);
  gg_end(b);
  gg_begin(b, "fbgemm::bounds_check_indices");
  gg_in(b, c->idx_cls[k]);
  gg_in(b, c->offs_cls[k]);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, total + n_off + 1, 1, 8);
  gg_end(b);
}

void gg_build_torchrec(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  gg_declare_params(c);
  for (int32_t k = 0; k < GG_N_CLS; k++)
    c->idx_cls[k] = c->offs_cls[k] = c->out_cls[k] = -1;

  b->phase = DC_PHASE_OPTIMIZER;
  annotation(b, "## zero_grad ##");
  gg_build_zero_grad(c);
  gg_end(b);

  int32_t splits = -1, send_l = -1, send_v = -1;
  if (p->pipeline) {
    /* progress(): this batch was copied and its input distributed in
     * the previous iterations; now batch i+1's input distribution starts
     * (its splits), batch i+2 is copied, batch i trains, and batch i+1's
     * lengths and values are exchanged behind batch i's forward. */
    b->phase = DC_PHASE_INPUT;
    annotation(b, "## wait_for_batch ##");
    gg_end(b);
    annotation(b, "## start_sparse_data_dist ##");
    if (c->sharded) { /* batch i+1's KJT, copied last iteration */
      c->kjt_val = gg_t1(b, I64, all_lookups(c, c->batch));
      c->kjt_len = gg_t1(b, I32, gg_mul(b, p->n_tables, c->batch));
      splits = kjt_splits(c, &send_l, &send_v);
    }
    gg_end(b);
    int32_t first = b->n_ops, values, lengths;
    copy_batch(c, &values, &lengths); /* batch i+2 */
    gg_prefetched(b, first, true);
    if (c->sharded) { /* batch i's received KJT: resident */
      int64_t n_len, n_val;
      kjt_received(c, &n_len, &n_val);
      c->kjt_rlen = gg_t1(b, I32, n_len);
      c->kjt_rval = gg_t1(b, I64, n_val);
    } else { /* this batch's copy, made last iteration: resident */
      c->kjt_val = values;
      c->kjt_len = lengths;
    }
  } else {
    copy_batch(c, &c->kjt_val, &c->kjt_len);
  }

  annotation(b, "## forward ##");
  gg_build_forward(c);
  gg_build_loss(c);
  gg_end(b);
  if (p->pipeline) {
    b->phase = DC_PHASE_INPUT;
    annotation(b, "## wait_sparse_data_dist ##");
    if (c->sharded) {
      int32_t next_l, next_v; /* batch i+1's, read next iteration */
      kjt_tensors(c, splits, send_l, send_v, &next_l, &next_v);
    }
    gg_end(b);
  }

  annotation(b, "## backward ##");
  int32_t seed = gg_backward_seed(c);
  gg_end(b);
  gg_build_backward_from(c, seed);

  annotation(b, "## optimizer ##");
  gg_build_step(c);
  gg_end(b);
}
