/*
 * bench_stats.c — the two statistics dlrmc-bench reports per configuration
 * over its measured iterations (the paper's protocol: 5 warm-up, 30
 * measured): the median, robust to the odd iteration disturbed by the
 * host or a clock change, which is the time_us column `dlrmc fit` learns
 * from; and the mean, kept beside it so that a skewed distribution shows.
 */
#include <stdlib.h>

#include "kernels/bench/bench.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double dc_bench_median(double *x, size_t n) {
  DC_ASSERT(n > 0);
  qsort(x, n, sizeof *x, cmp_double);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

double dc_bench_mean(const double *x, size_t n) {
  DC_ASSERT(n > 0);
  double s = 0;
  for (size_t i = 0; i < n; i++)
    s += x[i];
  return s / (double)n;
}
