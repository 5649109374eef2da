/*
 * kjt.c — TorchRec's sparse input (the torchrec style, torchrec_graph.c):
 * the KJT's input distribution and the table-batched (FBGEMM) lookups'
 * inputs and names. The forward (gg_embeddings) and backward passes call
 * these for a torchrec point, and the pipelined step (torchrec_graph.c)
 * calls the distribution's two halves itself, for the next batch; so they
 * live below all three.
 *
 * The KJT input distribution, in TorchRec's two halves: the splits
 * all-to-all (each rank tells every other how many lengths and values it
 * will send: 3 int64 per rank) and, once the host has read them, the
 * lengths and values all-to-alls. Each rank sends the lengths and values
 * of its local batch to the ranks holding the tables (per sharding type,
 * kjt_sends) and receives, for its own shards, those of the global batch. The received tensors are written
 * to `*recv_l` and `*recv_v` (fresh tensors; the caller decides whether
 * they are this batch's or the next one's). Single rank: nothing.
 */
#include "graphgen/graphgen_int.h"

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

void gg_annotation(gg_b *b, const char *name) {
  int32_t i = gg_begin(b, name);
  b->ops[i].annotation = true;
}

/* Σ over all tables of the pooled lookups of `batch` samples. */
int64_t gg_all_lookups(gg_ctx *c, int64_t batch) {
  int64_t n = 0;
  for (int32_t t = 0; t < c->p->n_tables; t++)
    n += gg_lookups(c->b, batch, c->p->tables[t].pooling);
  return n;
}

/* The column blocks of a grid table: its shards on the first ranks of
 * their hosts (set_grid puts every block on its host's first rank). */
static int32_t grid_blocks_of(const gg_ctx *c, const dc_table_plan *tp) {
  int32_t n = 0, S = c->plan->gpus_per_host < 1 ? 1 : c->plan->gpus_per_host;
  for (int32_t i = 0; i < tp->n_shards; i++)
    if (tp->shards[i].rank % S == 0) n++;
  return n;
}

/* How many times the sharded module's KJT holds a table's feature: once
 * per column shard (column-wise, table-column-wise) or column block
 * (grid), else once. */
static int32_t feature_copies(const gg_ctx *c, const dc_table_plan *tp) {
  if (tp->type == DC_SHARDING_COLUMN_WISE ||
      tp->type == DC_SHARDING_TABLE_COLUMN_WISE)
    return tp->n_shards;
  if (tp->type == DC_SHARDING_GRID_SHARD) return grid_blocks_of(c, tp);
  return 1;
}

/* What this rank's KJT all-to-all sends of its local batch, as TorchRec's
 * input distribution does per sharding type: a table-wise feature once
 * (to its rank), a column-wise one once per column shard, a row-wise one's
 * lengths to every rank and a table-row-wise one's to every rank of its
 * host (its ids bucketized: each id once), a grid one's as table-row-wise
 * once per column block, a data-parallel one not at all. */
static void kjt_sends_of(gg_ctx *c, dc_sharding only, int64_t *n_len,
                         int64_t *n_val) {
  gg_b *b = c->b;
  *n_len = *n_val = 0;
  for (int32_t t = 0; t < c->p->n_tables; t++) {
    const dc_table_plan *tp = &c->plan->tables[t];
    if (only != DC_SHARDING_AUTO && tp->type != only) continue;
    int64_t v = gg_lookups(b, c->batch, c->p->tables[t].pooling);
    switch (tp->type) {
    case DC_SHARDING_DATA_PARALLEL: continue;
    case DC_SHARDING_COLUMN_WISE:
    case DC_SHARDING_TABLE_COLUMN_WISE:
      *n_len += gg_mul(b, tp->n_shards, c->batch);
      *n_val += gg_mul(b, tp->n_shards, v);
      break;
    case DC_SHARDING_ROW_WISE:
    case DC_SHARDING_TABLE_ROW_WISE:
    case DC_SHARDING_GRID_SHARD:
      *n_len += gg_mul(b, tp->n_shards, c->batch);
      *n_val += gg_mul(b, feature_copies(c, tp), v);
      break;
    default:
      *n_len += c->batch;
      *n_val += v;
      break;
    }
  }
}

