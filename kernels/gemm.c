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

/* The candidate CTA tiles (mt × nt), with what the search needs of each:
 * the sides as log2 − 5 (an index into the per-call table of ceil(m / side)
 * and ceil(n / side) for sides 32..256), log2 of ctas_per_sm =
 * clamp(128²/(mt·nt), 1, 4), 2·mt·nt (flops per k) and mt + nt (elements
 * fed per k). A tile marked `mirror` is the previous one transposed. */
typedef struct gemm_tile {
  int8_t mi, ni, cps_log;
  bool mirror;
  double flops_per_k, feed_per_k;
} gemm_tile;

#define GEMM_TILE(mt, nt, mi, ni, cps_log, mirror)                           \
  {mi, ni, cps_log, mirror, 2.0 * (mt) * (nt), (double)(mt) + (nt)}
static const gemm_tile gemm_tiles[] = {
    GEMM_TILE(256, 128, 3, 2, 0, false), GEMM_TILE(128, 256, 2, 3, 0, true),
    GEMM_TILE(128, 128, 2, 2, 0, false), GEMM_TILE(128, 64, 2, 1, 1, false),
    GEMM_TILE(64, 128, 1, 2, 1, true),   GEMM_TILE(128, 32, 2, 0, 2, false),
    GEMM_TILE(32, 128, 0, 2, 2, true),   GEMM_TILE(64, 64, 1, 1, 2, false),
    GEMM_TILE(64, 32, 1, 0, 2, false),   GEMM_TILE(32, 64, 0, 1, 2, true),
    GEMM_TILE(32, 32, 0, 0, 2, false)};
#undef GEMM_TILE

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

/* Every candidate priced without a division (but for latency-bound ones):
 *  - what depends on the split factor alone (k per split, bytes) is
 *    tabulated once per call, and ceil(m / side), ceil(n / side) once per
 *    tile side;
 *  - tiles over SMs: q, r = mn_tiles / SMs once per tile (a double
 *    estimate corrected to the exact integer quotient), then doubled per
 *    split step (tiles·2 = 2q·SMs + 2r), so ceil(tiles / SMs) is exact;
 *    waves = ceil(ceil(tiles / SMs) / ctas_per_sm), ctas_per_sm a power
 *    of two;
 *  - max(compute, feed) = per_sm · ks · max(tile flops / per-SM peak, tile
 *    feed / per-SM L2 bw), the second factor once per tile;
 *  - the DRAM bandwidth min() is a comparison of bytes in flight.
 * The results equal the formulas above to rounding: against the first,
 * direct implementation (every formula as written, divisions included)
 * the largest relative difference over 340,000 random shapes and dtypes
 * (20,000 on each of 17 catalog GPUs) was 4.4e-16, and a unit test
 * (gemm_search_matches_direct) keeps checking it. */
typedef struct gemm_ctx {
  double inv_peak_sm, inv_l2_sm; /* µs per flop, per byte, on one SM */
  double us_per_byte;            /* 1e6 / dram_bps */
  double bytes_needed;           /* in flight to reach dram_bps */
  double inv_sms;
  int64_t sms;
} gemm_ctx;

#define GEMM_MAX_SPLIT_LOG 5

/* floor(a / sms) and the remainder, exactly, for 0 ≤ a. The double
 * estimate is within one of the quotient below 2^52. */
static inline void div_sms(int64_t a, const gemm_ctx *c, int64_t *q,
                           int64_t *r) {
  if (a >= ((int64_t)1 << 52)) {
    *q = a / c->sms, *r = a % c->sms;
    return;
  }
  int64_t qe = (int64_t)((double)a * c->inv_sms);
  int64_t re = a - qe * c->sms;
  if (re < 0) qe--, re += c->sms;
  if (re >= c->sms) qe++, re -= c->sms;
  *q = qe, *r = re;
}

/* What the split-K candidates of one tile share. */
typedef struct gemm_tile_state {
  int64_t mn_tiles, q, r; /* tiles without split; = q·SMs + r */
  double per_ks;          /* µs per CTA per k: max(compute, L2 feed) */
  bool full_bw;           /* enough CTAs for full DRAM bandwidth at split 1
                             (then at every split: they only grow) */
  bool skip;              /* dominated by its mirror: never cheaper */
} gemm_tile_state;

