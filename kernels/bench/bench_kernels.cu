/*
 * bench_kernels.cu — the CUDA C kernels dlrmc-bench times besides cuBLAS:
 * the table-batched embedding bag forward and backward-with-SGD that the
 * paper's heuristic model describes (§III-B-1a: one WARP per (table,
 * sample), rows_per_block WARPs per CTA), DLRM's concat, the batched
 * transpose and the lower-triangle gather and scatter, plus the fills
 * that make their inputs. Written for clarity of memory traffic, not for
 * speed records: the point is kernels whose traffic the models can count.
 *
 * Every kernel uses 64-bit element indices and a grid-stride loop, so any
 * size the sweep allows runs with a grid that fits the launch limits.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/bench/bench_gpu_int.h"

namespace {

constexpr int kThreads = 256;

/* Blocks for a grid-stride loop over n items: enough to fill any GPU,
 * never more than the x-dimension limit. */
unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b < 1)
    b = 1;
  return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b);
}

__device__ uint64_t hash64(uint64_t x) { /* splitmix64's finaliser */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ float unit(uint64_t seed, int64_t i) { /* [-1, 1) */
  return (float)(hash64(seed ^ hash64((uint64_t)i)) >> 40) *
             (2.0f / 16777216.0f) - 1.0f;
}

template <typename T> __device__ T from_float(float x);
template <> __device__ float from_float<float>(float x) { return x; }
template <> __device__ __half from_float<__half>(float x) {
  return __float2half(x);
}
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}
__device__ float to_float(float x) { return x; }
__device__ float to_float(__half x) { return __half2float(x); }
__device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__global__ void fill_random(T *p, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    p[i] = from_float<T>(unit(seed, i));
}

__global__ void fill_indices(int32_t *p, int64_t count, int64_t rows,
                             uint64_t seed) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    p[i] = (int32_t)(hash64(seed ^ hash64((uint64_t)i)) % (uint64_t)rows);
}

__global__ void fill_offsets(int32_t *p, int64_t count, int32_t pooling) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
       i <= count; i += (int64_t)gridDim.x * blockDim.x)
    p[i] = (int32_t)(i * pooling);
}

/* Forward: the WARP (threadIdx.y) of sample b of table t sums the rows its
 * indices name, 32 columns at a time. Per WARP it reads the table offset,
 * two bag offsets, L indices and L rows, and writes one row: the traffic
 * of the paper's model. */
__global__ void emb_fwd(const float *__restrict__ w,
                        const int64_t *__restrict__ table_offsets,
                        const int32_t *__restrict__ indices,
                        const int32_t *__restrict__ offsets,
                        float *__restrict__ out, int32_t tables,
                        int64_t batch, int32_t dim) {
  int64_t b = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
  int32_t t = (int32_t)blockIdx.y;
  if (b >= batch)
    return;
  int64_t bag = (int64_t)t * batch + b;
  int32_t start = offsets[bag], end = offsets[bag + 1];
  const float *wt = w + table_offsets[t] * (int64_t)dim;
  float *o = out + (b * tables + t) * (int64_t)dim;
  for (int32_t d = (int32_t)threadIdx.x; d < dim; d += 32) {
    float acc = 0.0f;
    for (int32_t l = start; l < end; l++)
      acc += wt[(int64_t)indices[l] * dim + d];
    o[d] = acc;
  }
}

/* Backward with fused SGD: each looked-up row gets −lr · grad of its bag.
 * Atomic adds keep repeated indices (across bags) exact. */
__global__ void emb_bwd_sgd(float *__restrict__ w,
                            const int64_t *__restrict__ table_offsets,
                            const int32_t *__restrict__ indices,
                            const int32_t *__restrict__ offsets,
                            const float *__restrict__ grad, float lr,
                            int32_t tables, int64_t batch, int32_t dim) {
  int64_t b = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
  int32_t t = (int32_t)blockIdx.y;
  if (b >= batch)
    return;
  int64_t bag = (int64_t)t * batch + b;
  int32_t start = offsets[bag], end = offsets[bag + 1];
  float *wt = w + table_offsets[t] * (int64_t)dim;
  const float *g = grad + (b * tables + t) * (int64_t)dim;
  for (int32_t d = (int32_t)threadIdx.x; d < dim; d += 32) {
    float step = -lr * g[d];
    for (int32_t l = start; l < end; l++)
      atomicAdd(&wt[(int64_t)indices[l] * dim + d], step);
  }
}

