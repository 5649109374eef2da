/*
 * price.c — dc_kernel_time, the one pricing function (spec/design.md), and the
 * once-per-process loading of fitted models. Dispatch by kind:
 *
 *   gemm                 fitted MLP when the device has one trained on
 *                        the kernel's dtype and the kernel lies in the
 *                        model's domain, else the analytic model
 *   transpose, tril_*    fitted MLP when present and in its domain, else
 *                        memory roofline
 *   embedding_fwd/bwd    the paper's heuristic (plain or enhanced), and
 *                        for tables beyond HBM the host link (uvm.c)
 *   elementwise, reduce  roofline
 *   concat, memcpy_*     copy models
 *   collectives          ring algorithms over the slowest link
 *
 * then raises an answer below the kernel's physical floor to the floor
 * (kernels/bounds.c: every fitted answer is checked; the analytic ones
 * are at or above their floor by construction, and only the GEMM's
 * launch floor is compared) and multiplies by the kernel's `scale` (what-if transforms).
 *
 * A fitted GEMM model is evaluated on the kernel's canonical layout, both
 * operands untransposed: its answer does not depend on transa and transb.
 * The DeepBench rows the shipped models were fitted on are half NN, half
 * TN and 10 of 160 NT, and no NT row has an NN twin beyond four tiny
 * shapes, so the networks' transpose inputs are not identified by the
 * data: evaluated with them, the V100 model priced 4096×1024×1024 fp32
 * 4.5× dearer with transb than without, and transa swung prices between
 * 0.04× and 10× over ordinary shapes, where the measured twins (same
 * m, n, k, one operand transposed) differ by a median 0–6 % and at most
 * 0.5–2.5× (spec/kernels/README.md). Models live
 * in spec/kernels/<device's kernel_models, lowercase>/<kind>.yaml, embedded
 * at build time; each device's model of a kind is parsed once, under a
 * mutex, into a process-lifetime arena, the first time a kernel of that
 * kind is priced (a study that never prices a tril never parses its
 * model); after that, pricing neither locks nor allocates.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/kernels_int.h"

struct dc_kmodels {
  const char *name; /* lowercase folder name, or a folder's path */
  bool on_disk;     /* name is a path (a calibration folder) */
  /* Each kind's model is parsed the first time a kernel of that kind is
   * priced (a dot model's tril networks are 240 KB of YAML a cat model
   * never reads): `loaded` is set, with release order, after mlp[kind]. */
  const dc_mlp *mlp[DC_KERNEL_KIND_COUNT_];
  _Atomic bool loaded[DC_KERNEL_KIND_COUNT_];
  bool any; /* a built-in file for some kind */
  /* the fitted families (families.yaml), parsed on first use; from the
   * built-in folder fams_from where the folder has none (borrowed) */
  const char *fams_from;
  const char *fam_key; /* the device's kernel_families (lowercase), NULL */
  const dc_kfams *fams;
  _Atomic bool fams_loaded;
  struct dc_kmodels *next;
};

static pthread_mutex_t models_lock = PTHREAD_MUTEX_INITIALIZER;
static dc_kmodels *models_list;
static dc_arena models_arena;

static const dc_kernel_kind fitted_kinds[] = {
    DC_KERNEL_GEMM, DC_KERNEL_TRANSPOSE, DC_KERNEL_TRIL_FWD,
    DC_KERNEL_TRIL_BWD};

#define FAMILIES_FILE "families"

/* A model folder name is a path (a calibration folder on disk) when it
 * holds a '/' (`./cal` for one in the working directory); else the name
 * of a built-in folder, spec/kernels/<name>/. */
static bool is_path(const char *name) { return strchr(name, '/') != NULL; }

static const dc_spec_file *model_file(const char *lower, const char *base) {
  char path[300];
  snprintf(path, sizeof path, "kernels/%s/%s.yaml", lower, base);
  return dc_spec_file_find(path);
}

static bool disk_file(const char *dir, const char *base) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s.yaml", dir, base);
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

static bool has_file(const dc_kmodels *km, const char *base) {
  return km->on_disk ? disk_file(km->name, base)
                     : model_file(km->name, base) != NULL;
}