/* Every type's (sharding type `only` == DC_SHARDING_AUTO). */
static void kjt_sends(gg_ctx *c, int64_t *n_len, int64_t *n_val) {
  kjt_sends_of(c, DC_SHARDING_AUTO, n_len, n_val);
}

/* fbgemm::permute_2D_sparse_data: a KJT's lengths and values reordered
 * (by destination rank before the all-to-all, by feature after it) into
 * `*len`, `*val` of n_len and n_val elements (-1: as the input): one
 * kernel reading and writing both. */
static void kjt_permute_n(gg_ctx *c, int32_t in_len, int32_t in_val,
                          int64_t n_len, int64_t n_val, int32_t *len,
                          int32_t *val) {
  gg_b *b = c->b;
  int64_t nl = n_len < 0 ? gg_numel(b, in_len) : n_len;
  int64_t nv = n_val < 0 ? gg_numel(b, in_val) : n_val;
  *len = gg_t1(b, DC_DTYPE_INT32, nl);
  *val = gg_t1(b, DC_DTYPE_INT64, nv);
  gg_begin(b, "fbgemm::permute_2D_sparse_data");
  gg_in(b, in_len);
  gg_in(b, in_val);
  gg_out(b, *len);
  gg_out(b, *val);
  if (nl + nv > 0)
    gg_ew(b, DC_KERNEL_ELEMENTWISE, nl + nv, 0,
          (8.0 * (double)nl + 16.0 * (double)nv) / (double)(nl + nv));
  gg_end(b);
}

static void kjt_permute(gg_ctx *c, int32_t in_len, int32_t in_val,
                        int32_t *len, int32_t *val) {
  kjt_permute_n(c, in_len, in_val, -1, -1, len, val);
}

/* One all-to-all of the KJT in its record_function scope, on NCCL's
 * stream over every rank (`splits` < 0: none read). */
static void kjt_a2a(gg_ctx *c, const char *scope, int64_t bytes, int32_t in,
                    int32_t splits, int32_t out) {
  gg_b *b = c->b;
  gg_annotation(b, scope);
  gg_begin(b, "c10d::alltoall_base_");
  gg_in(b, in);
  if (splits >= 0) gg_in(b, splits);
  gg_out(b, out);
  gg_coll(c, DC_KERNEL_ALL_TO_ALL, bytes, c->n_ranks, gg_world_hosts(c),
          b->coll_next++);
  gg_end(b);
  gg_end(b);
}

int32_t gg_plan_types(const gg_ctx *c, dc_sharding types[8]) {
  int32_t n = 0;
  for (int32_t t = 0; t < c->p->n_tables; t++) {
    dc_sharding ty = c->plan->tables[t].type;
    int32_t i = 0;
    while (i < n && types[i] != ty) i++;
    if (i == n && n < 8) types[n++] = ty;
  }
  return n;
}

/* Whether the KJT's features are already in the order the sharded module
 * wants them: grouped by sharding type (gg_plan_types), table-wise features
 * by rank, table-row-wise (and grid) by host, the others in table order,
 * each once (a column-wise or grid table of several shards or blocks
 * appears once per shard or block, so it always needs the permute). */
static bool features_in_order(const gg_ctx *c) {
  dc_sharding types[8];
  int32_t n = gg_plan_types(c, types), next = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t key = -1;
    for (int32_t t = 0; t < c->p->n_tables; t++) {
      const dc_table_plan *tp = &c->plan->tables[t];
      if (tp->type != types[i]) continue;
      if (t != next++) return false;
      int32_t k = 0;
      if (tp->type == DC_SHARDING_TABLE_WISE ||
          tp->type == DC_SHARDING_COLUMN_WISE ||
          tp->type == DC_SHARDING_TABLE_COLUMN_WISE) {
        if (tp->n_shards > 1) return false;
        k = tp->shards[0].rank;
      } else if (tp->type == DC_SHARDING_TABLE_ROW_WISE) {
        k = tp->host;
      } else if (tp->type == DC_SHARDING_GRID_SHARD) {
        if (feature_copies(c, tp) > 1) return false;
        k = dc_shard_plan_host(c->plan, tp->shards[0].rank);
      }
      if (k < key) return false;
      key = k;
    }
  }
  return true;
}

