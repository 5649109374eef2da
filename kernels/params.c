/*
 * params.c — a kernel described as key=value pairs, the form `dlrmc
 * kernel` takes on the command line and in --csv columns (spec/design.md):
 *
 *   gemm            m n k batch transa transb dtype
 *   embedding_*     batch rows tables pooling dim dtype model(plain|
 *                   enhanced) optimizer(sgd|adagrad|rowwise_adagrad|adam)
 *                   fused(0|1)
 *   elementwise     elements flops_per_elem bytes_per_elem  (also reduce)
 *   concat/memcpy   bytes direction(h2d|d2h|d2d) pinned(0|1)
 *   transpose       batch m n dtype
 *   tril_fwd/bwd    batch m n diag dtype
 *   collectives     bytes ranks hosts algo(ring|tree|nvls|nvls_tree|
 *                   collnet: NCCL_ALGO; default NCCL's own choice)
 *   any             scale
 *
 * Sizes accept the study's suffixes (1M, 64Ki, 2GB). Defaults: batch 1,
 * fp32, no transposes, one table, SGD fused, enhanced model, pageable.
 */
#include <string.h>

#include "kernels/kernels.h"

static dc_emb_group *group_of(dc_kernel *k) {
  return (dc_emb_group *)k->u.emb.groups; /* the one group init made */
}

void dc_kernel_params_init(dc_kernel *k, dc_kernel_kind kind, dc_arena *a) {
  memset(k, 0, sizeof *k);
  k->kind = kind;
  k->scale = 1.0;
  switch (kind) {
  case DC_KERNEL_GEMM:
    k->u.gemm.batch = 1;
    k->u.gemm.dtype = DC_DTYPE_FP32;
    break;
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD: {
    dc_emb_group *g = dc_arena_alloc(a, sizeof *g);
    g->tables = 1;
    g->pooling = 1;
    k->u.emb.groups = g;
    k->u.emb.n_groups = 1;
    k->u.emb.batch = 1;
    k->u.emb.dtype = DC_DTYPE_FP32;
    k->u.emb.optimizer = DC_OPTIMIZER_SGD;
    k->u.emb.fused_optimizer = true;
    k->u.emb.model = DC_EMBMODEL_ENHANCED;
    break;
  }
  case DC_KERNEL_TRANSPOSE:
  case DC_KERNEL_TRIL_FWD:
  case DC_KERNEL_TRIL_BWD:
  case DC_KERNEL_INTERACTION_FWD:
  case DC_KERNEL_INTERACTION_BWD:
    k->u.mat.batch = 1;
    k->u.mat.dtype = DC_DTYPE_FP32;
    break;
  case DC_KERNEL_ALL_TO_ALL:
  case DC_KERNEL_ALL_REDUCE:
  case DC_KERNEL_REDUCE_SCATTER:
  case DC_KERNEL_ALL_GATHER:
    k->u.coll.ranks = 1;
    k->u.coll.hosts = 1;
    break;
  default: break;
  }
}

bool dc_kernel_kind_parse_cli(const char *name, dc_kernel_kind *out) {
  if (strcmp(name, "memcpy") == 0) {
    *out = DC_KERNEL_MEMCPY_H2D;
    return true;
  }
  return dc_kernel_kind_parse(name, out);
}

static bool size_val(const char *key, const char *v, dc_span sp, bool bytes,
                     int64_t *out, dc_diags *d) {
  const char *why = NULL;
  if (!dc_parse_size(v, bytes, out, &why)) {
    dc_diag_error(d, DC_DIAG_BAD_SIZE, sp, "'%s': '%s' is not a size: %s",
                  key, v, why ? why : "invalid");
    return false;
  }
  return true;
}

/* A real parameter (pooling, flops/bytes per element, scale): in
 * [0, 1e6], the range spec/numbers.md gives them. */
