/*
 * heuristic.c — the models that need no training data (the paper §III-B1,
 * spec/design.md): the table-batched embedding lookup forward and backward,
 * plain (DRAM only) and enhanced with the L2 hit-rate estimate; roofline
 * for element-wise and reduce kernels; copies, concat and host transfers;
 * and the collectives (ring algorithms over the group's slowest link).
 *
 * Conventions: bandwidths are GB/s (1e9 B/s), so bytes / (GB/s · 1e3) is
 * µs; "achievable" means datasheet × the catalog's measured or
 * rule-of-thumb factor, never the raw datasheet figure. Every function is
 * pure: same kernel and device, same double.
 */
#define _DEFAULT_SOURCE /* lgamma_r: lgamma writes the global signgam */
#include <math.h>

#include "kernels/kernels.h"
#include "kernels/kernels_int.h"

/* bytes over GB/s, in µs */
static double xfer_us(double bytes, double gbps) {
  return gbps > 0 ? bytes / (gbps * 1e3) : 0;
}

static double ceil32(double bytes) { return ceil(bytes / 32.0) * 32.0; }

/* max of two times (never NaN): inline, where fmax is a libm call */
static inline double tmax(double a, double b) { return a > b ? a : b; }

/* ---- embedding lookup ----------------------------------------------------
 * The paper §III-B1a, on Tulloch's table-batched kernel: one WARP per
 * (sample, table) output vector, B·T warps. Per-warp traffic:
 *   table_offsets 32 B, offsets 64 B, indices ceil32(4·L),
 *   weights L·ceil32(r)     (the paper prints ceil32(4·D) and drops the L:
 *                            each of the L looked-up rows is read; r is
 *                            the row's bytes, dc_emb_row_bytes: s·D, and
 *                            + 4 for int8's scale and bias),
 *   outputs ceil32(4·D)     (pooled rows are fp32 whatever the tables hold:
 *                            FBGEMM's output dtype, and the graph's)
 * Plain:    t = B·T·(sum) / dram_bw.
 * Enhanced: rows_per_block = max(256/D, 1) (the kernel's launch argument),
 *   tables_resident = ceil(#SM · rows_per_block / B),
 *   cached rows X = min(L2 / (tables_resident · row bytes), E),
 *   hit rate p = C(X, L) / C(E, L),
 *   tr_L2   = table_offsets + offsets + p·weights,
 *   tr_DRAM = indices + outputs + (1 − p)·weights,
 *   t = B·T·(tr_DRAM/dram_bw + tr_L2/l2_bw)   (the paper's sum; the
 *   authors' code uses max() of the two terms instead).
 * Backward with the optimizer fused in (the paper: "with SGD"): weights
 * become read + write of L rows, 2·L·ceil32(r), the output term reads the
 * incoming gradient, and the optimizer state adds per looked-up row:
 *   sgd: nothing; adagrad: read + write of an fp32 [rows, D] state row,
 *   2·ceil32(4·D); rowwise_adagrad: one fp32 per row, a 32 B sector read and
 *   written, 2·32; adam: two fp32 state rows, 4·ceil32(4·D).
 * State rows share the L2 with weights: row bytes in X include them. A
 * compute bound (owensgroup/ml_perf_model: B·T·L·D multiply-adds, plus the update's
 * flops per element: sgd 2, adagrad 6, rowwise_adagrad 2, adam 12; the
 * forward's B·T·L·D adds of the pooling) is taken with max(): it never
 * binds on a catalog GPU, and keeps the model above its FLOP bound
 * (kernels/bounds.c). Without a fused optimizer the backward only writes the L
 * gradient rows (no weight read, no state).
 * Tables that differ are priced group by group and summed; one kernel, so
 * one fixed latency. */

/* ln Γ(y + 1) − ln Γ(y − L + 1), the log of the falling factorial y^(L),
 * for real y ≥ L ≥ 0. With b = y − L + 1 ≥ 100, Stirling's series taken
 * as a difference, so that nothing large cancels:
 *   (b + L − ½)·log1p(L / b) + L·(ln b − 1) + s(b + L) − s(b),
 *   s(z) = 1/(12z) − 1/(360z³) + 1/(1260z⁵)
 * (the next term is below 1e-17 there); two logs instead of two
 * log-gammas, and more accurate than subtracting two ln Γ of row counts in
 * the millions, which lose about 1e-9. Below, lgamma_r (not lgamma: it
 * writes the global signgam, a data race when points are priced on
 * several threads). */
static double stirling_tail(double z) {
  double r = 1 / z, r2 = r * r;
  return r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260)));
}

