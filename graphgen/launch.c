/*
 * launch.c — the kernel launches that need the rank's context (gg_ctx)
 * rather than the builder alone (core.c): an embedding kernel over this
 * rank's shards, identical shards grouped, and a collective on NCCL's
 * stream. The forward and backward passes, the exchange, TorchRec's input
 * distribution and DDP's all-reduces all launch them.
 */
#include <math.h>

#include "graphgen/graphgen_int.h"

/* One table's group (tables 0) for a shard of rows × cols: where its rows
 * live and, for a cached table, the rows of its share of the HBM cache
 * (cache_load_factor × rows, at least one). A table the point left to the
 * planner (AUTO) that reaches a graph unplaced is in HBM. */
dc_emb_group dc_shard_emb_group(const dc_point *p, int32_t t, int64_t rows,
                             int32_t cols, double pooling) {
  const dc_table *tb = &p->tables[t];
  dc_emb_group g = {0, rows, cols, pooling, DC_MEMORY_HBM, 0, 0, -1};
  if (tb->memory == DC_MEMORY_UVM || tb->memory == DC_MEMORY_UVM_CACHING) {
    g.memory = tb->memory;
    g.zipf = tb->zipf;
    g.hit_rate = tb->hit_rate;
  }
  if (g.memory == DC_MEMORY_UVM_CACHING) {
    double cr = ceil(p->cache_load_factor * (double)rows);
    g.cache_rows = cr < 1 ? 1 : cr > (double)rows ? rows : (int64_t)cr;
  }
  return g;
}

/* Groups identical tables (rows, dim, pooling, placement) for one
 * embedding kernel. */
void gg_emb_kernel(gg_ctx *c, dc_kernel_kind kind, const int32_t *tabs,
                   int32_t n, int64_t batch, bool fused) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  dc_emb_group *g = dc_arena_array(b->a, (size_t)n, sizeof(dc_emb_group));
  int32_t ng = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t t = tabs[i];
    dc_emb_group x = dc_shard_emb_group(p, t, c->sh_rows[t], c->sh_cols[t],
                                     c->sh_pool[t]);
    int32_t j = 0;
    while (j < ng && !(g[j].rows == x.rows && g[j].dim == x.dim &&
                       g[j].pooling == x.pooling &&
                       g[j].memory == x.memory &&
                       g[j].cache_rows == x.cache_rows &&
                       g[j].zipf == x.zipf && g[j].hit_rate == x.hit_rate))
      j++;
    if (j == ng) g[ng++] = x;
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
dc_launch *gg_coll(gg_ctx *c, dc_kernel_kind kind, int64_t bytes,
                   int32_t ranks, int32_t hosts, int32_t id) {
  dc_launch *l = gg_launch(c->b, kind, GG_STREAM_COMM);
  l->k.u.coll.bytes = bytes;
  l->k.u.coll.ranks = ranks;
  l->k.u.coll.hosts = hosts;
  l->k.u.coll.coll_id = id;
  return l;
}