/* The split table: what depends on the split factor 2^j alone. */
typedef struct gemm_splits {
  int n;
  double ks[GEMM_MAX_SPLIT_LOG + 1];    /* k per split */
  double bytes[GEMM_MAX_SPLIT_LOG + 1]; /* DRAM bytes */
  double tdram[GEMM_MAX_SPLIT_LOG + 1]; /* bytes at full bandwidth, µs */
  double floor_us[GEMM_MAX_SPLIT_LOG + 1]; /* no split candidate at j
                                              or beyond costs less */
  double kstep_bytes;                   /* in flight per tile-side element */
} gemm_splits;

/* The compute time (µs) of tile g at split step j; q, r describe the tiles
 * over SMs at that step. CTAs one SM runs in sequence: ceil(tiles / SMs)
 * within one wave, else whole waves of ctas_per_sm. */
static inline double gemm_tcomp(const gemm_tile *g, const gemm_tile_state *ts,
                                int64_t q, int64_t r, int j,
                                const gemm_splits *sp) {
  int64_t cps = (int64_t)1 << g->cps_log;
  int64_t need = q + (r > 0);
  int64_t per_sm = need <= cps ? need : (need + cps - 1) & -cps;
  return (double)per_sm * sp->ks[j] * ts->per_ks;
}

/* Little's law: the active CTAs, min(tiles, slots), keep (mt + nt)·kstep·
 * s·2 bytes each in flight; below bytes_needed the DRAM bandwidth is
 * latency-bound. Returns the bytes in flight. */
static inline double gemm_inflight(const gemm_tile *g,
                                   const gemm_tile_state *ts, int j,
                                   const gemm_splits *sp, const gemm_ctx *c) {
  int64_t tiles = ts->mn_tiles << j, slots = c->sms << g->cps_log;
  return (double)(tiles < slots ? tiles : slots) * g->feed_per_k *
         sp->kstep_bytes;
}

static inline double gemm_tmem(double inflight, int j, const gemm_splits *sp,
                               const gemm_ctx *c) {
  if (inflight >= c->bytes_needed) return sp->tdram[j];
  return sp->bytes[j] * (GEMM_DRAM_LATENCY_S * 1e6) / inflight;
}

/* The search, in two passes. First every tile without split-K. Then the
 * split candidates, skipping those that cannot win: a split candidate
 * costs at least max(mn_tiles·k / SMs · per_ks, bytes at full bandwidth)
 * + 2 fixed costs (its CTAs per SM × k per split ≥ mn_tiles·k / SMs), and
 * its bytes grow with the split. The skipped ones would have lost; the
 * result is the minimum over all candidates. */
