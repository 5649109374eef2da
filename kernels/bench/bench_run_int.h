/*
 * bench_run_int.h — the host side of a dlrmc-bench run, internal to
 * kernels/bench/ and C only: the CUPTI timer, device facts for the CSV
 * header, and the benchmark cases of each kind. Errors are returned as
 * false plus one message in a dc_buf, like the rest of the core.
 */
#ifndef DC_KERNELS_BENCH_BENCH_RUN_INT_H
#define DC_KERNELS_BENCH_BENCH_RUN_INT_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "kernels/bench/bench.h"
#include "kernels/bench/bench_gpu_int.h"

/* ---- CUPTI timer (bench_cupti.c) ------------------------------------------
 * Activity records of kinds CONCURRENT_KERNEL, MEMCPY and MEMSET are
 * collected process-wide. bn_timer_collect synchronises the device,
 * flushes CUPTI's buffers and returns the summed duration of every record
 * completed since the previous collect. */
bool bn_timer_start(dc_buf *err);
bool bn_timer_collect(double *sum_us, int64_t *records, dc_buf *err);
void bn_timer_stop(void);

/* ---- device (bench_device.c) ----------------------------------------------- */

/* Number of visible devices; 0 with a reason in `why` when there is none
 * or the driver is missing. */
int bn_device_count(dc_buf *why);
/* Fills the device fields of `meta` (strings live in `names`). */
bool bn_device_meta(int device, dc_bench_meta *meta, dc_buf *name,
                    dc_buf *err);

/* ---- cases (bench_gemm.c, bench_ops.c) --------------------------------------- */

typedef struct bn_ctx {
  cudaStream_t stream;
  cublasHandle_t cublas;
  uint64_t seed;
} bn_ctx;

typedef struct bn_case {
  void *state;
  bool (*run)(void *state, const bn_ctx *ctx, dc_buf *err);
  void (*release)(void *state);
} bn_case;

/* Sets up configuration `v` of `kind`. On failure returns false; *oom is
 * set when the reason was device memory, which the driver skips. */
bool bn_case_setup(dc_bench_kind kind, const int64_t *v,
                   const bn_ctx *ctx, bn_case *c,
                   bool *oom, dc_buf *err);
bool bn_gemm_setup(const int64_t *v, const bn_ctx *ctx,
                   bn_case *c, bool *oom, dc_buf *err);

/* Helpers shared by the case files and the driver (bench_status.c). */
bool bn_cuda_ok(cudaError_t e, const char *what, bool *oom,
                dc_buf *err);
bool bn_cublas_ok(cublasStatus_t s, const char *what, dc_buf *err);

#endif /* DC_KERNELS_BENCH_BENCH_RUN_INT_H */
