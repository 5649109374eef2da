/*
 * torchrec_estimate.c — TorchRec's planner estimate of a sharding plan
 * (plan.h), restating TorchRec's
 * torchrec/distributed/planner/shard_estimators.py as of 2025.
 *
 * Per shard of a table, with I = L·B the indices per rank (L the pooling
 * factor, B the per-rank batch), O = min(1, L)·B the pooled outputs per
 * rank (TorchRec's batch_outputs: a feature present in a fraction L < 1
 * of the samples outputs that fraction of the rows), W the
 * world size, S the GPUs per host, D the shard's columns, e the tables'
 * element size (training.embedding_precision: 4 for fp32),
 * bw the device bandwidth of the compute kernel and every bandwidth in
 * bytes per ms:
 *
 * table_wise / column_wise (the shard serves the global batch):
 *   input_read = ⌈I·W·8⌉, lookup = I·W·max(D, 32)·e, fwd_out = O·W·D·e
 *   penalty = 1 (D ≥ 128), 1.15 (64 ≤ D < 128), 1.75 (D < 64)
 *   fwd_compute = (input_read + lookup + fwd_out)·penalty / bw
 *   fwd_comms = bwd_comms = fwd_out / bw_a2a
 *   bwd_compute = 2·fwd_compute
 * row_wise (each shard sees I/W indices; no max(D, 32), no penalty):
 *   input_read = ⌈(I/W)·W·8⌉, lookup = (I/W)·W·D·e, out = O·W·D·e
 *   fwd_compute = (input_read + lookup + out) / bw
 *   fwd_comms = out / bw_rs;  bwd_comms = out / bw_ag + out·2.455 / bw
 * table_row_wise: row-wise with I/S for I/W, intra-host reduce-scatter and
 *   all-gather, plus, when W > S, a cross-host all-to-all of O·(W/S)·D·e
 *   each way;
 * grid_shard: each shard as a table-row-wise shard of its D columns (its
 *   column block), TorchRec's GridShardEvaluator and storage sizes;
 * data_parallel (replica of R·D·e table bytes, dense kernel bw = HBM/2):
 *   fwd_compute = (⌈I·8⌉ + I·D·e + O·D·e) / bw, fwd_comms = 0
 *   n = min(W/S, 2); all_reduce = bytes·(2n−1)/n / (cross·S), ×2 if W > 2S
 *   bwd_comms = all_reduce + bytes·9.22 / bw; bwd_compute = 2·fwd_compute
 *
 * Collective bandwidth: intra-host when the group fits in one host, else
 * cross-host (per GPU); no latency, no algorithm factor.
 *
 * Storage per shard: weights rows·cols·e; optimizer state ⌈weights ×
 * {sgd 0, adam 2, rowwise_adagrad 1/D_table, adagrad 1}⌉ (D_table the
 * whole table's dim, also for a column shard, as TorchRec); input buffer
 * ⌈I·W·8⌉ and output buffer ⌈O·W·D·e⌉ (table/column-wise; row-wise
 * ⌈(I/W)·W·8⌉ and ⌈O·W·D·e⌉, table-row-wise ⌈(I/S)·W·8⌉ and ⌈O·W·D·e⌉,
 * data-parallel ⌈I·8⌉ and ⌈O·D·e⌉; grid as table-row-wise). All in HBM
 * for the fused kernel.
 * The ceilings are TorchRec's whole-byte roundings (math.ceil), which
 * fractional pooling factors make visible.
 *
 * Tables beyond HBM (a table's `memory`, spec/study.md) take TorchRec's
 * UVM kernels: uvm → fused_uvm, bw = HBM↔DDR / 10, HBM storage the
 * input and output buffers only, weights and state in DDR; uvm_caching
 * → fused_uvm_caching with caching_ratio r = the point's
 * cache_load_factor, bw = (r·HBM + (1 − r)·HBM↔DDR) / 10, HBM storage
 * s = ⌈round(R·D_table·e·r) × the shard's share of the table⌉, plus
 * ⌈s × the optimizer factor⌉ and ⌈rows·(4 + 16·r)⌉ (the cache's index
 * map, state and LRU counters; TorchRec's whole-byte roundings) and the
 * buffers; DDR the whole shard with its state.
 * TorchRec's prefetch term needs measured cache statistics, which a
 * plan without them does not have: it is 0, as in TorchRec.
 */
