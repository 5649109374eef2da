/*
 * resolve_system.c — the machine a point runs on and how it runs: the GPU
 * and overhead profile (catalog names or paths), GPU and host counts,
 * links, the execution style (system.framework, system.pipeline), the
 * storage precisions of tables and collectives, and the capacity search
 * (capacity:, which names more GPU types and counts).
 *
 * What depends on the GPU entry (fp8 support, vendor, tensor cores,
 * architecture) is copied into the cross-key summary rather than checked
 * here, because the GPU may be swept independently of the keys it
 * constrains (resolve_xcheck.c checks every combination).
 */
#include <string.h>

#include "compiler/resolve_int.h"

#define DEFAULT_GPU "V100-SXM2-16GB"
#define DEFAULT_OVERHEADS "paper-v100"
#define DEFAULT_HOST_SIZE 8 /* a GPU file without gpus_per_host */

/* The GPUs of one host of this GPU: its catalog entry's gpus_per_host
 * (spec/gpus/README.md), how many a bare system.gpus or a capacity
 * search puts in one host (dc_host_layout). */
static int64_t catalog_host_size(const fe_catref *r) {
  const dc_node *n = r && r->root ? dc_node_get(r->root, "gpus_per_host")
                                  : NULL;
  double v = 0;
  if (n && fe_leaf_num(n, "gpus_per_host", NULL, &v, NULL) && v >= 1 &&
      v <= 1024 && v == (double)(int64_t)v)
    return (int64_t)v;
  return DEFAULT_HOST_SIZE;
}

/* schema: system.kernel_models: a folder of fitted kernel models (dlrmc
 * calibrate's -o), relative to the study file. The folder is recorded in
 * the study's catalog under "kernel_models" (root: the key, for its span),
 * and the driver checks its files before anything is priced
 * (cli_check_catalogs): the front end prices nothing. */
static void res_kernel_models(fe_rctx *c, dc_point *p) {
  p->kernel_models = NULL;
  const dc_node *n = res_get(c, "system.kernel_models");
  const char *v = NULL;
  if (!n) return;
  if (!fe_leaf_str(n, "system.kernel_models", &v, c->d)) {
    res_fail(c);
    return;
  }
  if (!v || !*v) {
    dc_diag_error(c->d, DC_DIAG_BAD_MODEL, n->span,
                  "'system.kernel_models' must name a folder");
    res_fail(c);
    return;
  }
  dc_study *s = (dc_study *)c->s;
  const char *look = v;
  if (v[0] != '/' && s->dir && *s->dir)
    look = dc_arena_printf(&s->arena, "%s/%s", s->dir, v);
  else if (v[0] != '/')
    look = dc_arena_printf(&s->arena, "./%s", v);
  char *key = dc_arena_printf(&s->arena, "kernel_models\x1f%s", look);
  fe_catref *r = dc_map_get(&s->catalog, key);
  if (!r) {
    r = dc_arena_alloc(&s->arena, sizeof *r);
    r->name = look;
    r->root = n;
    dc_map_put(&s->catalog, key, r);
  }
  p->kernel_models = r->name;
}

/* schema: system: {gpu, gpus, hosts, gpus_per_host, overheads, links:
 * {nvlink, pcie, nic, latency}}; gpus = hosts × gpus_per_host. */
