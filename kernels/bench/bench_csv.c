/*
 * bench_csv.c — the CSV dlrmc-bench writes and `dlrmc fit` reads.
 *
 * Layout: `# ` comment lines that record what the numbers depend on (the
 * device, its clocks, the driver, runtime and cuBLAS versions, the timing
 * protocol, the command), then one header row and one row per
 * configuration. Columns are the kind's dimensions in dc_bench_kind_info
 * order (words for word dimensions: N/T as DeepBench writes them, fp32,
 * fwd, h2d, tril_fwd), then time_us (the median) and mean_us, both in µs
 * with three decimals in the C locale. Two derived columns: concat's
 * `bytes` (output bytes) and tril's `m` (= n, the matrices are square).
 *
 * The file is written whole at the end through a temporary name and a
 * rename, so an interrupted sweep never leaves a truncated CSV that a fit
 * would silently learn from.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/bench/bench.h"

static void put_cuda_version(dc_buf *out, int32_t v) {
  if (v <= 0)
    dc_buf_puts(out, "unknown");
  else
    dc_buf_printf(out, "%d.%d", (int)(v / 1000), (int)(v % 1000 / 10));
}

void dc_bench_csv_header(dc_buf *out, const dc_bench_kind_info *info,
                         const dc_bench_meta *m) {
  dc_buf_printf(out, "# dlrmc-bench %s: %s\n", DC_BENCH_VERSION, info->name);
  if (m->sms <= 0) { /* --list: no device was queried */
    dc_buf_printf(out, "# device: %s\n", m->device ? m->device : "unknown");
  } else {
    dc_buf_printf(out, "# device: %s (sm_%d%d, %d SMs, %lld MiB)\n",
                  m->device ? m->device : "unknown", (int)m->cc_major,
                  (int)m->cc_minor, (int)m->sms,
                  (long long)(m->memory_bytes >> 20));
    dc_buf_printf(out,
                  "# clocks: sm %d MHz, memory %d MHz (peak, as CUDA "
                  "reports them)\n",
                  (int)m->sm_clock_mhz, (int)m->mem_clock_mhz);
    dc_buf_puts(out, "# versions: driver ");
    put_cuda_version(out, m->driver_version);
    dc_buf_puts(out, ", runtime ");
    put_cuda_version(out, m->runtime_version);
    dc_buf_puts(out, ", cublas ");
    if (m->cublas_version <= 0)
      dc_buf_puts(out, "unknown");
    else
      dc_buf_printf(out, "%d.%d.%d", (int)(m->cublas_version / 10000),
                    (int)(m->cublas_version % 10000 / 100),
                    (int)(m->cublas_version % 100));
    dc_buf_putc(out, '\n');
  }
  dc_buf_printf(out,
                "# protocol: %d warm-up + %d measured iterations per "
                "configuration; CUPTI activity records (kernel, memcpy, "
                "memset) summed per iteration; time_us = median, mean_us "
                "= mean, in microseconds\n",
                (int)m->warmup, (int)m->iters);
  if (m->command)
    dc_buf_printf(out, "# command: %s\n", m->command);
  dc_buf_printf(out, "%s\n", info->columns);
}

static void put_value(dc_buf *out, const dc_bench_dim *dim, int64_t v) {
  if (dim->words)
    dc_buf_puts(out, dim->words[v]);
  else
    dc_buf_printf(out, "%lld", (long long)v);
}

void dc_bench_csv_row(dc_buf *out, const dc_bench_kind_info *info,
                      const int64_t *v, double median_us, double mean_us) {
  for (int d = 0; d < info->n_dims; d++) {
    if (d)
      dc_buf_putc(out, ',');
    if (info->kind == DC_BENCH_TRIL && d == DC_TRIL_N) {
      put_value(out, &info->dims[d], v[d]); /* m, then n: square */
      dc_buf_putc(out, ',');
    }
    put_value(out, &info->dims[d], v[d]);
  }
  if (info->kind == DC_BENCH_CONCAT) {
    /* No overflow: the sweep checked the footprint, twice this. */
    int64_t bytes =
        v[DC_CONCAT_BATCH] * v[DC_CONCAT_INPUTS] * v[DC_CONCAT_DIM] * 4;
    dc_buf_printf(out, ",%lld", (long long)bytes);
  }
  dc_buf_putc(out, ',');
  if (median_us >= 0)
    dc_buf_put_double(out, median_us, 3);
  dc_buf_putc(out, ',');
  if (mean_us >= 0)
    dc_buf_put_double(out, mean_us, 3);
  dc_buf_putc(out, '\n');
}
