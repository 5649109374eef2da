/*
 * price.c — dc_kernel_time, the one pricing function (DESIGN §4), and the
 * once-per-process loading of fitted models. Dispatch by kind:
 *
 *   gemm                 fitted MLP when the device has one trained on
 *                        the kernel's dtype and the kernel lies in the
 *                        model's domain, else the analytic model
 *   transpose, tril_*    fitted MLP when present and in its domain, else
 *                        memory roofline
 *   embedding_fwd/bwd    the paper's heuristic (plain or enhanced)
 *   elementwise, reduce  roofline
 *   concat, memcpy_*     copy models
 *   collectives          ring algorithms over the slowest link
 *
 * and multiplies by the kernel's `scale` (what-if transforms). Models live
 * in spec/kernels/<device's kernel_models, lowercase>/<kind>.yaml, embedded
 * at build time; each device's set is parsed once, under a mutex, into a
 * process-lifetime arena, so pricing itself never locks or allocates.
 */
#include <ctype.h>
#include <pthread.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/kinternal.h"

struct dc_kmodels {
  const char *name; /* lowercase folder name */
  const dc_mlp *mlp[DC_KERNEL_KIND_COUNT_];
  bool any;
  struct dc_kmodels *next;
};

static pthread_mutex_t models_lock = PTHREAD_MUTEX_INITIALIZER;
static dc_kmodels *models_list;
static dc_arena models_arena;

static const dc_kernel_kind fitted_kinds[] = {
    DC_KERNEL_GEMM, DC_KERNEL_TRANSPOSE, DC_KERNEL_TRIL_FWD,
    DC_KERNEL_TRIL_BWD};

static dc_kmodels *load_models(const char *lower) {
  dc_kmodels *km = dc_arena_alloc(&models_arena, sizeof *km);
  km->name = dc_arena_strdup(&models_arena, lower);
  for (size_t i = 0; i < DC_COUNTOF(fitted_kinds); i++) {
    char path[300];
    snprintf(path, sizeof path, "kernels/%s/%s.yaml", lower,
             dc_kernel_kind_name(fitted_kinds[i]));
    const dc_spec_file *f = dc_spec_file_find(path);
    if (!f) continue;
    dc_diags d = {0};
    const dc_source *src =
        dc_source_from_memory(dc_arena_printf(&models_arena, "builtin:%s",
                                              path),
                              f->data, f->len, &models_arena);
    dc_node *root = dc_yaml_parse(src, &models_arena, &d);
    dc_mlp *m = dc_arena_alloc(&models_arena, sizeof *m);
    /* A built-in model that does not load is a build bug that the unit
     * tests catch; pricing then falls back to the analytic model. */
    if (root && dc_mlp_from_node(root, m, &models_arena, &d) &&
        m->kind == fitted_kinds[i]) {
      km->mlp[fitted_kinds[i]] = m;
      km->any = true;
    }
    dc_diags_free(&d);
  }
  return km;
}

const dc_kmodels *dc_kmodels_for(const dc_device *dev) {
  if (!dev) return NULL;
  const char *name = dev->models_name ? dev->models_name : dev->name;
  if (!name) return NULL;
  char lower[200];
  size_t n = strlen(name);
  if (n >= sizeof lower) return NULL;
  for (size_t i = 0; i <= n; i++)
    lower[i] = (char)tolower((unsigned char)name[i]);
  pthread_mutex_lock(&models_lock);
  dc_kmodels *km = models_list;
  while (km && strcmp(km->name, lower) != 0) km = km->next;
  if (!km) {
    km = load_models(lower);
    km->next = models_list;
    models_list = km;
  }
  pthread_mutex_unlock(&models_lock);
  return km->any ? km : NULL;
}

const dc_mlp *dc_kmodels_get(const dc_kmodels *models, dc_kernel_kind kind) {
  if (!models || (unsigned)kind >= DC_KERNEL_KIND_COUNT_) return NULL;
  return models->mlp[kind];
}

/* The fitted model that applies to `k`, or NULL. */
static const dc_mlp *applicable(const dc_kernel *k, const dc_kmodels *models) {
  const dc_mlp *m = dc_kmodels_get(models, k->kind);
  if (!m) return NULL;
  dc_dtype t = k->kind == DC_KERNEL_GEMM ? k->u.gemm.dtype : k->u.mat.dtype;
  if ((unsigned)t > DC_DTYPE_BF16 || !(m->dtypes & (1u << t))) return NULL;
  return dc_mlp_covers(m, k) ? m : NULL;
}

const char *dc_kernel_model_used(const dc_kernel *k,
                                 const dc_kmodels *models) {
  switch (k->kind) {
  case DC_KERNEL_GEMM:
    return applicable(k, models) ? "mlp" : "analytic";
  case DC_KERNEL_TRANSPOSE:
  case DC_KERNEL_TRIL_FWD:
  case DC_KERNEL_TRIL_BWD:
    return applicable(k, models) ? "mlp" : "roofline";
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD:
    return k->u.emb.model == DC_EMBMODEL_PLAIN ? "heuristic-plain"
                                               : "heuristic-enhanced";
  case DC_KERNEL_ALL_TO_ALL:
  case DC_KERNEL_ALL_REDUCE:
  case DC_KERNEL_REDUCE_SCATTER:
  case DC_KERNEL_ALL_GATHER:
    return "ring";
  default:
    return "roofline";
  }
}

/* The kinds a model may be fitted for: the model when it applies, else
 * `analytic`. Out of line: its call to dc_mlp_covers would otherwise give
 * dc_kernel_time a stack frame on every kind's path. */
static __attribute__((noinline)) double
fitted_or(const dc_kernel *k, const dc_device *dev, const dc_kmodels *models,
          double (*analytic)(const dc_kernel *, const dc_device *)) {
  const dc_mlp *m = applicable(k, models);
  return m ? dc_mlp_predict_us(m, k) : analytic(k, dev);
}

double dc_kernel_time(const dc_kernel *k, const dc_device *dev,
                      const dc_kmodels *models) {
  double t = 0;
  switch (k->kind) {
  case DC_KERNEL_GEMM:
    t = fitted_or(k, dev, models, dc_kernel_gemm_analytic_us);
    break;
  case DC_KERNEL_TRANSPOSE:
  case DC_KERNEL_TRIL_FWD:
  case DC_KERNEL_TRIL_BWD:
    t = fitted_or(k, dev, models, dc_k_matrix_us);
    break;
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD:
    t = dc_kernel_embedding_us(k, dev);
    break;
  case DC_KERNEL_INTERACTION_FWD:
  case DC_KERNEL_INTERACTION_BWD:
    t = dc_k_interaction_us(k, dev);
    break;
  case DC_KERNEL_ELEMENTWISE:
  case DC_KERNEL_REDUCE:
    t = dc_k_elementwise_us(k, dev);
    break;
  case DC_KERNEL_CONCAT:
  case DC_KERNEL_MEMCPY_H2D:
  case DC_KERNEL_MEMCPY_D2H:
  case DC_KERNEL_MEMCPY_D2D:
    t = dc_k_copy_us(k, dev);
    break;
  case DC_KERNEL_ALL_TO_ALL:
  case DC_KERNEL_ALL_REDUCE:
  case DC_KERNEL_REDUCE_SCATTER:
  case DC_KERNEL_ALL_GATHER:
    t = dc_k_collective_us(k, dev);
    break;
  default:
    t = dev->kernel_floor_us;
    break;
  }
  return t * (k->scale > 0 ? k->scale : 1.0);
}