__global__ void concat(const float *const *__restrict__ inputs,
                       float *__restrict__ out, int64_t batch,
                       int32_t n_inputs, int64_t dim) {
  int64_t row = (int64_t)n_inputs * dim;
  int64_t total = batch * row;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t b = i / row, c = i - b * row;
    int64_t in = c / dim, d = c - in * dim;
    out[i] = inputs[in][b * dim + d];
  }
}

/* Classic tiled transpose: a 32 × 32 tile is read with coalesced rows into
 * shared memory (padded against bank conflicts) and written back with
 * coalesced rows of the transposed matrix. Tiles are enumerated with
 * grid-stride loops over (tile column, tile row, matrix). */
template <typename T>
__global__ void transpose(const T *__restrict__ in, T *__restrict__ out,
                          int64_t batch, int64_t m, int64_t n) {
  __shared__ T tile[32][33];
  int64_t tiles_n = (n + 31) / 32, tiles_m = (m + 31) / 32;
  for (int64_t z = blockIdx.z; z < batch; z += gridDim.z)
    for (int64_t ty = blockIdx.y; ty < tiles_m; ty += gridDim.y)
      for (int64_t tx = blockIdx.x; tx < tiles_n; tx += gridDim.x) {
        const T *src = in + z * m * n;
        T *dst = out + z * m * n;
        int64_t col = tx * 32 + threadIdx.x;
        for (int r = threadIdx.y; r < 32; r += blockDim.y) {
          int64_t row = ty * 32 + r;
          if (row < m && col < n)
            tile[r][threadIdx.x] = src[row * n + col];
        }
        __syncthreads();
        int64_t ocol = ty * 32 + threadIdx.x; /* a column of out = row of in */
        for (int r = threadIdx.y; r < 32; r += blockDim.y) {
          int64_t orow = tx * 32 + r;
          if (orow < n && ocol < m)
            dst[orow * m + ocol] = tile[threadIdx.x][r];
        }
        __syncthreads();
      }
}

template <typename T>
__global__ void tril_fwd(const T *__restrict__ z,
                         const int32_t *__restrict__ li,
                         const int32_t *__restrict__ lj, T *__restrict__ out,
                         int64_t batch, int64_t n, int64_t pairs) {
  int64_t total = batch * pairs;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t b = i / pairs, p = i - b * pairs;
    out[i] = z[(b * n + li[p]) * n + lj[p]];
  }
}

template <typename T>
__global__ void tril_bwd(const T *__restrict__ g,
                         const int32_t *__restrict__ li,
                         const int32_t *__restrict__ lj, T *__restrict__ gz,
                         int64_t batch, int64_t n, int64_t pairs) {
  int64_t total = batch * pairs;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t b = i / pairs, p = i - b * pairs;
    T *dst = &gz[(b * n + li[p]) * n + lj[p]];
    /* The pairs are distinct, so no two threads add to one element. */
    *dst = from_float<T>(to_float(*dst) + to_float(g[i]));
  }
}

} // namespace

extern "C" cudaError_t bn_fill_random(void *p, int64_t count,
                                      int elem_bytes, int bf16,
                                      uint64_t seed, cudaStream_t s) {
  unsigned blocks = blocks_for(count);
  if (elem_bytes == 4)
    fill_random<<<blocks, kThreads, 0, s>>>((float *)p, count, seed);
  else if (bf16)
    fill_random<<<blocks, kThreads, 0, s>>>((__nv_bfloat16 *)p, count, seed);
  else
    fill_random<<<blocks, kThreads, 0, s>>>((__half *)p, count, seed);
  return cudaGetLastError();
}

extern "C" cudaError_t bn_fill_indices(int32_t *p, int64_t count,
                                       int64_t rows, uint64_t seed,
                                       cudaStream_t s) {
  fill_indices<<<blocks_for(count), kThreads, 0, s>>>(p, count, rows, seed);
  return cudaGetLastError();
}

