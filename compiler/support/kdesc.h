/*
 * kdesc.h — the kernel descriptor: what a GPU kernel is, in the terms the
 * performance models need and nothing more. graphgen creates them, kernels
 * prices them, runtime schedules them. Kept in support/ because both
 * graphgen and kernels use it and neither may depend on the other.
 *
 * Sizes are 64-bit element or byte counts. Arrays a descriptor points to
 * (per-table embedding parameters) live in the graph's arena.
 */
#ifndef DC_KDESC_H
#define DC_KDESC_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/support/point.h"

typedef enum dc_dtype {
  DC_DTYPE_FP32,
  DC_DTYPE_TF32, /* fp32 storage, tf32 tensor-core math (GEMMs only) */
  DC_DTYPE_FP16,
  DC_DTYPE_BF16,
  DC_DTYPE_INT64,
  DC_DTYPE_INT32,
  DC_DTYPE_BOOL,
  DC_DTYPE_INT8, /* row-wise quantised embedding rows */
  DC_DTYPE_FP8   /* e4m3 storage (embedding rows, exchange payloads) */
} dc_dtype;

/* Storage bytes per element (tf32 is stored as fp32). Inline: it is asked
 * for every tensor and kernel priced. */
static inline int dc_dtype_bytes(dc_dtype t) {
  switch (t) {
  case DC_DTYPE_FP32:
  case DC_DTYPE_TF32:
  case DC_DTYPE_INT32: return 4;
  case DC_DTYPE_FP16:
  case DC_DTYPE_BF16: return 2;
  case DC_DTYPE_INT64: return 8;
  case DC_DTYPE_BOOL:
  case DC_DTYPE_INT8:
  case DC_DTYPE_FP8: return 1;
  }
  return 4;
}
const char *dc_dtype_name(dc_dtype t); /* "fp32", ... */

/* Bytes of one embedding row of `dim` values stored as t: int8 rows
 * carry FBGEMM's row-wise fp16 scale and bias (4 bytes). The one
 * definition for the lookup kernels' traffic and the memory estimates. */
static inline int64_t dc_emb_row_bytes(dc_dtype t, int64_t dim) {
  return dim * dc_dtype_bytes(t) + (t == DC_DTYPE_INT8 ? 4 : 0);
}

/* The dtype a storage precision is held in. */
static inline dc_dtype dc_storage_dtype(dc_storage s) {
  switch (s) {
  case DC_STORAGE_FP32: return DC_DTYPE_FP32;
  case DC_STORAGE_FP16: return DC_DTYPE_FP16;
  case DC_STORAGE_BF16: return DC_DTYPE_BF16;
  case DC_STORAGE_INT8: return DC_DTYPE_INT8;
  case DC_STORAGE_FP8: return DC_DTYPE_FP8;
  }
  return DC_DTYPE_FP32;
}

#define DC_KERNEL_KINDS(X)                                                  \
  X(GEMM, "gemm")                                                           \
  X(EMBEDDING_FWD, "embedding_fwd")                                         \
  X(EMBEDDING_BWD, "embedding_bwd")                                         \
  X(ELEMENTWISE, "elementwise")                                             \
  X(REDUCE, "reduce")                                                       \
  X(CONCAT, "concat")                                                       \
  X(MEMCPY_H2D, "memcpy_h2d")                                               \
  X(MEMCPY_D2H, "memcpy_d2h")                                               \
  X(MEMCPY_D2D, "memcpy_d2d")                                               \
  X(TRANSPOSE, "transpose")                                                 \
  X(TRIL_FWD, "tril_fwd")                                                   \
  X(TRIL_BWD, "tril_bwd")                                                   \
  X(ALL_TO_ALL, "all_to_all")                                               \
  X(ALL_REDUCE, "all_reduce")                                               \
  X(REDUCE_SCATTER, "reduce_scatter")                                       \
  X(ALL_GATHER, "all_gather")                                               \
  X(INTERACTION_FWD, "interaction_fwd")                                     \
  X(INTERACTION_BWD, "interaction_bwd")

typedef enum dc_kernel_kind {
#define DC_KK_ENUM(sym, name) DC_KERNEL_##sym,
  DC_KERNEL_KINDS(DC_KK_ENUM)
#undef DC_KK_ENUM
  DC_KERNEL_KIND_COUNT_
} dc_kernel_kind;

const char *dc_kernel_kind_name(dc_kernel_kind k);
/* all_to_all, all_reduce, reduce_scatter, all_gather. */
static inline bool dc_kernel_is_collective(dc_kernel_kind k) {
  return k >= DC_KERNEL_ALL_TO_ALL && k <= DC_KERNEL_ALL_GATHER;
}
/* Case-sensitive; false when unknown. */
bool dc_kernel_kind_parse(const char *name, dc_kernel_kind *out);

/* One table (or a group of identical tables) of an embedding kernel.
 * The last four fields place it beyond HBM (zero: in HBM). */
