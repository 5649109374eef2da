/*
 * bench_ops.c — the non-GEMM cases: embedding lookup forward and backward
 * with fused SGD, concat, memcpy, batched transpose, and tril forward and
 * backward; and bn_case_setup, which picks a kind's case.
 *
 * Each setup allocates what one iteration touches and fills it on the
 * device (random values and indices from the fixed --seed), so nothing
 * in the timed iteration depends on the host. Setup kernels and copies
 * produce CUPTI records too; the driver discards them with the warm-up.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/bench/bench_run_int.h"

/* Device allocations of a case, freed together. */
#define MAX_BUFS 8
typedef struct bufs {
  void *p[MAX_BUFS];
  int n;
} bufs;

static bool dev_alloc(bufs *b, void **out, int64_t bytes, bool *oom,
                      dc_buf *err) {
  DC_ASSERT(b->n < MAX_BUFS);
  void *p = NULL;
  if (!bn_cuda_ok(cudaMalloc(&p, (size_t)(bytes > 0 ? bytes : 1)),
                  "cudaMalloc", oom, err))
    return false;
  b->p[b->n++] = p;
  *out = p;
  return true;
}

static void bufs_free(bufs *b) {
  for (int i = b->n - 1; i >= 0; i--)
    cudaFree(b->p[i]);
  b->n = 0;
}

/* ---- embedding ------------------------------------------------------------
 * rows_per_block = max(256 / D, 1) WARPs per CTA, the launch the paper's
 * L2 model assumes (owensgroup/ml_perf_model), capped at 32 WARPs (1024 threads). */

typedef struct emb_state {
  bufs b;
  float *weights, *out;
  int64_t *table_offsets;
  int32_t *indices, *offsets;
  int32_t tables, dim, rows_per_block;
  int64_t batch;
  bool backward;
} emb_state;

static void emb_release(void *p) {
  emb_state *e = p;
  bufs_free(&e->b);
  free(e);
}

static bool emb_run(void *p, const bn_ctx *ctx, dc_buf *err) {
  const emb_state *e = p;
  cudaError_t r =
      e->backward
          ? bn_emb_bwd_sgd(e->weights, e->table_offsets, e->indices,
                           e->offsets, e->out, 0.01f, e->tables,
                           e->batch, e->dim, e->rows_per_block,
                           ctx->stream)
          : bn_emb_fwd(e->weights, e->table_offsets, e->indices,
                       e->offsets, e->out, e->tables, e->batch, e->dim,
                       e->rows_per_block, ctx->stream);
  return bn_cuda_ok(r, "embedding kernel", NULL, err);
}

static bool emb_setup(const int64_t *v, const bn_ctx *ctx,
                      bn_case *c, bool *oom, dc_buf *err) {
  emb_state *e = dc_xcalloc(1, sizeof *e);
  int64_t rows = v[DC_EMB_ROWS], pooling = v[DC_EMB_POOLING];
  e->tables = (int32_t)v[DC_EMB_TABLES];
  e->batch = v[DC_EMB_BATCH];
  e->dim = (int32_t)v[DC_EMB_DIM];
  e->backward = v[DC_EMB_DIRECTION] == DC_BENCH_DIR_BWD;
  e->rows_per_block = 256 / e->dim > 1 ? 256 / e->dim : 1;
  if (e->rows_per_block > 32)
    e->rows_per_block = 32;
  /* Sizes were checked by the sweep (footprint, int32 offsets). */
  int64_t bags = e->tables * e->batch, n_idx = bags * pooling;
  int64_t *toff = dc_xmalloc((size_t)e->tables * sizeof *toff);
  for (int32_t t = 0; t < e->tables; t++)
    toff[t] = t * rows;
  bool ok =
      dev_alloc(&e->b, (void **)&e->weights,
                e->tables * rows * e->dim * 4, oom, err) &&
      dev_alloc(&e->b, (void **)&e->table_offsets, e->tables * 8, oom,
                err) &&
      dev_alloc(&e->b, (void **)&e->indices, n_idx * 4, oom, err) &&
      dev_alloc(&e->b, (void **)&e->offsets, (bags + 1) * 4, oom, err) &&
      dev_alloc(&e->b, (void **)&e->out, bags * e->dim * 4, oom, err) &&
      bn_cuda_ok(cudaMemcpy(e->table_offsets, toff,
                            (size_t)e->tables * 8,
                            cudaMemcpyHostToDevice),
                 "cudaMemcpy", oom, err) &&
      bn_cuda_ok(bn_fill_random(e->weights,
                                e->tables * rows * e->dim, 4, 0,
                                ctx->seed, ctx->stream),
                 "fill", oom, err) &&
      bn_cuda_ok(bn_fill_random(e->out, bags * e->dim, 4, 0,
                                ctx->seed + 1, ctx->stream),
                 "fill", oom, err) &&
      bn_cuda_ok(bn_fill_indices(e->indices, n_idx, rows,
                                 ctx->seed + 2, ctx->stream),
                 "fill", oom, err) &&
      bn_cuda_ok(bn_fill_offsets(e->offsets, bags,
                                 (int32_t)pooling, ctx->stream),
                 "fill", oom, err);
  free(toff);
  if (!ok) {
    emb_release(e);
    return false;
  }
  c->state = e;
  c->run = emb_run;
  c->release = emb_release;
  return true;
}