#include <math.h>
#include <string.h>

#include "runtime/plan/plan.h"

#define GIB 1073741824.0

void dc_torchrec_defaults(dc_torchrec_consts *c) {
  memset(c, 0, sizeof *c);
  c->hbm_gibps = 897;
  c->ddr_gibps = 51;
  c->hbm_to_ddr_gibps = 32;
  c->intra_host_gibps = 600;
  c->cross_host_gibps = 12.5;
  c->hbm_gib = 32;
  c->ddr_gib = 128;
  c->index_bytes = 8;
  c->bwd_compute_mult = 2;
  c->weighted_mult = 1.1;
  c->batched_copy = 2.455;
  c->dp_optimizer = 9.22;
  c->full_block_dim = 128;
  c->penalty_mid = 1.15;
  c->penalty_low = 1.75;
  c->cache_load = 0.2;
  c->kernel = DC_TORCHREC_FUSED;
}

void dc_torchrec_consts_of(const dc_point *p, dc_torchrec_consts *c) {
  dc_torchrec_defaults(c);
  if (p->torchrec_hbm_bw > 0) c->hbm_gibps = p->torchrec_hbm_bw;
  if (p->torchrec_ddr_bw > 0) c->ddr_gibps = p->torchrec_ddr_bw;
  if (p->torchrec_hbm_to_ddr_bw > 0)
    c->hbm_to_ddr_gibps = p->torchrec_hbm_to_ddr_bw;
  if (p->torchrec_intra_host_bw > 0)
    c->intra_host_gibps = p->torchrec_intra_host_bw;
  if (p->torchrec_cross_host_bw > 0)
    c->cross_host_gibps = p->torchrec_cross_host_bw;
}

/* GiB/s → bytes per ms. */
static double bpms(double gibps) { return gibps * GIB / 1000.0; }

double dc_torchrec_device_bw(const dc_torchrec_consts *c,
                             dc_torchrec_kernel k) {
  switch (k) {
  case DC_TORCHREC_DENSE: return 0.5 * bpms(c->hbm_gibps);
  case DC_TORCHREC_FUSED: return bpms(c->hbm_gibps);
  case DC_TORCHREC_FUSED_UVM: return bpms(c->hbm_to_ddr_gibps) / 10;
  case DC_TORCHREC_FUSED_UVM_CACHING:
    return (c->cache_load * bpms(c->hbm_gibps) +
            (1 - c->cache_load) * bpms(c->hbm_to_ddr_gibps)) /
           10;
  }
  return bpms(c->hbm_gibps);
}

static double opt_factor(dc_optimizer o, double D) {
  switch (o) {
  case DC_OPTIMIZER_SGD: return 0;
  case DC_OPTIMIZER_ADAM: return 2;
  case DC_OPTIMIZER_ROWWISE_ADAGRAD: return 1 / D;
  case DC_OPTIMIZER_ADAGRAD: return 1;
  }
  return 1;
}

