/*
 * device.c — a GPU catalog entry (spec/gpus/<name>.yaml, or a user's file)
 * turned into the dc_device the models read. The catalog lookup itself
 * (case-insensitive names and aliases, paths) is the support library's;
 * this file only knows the schema of one entry (spec/gpus/README.md):
 *
 *   name, aliases, vendor, arch, chip, year, sms, boost_mhz, l2, hbm,
 *   memory, mem_bw, fp32_tflops, [fp32_matrix_tflops], tf32_tflops,
 *   fp16_tflops, bf16_tflops, fp8_tflops, tensor_cores, pcie_gen, pcie,
 *   nvlink, nic, [gpus_per_host], tdp_w, [llc], [sustained_mhz],
 *   [kernel_models], [kernel_families],
 *   [host_link], [host_memory],
 *   achievable: {dram, fp32, tensor, l2_bw, h2d_pageable, link,
 *   h2d_pageable_direct, [host_link], source},
 *   latency: {kernel_us, link_us, nic_us, source}, source
 *
 * Required keys are the ones a model needs; every problem of an entry is
 * reported (not just the first) at the offending node.
 */
#include <math.h>
#include <string.h>

#include "kernels/kernels.h"

/* The ranges of spec/numbers.md ("GPU files"): wide enough for any
 * accelerator a datasheet describes, narrow enough that every product the
 * models take of them stays finite. */
#define MAX_GBPS 1e6     /* GB/s: 1 PB/s */
#define MAX_BYTES 1e15   /* 1 PB */
#define MAX_TFLOPS 1e6
#define MAX_MHZ 1e5
#define MAX_LAT_US 1e6
/* host_memory of an entry that gives none: 1 TiB, a two-socket server of
 * the GPU's generation (a rule of thumb, spec/gpus/README.md). */
#define DEFAULT_HOST_MEM (INT64_C(1) << 40)

typedef struct entry_reader {
  const dc_node *root;
  dc_span where; /* the document, for missing keys */
  dc_diags *d;
  bool ok;
} entry_reader;

static const dc_node *get(entry_reader *r, const dc_node *map,
                          const char *key, bool required) {
  const dc_node *n = dc_node_get(map, key);
  if (!n && required) {
    dc_diag_error(r->d, DC_DIAG_BAD_CATALOG, map ? map->span : r->where,
                  "GPU catalog entry has no '%s'", key);
    r->ok = false;
  }
  if (n && n->kind != DC_NODE_SCALAR) {
    dc_diag_error(r->d, DC_DIAG_BAD_CATALOG, n->span,
                  "'%s' must be a scalar, not %s", key,
                  dc_node_kind_name(n->kind));
    r->ok = false;
    return NULL;
  }
  return n;
}

/* A value outside the range spec/numbers.md gives its key, reported at
 * the value's own line (`def` is used in its place). */
static bool in_range(entry_reader *r, const dc_node *n, const char *key,
                     double v, double lo, double hi) {
  if (v >= lo && v <= hi) return true;
  dc_diag_error(r->d, DC_DIAG_OUT_OF_RANGE, n->span,
                "'%s' is %s; it must be between %.15g and %.15g", key,
                n->text, lo, hi);
  r->ok = false;
  return false;
}

/* A non-negative number in [lo, hi] (`def` when absent and optional). */
static double num(entry_reader *r, const dc_node *map, const char *key,
                  bool required, double def, double lo, double hi) {
  const dc_node *n = get(r, map, key, required);
  if (!n) return def;
  double v;
  const char *why = NULL;
  if (!dc_parse_double(n->text, &v, &why) || v < 0) {
    dc_diag_error(r->d, DC_DIAG_BAD_CATALOG, n->span,
                  "'%s' must be a non-negative number, got '%s'", key,
                  n->text);
    r->ok = false;
    return def;
  }
  return in_range(r, n, key, v, lo, hi) ? v : def;
}

