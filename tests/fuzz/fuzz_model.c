/*
 * fuzz_model.c — libFuzzer target over the fitted-model reader
 * (spec/kernels/<gpu>/<kind>.yaml, written by `dlrmc fit -o`): the input
 * is parsed from memory and read as a model; when it loads, it is
 * prepared for inference, asked for the domain and a prediction on a
 * small and a large kernel of its kind, and written back; the written
 * model must load again. Any crash, hang or sanitizer report is a bug;
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
  }
  fuzz_render_diags(&d);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return 0;
}
