/*
 * test_compiler_study.c — the study front end end to end from memory:
 * presets and their key-by-key overrides, group expansion, defaults, sweep
 * order (product, zip, ranges), baselines, -D overrides and comma sweeps,
 * the constraints between keys, and the diagnostics codes of bad input.
 * Expected values are worked out by hand from spec/study.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "compiler/compiler.h"

static dc_study *load_ov(const char *text, const dc_override *ov, size_t n,
                         dc_diags *d) {
  return dc_study_load_memory("t.yaml", text, strlen(text), ov, n, d);
}

static dc_study *load_ok(const char *text) {
  dc_diags d = {0};
  dc_study *s = load_ov(text, NULL, 0, &d);
  if (!s) dc_diags_render(&d, stderr, false);
  assert_non_null(s);
  assert_int_equal(d.errors, 0);
  dc_diags_free(&d);
  return s;
}

/* Loads a bad study and returns the code of its first error. */
static const char *first_error(const char *text, const dc_override *ov,
                               size_t n) {
  static char id[8];
  dc_diags d = {0};
  dc_study *s = load_ov(text, ov, n, &d);
  assert_null(s);
  assert_true(d.errors > 0);
  strcpy(id, dc_diag_code_id(d.items[0].code));
  dc_diags_free(&d);
  dc_study_release_failed();
  return id;
}

static void test_preset_default(void **state) {
  (void)state;
  dc_study *s = load_ok("model: {preset: dlrm_default}\n");
  assert_int_equal(dc_study_point_count(s), 1);
  assert_string_equal(dc_study_name(s), "t");
  dc_arena a;
  dc_arena_init(&a);
  dc_point p;
  dc_study_point(s, 0, &a, &p);
  assert_string_equal(p.model_name, "dlrm_default");
  assert_int_equal(p.n_bottom, 3);
  assert_int_equal(p.bottom_mlp[0], 512);
  assert_int_equal(p.bottom_mlp[2], 64);
  assert_int_equal(p.n_top, 4);
  assert_int_equal(p.top_mlp[3], 1);
  assert_int_equal(p.n_tables, 8);
  assert_string_equal(p.tables[7].name, "t7");
  assert_int_equal(p.tables[7].rows, 1000000);
  assert_int_equal(p.tables[7].dim, 64);
  assert_true(p.tables[7].pooling == 100.0);
  assert_int_equal(p.loss, DC_LOSS_MSE);
  assert_int_equal(p.interaction, DC_INTERACTION_DOT);
  /* defaults of spec/study.md */
  assert_int_equal(p.batch_size, 2048);
  assert_int_equal(p.precision, DC_PRECISION_FP32);
  assert_int_equal(p.optimizer, DC_OPTIMIZER_SGD);
  assert_int_equal(p.ddp_bucket_bytes, 25 * 1024 * 1024);
  assert_string_equal(p.gpu, "V100-SXM2-16GB");
  assert_string_equal(p.overheads, "paper-v100");
  assert_int_equal(p.gpus, 1);
  assert_int_equal(p.hosts, 1);
  assert_int_equal(p.embedding_kernel, DC_EMBEDDING_PER_TABLE);
  assert_int_equal(p.sharding, DC_SHARDING_AUTO);
  assert_true(p.link_latency_us < 0);
  assert_int_equal(p.n_params, 0);
  dc_arena_free(&a);
  dc_study_free(s);
}

static void test_presets_mlperf(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  dc_point p;
  dc_study *s = load_ok("model: {preset: dlrm_mlperf}\n");
  dc_study_point(s, 0, &a, &p);
  int64_t sum = 0, maxr = 0;
  for (int i = 0; i < p.n_tables; i++) {
    sum += p.tables[i].rows;
    if (p.tables[i].rows > maxr) maxr = p.tables[i].rows;
  }
  assert_int_equal(p.n_tables, 26);
  assert_int_equal(sum, 187767399); /* ml_perf_model: Terabyte, 40M cap */
  assert_true(maxr <= 40000000);
  assert_string_equal(p.tables[0].name, "C1");
  assert_int_equal(p.tables[0].dim, 128);
  assert_int_equal(p.loss, DC_LOSS_BCE);
  dc_study_free(s);
  dc_arena_reset(&a);
  s = load_ok("model: {preset: MLPerf_Kaggle}\n"); /* an alias */
  dc_study_point(s, 0, &a, &p);
  sum = 0;
  for (int i = 0; i < p.n_tables; i++) sum += p.tables[i].rows;
  assert_int_equal(sum, 33762577);
  assert_string_equal(p.model_name, "dlrm_mlperf_kaggle");
  dc_study_free(s);
  dc_arena_reset(&a);
  s = load_ok("model: {preset: dlrm_ddp}\n");
  dc_study_point(s, 0, &a, &p);
  assert_int_equal(p.n_tables, 8);
  assert_int_equal(p.tables[0].rows, 80000);
  assert_int_equal(p.tables[0].dim, 128);
  assert_true(p.tables[0].pooling == 10.0);
  dc_study_free(s);
  dc_arena_free(&a);
}

