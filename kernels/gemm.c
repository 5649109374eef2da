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

static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Every candidate priced in full. The quantities that are whole numbers
 * (tiles, waves, k per split) are computed in 64-bit integers: the same
 * values as ceil() on doubles, without a libm call per candidate. (A
 * pruned search with one division per candidate was tried: same results,
 * no measurable gain, about 150 more lines; it was removed.) */
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
    int64_t mt = gemm_tiles[t][0], nt = gemm_tiles[t][1];
    int64_t cps = 128 * 128 / (mt * nt);
    cps = cps < 1 ? 1 : cps > 4 ? 4 : cps;
    /* Tile sides and split factors are powers of two: shifts, not
     * divisions. */
    int mt_log = __builtin_ctzll((unsigned long long)mt);
    int nt_log = __builtin_ctzll((unsigned long long)nt);
    int64_t mn_tiles = ((m + mt - 1) >> mt_log) * ((n + nt - 1) >> nt_log) *
                       batch;
    int64_t slots = sms * cps;
    double tile_flops = 2.0 * (double)(mt * nt);
    double tile_feed = (double)(mt + nt) * s;
    double inflight_tile = (double)(mt + nt) * kstep * s * 2;
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

double dc_kernel_gemm_analytic_us(const dc_kernel *k, const dc_device *dev) {
  int64_t m = k->u.gemm.m, n = k->u.gemm.n, kk = k->u.gemm.k;
  int64_t batch = k->u.gemm.batch;
  if (m <= 0 || n <= 0 || kk <= 0 || batch <= 0) return dev->kernel_floor_us;
  double s = dc_dtype_bytes(k->u.gemm.dtype);
  int64_t sms = dev->sms > 0 ? dev->sms : 1;
  double peak_sm = gemm_peak(dev, k->u.gemm.dtype) / (double)sms; /* flops/µs */
  double l2_sm = dev->l2_gbps * 1e3 / (double)sms;                /* bytes/µs */
  double dram_bps = dc_k_dram_gbps(dev) * 1e9;
  return gemm_full(m, n, kk, batch, s, dev, peak_sm, l2_sm, dram_bps);
}
