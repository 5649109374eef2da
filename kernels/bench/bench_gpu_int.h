/*
 * bench_gpu_int.h — the GPU side of dlrmc-bench, internal to kernels/bench/:
 * the CUDA C kernels (bench_kernels.cu, compiled by nvcc, hence the
 * extern "C" block and no dependency on support.h), the CUPTI timer
 * (bench_cupti.c), device facts (bench_device.c) and the per-kind
 * benchmark cases (bench_gemm.c, bench_ops.c).
 *
 * A case is one configuration made ready to run: setup allocates and
 * fills its buffers (untimed), `run` enqueues exactly one iteration on the
 * context's stream, `release` frees everything. The driver times `run`
 * with CUPTI: every kernel, memcpy and memset record an iteration
 * produces is summed.
 */
#ifndef DC_KERNELS_BENCH_BENCH_GPU_INT_H
#define DC_KERNELS_BENCH_BENCH_GPU_INT_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- kernels (bench_kernels.cu); each returns cudaGetLastError() ------ */

/* Fills `count` elements of `elem_bytes` (4: fp32, 2: fp16 with
 * `bf16` 0 or bf16 with 1) with values uniform in [-1, 1) from `seed`. */
cudaError_t bn_fill_random(void *p, int64_t count, int elem_bytes,
                           int bf16, uint64_t seed, cudaStream_t s);
/* Uniform int32 indices in [0, rows). */
cudaError_t bn_fill_indices(int32_t *p, int64_t count, int64_t rows,
                            uint64_t seed, cudaStream_t s);
/* offsets[i] = i · pooling for i in [0, count] (fixed-length bags). */
cudaError_t bn_fill_offsets(int32_t *p, int64_t count, int32_t pooling,
                            cudaStream_t s);

/* Table-batched embedding bag, sum pooling, fp32. weights: the tables'
 * rows concatenated, table t starting at row table_offsets[t]; indices of
 * (t, b) are indices[offsets[t·B + b] .. offsets[t·B + b + 1]); out and
 * grad are [B, T, D]. One warp (32 threads on D) per (t, b),
 * rows_per_block warps per block. */
cudaError_t bn_emb_fwd(const float *weights, const int64_t *table_offsets,
                       const int32_t *indices, const int32_t *offsets,
                       float *out, int32_t tables, int64_t batch,
                       int32_t dim, int32_t rows_per_block,
                       cudaStream_t s);
/* Backward with the SGD update fused: weights[row] -= lr · grad[b, t]. */
cudaError_t bn_emb_bwd_sgd(float *weights, const int64_t *table_offsets,
                           const int32_t *indices,
                           const int32_t *offsets, const float *grad,
                           float lr, int32_t tables, int64_t batch,
                           int32_t dim, int32_t rows_per_block,
                           cudaStream_t s);

/* out[b, i·dim + d] = inputs[i][b, d], fp32; `inputs` is a device array. */
cudaError_t bn_concat(const float *const *inputs, float *out,
                      int64_t batch, int32_t n_inputs, int64_t dim,
                      cudaStream_t s);

/* [batch, m, n] → [batch, n, m], elements of 2 or 4 bytes. */
cudaError_t bn_transpose(const void *in, void *out, int64_t batch,
                         int64_t m, int64_t n, int elem_bytes,
                         cudaStream_t s);

/* out[b, p] = z[b, li[p], lj[p]] for z [batch, n, n]. dtype: 0 fp32,
 * 1 fp16, 2 bf16. */
cudaError_t bn_tril_fwd(const void *z, const int32_t *li,
                        const int32_t *lj, void *out, int64_t batch,
                        int64_t n, int64_t pairs, int dtype,
                        cudaStream_t s);
/* gz[b, li[p], lj[p]] += g[b, p] (gz zeroed by the caller). */
cudaError_t bn_tril_bwd(const void *g, const int32_t *li,
                        const int32_t *lj, void *gz, int64_t batch,
                        int64_t n, int64_t pairs, int dtype,
                        cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif /* DC_KERNELS_BENCH_BENCH_GPU_INT_H */
