/*
 * uvm.c — lookups of tables kept beyond HBM: in host memory and read over
 * the host link (TorchRec's fused_uvm), or in host memory with the hottest
 * rows cached in HBM (fused_uvm_caching). FBGEMM's table-batched kernel
 * runs them; what changes is where the rows come from.
 *
 * The hit rate h of a cached group (dc_kernel_cache_hit_rate): a measured
 * one when the study gives it; otherwise the share of accesses that fall
 * on the C = cache_rows hottest of E rows when row k is accessed with
 * probability ∝ k^-s (Zipf, s = zipf): h = H(C, s) / H(E, s), H the
 * generalised harmonic number; uniform access (s = 0) gives C / E. That
 * is the steady state of an LFU cache, and an upper bound of LRU's.
 * A uvm group has h = 0, an HBM group h = 1.
 *
 * Prices. The kernel as a whole is the HBM model (dc_kernel_embedding_us,
 * every row at HBM rates), plus for each group beyond HBM its extra time,
 * so that a rank's kernel costs what its shards cost one by one (the
 * planner prices shards alone). Per group of T tables, batch B, pooling
 * L, r = the row's bytes (ceil32, as the HBM model), m = B·T·L·(1 − h)
 * rows from the host, own = the HBM model of the group alone:
 *   forward, uvm:          max(0, launch + B·T·L·r / link − own) (the
 *                          kernel reads rows over the link while its
 *                          warps do the rest);
 *   forward, uvm_caching:  max(m·r in, m·r out) / link + (m·r +
 *                          B·T·L·32) / HBM, and one launch per kernel
 *                          (FBGEMM's prefetch runs before the lookup:
 *                          it linearizes the indices, finds the uncached
 *                          ones, fetches them over the link and writes
 *                          them into the cache, evicting as many dirty
 *                          rows back to host memory; then every lookup
 *                          hits at HBM rates);
 *   backward (fused):      uvm: max(0, launch + B·T·L·(r + s) / link −
 *                          own), each way, s the optimizer state a
 *                          looked-up row reads and writes (ceil32: the
 *                          state is read and written in 32 B sectors);
 *                          uvm_caching: the cache's rows are updated in
 *                          HBM, the state — which FBGEMM keeps in host
 *                          memory for cached tables too — over the link:
 *                          max(0, launch + B·T·L·s / link − own).
 * A forward kernel over cached tables comes in parts (dc_emb_part): the
 * planner prices it WHOLE, as above; the torchrec graph, which runs
 * FBGEMM's prefetch as ops of its own (graphgen/uvm_graph.c), as a
 * LOOKUP (the HBM model: every row hits) and a PREFETCH (launch + the
 * link term + the misses' writes into the cache, m·r / HBM; the index
 * work B·T·L·32 it prices in the index kernels of those ops instead).
 * The link is full duplex: the busier direction sets a group's time. `link` is
 * the host link's achievable bandwidth (host_link × achievable.host_link,
 * spec/gpus/README.md). The HBM model is dc_kernel_embedding_us on the
 * kernel as given (every row at HBM rates), so h only enters through m:
 * less cache is never faster. A uvm or uvm_caching lookup is never faster
 * than its host bytes over the datasheet link (kernels/bounds.c's link
 * floor): the achievable fraction is at most 1.
 */
#include <math.h>

#include "kernels/kernels.h"
#include "kernels/kernels_int.h"

static double ceil32(double b) { return ceil(b / 32.0) * 32.0; }

/* Partial sums Σ_{k ≤ i} k^-s of the head, i ≤ 64, for the last s this
 * thread asked for: a study has one or two exponents, and the planner
 * asks for hit rates many times. The sums are added in the same order
 * as without the memo, so the values are the same bits. */
static _Thread_local double head_s = NAN;
static _Thread_local double head_sum[65];

double dc_kernel_harmonic(double n, double s) {
  n = floor(n);
  if (!(n >= 1)) return 0;
  /* the first terms exactly, the rest by the midpoint integral (relative
   * error below 1e-5 for the tail from k = 65 on) */
  if (!(head_s == s)) {
    head_sum[0] = 0;
    for (int k = 1; k <= 64; k++)
      head_sum[k] = head_sum[k - 1] + pow((double)k, -s);
    head_s = s;
  }
  double h = head_sum[n < 64 ? (int)n : 64];
  if (n <= 64) return h;
  double a = 64.5, b = n + 0.5;
  if (fabs(s - 1) < 1e-9) return h + log(b / a);
  return h + (pow(b, 1 - s) - pow(a, 1 - s)) / (1 - s);
}

double dc_kernel_cache_hit_rate(const dc_emb_group *g) {
  switch (g->memory) {
  case DC_MEMORY_UVM: return 0;
  case DC_MEMORY_UVM_CACHING: break;
  case DC_MEMORY_HBM:
  case DC_MEMORY_AUTO: return 1;
  }
  if (g->hit_rate >= 0) return g->hit_rate > 1 ? 1 : g->hit_rate;
  double E = (double)g->rows, C = (double)g->cache_rows;
  if (!(E > 0) || C >= E) return 1;
  if (!(C > 0)) return 0;
  if (!(g->zipf > 0)) return C / E;
  double h = dc_kernel_harmonic(C, g->zipf) / dc_kernel_harmonic(E, g->zipf);
  return h < 0 ? 0 : h > 1 ? 1 : h;
}

