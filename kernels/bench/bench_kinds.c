/*
 * bench_kinds.c — the table of benchmark kinds: each kind's dimensions,
 * its default shape sets, its CSV columns, its device-memory footprint and
 * its help text. One table so that the parser, the sweep generator, the
 * CSV writer and `help KIND` can never disagree about a kind.
 *
 * Default shape sets (the paper §III-B and its authors' code, see
 * owensgroup/ml_perf_model): GEMM sizes are drawn from
 * {32, 64, ..., 4096} ∪ {40, 72, ..., 4104} (multiples of 32 and those + 8),
 * batch 1 for addmm and 512...4096 for bmm. The other kinds sweep the
 * shapes DLRM produces: batch 512...4096, feature counts around the
 * paper's models (9 = 8 tables + 1, 27 = 26 tables + 1), embedding widths
 * 16...256, and byte sizes by powers of two.
 */
#include <string.h>

#include "kernels/bench/bench.h"

static const char *const trans_words[] = {"N", "T", NULL};
static const char *const dtype_words[] = {"fp32", "tf32", "fp16", "bf16",
                                          NULL};
static const char *const dir_words[] = {"fwd", "bwd", NULL};
static const char *const copy_words[] = {"h2d", "d2h", "d2d", NULL};
static const char *const tril_words[] = {"tril_fwd", "tril_bwd", NULL};

#define I64(lo, hi) NULL, (lo), (hi)
#define WORDS(w) (w), 0, 0
#define BIG (INT64_C(1) << 40)

/* The paper's GEMM size set, and the part of it bmm sweeps (the memory
 * cap --max-bytes trims the largest batched shapes further). */
#define GEMM_SIZES "32:4096:32,40:4104:32"
#define BMM_SIZES "32:1024:32,40:1032:32"
#define BATCHES "512,1024,2048,4096"