static double ln_falling(double y, double L) {
  double b = y - L + 1;
  if (b >= 100)
    return (b + L - 0.5) * log1p(L / b) + L * (log(b) - 1) +
           stirling_tail(b + L) - stirling_tail(b);
  int sign;
  return lgamma_r(y + 1, &sign) - lgamma_r(b, &sign);
}

/* C(x, L) / C(E, L) for real E ≥ x ≥ L ≥ 0: the ratio of falling
 * factorials x^(L) / E^(L) (the L! cancel). For whole L ≤ 64 (DLRM's
 * pooling factors) the product Π_{i<L} (x − i) / (E − i), exact but for
 * rounding, four factors at a time (one division per four; a product of
 * four row counts stays far inside a double's range); otherwise
 * exp(ln x^(L) − ln E^(L)). */
static double choose_ratio(double x, double E, double L) {
  if (L == floor(L) && L <= 64) {
    int n = dc_f64_sat_i32(L), i = 0;
    double r = 1;
    for (; i + 4 <= n; i += 4) {
      double num = ((x - i) * (x - i - 1)) * ((x - i - 2) * (x - i - 3));
      double den = ((E - i) * (E - i - 1)) * ((E - i - 2) * (E - i - 3));
      r *= num / den;
    }
    for (; i < n; i++) r *= (x - i) / (E - i);
    return r;
  }
  return exp(ln_falling(x, L) - ln_falling(E, L));
}

/* The rows that stay in L2 (x above): depends on the device, the batch,
 * the row width and its bytes only, so a kernel's groups of one width
 * share it (dc_kernel_embedding_us computes it once per width). */
static double emb_l2_rows(const dc_device *dev, int64_t batch, int32_t dim,
                          double row_bytes) {
  double rows_per_block = dim > 0 ? floor(256.0 / dim) : 1;
  if (rows_per_block < 1) rows_per_block = 1;
  /* one table resident when the batch fills the SMs (the usual case),
   * without the division */
  double blocks = dev->sms * rows_per_block;
  double resident = blocks <= (double)batch ? 1 : ceil(blocks / (double)batch);
  if (resident < 1) resident = 1;
  if (!(row_bytes > 0)) return HUGE_VAL; /* rows of no bytes: all stay */
  return floor((double)dev->l2_bytes / (resident * row_bytes));
}

static double emb_hit_of(double x, const dc_emb_group *g) {
  double L = g->pooling, E = (double)g->rows;
  if (L <= 0) return 1.0;
  if (x >= E) return 1.0;
  if (x < L) return 0.0;
  return choose_ratio(x, E, L);
}

double dc_kernel_emb_hit_rate(const dc_device *dev, int64_t batch,
                              const dc_emb_group *g, int row_bytes) {
  if (g->pooling <= 0) return 1.0;
  return emb_hit_of(emb_l2_rows(dev, batch, g->dim, row_bytes), g);
}

static double opt_state_row_bytes(dc_optimizer o, int32_t dim) {
  switch (o) {
  case DC_OPTIMIZER_SGD: return 0;
  case DC_OPTIMIZER_ADAGRAD: return 2 * ceil32(4.0 * dim);
  case DC_OPTIMIZER_ROWWISE_ADAGRAD: return 2 * 32.0;
  case DC_OPTIMIZER_ADAM: return 4 * ceil32(4.0 * dim);
  }
  return 0;
}

static double opt_flops_per_elem(dc_optimizer o) {
  switch (o) {
  case DC_OPTIMIZER_SGD: return 2;             /* w -= lr·g */
  case DC_OPTIMIZER_ADAGRAD: return 6;         /* s += g²; w -= lr·g/√s+ε */
  case DC_OPTIMIZER_ROWWISE_ADAGRAD: return 2; /* row mean amortised */
  case DC_OPTIMIZER_ADAM: return 12;           /* two moments, bias, √ */
  }
  return 2;
}

double km_emb_flops_per_elem(const dc_kernel *k) {
  if (k->kind != DC_KERNEL_EMBEDDING_BWD) return 1; /* the pooling's add */
  bool fused = k->u.emb.fused_optimizer;
  return 2.0 + (fused ? opt_flops_per_elem(k->u.emb.optimizer) : 0);
}