static bool num_val(const char *key, const char *v, dc_span sp, double *out,
                    dc_diags *d) {
  const char *why = NULL;
  if (!dc_parse_double(v, out, &why) || *out < 0) {
    dc_diag_error(d, DC_DIAG_BAD_NUMBER, sp,
                  "'%s': '%s' is not a non-negative number", key, v);
    return false;
  }
  if (*out > 1e6) {
    dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, sp,
                  "'%s': '%s' is out of range; it must be at most 1000000",
                  key, v);
    return false;
  }
  return true;
}

static bool bool_val(const char *key, const char *v, dc_span sp, bool *out,
                     dc_diags *d) {
  static const char *t[] = {"1", "true", "T", "t", "yes"};
  static const char *f[] = {"0", "false", "N", "n", "no"};
  for (size_t i = 0; i < DC_COUNTOF(t); i++)
    if (strcmp(v, t[i]) == 0) return (*out = true);
  for (size_t i = 0; i < DC_COUNTOF(f); i++)
    if (strcmp(v, f[i]) == 0) return !(*out = false);
  dc_diag_error(d, DC_DIAG_BAD_ENUM, sp,
                "'%s': '%s' is not a flag (0/1, true/false, N/T)", key, v);
  return false;
}

static bool dtype_val(const char *v, dc_span sp, dc_dtype *out, dc_diags *d) {
  static const char *names[] = {"fp32", "tf32", "fp16", "bf16"};
  for (int i = 0; i < 4; i++)
    if (strcmp(v, names[i]) == 0) {
      *out = (dc_dtype)i;
      return true;
    }
  if (strcmp(v, "float") == 0 || strcmp(v, "float32") == 0) {
    *out = DC_DTYPE_FP32;
    return true;
  }
  if (strcmp(v, "half") == 0 || strcmp(v, "float16") == 0) {
    *out = DC_DTYPE_FP16;
    return true;
  }
  dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_ENUM, sp,
                             "'dtype': '%s' is not fp32, tf32, fp16 or bf16",
                             v);
  const char *s = dc_suggest(v, names, 4);
  if (s) dc_diag_set_help(g, "did you mean '%s'?", s);
  return false;
}

static const char *const gemm_keys[] = {"m", "n", "k", "batch", "transa",
                                        "transb", "dtype", "scale"};
static const char *const emb_keys[] = {"batch",     "rows",  "tables",
                                       "pooling",   "dim",   "dtype",
                                       "model",     "optimizer", "fused",
                                       "stock",     "scale"};
static const char *const ew_keys[] = {"elements", "flops_per_elem",
                                      "bytes_per_elem", "indexed", "scale"};
static const char *const copy_keys[] = {"bytes", "direction", "pinned",
                                        "scale"};
static const char *const mat_keys[] = {"batch", "m", "n", "diag", "dtype",
                                       "scale"};
static const char *const coll_keys[] = {"bytes", "ranks", "hosts", "algo",
                                        "scale"};