extern "C" cudaError_t bn_fill_offsets(int32_t *p, int64_t count,
                                       int32_t pooling,
                                       cudaStream_t s) {
  fill_offsets<<<blocks_for(count + 1), kThreads, 0, s>>>(p, count, pooling);
  return cudaGetLastError();
}

extern "C" cudaError_t bn_emb_fwd(const float *weights,
                                  const int64_t *table_offsets,
                                  const int32_t *indices,
                                  const int32_t *offsets, float *out,
                                  int32_t tables, int64_t batch,
                                  int32_t dim, int32_t rows_per_block,
                                  cudaStream_t s) {
  dim3 block(32, (unsigned)rows_per_block);
  dim3 grid((unsigned)((batch + rows_per_block - 1) / rows_per_block),
            (unsigned)tables);
  emb_fwd<<<grid, block, 0, s>>>(weights, table_offsets, indices, offsets,
                                 out, tables, batch, dim);
  return cudaGetLastError();
}

extern "C" cudaError_t bn_emb_bwd_sgd(
    float *weights, const int64_t *table_offsets, const int32_t *indices,
    const int32_t *offsets, const float *grad, float lr, int32_t tables,
    int64_t batch, int32_t dim, int32_t rows_per_block, cudaStream_t s) {
  dim3 block(32, (unsigned)rows_per_block);
  dim3 grid((unsigned)((batch + rows_per_block - 1) / rows_per_block),
            (unsigned)tables);
  emb_bwd_sgd<<<grid, block, 0, s>>>(weights, table_offsets, indices,
                                     offsets, grad, lr, tables, batch, dim);
  return cudaGetLastError();
}

extern "C" cudaError_t bn_concat(const float *const *inputs, float *out,
                                 int64_t batch, int32_t n_inputs,
                                 int64_t dim, cudaStream_t s) {
  concat<<<blocks_for(batch * n_inputs * dim), kThreads, 0, s>>>(
      inputs, out, batch, n_inputs, dim);
  return cudaGetLastError();
}

extern "C" cudaError_t bn_transpose(const void *in, void *out,
                                    int64_t batch, int64_t m, int64_t n,
                                    int elem_bytes, cudaStream_t s) {
  int64_t tx = (n + 31) / 32, ty = (m + 31) / 32;
  dim3 grid((unsigned)(tx < 65535 ? tx : 65535),
            (unsigned)(ty < 65535 ? ty : 65535),
            (unsigned)(batch < 65535 ? batch : 65535));
  dim3 block(32, 8);
  if (elem_bytes == 4)
    transpose<<<grid, block, 0, s>>>((const uint32_t *)in, (uint32_t *)out,
                                     batch, m, n);
  else
    transpose<<<grid, block, 0, s>>>((const uint16_t *)in, (uint16_t *)out,
                                     batch, m, n);
  return cudaGetLastError();
}

/* Calls f with a value of the element type that `dtype` names (0 fp32,
 * 1 fp16, 2 bf16): one dispatch for every kernel templated on it. */
template <typename F> static cudaError_t by_dtype(int dtype, F f) {
  if (dtype == 0)
    f(float{});
  else if (dtype == 1)
    f(__half{});
  else
    f(__nv_bfloat16{});
  return cudaGetLastError();
}

extern "C" cudaError_t bn_tril_fwd(const void *z, const int32_t *li,
                                   const int32_t *lj, void *out,
                                   int64_t batch, int64_t n,
                                   int64_t pairs, int dtype,
                                   cudaStream_t s) {
  unsigned blocks = blocks_for(batch * pairs);
  return by_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    tril_fwd<<<blocks, kThreads, 0, s>>>((const T *)z, li, lj, (T *)out,
                                         batch, n, pairs);
  });
}

extern "C" cudaError_t bn_tril_bwd(const void *g, const int32_t *li,
                                   const int32_t *lj, void *gz,
                                   int64_t batch, int64_t n,
                                   int64_t pairs, int dtype,
                                   cudaStream_t s) {
  unsigned blocks = blocks_for(batch * pairs);
  return by_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    tril_bwd<<<blocks, kThreads, 0, s>>>((const T *)g, li, lj, (T *)gz,
                                         batch, n, pairs);
  });
}
