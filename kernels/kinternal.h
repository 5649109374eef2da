/*
 * kinternal.h — functions shared between the files of kernels/ and not
 * part of its contract (kernels/kernels.h is the contract).
 */
#ifndef DC_KINTERNAL_H
#define DC_KINTERNAL_H

#include "kernels/kernels.h"

/* Achievable DRAM bandwidth (GB/s) and fp32 rate (flops per µs). */
static inline double dc_k_dram_gbps(const dc_device *dev) {
  return dev->dram_gbps * dev->dram_eff;
}
static inline double dc_k_fp32_flops_per_us(const dc_device *dev) {
  return dev->fp32_tflops * dev->fp32_eff * 1e6;
}
double dc_k_elementwise_us(const dc_kernel *k, const dc_device *dev);
double dc_k_copy_us(const dc_kernel *k, const dc_device *dev);
double dc_k_matrix_us(const dc_kernel *k, const dc_device *dev);
/* Achievable math rate of a dtype (tensor cores for tf32/fp16/bf16 where
 * the GPU has them, else SIMT fp32), flops per µs. */
double dc_k_math_flops_per_us(const dc_device *dev, dc_dtype t);
double dc_k_interaction_us(const dc_kernel *k, const dc_device *dev);
double dc_k_collective_us(const dc_kernel *k, const dc_device *dev);

/* A deterministic generator (splitmix64) for splits and initialisation. */
uint64_t dc_k_rand_next(uint64_t *state);
double dc_k_rand_uniform(uint64_t *state); /* [0, 1) */

#endif /* DC_KINTERNAL_H */