static bool unknown(const dc_kernel *k, const char *key, dc_span sp,
                    bool *known, dc_diags *d) {
  const char *const *c;
  size_t n;
  switch (k->kind) {
  case DC_KERNEL_GEMM: c = gemm_keys, n = DC_COUNTOF(gemm_keys); break;
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD: c = emb_keys, n = DC_COUNTOF(emb_keys); break;
  case DC_KERNEL_ELEMENTWISE:
  case DC_KERNEL_REDUCE: c = ew_keys, n = DC_COUNTOF(ew_keys); break;
  case DC_KERNEL_CONCAT:
  case DC_KERNEL_MEMCPY_H2D:
  case DC_KERNEL_MEMCPY_D2H:
  case DC_KERNEL_MEMCPY_D2D: c = copy_keys, n = DC_COUNTOF(copy_keys); break;
  case DC_KERNEL_TRANSPOSE:
  case DC_KERNEL_TRIL_FWD:
  case DC_KERNEL_TRIL_BWD:
  case DC_KERNEL_INTERACTION_FWD:
  case DC_KERNEL_INTERACTION_BWD: c = mat_keys, n = DC_COUNTOF(mat_keys); break;
  default: c = coll_keys, n = DC_COUNTOF(coll_keys); break;
  }
  if (known) {
    *known = false;
    return true;
  }
  dc_diag *g = dc_diag_error(d, DC_DIAG_UNKNOWN_KEY, sp,
                             "unknown parameter '%s' for kernel '%s'", key,
                             dc_kernel_kind_name(k->kind));
  const char *s = dc_suggest(key, c, n);
  dc_buf hb = {0};
  for (size_t i = 0; i < n; i++) dc_buf_printf(&hb, "%s%s", i ? " " : "", c[i]);
  if (s)
    dc_diag_set_help(g, "did you mean '%s'? parameters: %s", s, hb.data);
  else
    dc_diag_set_help(g, "parameters: %s", hb.data);
  dc_buf_free(&hb);
  return false;
}