static double gemm_full(int64_t m, int64_t n, int64_t kk, int64_t batch,
                        double s, const gemm_ctx *c) {
  double dm = (double)m, dn = (double)n, dk = (double)kk, db = (double)batch;
  double base_bytes = (dm * dk + dk * dn) * s * db + dm * dn * s * db;
  double partial_bytes = dm * dn * 4 * db * 2;
  gemm_splits sp;
  sp.n = 0;
  sp.kstep_bytes = (s < 4 ? 64 : 32) * s * 2;
  for (int j = 0; j <= GEMM_MAX_SPLIT_LOG; j++) {
    int64_t ks = (kk + ((int64_t)1 << j) - 1) >> j;
    if (j > 0 && ks < 128) break;
    sp.ks[j] = (double)ks;
    sp.bytes[j] = base_bytes + (j > 0 ? partial_bytes * (double)(1 << j) : 0);
    sp.tdram[j] = sp.bytes[j] * c->us_per_byte;
    /* A relative margin far above rounding keeps the skip test safe. */
    sp.floor_us[j] = sp.tdram[j] * (1 - 1e-9) + 2 * GEMM_FIXED_US;
    sp.n = j + 1;
  }
  /* ceil(m / side), ceil(n / side) for sides 32, 64, 128, 256 */
  int64_t mside[4], nside[4];
  for (int i = 0; i < 4; i++) {
    mside[i] = (m + (32 << i) - 1) >> (5 + i);
    nside[i] = (n + (32 << i) - 1) >> (5 + i);
  }
  double feed_us = s * c->inv_l2_sm; /* per element fed, one SM */
  gemm_tile_state st[DC_COUNTOF(gemm_tiles)];
  double best = INFINITY;
  /* A tile and its mirror have the same per-k cost and ctas per SM and
   * differ only in their tile counts. Every candidate's CTAs per SM grow
   * with the count, and so do the active CTAs: once the tile with fewer
   * tiles has full DRAM bandwidth, so has its mirror, and none of the
   * mirror's candidates is cheaper than the same split of it. So the one
   * with fewer tiles is priced, and the other only when that one is
   * latency-bound. */
  for (size_t t = 0; t < DC_COUNTOF(gemm_tiles); t++) {
    const gemm_tile *g = &gemm_tiles[t];
    st[t].mn_tiles = mside[g->mi] * nside[g->ni] * batch;
    st[t].skip = true;
  }
  for (size_t t = 0; t < DC_COUNTOF(gemm_tiles); t++) {
    bool pair = t + 1 < DC_COUNTOF(gemm_tiles) && gemm_tiles[t + 1].mirror;
    size_t u = pair && st[t + 1].mn_tiles < st[t].mn_tiles ? t + 1 : t;
    size_t first = u;
    for (int round = 0; round < 2; round++) {
      const gemm_tile *g = &gemm_tiles[u];
      gemm_tile_state *ts = &st[u];
      ts->skip = false;
      ts->per_ks =
          dmax(g->flops_per_k * c->inv_peak_sm, g->feed_per_k * feed_us);
      div_sms(ts->mn_tiles, c, &ts->q, &ts->r);
      double inflight = gemm_inflight(g, ts, 0, &sp, c);
      ts->full_bw = inflight >= c->bytes_needed;
      double t0 = dmax(gemm_tcomp(g, ts, ts->q, ts->r, 0, &sp),
                       gemm_tmem(inflight, 0, &sp, c));
      best = dmin(best, t0 + GEMM_FIXED_US);
      if (!pair) break;
      if (u != first) {
        /* The one with fewer tiles was latency-bound. When even the larger
         * count, at the largest split, fits in one CTA per SM, both run
         * one CTA per SM at every split (the same compute) and the larger
         * count keeps more bytes in flight: the other's split candidates
         * cannot win. */
        if (st[u].mn_tiles <= c->sms >> (sp.n - 1)) st[first].skip = true;
        break;
      }
      /* as many tiles: the mirror's candidates are the same ones */
      if (ts->full_bw || st[t].mn_tiles == st[t + 1].mn_tiles) break;
      u = u == t ? t + 1 : t; /* the mirror */
    }
    t += pair;
  }
  double split_fixed = 2 * GEMM_FIXED_US;
  for (size_t t = 0; sp.n > 1 && t < DC_COUNTOF(gemm_tiles); t++) {
    const gemm_tile_state *ts = &st[t];
    if (ts->skip) continue;
    double lb = (double)ts->mn_tiles * dk * c->inv_sms * ts->per_ks;
    if (lb * (1 - 1e-9) + split_fixed >= best) continue;
    int64_t q = ts->q, r = ts->r;
    for (int j = 1; j < sp.n; j++) {
      if (sp.floor_us[j] >= best) break;
      q *= 2, r *= 2; /* tiles double: 2q·SMs + 2r */
      if (r >= c->sms) q++, r -= c->sms;
      const gemm_tile *g = &gemm_tiles[t];
      double tmem = ts->full_bw
                        ? sp.tdram[j]
                        : gemm_tmem(gemm_inflight(g, ts, j, &sp, c), j, &sp, c);
      double tj = dmax(gemm_tcomp(g, ts, q, r, j, &sp), tmem);
      best = dmin(best, tj + split_fixed);
    }
  }
  return best;
}

double dc_kernel_gemm_analytic_us(const dc_kernel *k, const dc_device *dev) {
  int64_t m = k->u.gemm.m, n = k->u.gemm.n, kk = k->u.gemm.k;
  int64_t batch = k->u.gemm.batch;
  if (m <= 0 || n <= 0 || kk <= 0 || batch <= 0) return dev->kernel_floor_us;
  double s = dc_dtype_bytes(k->u.gemm.dtype);
  gemm_ctx c;
  c.sms = dev->sms > 0 ? dev->sms : 1;
  c.inv_sms = 1.0 / (double)c.sms;
  double sms = (double)c.sms;
  c.inv_peak_sm = sms / gemm_peak(dev, k->u.gemm.dtype); /* µs per flop */
  c.inv_l2_sm = sms / (dev->l2_gbps * 1e3);             /* µs per byte */
  double dram_bps = dc_k_dram_gbps(dev) * 1e9;
  c.us_per_byte = 1e6 / dram_bps;
  c.bytes_needed = dram_bps * GEMM_DRAM_LATENCY_S;
  return gemm_full(m, n, kk, batch, s, &c);
}