static const dc_bench_kind_info kinds[DC_BENCH_KIND_COUNT_] = {
  {DC_BENCH_GEMM, "gemm",
   "cuBLAS GEMM: SGEMM, GemmEx (tf32, fp16, bf16), strided-batched bmm",
   "Times C = op(A)·op(B) with A m×k, B k×n, C m×n (column-major, as\n"
   "cuBLAS and DeepBench label them), `batch` times. batch 1 calls\n"
   "cublasSgemm (fp32) or cublasGemmEx; batch > 1 calls\n"
   "cublasGemmStridedBatchedEx. Compute types: fp32 → CUBLAS_COMPUTE_32F,\n"
   "tf32 → CUBLAS_COMPUTE_32F_FAST_TF32 on fp32 data, fp16 and bf16 → fp16/\n"
   "bf16 data with CUBLAS_COMPUTE_32F accumulation (tensor cores).\n"
   "Default sets: addmm (batch 1, m, n, k from the paper's set\n"
   "{32, 64, ..., 4096} ∪ {40, 72, ..., 4104}, 2000 draws) and bmm (batch\n"
   "512...4096, sizes up to 1032, 1000 draws); transposes N and T; fp32.\n"
   "Feed the CSV to: dlrmc fit gemm DATA.csv -o MODEL.yaml\n",
   7,
   {{"batch", I64(1, INT32_MAX), "GEMMs per call (1: addmm; more: bmm)"},
    {"m", I64(1, INT32_MAX), "rows of op(A) and C"},
    {"n", I64(1, INT32_MAX), "columns of op(B) and C"},
    {"k", I64(1, INT32_MAX), "the reduced dimension"},
    {"transa", WORDS(trans_words), "N or T: op(A)"},
    {"transb", WORDS(trans_words), "N or T: op(B)"},
    {"dtype", WORDS(dtype_words), "fp32, tf32, fp16 or bf16"}},
   2,
   {{"addmm", {"1", GEMM_SIZES, GEMM_SIZES, GEMM_SIZES, "N,T", "N,T",
               "fp32"}, 2000},
    {"bmm", {BATCHES, BMM_SIZES, BMM_SIZES, BMM_SIZES, "N,T", "N,T",
             "fp32"}, 1000}},
   "batch,m,n,k,transa,transb,dtype,time_us,mean_us"},

  {DC_BENCH_EMBEDDING, "embedding",
   "table-batched embedding lookup: forward and backward with fused SGD",
   "Our CUDA C table-batched embedding bag (sum pooling), one warp per\n"
   "(table, sample) as in the reference kernel the paper models (Tulloch's\n"
   "table-batched embeddings): `tables` tables of `rows` × `dim` fp32\n"
   "weights concatenated, `pooling` uniformly random int32 indices per\n"
   "(table, sample) from a fixed seed, max(256/dim, 1) warps per block.\n"
   "bwd applies SGD to the looked-up rows in the kernel (atomic adds, so\n"
   "repeated indices are correct). Output [batch, tables, dim].\n",
   6,
   {{"direction", WORDS(dir_words), "fwd or bwd (with fused SGD)"},
    {"batch", I64(1, BIG), "samples B"},
    {"rows", I64(1, INT32_MAX), "rows E of each table"},
    {"tables", I64(1, 65535), "tables T"},
    {"pooling", I64(1, 1 << 20), "lookups per (table, sample) L"},
    {"dim", I64(1, 1 << 16), "embedding width D"}},
   1,
   {{"default", {"fwd,bwd", BATCHES, "1000,10000,100000,1000000,10000000",
                 "1,8,26", "1,10,32,100", "16,32,64,128,256"}, 0}},
   "direction,batch,rows,tables,pooling,dim,time_us,mean_us"},

  {DC_BENCH_CONCAT, "concat",
   "concatenation of `inputs` [batch, dim] tensors along dim 1",
   "Our CUDA C concat kernel (one thread per output element): `inputs`\n"
   "fp32 tensors of [batch, dim] into one [batch, inputs × dim], as DLRM\n"
   "joins the bottom MLP output with the pooled embeddings. The `bytes`\n"
   "column is the output size (each byte is read once and written once).\n",
   3,
   {{"batch", I64(1, BIG), "rows of every input"},
    {"inputs", I64(2, 1024), "tensors joined"},
    {"dim", I64(1, BIG), "columns of every input"}},
   1,
   {{"default", {BATCHES, "2,4,9,27", "16,32,64,128,256"}, 0}},
   "batch,inputs,dim,bytes,time_us,mean_us"},

  {DC_BENCH_MEMCPY, "memcpy",
   "cudaMemcpyAsync host↔device (pinned and pageable) and device↔device",
   "Times cudaMemcpyAsync of `bytes` bytes with CUPTI memcpy records\n"
   "(a pageable copy may be split into several records; their sum is\n"
   "the time). h2d and d2h sweep pinned 1 (cudaMallocHost) and 0\n"
   "(malloc); d2d has pinned 0 only.\n",
   3,
   {{"direction", WORDS(copy_words), "h2d, d2h or d2d"},
    {"pinned", I64(0, 1), "1: pinned host memory; 0: pageable"},
    {"bytes", I64(1, BIG), "bytes copied"}},
   1,
   {{"default", {"h2d,d2h,d2d", "0,1", "1Ki:1Gi:x2"}, 0}},
   "direction,pinned,bytes,time_us,mean_us"},

  {DC_BENCH_TRANSPOSE, "transpose",
   "batched transpose (3-D permute) [batch, m, n] → [batch, n, m]",
   "Our CUDA C tiled transpose (32 × 32 tiles through shared memory) of\n"
   "the last two axes of a contiguous 3-D tensor, the only permutation\n"
   "DLRM performs (the paper §III-B). dtype fp32, fp16 or bf16.\n"
   "Feed the CSV to: dlrmc fit transpose DATA.csv -o MODEL.yaml\n",
   4,
   {{"batch", I64(1, BIG), "matrices"},
    {"m", I64(1, BIG), "rows of each input matrix"},
    {"n", I64(1, BIG), "columns of each input matrix"},
    {"dtype", WORDS(dtype_words), "fp32, fp16 or bf16"}},
   1,
   {{"default", {BATCHES, "2,4,8,9,16,27,32,64,128,256",
                 "2,4,8,9,16,27,32,64,128,256", "fp32"}, 0}},
   "batch,m,n,dtype,time_us,mean_us"},

  {DC_BENCH_TRIL, "tril",
   "lower-triangle gather [batch, n, n] → [batch, P] and its backward",
   "DLRM's feature interaction keeps the lower triangle of Z = T·Tᵀ:\n"
   "tril_fwd gathers Z[:, li, lj] (aten::index with precomputed index\n"
   "vectors, P = n(n−1)/2 pairs, or n(n+1)/2 with diag 1); tril_bwd is\n"
   "IndexBackward: the [batch, n, n] gradient is zeroed (a memset, timed)\n"
   "and the [batch, P] gradient scatter-added into it. The matrices are\n"
   "square, so the m column always equals n. One file holds both kinds\n"
   "by default (the kind column tells them apart); for fitting, write\n"
   "one file per kind:\n"
   "  dlrmc-bench tril --kind tril_fwd -o tril_fwd.csv\n"
   "  dlrmc fit tril_fwd tril_fwd.csv -o MODEL.yaml   (same for tril_bwd)\n",
   5,
   {{"kind", WORDS(tril_words), "tril_fwd or tril_bwd"},
    {"batch", I64(1, BIG), "matrices"},
    {"n", I64(1, 1 << 16), "rows and columns of each matrix"},
    {"diag", I64(0, 1), "1: keep the diagonal"},
    {"dtype", WORDS(dtype_words), "fp32, fp16 or bf16"}},
   1,
   {{"default", {"tril_fwd,tril_bwd", BATCHES, "2,4,8,9,16,27,32,48,64,128",
                 "0,1", "fp32"}, 0}},
   "kind,batch,m,n,diag,dtype,time_us,mean_us"},
};