/* One op of the input distribution over a KJT's lengths and values
 * (fbgemm::permute_2D_sparse_data, fbgemm::block_bucketize_sparse_features):
 * reads `in_l`, `in_v`, writes fresh `*len`, `*val` of n_len and n_val
 * elements, moving `elems_l` lengths and `elems_v` values (int32 and
 * int64, read and written). */
static void kjt_op(gg_ctx *c, const char *name, int32_t in_l, int32_t in_v,
                   int64_t n_len, int64_t n_val, int64_t elems_l,
                   int64_t elems_v, int32_t *len, int32_t *val) {
  gg_b *b = c->b;
  *len = gg_t1(b, I32, n_len);
  *val = gg_t1(b, I64, n_val);
  gg_begin(b, name);
  gg_in(b, in_l);
  gg_in(b, in_v);
  gg_out(b, *len);
  gg_out(b, *val);
  if (elems_l + elems_v > 0)
    gg_ew(b, DC_KERNEL_ELEMENTWISE, elems_l + elems_v, 0,
          (8.0 * (double)elems_l + 16.0 * (double)elems_v) /
              (double)(elems_l + elems_v));
  gg_end(b);
}

/* The first half, as TorchRec's sharded module runs it: the local KJT
 * permuted into sharding-type order unless it is in that order already
 * (features_in_order); per type, row-wise, table-row-wise and grid ids
 * bucketized by the shard that holds their row
 * (fbgemm::block_bucketize_sparse_features: lengths to every rank of the
 * shard group, each id once per column block), table-row-wise and grid
 * ones then permuted by destination (TorchRec's grid input dist is the
 * table-row-wise one over the blocks' features); then one splits
 * all-to-all of 3 int64 per rank for every sharding type that sends (all
 * but data-parallel). */
int32_t gg_kjt_splits(gg_ctx *c, int32_t *send_l, int32_t *send_v) {
  gg_b *b = c->b;
  int64_t n_len, n_val;
  kjt_sends(c, &n_len, &n_val);
  int32_t l = c->kjt_len, v = c->kjt_val;
  bool any = false;
  if (!features_in_order(c)) {
    int64_t pl = 0, pv = 0; /* the permuted KJT: column shards repeated */
    for (int32_t t = 0; t < c->p->n_tables; t++) {
      const dc_table_plan *tp = &c->plan->tables[t];
      int32_t rep = feature_copies(c, tp);
      pl += gg_mul(b, rep, c->batch);
      pv += gg_mul(b, rep,
                   gg_lookups(b, c->batch, c->p->tables[t].pooling));
    }
    kjt_op(c, "fbgemm::permute_2D_sparse_data", l, v, pl, pv, pl, pv, &l,
           &v);
    any = true;
  }
  dc_sharding types[8];
  int32_t n_types = gg_plan_types(c, types), n_send_types = 0;
  for (int32_t i = 0; i < n_types; i++) {
    if (types[i] != DC_SHARDING_DATA_PARALLEL) n_send_types++;
    bool host_rw = types[i] == DC_SHARDING_TABLE_ROW_WISE ||
                   types[i] == DC_SHARDING_GRID_SHARD;
    if (types[i] != DC_SHARDING_ROW_WISE && !host_rw) continue;
    int64_t tl = 0, tv = 0, ol = 0; /* this type's lengths, values, out */
    for (int32_t t = 0; t < c->p->n_tables; t++) {
      const dc_table_plan *tp = &c->plan->tables[t];
      if (tp->type != types[i]) continue;
      int32_t rep = feature_copies(c, tp);
      tl += gg_mul(b, rep, c->batch);
      tv += gg_mul(b, rep, gg_lookups(b, c->batch, c->p->tables[t].pooling));
      ol += gg_mul(b, tp->n_shards, c->batch);
    }
    kjt_op(c, "fbgemm::block_bucketize_sparse_features", l, v, n_len, n_val,
           tl + ol, 2 * tv, &l, &v);
    if (host_rw)
      kjt_op(c, "fbgemm::permute_2D_sparse_data", l, v, n_len, n_val, ol, tv,
             &l, &v);
    any = true;
  }
  if (!any || gg_numel(b, l) != n_len || gg_numel(b, v) != n_val) {
    /* the sends are slices (views) of what the last op wrote */
    int32_t vl = gg_t1(b, I32, n_len), vv = gg_t1(b, I64, n_val);
    b->ts[vl].producer = b->ts[l].producer;
    b->ts[vv].producer = b->ts[v].producer;
    l = vl;
    v = vv;
  }
  *send_l = l;
  *send_v = v;
  if (n_send_types < 1) n_send_types = 1;
  int64_t n_splits = gg_mul3(b, c->n_ranks, 3, n_send_types);
  int32_t splits = gg_t1(b, I64, n_splits);
  int32_t rs = gg_like(b, splits);
  kjt_a2a(c, "## all2all_data:kjt splits ##", gg_mul(b, n_splits, 8),
          splits, -1, rs);
  return rs;
}

