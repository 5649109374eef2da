/*
 * test_kernels_mlp.c — the MLP regressor and its trainer: inference
 * against a tiny network computed by hand, the YAML round trip, the
 * trainer recovering a known smooth function, determinism of `fit`, the
 * 80/20 split, the model's domain, and CSV diagnostics with
 * file:line:col.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "kernels/kernels.h"

/* One feature ln m (mean 0, std 1); hidden layer w = [1, −1], b = [0, 0.5];
 * output w = [2, 3], b = 0.1; target mean 1, std 2.
 * m = e: h = [relu(1), relu(−1 + 0.5)] = [1, 0]; out = 2 + 0.1 = 2.1;
 *        ln µs = 2.1·2 + 1 = 5.2 → e^5.2 = 181.27224187515122 µs.
 * m = 1: h = [0, 0.5]; out = 1.5 + 0.1 = 1.6; 1.6·2 + 1 = 4.2 →
 *        e^4.2 = 66.68633104092515 µs. */
static double w0[] = {1, -1}, b0[] = {0, 0.5}, w1[] = {2, 3}, b1[] = {0.1};

static dc_mlp tiny(void) {
  dc_mlp m;
  memset(&m, 0, sizeof m);
  m.kind = DC_KERNEL_GEMM;
  m.n_features = 1;
  m.features[0] = DC_MLPF_LN_M;
  m.feat_mean[0] = 0;
  m.feat_std[0] = 1;
  m.y_mean = 1;
  m.y_std = 2;
  m.dtypes = 1u << DC_DTYPE_FP32;
  m.n_layers = 2;
  m.width[0] = 1;
  m.width[1] = 2;
  m.width[2] = 1;
  m.w[0] = w0, m.b[0] = b0, m.w[1] = w1, m.b[1] = b1;
  return m;
}

static void inference_by_hand(void **st) {
  (void)st;
  dc_mlp m = tiny();
  dc_kernel k = {0};
  k.kind = DC_KERNEL_GEMM;
  k.u.gemm.m = 1;
  k.u.gemm.n = k.u.gemm.k = k.u.gemm.batch = 1;
  assert_true(fabs(dc_mlp_predict_us(&m, &k) - 66.68633104092515) < 1e-9);
  double x = 1.0; /* ln m = 1 */
  assert_true(fabs(dc_mlp_predict_raw(&m, &x) - 181.27224187515122) < 1e-9);
}

static dc_node *parse(const char *text, dc_arena *a, dc_diags *d) {
  const dc_source *src = dc_source_from_memory("m.yaml", text, strlen(text), a);
  return dc_yaml_parse(src, a, d);
}

/* A one-feature model file with `extra` keys after feature_std and one
 * layer `layer` must be refused with a diagnostic, not half-loaded. */
static void assert_refused(const char *extra, const char *layer) {
  char text[512];
  snprintf(text, sizeof text,
           "kind: gemm\nfeatures: [ln_m]\nfeature_mean: [0]\n"
           "feature_std: [1]\n%starget: {mean: 0, std: 1}\n"
           "dtypes: [fp32]\nlayers:\n  - %s\n",
           extra, layer);
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_node *root = parse(text, &a, &d);
  assert_non_null(root);
  dc_mlp r;
  assert_false(dc_mlp_from_node(root, &r, &a, &d));
  assert_true(d.errors > 0);
  dc_diags_free(&d);
  dc_arena_free(&a);
}

static void yaml_round_trip(void **st) {
  (void)st;
  dc_mlp m = tiny();
  dc_buf b = {0};
  dc_mlp_write_yaml(&m, "# test\n", &b);
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  const dc_source *src = dc_source_from_memory("m.yaml", b.data, b.len, &a);
  dc_node *root = dc_yaml_parse(src, &a, &d);
  assert_non_null(root);
  dc_mlp r;
  assert_true(dc_mlp_from_node(root, &r, &a, &d));
  double x = 1.0;
  assert_true(fabs(dc_mlp_predict_raw(&r, &x) - 181.27224187515122) < 1e-9);
  /* widths that do not chain */
  assert_refused("", "{in: 2, out: 1, w: [1, 2], b: [0]}");
  dc_diags_free(&d);
  dc_buf_free(&b);
  dc_arena_free(&a);
}

/* The domain: the range of the training rows, per feature. Rows (ln m,
 * transa) = (ln 35, 0) and (ln 8448, 1): m from 35 to 8448 and either
 * transa is inside; m = 34 or 8449, or any batch but 1 (ln_batch stays at
 * 0), is outside. It survives the YAML round trip exactly, and a file
 * with half of it, or its bounds the wrong way round, is refused. */