const dc_bench_kind_info *dc_bench_kind_get(dc_bench_kind k) {
  DC_ASSERT(k >= 0 && k < DC_BENCH_KIND_COUNT_);
  return &kinds[k];
}

const dc_bench_kind_info *dc_bench_kind_find(const char *name) {
  for (int i = 0; i < DC_BENCH_KIND_COUNT_; i++)
    if (strcmp(kinds[i].name, name) == 0)
      return &kinds[i];
  return NULL;
}

int dc_bench_dim_index(const dc_bench_kind_info *info, const char *name) {
  for (int i = 0; i < info->n_dims; i++)
    if (strcmp(info->dims[i].name, name) == 0)
      return i;
  return -1;
}

int dc_bench_dtype_bytes(int64_t dtype) {
  return dtype == DC_BENCH_DT_FP16 || dtype == DC_BENCH_DT_BF16 ? 2 : 4;
}

/* Sums products of checked factors: out = Σ a[i]·b[i]·c[i]. */
static bool sum3(int n, const int64_t (*t)[3], int64_t *out) {
  int64_t s = 0;
  for (int i = 0; i < n; i++) {
    int64_t p;
    if (!dc_mul_i64(t[i][0], t[i][1], &p) || !dc_mul_i64(p, t[i][2], &p) ||
        !dc_add_i64(s, p, &s))
      return false;
  }
  *out = s;
  return true;
}

/* Device bytes of one configuration: the buffers the GPU side allocates
 * (bench_gemm.c, bench_ops.c), not counting cuBLAS's workspace. */
