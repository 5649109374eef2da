/*
 * torchrec.c — one rank's iteration in the `torchrec` execution style
 * (system.framework: torchrec; spec/frameworks.md): a DLRM or DLRM-DCNv2
 * (torchrec.models.dlrm) wrapped in DistributedModelParallel, its tables
 * in FBGEMM table-batched embeddings with the sparse optimizer fused into
 * the backward, driven by TrainPipelineSparseDist. The step is the
 * pipeline's progress(), each stage in its record_function scope
 * (annotations: they cost nothing, their children are priced):
 *
 *   ## zero_grad ##            Optimizer.zero_grad (set to None)
 *   ## copy_batch_to_gpu ##    dense, labels, the local batch's KJT
 *                              (values int64, lengths int32): aten::to
 *   ## sparse_data_dist ##     the KJT all-to-all (multi-GPU): splits,
 *                              lengths, values; offsets from the lengths
 *                              (fbgemm::asynchronous_complete_cumsum)
 *   ## forward ##              bottom MLP; per sharding group one
 *                              fbgemm::split_embedding_codegen_lookup_
 *                              <opt>_function; the pooled all-to-all;
 *                              the interaction (InteractionArch: no host
 *                              index lists, no slice; or the DCN); the
 *                              over arch to logits; BCE with logits
 *   ## wait_sparse_data_dist ##  (pipelined)
 *   ## backward ##             aten::ones_like; then, on the autograd
 *                              thread, the backward ops: the TBE backward
 *                              applies the sparse optimizer; DDP's bucket
 *                              all-reduces
 *   ## optimizer ##            the dense optimizer's step
 *
 * With system.pipeline (the default, as TorchRec's examples run it) the
 * copy and the input all-to-all work on the *next* batch while this one
 * computes: their outputs — this batch's inputs — are resident from the
 * start, the copies run on a copy stream from pinned memory and the
 * all-to-alls on NCCL's stream, overlapping the forward. Without it,
 * the lookups wait for this batch's copy and all-to-all.
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
  (backward ? "autograd::engine::evaluate_function: "                        \
              "torch::autograd::CppNode<SplitLookupFunction_" x "_Op_pt2>"   \
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

/* A collective op on NCCL's stream over every rank. */
static void a2a(gg_ctx *c, int64_t bytes, int32_t in, int32_t out) {
  gg_b *b = c->b;
  gg_begin(b, "c10d::alltoall_base_");
  gg_in(b, in);
  gg_out(b, out);
  gg_coll(c, DC_KERNEL_ALL_TO_ALL, bytes, c->n_ranks,
          gg_world_hosts(c), b->coll_next++);
  gg_end(b);
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

/* The KJT input distribution: each rank sends the lengths and values of
 * its local batch to the ranks holding the tables and receives, for its
 * own shards, those of the global batch; then offsets per class. */
static void sparse_data_dist(gg_ctx *c, int32_t values, int32_t lengths) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  annotation(b, "## sparse_data_dist ##");
  int32_t recv_v = values, recv_l = lengths;
  if (c->sharded) {
    int32_t splits = gg_t1(b, I64, c->n_ranks), rs = gg_like(b, splits);
    a2a(c, gg_mul(b, c->n_ranks, 8), splits, rs);
    int64_t n_len = 0, n_val = 0;
    for (int32_t k = 0; k < GG_N_CLS; k++) {
      if (k == GG_CLS_DP) continue;
      for (int32_t i = c->cls_first[k]; i < c->cls_first[k + 1]; i++) {
        n_len += c->cls_batch[k];
        n_val += c->n_idx[c->local[i]];
      }
    }
    recv_l = gg_t1(b, I32, n_len > 0 ? n_len : 1);
    a2a(c, gg_mul(b, gg_mul(b, p->n_tables, c->batch), 4), lengths, recv_l);
    recv_v = gg_t1(b, I64, n_val > 0 ? n_val : 1);
    a2a(c, gg_mul(b, all_lookups(c, c->batch), 8), values, recv_v);
  }
  for (int32_t k = 0; k < GG_N_CLS; k++) {
    int32_t lo = c->cls_first[k], hi = c->cls_first[k + 1];
    c->idx_cls[k] = c->offs_cls[k] = c->out_cls[k] = -1;
    if (lo == hi) continue;
    bool local = k == GG_CLS_DP || !c->sharded;
    int64_t total = 0;
    for (int32_t i = lo; i < hi; i++) total += c->n_idx[c->local[i]];
    int64_t n_off = gg_mul(b, hi - lo, c->cls_batch[k]);
    /* this class's slice of the received (or local) values */
    c->idx_cls[k] = gg_t1(b, I64, total);
    c->offs_cls[k] = gg_t1(b, I64, n_off + 1);
    gg_begin(b, "fbgemm::asynchronous_complete_cumsum");
    gg_in(b, local ? lengths : recv_l);
    gg_in(b, local ? values : recv_v);
    gg_out(b, c->offs_cls[k]);
    gg_out(b, c->idx_cls[k]);
    gg_ew(b, DC_KERNEL_ELEMENTWISE, n_off + 1, 1, 4 + 8);
    gg_end(b);
    if (c->offs < 0) c->offs = c->offs_cls[k];
  }
  gg_end(b);
}

void gg_build_torchrec(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  gg_declare_params(c);
  c->offs = -1;
  c->idx = dc_arena_array(b->a, (size_t)p->n_tables + 1, sizeof(int32_t));
  c->offs_t = dc_arena_array(b->a, (size_t)p->n_tables + 1, sizeof(int32_t));

  b->phase = DC_PHASE_OPTIMIZER;
  annotation(b, "## zero_grad ##");
  gg_build_zero_grad(c);
  gg_end(b);

  int32_t values, lengths, first = b->n_ops;
  copy_batch(c, &values, &lengths);
  if (p->pipeline) gg_prefetched(b, first, true);
  first = b->n_ops;
  sparse_data_dist(c, values, lengths);
  if (p->pipeline) gg_prefetched(b, first, false);

  annotation(b, "## forward ##");
  gg_build_forward(c);
  gg_build_loss(c);
  gg_end(b);
  if (p->pipeline) {
    annotation(b, "## wait_sparse_data_dist ##");
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