static void test_preset_override_one_key(void **state) {
  (void)state;
  dc_study *s = load_ok("model:\n  preset: dlrm_default\n"
                        "  embedding: {dim: 32}\n"
                        "  bottom_mlp: [512, 512, 32]\n");
  dc_arena a;
  dc_arena_init(&a);
  dc_point p;
  dc_study_point(s, 0, &a, &p);
  assert_int_equal(p.tables[0].dim, 32);     /* overridden */
  assert_int_equal(p.n_tables, 8);           /* from the preset */
  assert_int_equal(p.tables[0].rows, 1000000);
  assert_int_equal(p.n_top, 4);              /* from the preset */
  dc_arena_free(&a);
  dc_study_free(s);
}

static void test_groups_and_names(void **state) {
  (void)state;
  dc_study *s = load_ok(
      "model:\n  bottom_mlp: [13, 16]\n  top_mlp: [8, 1]\n"
      "  interaction: cat\n"
      "  embedding:\n    pooling: 3\n    tables:\n"
      "      - {count: 2, rows: 1k, dim: 8, name: a}\n"
      "      - {rows: 2Mi, dim: 4, pooling: 0.5}\n"
      "system: {hosts: 2, gpus_per_host: 4}\ntraining: {batch_size: 64}\n");
  dc_arena a;
  dc_arena_init(&a);
  dc_point p;
  dc_study_point(s, 0, &a, &p);
  assert_int_equal(p.n_tables, 3);
  assert_string_equal(p.tables[0].name, "a_0");
  assert_string_equal(p.tables[1].name, "a_1");
  assert_string_equal(p.tables[2].name, "t2");
  assert_int_equal(p.tables[0].rows, 1000);
  assert_int_equal(p.tables[2].rows, 2 * 1024 * 1024);
  assert_true(p.tables[0].pooling == 3.0);
  assert_true(p.tables[2].pooling == 0.5);
  assert_int_equal(p.gpus, 8);
  assert_int_equal(p.hosts, 2);
  assert_int_equal(p.gpus_per_host, 4);
  dc_arena_free(&a);
  dc_study_free(s);
}

static void test_sweep_product_order(void **state) {
  (void)state;
  dc_study *s = load_ok("model: {preset: dlrm_default}\nsweep:\n"
                        "  system.gpu: [V100-SXM2-16GB, A100-SXM4-80GB]\n"
                        "  training.batch_size: {from: 512, to: 4096, "
                        "times: 2}\n"
                        "baseline: {system.gpu: V100}\n");
  assert_int_equal(dc_study_point_count(s), 8);
  const char *const *paths;
  assert_int_equal(dc_study_params(s, &paths), 2);
  assert_string_equal(paths[0], "system.gpu");
  dc_arena a;
  dc_arena_init(&a);
  dc_point p;
  dc_study_point(s, 5, &a, &p); /* digits (1, 1): A100, 1024 */
  assert_string_equal(p.gpu, "A100-SXM4-80GB");
  assert_int_equal(p.batch_size, 1024);
  assert_string_equal(p.params[1].value, "1024");
  assert_int_equal(p.index, 5);
  /* the baseline alias V100 selects the V100 point of the same batch */
  assert_int_equal(dc_study_baseline_of(s, 5), 1);
  assert_int_equal(dc_study_baseline_of(s, 2), 2);
  dc_arena_free(&a);
  dc_study_free(s);
}

static void test_sweep_zip_and_step(void **state) {
  (void)state;
  dc_study *s = load_ok("model: {preset: dlrm_default}\nsweep:\n  mode: zip\n"
                        "  training.batch_size: {from: 1000, to: 4000, "
                        "step: 1000}\n"
                        "  system.gpus: [1, 2, 4, 8]\n");
  assert_int_equal(dc_study_point_count(s), 4);
  dc_arena a;
  dc_arena_init(&a);
  dc_point p;
  dc_study_point(s, 3, &a, &p);
  assert_int_equal(p.batch_size, 4000);
  assert_int_equal(p.gpus, 8);
  dc_arena_free(&a);
  dc_study_free(s);
}

