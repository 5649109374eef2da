/*
 * bounds.c — the physical floor of a kernel ("physical bounds,
 * always"): no kernel finishes faster than
 *
 *   FLOP    its flops over the datasheet peak of the math units its dtype
 *           runs on, at the boost clock (km_math_peak_flops_per_us: no
 *           achievable factor, no power cap),
 *   DRAM    its compulsory DRAM bytes over the datasheet bandwidth,
 *   link    for a collective or a host copy, the bytes it must move over
 *           the datasheet bandwidth of the link the model sends them on,
 *   launch  the device's smallest kernel time (latency.kernel_us),
 *
 * and its floor is the largest of the four. dc_kernel_time raises any
 * model's answer below the floor to the floor (price.c); `dlrmc kernel
 * --explain` says which bound a price was clamped to and what the model
 * said. Compulsory work is what any implementation must do, counted from
 * the descriptor with the same helpers the models use (kernels_int.h), and
 * never more than a model counts:
 *
 *   gemm            2·m·n·k·batch flops; A and B read and C written once
 *   embedding_fwd   B·T·L·D adds; per bag the L indices (4 bytes each)
 *                   read and the pooled fp32 row written (the looked-up
 *                   rows may all hit L2: the enhanced model's premise)
 *   embedding_bwd   B·T·L·D·(2 + the fused optimizer's flops); the indices
 *                   and the pooled fp32 gradient read
 *   elementwise,    n·flops_per_elem (fp32) and n·bytes_per_elem
 *     reduce
 *   concat,         read and write of the bytes
 *     memcpy_d2d
 *   memcpy_h2d/d2h  the bytes over PCIe (the pinned rate; pageable memory
 *                   is slower, never faster)
 *   transpose,      the memory roofline's elements read and written
 *     tril_*
 *   interaction_*   the Gram matrix's flops at the dtype's peak, the
 *                   features and packed pairs read and written
 *   collectives     the ring's bytes per rank ((n−1)/n, all-reduce 2(n−1)/n
 *                   of the buffer) over the slowest link of the group
 *
 * The step latencies of a ring are a cost of the algorithm, not of the
 * hardware, and are left out of the floor. A kernel's `scale` (a what-if
 * the user asked for) multiplies the clamped price, as it multiplies any.
 *
 * Where the clamp is applied. A fitted model knows nothing of physics:
 * every fitted answer is checked (km_floor_check, without a division:
 * t·rate ≥ work for each bound) and raised to the floor when below it.
 * The analytic models are at or above their floor by construction, each
 * term over the same or more work at a rate no higher than the bound's
 * (the catalog's achievable factors lie in (0, 1], checked when a GPU
 * is loaded; pageable copies are never faster than pinned ones):
 *
 *   gemm            waves·(CTAs per SM)·(k per split)·(per-CTA rate) ≥
 *                   flops / achievable peak (tiles cover m·n, splits k);
 *                   DRAM at least A + B + C over the achievable bandwidth;
 *                   plus a fixed cost, the launch floor + 1.5 µs
 *   embedding       DRAM term ≥ the indices and pooled rows (rounded up to
 *                   32-byte sectors); compute term over the fp32 rate
 *   the others      launch floor + max(flops / achievable rate, bytes /
 *                   achievable bandwidth) of the same work, or + the ring's
 *                   latency and bytes over the achievable link
 *
 * and each adds the device's launch floor. So dc_kernel_time compares an
 * analytic answer with the launch floor alone (a guard, as every analytic
 * answer includes it), a
 * compare that costs nothing measurable; pricing every kernel against
 * its whole floor cost 2.5× on an element-wise kernel (3 → 8 ns). The
 * property test (tests/unit/test_kernels_bounds.c) checks the argument:
 * over a million random kernels on every catalog GPU no analytic answer
 * is below its floor, and dc_kernel_price, which compares every answer
 * with the whole floor, agrees with dc_kernel_time to the bit.
 */
#include <math.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/kernels_int.h"

const char *dc_kbound_name(dc_kbound b) {
  switch (b) {
  case DC_KBOUND_FLOP: return "FLOP";
  case DC_KBOUND_DRAM: return "DRAM";
  case DC_KBOUND_LINK: return "link";
  case DC_KBOUND_LAUNCH: return "launch";
  case DC_KBOUND_NONE: break;
  }
  return "none";
}

static double pos(int64_t v) { return v > 0 ? (double)v : 0; }

/* The compulsory work of k: flops (on the units of `math`), DRAM bytes,
 * and bytes over a link of link_gbps. */
typedef struct kwork {
  double flops, dram_bytes, link_bytes, link_gbps;
  dc_dtype math;
} kwork;

static void emb_work(const dc_kernel *k, kwork *w) {
  /* a cache fill looks nothing up: its link bytes are its floor */
  if (k->kind == DC_KERNEL_EMBEDDING_FWD && k->u.emb.part == DC_EMB_PREFETCH)
    return;
  double fl = km_emb_flops_per_elem(k);
  double B = pos(k->u.emb.batch);
  for (int32_t i = 0; i < k->u.emb.n_groups; i++) {
    const dc_emb_group *g = &k->u.emb.groups[i];
    double bags = B * (g->tables > 0 ? g->tables : 0);
    double L = g->pooling > 0 ? g->pooling : 0;
    double D = g->dim > 0 ? g->dim : 0;
    w->flops += bags * L * D * fl;
    w->dram_bytes += bags * (4.0 * L + 4.0 * D);
  }
}

