/*
 * test_kernels_family.c — the fitted bandwidth models of kernel families
 * (kernels/family.c, spec/calibrate.md): a family's model is its analytic
 * model with the fitted fraction and latency (checked by hand on a toy
 * device), the reader refuses what physics forbids, the fit recovers the
 * parameters that generated its rows, and the shipped H200 families price
 * the lookups (never below a kernel's floor) while a GPU without
 * them keeps the analytic models. And the fitted MLPs' distance-to-data
 * gate (kernels/mlp.c): a shipped model prices the shapes near its rows
 * only, says why, and writes and reads its gate back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "kernels/kernels.h"
#include "tests/unit/toy_device.h"

/* 1000 GB/s datasheet DRAM, fp32 10 TFLOP/s, kernel 2 µs. */
#define NEAR(a, b) assert_true(fabs((a) - (b)) <= 1e-9 * fmax(1, fabs(b)))

static bool parse(const char *text, dc_kfams *f, dc_arena *a, dc_diags *d) {
  const dc_source *src = dc_source_from_memory("t.yaml", text, strlen(text), a);
  dc_node *root = dc_yaml_parse(src, a, d);
  return root && dc_kfams_from_node(root, f, d);
}

static dc_kernel ew(int64_t n, double bytes, bool indexed) {
  dc_kernel k = {0};
  k.kind = DC_KERNEL_ELEMENTWISE;
  k.scale = 1;
  k.u.ew.elements = n;
  k.u.ew.flops_per_elem = 1;
  k.u.ew.bytes_per_elem = bytes;
  k.u.ew.indexed = indexed;
  return k;
}

/* 1e6 elements × 12 B = 12 MB at 0.5 × 1000 GB/s = 24 µs, plus 3 µs. */
static void family_by_hand(void **st) {
  (void)st;
  dc_device v = toy();
  dc_kfam f = {.set = true, .fraction = 0.5, .latency_us = 3};
  dc_kernel k = ew(1000000, 12, false);
  NEAR(dc_kfam_us(&k, &v, &f), 27.0);
  assert_int_equal(dc_kfam_of(&k), DC_KFAM_ELEMENTWISE);
  k.u.ew.indexed = true;
  assert_int_equal(dc_kfam_of(&k), DC_KFAM_INDEXED);
  /* a copy reads and writes: 2 × 1 MB at 500 GB/s = 4 µs + 3 */
  dc_kernel c = {.kind = DC_KERNEL_CONCAT, .scale = 1};
  c.u.copy.bytes = 1000000;
  NEAR(dc_kfam_us(&c, &v, &f), 7.0);
  /* a lookup's issue bound: 1000 bags of L = 10, 1 ns a row and 2 a bag:
   * 10 + 2 µs over the 3 µs latency beats its 3.1 µs of bytes */
  dc_emb_group g = {.tables = 1, .rows = 1000000, .dim = 32, .pooling = 10};
  dc_kernel e = {.kind = DC_KERNEL_EMBEDDING_BWD, .scale = 1};
  e.u.emb.batch = 1000;
  e.u.emb.n_groups = 1;
  e.u.emb.groups = &g;
  e.u.emb.stock = true;
  dc_kfam fe = {.set = true, .fraction = 0.5, .latency_us = 3, .row_ns = 1,
                .bag_ns = 2};
  NEAR(dc_kfam_us(&e, &v, &fe), 15.0);
  assert_int_equal(dc_kfam_of(&e), DC_KFAM_EMB_BWD_STOCK);
  e.u.emb.stock = false;
  assert_int_equal(dc_kfam_of(&e), DC_KFAM_EMB_BWD);
  dc_kernel gm = dc_kernel_gemm(64, 64, 64, 1, false, false, DC_DTYPE_FP32);
  assert_int_equal(dc_kfam_of(&gm), -1);
}

