/*
 * test_kernels_gemm_fast.c — the analytic GEMM model's fast path
 * (kernels/gemm.c gemm_fast: fewer divisions, tiles skipped by a lower
 * bound, thresholds kept per thread) must return exactly the double of the
 * reference loop that prices every candidate (dc_k_gemm_reference_us):
 * every study output depends on it, and the goldens compare bytes. Checked
 * on every GPU of the catalog, every dtype, and pseudo-random shapes of
 * all scales (tiny, DLRM-like, huge, batched, and beyond the fast path's
 * range, where both must still agree). DC_GEMM_TEST_N sets the shapes per
 * GPU (the change was checked with 1,000,000 per GPU).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kinternal.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int64_t dim(void) {
  switch (next() % 7) {
  case 0: return 1 + (int64_t)(next() % 16);
  case 1: return 1 + (int64_t)(next() % 300);
  case 2: return 1 + (int64_t)(next() % 5000);
  case 3: return 1 + (int64_t)(next() % 120000);
  case 4: return ((int64_t)1 << (next() % 18)) + (int64_t)(next() % 3) - 1;
  case 5: { /* DLRM layer widths */
    static const int64_t w[] = {13, 64, 128, 256, 479, 512, 1024, 415, 1};
    return w[next() % (sizeof w / sizeof *w)];
  }
  default: return 1 + (int64_t)(next() % 2000000);
  }
}

static void same_as_reference(void **state) {
  (void)state;
  size_t n_gpus = 0;
  const char *const *gpus = dc_catalog_names("gpus", &n_gpus);
  assert_true(n_gpus > 0);
  const char *e = getenv("DC_GEMM_TEST_N");
  long n = e ? atol(e) : 40000;
  static const dc_dtype dts[] = {DC_DTYPE_FP32, DC_DTYPE_TF32, DC_DTYPE_FP16,
                                 DC_DTYPE_BF16, DC_DTYPE_INT64, DC_DTYPE_BOOL};
  dc_arena a;
  dc_arena_init(&a);
  long bad = 0, total = 0;
  for (size_t g = 0; g < n_gpus; g++) {
    dc_device dev;
    dc_diags d = {0};
    assert_true(dc_device_lookup(gpus[g], &dev, &a, &d));
    dc_diags_free(&d);
    for (long i = 0; i < n; i++) {
      dc_kernel k;
      memset(&k, 0, sizeof k);
      k.kind = DC_KERNEL_GEMM;
      k.scale = 1;
      k.u.gemm.m = dim();
      k.u.gemm.n = dim();
      k.u.gemm.k = dim();
      k.u.gemm.batch = next() % 3 ? 1 : 1 + (int64_t)(next() % 5000);
      if (next() % 50 == 0) k.u.gemm.batch = dim();
      if (next() % 200 == 0) k.u.gemm.m = (int64_t)1 << (30 + next() % 3);
      k.u.gemm.dtype = dts[next() % (sizeof dts / sizeof *dts)];
      double x = dc_kernel_gemm_analytic_us(&k, &dev);
      double y = dc_k_gemm_reference_us(&k, &dev);
      total++;
      if (memcmp(&x, &y, sizeof x) != 0 && bad++ < 10)
        print_error("%s m=%lld n=%lld k=%lld batch=%lld dtype=%d: fast "
                    "%.17g, reference %.17g\n",
                    gpus[g], (long long)k.u.gemm.m, (long long)k.u.gemm.n,
                    (long long)k.u.gemm.k, (long long)k.u.gemm.batch,
                    (int)k.u.gemm.dtype, x, y);
    }
  }
  dc_arena_free(&a);
  print_message("%ld shapes on %zu GPUs, %ld differ\n", total, n_gpus, bad);
  assert_int_equal(bad, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_as_reference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