bool dc_kernel_param_set(dc_kernel *k, const char *key, const char *v,
                         dc_span sp, bool *known, dc_diags *d) {
  if (known) *known = true;
  if (strcmp(key, "scale") == 0) {
    /* the study's transforms[].scale.factor range (spec/numbers.md) */
    if (!num_val(key, v, sp, &k->scale, d)) return false;
    if (k->scale > 0) return true;
    dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, sp,
                  "'scale': '%s' is out of range; it must be greater than 0",
                  v);
    return false;
  }
  switch (k->kind) {
  case DC_KERNEL_GEMM:
    if (strcmp(key, "m") == 0) return size_val(key, v, sp, 0, &k->u.gemm.m, d);
    if (strcmp(key, "n") == 0) return size_val(key, v, sp, 0, &k->u.gemm.n, d);
    if (strcmp(key, "k") == 0) return size_val(key, v, sp, 0, &k->u.gemm.k, d);
    if (strcmp(key, "batch") == 0)
      return size_val(key, v, sp, 0, &k->u.gemm.batch, d);
    if (strcmp(key, "transa") == 0)
      return bool_val(key, v, sp, &k->u.gemm.transa, d);
    if (strcmp(key, "transb") == 0)
      return bool_val(key, v, sp, &k->u.gemm.transb, d);
    if (strcmp(key, "dtype") == 0 || strcmp(key, "precision") == 0)
      return dtype_val(v, sp, &k->u.gemm.dtype, d);
    break;
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD: {
    dc_emb_group *g = group_of(k);
    int64_t iv;
    if (strcmp(key, "batch") == 0)
      return size_val(key, v, sp, 0, &k->u.emb.batch, d);
    if (strcmp(key, "rows") == 0) return size_val(key, v, sp, 0, &g->rows, d);
    if (strcmp(key, "tables") == 0 || strcmp(key, "dim") == 0) {
      if (!size_val(key, v, sp, 0, &iv, d)) return false;
      if (iv > INT32_MAX) {
        dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, sp, "'%s' is too large", key);
        return false;
      }
      if (key[0] == 't') g->tables = (int32_t)iv;
      else g->dim = (int32_t)iv;
      return true;
    }
    if (strcmp(key, "pooling") == 0) return num_val(key, v, sp, &g->pooling, d);
    if (strcmp(key, "dtype") == 0) return dtype_val(v, sp, &k->u.emb.dtype, d);
    if (strcmp(key, "fused") == 0)
      return bool_val(key, v, sp, &k->u.emb.fused_optimizer, d);
    if (strcmp(key, "stock") == 0)
      return bool_val(key, v, sp, &k->u.emb.stock, d);
    if (strcmp(key, "model") == 0) {
      if (strcmp(v, "plain") == 0) k->u.emb.model = DC_EMBMODEL_PLAIN;
      else if (strcmp(v, "enhanced") == 0)
        k->u.emb.model = DC_EMBMODEL_ENHANCED;
      else {
        dc_diag_error(d, DC_DIAG_BAD_ENUM, sp,
                      "'model': '%s' is not plain or enhanced", v);
        return false;
      }
      return true;
    }
    if (strcmp(key, "optimizer") == 0) {
      static const char *o[] = {"sgd", "adagrad", "rowwise_adagrad", "adam"};
      for (int i = 0; i < 4; i++)
        if (strcmp(v, o[i]) == 0) {
          k->u.emb.optimizer = (dc_optimizer)i;
          return true;
        }
      dc_diag *g2 = dc_diag_error(d, DC_DIAG_BAD_ENUM, sp,
                                  "'optimizer': '%s' is not sgd, adagrad, "
                                  "rowwise_adagrad or adam", v);
      const char *s = dc_suggest(v, o, 4);
      if (s) dc_diag_set_help(g2, "did you mean '%s'?", s);
      return false;
    }
    break;
  }
  case DC_KERNEL_ELEMENTWISE:
  case DC_KERNEL_REDUCE:
    if (strcmp(key, "elements") == 0)
      return size_val(key, v, sp, 0, &k->u.ew.elements, d);
    if (strcmp(key, "flops_per_elem") == 0)
      return num_val(key, v, sp, &k->u.ew.flops_per_elem, d);
    if (strcmp(key, "bytes_per_elem") == 0)
      return num_val(key, v, sp, &k->u.ew.bytes_per_elem, d);
    if (strcmp(key, "indexed") == 0)
      return bool_val(key, v, sp, &k->u.ew.indexed, d);
    break;
  case DC_KERNEL_CONCAT:
  case DC_KERNEL_MEMCPY_H2D:
  case DC_KERNEL_MEMCPY_D2H:
  case DC_KERNEL_MEMCPY_D2D:
    if (strcmp(key, "bytes") == 0)
      return size_val(key, v, sp, 1, &k->u.copy.bytes, d);
    if (strcmp(key, "pinned") == 0)
      return bool_val(key, v, sp, &k->u.copy.pinned, d);
    if (strcmp(key, "direction") == 0 && k->kind != DC_KERNEL_CONCAT) {
      if (strcmp(v, "h2d") == 0) k->kind = DC_KERNEL_MEMCPY_H2D;
      else if (strcmp(v, "d2h") == 0) k->kind = DC_KERNEL_MEMCPY_D2H;
      else if (strcmp(v, "d2d") == 0) k->kind = DC_KERNEL_MEMCPY_D2D;
      else {
        dc_diag_error(d, DC_DIAG_BAD_ENUM, sp,
                      "'direction': '%s' is not h2d, d2h or d2d", v);
        return false;
      }
      return true;
    }
    break;
  case DC_KERNEL_TRANSPOSE:
  case DC_KERNEL_TRIL_FWD:
  case DC_KERNEL_TRIL_BWD:
  case DC_KERNEL_INTERACTION_FWD:
  case DC_KERNEL_INTERACTION_BWD:
    if (strcmp(key, "batch") == 0)
      return size_val(key, v, sp, 0, &k->u.mat.batch, d);
    if (strcmp(key, "m") == 0) return size_val(key, v, sp, 0, &k->u.mat.m, d);
    if (strcmp(key, "n") == 0) return size_val(key, v, sp, 0, &k->u.mat.n, d);
    if (strcmp(key, "diag") == 0 && k->kind != DC_KERNEL_TRANSPOSE)
      return bool_val(key, v, sp, &k->u.mat.diag, d);
    if (strcmp(key, "dtype") == 0) return dtype_val(v, sp, &k->u.mat.dtype, d);
    break;
  default: {
    int64_t iv;
    if (strcmp(key, "bytes") == 0)
      return size_val(key, v, sp, 1, &k->u.coll.bytes, d);
    if (strcmp(key, "algo") == 0) {
      dc_coll_algo al;
      bool a2a = k->kind == DC_KERNEL_ALL_TO_ALL;
      if (dc_coll_algo_parse(v, &al) && al != DC_COLL_NONE &&
          (al == DC_COLL_P2P || al == DC_COLL_HIER) == a2a) {
        /* p2p: NCCL's flat all-to-all, the default (0) */
        k->u.coll.algo = al == DC_COLL_P2P ? 0 : (int32_t)al;
        return true;
      }
      dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_ENUM, sp,
                                 "'%s' is not an algorithm of %s", v,
                                 dc_kernel_kind_name(k->kind));
      dc_diag_set_help(g, a2a ? "p2p (NCCL's pairwise sends) or hier "
                                "(HugeCTR's hierarchical exchange)"
                              : "one of ring, tree, nvls, nvls_tree, collnet");
      return false;
    }
    if (strcmp(key, "ranks") == 0 || strcmp(key, "hosts") == 0) {
      if (!size_val(key, v, sp, 0, &iv, d)) return false;
      if (iv > 1000000) {
        dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, sp, "'%s' is too large", key);
        return false;
      }
      if (key[0] == 'r') k->u.coll.ranks = (int32_t)iv;
      else k->u.coll.hosts = (int32_t)iv;
      return true;
    }
    break;
  }
  }
  return unknown(k, key, sp, known, d);
}