double dc_kernel_embedding_us(const dc_kernel *k, const dc_device *dev) {
  bool bwd = k->kind == DC_KERNEL_EMBEDDING_BWD;
  bool fused = bwd && k->u.emb.fused_optimizer;
  bool enhanced = k->u.emb.model == DC_EMBMODEL_ENHANCED;
  dc_dtype et = k->u.emb.dtype;
  double B = (double)k->u.emb.batch;
  /* µs per byte (xfer_us's division, taken once per kernel, not per
   * group) */
  double dram = km_dram_gbps(dev), l2 = dev->l2_gbps;
  double dram_us = dram > 0 ? 1 / (dram * 1e3) : 0;
  double l2_us = l2 > 0 ? 1 / (l2 * 1e3) : 0;
  double mem_us = 0, flops = 0;
  double fl = km_emb_flops_per_elem(k);
  int32_t x_dim = -1;
  double x_bytes = -1; /* whole bytes, kept in double: a 2^31-wide row's
                        * bytes and its optimizer state exceed int */
  double x_rows = 0; /* emb_l2_rows of the last (dim, row bytes) */
  for (int32_t i = 0; i < k->u.emb.n_groups; i++) {
    const dc_emb_group *g = &k->u.emb.groups[i];
    double L = g->pooling, T = g->tables;
    double row = ceil32((double)dc_emb_row_bytes(et, g->dim));
    double warps = B * T;
    /* the pooled row written (forward) or its gradient read (backward)
     * is fp32 whatever the tables hold, as FBGEMM's lookups return it */
    double idx = ceil32(4.0 * L), out = ceil32(4.0 * g->dim);
    double offs = 32.0 + 64.0;
    double per_row = row, state = 0;
    if (bwd) {
      per_row = fused ? 2 * row : row;
      state = fused ? opt_state_row_bytes(k->u.emb.optimizer, g->dim) : 0;
    }
    double weights = L * (per_row + state);
    double p = 0;
    if (enhanced) {
      double rb = floor(row + state / 2);
      if (g->dim != x_dim || rb != x_bytes) {
        x_rows = emb_l2_rows(dev, k->u.emb.batch, g->dim, rb);
        x_dim = g->dim;
        x_bytes = rb;
      }
      p = emb_hit_of(x_rows, g); /* = dc_kernel_emb_hit_rate */
    }
    double tr_l2 = enhanced ? offs + p * weights : 0;
    double tr_dram = idx + out + (1 - p) * weights + (enhanced ? 0 : offs);
    mem_us += warps * (tr_dram * dram_us + tr_l2 * l2_us);
    flops += warps * L * g->dim * fl;
  }
  double compute_us = flops / km_fp32_flops_per_us(dev);
  return dev->kernel_floor_us + tmax(mem_us, compute_us);
}

/* ---- roofline ------------------------------------------------------------
 * Element-wise and reduce (the paper §III-B1b; per-op flops and bytes from
 * owensgroup/ml_perf_model, chosen by graphgen):
 *   t = latency + max(n·F / (fp32 peak · eff), n·A / (dram · eff)). */
double km_elementwise_us(const dc_kernel *k, const dc_device *dev) {
  double n = (double)k->u.ew.elements;
  double c = n * k->u.ew.flops_per_elem / km_fp32_flops_per_us(dev);
  double m = xfer_us(n * k->u.ew.bytes_per_elem, km_dram_gbps(dev));
  return dev->kernel_floor_us + tmax(c, m);
}

/* Copies. concat (owensgroup/ml_perf_model): 2·bytes / (0.79 · dram), the factor being
 * the authors' measured concat efficiency; device-to-device: read + write,
 * 2·bytes / dram; host transfers: bytes / pcie (pinned) or bytes /
 * h2d_pageable (pageable host memory, the authors measured 8.1 GB/s on a
 * Gen3 x16 V100 host) past the first h2d_pageable_direct bytes, which go
 * at the pinned rate (an H200 host: pageable = pinned up to 1 MiB,
 * tests/validation/h200/bench/memcpy.csv); D2H uses the same figures. Each adds the fixed
 * kernel latency. */
double km_copy_us(const dc_kernel *k, const dc_device *dev) {
  double b = (double)k->u.copy.bytes, t = 0;
  switch (k->kind) {
  case DC_KERNEL_CONCAT: t = xfer_us(2 * b, 0.79 * km_dram_gbps(dev)); break;
  case DC_KERNEL_MEMCPY_D2D: t = xfer_us(2 * b, km_dram_gbps(dev)); break;
  case DC_KERNEL_MEMCPY_H2D:
  case DC_KERNEL_MEMCPY_D2H: {
    /* pageable copies cross the same PCIe link: never faster; their first
     * h2d_pageable_direct bytes (one staging buffer, which the driver
     * fills before the DMA starts) go at the pinned rate */
    double slow = dev->h2d_pageable_gbps > dev->pcie_gbps
                      ? dev->pcie_gbps
                      : dev->h2d_pageable_gbps;
    double direct = (double)dev->h2d_pageable_direct;
    if (k->u.copy.pinned || b <= direct)
      t = xfer_us(b, dev->pcie_gbps);
    else
      t = xfer_us(direct, dev->pcie_gbps) + xfer_us(b - direct, slow);
    break;
  }
  default: break;
  }
  return dev->kernel_floor_us + t;
}