static void kernel_work(const dc_kernel *k, const dc_device *dev, kwork *w) {
  *w = (kwork){0, 0, 0, 0, DC_DTYPE_FP32};
  switch (k->kind) {
  case DC_KERNEL_GEMM: {
    int64_t m = k->u.gemm.m, n = k->u.gemm.n, kk = k->u.gemm.k;
    int64_t b = k->u.gemm.batch;
    if (m <= 0 || n <= 0 || kk <= 0 || b <= 0) break;
    w->math = k->u.gemm.dtype;
    w->flops = 2.0 * (double)m * (double)n * (double)kk * (double)b;
    w->dram_bytes = km_gemm_bytes(m, n, kk, b, dc_dtype_bytes(w->math));
    break;
  }
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD: {
    emb_work(k, w);
    /* rows of tables beyond HBM cross the host link (kernels/uvm.c) */
    double in, out;
    dc_kernel_emb_host_bytes(k, &in, &out);
    w->link_bytes = in > out ? in : out;
    w->link_gbps = dev->host_link_gbps;
    break;
  }
  case DC_KERNEL_ELEMENTWISE:
  case DC_KERNEL_REDUCE: {
    double n = pos(k->u.ew.elements);
    w->flops = n * (k->u.ew.flops_per_elem > 0 ? k->u.ew.flops_per_elem : 0);
    w->dram_bytes =
        n * (k->u.ew.bytes_per_elem > 0 ? k->u.ew.bytes_per_elem : 0);
    break;
  }
  case DC_KERNEL_CONCAT:
  case DC_KERNEL_MEMCPY_D2D: w->dram_bytes = 2 * pos(k->u.copy.bytes); break;
  case DC_KERNEL_MEMCPY_H2D:
  case DC_KERNEL_MEMCPY_D2H:
    w->link_bytes = pos(k->u.copy.bytes);
    w->link_gbps = dev->pcie_gbps;
    break;
  case DC_KERNEL_TRANSPOSE:
  case DC_KERNEL_TRIL_FWD:
  case DC_KERNEL_TRIL_BWD:
    if (k->u.mat.batch > 0 && k->u.mat.m > 0 && k->u.mat.n > 0)
      w->dram_bytes = km_matrix_bytes(k);
    break;
  case DC_KERNEL_INTERACTION_FWD:
  case DC_KERNEL_INTERACTION_BWD:
    if (k->u.mat.batch > 0 && k->u.mat.m > 0 && k->u.mat.n > 0)
      km_interaction_work(k, &w->flops, &w->dram_bytes);
    w->math = k->u.mat.dtype;
    break;
  case DC_KERNEL_ALL_TO_ALL:
  case DC_KERNEL_ALL_REDUCE:
  case DC_KERNEL_REDUCE_SCATTER:
  case DC_KERNEL_ALL_GATHER: {
    if (k->u.coll.ranks <= 1 || k->u.coll.bytes <= 0) break;
    km_coll_path p;
    km_collective_path(k, dev, &p);
    w->link_bytes = p.moved_bytes;
    w->link_gbps = p.link_gbps;
    break;
  }
  default: break;
  }
}

/* work over a rate in units per µs; 0 when there is no work or no rate
 * (a device without the link: the model prices nothing over it either) */
static double over(double work, double per_us) {
  return work > 0 && per_us > 0 ? work / per_us : 0;
}

void dc_kernel_floor(const dc_kernel *k, const dc_device *dev,
                     dc_kfloor *out) {
  kwork w;
  kernel_work(k, dev, &w);
  out->flops = w.flops;
  out->dram_bytes = w.dram_bytes;
  out->link_bytes = w.link_bytes;
  out->flop_us = over(w.flops, km_math_peak_flops_per_us(dev, w.math));
  out->dram_us = over(w.dram_bytes, dev->dram_gbps * 1e3);
  out->link_us = over(w.link_bytes, w.link_gbps * 1e3);
  out->launch_us = dev->kernel_floor_us > 0 ? dev->kernel_floor_us : 0;
  out->us = out->launch_us;
  out->binding = DC_KBOUND_LAUNCH;
  const double terms[] = {out->flop_us, out->dram_us, out->link_us};
  const dc_kbound kinds[] = {DC_KBOUND_FLOP, DC_KBOUND_DRAM, DC_KBOUND_LINK};
  for (int i = 0; i < 3; i++)
    if (terms[i] > out->us) {
      out->us = terms[i];
      out->binding = kinds[i];
    }
}

/* t·rate against work with a relative margin far above rounding: a time
 * within 1e-9 of a bound goes to the exact comparison of the caller. */
#define BOUND_MARGIN (1 + 1e-9)

