/*
 * test_bench_sweep.c — dlrmc-bench's value lists and sweeps
 * (kernels/bench/bench_sweep.c, bench_kinds.c): the list syntax and its
 * errors, the paper's GEMM size set, the size of every default sweep
 * (counted by hand from the lists in bench_kinds.c), the memory cap, the
 * fixed-seed sampling and the de-duplication across shape sets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kernels/bench/bench.h"

static const dc_bench_dim *dim_of(dc_bench_kind k, const char *name) {
  const dc_bench_kind_info *i = dc_bench_kind_get(k);
  int d = dc_bench_dim_index(i, name);
  assert_true(d >= 0);
  return &i->dims[d];
}

static void expect_list(dc_bench_kind k, const char *dim, const char *text,
                        const int64_t *want, size_t n_want) {
  int64_t *v = NULL;
  size_t n = 0;
  dc_buf err = {0};
  assert_true(dc_bench_list_parse(dim_of(k, dim), text, &v, &n, &err));
  assert_int_equal(n, n_want);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(v[i], want[i]);
  free(v);
  dc_buf_free(&err);
}

static void expect_list_error(dc_bench_kind k, const char *dim,
                              const char *text, const char *msg_part) {
  int64_t *v = NULL;
  size_t n = 0;
  dc_buf err = {0};
  assert_false(dc_bench_list_parse(dim_of(k, dim), text, &v, &n, &err));
  assert_non_null(err.data);
  if (!strstr(err.data, msg_part))
    fail_msg("message '%s' lacks '%s'", err.data, msg_part);
  dc_buf_free(&err);
}

static void test_lists(void **state) {
  (void)state;
  const int64_t a[] = {32, 64, 96, 128, 40};
  expect_list(DC_BENCH_GEMM, "m", "32:128:32,40", a, 5);
  const int64_t b[] = {1024, 2048, 4096, 8192};
  expect_list(DC_BENCH_MEMCPY, "bytes", "1Ki:8Ki:x2", b, 4);
  const int64_t c[] = {4, 2, 9};
  expect_list(DC_BENCH_GEMM, "k", " 4, 4 ,2,9,2", c, 3);
  const int64_t d[] = {5, 6, 7};
  expect_list(DC_BENCH_GEMM, "n", "5:7", d, 3); /* default step 1 */
  const int64_t e[] = {1, 0};
  expect_list(DC_BENCH_GEMM, "transa", "T,N", e, 2);
  const int64_t f[] = {3, 8}; /* a range whose step overshoots stops */
  expect_list(DC_BENCH_GEMM, "m", "3:10:5", f, 2);
}

static void test_list_errors(void **state) {
  (void)state;
  expect_list_error(DC_BENCH_GEMM, "m", "", "empty item");
  expect_list_error(DC_BENCH_GEMM, "m", "32,,64", "empty item");
  expect_list_error(DC_BENCH_GEMM, "m", "32:16", "empty range");
  expect_list_error(DC_BENCH_GEMM, "m", "abc", "not a number");
  expect_list_error(DC_BENCH_GEMM, "m", "1:10:0", "at least 1");
  expect_list_error(DC_BENCH_GEMM, "m", "1:10:x1", "at least 2");
  expect_list_error(DC_BENCH_GEMM, "m", "0", "out of range [1,");
  expect_list_error(DC_BENCH_TRIL, "diag", "0,2", "out of range [0, 1]");
  expect_list_error(DC_BENCH_GEMM, "transa", "N,X",
                    "unknown value 'X' (expected N, T)");
  expect_list_error(DC_BENCH_GEMM, "dtype", "fp64",
                    "expected fp32, tf32, fp16, bf16");
}