static void reader(void **st) {
  (void)st;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_kfams f;
  assert_true(parse("kind: families\nfamilies:\n"
                    "  reduce: {fraction: 0.25, latency_us: 3.5, rows: 9}\n",
                    &f, &a, &d));
  assert_true(f.f[DC_KFAM_REDUCE].set && !f.f[DC_KFAM_ELEMENTWISE].set);
  NEAR(f.f[DC_KFAM_REDUCE].fraction, 0.25);
  /* what the written file says, it reads back */
  dc_buf out = {0};
  dc_kfams_write_yaml(&f, "toy", NULL, &out);
  dc_kfams g;
  assert_true(parse(out.data, &g, &a, &d));
  NEAR(g.f[DC_KFAM_REDUCE].latency_us, 3.5);
  dc_buf_free(&out);
  /* faster than the datasheet, an unknown family, no kind: refused */
  static const char *const bad[] = {
      "kind: families\nfamilies:\n  elementwise: {fraction: 1.2, "
      "latency_us: 1}\n",
      "kind: families\nfamilies:\n  elementwize: {fraction: 0.5, "
      "latency_us: 1}\n",
      "kind: families\nfamilies:\n  concat: {fraction: 0.5}\n",
      "kind: families\nfamilies:\n  concat: {fraction: 0.5, latency_us: -1}\n",
      "families:\n  concat: {fraction: 0.5, latency_us: 1}\n"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    dc_diags e = {0};
    assert_false(parse(bad[i], &f, &a, &e));
    assert_true(e.errors > 0 && e.items[0].span.line > 0);
    dc_diags_free(&e);
  }
  dc_diags_free(&d);
  dc_arena_free(&a);
}

/* Rows made by a known model (fraction 0.4, latency 2.5 µs) with ±3 %
 * alternating noise: the fit finds both within a few per cent and its
 * held-out error is the noise's. */
static void fit_recovers(void **st) {
  (void)st;
  dc_device v = toy();
  dc_kfam truth = {.set = true, .fraction = 0.4, .latency_us = 2.5};
  dc_fit_sample s[40];
  for (int i = 0; i < 40; i++) {
    s[i].k = ew((int64_t)1000 << (i % 20), 8 + 4 * (i / 20), false);
    s[i].time_us = dc_kfam_us(&s[i].k, &v, &truth) * (i % 2 ? 1.03 : 0.97);
    s[i].group = "ew";
  }
  dc_kfam f;
  assert_true(dc_kfam_fit(s, 40, &v, 5, &f));
  assert_true(fabs(f.fraction / 0.4 - 1) < 0.05);
  assert_true(fabs(f.latency_us / 2.5 - 1) < 0.1);
  assert_true(f.heldout_gmae < 0.06);
  assert_int_equal(f.rows, 40);
  assert_false(dc_kfam_fit(s, 1, &v, 5, &f)); /* nothing to hold out */
}

/* The shipped H200 families price both lookups; the V100 has none. */
static void shipped(void **st) {
  (void)st;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_device h, v;
  assert_true(dc_device_lookup("H200", &h, &a, &d));
  assert_true(dc_device_lookup("V100", &v, &a, &d));
  const dc_kmodels *kh = dc_kmodels_for(&h), *kv = dc_kmodels_for(&v);
  assert_non_null(dc_kmodels_families(kh));
  assert_null(dc_kmodels_families(kv));
  dc_emb_group g = {.tables = 1, .rows = 1000000, .dim = 64, .pooling = 100};
  dc_kernel e = {.kind = DC_KERNEL_EMBEDDING_BWD, .scale = 1};
  e.u.emb.batch = 16384;
  e.u.emb.n_groups = 1;
  e.u.emb.groups = &g;
  e.u.emb.stock = true;
  assert_string_equal(dc_kernel_model_used(&e, kh), "fitted-bandwidth");
  assert_string_equal(dc_kernel_model_used(&e, kv), "heuristic-enhanced");
  e.u.emb.stock = false; /* the table-batched lookup: its own family */
  assert_string_equal(dc_kernel_model_used(&e, kh), "fitted-bandwidth");
  dc_buf why = {0};
  dc_kernel_model_why(&e, kh, &why);
  assert_non_null(strstr(why.data, "fitted family embedding_bwd:"));
  dc_buf_free(&why);
  /* never below the floor, for any size */
  for (int i = 0; i < 30; i++) {
    dc_kernel k = ew((int64_t)1 << i, 12, i % 2);
    dc_kprice p;
    dc_kernel_price(&k, &h, kh, &p);
    assert_true(p.us >= p.floor.us && isfinite(p.us));
    assert_true(p.us >= (double)k.u.ew.elements * 12 / (h.dram_gbps * 1e3));
  }
  dc_diags_free(&d);
  dc_arena_free(&a);
}