/* The parsed document of one model file, or NULL. Called with
 * models_lock held. A built-in model that does not load is a build bug
 * that the unit tests catch, a folder's was checked when the study named
 * it (dc_kmodels_check_dir); either way pricing falls back to the
 * analytic model. */
static const dc_node *load_doc_in(const char *name, bool on_disk,
                                  const char *base) {
  dc_diags d = {0};
  const dc_source *src = NULL;
  if (on_disk) {
    char *path = dc_arena_printf(&models_arena, "%s/%s.yaml", name, base);
    src = dc_source_load(path, &models_arena, &d);
  } else {
    const dc_spec_file *f = model_file(name, base);
    if (f)
      src = dc_source_from_memory(
          dc_arena_printf(&models_arena, "builtin:%s", f->path), f->data,
          f->len, &models_arena);
  }
  const dc_node *root = src ? dc_yaml_parse(src, &models_arena, &d) : NULL;
  dc_diags_free(&d);
  return root;
}

static const dc_node *load_doc(const dc_kmodels *km, const char *base) {
  return load_doc_in(km->name, km->on_disk, base);
}

static void load_kind(dc_kmodels *km, dc_kernel_kind kind) {
  const dc_node *root = load_doc(km, dc_kernel_kind_name(kind));
  if (root) {
    dc_diags d = {0};
    dc_mlp *m = dc_arena_alloc(&models_arena, sizeof *m);
    if (dc_mlp_from_node(root, m, &models_arena, &d) && m->kind == kind)
      km->mlp[kind] = m;
    dc_diags_free(&d);
  }
  atomic_store_explicit(&km->loaded[kind], true, memory_order_release);
}

static void load_families(dc_kmodels *km) {
  const dc_node *root = km->fams_from
                            ? load_doc_in(km->fams_from, false, FAMILIES_FILE)
                            : load_doc(km, FAMILIES_FILE);
  if (root) {
    dc_diags d = {0};
    dc_kfams *f = dc_arena_alloc(&models_arena, sizeof *f);
    if (dc_kfams_from_node(root, f, &d)) km->fams = f;
    dc_diags_free(&d);
  }
  atomic_store_explicit(&km->fams_loaded, true, memory_order_release);
}

/* A folder name as its key: a built-in folder's lowercased, a path as
 * written; false when it does not fit in cap bytes. */
static bool folder_key(const char *name, char *out, size_t cap) {
  size_t n = strlen(name);
  if (n >= cap) return false;
  bool disk = is_path(name);
  for (size_t i = 0; i <= n; i++)
    out[i] = disk ? name[i] : (char)tolower((unsigned char)name[i]);
  return true;
}

bool dc_kfams_builtin(const char *name) {
  char lower[256];
  if (!name || !*name || is_path(name) ||
      !folder_key(name, lower, sizeof lower))
    return false;
  return model_file(lower, FAMILIES_FILE) != NULL;
}

static dc_kmodels *new_models(const char *lower, bool on_disk,
                              const char *fam_lower) {
  dc_kmodels *km = dc_arena_alloc(&models_arena, sizeof *km);
  km->name = dc_arena_strdup(&models_arena, lower);
  km->on_disk = on_disk;
  if (fam_lower && !has_file(km, FAMILIES_FILE) &&
      model_file(fam_lower, FAMILIES_FILE))
    km->fams_from = dc_arena_strdup(&models_arena, fam_lower);
  /* a kind without a file has nothing to load */
  for (int k = 0; k < DC_KERNEL_KIND_COUNT_; k++)
    atomic_store_explicit(&km->loaded[k], true, memory_order_relaxed);
  for (size_t i = 0; i < DC_COUNTOF(fitted_kinds); i++)
    if (has_file(km, dc_kernel_kind_name(fitted_kinds[i]))) {
      atomic_store_explicit(&km->loaded[fitted_kinds[i]], false,
                            memory_order_relaxed);
      km->any = true;
    }
  bool fams = km->fams_from || has_file(km, FAMILIES_FILE);
  atomic_store_explicit(&km->fams_loaded, !fams, memory_order_relaxed);
  km->any |= fams;
  return km;
}