void res_system(fe_rctx *c, dc_point *p, bool fill) {
  const fe_catref *r =
      res_catalog(c, "system.gpu", "gpus", DEFAULT_GPU, fill);
  p->gpu = r ? r->name : DEFAULT_GPU;
  /* fp8 support, for the cross-key precision check: the entry's
   * fp8_tflops (datasheet, 0 or absent when the GPU has no fp8) */
  c->x.gpu = p->gpu;
  c->x.host_size = catalog_host_size(r);
  c->x.gpu_fp8 = false;
  const dc_node *f8 = r && r->root ? dc_node_get(r->root, "fp8_tflops") : NULL;
  double f8v = 0;
  if (f8 && fe_leaf_num(f8, "fp8_tflops", NULL, &f8v, NULL) && f8v > 0)
    c->x.gpu_fp8 = true;
  /* what the fused style's kernels need (fe_xcheck): an NVIDIA GPU,
   * tensor cores for half precision, Ampere or later for DCN */
  c->x.gpu_nvidia = c->x.gpu_tc = false;
  c->x.gpu_arch = NULL;
  if (r && r->root) {
    const dc_node *v = dc_node_get(r->root, "vendor");
    const dc_node *ar = dc_node_get(r->root, "arch");
    const dc_node *tc = dc_node_get(r->root, "tensor_cores");
    c->x.gpu_nvidia = v && v->kind == DC_NODE_SCALAR &&
                      !strcmp(v->text, "nvidia");
    c->x.gpu_tc = tc && tc->kind == DC_NODE_SCALAR && !strcmp(tc->text, "true");
    c->x.gpu_arch = ar && ar->kind == DC_NODE_SCALAR ? ar->text : NULL;
  }
  const dc_node *gn = res_get(c, "system.gpu");
  c->x.gpu_sp = gn ? gn->span : (dc_span){0};
  r = res_catalog(c, "system.overheads", "overheads", DEFAULT_OVERHEADS,
                  fill);
  p->overheads = r ? r->name : DEFAULT_OVERHEADS;
  res_kernel_models(c, p);
  const dc_node *n;
  if ((n = res_int(c, "system.gpus", &c->x.gpus))) c->x.gpus_sp = n->span;
  if ((n = res_int(c, "system.hosts", &c->x.hosts))) c->x.hosts_sp = n->span;
  if ((n = res_int(c, "system.gpus_per_host", &c->x.gph)))
    c->x.gph_sp = n->span;
  p->nvlink_gbps = res_gbps(c, "system.links.nvlink", 0);
  p->pcie_gbps = res_gbps(c, "system.links.pcie", 0);
  p->nic_gbps = res_gbps(c, "system.links.nic", 0);
  p->link_latency_us = -1;
  n = res_get(c, "system.links.latency");
  if (n && !fe_leaf_time(n, "system.links.latency",
                         fe_schema_find("system.links.latency"),
                         &p->link_latency_us, c->d))
    res_fail(c);
  res_topology(c, p);
}

/* schema: system.nvlink_domain (GPUs on one NVLink/NVSwitch fabric),
 * system.links.sharp: none | nvls | ib | both. Unwritten, both come from
 * the GPU's catalog entry (`nvlink_domain`, `sharp`: 8 on DGX/HGX boards,
 * 72 on GB200 NVL72, 1-4 on PCIe cards), which the device applies
 * (runtime/links.c): 0 and -1 here mean "the catalog's". The one place the
 * front end decides a point's NVLink domain (spec/collectives.md). */
void res_topology(fe_rctx *c, dc_point *p) {
  int64_t dom = 0;
  res_int(c, "system.nvlink_domain", &dom);
  p->nvlink_domain = (int32_t)dom;
  p->sharp = res_get(c, "system.links.sharp")
                 ? res_enum(c, "system.links.sharp", 0)
                 : -1;
}

/* schema: system.framework: pytorch | torchrec | fused (default pytorch);
 * system.pipeline (torchrec only, default true). TorchRec and the fused
 * style look every table up with one table-batched kernel (FBGEMM's TBE,
 * a vendor's fused lookup): they imply model.embedding_kernel: batched,
 * and a written per_table conflicts. Whether the GPU can run the fused
 * kernels is a cross-key check (fe_xcheck: the GPU may be swept). */
