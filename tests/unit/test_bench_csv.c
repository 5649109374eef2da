/*
 * test_bench_csv.c — what dlrmc-bench writes (kernels/bench/bench_csv.c,
 * bench_stats.c): the header comment and row bytes, compared exactly,
 * since `dlrmc fit` parses them; the atomic file write; and the median
 * and mean, checked against values worked by hand.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/bench/bench.h"

static void test_header(void **state) {
  (void)state;
  dc_bench_meta m = {0};
  m.device = "NVIDIA H200";
  m.cc_major = 9;
  m.cc_minor = 0;
  m.sms = 132;
  m.memory_bytes = INT64_C(150754820096); /* 143771 MiB */
  m.sm_clock_mhz = 1980;
  m.mem_clock_mhz = 3201;
  m.driver_version = 13000;
  m.runtime_version = 13000;
  m.cublas_version = 130001;
  m.warmup = 5;
  m.iters = 30;
  m.command = "dlrmc-bench gemm --m 64";
  dc_buf out = {0};
  dc_bench_csv_header(&out, dc_bench_kind_find("gemm"), &m);
  assert_string_equal(
      out.data,
      "# dlrmc-bench " DC_BENCH_VERSION ": gemm\n"
      "# device: NVIDIA H200 (sm_90, 132 SMs, 143771 MiB)\n"
      "# clocks: sm 1980 MHz, memory 3201 MHz (peak, as CUDA reports "
      "them)\n"
      "# versions: driver 13.0, runtime 13.0, cublas 13.0.1\n"
      "# protocol: 5 warm-up + 30 measured iterations per configuration; "
      "CUPTI activity records (kernel, memcpy, memset) summed per "
      "iteration; time_us = median, mean_us = mean, in microseconds\n"
      "# command: dlrmc-bench gemm --m 64\n"
      "batch,m,n,k,transa,transb,dtype,time_us,mean_us\n");
  dc_buf_free(&out);
}

static void test_header_list_mode(void **state) {
  (void)state;
  dc_bench_meta m = {0};
  m.device = "none";
  m.warmup = 1;
  m.iters = 2;
  dc_buf out = {0};
  dc_bench_csv_header(&out, dc_bench_kind_find("memcpy"), &m);
  assert_string_equal(
      out.data,
      "# dlrmc-bench " DC_BENCH_VERSION ": memcpy\n"
      "# device: none\n"
      "# protocol: 1 warm-up + 2 measured iterations per configuration; "
      "CUPTI activity records (kernel, memcpy, memset) summed per "
      "iteration; time_us = median, mean_us = mean, in microseconds\n"
      "direction,pinned,bytes,time_us,mean_us\n");
  dc_buf_free(&out);
}

/* The columns of each kind as `dlrmc fit` reads them. */
static void test_rows(void **state) {
  (void)state;
  dc_buf out = {0};
  const int64_t g[] = {1, 4104, 40, 32, DC_BENCH_OP_T, DC_BENCH_OP_N,
                       DC_BENCH_DT_BF16};
  dc_bench_csv_row(&out, dc_bench_kind_find("gemm"), g, 12.3456, 12.5);
  const int64_t e[] = {DC_BENCH_DIR_BWD, 2048, 1000000, 8, 100, 64};
  dc_bench_csv_row(&out, dc_bench_kind_find("embedding"), e, 1500.0, 1501.25);
  /* concat bytes = 512 · 9 · 64 · 4 = 1179648 */
  const int64_t c[] = {512, 9, 64};
  dc_bench_csv_row(&out, dc_bench_kind_find("concat"), c, 3.0004, 3.0006);
  const int64_t mc[] = {DC_BENCH_D2H, 1, 1024};
  dc_bench_csv_row(&out, dc_bench_kind_find("memcpy"), mc, 1.5, 1.75);
  const int64_t t[] = {4096, 27, 128, DC_BENCH_DT_FP16};
  dc_bench_csv_row(&out, dc_bench_kind_find("transpose"), t, 20, 21);
  const int64_t tr[] = {DC_BENCH_TRIL_BWD, 512, 27, 1, DC_BENCH_DT_FP32};
  dc_bench_csv_row(&out, dc_bench_kind_find("tril"), tr, 7.25, 7.5);
  dc_bench_csv_row(&out, dc_bench_kind_find("tril"), tr, -1, -1);
  assert_string_equal(out.data,
                      "1,4104,40,32,T,N,bf16,12.346,12.500\n"
                      "bwd,2048,1000000,8,100,64,1500.000,1501.250\n"
                      "512,9,64,1179648,3.000,3.001\n"
                      "d2h,1,1024,1.500,1.750\n"
                      "4096,27,128,fp16,20.000,21.000\n"
                      "tril_bwd,512,27,27,1,fp32,7.250,7.500\n"
                      "tril_bwd,512,27,27,1,fp32,,\n");
  dc_buf_free(&out);
}

