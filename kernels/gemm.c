/*
 * gemm.c — the analytic, zero-shot GEMM model (DESIGN §4a): a time for
 * C[m,n] = op(A)[m,k]·op(B)[k,n] (batch times) from the datasheet alone, so
 * that a GPU nobody has benchmarked can be studied. It plays the library's
 * heuristic: for each candidate CTA tile and split-K factor it prices
 *
 *   tiles  = ceil(m/mt)·ceil(n/nt)·batch·split      (tile quantisation)
 *   slots  = SMs · ctas_per_sm,  ctas_per_sm = clamp(128²/(mt·nt), 1, 4)
 *   waves  = ceil(tiles / slots)                     (wave quantisation)
 *   wave   = per-SM work of one wave: max(compute, L2 feed), where
 *            compute = cps·2·mt·nt·(k/split) / (peak/SMs)
 *            L2 feed = cps·(mt+nt)·(k/split)·s / (l2_bw/SMs)
 *   dram   = bytes of A, B and C (+ split-K partials written and re-read)
 *            over min(achievable DRAM bw, bytes in flight / latency)
 *            — Little's law: a skinny GEMM with few CTAs cannot keep
 *            enough loads in flight to reach the bandwidth; each CTA keeps
 *            2 stages of (mt+nt)·kstep elements in flight (kstep 32 fp32,
 *            64 half), DRAM latency taken as 600 ns (typical NVIDIA/AMD)
 *   t      = max(waves·wave, dram) + fixed cost (+ one more for split-K's
 *            reduction kernel)
 *
 * and keeps the cheapest, as cuBLAS's heuristics try to. The peak is the
 * SIMT fp32 rate × achievable fp32 for FP32 (matrix-core fp32 on AMD), the
 * tensor-core rate × achievable tensor factor for TF32/FP16/BF16; a dtype
 * without tensor cores falls back (TF32/BF16: fp32 path; P100 fp16: SIMT
 * half2 at 2× fp32; TITAN Xp fp16: 1/64 of fp32, from the catalog). A
 * power-capped part (sustained_mhz) has its peaks scaled by the clock.
 * The fixed cost is 5 µs: the "GPU kernel overhead" the paper's authors add
 * to each predicted kernel (anchor-notes.md). Nothing here is fitted to a
 * data set; tests/validation/ reports its error on DeepBench.
 */
#include <math.h>

#include "kernels/kernels.h"
#include "kernels/kinternal.h"

#define GEMM_FIXED_US 5.0
#define GEMM_DRAM_LATENCY_S 600e-9
#define GEMM_BOUND_SHRINK (1.0 - 0x1p-40)