const dc_kmodels *dc_kmodels_for(const dc_device *dev) {
  if (!dev) return NULL;
  const char *name = dev->models_name ? dev->models_name : dev->name;
  if (!name) return NULL;
  char lower[4096], fam[256];
  if (!folder_key(name, lower, sizeof lower)) return NULL;
  bool disk = is_path(name);
  /* a borrowed families folder (built in, device.c checked it) */
  bool has_fam = dev->families_name &&
                 folder_key(dev->families_name, fam, sizeof fam);
  pthread_mutex_lock(&models_lock);
  dc_kmodels *km = models_list;
  /* one entry per folder and borrowed families (none, or which) */
  while (km && (strcmp(km->name, lower) != 0 ||
                (km->fam_key ? !has_fam || strcmp(km->fam_key, fam) != 0
                             : has_fam)))
    km = km->next;
  if (!km) {
    km = new_models(lower, disk, has_fam ? fam : NULL);
    km->fam_key = has_fam ? dc_arena_strdup(&models_arena, fam) : NULL;
    km->next = models_list;
    models_list = km;
  }
  pthread_mutex_unlock(&models_lock);
  return km->any ? km : NULL;
}

const dc_mlp *dc_kmodels_get(const dc_kmodels *models, dc_kernel_kind kind) {
  if (!models || (unsigned)kind >= DC_KERNEL_KIND_COUNT_) return NULL;
  dc_kmodels *km = (dc_kmodels *)models; /* the lazy half of const */
  if (!atomic_load_explicit(&km->loaded[kind], memory_order_acquire)) {
    pthread_mutex_lock(&models_lock);
    if (!atomic_load_explicit(&km->loaded[kind], memory_order_relaxed))
      load_kind(km, kind);
    pthread_mutex_unlock(&models_lock);
  }
  return km->mlp[kind];
}

bool dc_kmodels_check_dir(const char *dir, dc_span at, dc_arena *a,
                          dc_diags *d) {
  size_t before = d->errors;
  int found = 0;
  const char *bases[DC_COUNTOF(fitted_kinds) + 1];
  for (size_t i = 0; i < DC_COUNTOF(fitted_kinds); i++)
    bases[i] = dc_kernel_kind_name(fitted_kinds[i]);
  bases[DC_COUNTOF(fitted_kinds)] = FAMILIES_FILE;
  for (size_t i = 0; i < DC_COUNTOF(bases); i++) {
    if (!disk_file(dir, bases[i])) continue;
    found++;
    char *path = dc_arena_printf(a, "%s/%s.yaml", dir, bases[i]);
    const dc_source *src = dc_source_load(path, a, d);
    const dc_node *root = src ? dc_yaml_parse(src, a, d) : NULL;
    if (root && i == DC_COUNTOF(fitted_kinds)) {
      dc_kfams f;
      dc_kfams_from_node(root, &f, d);
    } else if (root) {
      dc_mlp m;
      if (dc_mlp_from_node(root, &m, a, d) && m.kind != fitted_kinds[i])
        dc_diag_error(d, DC_DIAG_BAD_MODEL, root->span,
                      "fitted model: '%s' holds a model of kind %s",
                      path, dc_kernel_kind_name(m.kind));
    }
  }
  if (!found) {
    dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_MODEL, at,
                               "no fitted kernel models in '%s'", dir);
    dc_diag_set_help(g, "`dlrmc calibrate ... -o DIR` writes gemm.yaml and "
                        "families.yaml there (spec/calibrate.md)");
  }
  return d->errors == before;
}

const dc_kfams *dc_kmodels_families(const dc_kmodels *models) {
  if (!models) return NULL;
  dc_kmodels *km = (dc_kmodels *)models; /* the lazy half of const */
  if (!atomic_load_explicit(&km->fams_loaded, memory_order_acquire)) {
    pthread_mutex_lock(&models_lock);
    if (!atomic_load_explicit(&km->fams_loaded, memory_order_relaxed))
      load_families(km);
    pthread_mutex_unlock(&models_lock);
  }
  return km->fams;
}

/* The fitted family model that prices k, or NULL. */
static const dc_kfam *family_for(const dc_kernel *k,
                                 const dc_kmodels *models) {
  int f = dc_kfam_of(k);
  if (f < 0) return NULL;
  const dc_kfams *fs = dc_kmodels_families(models);
  return fs && fs->f[f].set ? &fs->f[f] : NULL;
}

/* The kernel a fitted model is evaluated on: a GEMM in its canonical
 * layout (see the top of the file), written to *tmp; any other kernel as
 * it is. */