/* The paper's set: 32·i and 32·i + 8 for i = 1..128 (owensgroup/ml_perf_model). */
static void test_paper_gemm_sizes(void **state) {
  (void)state;
  const dc_bench_kind_info *g = dc_bench_kind_get(DC_BENCH_GEMM);
  assert_string_equal(g->sets[0].name, "addmm");
  int64_t *v = NULL;
  size_t n = 0;
  dc_buf err = {0};
  assert_true(dc_bench_list_parse(&g->dims[DC_GEMM_M],
                                  g->sets[0].lists[DC_GEMM_M], &v, &n,
                                  &err));
  assert_int_equal(n, 256);
  assert_int_equal(v[0], 32);
  assert_int_equal(v[127], 4096);
  assert_int_equal(v[128], 40);
  assert_int_equal(v[255], 4104);
  for (size_t i = 0; i < n; i++)
    assert_true(v[i] % 32 == 0 || v[i] % 32 == 8);
  free(v);
  assert_string_equal(g->sets[0].lists[DC_GEMM_BATCH], "1");
  assert_string_equal(g->sets[1].lists[DC_GEMM_BATCH], "512,1024,2048,4096");
  dc_buf_free(&err);
}

static dc_bench_opts opts_for(dc_bench_kind k) {
  dc_bench_opts o;
  memset(&o, 0, sizeof o);
  o.kind = dc_bench_kind_get(k);
  o.warmup = 5;
  o.iters = 30;
  o.samples = -1;
  o.seed = 1;
  o.max_bytes = INT64_C(4) << 30;
  return o;
}

static size_t count(const dc_bench_opts *o) {
  dc_bench_sweep s;
  dc_buf err = {0};
  if (!dc_bench_sweep_build(o, &s, &err))
    fail_msg("sweep failed: %s", err.data);
  size_t n = s.n;
  dc_bench_sweep_free(&s);
  dc_buf_free(&err);
  return n;
}

/* Hand counts of the default grids (bench_kinds.c):
 * memcpy 3 directions × 2 pinned × 21 sizes (1Ki…1Gi) − 21 (d2d pinned);
 * transpose 4 × 10 × 10 × 1; tril 2 × 4 × 10 × 2 × 1; concat 4 × 4 × 5. */
static void test_default_counts(void **state) {
  (void)state;
  dc_bench_opts o = opts_for(DC_BENCH_MEMCPY);
  assert_int_equal(count(&o), 105);
  o = opts_for(DC_BENCH_TRANSPOSE);
  assert_int_equal(count(&o), 400);
  o = opts_for(DC_BENCH_TRIL);
  assert_int_equal(count(&o), 160);
  o = opts_for(DC_BENCH_CONCAT);
  assert_int_equal(count(&o), 80);
}

static void test_memcpy_has_no_pinned_d2d(void **state) {
  (void)state;
  dc_bench_opts o = opts_for(DC_BENCH_MEMCPY);
  dc_bench_sweep s;
  dc_buf err = {0};
  assert_true(dc_bench_sweep_build(&o, &s, &err));
  size_t d2d = 0;
  for (size_t i = 0; i < s.n; i++) {
    const int64_t *v = dc_bench_sweep_at(&s, i);
    if (v[DC_MEMCPY_DIRECTION] == DC_BENCH_D2D) {
      d2d++;
      assert_int_equal(v[DC_MEMCPY_PINNED], 0);
    }
  }
  assert_int_equal(d2d, 21);
  /* Grid order: the last dimension varies fastest. */
  assert_int_equal(dc_bench_sweep_at(&s, 0)[DC_MEMCPY_BYTES], 1024);
  assert_int_equal(dc_bench_sweep_at(&s, 1)[DC_MEMCPY_BYTES], 2048);
  assert_int_equal(dc_bench_sweep_at(&s, 20)[DC_MEMCPY_BYTES],
                   INT64_C(1) << 30);
  assert_int_equal(dc_bench_sweep_at(&s, 21)[DC_MEMCPY_PINNED], 1);
  dc_bench_sweep_free(&s);
  dc_buf_free(&err);
}

/* DLRM_default's tables: 8 × 1,000,000 × 64 fp32 = 2.048 GB of weights
 * fit under 4 GiB; 8 × 10,000,000 × 64 (20.48 GB) do not. */