static void test_million_points_lazy(void **state) {
  (void)state;
  dc_study *s = load_ok("model: {preset: dlrm_default}\nsweep:\n"
                        "  training.ddp_bucket: {from: 1, to: 1000, step: 1}\n"
                        "  model.embedding.pooling: {from: 1, to: 1000, "
                        "step: 1}\n");
  assert_int_equal(dc_study_point_count(s), 1000000);
  dc_arena a;
  dc_arena_init(&a);
  dc_point p;
  dc_study_point(s, 999999, &a, &p);
  assert_int_equal(p.ddp_bucket_bytes, 1000);
  assert_true(p.tables[0].pooling == 1000.0); /* user pooling wins */
  dc_arena_free(&a);
  dc_study_free(s);
}

static void test_overrides(void **state) {
  (void)state;
  dc_override ov[] = {{"training.batch_size", "512,1024"},
                      {"system.gpu", "t4"},
                      {"model.bottom_mlp", "[256, 64]"}};
  dc_diags d = {0};
  dc_study *s = load_ov("model: {preset: dlrm_default}\n"
                        "training: {batch_size: 7}\n",
                        ov, 3, &d);
  assert_non_null(s);
  assert_int_equal(dc_study_point_count(s), 2);
  dc_arena a;
  dc_arena_init(&a);
  dc_point p;
  dc_study_point(s, 1, &a, &p);
  assert_int_equal(p.batch_size, 1024);
  assert_string_equal(p.gpu, "T4");
  assert_int_equal(p.n_bottom, 2);
  assert_int_equal(p.n_params, 1);
  assert_string_equal(p.params[0].path, "training.batch_size");
  dc_arena_free(&a);
  dc_study_free(s);
  dc_diags_free(&d);
}

static void test_override_errors(void **state) {
  (void)state;
  const char *ok = "model: {preset: dlrm_default}\n";
  dc_override a[] = {{"training.bacth_size", "1"}};
  assert_string_equal(first_error(ok, a, 1), "E0306");
  dc_override b[] = {{"training.batch_size", "x"}};
  assert_string_equal(first_error(ok, b, 1), "E0202");
  dc_override c[] = {{"output.format", "csv,md"}};
  assert_string_equal(first_error(ok, c, 1), "E0306");
  dc_override e[] = {{"training.batch_size", "[1,"}};
  assert_string_equal(first_error(ok, e, 1), "E0306");
}

static void test_errors(void **state) {
  (void)state;
  assert_string_equal(first_error("model: {preset: x}\nbad: 1\n", NULL, 0),
                      "E0402");
  assert_string_equal(first_error("model: {preset: dlrm_default}\n"
                                  "training: {bacth: 1}\n", NULL, 0),
                      "E0101");
  assert_string_equal(first_error("model: {preset: dlrm_default}\n"
                                  "sweep: {training.batch_size: []}\n",
                                  NULL, 0),
                      "E0302");
  assert_string_equal(first_error("model: {preset: dlrm_default}\n"
                                  "sweep: {mode: zip, training.batch_size: "
                                  "[1, 2], system.gpus: [1]}\n",
                                  NULL, 0),
                      "E0303");
  assert_string_equal(
      first_error("model: {preset: dlrm_default}\nsweep:\n"
                  "  training.ddp_bucket: {from: 1, to: 1P, step: 1}\n"
                  "  training.batch_size: {from: 1, to: 1P, step: 1}\n",
                  NULL, 0),
      "E0305");
  /* 1020 is not a multiple of 8: only the combination is wrong */
  assert_string_equal(first_error("model: {preset: dlrm_default}\nsweep:\n"
                                  "  training.batch_size: [1024, 1020]\n"
                                  "  system.gpus: [1, 8]\n",
                                  NULL, 0),
                      "E0207");
  assert_string_equal(first_error("model: {preset: dlrm_default}\n"
                                  "system: {gpu: V99}\n", NULL, 0),
                      "E0401");
  assert_string_equal(first_error("a: [\n", NULL, 0), "E0010");
}

static void test_all_errors_reported(void **state) {
  (void)state;
  dc_diags d = {0};
  dc_study *s = load_ov("model: {preset: dlrm_default}\n"
                        "training: {batch_size: 0, precision: fp8}\n"
                        "system: {gpu: V99, gpus: 0}\n",
                        NULL, 0, &d);
  assert_null(s);
  assert_int_equal(d.errors, 4);
  assert_int_equal(d.items[0].span.line, 2);
  assert_int_equal(d.items[3].span.line, 3);
  dc_diags_free(&d);
  dc_study_release_failed();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_preset_default),
      cmocka_unit_test(test_presets_mlperf),
      cmocka_unit_test(test_preset_override_one_key),
      cmocka_unit_test(test_groups_and_names),
      cmocka_unit_test(test_sweep_product_order),
      cmocka_unit_test(test_sweep_zip_and_step),
      cmocka_unit_test(test_million_points_lazy),
      cmocka_unit_test(test_overrides),
      cmocka_unit_test(test_override_errors),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_all_errors_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
