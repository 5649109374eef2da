/*
 * fuzz_model.c — libFuzzer target over the fitted-model readers
 * (spec/kernels/<gpu>/<kind>.yaml, written by `dlrmc fit -o`, and
 * families.yaml, written by `dlrmc calibrate -o`): the input
 * is parsed from memory and read as a model; when it loads, it is
 * prepared for inference, asked for the domain and a prediction on a
 * small and a large kernel of its kind, and written back; the written
 * model must load again. A families file is priced on a kernel of each
 * family it holds (every answer finite and positive) and written back,
 * and must load again. Any crash, hang or sanitizer report is a bug;
 * a rejected file (with its diagnostic) is fine. Built with clang
 * -fsanitize=fuzzer when DC_FUZZ=ON; corpus_replay.c drives the same
 * function over the corpus under any compiler.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>

#include "kernels/kernels.h"
#include "tests/fuzz/scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool load(const char *text, size_t len, dc_mlp *m, dc_arena *a,
                 dc_diags *d) {
  const dc_source *src = dc_source_from_memory("fuzz-model.yaml", text, len, a);
  dc_node *root = dc_yaml_parse(src, a, d);
  return root && dc_mlp_from_node(root, m, a, d);
}

static bool load_fams(const char *text, size_t len, dc_kfams *f, dc_arena *a,
                      dc_diags *d) {
  const dc_source *src = dc_source_from_memory("fuzz-families.yaml", text,
                                               len, a);
  dc_node *root = dc_yaml_parse(src, a, d);
  return root && dc_kfams_from_node(root, f, d);
}

/* A kernel of each family, priced on a plain device. */
static void price_families(const dc_kfams *f, dc_arena *a) {
  static const dc_kernel_kind kinds[] = {
      DC_KERNEL_ELEMENTWISE, DC_KERNEL_REDUCE, DC_KERNEL_CONCAT,
      DC_KERNEL_MEMCPY_D2D, DC_KERNEL_EMBEDDING_FWD, DC_KERNEL_EMBEDDING_BWD};
  dc_device dev = {.name = "fuzz", .sms = 80, .boost_mhz = 1500,
                   .l2_bytes = 6 << 20, .dram_gbps = 900, .dram_eff = 0.9,
                   .l2_gbps = 2700, .fp32_tflops = 15, .fp32_eff = 0.95,
                   .pcie_gbps = 16, .kernel_floor_us = 2};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    for (int stock = 0; stock < 2; stock++) {
      dc_kernel k;
      dc_kernel_params_init(&k, kinds[i], a);
      if (k.kind == DC_KERNEL_EMBEDDING_FWD || k.kind == DC_KERNEL_EMBEDDING_BWD)
        k.u.emb.stock = stock;
      else
        k.u.ew.indexed = stock && k.kind != DC_KERNEL_CONCAT &&
                         k.kind != DC_KERNEL_MEMCPY_D2D;
      int fam = dc_kfam_of(&k);
      if (fam < 0 || !f->f[fam].set) continue;
      double t = dc_kfam_us(&k, &dev, &f->f[fam]);
      if (!(t > 0) || !(t < 1e300)) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 18)) return 0;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  d.max_errors = 50;
  dc_mlp m;
  if (load((const char *)data, size, &m, &a, &d)) {
    dc_mlp_prepare(&m, &a);
    for (int big = 0; big < 2; big++) {
      dc_kernel k;
      dc_kernel_params_init(&k, m.kind, &a);
      if (big && m.kind == DC_KERNEL_GEMM) {
        k.u.gemm.m = 1 << 20;
        k.u.gemm.n = 4096;
        k.u.gemm.k = 4096;
      }
      (void)dc_mlp_covers(&m, &k);
      (void)dc_mlp_predict_us(&m, &k);
    }
    dc_buf out = {0};
    dc_mlp_write_yaml(&m, "# fuzz\n", &out);
    dc_mlp again;
    if (!load(out.data, out.len, &again, &a, &d)) abort();
    dc_buf_free(&out);
  } else {
    dc_kfams f;
    dc_diags d2 = {0};
    if (load_fams((const char *)data, size, &f, &a, &d2)) {
      price_families(&f, &a);
      dc_buf out = {0};
      dc_kfams_write_yaml(&f, "fuzz", "# fuzz\n", &out);
      dc_kfams again;
      if (!load_fams(out.data, out.len, &again, &a, &d2)) abort();
      dc_buf_free(&out);
    }
    fuzz_render_diags(&d2);
    dc_diags_free(&d2);
  }
  fuzz_render_diags(&d);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return 0;
}