static void domain(void **st) {
  (void)st;
  dc_mlp m = tiny();
  m.n_features = 3;
  m.features[1] = DC_MLPF_TRANSA, m.features[2] = DC_MLPF_LN_BATCH;
  m.feat_mean[1] = m.feat_mean[2] = 0;
  m.feat_std[1] = m.feat_std[2] = 1;
  double w3[] = {1, -1, 0, 0, 0, 0};
  m.w[0] = w3, m.width[0] = 3;
  dc_kernel k = {0};
  k.kind = DC_KERNEL_GEMM;
  k.u.gemm.m = 10, k.u.gemm.n = k.u.gemm.k = k.u.gemm.batch = 1;
  assert_true(dc_mlp_covers(&m, &k)); /* no domain: everywhere */
  double rows[] = {log(35.0), 0, 0, log(8448.0), 1, 0};
  dc_mlp_set_domain(&m, rows, 2);
  int64_t in[] = {35, 36, 1000, 8448}, out[] = {1, 34, 8449, 100000};
  for (int i = 0; i < 4; i++) {
    k.u.gemm.m = in[i];
    assert_true(dc_mlp_covers(&m, &k));
    k.u.gemm.transa = true;
    assert_true(dc_mlp_covers(&m, &k));
    k.u.gemm.transa = false;
    k.u.gemm.batch = 2;
    assert_false(dc_mlp_covers(&m, &k));
    k.u.gemm.batch = 1;
    k.u.gemm.m = out[i];
    assert_false(dc_mlp_covers(&m, &k));
  }
  dc_buf b = {0};
  dc_mlp_write_yaml(&m, "# test\n", &b);
  dc_buf_putc(&b, '\0');
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_mlp r;
  assert_true(dc_mlp_from_node(parse(b.data, &a, &d), &r, &a, &d));
  assert_true(r.has_domain);
  for (int i = 0; i < 3; i++) {
    assert_true(r.feat_min[i] == m.feat_min[i]);
    assert_true(r.feat_max[i] == m.feat_max[i]);
  }
  k.u.gemm.m = 8448;
  assert_true(dc_mlp_covers(&r, &k));
  k.u.gemm.m = 8449;
  assert_false(dc_mlp_covers(&r, &k));
  static const char *const broken[] = {
      "feature_min: [0]\n",                     /* no feature_max */
      "feature_min: [2]\nfeature_max: [1]\n",   /* the wrong way round */
      "feature_min: [0]\nfeature_max: [1, 2]\n" /* a bound too many */
  };
  for (size_t i = 0; i < sizeof broken / sizeof *broken; i++)
    assert_refused(broken[i], "{in: 1, out: 1, w: [1], b: [0]}");
  /* numbers out of the ±1e6 range of spec/numbers.md (a weight of 1e308
   * priced NaN) */
  assert_refused("", "{in: 1, out: 1, w: [1e308], b: [0]}");
  assert_refused("", "{in: 1, out: 1, w: [1], b: [-2e6]}");
  assert_refused("feature_min: [0]\nfeature_max: [1e300]\n",
                 "{in: 1, out: 1, w: [1], b: [0]}");
  dc_diags_free(&d);
  dc_buf_free(&b);
  dc_arena_free(&a);
}

/* y = e^0.5 · m^0.8 · n^0.3 sampled on a grid; the trained model must
 * reproduce held-out points within a few percent. */
static void trainer_recovers_function(void **st) {
  (void)st;
  dc_arena a;
  dc_arena_init(&a);
  dc_mlp m;
  memset(&m, 0, sizeof m);
  m.kind = DC_KERNEL_TRANSPOSE;
  m.n_features = 2;
  m.features[0] = DC_MLPF_LN_M;
  m.features[1] = DC_MLPF_LN_N;
  m.dtypes = 1;
  double x[2 * 100], y[100];
  int n = 0;
  for (int i = 0; i < 10; i++)
    for (int j = 0; j < 10; j++) {
      x[2 * n] = log(8.0) + i * 0.5;
      x[2 * n + 1] = log(8.0) + j * 0.5;
      y[n] = exp(0.5 + 0.8 * x[2 * n] + 0.3 * x[2 * n + 1]);
      n++;
    }
  dc_mlp_train(&m, x, y, n, 2, 16, true, 5e-3, 400, 7, &a);
  double worst = 0;
  for (int i = 0; i < 9; i++) { /* points between the grid's */
    double q[2] = {log(8.0) + i * 0.5 + 0.25, log(8.0) + (8 - i) * 0.5 + 0.25};
    double want = exp(0.5 + 0.8 * q[0] + 0.3 * q[1]);
    double err = fabs(dc_mlp_predict_raw(&m, q) / want - 1);
    if (err > worst) worst = err;
  }
  assert_true(worst < 0.05);
  dc_arena_free(&a);
}