/* ---- concat ------------------------------------------------------------ */

typedef struct concat_state {
  bufs b;
  float **inputs; /* device array of device pointers */
  float **host_inputs;
  float *out;
  int64_t batch, dim;
  int32_t n_inputs;
} concat_state;

static void concat_release(void *p) {
  concat_state *s = p;
  if (s->host_inputs)
    for (int32_t i = 0; i < s->n_inputs; i++)
      cudaFree(s->host_inputs[i]);
  free(s->host_inputs);
  bufs_free(&s->b);
  free(s);
}

static bool concat_run(void *p, const bn_ctx *ctx, dc_buf *err) {
  const concat_state *s = p;
  return bn_cuda_ok(bn_concat((const float *const *)s->inputs,
                              s->out, s->batch, s->n_inputs,
                              s->dim, ctx->stream),
                    "concat kernel", NULL, err);
}

static bool concat_setup(const int64_t *v, const bn_ctx *ctx,
                         bn_case *c, bool *oom, dc_buf *err) {
  concat_state *s = dc_xcalloc(1, sizeof *s);
  s->batch = v[DC_CONCAT_BATCH];
  s->dim = v[DC_CONCAT_DIM];
  s->n_inputs = (int32_t)v[DC_CONCAT_INPUTS];
  s->host_inputs = dc_xcalloc((size_t)s->n_inputs, sizeof *s->host_inputs);
  int64_t each = s->batch * s->dim;
  bool ok = true;
  /* Separate allocations, as separate tensors are. */
  for (int32_t i = 0; i < s->n_inputs && ok; i++)
    ok = bn_cuda_ok(cudaMalloc((void **)&s->host_inputs[i],
                               (size_t)each * 4),
                    "cudaMalloc", oom, err) &&
         bn_cuda_ok(bn_fill_random(s->host_inputs[i], each, 4, 0,
                                   ctx->seed + (uint64_t)i,
                                   ctx->stream),
                    "fill", oom, err);
  ok = ok &&
       dev_alloc(&s->b, (void **)&s->inputs,
                 (int64_t)s->n_inputs * (int64_t)sizeof(float *), oom,
                 err) &&
       dev_alloc(&s->b, (void **)&s->out, each * s->n_inputs * 4, oom,
                 err) &&
       bn_cuda_ok(cudaMemcpy(s->inputs, s->host_inputs,
                             (size_t)s->n_inputs * sizeof(float *),
                             cudaMemcpyHostToDevice),
                  "cudaMemcpy", oom, err);
  if (!ok) {
    concat_release(s);
    return false;
  }
  c->state = s;
  c->run = concat_run;
  c->release = concat_release;
  return true;
}

/* ---- memcpy ------------------------------------------------------------ */

typedef struct copy_state {
  void *host, *dev, *dev2;
  bool pinned;
  int64_t bytes;
  enum cudaMemcpyKind kind;
} copy_state;

static void copy_release(void *p) {
  copy_state *s = p;
  if (s->pinned)
    cudaFreeHost(s->host);
  else
    free(s->host);
  cudaFree(s->dev);
  cudaFree(s->dev2);
  free(s);
}

static bool copy_run(void *p, const bn_ctx *ctx, dc_buf *err) {
  const copy_state *s = p;
  void *dst = s->kind == cudaMemcpyHostToDevice   ? s->dev
              : s->kind == cudaMemcpyDeviceToHost ? s->host
                                                  : s->dev2;
  const void *src = s->kind == cudaMemcpyHostToDevice ? s->host : s->dev;
  return bn_cuda_ok(cudaMemcpyAsync(dst, src, (size_t)s->bytes,
                                    s->kind, ctx->stream),
                    "cudaMemcpyAsync", NULL, err);
}