/* Transpose and tril without a fitted model: memory roofline.
 *   transpose: read + write batch·m·n elements;
 *   tril_fwd: gathers e lower-triangle elements (e = Σ_i min(i + diag, n)
 *     over the m rows) and writes them packed: 2·e;
 *   tril_bwd: zero-fills the batch·m·n gradient and scatters e: m·n + 2·e.
 */
double km_tril_elems(int64_t m, int64_t n, bool diag) {
  /* Σ_{i<m} min(i + d, n), d = diag: the first c = min(m, n − d + 1) rows
   * hold i + d, the others n. In closed form (exact below 2^53; the sum
   * it replaced looped over the rows) */
  double d = diag ? 1 : 0, dm = m > 0 ? (double)m : 0;
  double dn = n > 0 ? (double)n : 0;
  double c = dn - d + 1;
  c = c < 0 ? 0 : c > dm ? dm : c;
  return c * (c - 1) / 2 + c * d + (dm - c) * dn;
}

double km_matrix_bytes(const dc_kernel *k) {
  double s = dc_dtype_bytes(k->u.mat.dtype), B = (double)k->u.mat.batch;
  double mn = (double)k->u.mat.m * (double)k->u.mat.n, elems = 0;
  switch (k->kind) {
  case DC_KERNEL_TRANSPOSE: elems = 2 * mn; break;
  case DC_KERNEL_TRIL_FWD:
    elems = 2 * km_tril_elems(k->u.mat.m, k->u.mat.n, k->u.mat.diag);
    break;
  case DC_KERNEL_TRIL_BWD:
    elems = mn + 2 * km_tril_elems(k->u.mat.m, k->u.mat.n, k->u.mat.diag);
    break;
  default: break;
  }
  return B * elems * s;
}

double km_matrix_us(const dc_kernel *k, const dc_device *dev) {
  return dev->kernel_floor_us +
         xfer_us(km_matrix_bytes(k), km_dram_gbps(dev));
}

/* ---- fused dot interaction -----------------------------------------------
 * One kernel per direction (NVIDIA's dot-based interaction, spec/
 * frameworks.md): per sample, m features of width n in dtype s; the
 * forward computes the m×m Gram matrix on the math units of the dtype
 * (2·m²·n flops) and writes the bottom output and the e pairs below the
 * diagonal (km_tril_elems); the backward reads the output gradient
 * and the features and writes the features' gradient, 2·m²·n flops
 * again:
 *   fwd bytes = s·(m·n + n + e), bwd bytes = s·(n + e + 2·m·n),
 *   t = latency + max(flops / math rate, bytes / dram). */
void km_interaction_work(const dc_kernel *k, double *flops,
                         double *bytes) {
  double s = dc_dtype_bytes(k->u.mat.dtype), B = (double)k->u.mat.batch;
  double m = (double)k->u.mat.m, n = (double)k->u.mat.n;
  double e = km_tril_elems(k->u.mat.m, k->u.mat.m, k->u.mat.diag);
  double per = k->kind == DC_KERNEL_INTERACTION_FWD ? m * n + n + e
                                                    : n + e + 2 * m * n;
  *flops = 2.0 * B * m * m * n;
  *bytes = B * per * s;
}

double km_interaction_us(const dc_kernel *k, const dc_device *dev) {
  double flops, bytes;
  km_interaction_work(k, &flops, &bytes);
  double c = flops / km_math_flops_per_us(dev, k->u.mat.dtype);
  double mem = xfer_us(bytes, km_dram_gbps(dev));
  return dev->kernel_floor_us + tmax(c, mem);
}

/* ---- collectives ------------------------------------------------------------
 * NCCL's algorithms and protocols, the cheapest kept (kernels/coll.c). A
 * group of one rank moves nothing. The link floor (kernels/bounds.c) is
 * the slower level's bytes over its datasheet figure. */
void km_collective_path(const dc_kernel *k, const dc_device *dev,
                        km_coll_path *p) {
  dc_coll_plan c;
  dc_collective_plan(k, dev, &c);
  double ti = c.intra_raw_gbps > 0 ? c.intra_bytes / c.intra_raw_gbps : 0;
  double tx = c.inter_raw_gbps > 0 ? c.inter_bytes / c.inter_raw_gbps : 0;
  bool across = tx > ti;
  p->moved_bytes = across ? c.inter_bytes : c.intra_bytes;
  p->link_gbps = across ? c.inter_raw_gbps : c.intra_raw_gbps;
  p->steps = 0;
  p->step_us = c.latency_us;
}

double km_collective_us(const dc_kernel *k, const dc_device *dev) {
  dc_coll_plan c;
  dc_collective_plan(k, dev, &c);
  return tmax(dev->kernel_floor_us, c.total_us);
}