typedef struct dc_emb_group {
  int32_t tables;  /* how many identical tables */
  int64_t rows;    /* E (rows of this shard of each table) */
  int32_t dim;     /* D (columns of this shard) */
  double pooling;  /* L */
  dc_table_memory memory; /* HBM, UVM or UVM_CACHING, never AUTO */
  int64_t cache_rows;     /* UVM_CACHING: rows the HBM cache holds */
  double zipf;            /* access skew (0: uniform) */
  double hit_rate;        /* measured hit rate, < 0: from zipf */
} dc_emb_group;

/* Which part of a forward table-batched lookup over cached tables a
 * kernel is (kernels/uvm.c): WHOLE, the lookup with its cache prefetch
 * folded in (as the planner prices a shard); LOOKUP, the lookup alone
 * (every row from HBM); PREFETCH, the prefetch's cache fill alone (the
 * misses over the host link into the cache: the torchrec graph's
 * fbgemm::lru_cache_populate). WHOLE is LOOKUP + PREFETCH plus the index
 * work the torchrec graph prices in kernels of their own. */
typedef enum dc_emb_part {
  DC_EMB_WHOLE,
  DC_EMB_LOOKUP,
  DC_EMB_PREFETCH
} dc_emb_part;

typedef struct dc_kernel {
  dc_kernel_kind kind;
  double scale; /* time multiplier from what-if transforms; 1 by default */
  union {
    struct { /* GEMM: C[m,n] = op(A)[m,k] op(B)[k,n], `batch` times */
      int64_t m, n, k, batch;
      bool transa, transb;
      dc_dtype dtype; /* FP32 (SIMT), TF32/FP16/BF16 (tensor cores) */
    } gemm;
    struct { /* EMBEDDING_FWD / EMBEDDING_BWD (table-batched) */
      int64_t batch; /* B, samples (local batch on this rank) */
      int32_t n_groups;
      const dc_emb_group *groups;
      dc_dtype dtype;          /* weights' dtype */
      dc_optimizer optimizer;  /* BWD: fused update's state traffic */
      bool fused_optimizer;    /* BWD: update applied in the kernel */
      dc_embedding_model model;
      bool stock; /* PyTorch's own nn.EmbeddingBag kernels (one table per
                   * kernel, gradient rows written for a sparse update),
                   * not FBGEMM's table-batched ones: a kernel family of
                   * its own for the fitted models (spec/calibrate.md) */
      dc_emb_part part; /* FWD over cached tables; WHOLE otherwise */
    } emb;
    struct { /* ELEMENTWISE and REDUCE */
      int64_t elements;
      double flops_per_elem;
      double bytes_per_elem; /* DRAM bytes per element, all operands */
      bool indexed; /* gather / scatter through an index (index_select,
                     * gather, index_add_: the sparse update): irregular
                     * rows, a family of its own for the fitted models */
    } ew;
    struct { /* CONCAT, MEMCPY_*: bytes moved (read once, written once) */
      int64_t bytes;
      bool pinned; /* H2D/D2H: pinned host memory (else pageable) */
    } copy;
    struct { /* TRANSPOSE: batch × [m, n] → [n, m]; TRIL: batch × [m, n];
              * INTERACTION: batch samples of m features of width n */
      int64_t batch, m, n;
      bool diag; /* TRIL: diagonal kept */
      dc_dtype dtype;
    } mat;
    struct { /* collectives */
      int64_t bytes;  /* payload per rank (the buffer size) */
      int32_t ranks;  /* group size */
      int32_t hosts;  /* hosts the group spans (1: NVLink only) */
      int32_t coll_id; /* same id on every rank for one collective */
      int32_t algo;    /* a dc_coll_algo the run forces (NCCL_ALGO);
                        * 0: the cheapest, as NCCL's tuner picks */
      bool hier;       /* all-to-all: HugeCTR's hierarchical exchange
                        * (NVLink writes inside the node, then an
                        * all-to-all among each rail's GPUs) */
      int64_t railed;  /* hier: of `bytes`, those already on their rail's
                        * GPU (a host reduce-scatter's chunk, or the
                        * gradients a host all-gather spreads), which
                        * skip the NVLink phase */
    } coll;
  } u;
} dc_kernel;

/* A GEMM descriptor (the conventions in graphgen/graphgen.h), scale 1:
 * the one place graphgen and the execution-trace import fill one. */
static inline dc_kernel dc_kernel_gemm(int64_t m, int64_t n, int64_t k,
                                       int64_t batch, bool ta, bool tb,
                                       dc_dtype dt) {
  dc_kernel x = {.kind = DC_KERNEL_GEMM, .scale = 1.0};
  x.u.gemm.m = m;
  x.u.gemm.n = n;
  x.u.gemm.k = k;
  x.u.gemm.batch = batch;
  x.u.gemm.transa = ta;
  x.u.gemm.transb = tb;
  x.u.gemm.dtype = dt;
  return x;
}

#endif /* DC_KDESC_H */
