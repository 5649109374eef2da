/*
 * bench_device.c — what the CSV header records about the GPU (name,
 * compute capability, SMs, memory, peak clocks, driver, runtime and cuBLAS
 * versions) and the device count behind `dlrmc-bench devices`, whose exit
 * status 77 lets ctest skip the GPU smoke test on machines without one.
 *
 * CUDA 13 removed cudaDeviceProp.clockRate and memoryClockRate; the
 * clocks come from cudaDeviceGetAttribute (kHz) instead.
 */
#include "kernels/bench/bench_run_int.h"

int bn_device_count(dc_buf *why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    dc_buf_printf(why, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
    return 0;
  }
  if (n == 0)
    dc_buf_puts(why, "cudaGetDeviceCount: no CUDA device");
  return n;
}

bool bn_device_meta(int device, dc_bench_meta *m, dc_buf *name,
                    dc_buf *err) {
  struct cudaDeviceProp p;
  cudaError_t e = cudaGetDeviceProperties(&p, device);
  if (e != cudaSuccess) {
    dc_buf_printf(err, "device %d: %s", device, cudaGetErrorString(e));
    return false;
  }
  dc_buf_puts(name, p.name);
  m->device = name->data;
  m->cc_major = p.major;
  m->cc_minor = p.minor;
  m->sms = p.multiProcessorCount;
  m->memory_bytes = (int64_t)p.totalGlobalMem;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) ==
      cudaSuccess)
    m->sm_clock_mhz = khz / 1000;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) ==
      cudaSuccess)
    m->mem_clock_mhz = khz / 1000;
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess)
    m->driver_version = v;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess)
    m->runtime_version = v;
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    m->cublas_version = major * 10000 + minor * 100 + patch;
  return true;
}