bool dc_bench_footprint(dc_bench_kind k, const int64_t *v, int64_t *bytes) {
  int64_t p, q;
  switch (k) {
  case DC_BENCH_GEMM: { /* batch × (A + B + C) */
    int64_t e = dc_bench_dtype_bytes(v[DC_GEMM_DTYPE]);
    const int64_t t[3][3] = {{v[DC_GEMM_M], v[DC_GEMM_K], e},
                             {v[DC_GEMM_K], v[DC_GEMM_N], e},
                             {v[DC_GEMM_M], v[DC_GEMM_N], e}};
    return sum3(3, t, &p) && dc_mul_i64(p, v[DC_GEMM_BATCH], bytes);
  }
  case DC_BENCH_EMBEDDING: { /* weights, indices, offsets, output */
    int64_t tb, bt;
    if (!dc_mul_i64(v[DC_EMB_TABLES], v[DC_EMB_BATCH], &tb) ||
        !dc_mul_i64(v[DC_EMB_TABLES], v[DC_EMB_ROWS], &bt))
      return false;
    const int64_t t[5][3] = {{bt, v[DC_EMB_DIM], 4},
                             {tb, v[DC_EMB_POOLING], 4},
                             {tb + 1, 1, 4},
                             {tb, v[DC_EMB_DIM], 4},
                             {v[DC_EMB_TABLES], 1, 8}};
    return sum3(5, t, bytes);
  }
  case DC_BENCH_CONCAT: { /* inputs + output + the pointer array */
    const int64_t t[1][3] = {
        {v[DC_CONCAT_BATCH], v[DC_CONCAT_INPUTS], v[DC_CONCAT_DIM]}};
    if (!sum3(1, t, &p) || !dc_mul_i64(p, 2 * 4, &p) ||
        !dc_mul_i64(v[DC_CONCAT_INPUTS], 8, &q))
      return false;
    return dc_add_i64(p, q, bytes);
  }
  case DC_BENCH_MEMCPY:
    return dc_mul_i64(v[DC_MEMCPY_BYTES],
                      v[DC_MEMCPY_DIRECTION] == DC_BENCH_D2D ? 2 : 1, bytes);
  case DC_BENCH_TRANSPOSE: {
    const int64_t t[1][3] = {{v[DC_TRANSPOSE_BATCH], v[DC_TRANSPOSE_M],
                              v[DC_TRANSPOSE_N]}};
    return sum3(1, t, &p) &&
           dc_mul_i64(p, 2 * dc_bench_dtype_bytes(v[DC_TRANSPOSE_DTYPE]),
                      bytes);
  }
  case DC_BENCH_TRIL: { /* Z, the gathered pairs, and li/lj (int32) */
    int64_t n = v[DC_TRIL_N], e = dc_bench_dtype_bytes(v[DC_TRIL_DTYPE]);
    int64_t pairs = n * (n - 1 + 2 * v[DC_TRIL_DIAG]) / 2; /* n ≤ 2^16 */
    const int64_t t[3][3] = {{v[DC_TRIL_BATCH], n * n, e},
                             {v[DC_TRIL_BATCH], pairs, e},
                             {pairs, 2, 4}};
    return sum3(3, t, bytes);
  }
  case DC_BENCH_KIND_COUNT_:
    break;
  }
  DC_ASSERT(!"unknown benchmark kind");
  return false;
}

bool dc_bench_config_valid(dc_bench_kind k, const int64_t *v) {
  switch (k) {
  case DC_BENCH_MEMCPY: /* a device copy has no pageable/pinned choice */
    return !(v[DC_MEMCPY_DIRECTION] == DC_BENCH_D2D && v[DC_MEMCPY_PINNED]);
  case DC_BENCH_EMBEDDING: { /* offsets are int32, as in the kernel */
    int64_t n;
    return dc_mul_i64(v[DC_EMB_TABLES], v[DC_EMB_BATCH], &n) &&
           dc_mul_i64(n, v[DC_EMB_POOLING], &n) && n <= INT32_MAX;
  }
  case DC_BENCH_TRANSPOSE: /* tf32 is a GEMM math mode, not a storage */
    return v[DC_TRANSPOSE_DTYPE] != DC_BENCH_DT_TF32;
  case DC_BENCH_TRIL: /* no pair below the diagonal of a 1×1 matrix */
    return v[DC_TRIL_DTYPE] != DC_BENCH_DT_TF32 &&
           v[DC_TRIL_N] * (v[DC_TRIL_N] - 1 + 2 * v[DC_TRIL_DIAG]) > 0;
  default:
    return true;
  }
}