static bool copy_setup(const int64_t *v, const bn_ctx *ctx,
                       bn_case *c, bool *oom, dc_buf *err) {
  copy_state *s = dc_xcalloc(1, sizeof *s);
  s->bytes = v[DC_MEMCPY_BYTES];
  s->pinned = v[DC_MEMCPY_PINNED] != 0;
  int64_t dir = v[DC_MEMCPY_DIRECTION];
  s->kind = dir == DC_BENCH_H2D   ? cudaMemcpyHostToDevice
            : dir == DC_BENCH_D2H ? cudaMemcpyDeviceToHost
                                  : cudaMemcpyDeviceToDevice;
  bool ok = bn_cuda_ok(cudaMalloc(&s->dev, (size_t)s->bytes),
                       "cudaMalloc", oom, err);
  if (ok && dir == DC_BENCH_D2D)
    ok = bn_cuda_ok(cudaMalloc(&s->dev2, (size_t)s->bytes),
                    "cudaMalloc", oom, err);
  if (ok && dir != DC_BENCH_D2D) {
    if (s->pinned) {
      ok = bn_cuda_ok(cudaMallocHost(&s->host, (size_t)s->bytes),
                      "cudaMallocHost", oom, err);
    } else if (!(s->host = malloc((size_t)s->bytes))) {
      dc_buf_printf(err, "malloc of %lld bytes failed",
                    (long long)s->bytes);
      ok = false;
    }
    if (ok) /* touch every page: no page faults inside the timed copy */
      memset(s->host, 1, (size_t)s->bytes);
  }
  ok = ok && bn_cuda_ok(bn_fill_random(s->dev, s->bytes / 4, 4,
                                       0, ctx->seed, ctx->stream),
                        "fill", oom, err);
  if (!ok) {
    copy_release(s);
    return false;
  }
  c->state = s;
  c->run = copy_run;
  c->release = copy_release;
  return true;
}

/* ---- transpose ----------------------------------------------------------- */

typedef struct transpose_state {
  bufs b;
  void *in, *out;
  int64_t batch, m, n;
  int elem_bytes;
} transpose_state;

static void transpose_release(void *p) {
  transpose_state *s = p;
  bufs_free(&s->b);
  free(s);
}

static bool transpose_run(void *p, const bn_ctx *ctx, dc_buf *err) {
  const transpose_state *s = p;
  return bn_cuda_ok(bn_transpose(s->in, s->out, s->batch, s->m,
                                 s->n, s->elem_bytes,
                                 ctx->stream),
                    "transpose kernel", NULL, err);
}

static bool transpose_setup(const int64_t *v, const bn_ctx *ctx,
                            bn_case *c, bool *oom, dc_buf *err) {
  transpose_state *s = dc_xcalloc(1, sizeof *s);
  s->batch = v[DC_TRANSPOSE_BATCH];
  s->m = v[DC_TRANSPOSE_M];
  s->n = v[DC_TRANSPOSE_N];
  s->elem_bytes = dc_bench_dtype_bytes(v[DC_TRANSPOSE_DTYPE]);
  int64_t count = s->batch * s->m * s->n;
  bool ok = dev_alloc(&s->b, &s->in, count * s->elem_bytes, oom, err) &&
            dev_alloc(&s->b, &s->out, count * s->elem_bytes, oom, err) &&
            bn_cuda_ok(
                bn_fill_random(s->in, count, s->elem_bytes,
                               v[DC_TRANSPOSE_DTYPE] == DC_BENCH_DT_BF16,
                               ctx->seed, ctx->stream),
                "fill", oom, err);
  if (!ok) {
    transpose_release(s);
    return false;
  }
  c->state = s;
  c->run = transpose_run;
  c->release = transpose_release;
  return true;
}

/* ---- tril ------------------------------------------------------------------
 * DLRM (dlrm_s_pytorch.py, interact_features) builds li/lj row by row:
 * for i in range(n): for j in range(i + diag): (i, j). */

typedef struct tril_state {
  bufs b;
  void *z, *pairs_buf;
  int32_t *li, *lj;
  int64_t batch, n, pairs;
  int dtype, elem_bytes;
  bool backward;
} tril_state;

static void tril_release(void *p) {
  tril_state *s = p;
  bufs_free(&s->b);
  free(s);
}

