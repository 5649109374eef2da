/*
 * bench_status.c — CUDA and cuBLAS status codes turned into the driver's
 * error text (bench_run_int.h): every case file (bench_gemm.c, bench_ops.c)
 * and the driver check their calls with these, so they live below all of
 * them. A failed allocation also sets *oom: the driver skips such a
 * configuration instead of stopping.
 */
#include "kernels/bench/bench_run_int.h"

bool bn_cuda_ok(cudaError_t e, const char *what, bool *oom,
                dc_buf *err) {
  if (e == cudaSuccess)
    return true;
  if (e == cudaErrorMemoryAllocation && oom)
    *oom = true;
  (void)cudaGetLastError(); /* clear a sticky launch error, if any */
  dc_buf_printf(err, "%s: %s", what, cudaGetErrorString(e));
  return false;
}

bool bn_cublas_ok(cublasStatus_t s, const char *what, dc_buf *err) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return true;
  dc_buf_printf(err, "%s: %s", what, cublasGetStatusString(s));
  return false;
}