bool km_floor_check(const dc_kernel *k, const dc_device *dev, double t) {
  if (!(t >= dev->kernel_floor_us * BOUND_MARGIN)) return false; /* NaN */
  kwork w;
  kernel_work(k, dev, &w);
  double ts = t * (1 / BOUND_MARGIN);
  if (w.flops > 0 && ts * km_math_peak_flops_per_us(dev, w.math) < w.flops)
    return false;
  if (w.dram_bytes > 0 && ts * (dev->dram_gbps * 1e3) < w.dram_bytes)
    return false;
  if (w.link_bytes > 0 && ts * (w.link_gbps * 1e3) < w.link_bytes)
    return false;
  return true;
}

/* ---- monotonicity of a fitted GEMM model ----------------------------------
 * A larger m, n or k is never much faster on a GPU (at worst a tile or
 * wave boundary moves): over the geometric grid m_i = lo·2^(i/4) (and n,
 * k alike) inside the model's domain — for a model without one, 1 to
 * 2^16 (k to 2^20) — each point is compared with the point one step
 * larger along each axis, on the model's own answer (the canonical
 * layout, batch 1, no floor). A domain may reach 2^63 − 1 (a CSV's
 * sizes are any int64): the walk steps in double and stops before the
 * domain's top or int64's, converting only values below both, and an
 * axis wider than MONO_MAX_POINTS steps of 2^(1/4) is walked in
 * MONO_MAX_POINTS equal geometric steps, so the check costs at most
 * MONO_MAX_POINTS³ points whatever the domain (MONO_MAX_POINTS covers
 * 2^24: the default grids keep their 2^(1/4)). */
#define MONO_STEP 1.189207115002721 /* 2^(1/4) */
#define MONO_MAX_POINTS 96

typedef struct mono_axis {
  int64_t lo, hi; /* 1 ≤ lo; hi < 2^63 */
  double step;    /* > 1 */
} mono_axis;

static void mono_range(const dc_mlp *m, dc_mlp_feature f, mono_axis *ax) {
  double lo = 1, hi = f == DC_MLPF_LN_K ? 1 << 20 : 1 << 16;
  if (m->has_domain)
    for (int32_t i = 0; i < m->n_features; i++)
      if (m->features[i] == (int32_t)f)
        lo = ceil(exp(m->feat_min[i])), hi = floor(exp(m->feat_max[i]));
  ax->lo = lo > 1 ? dc_f64_sat_i64(lo) : 1;
  ax->hi = dc_f64_sat_i64(hi);
  ax->step = MONO_STEP;
  if (ax->hi > ax->lo) {
    double span = log((double)ax->hi / (double)ax->lo);
    if (span / log(MONO_STEP) > MONO_MAX_POINTS)
      ax->step = exp(span / MONO_MAX_POINTS);
  }
}

/* The grid point after v on `ax`, or -1 past the axis' top. */
static int64_t mono_next(int64_t v, const mono_axis *ax) {
  double w = ceil((double)v * ax->step);
  if (!(w <= (double)ax->hi)) return -1; /* also ≥ 2^63 */
  int64_t n = dc_f64_sat_i64(w);
  if (n <= v) n = v + 1; /* v < hi here */
  return n <= ax->hi ? n : -1;
}

void dc_mlp_check_monotone(const dc_mlp *m, dc_dtype t, double tol,
                           dc_mlp_mono *out) {
  *out = (dc_mlp_mono){0, 0, 1, 0, 0, 0, -1, MONO_STEP};
  mono_axis ax[3];
  mono_range(m, DC_MLPF_LN_M, &ax[0]);
  mono_range(m, DC_MLPF_LN_N, &ax[1]);
  mono_range(m, DC_MLPF_LN_K, &ax[2]);
  for (int i = 0; i < 3; i++)
    if (ax[i].step > out->max_step) out->max_step = ax[i].step;
  dc_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = DC_KERNEL_GEMM, k.scale = 1;
  k.u.gemm.batch = 1, k.u.gemm.dtype = t;
  for (int64_t a = ax[0].lo; a >= 0 && a <= ax[0].hi; a = mono_next(a, &ax[0]))
    for (int64_t b = ax[1].lo; b >= 0 && b <= ax[1].hi;
         b = mono_next(b, &ax[1]))
      for (int64_t c = ax[2].lo; c >= 0 && c <= ax[2].hi;
           c = mono_next(c, &ax[2])) {
        k.u.gemm.m = a, k.u.gemm.n = b, k.u.gemm.k = c;
        double t0 = dc_mlp_predict_us(m, &k);
        for (int i = 0; i < 3; i++) {
          dc_kernel k2 = k;
          int64_t *v = i == 0 ? &k2.u.gemm.m
                       : i == 1 ? &k2.u.gemm.n
                                : &k2.u.gemm.k;
          int64_t next = mono_next(*v, &ax[i]);
          if (next < 0) continue;
          *v = next;
          double r = dc_mlp_predict_us(m, &k2) / t0;
          out->pairs++;
          if (r < 1 - tol) out->violations++;
          if (r < out->worst) {
            out->worst = r;
            out->m = a, out->n = b, out->k = c, out->axis = i;
          }
        }
      }
}
