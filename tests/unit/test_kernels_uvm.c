/*
 * test_kernels_uvm.c — lookups of tables beyond HBM (kernels/uvm.c): the
 * hit rate of a cache under uniform and Zipf access, hand-worked prices
 * of uvm and uvm_caching lookups on a toy device, the host link's floor
 * on every catalog GPU, and the law a capacity planner leans on: less
 * cache is never faster.
 *
 * Toy device: DRAM 1000 GB/s × 0.8, L2 2000 GB/s, fp32 10 TFLOP/s, host
 * link 20 GB/s × 0.5 = 10 GB/s achievable (10 bytes per ns), kernel
 * floor 2 µs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "kernels/kernels.h"
#include "tests/unit/toy_device.h"

#define NEAR(a, b) \
  assert_true(fabs((double)(a) - (b)) <= 1e-9 * fmax(1, fabs((double)(b))))

static dc_kernel lookup(dc_kernel_kind kind, dc_emb_group *g) {
  dc_kernel k = {0};
  k.kind = kind;
  k.scale = 1;
  k.u.emb.batch = 1000;
  k.u.emb.n_groups = 1;
  k.u.emb.groups = g;
  k.u.emb.dtype = DC_DTYPE_FP32;
  k.u.emb.optimizer = DC_OPTIMIZER_ROWWISE_ADAGRAD;
  k.u.emb.fused_optimizer = true;
  k.u.emb.model = DC_EMBMODEL_ENHANCED;
  return k;
}

static dc_emb_group group(dc_table_memory m, int64_t cache_rows) {
  dc_emb_group g = {.tables = 2, .rows = 1000000, .dim = 128, .pooling = 10,
                    .memory = m, .cache_rows = cache_rows, .hit_rate = -1};
  return g;
}

/* H(n, s): exact below 64 terms, within 1e-5 above. */
static void harmonic(void **state) {
  (void)state;
  NEAR(dc_kernel_harmonic(3, 1), 1 + 0.5 + 1.0 / 3);
  NEAR(dc_kernel_harmonic(4, 0), 4);
  double exact = 0;
  for (int k = 1; k <= 100000; k++) exact += pow(k, -1.2);
  assert_true(fabs(dc_kernel_harmonic(100000, 1.2) / exact - 1) < 1e-5);
  exact = 0;
  for (int k = 1; k <= 5000; k++) exact += 1.0 / k;
  assert_true(fabs(dc_kernel_harmonic(5000, 1) / exact - 1) < 1e-5);
}

/* Uniform: the cached share of rows; Zipf: H(C)/H(E), above uniform;
 * a measured rate wins; uvm 0, HBM 1. */
static void hit_rate(void **state) {
  (void)state;
  dc_emb_group g = group(DC_MEMORY_UVM_CACHING, 200000);
  NEAR(dc_kernel_cache_hit_rate(&g), 0.2);
  g.zipf = 1.0;
  double h = dc_kernel_cache_hit_rate(&g);
  NEAR(h, dc_kernel_harmonic(200000, 1) / dc_kernel_harmonic(1000000, 1));
  assert_true(h > 0.85 && h < 0.9); /* ln(2e5)/ln(1e6) ≈ 0.88 */
  g.hit_rate = 0.5;
  NEAR(dc_kernel_cache_hit_rate(&g), 0.5);
  g = group(DC_MEMORY_UVM, 0);
  NEAR(dc_kernel_cache_hit_rate(&g), 0);
  g = group(DC_MEMORY_HBM, 0);
  NEAR(dc_kernel_cache_hit_rate(&g), 1);
}

/* uvm forward: B·T·L = 20,000 rows of 512 B = 10.24 MB over 10 GB/s =
 * 1024 µs + the 2 µs floor, far above the HBM model. Backward: each row
 * and its 32 B state sector read and written: 20,000 × 544 B = 10.88 MB
 * each way, 1088 µs + 2. */
static void uvm_prices(void **state) {
  (void)state;
  dc_device v = toy();
  dc_emb_group g = group(DC_MEMORY_UVM, 0);
  dc_kernel k = lookup(DC_KERNEL_EMBEDDING_FWD, &g);
  assert_true(dc_kernel_embedding_us(&k, &v) < 100);
  NEAR(dc_kernel_embedding_host_us(&k, &v), 1026);
  NEAR(dc_kernel_time(&k, &v, NULL), 1026);
  k = lookup(DC_KERNEL_EMBEDDING_BWD, &g);
  NEAR(dc_kernel_embedding_host_us(&k, &v), 1090);
}

/* uvm_caching at 20 % uniform: 16,000 missed rows, 8.192 MB in (fill)
 * and out (evictions): 819.2 µs; the fill writes 8.192 MB + 20,000 × 32 B
 * of index work into HBM at 800 GB/s: 11.04 µs; forward = HBM model +
 * 2 + 819.2 + 11.04. Backward: only the 32 B state sectors cross:
 * 0.64 MB each way, 64 µs + 2, against the HBM model's. */