static dc_kernel gemm(int64_t m, int64_t n, int64_t k, dc_dtype t) {
  return dc_kernel_gemm(m, n, k, 1, false, false, t);
}

static void gate(void **st) {
  (void)st;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_device v;
  assert_true(dc_device_lookup("V100", &v, &a, &d));
  const dc_kmodels *km = dc_kmodels_for(&v);
  const dc_mlp *m = dc_kmodels_get(km, DC_KERNEL_GEMM);
  assert_true(m->n_support > 100 && m->gate_radius > 0);
  /* a DeepBench shape is a fitted row or near one; the shape
   * with one side of 64 and k = 1024 is far from all of them */
  dc_kernel in = gemm(1760, 128, 1760, DC_DTYPE_FP32);
  dc_kernel out = gemm(64, 1024, 1024, DC_DTYPE_FP32);
  assert_true(dc_mlp_covers(m, &in));
  assert_false(dc_mlp_covers(m, &out));
  assert_true(dc_mlp_gate_distance(m, &out) > m->gate_radius);
  assert_string_equal(dc_kernel_model_used(&in, km), "mlp");
  assert_string_equal(dc_kernel_model_used(&out, km), "analytic");
  dc_buf why = {0};
  dc_kernel_model_why(&out, km, &why);
  assert_non_null(strstr(why.data, "beyond the gate"));
  dc_buf_free(&why);
  /* written and read back: the same gate */
  dc_buf y = {0};
  dc_mlp_write_yaml(m, NULL, &y);
  const dc_source *src = dc_source_from_memory("g.yaml", y.data, y.len, &a);
  dc_mlp back;
  assert_true(dc_mlp_from_node(dc_yaml_parse(src, &a, &d), &back, &a, &d));
  assert_int_equal(back.n_support, m->n_support);
  assert_true(back.gate_radius == m->gate_radius);
  assert_true(dc_mlp_covers(&back, &in) && !dc_mlp_covers(&back, &out));
  dc_buf_free(&y);
  /* a support list of partial rows is refused at its line */
  static const char *bad =
      "kind: gemm\nfeatures: [ln_m, ln_n]\nfeature_mean: [0, 0]\n"
      "feature_std: [1, 1]\ngate_radius: 0.5\nsupport: [1, 2, 3]\n"
      "target: {mean: 0, std: 1}\ndtypes: [fp32]\n"
      "layers:\n  - {in: 2, out: 1, w: [1, 1], b: [0]}\n";
  dc_diags e = {0};
  src = dc_source_from_memory("b.yaml", bad, strlen(bad), &a);
  assert_false(dc_mlp_from_node(dc_yaml_parse(src, &a, &e), &back, &a, &e));
  assert_true(e.errors == 1 && e.items[0].span.line == 6);
  dc_diags_free(&e);
  dc_diags_free(&d);
  dc_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(family_by_hand),
      cmocka_unit_test(reader),
      cmocka_unit_test(fit_recovers),
      cmocka_unit_test(shipped),
      cmocka_unit_test(gate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