void res_framework(fe_rctx *c, dc_point *p) {
  p->framework = (dc_framework)res_enum(c, "system.framework", 0);
  const dc_node *fn = res_get(c, "system.framework");
  bool fw_varies = res_varies(c, "system.framework");
  c->x.fused = p->framework == DC_FRAMEWORK_FUSED;
  c->x.fw_sp = fn ? fn->span : (dc_span){0};
  const dc_node *pn = res_get(c, "system.pipeline");
  p->pipeline = res_bool(c, "system.pipeline", true) &&
                p->framework == DC_FRAMEWORK_TORCHREC;
  if (pn && p->framework != DC_FRAMEWORK_TORCHREC && !fw_varies) {
    if (c->d) {
      const dc_node *k = dc_node_key(res_get(c, "system"), "pipeline");
      dc_diag *g = dc_diag_error(
          c->d, DC_DIAG_CONFLICT, k ? k->span : pn->span,
          "'system.pipeline' applies only to framework 'torchrec', and "
          "this study's framework is '%s'",
          dc_framework_name(p->framework));
      dc_diag_set_help(g, "remove it, or set system.framework: torchrec");
    }
    res_fail(c);
  }
  if (p->framework == DC_FRAMEWORK_PYTORCH) return;
  const dc_node *kn = res_get(c, "model.embedding_kernel");
  if (kn && !res_in_preset(kn->span) &&
      p->embedding_kernel == DC_EMBEDDING_PER_TABLE && !fw_varies &&
      !res_varies(c, "model.embedding_kernel")) {
    if (c->d) {
      dc_diag *g = dc_diag_error(
          c->d, DC_DIAG_CONFLICT, kn->span,
          "model.embedding_kernel per_table cannot run under framework "
          "'%s': it looks every table up with one table-batched kernel",
          dc_framework_name(p->framework));
      dc_diag_set_help(g, "remove model.embedding_kernel (the framework "
                          "implies batched), or use system.framework: "
                          "pytorch");
    }
    res_fail(c);
  }
  p->embedding_kernel = DC_EMBEDDING_BATCHED;
}

/* schema: training.{sparse_optimizer (default: optimizer),
 * embedding_precision, comm_precision (default fp32)}. fp8 needs a GPU
 * with fp8 support (a cross-key check: the GPU may be swept). Tables in
 * anything but fp32 are FBGEMM's (stock DLRM's nn.EmbeddingBag tables
 * are fp32), so they need embedding_kernel: batched. */
void res_storage(fe_rctx *c, dc_point *p) {
  p->sparse_optimizer =
      (dc_optimizer)res_enum(c, "training.sparse_optimizer", p->optimizer);
  p->embedding_precision =
      (dc_storage)res_enum(c, "training.embedding_precision", 0);
  /* comm's list (fe_enum_comm_storage) has no int8 */
  static const dc_storage comm[] = {DC_STORAGE_FP32, DC_STORAGE_FP16,
                                    DC_STORAGE_BF16, DC_STORAGE_FP8};
  p->comm_precision = comm[res_enum(c, "training.comm_precision", 0)];
  static const char *const keys[] = {"training.embedding_precision",
                                     "training.comm_precision"};
  dc_storage v[] = {p->embedding_precision, p->comm_precision};
  for (size_t i = 0; i < DC_COUNTOF(keys); i++) {
    if (v[i] != DC_STORAGE_FP8 || c->x.fp8_key) continue;
    const dc_node *n = res_get(c, keys[i]);
    c->x.fp8_key = keys[i];
    if (n) c->x.fp8_sp = n->span;
  }
  dc_storage e = p->embedding_precision;
  if (e != DC_STORAGE_FP32 && p->embedding_kernel != DC_EMBEDDING_BATCHED &&
      !res_varies(c, "model.embedding_kernel")) {
    if (c->d) {
      const dc_node *n = res_get(c, "training.embedding_precision");
      dc_diag *g = dc_diag_error(
          c->d, DC_DIAG_CONFLICT,
          n ? n->span : res_missing_span(c, "training"),
          "training.embedding_precision %s needs model.embedding_kernel: "
          "batched",
          dc_storage_name(e));
      dc_diag_set_help(g, "stock DLRM's nn.EmbeddingBag tables (per_table) "
                          "are fp32; FBGEMM's table-batched lookup "
                          "(batched) holds %s rows",
                       dc_storage_name(e));
    }
    res_fail(c);
  }
}

/* schema: capacity: {target_step_ms, gpus: [counts], gpu: name | [names],
 * gpus_per_host}. Defaults: gpus [1, 2, 4, 8, 16, 32, 64], gpu the
 * point's system.gpu, gpus_per_host each type's catalog host size (the
 * rule a bare system.gpus follows). Counts are sorted ascending and
 * deduplicated (the search takes the first that meets the target). */
