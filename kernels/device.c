/*
 * device.c — a GPU catalog entry (spec/gpus/<name>.yaml, or a user's file)
 * turned into the dc_device the models read. The catalog lookup itself
 * (case-insensitive names and aliases, paths) is the support library's;
 * this file only knows the schema of one entry (spec/gpus/README.md):
 *
 *   name, aliases, vendor, arch, chip, year, sms, boost_mhz, l2, hbm,
 *   memory, mem_bw, fp32_tflops, [fp32_matrix_tflops], tf32_tflops,
 *   fp16_tflops, bf16_tflops, fp8_tflops, tensor_cores, pcie_gen, pcie,
 *   nvlink, nic, tdp_w, [llc], [sustained_mhz], [kernel_models],
 *   achievable: {dram, fp32, tensor, l2_bw, h2d_pageable, link, source},
 *   latency: {kernel_us, link_us, nic_us, source}, source
 *
 * Required keys are the ones a model needs; every problem of an entry is
 * reported (not just the first) at the offending node.
 */
#include <math.h>
#include <string.h>

#include "kernels/kernels.h"

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

/* A non-negative number (`def` when absent and optional). */
static double num(entry_reader *r, const dc_node *map, const char *key,
                  bool required, double def) {
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
  return v;
}

static double gbps(entry_reader *r, const dc_node *map, const char *key,
                   bool required, double def) {
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
  return v;
}

static int64_t bytes(entry_reader *r, const dc_node *map, const char *key,
                     bool required) {
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
  return v;
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
  out->year = (int32_t)num(&r, m, "year", false, 0);
  double sms = num(&r, m, "sms", true, 1);
  if (sms < 1 || sms > 100000) {
    dc_diag_error(d, DC_DIAG_BAD_CATALOG, r.where, "'sms' out of range");
    r.ok = false;
    sms = 1;
  }
  out->sms = (int32_t)sms;
  out->boost_mhz = num(&r, m, "boost_mhz", true, 1000);
  out->sustained_mhz = num(&r, m, "sustained_mhz", false, 0);
  out->l2_bytes = bytes(&r, m, "l2", true);
  out->llc_bytes = bytes(&r, m, "llc", false);
  out->hbm_bytes = bytes(&r, m, "hbm", true);
  out->dram_gbps = gbps(&r, m, "mem_bw", true, 1);
  out->fp32_tflops = num(&r, m, "fp32_tflops", true, 1);
  out->fp32_matrix_tflops = num(&r, m, "fp32_matrix_tflops", false, 0);
  out->tf32_tflops = num(&r, m, "tf32_tflops", false, 0);
  out->fp16_tflops = num(&r, m, "fp16_tflops", false, 0);
  out->bf16_tflops = num(&r, m, "bf16_tflops", false, 0);
  out->fp8_tflops = num(&r, m, "fp8_tflops", false, 0);
  out->tensor_cores = flag(&r, m, "tensor_cores", false);
  out->pcie_gen = (int32_t)num(&r, m, "pcie_gen", false, 0);
  out->pcie_gbps = gbps(&r, m, "pcie", true, 1);
  out->nvlink_gbps = gbps(&r, m, "nvlink", false, 0);
  out->nic_gbps = gbps(&r, m, "nic", false, 12.5);
  out->tdp_w = num(&r, m, "tdp_w", false, 0);

  /* Achievable fractions: where an entry has none, the rules of thumb of
   * reference/gpus.md (0.9 of HBM, 0.95 of fp32, 0.8 of tensor peaks). */
  const dc_node *ach = dc_node_get(m, "achievable");
  out->dram_eff = num(&r, ach, "dram", false, 0.9);
  out->fp32_eff = num(&r, ach, "fp32", false, 0.95);
  out->tensor_eff = num(&r, ach, "tensor", false, 0.8);
  out->link_eff = num(&r, ach, "link", false, 0.8);
  out->l2_gbps = gbps(&r, ach, "l2_bw", false, 3.0 * out->dram_gbps);
  out->h2d_pageable_gbps =
      gbps(&r, ach, "h2d_pageable", false, 0.5 * out->pcie_gbps);
  out->eff_source = str(&r, ach, "source", ach != NULL, "rule of thumb");
  const dc_node *lat = dc_node_get(m, "latency");
  out->kernel_floor_us = num(&r, lat, "kernel_us", false, 2.0);
  out->link_latency_us = num(&r, lat, "link_us", false, 3.0);
  out->nic_latency_us = num(&r, lat, "nic_us", false, 8.0);

  const char *pos[] = {"dram", "fp32", "tensor", "link"};
  double vals[] = {out->dram_eff, out->fp32_eff, out->tensor_eff,
                   out->link_eff};
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