static void test_embedding_memory_cap(void **state) {
  (void)state;
  dc_bench_opts o = opts_for(DC_BENCH_EMBEDDING);
  dc_bench_sweep s;
  dc_buf err = {0};
  assert_true(dc_bench_sweep_build(&o, &s, &err));
  assert_true(s.n > 0 && s.n < 2400);
  bool small = false, big = false;
  for (size_t i = 0; i < s.n; i++) {
    const int64_t *v = dc_bench_sweep_at(&s, i);
    int64_t bytes;
    assert_true(dc_bench_footprint(DC_BENCH_EMBEDDING, v, &bytes));
    assert_true(bytes <= o.max_bytes);
    if (v[DC_EMB_ROWS] == 1000000 && v[DC_EMB_TABLES] == 8 &&
        v[DC_EMB_DIM] == 64 && v[DC_EMB_POOLING] == 100 &&
        v[DC_EMB_BATCH] == 2048)
      small = true;
    if (v[DC_EMB_ROWS] == 10000000 && v[DC_EMB_TABLES] == 8 &&
        v[DC_EMB_DIM] == 64)
      big = true;
  }
  assert_true(small);
  assert_false(big);
  dc_bench_sweep_free(&s);
  dc_buf_free(&err);
}

/* Footprints worked by hand. gemm fp16 batch 2, m 3, n 5, k 7:
 * 2 · (3·7 + 7·5 + 3·5) · 2 B = 284. tril n 4, diag 0, batch 2, fp32:
 * pairs 6; Z 2·16·4 = 128, out 2·6·4 = 48, li/lj 6·2·4 = 48 → 224. */
static void test_footprint(void **state) {
  (void)state;
  int64_t bytes;
  const int64_t g[] = {2, 3, 5, 7, DC_BENCH_OP_N, DC_BENCH_OP_T,
                       DC_BENCH_DT_FP16};
  assert_true(dc_bench_footprint(DC_BENCH_GEMM, g, &bytes));
  assert_int_equal(bytes, 284);
  const int64_t t[] = {DC_BENCH_TRIL_FWD, 2, 4, 0, DC_BENCH_DT_FP32};
  assert_true(dc_bench_footprint(DC_BENCH_TRIL, t, &bytes));
  assert_int_equal(bytes, 224);
  const int64_t huge[] = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, 0, 0,
                          0};
  assert_false(dc_bench_footprint(DC_BENCH_GEMM, huge, &bytes));
}

/* Both default sets, drawn: 2000 addmm + 1000 bmm, none shared. */
static void test_gemm_default_sample(void **state) {
  (void)state;
  dc_bench_opts o = opts_for(DC_BENCH_GEMM);
  dc_bench_sweep s, s2;
  dc_buf err = {0};
  assert_true(dc_bench_sweep_build(&o, &s, &err));
  assert_int_equal(s.n, 3000);
  for (size_t i = 0; i < s.n; i++) {
    const int64_t *v = dc_bench_sweep_at(&s, i);
    int64_t bytes;
    assert_true(dc_bench_footprint(DC_BENCH_GEMM, v, &bytes));
    assert_true(bytes <= o.max_bytes);
    assert_true(v[DC_GEMM_M] % 32 == 0 || v[DC_GEMM_M] % 32 == 8);
    if (i < 2000)
      assert_int_equal(v[DC_GEMM_BATCH], 1);
    else
      assert_true(v[DC_GEMM_BATCH] >= 512 && v[DC_GEMM_M] <= 1032);
  }
  /* Same seed, same sweep; another seed, another draw. */
  assert_true(dc_bench_sweep_build(&o, &s2, &err));
  assert_memory_equal(s.v, s2.v, s.n * 7 * sizeof(int64_t));
  dc_bench_sweep_free(&s2);
  o.seed = 2;
  assert_true(dc_bench_sweep_build(&o, &s2, &err));
  assert_int_equal(s2.n, 3000);
  assert_true(memcmp(s.v, s2.v, s.n * 7 * sizeof(int64_t)) != 0);
  dc_bench_sweep_free(&s2);
  dc_bench_sweep_free(&s);
  dc_buf_free(&err);
}