/* The lengths and values this rank receives: those of its non-replicated
 * shards (of sharding type `only`; DC_SHARDING_AUTO: all) over the
 * samples each class looks up. */
static void kjt_received_of(gg_ctx *c, dc_sharding only, int64_t *n_len,
                            int64_t *n_val) {
  *n_len = *n_val = 0;
  for (int32_t k = 0; k < GG_N_CLS; k++) {
    if (k == GG_CLS_DP) continue;
    for (int32_t i = c->cls_first[k]; i < c->cls_first[k + 1]; i++) {
      int32_t t = c->local[i];
      if (only != DC_SHARDING_AUTO && c->plan->tables[t].type != only)
        continue;
      *n_len += c->cls_batch[k];
      *n_val += c->n_idx[t];
    }
  }
}

void gg_kjt_received(gg_ctx *c, int64_t *n_len, int64_t *n_val) {
  kjt_received_of(c, DC_SHARDING_AUTO, n_len, n_val);
}

/* The second half: per sharding type that sends (TorchRec's order,
 * gg_plan_types), its lengths then its values all-to-all, each rank sending
 * its slice of the send buffers and receiving its shards' of that type
 * (empty when it holds none). The received tensors (fresh) stand for all
 * types' together, produced by the last exchange. */
void gg_kjt_tensors(gg_ctx *c, int32_t splits, int32_t send_l,
                    int32_t send_v, int32_t *recv_l, int32_t *recv_v) {
  gg_b *b = c->b;
  int64_t n_len, n_val;
  gg_kjt_received(c, &n_len, &n_val);
  dc_sharding types[8];
  int32_t n_types = gg_plan_types(c, types), n_send = 0;
  for (int32_t i = 0; i < n_types; i++)
    if (types[i] != DC_SHARDING_DATA_PARALLEL) n_send++;
  if (n_send <= 1) {
    *recv_l = gg_t1(b, I32, n_len);
    *recv_v = gg_t1(b, I64, n_val);
    kjt_a2a(c, "## all2all_data:kjt lengths ##",
            gg_mul(b, gg_numel(b, send_l), 4), send_l, splits, *recv_l);
    kjt_a2a(c, "## all2all_data:kjt values ##",
            gg_mul(b, gg_numel(b, send_v), 8), send_v, splits, *recv_v);
    return;
  }
  int32_t last_l = -1, last_v = -1;
  for (int32_t i = 0; i < n_types; i++) {
    if (types[i] == DC_SHARDING_DATA_PARALLEL) continue;
    int64_t sl, sv, rl, rv;
    kjt_sends_of(c, types[i], &sl, &sv);
    kjt_received_of(c, types[i], &rl, &rv);
    /* this type's slices of the send buffers (views) */
    int32_t tl = gg_t1(b, I32, sl), tv = gg_t1(b, I64, sv);
    b->ts[tl].producer = b->ts[send_l].producer;
    b->ts[tv].producer = b->ts[send_v].producer;
    last_l = gg_t1(b, I32, rl);
    last_v = gg_t1(b, I64, rv);
    kjt_a2a(c, "## all2all_data:kjt lengths ##", gg_mul(b, sl, 4), tl,
            splits, last_l);
    kjt_a2a(c, "## all2all_data:kjt values ##", gg_mul(b, sv, 8), tv,
            splits, last_v);
  }
  *recv_l = gg_t1(b, I32, n_len);
  *recv_v = gg_t1(b, I64, n_val);
  b->ts[*recv_l].producer = b->ts[last_l].producer;
  b->ts[*recv_v].producer = b->ts[last_v].producer;
}