static const int gemm_tiles[][2] = {
    {256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {128, 32},
    {32, 128},  {64, 64},   {64, 32},   {32, 64},  {32, 32}};

/* Achievable FLOP/s for the dtype, in flops per µs. */
static double gemm_peak(const dc_device *dev, dc_dtype t) {
  double clock = 1.0;
  if (dev->sustained_mhz > 0 && dev->sustained_mhz < dev->boost_mhz)
    clock = dev->sustained_mhz / dev->boost_mhz;
  double fp32 = (dev->fp32_matrix_tflops > 0 ? dev->fp32_matrix_tflops
                                             : dev->fp32_tflops) *
                dev->fp32_eff;
  double tc_eff = dev->tensor_cores ? dev->tensor_eff : dev->fp32_eff;
  double peak = fp32;
  switch (t) {
  case DC_DTYPE_TF32:
    if (dev->tf32_tflops > 0) peak = dev->tf32_tflops * tc_eff;
    break;
  case DC_DTYPE_FP16:
    if (dev->fp16_tflops > 0) peak = dev->fp16_tflops * tc_eff;
    break;
  case DC_DTYPE_BF16:
    if (dev->bf16_tflops > 0) peak = dev->bf16_tflops * tc_eff;
    break;
  default: break;
  }
  return peak * clock * 1e6;
}

/* What one candidate tile implies, whatever the split: CTAs per SM, the
 * tile count over m × n × batch, the SM slots, and per-tile work. Tile
 * sides are powers of two: shifts, not divisions. */
typedef struct tile_geom {
  int64_t cps, mn_tiles, slots;
  double tile_flops, tile_feed, inflight_tile;
} tile_geom;

static inline tile_geom tile_geometry(size_t t, int64_t m, int64_t n,
                                      int64_t batch, int64_t sms, double s,
                                      double kstep) {
  int64_t mt = gemm_tiles[t][0], nt = gemm_tiles[t][1];
  tile_geom g;
  g.cps = 128 * 128 / (mt * nt);
  g.cps = g.cps < 1 ? 1 : g.cps > 4 ? 4 : g.cps;
  int mt_log = __builtin_ctzll((unsigned long long)mt);
  int nt_log = __builtin_ctzll((unsigned long long)nt);
  g.mn_tiles = ((m + mt - 1) >> mt_log) * ((n + nt - 1) >> nt_log) * batch;
  g.slots = sms * g.cps;
  g.tile_flops = 2.0 * (double)(mt * nt);
  g.tile_feed = (double)(mt + nt) * s;
  g.inflight_tile = (double)(mt + nt) * kstep * s * 2;
  return g;
}

static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The reference loop: every candidate priced in full. The quantities that
 * are whole numbers (tiles, waves, k per split) are computed in 64-bit
 * integers: the same values as ceil() on doubles, but without a libm call
 * per candidate. Used as is for inputs outside the fast path's range. */
static double gemm_full(int64_t m, int64_t n, int64_t kk, int64_t batch,
                        double s, const dc_device *dev, double peak_sm,
                        double l2_sm, double dram_bps) {
  bool half = s < 4;
  int64_t sms = dev->sms > 0 ? dev->sms : 1;
  double kstep = half ? 64 : 32;
  double dm = (double)m, dn = (double)n, dk = (double)kk, db = (double)batch;
  double base_bytes = (dm * dk + dk * dn) * s * db + dm * dn * s * db;
  double partial_bytes = dm * dn * 4 * db * 2;
  double best = INFINITY;
  for (size_t t = 0; t < DC_COUNTOF(gemm_tiles); t++) {
    tile_geom tg = tile_geometry(t, m, n, batch, sms, s, kstep);
    int64_t cps = tg.cps, mn_tiles = tg.mn_tiles, slots = tg.slots;
    double tile_flops = tg.tile_flops, tile_feed = tg.tile_feed;
    double inflight_tile = tg.inflight_tile;
    for (int split_log = 0; split_log <= 5; split_log++) {
      int64_t split = (int64_t)1 << split_log;
      int64_t ks = (kk + split - 1) >> split_log;
      if (split > 1 && ks < 128) break;
      int64_t tiles = mn_tiles * split;
      int64_t waves = ceil_div(tiles, slots);
      int64_t active = tiles < slots ? tiles : slots;
      int64_t per_sm = cps;
      if (waves == 1) {
        int64_t need = ceil_div(tiles, sms);
        per_sm = need < cps ? need : cps;
      }
      double compute = (double)per_sm * tile_flops * (double)ks / peak_sm;
      double feed = (double)per_sm * tile_feed * (double)ks / l2_sm;
      double tcomp = (double)waves * dmax(compute, feed);
      double bytes = base_bytes + (split > 1 ? partial_bytes * (double)split : 0);
      double bw = dmin(dram_bps, (double)active * inflight_tile /
                                     GEMM_DRAM_LATENCY_S);
      double tmem = bytes / bw * 1e6;
      double tot = dmax(tcomp, tmem) + GEMM_FIXED_US +
                   (split > 1 ? GEMM_FIXED_US : 0);
      if (tot < best) best = tot;
    }
  }
  return best;
}

/* True when a·b >= c·d for the exact real products (two-product by fma:
 * rounding is monotone, so unequal rounded products order the exact ones
 * unless they are equal, and equal ones differ by their exact errors). */
static bool prod_ge(double a, double b, double c, double d) {
  double h1 = a * b, h2 = c * d;
  if (h1 != h2) return h1 > h2;
  return fma(a, b, -h1) >= fma(c, d, -h2);
}

/* The bandwidth the reference uses for `active` CTAs of tile t. */
static double gemm_bw(double dram_bps, int64_t active, double inflight_tile) {
  return dmin(dram_bps, (double)active * inflight_tile / GEMM_DRAM_LATENCY_S);
}

/* What gemm_fast derives from the rates alone, per tile:
 *  - compute-bound or L2-bound: compute = X/peak, feed = Y/l2 with X, Y
 *    exact integers and X/Y = tile_flops/tile_feed for every candidate of
 *    the tile, so which quotient is the larger is fixed per tile (decided
 *    exactly with fma; equal reals round to equal doubles);
 *  - the fewest active CTAs whose bandwidth reaches DRAM's
 *    (gemm_bw(active) == dram_bps from there on: it is monotone).
 * Kept per thread for the last rates seen (a sweep prices one device). */
typedef struct gemm_rates {
  double peak, l2, dram, s;
  uint32_t compute_bound; /* bit t */
  int64_t saturating[DC_COUNTOF(gemm_tiles)];
  bool valid;
} gemm_rates;

static const gemm_rates *gemm_rates_of(double peak_sm, double l2_sm,
                                       double dram_bps, double s) {
  static _Thread_local gemm_rates memo;
  if (memo.valid && memo.peak == peak_sm && memo.l2 == l2_sm &&
      memo.dram == dram_bps && memo.s == s)
    return &memo;
  double kstep = s < 4 ? 64 : 32;
  memo.compute_bound = 0;
  for (size_t t = 0; t < DC_COUNTOF(gemm_tiles); t++) {
    int64_t mt = gemm_tiles[t][0], nt = gemm_tiles[t][1];
    double tile_flops = 2.0 * (double)(mt * nt);
    double tile_feed = (double)(mt + nt) * s;
    if (prod_ge(tile_flops, l2_sm, tile_feed, peak_sm))
      memo.compute_bound |= 1u << t;
    double inflight_tile = (double)(mt + nt) * kstep * s * 2;
    double est = ceil(dram_bps * GEMM_DRAM_LATENCY_S / inflight_tile);
    int64_t a = INT64_MAX; /* never saturates in range */
    if (est < 0x1p40) {
      a = est < 1 ? 1 : (int64_t)est;
      while (a > 1 && gemm_bw(dram_bps, a - 1, inflight_tile) == dram_bps)
        a--;
      while (gemm_bw(dram_bps, a, inflight_tile) != dram_bps) a++;
    }
    memo.saturating[t] = a;
  }
  memo.peak = peak_sm;
  memo.l2 = l2_sm;
  memo.dram = dram_bps;
  memo.s = s;
  memo.valid = true;
  return &memo;
}

/* The same minimum as gemm_full, bit for bit, with one division per
 * candidate instead of four and two integer divisions. Each value it does
 * compute is computed with the reference's floating-point operations;
 *  - max(compute, feed) computes the larger quotient only (gemm_rates);
 *  - waves = ceil(tiles/slots) comes from the reciprocal and is corrected
 *    to the exact integer (tiles < 2^52: the estimate is within 1); in one
 *    wave ceil(tiles/SMs) <= cps <= 4 is counted, not divided;
 *  - tmem of a candidate with enough active CTAs to reach DRAM bandwidth
 *    is the split's DRAM-bound tmem, computed once per split;
 *  - a tile is skipped when a lower bound on all its candidates' totals
 *    (shrunk below the computed values) cannot beat the best so far: the
 *    total is a rounded, monotone function of max(tcomp, tmem), and the
 *    minimum of the totals (never NaN in this range: every rate is finite
 *    and positive) does not depend on the order they are taken in. */
static double gemm_fast(int64_t m, int64_t n, int64_t kk, int64_t batch,
                        double s, const dc_device *dev, double peak_sm,
                        double l2_sm, double dram_bps) {
  bool half = s < 4;
  int64_t sms = dev->sms > 0 ? dev->sms : 1;
  double kstep = half ? 64 : 32;
  double dm = (double)m, dn = (double)n, dk = (double)kk, db = (double)batch;
  double base_bytes = (dm * dk + dk * dn) * s * db + dm * dn * s * db;
  double partial_bytes = dm * dn * 4 * db * 2;
  /* Splits allowed by k (the reference's break is tile-independent), and
   * the DRAM-bound tmem of each. */
  int nsplit = 1;
  while (nsplit <= 5) {
    int64_t ks = (kk + ((int64_t)1 << nsplit) - 1) >> nsplit;
    if (ks < 128) break;
    nsplit++;
  }
  double tmem_dram[6];
  for (int sl = 0; sl < nsplit; sl++) {
    int64_t split = (int64_t)1 << sl;
    double bytes = base_bytes + (split > 1 ? partial_bytes * (double)split : 0);
    tmem_dram[sl] = bytes / dram_bps * 1e6;
  }
  const gemm_rates *rt = gemm_rates_of(peak_sm, l2_sm, dram_bps, s);
  double inv_peak = 1.0 / peak_sm, inv_l2 = 1.0 / l2_sm;
  double inv_sms = 1.0 / (double)sms;
  double best = INFINITY;
  for (size_t t = 0; t < DC_COUNTOF(gemm_tiles); t++) {
    tile_geom tg = tile_geometry(t, m, n, batch, sms, s, kstep);
    int64_t cps = tg.cps, mn_tiles = tg.mn_tiles, slots = tg.slots;
    double tile_flops = tg.tile_flops, tile_feed = tg.tile_feed;
    double inflight_tile = tg.inflight_tile;
    double inv_slots = inv_sms / (double)cps; /* cps: a power of two */
    bool by_compute = (rt->compute_bound >> t) & 1;
    double num = by_compute ? tile_flops : tile_feed;
    double rate = by_compute ? peak_sm : l2_sm;
    double inv_rate = by_compute ? inv_peak : inv_l2;
    int64_t saturating = rt->saturating[t];
    /* Every split's tcomp is at least mn_tiles·k·num/(SMs·rate) (waves >=
     * tiles/slots, or per_sm >= tiles/SMs in one wave; split·ks >= k), and
     * its tmem at least the split-1 DRAM-bound one. */
    double tile_lb = (double)mn_tiles * dk * num * inv_rate * inv_sms *
                     GEMM_BOUND_SHRINK;
    if (dmax(tile_lb, tmem_dram[0]) + GEMM_FIXED_US >= best) continue;
    for (int sl = 0; sl < nsplit; sl++) {
      int64_t split = (int64_t)1 << sl;
      int64_t ks = (kk + split - 1) >> sl;
      int64_t tiles = mn_tiles << sl;
      int64_t waves = (int64_t)((double)tiles * inv_slots);
      waves += waves * slots < tiles;
      waves -= waves > 1 && (waves - 1) * slots >= tiles;
      int64_t need = 1 + (tiles > sms) + (tiles > 2 * sms) +
                     (tiles > 3 * sms);
      int64_t per_sm = waves == 1 && need < cps ? need : cps;
      int64_t active = tiles < slots ? tiles : slots;
      double tcomp = (double)waves * ((double)per_sm * num * (double)ks / rate);
      double tmem = tmem_dram[sl];
      if (__builtin_expect(active < saturating, 0)) {
        double bytes = base_bytes +
                       (split > 1 ? partial_bytes * (double)split : 0);
        tmem = bytes / gemm_bw(dram_bps, active, inflight_tile) * 1e6;
      }
      double tot = dmax(tcomp, tmem) + GEMM_FIXED_US +
                   (split > 1 ? GEMM_FIXED_US : 0);
      best = tot < best ? tot : best;
    }
  }
  return best;
}

double dc_kernel_gemm_analytic_us(const dc_kernel *k, const dc_device *dev) {
  int64_t m = k->u.gemm.m, n = k->u.gemm.n, kk = k->u.gemm.k;
  int64_t batch = k->u.gemm.batch;
  if (m <= 0 || n <= 0 || kk <= 0 || batch <= 0) return dev->kernel_floor_us;
  double s = dc_dtype_bytes(k->u.gemm.dtype);
  int64_t sms = dev->sms > 0 ? dev->sms : 1;
  double peak_sm = gemm_peak(dev, k->u.gemm.dtype) / (double)sms; /* flops/µs */
  double l2_sm = dev->l2_gbps * 1e3 / (double)sms;                /* bytes/µs */
  double dram_bps = dc_k_dram_gbps(dev) * 1e9;
  /* The fast path's range: sizes where every product it relies on is an
   * exact integer in a double and no int64 overflows, and rates that are
   * normal positive numbers (no NaN, no infinity, exact fma products). */
  bool fast = m <= (1 << 30) && n <= (1 << 30) && kk <= (1 << 30) &&
              batch <= (1 << 30) &&
              (double)m * (double)n * (double)batch < 0x1p46 &&
              (s == 1 || s == 2 || s == 4 || s == 8) && sms <= (1 << 20) &&
              peak_sm > 0x1p-500 && peak_sm < 0x1p500 &&
              l2_sm > 0x1p-500 && l2_sm < 0x1p500 &&
              dram_bps > 0x1p-500 && dram_bps < 0x1p500;
  return fast ? gemm_fast(m, n, kk, batch, s, dev, peak_sm, l2_sm, dram_bps)
              : gemm_full(m, n, kk, batch, s, dev, peak_sm, l2_sm, dram_bps);
}

double dc_k_gemm_reference_us(const dc_kernel *k, const dc_device *dev) {
  int64_t m = k->u.gemm.m, n = k->u.gemm.n, kk = k->u.gemm.k;
  int64_t batch = k->u.gemm.batch;
  if (m <= 0 || n <= 0 || kk <= 0 || batch <= 0) return dev->kernel_floor_us;
  double s = dc_dtype_bytes(k->u.gemm.dtype);
  int64_t sms = dev->sms > 0 ? dev->sms : 1;
  double peak_sm = gemm_peak(dev, k->u.gemm.dtype) / (double)sms;
  double l2_sm = dev->l2_gbps * 1e3 / (double)sms;
  double dram_bps = dc_k_dram_gbps(dev) * 1e9;
  return gemm_full(m, n, kk, batch, s, dev, peak_sm, l2_sm, dram_bps);
}
