/*
 * bench_gemm.c — the GEMM case: C = op(A)·op(B) through cuBLAS, the call
 * every PyTorch addmm, mm, bmm and their backwards end in (the paper
 * §III-B shares one GEMM model between all of them).
 *
 * cuBLAS is column-major: A is m×k (k×m when transposed) with leading
 * dimension m (k), B is k×n (n×k) with leading dimension k (n), C is m×n
 * with leading dimension m. batch 1 is cublasSgemm for fp32 and
 * cublasGemmEx otherwise; batch > 1 is cublasGemmStridedBatchedEx over
 * contiguous matrices. Math: fp32 → CUBLAS_COMPUTE_32F (SIMT, PyTorch's
 * default since allow_tf32 became False for matmul), tf32 → fp32 data with
 * CUBLAS_COMPUTE_32F_FAST_TF32, fp16/bf16 → half-width data accumulated
 * in fp32 (CUBLAS_COMPUTE_32F), as torch.matmul does under autocast.
 */
#include <stdlib.h>

#include "kernels/bench/bench_run_int.h"

typedef struct gemm_state {
  void *a, *b, *c;
  int m, n, k, batch, lda, ldb, ldc;
  cublasOperation_t opa, opb;
  cudaDataType_t type;
  cublasComputeType_t compute;
  bool sgemm;
} gemm_state;

static void gemm_release(void *p) {
  gemm_state *g = p;
  cudaFree(g->a);
  cudaFree(g->b);
  cudaFree(g->c);
  free(g);
}

static bool gemm_run(void *p, const bn_ctx *ctx, dc_buf *err) {
  const gemm_state *g = p;
  const float alpha = 1.0f, beta = 0.0f;
  cublasStatus_t s;
  if (g->sgemm)
    s = cublasSgemm(ctx->cublas, g->opa, g->opb, g->m, g->n, g->k, &alpha,
                    g->a, g->lda, g->b, g->ldb, &beta, g->c, g->ldc);
  else if (g->batch == 1)
    s = cublasGemmEx(ctx->cublas, g->opa, g->opb, g->m, g->n, g->k, &alpha,
                     g->a, g->type, g->lda, g->b, g->type, g->ldb, &beta,
                     g->c, g->type, g->ldc, g->compute, CUBLAS_GEMM_DEFAULT);
  else
    s = cublasGemmStridedBatchedEx(
        ctx->cublas, g->opa, g->opb, g->m, g->n, g->k, &alpha, g->a, g->type,
        g->lda, (long long)g->m * g->k, g->b, g->type, g->ldb,
        (long long)g->k * g->n, &beta, g->c, g->type, g->ldc,
        (long long)g->m * g->n, g->batch, g->compute, CUBLAS_GEMM_DEFAULT);
  return bn_cublas_ok(s, "cuBLAS GEMM", err);
}

bool bn_gemm_setup(const int64_t *v, const bn_ctx *ctx,
                   bn_case *c, bool *oom, dc_buf *err) {
  gemm_state *g = dc_xcalloc(1, sizeof *g);
  int64_t dtype = v[DC_GEMM_DTYPE];
  int eb = dc_bench_dtype_bytes(dtype);
  g->batch = (int)v[DC_GEMM_BATCH];
  g->m = (int)v[DC_GEMM_M];
  g->n = (int)v[DC_GEMM_N];
  g->k = (int)v[DC_GEMM_K];
  g->opa = v[DC_GEMM_TRANSA] == DC_BENCH_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
  g->opb = v[DC_GEMM_TRANSB] == DC_BENCH_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
  g->lda = g->opa == CUBLAS_OP_N ? g->m : g->k;
  g->ldb = g->opb == CUBLAS_OP_N ? g->k : g->n;
  g->ldc = g->m;
  g->type = dtype == DC_BENCH_DT_FP16   ? CUDA_R_16F
            : dtype == DC_BENCH_DT_BF16 ? CUDA_R_16BF
                                        : CUDA_R_32F;
  g->compute = dtype == DC_BENCH_DT_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                         : CUBLAS_COMPUTE_32F;
  g->sgemm = dtype == DC_BENCH_DT_FP32 && g->batch == 1;
  /* Sizes were checked by the sweep (dc_bench_footprint): no overflow. */
  int64_t na = v[DC_GEMM_BATCH] * v[DC_GEMM_M] * v[DC_GEMM_K];
  int64_t nb = v[DC_GEMM_BATCH] * v[DC_GEMM_K] * v[DC_GEMM_N];
  int64_t nc = v[DC_GEMM_BATCH] * v[DC_GEMM_M] * v[DC_GEMM_N];
  int bf16 = dtype == DC_BENCH_DT_BF16;
  bool ok =
      bn_cuda_ok(cudaMalloc(&g->a, (size_t)(na * eb)), "cudaMalloc",
                 oom, err) &&
      bn_cuda_ok(cudaMalloc(&g->b, (size_t)(nb * eb)), "cudaMalloc",
                 oom, err) &&
      bn_cuda_ok(cudaMalloc(&g->c, (size_t)(nc * eb)), "cudaMalloc",
                 oom, err) &&
      bn_cuda_ok(bn_fill_random(g->a, na, eb, bf16, ctx->seed,
                                ctx->stream),
                 "fill", oom, err) &&
      bn_cuda_ok(bn_fill_random(g->b, nb, eb, bf16,
                                ctx->seed + 1, ctx->stream),
                 "fill", oom, err);
  if (!ok) {
    gemm_release(g);
    return false;
  }
  c->state = g;
  c->run = gemm_run;
  c->release = gemm_release;
  return true;
}
