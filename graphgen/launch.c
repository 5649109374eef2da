/*
 * launch.c — the kernel launches that need the rank's context (gg_ctx)
 * rather than the builder alone (core.c): an embedding kernel over this
 * rank's shards, identical shards grouped, and a collective on NCCL's
 * stream. The forward and backward passes, the exchange, TorchRec's input
 * distribution and DDP's all-reduces all launch them.
 */
#include "graphgen/internal.h"

/* Groups identical tables (rows, dim, pooling) for one embedding kernel. */
void gg_emb_kernel(gg_ctx *c, dc_kernel_kind kind, const int32_t *tabs,
                   int32_t n, int64_t batch, bool fused) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  dc_emb_group *g = dc_arena_array(b->a, (size_t)n, sizeof(dc_emb_group));
  int32_t ng = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t t = tabs[i];
    int32_t j = 0;
    while (j < ng && !(g[j].rows == c->sh_rows[t] &&
                       g[j].dim == c->sh_cols[t] &&
                       g[j].pooling == c->sh_pool[t]))
      j++;
    if (j == ng) {
      g[ng].tables = 0;
      g[ng].rows = c->sh_rows[t];
      g[ng].dim = c->sh_cols[t];
      g[ng].pooling = c->sh_pool[t];
      ng++;
    }
    g[j].tables++;
  }
  dc_launch *l = gg_launch(b, kind, GG_STREAM_COMPUTE);
  l->k.u.emb.batch = batch;
  l->k.u.emb.n_groups = ng;
  l->k.u.emb.groups = g;
  l->k.u.emb.dtype = dc_storage_dtype(p->embedding_precision);
  l->k.u.emb.optimizer = p->sparse_optimizer;
  l->k.u.emb.fused_optimizer = fused;
  l->k.u.emb.model = p->embedding_model;
  l->k.u.emb.stock = !c->batched; /* one nn.EmbeddingBag per table */
}

/* A collective op: `name` with one launch of `kind` on NCCL's stream. */
void gg_coll(gg_ctx *c, dc_kernel_kind kind, int64_t bytes, int32_t ranks,
             int32_t hosts, int32_t id) {
  dc_launch *l = gg_launch(c->b, kind, GG_STREAM_COMM);
  l->k.u.coll.bytes = bytes;
  l->k.u.coll.ranks = ranks;
  l->k.u.coll.hosts = hosts;
  l->k.u.coll.coll_id = id;
}