static const dc_kernel *canonical(const dc_kernel *k, dc_kernel *tmp) {
  if (k->kind != DC_KERNEL_GEMM || (!k->u.gemm.transa && !k->u.gemm.transb))
    return k;
  *tmp = *k;
  tmp->u.gemm.transa = tmp->u.gemm.transb = false;
  return tmp;
}

/* The fitted model that applies to `k` (already canonical), or NULL. */
static const dc_mlp *applicable(const dc_kernel *k, const dc_kmodels *models) {
  const dc_mlp *m = dc_kmodels_get(models, k->kind);
  if (!m) return NULL;
  dc_dtype t = k->kind == DC_KERNEL_GEMM ? k->u.gemm.dtype : k->u.mat.dtype;
  if ((unsigned)t > DC_DTYPE_BF16 || !(m->dtypes & (1u << t))) return NULL;
  return dc_mlp_covers(m, k) ? m : NULL;
}

const char *dc_kernel_model_used(const dc_kernel *k,
                                 const dc_kmodels *models) {
  dc_kernel tmp;
  k = models ? canonical(k, &tmp) : k;
  if (models && family_for(k, models)) return "fitted-bandwidth";
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
    return "nccl";
  default:
    return "roofline";
  }
}

void dc_kernel_model_why(const dc_kernel *k, const dc_kmodels *models,
                         dc_buf *out) {
  dc_kernel tmp;
  const dc_kernel *c = models ? canonical(k, &tmp) : k;
  const dc_kfam *f = models ? family_for(c, models) : NULL;
  if (f) {
    dc_buf_printf(out, "fitted family %s: %.3f of the datasheet DRAM "
                  "bandwidth, %.3f us latency",
                  dc_kfam_name((dc_kfam_id)dc_kfam_of(c)), f->fraction,
                  f->latency_us);
    if (f->row_ns > 0 || f->bag_ns > 0)
      dc_buf_printf(out, ", %.3f ns a row, %.3f ns a bag", f->row_ns,
                    f->bag_ns);
    if (f->rows > 0)
      dc_buf_printf(out, " (%d kernels, held-out GMAE %.1f %%)",
                    (int)f->rows, 100 * f->heldout_gmae);
    if (models->fams_from)
      dc_buf_printf(out, "; borrowed from %s (kernel_families: no data of "
                    "this GPU's own)", models->fams_from);
    return;
  }
  bool fittable = c->kind == DC_KERNEL_GEMM ||
                  c->kind == DC_KERNEL_TRANSPOSE ||
                  c->kind == DC_KERNEL_TRIL_FWD || c->kind == DC_KERNEL_TRIL_BWD;
  const dc_mlp *m = fittable ? dc_kmodels_get(models, c->kind) : NULL;
  if (!m) {
    dc_buf_puts(out, dc_kfam_of(c) >= 0 || fittable
                         ? "no fitted model of this kind for this GPU"
                         : "this kind is never fitted");
    return;
  }
  dc_dtype t = c->kind == DC_KERNEL_GEMM ? c->u.gemm.dtype : c->u.mat.dtype;
  if ((unsigned)t > DC_DTYPE_BF16 || !(m->dtypes & (1u << t))) {
    dc_buf_printf(out, "the fitted model has no %s rows", dc_dtype_name(t));
    return;
  }
  if (m->n_support > 0) {
    double dist = dc_mlp_gate_distance(m, c);
    bool in = dist <= m->gate_radius;
    dc_buf_printf(out, "nearest of the %d fitted rows at %.3f (ln units), %s "
                  "the gate's %.3f", (int)m->n_support, dist,
                  in ? "within" : "beyond", m->gate_radius);
    return;
  }
  dc_buf_puts(out, dc_mlp_covers(m, c) ? "inside the fitted rows' range"
                                       : "outside the fitted rows' range");
}

/* The answer raised to the floor when below it (or NaN). Out of line and
 * cold: prices clear of their floor never pay for its divisions. */
static __attribute__((noinline, cold)) double clamp_to_floor(const dc_kernel *k, const dc_device *dev,
                             double t, dc_kfloor *f, dc_kbound *clamped) {
  dc_kernel_floor(k, dev, f);
  *clamped = DC_KBOUND_NONE;
  if (t >= f->us) return t;
  *clamped = f->binding;
  return f->us;
}