static void caching_prices(void **state) {
  (void)state;
  dc_device v = toy();
  dc_emb_group g = group(DC_MEMORY_UVM_CACHING, 200000);
  dc_kernel k = lookup(DC_KERNEL_EMBEDDING_FWD, &g);
  double hbm = dc_kernel_embedding_us(&k, &v);
  NEAR(dc_kernel_embedding_host_us(&k, &v), hbm + 2 + 819.2 + 11.04);
  k = lookup(DC_KERNEL_EMBEDDING_BWD, &g);
  hbm = dc_kernel_embedding_us(&k, &v);
  NEAR(dc_kernel_embedding_host_us(&k, &v), fmax(hbm, 66));
  /* every row cached: no miss traffic, the HBM model plus the floor and
   * the prefetch's index work */
  g.cache_rows = g.rows;
  k = lookup(DC_KERNEL_EMBEDDING_FWD, &g);
  hbm = dc_kernel_embedding_us(&k, &v);
  NEAR(dc_kernel_embedding_host_us(&k, &v), hbm + 2 + 0.8);
}

/* Less cache is never faster, forward and backward, uniform and skewed,
 * and never faster than the link floor on any catalog GPU. */
static void monotone(void **state) {
  (void)state;
  dc_device v = toy();
  double zipfs[] = {0, 0.6, 1.0, 1.4};
  for (int z = 0; z < 4; z++)
    for (int kind = 0; kind < 2; kind++) {
      double prev = 0;
      for (int64_t c = 1000000; c >= 1; c /= 2) {
        dc_emb_group g = group(DC_MEMORY_UVM_CACHING, c);
        g.zipf = zipfs[z];
        dc_kernel k = lookup(kind ? DC_KERNEL_EMBEDDING_BWD
                                  : DC_KERNEL_EMBEDDING_FWD,
                             &g);
        double t = dc_kernel_time(&k, &v, NULL);
        assert_true(isfinite(t));
        assert_true(t >= prev);
        prev = t;
      }
    }
  const char *gpus[] = {"V100-SXM2-16GB", "A100-SXM4-80GB", "H100-SXM5-80GB",
                        "MI300X", "B200"};
  for (size_t i = 0; i < sizeof gpus / sizeof *gpus; i++) {
    dc_arena a;
    dc_arena_init(&a);
    dc_diags d = {0};
    dc_device dev;
    assert_true(dc_device_lookup(gpus[i], &dev, &a, &d));
    assert_true(dev.host_link_gbps > 0 && dev.host_memory_bytes > 0);
    for (int m = 1; m <= 2; m++) {
      dc_emb_group g = group((dc_table_memory)m, m == 2 ? 1000 : 0);
      dc_kernel k = lookup(DC_KERNEL_EMBEDDING_FWD, &g);
      double in, out;
      dc_kernel_emb_host_bytes(&k, &in, &out);
      double floor_us = fmax(in, out) / (dev.host_link_gbps * 1e3);
      assert_true(floor_us > 0);
      assert_true(dc_kernel_time(&k, &dev, NULL) >= floor_us);
      dc_kprice pr;
      dc_kernel_price(&k, &dev, NULL, &pr);
      assert_true(pr.floor.link_us > 0);
      assert_true(pr.us >= pr.floor.us);
    }
    dc_diags_free(&d);
    dc_arena_free(&a);
  }
}

/* The parts of a cached forward (the torchrec graph's): the LOOKUP is the
 * HBM model alone; the PREFETCH is the floor, the link term and the
 * misses' writes into the cache (8.192 MB at 800 GB/s: 10.24 µs), without
 * the index work the graph prices in kernels of its own; WHOLE is their
 * sum plus that index work (20,000 × 32 B at 800 GB/s: 0.8 µs). A uvm
 * group moves nothing in a PREFETCH and keeps its link term in a
 * LOOKUP. */
static void parts(void **state) {
  (void)state;
  dc_device v = toy();
  dc_emb_group g = group(DC_MEMORY_UVM_CACHING, 200000);
  dc_kernel k = lookup(DC_KERNEL_EMBEDDING_FWD, &g);
  double hbm = dc_kernel_embedding_us(&k, &v);
  double whole = dc_kernel_time(&k, &v, NULL);
  k.u.emb.part = DC_EMB_LOOKUP;
  double look = dc_kernel_time(&k, &v, NULL);
  NEAR(look, hbm);
  k.u.emb.part = DC_EMB_PREFETCH;
  double pre = dc_kernel_time(&k, &v, NULL);
  NEAR(pre, 2 + 819.2 + 10.24);
  NEAR(whole, look + pre + 0.8);
  double in, out;
  dc_kernel_emb_host_bytes(&k, &in, &out);
  NEAR(in, 8.192e6);
  /* a uvm group beside it: nothing in the PREFETCH, its rows in the
   * LOOKUP */
  dc_emb_group two[2] = {group(DC_MEMORY_UVM_CACHING, 200000),
                         group(DC_MEMORY_UVM, 0)};
  k = lookup(DC_KERNEL_EMBEDDING_FWD, two);
  k.u.emb.n_groups = 2;
  k.u.emb.part = DC_EMB_PREFETCH;
  dc_kernel_emb_host_bytes(&k, &in, &out);
  NEAR(in, 8.192e6);
  NEAR(dc_kernel_time(&k, &v, NULL), pre);
  k.u.emb.part = DC_EMB_LOOKUP;
  dc_kernel_emb_host_bytes(&k, &in, &out);
  NEAR(in, 20000 * 512.0);
  assert_true(dc_kernel_time(&k, &v, NULL) >= 1024);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parts),
      cmocka_unit_test(harmonic),     cmocka_unit_test(hit_rate),
      cmocka_unit_test(uvm_prices),   cmocka_unit_test(caching_prices),
      cmocka_unit_test(monotone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