void res_capacity(fe_rctx *c, dc_point *p, bool fill) {
  static const int32_t def_counts[] = {1, 2, 4, 8, 16, 32, 64};
  p->capacity_target_ms = 0;
  p->capacity_gpus_per_host = NULL;
  p->n_capacity_gpus = 0;
  p->capacity_gpus = NULL;
  p->n_capacity_types = 0;
  p->capacity_types = NULL;
  const dc_node *n = res_get(c, "capacity.target_step_ms");
  if (!n) {
    if (res_get(c, "capacity") && c->d) {
      dc_diag_error(c->d, DC_DIAG_MISSING_KEY,
                    dc_node_key(c->s->root, "capacity")
                        ? dc_node_key(c->s->root, "capacity")->span
                        : res_missing_span(c, "capacity"),
                    "'capacity' has no 'target_step_ms'");
      res_fail(c);
    }
    return;
  }
  if (!res_num(c, "capacity.target_step_ms", &p->capacity_target_ms)) return;
  int64_t q = 0; /* 0: each type's catalog host size */
  res_int(c, "capacity.gpus_per_host", &q);
  n = res_get(c, "capacity.gpus");
  if (n) {
    int64_t *v = NULL;
    int32_t k = 0;
    if (!res_intlist(c, n, "capacity.gpus", fe_schema_find("capacity.gpus"),
                     1, &v, &k)) {
      res_fail(c);
      return;
    }
    int32_t *w = dc_arena_array(c->a, (size_t)k, sizeof *w);
    int32_t m = 0;
    for (int32_t i = 0; i < k; i++) { /* insertion sort, dedup */
      int32_t x = (int32_t)v[i], j = m;
      bool dup = false;
      for (int32_t y = 0; y < m; y++) dup |= w[y] == x;
      if (dup) continue;
      while (j > 0 && w[j - 1] > x) {
        w[j] = w[j - 1];
        j--;
      }
      w[j] = x;
      m++;
    }
    p->capacity_gpus = w;
    p->n_capacity_gpus = m;
  } else {
    p->capacity_gpus = def_counts;
    p->n_capacity_gpus = (int32_t)DC_COUNTOF(def_counts);
  }
  n = res_get(c, "capacity.gpu");
  const char **names;
  int32_t *hs;
  if (!n) {
    names = dc_arena_array(c->a, 1, sizeof *names);
    hs = dc_arena_array(c->a, 1, sizeof *hs);
    names[0] = p->gpu;
    hs[0] = (int32_t)(q ? q : c->x.host_size);
    p->capacity_types = names;
    p->capacity_gpus_per_host = hs;
    p->n_capacity_types = 1;
    c->x.capacity_assumed = q == 0;
    return;
  }
  size_t cnt = n->kind == DC_NODE_SEQ ? n->n : 1;
  if (n->kind == DC_NODE_SEQ && cnt == 0) {
    if (c->d)
      dc_diag_error(c->d, DC_DIAG_EMPTY_LIST, n->span,
                    "'capacity.gpu' is empty");
    res_fail(c);
    return;
  }
  names = dc_arena_array(c->a, cnt, sizeof *names);
  hs = dc_arena_array(c->a, cnt, sizeof *hs);
  c->x.capacity_assumed = q == 0;
  for (size_t i = 0; i < cnt; i++) {
    const dc_node *it = n->kind == DC_NODE_SEQ ? n->items[i] : n;
    const char *name = NULL;
    if (!fe_leaf_str(it, "capacity.gpu", &name, c->d)) {
      res_fail(c);
      return;
    }
    const fe_catref *r =
        fe_study_catalog((dc_study *)c->s, "gpus", name, it, c->d, fill);
    if (!r) {
      res_fail(c);
      return;
    }
    names[i] = r->name;
    hs[i] = (int32_t)(q ? q : catalog_host_size(r));
  }
  p->capacity_types = names;
  p->capacity_gpus_per_host = hs;
  p->n_capacity_types = (int32_t)cnt;
}