static bool positive(int64_t v, const char *what, dc_span sp, dc_diags *d) {
  if (v > 0) return true;
  dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, sp, "'%s' must be positive", what);
  return false;
}

bool dc_kernel_params_check(const dc_kernel *k, dc_span sp, dc_diags *d) {
  int64_t p;
  int bad = 0;
  switch (k->kind) {
  case DC_KERNEL_GEMM:
    bad += !positive(k->u.gemm.m, "m", sp, d);
    bad += !positive(k->u.gemm.n, "n", sp, d);
    bad += !positive(k->u.gemm.k, "k", sp, d);
    bad += !positive(k->u.gemm.batch, "batch", sp, d);
    if (bad) return false;
    if (!dc_mul_i64(k->u.gemm.m, k->u.gemm.n, &p) ||
        !dc_mul_i64(p, k->u.gemm.batch, &p) ||
        !dc_mul_i64(k->u.gemm.k, k->u.gemm.batch, &p)) {
      dc_diag_error(d, DC_DIAG_OVERFLOW, sp,
                    "GEMM sizes overflow 64 bits when multiplied");
      return false;
    }
    return true;
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD: {
    const dc_emb_group *g = k->u.emb.groups;
    bad += !positive(k->u.emb.batch, "batch", sp, d);
    bad += !positive(g->rows, "rows", sp, d);
    bad += !positive(g->tables, "tables", sp, d);
    bad += !positive(g->dim, "dim", sp, d);
    return bad == 0;
  }
  case DC_KERNEL_TRANSPOSE:
  case DC_KERNEL_TRIL_FWD:
  case DC_KERNEL_TRIL_BWD:
  case DC_KERNEL_INTERACTION_FWD:
  case DC_KERNEL_INTERACTION_BWD:
    bad += !positive(k->u.mat.batch, "batch", sp, d);
    bad += !positive(k->u.mat.m, "m", sp, d);
    bad += !positive(k->u.mat.n, "n", sp, d);
    return bad == 0;
  case DC_KERNEL_ALL_TO_ALL:
  case DC_KERNEL_ALL_REDUCE:
  case DC_KERNEL_REDUCE_SCATTER:
  case DC_KERNEL_ALL_GATHER:
    bad += !positive(k->u.coll.ranks, "ranks", sp, d);
    bad += !positive(k->u.coll.hosts, "hosts", sp, d);
    return bad == 0;
  default: return true;
  }
}