static double gbps(entry_reader *r, const dc_node *map, const char *key,
                   bool required, double def, double lo) {
  const dc_node *n = get(r, map, key, required);
  if (!n) return def;
  double v;
  const char *why = NULL;
  if (!dc_parse_gbps(n->text, &v, &why) || v < 0) {
    dc_diag_error(r->d, DC_DIAG_BAD_CATALOG, n->span,
                  "'%s' must be a bandwidth such as 900GB/s: %s", key,
                  why ? why : "negative");
    r->ok = false;
    return def;
  }
  return in_range(r, n, key, v, lo, MAX_GBPS) ? v : def;
}

/* A size with its unit: a bare number in a datasheet file is ambiguous
 * (`hbm: 80` means 80 GB to a reader, 80 bytes to a parser), so it is
 * refused rather than read as bytes. */
static int64_t bytes(entry_reader *r, const dc_node *map, const char *key,
                     bool required, double lo) {
  const dc_node *n = get(r, map, key, required);
  if (!n) return 0;
  int64_t v;
  const char *why = NULL;
  if (!dc_parse_size(n->text, true, &v, &why) || v < 0) {
    dc_diag_error(r->d, DC_DIAG_BAD_CATALOG, n->span,
                  "'%s' must be a size such as 6MiB: %s", key,
                  why ? why : "negative");
    r->ok = false;
    return 0;
  }
  if (strspn(n->text, "0123456789.+-_ eE") == strlen(n->text) && v != 0) {
    dc_diag *g = dc_diag_error(r->d, DC_DIAG_BAD_CATALOG, n->span,
                               "'%s' is %s with no unit", key, n->text);
    dc_diag_set_help(g, "write the unit: %sGB, %sGiB or %sMiB (B alone "
                        "for bytes)", n->text, n->text, n->text);
    r->ok = false;
    return 0;
  }
  return in_range(r, n, key, (double)v, lo, MAX_BYTES) ? v : 0;
}

static const char *str(entry_reader *r, const dc_node *map, const char *key,
                       bool required, const char *def) {
  const dc_node *n = get(r, map, key, required);
  return n ? n->text : def;
}

static bool flag(entry_reader *r, const dc_node *map, const char *key,
                 bool def) {
  const dc_node *n = get(r, map, key, false);
  if (!n) return def;
  if (strcmp(n->text, "true") == 0) return true;
  if (strcmp(n->text, "false") == 0) return false;
  dc_diag_error(r->d, DC_DIAG_BAD_CATALOG, n->span,
                "'%s' must be true or false", key);
  r->ok = false;
  return def;
}

/* `sharp`: none | nvls | ib | both, as DC_SHARP_* bits (absent: none). */
static int32_t sharp_of(entry_reader *r, const dc_node *m) {
  static const char *const names[] = {"none", "nvls", "ib", "both"};
  const dc_node *n = get(r, m, "sharp", false);
  if (!n) return 0;
  for (int32_t i = 0; i < 4; i++)
    if (n->kind == DC_NODE_SCALAR && strcmp(n->text, names[i]) == 0) return i;
  dc_diag_error(r->d, DC_DIAG_BAD_CATALOG, n->span,
                "'sharp' must be none, nvls, ib or both");
  r->ok = false;
  return 0;
}

/* Fills `out` from one parsed entry; false (with diagnostics) when an entry
 * lacks a figure a model needs or has a malformed one. */