static void test_columns_match_rows(void **state) {
  (void)state;
  /* The header has as many fields as a row: dims (+ derived) + 2. */
  assert_string_equal(dc_bench_kind_find("tril")->columns,
                      "kind,batch,m,n,diag,dtype,time_us,mean_us");
  assert_string_equal(dc_bench_kind_find("concat")->columns,
                      "batch,inputs,dim,bytes,time_us,mean_us");
  assert_string_equal(dc_bench_kind_find("embedding")->columns,
                      "direction,batch,rows,tables,pooling,dim,time_us,"
                      "mean_us");
  assert_string_equal(dc_bench_kind_find("transpose")->columns,
                      "batch,m,n,dtype,time_us,mean_us");
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.')
      n++;
  closedir(d);
  return n;
}

static void test_write_atomic(void **state) {
  (void)state;
  char dir[] = "/tmp/dc_bench_csv_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256], missing[256];
  snprintf(path, sizeof path, "%s/out.csv", dir);
  snprintf(missing, sizeof missing, "%s/no/such/dir/out.csv", dir);
  mode_t old = umask(022);
  dc_buf err = {0};
  assert_true(dc_file_write_atomic(path, "a,b\n1,2\n", 8, &err));
  assert_string_equal(slurp(path), "a,b\n1,2\n");
  /* Replacing keeps one file, no temporary left behind. */
  assert_true(dc_file_write_atomic(path, "x\n", 2, &err));
  assert_string_equal(slurp(path), "x\n");
  assert_int_equal(count_entries(dir), 1);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0644);
  assert_false(dc_file_write_atomic(missing, "x\n", 2, &err));
  assert_non_null(strstr(err.data, "no/such/dir/out.csv"));
  assert_int_equal(count_entries(dir), 1);
  umask(old);
  unlink(path);
  rmdir(dir);
  dc_buf_free(&err);
}

static void test_stats(void **state) {
  (void)state;
  double odd[] = {3, 1, 2};
  assert_true(dc_bench_median(odd, 3) == 2.0);
  double even[] = {4, 1, 3, 2};
  assert_true(dc_bench_mean(even, 4) == 2.5);
  assert_true(dc_bench_median(even, 4) == 2.5);
  double one[] = {7.25};
  assert_true(dc_bench_median(one, 1) == 7.25);
  /* A slow outlier moves the mean, not the median: 30 × 10 µs + 1 ×
   * 320 µs → median 10, mean (300 + 320) / 31 = 20. */
  double x[31];
  for (int i = 0; i < 30; i++)
    x[i] = 10;
  x[30] = 320;
  assert_true(dc_bench_mean(x, 31) == 20.0);
  assert_true(dc_bench_median(x, 31) == 10.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_header),      cmocka_unit_test(test_header_list_mode),
      cmocka_unit_test(test_rows),        cmocka_unit_test(test_columns_match_rows),
      cmocka_unit_test(test_write_atomic), cmocka_unit_test(test_stats),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
