/*
 * lookup.c — the batched lookup of one class of a rank's shards (one
 * sharding type in the torchrec style; graphgen_int.h) and its backward. The
 * forward and backward passes call them class by class, and the torchrec
 * style's per-type output distribution (exchange.c) between a type's
 * lookup and the next, so they live below all three.
 *
 * Forward: the stock style's LookupFunction, or FBGEMM's table-batched
 * op with its inputs prepared (kjt.c), or for data-parallel replicas
 * FBGEMM's dense one. Backward: the TBE's applies the sparse optimizer in
 * the kernel; the dense one hands the replicas' gradients to
 * AccumulateGrad (DDP's all-reduce) and the dense optimizer.
 */
#include "graphgen/graphgen_int.h"

#define F32 DC_DTYPE_FP32

/* The batched lookup of class k's local shards (none: nothing): in the
 * torchrec style FBGEMM's table-batched op with its inputs prepared
 * (gg_tbe_inputs) and, for a cached table, FBGEMM's prefetch
 * (gg_tbe_prefetch, uvm_graph.c); the dense one for data-parallel
 * replicas. */
void gg_lookup_class(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  int32_t lo = c->cls_first[k], hi = c->cls_first[k + 1];
  int64_t batch = c->cls_batch[k];
  if (lo == hi) return;
  if (c->trec) gg_tbe_inputs(c, k);
  int32_t slots = c->trec ? gg_tbe_prefetch(c, k) : -1;
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
  gg_emb_kernel(c, DC_KERNEL_EMBEDDING_FWD, &c->local[lo], hi - lo, batch,
                false);
  /* prefetched: the lookup alone (kernels/uvm.c's parts) */
  if (slots >= 0) b->lns[b->n_lns - 1].k.u.emb.part = DC_EMB_LOOKUP;
  gg_end(b);
  c->out_cls[k] = o;
  c->emb_out[c->n_emb_out++] = o;
}

/* TorchRec's data-parallel group: the dense TBE's autograd node computes
 * the gradient of the group's one flat weight (zero-filled, then the
 * rows the lookups touched), which AccumulateGrad hands to DDP: one
 * all-reduce for the group; the dense optimizer updates it. */
static void trec_dense_backward(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  int32_t lo = c->cls_first[k], hi = c->cls_first[k + 1];
  int32_t q = c->p_tab[c->local[lo]];
  int32_t g = gg_like(b, c->params[q].t);
  gg_begin(b, EV("torch::autograd::CppNode<(anonymous namespace)::"
                 "SplitLookupFunction_Dense_Op>"));
  gg_in(b, c->eg[k]);
  gg_in(b, c->idx_cls[k]);
  gg_in(b, c->offs_cls[k]);
  gg_in(b, c->params[q].t);
  gg_out(b, g);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, g), 0, 4);
  gg_emb_kernel(c, DC_KERNEL_EMBEDDING_BWD, &c->local[lo], hi - lo,
                c->cls_batch[k], false);
  gg_end(b);
  gg_accumulate(c, q, g);
}

/* The batched backward of class k: the optimizer is applied in the kernel
 * (FBGEMM TBE), except for data-parallel replicas, whose dense gradients
 * go to AccumulateGrad (all-reduce) and the optimizer step. */
void gg_lookup_class_backward(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  int32_t lo = c->cls_first[k], hi = c->cls_first[k + 1];
  if (lo == hi) return;
  bool dense = c->sharded && k == GG_CLS_DP;
  if (dense && c->trec) {
    trec_dense_backward(c, k);
    return;
  }
  gg_begin(b, c->trec ? gg_tbe_name(c->p->sparse_optimizer, true)
                      : EV("LookupFunctionBackward"));
  gg_in(b, c->eg[k]);
  gg_in(b, c->idx_cls[k]);
  gg_in(b, c->offs_cls[k]);
  int32_t *dg = dc_arena_array(c->s, (size_t)(hi - lo), sizeof(int32_t));
  for (int32_t i = lo; i < hi; i++) {
    int32_t t = c->local[i];
    gg_in(b, c->w_tab[t]);
    if (!dense)
      for (int32_t s = 0; s < 2; s++)
        if (c->st_tab[s][t] >= 0) gg_in(b, c->st_tab[s][t]);
  }
  for (int32_t i = lo; i < hi; i++) {
    int32_t t = c->local[i];
    dg[i - lo] = gg_like(b, c->w_tab[t]);
    gg_out(b, dg[i - lo]);
  }
  if (dense)
    for (int32_t i = lo; i < hi; i++)
      gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, c->w_tab[c->local[i]]), 0,
            4);
  gg_emb_kernel(c, DC_KERNEL_EMBEDDING_BWD, &c->local[lo], hi - lo,
                c->cls_batch[k], !dense);
  gg_end(b);
  if (dense)
    for (int32_t i = lo; i < hi; i++)
      gg_accumulate(c, c->p_tab[c->local[i]], dg[i - lo]);
}