static bool tril_run(void *p, const bn_ctx *ctx, dc_buf *err) {
  const tril_state *s = p;
  if (!s->backward)
    return bn_cuda_ok(bn_tril_fwd(s->z, s->li, s->lj,
                                  s->pairs_buf, s->batch, s->n,
                                  s->pairs, s->dtype,
                                  ctx->stream),
                      "tril kernel", NULL, err);
  /* IndexBackward: zeros_like(Z), then the scatter-add. */
  return bn_cuda_ok(cudaMemsetAsync(s->z, 0,
                                    (size_t)(s->batch * s->n * s->n *
                                             s->elem_bytes),
                                    ctx->stream),
                    "cudaMemsetAsync", NULL, err) &&
         bn_cuda_ok(bn_tril_bwd(s->pairs_buf, s->li, s->lj, s->z,
                                s->batch, s->n, s->pairs,
                                s->dtype, ctx->stream),
                    "tril kernel", NULL, err);
}

static bool tril_setup(const int64_t *v, const bn_ctx *ctx,
                       bn_case *c, bool *oom, dc_buf *err) {
  tril_state *s = dc_xcalloc(1, sizeof *s);
  int64_t diag = v[DC_TRIL_DIAG];
  s->batch = v[DC_TRIL_BATCH];
  s->n = v[DC_TRIL_N];
  s->pairs = s->n * (s->n - 1 + 2 * diag) / 2;
  s->backward = v[DC_TRIL_KIND] == DC_BENCH_TRIL_BWD;
  s->dtype = v[DC_TRIL_DTYPE] == DC_BENCH_DT_FP16   ? 1
             : v[DC_TRIL_DTYPE] == DC_BENCH_DT_BF16 ? 2
                                                    : 0;
  s->elem_bytes = dc_bench_dtype_bytes(v[DC_TRIL_DTYPE]);
  int32_t *hl = dc_xmalloc((size_t)s->pairs * 2 * sizeof *hl);
  int64_t p = 0;
  for (int64_t i = 0; i < s->n; i++)
    for (int64_t j = 0; j < i + diag; j++, p++) {
      hl[p] = (int32_t)i;
      hl[s->pairs + p] = (int32_t)j;
    }
  DC_ASSERT(p == s->pairs);
  int bf16 = s->dtype == 2;
  bool ok =
      dev_alloc(&s->b, &s->z, s->batch * s->n * s->n * s->elem_bytes, oom,
                err) &&
      dev_alloc(&s->b, &s->pairs_buf, s->batch * s->pairs * s->elem_bytes,
                oom, err) &&
      dev_alloc(&s->b, (void **)&s->li, s->pairs * 2 * 4, oom, err) &&
      bn_cuda_ok(cudaMemcpy(s->li, hl, (size_t)(s->pairs * 2 * 4),
                            cudaMemcpyHostToDevice),
                 "cudaMemcpy", oom, err) &&
      bn_cuda_ok(bn_fill_random(s->z, s->batch * s->n * s->n,
                                s->elem_bytes, bf16, ctx->seed,
                                ctx->stream),
                 "fill", oom, err) &&
      bn_cuda_ok(bn_fill_random(s->pairs_buf, s->batch * s->pairs,
                                s->elem_bytes, bf16,
                                ctx->seed + 1, ctx->stream),
                 "fill", oom, err);
  free(hl);
  if (!ok) {
    tril_release(s);
    return false;
  }
  s->lj = s->li + s->pairs;
  c->state = s;
  c->run = tril_run;
  c->release = tril_release;
  return true;
}

bool bn_case_setup(dc_bench_kind kind, const int64_t *v,
                   const bn_ctx *ctx, bn_case *c,
                   bool *oom, dc_buf *err) {
  *oom = false;
  switch (kind) {
  case DC_BENCH_GEMM:
    return bn_gemm_setup(v, ctx, c, oom, err);
  case DC_BENCH_EMBEDDING:
    return emb_setup(v, ctx, c, oom, err);
  case DC_BENCH_CONCAT:
    return concat_setup(v, ctx, c, oom, err);
  case DC_BENCH_MEMCPY:
    return copy_setup(v, ctx, c, oom, err);
  case DC_BENCH_TRANSPOSE:
    return transpose_setup(v, ctx, c, oom, err);
  case DC_BENCH_TRIL:
    return tril_setup(v, ctx, c, oom, err);
  case DC_BENCH_KIND_COUNT_:
    break;
  }
  DC_ASSERT(!"unknown benchmark kind");
  return false;
}