/* In the forward, before the lookups (called by gg_embeddings): without
 * the pipeline the sharded module distributes its input here; then the
 * received KJT is regrouped by feature (TorchRec's recat, in the
 * awaitable's wait): one fbgemm::permute_2D_sparse_data per sharding type
 * of which this rank holds a shard, over that type's lengths and values,
 * in TorchRec's order. A type of which the rank holds nothing has no
 * recat (TorchRec builds none). */
void gg_tbe_dist(gg_ctx *c) {
  gg_b *b = c->b;
  if (!c->sharded) return;
  if (!c->p->pipeline) {
    int32_t sl, sv, splits = gg_kjt_splits(c, &sl, &sv);
    gg_kjt_tensors(c, splits, sl, sv, &c->kjt_rlen, &c->kjt_rval);
  }
  dc_sharding types[8];
  int32_t n = gg_plan_types(c, types);
  for (int32_t i = 0; i < n; i++) {
    int32_t k = gg_class_of(types[i], c->trec);
    if (k == GG_CLS_DP || c->cls_first[k] == c->cls_first[k + 1]) continue;
    int64_t nl, nv;
    kjt_received_of(c, types[i], &nl, &nv);
    /* this type's slice of the received KJT (views) */
    int32_t l = gg_t1(b, I32, nl), v = gg_t1(b, I64, nv);
    b->ts[l].producer = b->ts[c->kjt_rlen].producer;
    b->ts[v].producer = b->ts[c->kjt_rval].producer;
    gg_annotation(b, "## dist_init:recat_values ##");
    kjt_permute(c, l, v, &c->rlen_cls[k], &c->rval_cls[k]);
    gg_end(b);
  }
}

/* Class k's lookup inputs, as FBGEMM's table-batched module prepares them
 * in the forward: the offsets from the lengths
 * (fbgemm::asynchronous_complete_cumsum) and the indices checked against
 * the tables' rows (fbgemm::bounds_check_indices, FBGEMM's default
 * BoundsCheckMode.WARNING; the dense TBE of data-parallel tables has
 * none), both on the device. The lengths and indices are the
 * class's slices of the KJT's (views). Called by gg_embeddings. */
void gg_tbe_inputs(gg_ctx *c, int32_t k) {
  gg_b *b = c->b;
  int32_t lo = c->cls_first[k], hi = c->cls_first[k + 1];
  bool local = k == GG_CLS_DP || !c->sharded;
  int64_t total = 0;
  for (int32_t i = lo; i < hi; i++) total += c->n_idx[c->local[i]];
  int64_t n_off = gg_mul(b, hi - lo, c->cls_batch[k]);
  c->idx_cls[k] = gg_t1(b, I64, total);
  c->offs_cls[k] = gg_t1(b, I64, n_off + 1);
  int32_t vals = local                 ? c->kjt_val
                 : c->rval_cls[k] >= 0 ? c->rval_cls[k]
                                       : c->kjt_rval;
  b->ts[c->idx_cls[k]].producer = b->ts[vals].producer;
  /* the class's slice of the lengths (a view) */
  int32_t lens = local                 ? c->kjt_len
                 : c->rlen_cls[k] >= 0 ? c->rlen_cls[k]
                                       : c->kjt_rlen;
  if (gg_numel(b, lens) != n_off) {
    int32_t view = gg_t1(b, DC_DTYPE_INT32, n_off);
    b->ts[view].producer = b->ts[lens].producer;
    lens = view;
  }
  gg_begin(b, "fbgemm::asynchronous_complete_cumsum");
  gg_in(b, lens);
  gg_out(b, c->offs_cls[k]);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, n_off + 1, 1, 4 + 8);
  gg_end(b);
  if (k == GG_CLS_DP && c->sharded) return; /* the dense TBE: none */
  gg_begin(b, "fbgemm::bounds_check_indices");
  gg_in(b, c->idx_cls[k]);
  gg_in(b, c->offs_cls[k]);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, total + n_off + 1, 1, 8);
  gg_end(b);
}