static double state_row_bytes(dc_optimizer o, int32_t dim) {
  switch (o) {
  case DC_OPTIMIZER_SGD: return 0;
  case DC_OPTIMIZER_ADAGRAD: return ceil32(4.0 * dim);
  case DC_OPTIMIZER_ROWWISE_ADAGRAD: return 32.0;
  case DC_OPTIMIZER_ADAM: return 2 * ceil32(4.0 * dim);
  }
  return 0;
}

/* Host-link bytes of group g, each direction, and the prefetch's HBM
 * bytes (forward of a cached group). */
static void group_host_bytes(const dc_kernel *k, const dc_emb_group *g,
                             double *in, double *out, double *fill_hbm) {
  *in = *out = *fill_hbm = 0;
  if (g->memory != DC_MEMORY_UVM && g->memory != DC_MEMORY_UVM_CACHING)
    return;
  double B = k->u.emb.batch > 0 ? (double)k->u.emb.batch : 0;
  double T = g->tables > 0 ? g->tables : 0;
  double L = g->pooling > 0 ? g->pooling : 0;
  double n = B * T * L;
  double r = ceil32((double)dc_emb_row_bytes(k->u.emb.dtype, g->dim));
  bool bwd = k->kind == DC_KERNEL_EMBEDDING_BWD;
  bool cached = g->memory == DC_MEMORY_UVM_CACHING;
  if (!bwd) {
    dc_emb_part part = k->u.emb.part;
    /* the misses of a cached table are the prefetch's; a PREFETCH moves
     * nothing of the other tables */
    if (cached ? part == DC_EMB_LOOKUP : part == DC_EMB_PREFETCH) return;
    double m = n * (1 - dc_kernel_cache_hit_rate(g));
    *in = m * r;
    if (cached) {
      *out = m * r;
      /* WHOLE: the index work too, which the torchrec graph prices in
       * kernels of its own beside the PREFETCH part */
      *fill_hbm = m * r + (part == DC_EMB_WHOLE ? n * 32.0 : 0);
    }
    return;
  }
  double s = k->u.emb.fused_optimizer
                 ? state_row_bytes(k->u.emb.optimizer, g->dim)
                 : 0;
  double per = cached ? s : r + s;
  *in = *out = n * per;
}

void dc_kernel_emb_host_bytes(const dc_kernel *k, double *in_bytes,
                              double *out_bytes) {
  double in = 0, out = 0;
  for (int32_t i = 0; i < k->u.emb.n_groups; i++) {
    double a, b, f;
    group_host_bytes(k, &k->u.emb.groups[i], &a, &b, &f);
    in += a;
    out += b;
  }
  *in_bytes = in;
  *out_bytes = out;
}

/* Group g's share of its kernel beyond the HBM model (see the top). */
static double group_extra_us(const dc_kernel *k, const dc_emb_group *g,
                             const dc_device *dev) {
  double in, out, fill;
  group_host_bytes(k, g, &in, &out, &fill);
  double link = dev->host_link_gbps * dev->host_link_eff;
  double link_us = link > 0 ? (in > out ? in : out) / (link * 1e3) : 0;
  double dram = km_dram_gbps(dev);
  double fill_us = dram > 0 ? fill / (dram * 1e3) : 0;
  bool bwd = k->kind == DC_KERNEL_EMBEDDING_BWD;
  if (!bwd && g->memory == DC_MEMORY_UVM_CACHING) return link_us + fill_us;
  /* overlapped with the group's own HBM work */
  dc_kernel one = *k;
  one.u.emb.n_groups = 1;
  one.u.emb.groups = g;
  double own = dc_kernel_embedding_us(&one, dev);
  double x = dev->kernel_floor_us + link_us + fill_us - own;
  return x > 0 ? x : 0;
}

double dc_kernel_embedding_host_us(const dc_kernel *k, const dc_device *dev) {
  bool fwd = k->kind == DC_KERNEL_EMBEDDING_FWD;
  if (fwd && k->u.emb.part == DC_EMB_PREFETCH) {
    /* the cache fill alone, one launch: no lookup */
    double t = dev->kernel_floor_us;
    for (int32_t i = 0; i < k->u.emb.n_groups; i++)
      if (k->u.emb.groups[i].memory == DC_MEMORY_UVM_CACHING)
        t += group_extra_us(k, &k->u.emb.groups[i], dev);
    return t;
  }
  double t = dc_kernel_embedding_us(k, dev);
  bool prefetch = false;
  for (int32_t i = 0; i < k->u.emb.n_groups; i++) {
    const dc_emb_group *g = &k->u.emb.groups[i];
    if (g->memory != DC_MEMORY_UVM && g->memory != DC_MEMORY_UVM_CACHING)
      continue;
    prefetch |= g->memory == DC_MEMORY_UVM_CACHING && fwd &&
                k->u.emb.part == DC_EMB_WHOLE;
    t += group_extra_us(k, g, dev);
  }
  /* the prefetch's kernels run before the lookup: one more launch */
  return prefetch ? t + dev->kernel_floor_us : t;
}