dc_torchrec_shard dc_torchrec_price_shard(const dc_point *p,
                                          const dc_shard_plan *s,
                                          int32_t table, int32_t shard,
                                          const dc_torchrec_consts *c) {
  const dc_table *tb = &p->tables[table];
  const dc_table_plan *tp = &s->tables[table];
  const dc_shard *sh = &tp->shards[shard];
  double W = s->n_ranks < 1 ? 1 : s->n_ranks;
  double S = s->gpus_per_host < 1 ? 1 : s->gpus_per_host;
  if (S > W) S = W;
  double B = (double)p->batch_size / W;
  /* TorchRec's batch_outputs for a pooled feature: min(1, L)·B — a
   * feature read less than once per sample (L < 1) outputs fewer rows */
  double I = tb->pooling * B, O = (tb->pooling < 1 ? tb->pooling : 1) * B;
  double D = sh->cols;
  double e = dc_dtype_bytes(dc_storage_dtype(p->embedding_precision));
  double ib = c->index_bytes;
  /* the table's compute kernel: where dlrmc keeps it (TorchRec's
   * fused_uvm and fused_uvm_caching, the latter at the point's cache
   * share, TorchRec's caching_ratio) */
  dc_torchrec_consts ck = *c;
  if (tb->memory == DC_MEMORY_UVM) {
    ck.kernel = DC_TORCHREC_FUSED_UVM;
  } else if (tb->memory == DC_MEMORY_UVM_CACHING) {
    ck.kernel = DC_TORCHREC_FUSED_UVM_CACHING;
    ck.cache_load = p->cache_load_factor;
  }
  double bw = dc_torchrec_device_bw(&ck, ck.kernel);
  bool one_host = W <= S;
  double bw_coll = one_host ? bpms(c->intra_host_gibps)
                            : bpms(c->cross_host_gibps);
  double table_bytes = (double)sh->rows * D * e;

  dc_torchrec_shard r;
  memset(&r, 0, sizeof r);
  r.table = table;
  r.shard = shard;
  r.rank = sh->rank;
  r.type = W <= 1 ? DC_SHARDING_TABLE_WISE : tp->type;
  double in_buf = 0, out_buf = 0;
  switch (r.type) {
  case DC_SHARDING_ROW_WISE:
  case DC_SHARDING_TABLE_ROW_WISE:
  case DC_SHARDING_GRID_SHARD: {
    bool twrw = r.type != DC_SHARDING_ROW_WISE;
    double Ish = twrw ? I / S : I / W;
    double input_read = ceil(Ish * W * ib);
    double lookup = Ish * W * D * e;
    double out = O * W * D * e;
    r.fwd_compute_ms = (input_read + lookup + out) / bw;
    double bw_rs = twrw ? bpms(c->intra_host_gibps) : bw_coll;
    r.fwd_comms_ms = out / bw_rs;
    r.bwd_comms_ms = out / bw_rs + out * c->batched_copy / bw;
    if (twrw && W > S) {
      double x = O * (W / S) * D * e / bpms(c->cross_host_gibps);
      r.fwd_comms_ms += x;
      r.bwd_comms_ms += x;
    }
    in_buf = input_read;
    out_buf = ceil(out);
    break;
  }
  case DC_SHARDING_DATA_PARALLEL: {
    double dbw = dc_torchrec_device_bw(c, DC_TORCHREC_DENSE);
    r.fwd_compute_ms = (ceil(I * ib) + I * D * e + O * D * e) / dbw;
    double n = W / S < 2 ? W / S : 2;
    double ar = table_bytes * (2 * n - 1) / n /
                (bpms(c->cross_host_gibps) * S);
    if (W > 2 * S) ar *= 2;
    r.bwd_comms_ms = ar + table_bytes * c->dp_optimizer / dbw;
    in_buf = ceil(I * ib);
    out_buf = ceil(O * D * e);
    break;
  }
  default: { /* table_wise, column_wise */
    double input_read = ceil(I * W * ib);
    double lookup = I * W * (D > 32 ? D : 32) * e;
    double fwd_out = O * W * D * e;
    double pen = D >= c->full_block_dim        ? 1
                 : D >= c->full_block_dim / 2 ? c->penalty_mid
                                               : c->penalty_low;
    r.fwd_compute_ms = (input_read + lookup + fwd_out) * pen / bw;
    r.fwd_comms_ms = W > 1 ? fwd_out / bw_coll : 0;
    r.bwd_comms_ms = r.fwd_comms_ms;
    in_buf = input_read;
    out_buf = ceil(fwd_out);
    break;
  }
  }
  r.bwd_compute_ms = c->bwd_compute_mult * r.fwd_compute_ms;
  r.total_ms =
      r.fwd_compute_ms + r.fwd_comms_ms + r.bwd_compute_ms + r.bwd_comms_ms;
  /* The optimizer factor takes the whole table's dim, as TorchRec's
   * _get_optimizer_multipler does (sharding_option.tensor.shape[-1]): a
   * column shard's row-wise Adagrad state is rows·cols·e / dim. */
  double opt = opt_factor(p->sparse_optimizer, (double)tb->dim);
  switch (ck.kernel) {
  case DC_TORCHREC_FUSED_UVM: /* weights and state in DDR */
    r.hbm_bytes = in_buf + out_buf;
    r.ddr_bytes = table_bytes * (1 + opt);
    break;
  case DC_TORCHREC_FUSED_UVM_CACHING: {
    /* the cache: the table's bytes × caching_ratio (rounded whole, then
     * this shard's share), its optimizer factor, and the cache's
     * auxiliary state, rows · (4 + 16·ratio) */
    double whole = round((double)tb->rows * (double)tb->dim * e *
                         ck.cache_load);
    double share = ceil(whole * ((double)sh->rows * D) /
                        ((double)tb->rows * (double)tb->dim));
    r.hbm_bytes = share + ceil(share * opt) +
                  ceil((double)sh->rows * (4 + 16 * ck.cache_load)) + in_buf +
                  out_buf;
    r.ddr_bytes = table_bytes * (1 + opt);
    break;
  }
  default: /* the state rounded up to whole bytes, as TorchRec */
    r.hbm_bytes = table_bytes + ceil(table_bytes * opt) + in_buf + out_buf;
    break;
  }
  return r;
}