static bool device_from_node(const dc_catalog_entry *e, dc_device *out,
                             dc_diags *d) {
  entry_reader r = {e->root, e->root ? e->root->span : (dc_span){0}, d, true};
  const dc_node *m = e->root;
  memset(out, 0, sizeof *out);
  if (!m || m->kind != DC_NODE_MAP) {
    dc_diag_error(d, DC_DIAG_BAD_CATALOG, r.where,
                  "a GPU catalog entry must be a mapping");
    return false;
  }
  out->name = e->name;
  out->vendor = str(&r, m, "vendor", false, "nvidia");
  out->arch = str(&r, m, "arch", false, "");
  out->chip = str(&r, m, "chip", false, "");
  out->memory = str(&r, m, "memory", false, "");
  out->source = str(&r, m, "source", true, "");
  out->models_name = str(&r, m, "kernel_models", false, out->name);
  out->families_name = str(&r, m, "kernel_families", false, NULL);
  if (out->families_name && !dc_kfams_builtin(out->families_name)) {
    const dc_node *fn = dc_node_get(m, "kernel_families");
    dc_diag *g = dc_diag_error(
        d, DC_DIAG_BAD_CATALOG, fn ? fn->span : r.where,
        "kernel_families '%s' names no built-in folder with a "
        "families.yaml",
        out->families_name);
    dc_diag_set_help(g, "name a folder of spec/kernels/ that has one "
                        "(h200-sxm-141gb, h100-sxm5-80gb)");
    r.ok = false;
  }
  out->year = dc_f64_sat_i32(num(&r, m, "year", false, 0, 0, 9999));
  out->sms = dc_f64_sat_i32(num(&r, m, "sms", true, 1, 1, 100000));
  out->boost_mhz = num(&r, m, "boost_mhz", true, 1000, 1, MAX_MHZ);
  out->sustained_mhz = num(&r, m, "sustained_mhz", false, 0, 0, MAX_MHZ);
  out->l2_bytes = bytes(&r, m, "l2", true, 0);
  out->llc_bytes = bytes(&r, m, "llc", false, 0);
  out->hbm_bytes = bytes(&r, m, "hbm", true, 1);
  out->dram_gbps = gbps(&r, m, "mem_bw", true, 1, 1e-3);
  out->fp32_tflops = num(&r, m, "fp32_tflops", true, 1, 1e-6, MAX_TFLOPS);
  out->fp32_matrix_tflops =
      num(&r, m, "fp32_matrix_tflops", false, 0, 0, MAX_TFLOPS);
  out->tf32_tflops = num(&r, m, "tf32_tflops", false, 0, 0, MAX_TFLOPS);
  out->fp16_tflops = num(&r, m, "fp16_tflops", false, 0, 0, MAX_TFLOPS);
  out->bf16_tflops = num(&r, m, "bf16_tflops", false, 0, 0, MAX_TFLOPS);
  out->fp8_tflops = num(&r, m, "fp8_tflops", false, 0, 0, MAX_TFLOPS);
  out->tensor_cores = flag(&r, m, "tensor_cores", false);
  out->pcie_gen = dc_f64_sat_i32(num(&r, m, "pcie_gen", false, 0, 0, 100));
  out->pcie_gbps = gbps(&r, m, "pcie", true, 1, 1e-3);
  out->nvlink_gbps = gbps(&r, m, "nvlink", false, 0, 0);
  out->nic_gbps = gbps(&r, m, "nic", false, 12.5, 0);
  out->gpus_per_host = (int32_t)num(&r, m, "gpus_per_host", false, 8, 1, 1024);
  out->tdp_w = num(&r, m, "tdp_w", false, 0, 0, 1e6);
  out->host_link_gbps = gbps(&r, m, "host_link", false, out->pcie_gbps, 1e-3);
  out->host_memory_bytes = bytes(&r, m, "host_memory", false, 1);
  if (out->host_memory_bytes <= 0) out->host_memory_bytes = DEFAULT_HOST_MEM;
  /* absent: a GPU with NVLink is taken on an 8-GPU board, one without on
   * its own; no in-switch reduction (spec/gpus/README.md) */
  out->nvlink_domain = (int32_t)num(&r, m, "nvlink_domain", false,
                                    out->nvlink_gbps > 0 ? 8 : 1, 1, 65536);
  /* an NVSwitch board's fabric ends at its host (a host of fewer GPUs
   * than the board, HGX H100 4-GPU say, has a smaller one); a rack's
   * (GB200 NVL72: 72 GPUs, trays of 4) spans its hosts */
  out->nvlink_across_hosts = out->nvlink_domain > out->gpus_per_host;
  out->sharp = sharp_of(&r, m);

  /* Achievable fractions: where an entry has none, the rules of thumb of
   * spec/gpus/README.md (0.9 of HBM, 0.95 of fp32, 0.8 of tensor peaks). */
  const dc_node *ach = dc_node_get(m, "achievable");
  out->dram_eff = num(&r, ach, "dram", false, 0.9, 0, 1);
  out->fp32_eff = num(&r, ach, "fp32", false, 0.95, 0, 1);
  out->tensor_eff = num(&r, ach, "tensor", false, 0.8, 0, 1);
  out->link_eff = num(&r, ach, "link", false, 0.8, 0, 1);
  out->host_link_eff = num(&r, ach, "host_link", false, 0.75, 0, 1);
  out->l2_gbps = gbps(&r, ach, "l2_bw", false, 3.0 * out->dram_gbps, 1e-3);
  out->h2d_pageable_gbps =
      gbps(&r, ach, "h2d_pageable", false, 0.5 * out->pcie_gbps, 1e-3);
  out->h2d_pageable_direct = bytes(&r, ach, "h2d_pageable_direct", false, 0);
  out->eff_source = str(&r, ach, "source", ach != NULL, "rule of thumb");
  const dc_node *lat = dc_node_get(m, "latency");
  out->kernel_floor_us = num(&r, lat, "kernel_us", false, 2.0, 0, MAX_LAT_US);
  /* absent: NCCL's Simple ring step over NVLink and the network
   * (kernels/coll.c) */
  out->link_latency_us = num(&r, lat, "link_us", false, 3.4, 0, MAX_LAT_US);
  out->nic_latency_us = num(&r, lat, "nic_us", false, 14.0, 0, MAX_LAT_US);

  const char *pos[] = {"dram", "fp32", "tensor", "link", "host_link"};
  double vals[] = {out->dram_eff, out->fp32_eff, out->tensor_eff,
                   out->link_eff, out->host_link_eff};
  for (size_t i = 0; i < DC_COUNTOF(pos); i++)
    if (vals[i] <= 0 || vals[i] > 1) {
      dc_diag_error(d, DC_DIAG_BAD_CATALOG, ach ? ach->span : r.where,
                    "achievable.%s must be in (0, 1]", pos[i]);
      r.ok = false;
    }
  if (r.ok && (out->dram_gbps <= 0 || out->fp32_tflops <= 0 ||
               out->pcie_gbps <= 0 || out->l2_gbps <= 0 ||
               out->boost_mhz <= 0)) {
    dc_diag_error(d, DC_DIAG_BAD_CATALOG, r.where,
                  "mem_bw, fp32_tflops, pcie, l2_bw and boost_mhz must be "
                  "positive");
    r.ok = false;
  }
  return r.ok;
}

bool dc_device_lookup(const char *name, dc_device *out, dc_arena *a,
                      dc_diags *d) {
  dc_catalog_entry e;
  size_t before = d->errors;
  if (!dc_catalog_find("gpus", name, &e, a, d)) {
    if (d->errors > before) return false; /* a user file that failed */
    dc_diag *g = dc_diag_error(d, DC_DIAG_UNKNOWN_GPU, (dc_span){0},
                               "unknown GPU '%s'", name);
    const char *s = dc_catalog_suggest("gpus", name);
    if (s)
      dc_diag_set_help(g, "did you mean '%s'? ('dlrmc gpus' lists them)", s);
    else
      dc_diag_set_help(g, "'dlrmc gpus' lists the catalog");
    return false;
  }
  return device_from_node(&e, out, d);
}