static void split_is_fixed(void **st) {
  (void)st;
  bool t1[100], t2[100];
  dc_fit_split(100, 42, t1);
  dc_fit_split(100, 42, t2);
  int n = 0;
  for (int i = 0; i < 100; i++) {
    assert_int_equal(t1[i], t2[i]);
    n += t1[i];
  }
  assert_int_equal(n, 20);
}

static const char *csv_text =
    "# a benchmark\n"
    "batch,m,n,k,transa,transb,dtype,time_us,mean_us\n"
    "1,64,64,64,0,0,fp32,5,5\n";

/* fit twice on the same data: the model YAML is the same bytes */
static void fit_is_deterministic(void **st) {
  (void)st;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_fit_sample s[60];
  for (int i = 0; i < 60; i++) {
    dc_kernel_params_init(&s[i].k, DC_KERNEL_GEMM, &a);
    s[i].k.u.gemm.m = 64 << (i % 6);
    s[i].k.u.gemm.n = 32 << (i / 6 % 5);
    s[i].k.u.gemm.k = 128 << (i % 4);
    double f = 2.0 * s[i].k.u.gemm.m * s[i].k.u.gemm.n * s[i].k.u.gemm.k;
    s[i].time_us = 5 + f / 1e7;
    s[i].group = "toy fp32";
  }
  dc_fit_opts o = {0};
  o.kind = DC_KERNEL_GEMM;
  o.grid = "small";
  o.epochs = 30;
  o.layers = 2;
  o.neurons = 8;
  dc_buf y1 = {0}, y2 = {0}, r1 = {0}, r2 = {0};
  dc_mlp m1, m2;
  assert_true(dc_fit_run(&o, s, 60, &m1, &r1, &a, &d));
  assert_true(dc_fit_run(&o, s, 60, &m2, &r2, &a, &d));
  dc_mlp_write_yaml(&m1, NULL, &y1);
  dc_mlp_write_yaml(&m2, NULL, &y2);
  assert_int_equal(y1.len, y2.len);
  assert_memory_equal(y1.data, y2.data, y1.len);
  assert_string_equal(r1.data, r2.data);
  assert_non_null(strstr(r1.data, "held-out: GMAE"));
  dc_buf_free(&y1), dc_buf_free(&y2), dc_buf_free(&r1), dc_buf_free(&r2);
  dc_diags_free(&d);
  dc_arena_free(&a);
}

static void csv_reads_and_reports(void **st) {
  (void)st;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_csv c;
  const dc_source *src =
      dc_source_from_memory("ok.csv", csv_text, strlen(csv_text), &a);
  assert_true(dc_csv_parse(src, &c, &a, &d));
  assert_int_equal(c.n_rows, 1);
  assert_int_equal(c.row_line[0], 3);
  assert_int_equal(dc_csv_col(&c, "time_us"), 7);
  /* a short row: the line is reported */
  const char *bad = "m,n,k,time_us\n1,2\n";
  src = dc_source_from_memory("bad.csv", bad, strlen(bad), &a);
  assert_false(dc_csv_parse(src, &c, &a, &d));
  assert_int_equal(d.items[d.count - 1].span.line, 2);
  dc_diags_free(&d);
  dc_arena_free(&a);
}

/* a bad cell in a DeepBench-style file: file:line:col of that cell */
static void fit_csv_bad_cell(void **st) {
  (void)st;
  char path[] = "/tmp/dc_fit_test_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char *t = "gpu,precision,m,n,k,transa,transb,time_us\n"
                  "V100,fp32,64,64,64,N,N,5.0\n"
                  "V100,fp32,64,x,64,N,N,5.0\n"
                  "V100,fp33,64,64,64,N,N,5.0\n";
  assert_true(write(fd, t, strlen(t)) == (ssize_t)strlen(t));
  close(fd);
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_fit_sample *s;
  int32_t n;
  assert_false(dc_fit_load_csv(DC_KERNEL_GEMM, path, &s, &n, &a, &d));
  assert_int_equal(d.errors, 2);
  assert_int_equal(d.items[0].span.line, 3);
  assert_int_equal(d.items[0].span.col, 14);
  assert_int_equal(d.items[1].span.line, 4);
  assert_int_equal(d.items[1].span.col, 6);
  assert_int_equal(n, 1);
  assert_true(s[0].k.u.gemm.batch == 1 && !s[0].k.u.gemm.transa);
  unlink(path);
  dc_diags_free(&d);
  dc_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(inference_by_hand),
      cmocka_unit_test(yaml_round_trip),
      cmocka_unit_test(domain),
      cmocka_unit_test(trainer_recovers_function),
      cmocka_unit_test(split_is_fixed),
      cmocka_unit_test(fit_is_deterministic),
      cmocka_unit_test(csv_reads_and_reports),
      cmocka_unit_test(fit_csv_bad_cell),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