void dc_imbalance_of(const double *v, int32_t k, dc_imbalance *out) {
  memset(out, 0, sizeof *out);
  double sum = 0, mx = 0;
  for (int32_t i = 0; i < k; i++) {
    sum += v[i];
    if (v[i] > mx) mx = v[i];
  }
  if (k <= 1 || !(sum > 0)) {
    if (k == 1 && sum > 0) out->max_over_mean = 1;
    return;
  }
  double u = 1.0 / k, chi = 0;
  out->max_over_mean = mx / (sum / k);
  for (int32_t i = 0; i < k; i++) {
    double pi = v[i] / sum, dv = fabs(pi - u);
    if (dv > out->total_variation) out->total_variation = dv;
    out->total_distance += dv;
    chi += k * (pi - u) * (pi - u);
    if (pi > 0) out->kl_divergence += pi * log(k * pi);
  }
  double km = (k - 1.0) / k;
  out->chi_divergence = chi / (km * km * k + km);
  out->kl_divergence /= log((double)k);
}

void dc_torchrec_estimate_plan(const dc_point *p, const dc_shard_plan *s,
                               const dc_torchrec_consts *c, dc_arena *a,
                               dc_torchrec_estimate *out) {
  memset(out, 0, sizeof *out);
  int32_t n = 0;
  for (int32_t t = 0; t < s->n_tables; t++) n += s->tables[t].n_shards;
  out->n_shards = n;
  out->shards = dc_arena_array(a, (size_t)(n ? n : 1), sizeof *out->shards);
  out->n_ranks = s->n_ranks;
  out->ranks = dc_arena_array(a, (size_t)s->n_ranks, sizeof *out->ranks);
  int32_t k = 0;
  for (int32_t t = 0; t < s->n_tables; t++)
    for (int32_t i = 0; i < s->tables[t].n_shards; i++) {
      dc_torchrec_shard x = dc_torchrec_price_shard(p, s, t, i, c);
      out->shards[k++] = x;
      dc_torchrec_rank *r = &out->ranks[x.rank];
      r->fwd_compute_ms += x.fwd_compute_ms;
      r->fwd_comms_ms += x.fwd_comms_ms;
      r->bwd_compute_ms += x.bwd_compute_ms;
      r->bwd_comms_ms += x.bwd_comms_ms;
      r->total_ms += x.total_ms;
      r->hbm_bytes += x.hbm_bytes;
    }
  double *v = dc_arena_array(a, (size_t)s->n_ranks, sizeof(double));
  double *h = dc_arena_array(a, (size_t)s->n_ranks, sizeof(double));
  for (int32_t r = 0; r < s->n_ranks; r++) {
    v[r] = out->ranks[r].total_ms;
    h[r] = out->ranks[r].hbm_bytes;
    if (v[r] > out->max_ms) {
      out->max_ms = v[r];
      out->max_rank = r;
    }
    if (h[r] > out->max_hbm_bytes) out->max_hbm_bytes = h[r];
  }
  dc_imbalance_of(v, s->n_ranks, &out->perf);
  dc_imbalance_of(h, s->n_ranks, &out->hbm);
}

double dc_torchrec_usable_hbm(const dc_point *p,
                              const dc_torchrec_consts *c) {
  double hbm = c->hbm_gib * GIB * 0.85;
  double dense = (double)dc_point_dense_params(p);
  hbm -= 6 * dense * 4;
  int32_t W = p->gpus < 1 ? 1 : p->gpus;
  double B = (double)p->batch_size / W, inputs = 0;
  for (int32_t t = 0; t < p->n_tables; t++) inputs += B * p->tables[t].pooling;
  hbm -= inputs * 8 * 20;
  return hbm;
}
