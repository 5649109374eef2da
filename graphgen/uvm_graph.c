/*
 * uvm_graph.c — the torchrec style's ops for tables cached in HBM
 * (memory: uvm_caching, TorchRec's fused_uvm_caching): FBGEMM's cache
 * prefetch, run before the table-batched lookup of each class of shards
 * that holds a cached table (gg_embeddings calls gg_tbe_prefetch).
 *
 * Without TorchRec's prefetch pipeline, FBGEMM's table-batched module
 * prefetches inside its forward (the training module's _prefetch), in
 * this order, each op on the compute stream:
 *
 *   aten::empty_like                 the cache locations, int32 [n]
 *   aten::zeros                      an empty list to append to (no kernel)
 *   fbgemm::linearize_cache_indices  each index made a row of the whole
 *                                    cache space (table offset + index):
 *                                    one pass over the n indices
 *   aten::cat                        the linear indices appended (a copy)
 *   fbgemm::lru_cache_populate       the misses found (the linear indices
 *                                    sorted and made unique, each looked
 *                                    up in its set of the cache's tags)
 *                                    and inserted: fetched over the host
 *                                    link into the cache, evicting as many
 *                                    rows back (LRU, FBGEMM's default
 *                                    cache algorithm)
 *   fbgemm::lxu_cache_lookup         every index's slot in the cache
 *
 * and the lookup then reads every row from HBM (kernels/uvm.c: its
 * LOOKUP part; lru_cache_populate's insert kernel is the PREFETCH part).
 * The backward updates the cached rows in place, in the lookup's backward
 * kernel: no op of its own. n is the class's indices (all its tables'),
 * as FBGEMM linearizes them all even where only some tables are cached.
 *
 * Index kernels, as memory traffic per index (approximate: the counts
 * FBGEMM's kernels touch, not fitted): linearize 16 B (read one index,
 * write one); the populate's find-uncached pass 336 B (its radix sort's
 * five passes over the int64 keys, read and written, and the set's 32
 * int64 tags); the lookup 268 B (the tags, the index, the int32 slot).
 */
#include "graphgen/graphgen_int.h"

#define I32 DC_DTYPE_INT32
#define I64 DC_DTYPE_INT64

/* Cache-set associativity (FBGEMM's DEFAULT_ASSOC on CUDA) and the bytes
 * of one set's tags. */
#define ASSOC         32
#define SET_TAG_BYTES (ASSOC * 8.0)

/* Whether local tables `tabs` are looked up by a TBE with a cache: the
 * torchrec style, batched, a uvm_caching table among them. */
static bool tbe_cached(const gg_ctx *c, const int32_t *tabs, int32_t n) {
  if (!c->trec || !c->batched) return false;
  for (int32_t i = 0; i < n; i++)
    if (c->p->tables[tabs[i]].memory == DC_MEMORY_UVM_CACHING) return true;
  return false;
}

int32_t gg_tbe_prefetch(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  const dc_point *p = c->p;
  int32_t lo = c->cls_first[k], hi = c->cls_first[k + 1];
  if (!tbe_cached(c, &c->local[lo], hi - lo)) return -1;
  int64_t n = gg_numel(b, c->idx_cls[k]);

  int32_t loc = gg_t1(b, I32, n);
  gg_begin(b, "aten::empty_like");
  gg_in(b, c->idx_cls[k]);
  gg_out(b, loc);
  gg_end(b);

  int32_t none = gg_t1(b, I64, 0);
  gg_begin(b, "aten::zeros");
  gg_out(b, none);
  gg_end(b);

  /* the cache's per-table offsets (resident) */
  int32_t cumsum = gg_t1(b, I64, (int64_t)(hi - lo) + 1);
  int32_t lin = gg_t1(b, I64, n);
  gg_begin(b, "fbgemm::linearize_cache_indices");
  gg_in(b, cumsum);
  gg_in(b, c->idx_cls[k]);
  gg_in(b, c->offs_cls[k]);
  gg_out(b, lin);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, n, 0, 16);
  gg_end(b);

  int32_t merged = gg_t1(b, I64, n);
  gg_begin(b, "aten::cat");
  gg_in(b, none);
  gg_in(b, lin);
  gg_out(b, merged);
  gg_copy(b, DC_KERNEL_CONCAT, gg_mul(b, n, 8), false);
  gg_end(b);

  /* the cache's tags and rows (resident in HBM), the tables in host
   * memory; the populate updates the first two in place */
  int64_t slots = 0;
  for (int32_t i = lo; i < hi; i++) {
    int32_t t = c->local[i];
    dc_emb_group g =
        dc_shard_emb_group(p, t, c->sh_rows[t], c->sh_cols[t], c->sh_pool[t]);
    slots += g.cache_rows;
  }
  int64_t sets = (slots + ASSOC - 1) / ASSOC;
  int32_t state = gg_t2(b, I64, sets < 1 ? 1 : sets, ASSOC);
  gg_begin(b, "fbgemm::lru_cache_populate");
  for (int32_t i = lo; i < hi; i++)
    gg_in(b, c->w_tab[c->local[i]]);
  gg_in(b, cumsum);
  gg_in(b, lin);
  gg_in(b, state);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, n, 0, SET_TAG_BYTES + 5 * 2 * 8.0);
  gg_emb_kernel(c, DC_KERNEL_EMBEDDING_FWD, &c->local[lo], hi - lo,
                c->cls_batch[k], false);
  b->lns[b->n_lns - 1].k.u.emb.part = DC_EMB_PREFETCH;
  gg_end(b);

  int32_t slot = gg_like(b, loc);
  gg_begin(b, "fbgemm::lxu_cache_lookup");
  gg_in(b, lin);
  gg_in(b, state);
  gg_in(b, loc);
  gg_out(b, slot);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, n, 0, SET_TAG_BYTES + 8 + 4);
  gg_end(b);
  return slot;
}
