/*
 * kernels_int.h — functions shared between the files of kernels/ and not
 * part of its contract (kernels/kernels.h is the contract).
 */
#ifndef DC_KERNELS_KERNELS_INT_H
#define DC_KERNELS_KERNELS_INT_H

#include "kernels/kernels.h"

/* Achievable DRAM bandwidth (GB/s) and fp32 rate (flops per µs). */
static inline double km_dram_gbps(const dc_device *dev) {
  return dev->dram_gbps * dev->dram_eff;
}
static inline double km_fp32_flops_per_us(const dc_device *dev) {
  return dev->fp32_tflops * dev->fp32_eff * 1e6;
}
double km_elementwise_us(const dc_kernel *k, const dc_device *dev);
double km_copy_us(const dc_kernel *k, const dc_device *dev);
double km_matrix_us(const dc_kernel *k, const dc_device *dev);
/* Achievable math rate of a dtype (tensor cores for tf32/fp16/bf16 where
 * the GPU has them, else SIMT fp32), flops per µs. */
double km_math_flops_per_us(const dc_device *dev, dc_dtype t);
/* The fraction of the math rate a GEMM keeps with its operands' alignment
 * (1 when m, n and k are multiples of 16 bytes of its dtype). */
double km_gemm_align_factor(const dc_kernel *k, const dc_device *dev);
/* The datasheet peak of those units at the boost clock (no achievable
 * factor, no power cap): the FLOP bound of kernels/bounds.c. */
double km_math_peak_flops_per_us(const dc_device *dev, dc_dtype t);
/* DRAM bytes of a GEMM that reads A and B and writes C once, s bytes per
 * element: the analytic model's traffic without split-K and the DRAM
 * bound's compulsory bytes. */
static inline double km_gemm_bytes(int64_t m, int64_t n, int64_t k,
                                   int64_t batch, double s) {
  double dm = (double)m, dn = (double)n, dk = (double)k, db = (double)batch;
  return (dm * dk + dk * dn) * s * db + dm * dn * s * db;
}
/* The time of cuBLAS's split-K reduction kernel after a GEMM split
 * `split` ways (0 when split ≤ 1): kernels/gemm.c, spec/accuracy.md. */
double km_gemm_reduce_us(const dc_device *dev, int64_t m, int64_t n,
                         int64_t batch, dc_dtype t, int64_t split);
/* Elements below the diagonal (and on it when `diag`) of an m×n matrix. */
double km_tril_elems(int64_t m, int64_t n, bool diag);
/* DRAM bytes of transpose and tril_fwd/_bwd (the memory roofline's). */
double km_matrix_bytes(const dc_kernel *k);
/* Flops and DRAM bytes of the fused interaction kernels. */
void km_interaction_work(const dc_kernel *k, double *flops, double *bytes);
/* Flops per looked-up element of an embedding lookup: the forward's add,
 * the backward's two, plus the fused optimizer's update. */
double km_emb_flops_per_elem(const dc_kernel *k);
/* A collective's traffic as the ring model sees it: the bytes each rank
 * moves, over which link (datasheet GB/s per direction, before the
 * achievable factor), in how many steps of what latency. */
typedef struct km_coll_path {
  double moved_bytes, link_gbps, steps, step_us;
} km_coll_path;
void km_collective_path(const dc_kernel *k, const dc_device *dev,
                        km_coll_path *p);
double km_interaction_us(const dc_kernel *k, const dc_device *dev);
double km_collective_us(const dc_kernel *k, const dc_device *dev);

/* Whether t µs is clear of k's physical floor (kernels/bounds.c) with a
 * margin: no division, so dc_kernel_time can ask it of every price. False
 * for NaN. */
bool km_floor_check(const dc_kernel *k, const dc_device *dev, double t);

/* A uniform draw in [0, 1) from dc_splitmix64, for splits and
 * initialisation. */
double km_rand_uniform(uint64_t *state);

#endif /* DC_KERNELS_KERNELS_INT_H */
