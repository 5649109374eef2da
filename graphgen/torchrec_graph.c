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
 *                                by feature (recat); per sharding type
 *                                the offsets (asynchronous_complete_cumsum),
 *                                bounds_check_indices and one
 *                                fbgemm::split_embedding_codegen_lookup_
 *                                <opt>_function, then its pooled
 *                                exchange;
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
 * Every sharding type has its own KJT lengths/values all-to-alls
 * (kjt.c), lookup and output distribution (exchange.c), as TorchRec's
 * sharded module runs them; data-parallel tables read the local batch.
 */
#include "graphgen/graphgen_int.h"

#define F32 DC_DTYPE_FP32
#define I32 DC_DTYPE_INT32
#define I64 DC_DTYPE_INT64

/* The local batch on the device: dense, labels, KJT values and lengths. */
static void copy_batch(gg_ctx *c, int32_t *values, int32_t *lengths) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  b->phase = DC_PHASE_INPUT;
  gg_annotation(b, "## copy_batch_to_gpu ##");
  c->dense_h = gg_host_t2(b, F32, c->batch, p->bottom_mlp[0]);
  c->dense = gg_h2d(b, c->dense_h);
  *values = gg_h2d(b, gg_host_t1(b, I64, gg_all_lookups(c, c->batch)));
  *lengths = gg_h2d(b, gg_host_t1(b, I32, gg_mul(b, p->n_tables, c->batch)));
  c->target =
      gg_h2d(b, gg_host_t2(b, F32, c->batch, p->top_mlp[p->n_top - 1]));
  gg_end(b);
}

void gg_build_torchrec(gg_ctx *c) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  gg_declare_params(c);
  for (int32_t k = 0; k < GG_N_CLS; k++)
    c->idx_cls[k] = c->offs_cls[k] = c->out_cls[k] = c->rlen_cls[k] =
        c->rval_cls[k] = -1;

  b->phase = DC_PHASE_OPTIMIZER;
  gg_annotation(b, "## zero_grad ##");
  gg_build_zero_grad(c);
  gg_end(b);

  int32_t splits = -1, send_l = -1, send_v = -1;
  if (p->pipeline) {
    /* progress(): this batch was copied and its input distributed in
     * the previous iterations; now batch i+1's input distribution starts
     * (its splits), batch i+2 is copied, batch i trains, and batch i+1's
     * lengths and values are exchanged behind batch i's forward. */
    b->phase = DC_PHASE_INPUT;
    gg_annotation(b, "## wait_for_batch ##");
    gg_end(b);
    gg_annotation(b, "## start_sparse_data_dist ##");
    if (c->sharded) { /* batch i+1's KJT, copied last iteration */
      c->kjt_val = gg_t1(b, I64, gg_all_lookups(c, c->batch));
      c->kjt_len = gg_t1(b, I32, gg_mul(b, p->n_tables, c->batch));
      splits = gg_kjt_splits(c, &send_l, &send_v);
    }
    gg_end(b);
    int32_t first = b->n_ops, values, lengths;
    copy_batch(c, &values, &lengths); /* batch i+2 */
    gg_prefetched(b, first, true);
    if (c->sharded) { /* batch i's received KJT: resident */
      int64_t n_len, n_val;
      gg_kjt_received(c, &n_len, &n_val);
      c->kjt_rlen = gg_t1(b, I32, n_len);
      c->kjt_rval = gg_t1(b, I64, n_val);
    } else { /* this batch's copy, made last iteration: resident */
      c->kjt_val = values;
      c->kjt_len = lengths;
    }
  } else {
    copy_batch(c, &c->kjt_val, &c->kjt_len);
  }

  gg_annotation(b, "## forward ##");
  gg_build_forward(c);
  gg_build_loss(c);
  gg_end(b);
  if (p->pipeline) {
    b->phase = DC_PHASE_INPUT;
    gg_annotation(b, "## wait_sparse_data_dist ##");
    if (c->sharded) {
      int32_t next_l, next_v; /* batch i+1's, read next iteration */
      gg_kjt_tensors(c, splits, send_l, send_v, &next_l, &next_v);
    }
    gg_end(b);
  }

  gg_annotation(b, "## backward ##");
  int32_t seed = gg_backward_seed(c);
  gg_end(b);
  gg_build_backward_from(c, seed);

  gg_annotation(b, "## optimizer ##");
  gg_build_step(c);
  gg_end(b);
}