/* The kinds a model may be fitted for: the model when it applies, else
 * `analytic`. Unless `raw` (dc_kernel_price clamps itself), a fitted
 * answer is checked against the kernel's whole floor, an analytic one
 * against the launch floor (the analytic models are at or above the rest
 * of it by construction), and raised to the floor when below it. Out of
 * line: its call to dc_mlp_covers would otherwise give dc_kernel_time a
 * stack frame on every kind's path. */
static __attribute__((noinline)) double
fitted_or(const dc_kernel *k, const dc_device *dev, const dc_kmodels *models,
          double (*analytic)(const dc_kernel *, const dc_device *),
          bool raw) {
  const dc_mlp *m = NULL;
  dc_kernel tmp;
  const dc_kernel *c = k;
  if (models) {
    c = canonical(k, &tmp);
    m = applicable(c, models);
  }
  double t = m ? dc_mlp_predict_us(m, c) : analytic(k, dev);
  bool clear = m ? km_floor_check(k, dev, t) : t >= dev->kernel_floor_us;
  if (raw || clear) return t;
  dc_kfloor f;
  dc_kbound b;
  return clamp_to_floor(k, dev, t, &f, &b);
}

/* The model's answer, µs, before the scale, raised to the kernel's floor
 * unless `raw` where fitted_or says; the other models are at or above
 * their floor by construction (kernels/bounds.c) and are not checked. */
static __attribute__((noinline)) double
family_us(const dc_kernel *k, const dc_device *dev, const dc_kfam *f,
          bool raw) {
  double t = dc_kfam_us(k, dev, f);
  if (raw || km_floor_check(k, dev, t)) return t;
  dc_kfloor fl;
  dc_kbound b;
  return clamp_to_floor(k, dev, t, &fl, &b);
}

static inline double model_us(const dc_kernel *k, const dc_device *dev,
                              const dc_kmodels *models, bool raw) {
  double t = 0;
  if (models && k->kind != DC_KERNEL_GEMM) {
    const dc_kfam *f = family_for(k, models);
    if (f) return family_us(k, dev, f, raw);
  }
  switch (k->kind) {
  case DC_KERNEL_GEMM:
    t = fitted_or(k, dev, models, dc_kernel_gemm_analytic_us, raw);
    break;
  case DC_KERNEL_TRANSPOSE:
  case DC_KERNEL_TRIL_FWD:
  case DC_KERNEL_TRIL_BWD:
    t = fitted_or(k, dev, models, km_matrix_us, raw);
    break;
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD:
    t = dc_kernel_embedding_host_us(k, dev);
    break;
  case DC_KERNEL_INTERACTION_FWD:
  case DC_KERNEL_INTERACTION_BWD:
    t = km_interaction_us(k, dev);
    break;
  case DC_KERNEL_ELEMENTWISE:
  case DC_KERNEL_REDUCE:
    t = km_elementwise_us(k, dev);
    break;
  case DC_KERNEL_CONCAT:
  case DC_KERNEL_MEMCPY_H2D:
  case DC_KERNEL_MEMCPY_D2H:
  case DC_KERNEL_MEMCPY_D2D:
    t = km_copy_us(k, dev);
    break;
  case DC_KERNEL_ALL_TO_ALL:
  case DC_KERNEL_ALL_REDUCE:
  case DC_KERNEL_REDUCE_SCATTER:
  case DC_KERNEL_ALL_GATHER:
    t = km_collective_us(k, dev);
    break;
  default:
    t = dev->kernel_floor_us;
    break;
  }
  return t;
}

double dc_kernel_time(const dc_kernel *k, const dc_device *dev,
                      const dc_kmodels *models) {
  double t = model_us(k, dev, models, false);
  return t * (k->scale > 0 ? k->scale : 1.0);
}

void dc_kernel_price(const dc_kernel *k, const dc_device *dev,
                     const dc_kmodels *models, dc_kprice *out) {
  out->model_us = model_us(k, dev, models, true);
  out->model = dc_kernel_model_used(k, models);
  double t =
      clamp_to_floor(k, dev, out->model_us, &out->floor, &out->clamped);
  out->us = t * (k->scale > 0 ? k->scale : 1.0);
}