/* A draw from a small grid is a subsequence of the full grid. */
static void test_sample_keeps_grid_order(void **state) {
  (void)state;
  dc_bench_opts o = opts_for(DC_BENCH_TRANSPOSE);
  dc_bench_sweep all, some;
  dc_buf err = {0};
  assert_true(dc_bench_sweep_build(&o, &all, &err));
  o.samples = 7;
  assert_true(dc_bench_sweep_build(&o, &some, &err));
  assert_int_equal(some.n, 7);
  size_t j = 0;
  for (size_t i = 0; i < all.n && j < some.n; i++)
    if (memcmp(dc_bench_sweep_at(&all, i), dc_bench_sweep_at(&some, j),
               4 * sizeof(int64_t)) == 0)
      j++;
  assert_int_equal(j, 7);
  /* More samples than configurations: the whole grid. */
  o.samples = 100000;
  dc_bench_sweep_free(&some);
  assert_true(dc_bench_sweep_build(&o, &some, &err));
  assert_int_equal(some.n, all.n);
  dc_bench_sweep_free(&some);
  dc_bench_sweep_free(&all);
  dc_buf_free(&err);
}

/* User lists replace the dimension in both sets; the two identical
 * results collapse: 1 × 1 × 1 × 1 × 2 × 2 × 1 = 4 configurations. */
static void test_overrides_and_dedup(void **state) {
  (void)state;
  dc_bench_opts o = opts_for(DC_BENCH_GEMM);
  o.lists[DC_GEMM_BATCH] = "1";
  o.lists[DC_GEMM_M] = "64";
  o.lists[DC_GEMM_N] = "64";
  o.lists[DC_GEMM_K] = "64";
  assert_int_equal(count(&o), 4);
  o.lists[DC_GEMM_DTYPE] = "fp32,tf32,fp16,bf16";
  assert_int_equal(count(&o), 16);
}

static void test_sweep_errors(void **state) {
  (void)state;
  dc_bench_opts o = opts_for(DC_BENCH_GEMM);
  dc_bench_sweep s;
  dc_buf err = {0};
  o.samples = 0; /* the full addmm grid: 256³ × 4 */
  assert_false(dc_bench_sweep_build(&o, &s, &err));
  assert_non_null(strstr(err.data, "67108864 configurations"));
  assert_non_null(strstr(err.data, "--samples"));
  dc_buf_clear(&err);
  o = opts_for(DC_BENCH_TRIL);
  o.max_bytes = 1;
  assert_false(dc_bench_sweep_build(&o, &s, &err));
  assert_non_null(strstr(err.data, "sweep is empty"));
  dc_buf_clear(&err);
  o = opts_for(DC_BENCH_TRIL); /* n 1 without diagonal: no pair at all */
  o.lists[DC_TRIL_N] = "1";
  o.lists[DC_TRIL_DIAG] = "0";
  assert_false(dc_bench_sweep_build(&o, &s, &err));
  dc_buf_free(&err);
}

static void test_rand_is_splitmix64(void **state) {
  (void)state;
  /* Reference values of splitmix64 seeded with 0. */
  uint64_t st = 0;
  assert_int_equal(dc_splitmix64(&st), UINT64_C(0xe220a8397b1dcdaf));
  assert_int_equal(dc_splitmix64(&st), UINT64_C(0x6e789e6aa1b965f4));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lists),
      cmocka_unit_test(test_list_errors),
      cmocka_unit_test(test_paper_gemm_sizes),
      cmocka_unit_test(test_default_counts),
      cmocka_unit_test(test_memcpy_has_no_pinned_d2d),
      cmocka_unit_test(test_embedding_memory_cap),
      cmocka_unit_test(test_footprint),
      cmocka_unit_test(test_gemm_default_sample),
      cmocka_unit_test(test_sample_keeps_grid_order),
      cmocka_unit_test(test_overrides_and_dedup),
      cmocka_unit_test(test_sweep_errors),
      cmocka_unit_test(test_rand_is_splitmix64),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
