/*
 * test_runtime_trace.c — trace import on the synthetic traces of
 * tests/fixtures/traces/, whose T1–T5 are worked out by hand below.
 *
 * The fixture (times in µs; main thread 1, autograd thread 2, stream 7):
 *
 *   aten::empty            900..905     before any step: ignored
 *   ProfilerStep#1        1000..1200
 *     aten::linear        1010..1060
 *       aten::addmm       1012..1052
 *         cudaLaunchKernel 1020..1028 corr 1 -> sgemm_128x64  1030..1050
 *         cudaLaunchKernel 1036..1042 corr 2 -> add kernel    1051..1056
 *       aten::view        1054..1056
 *     aten::relu          1070..1090
 *       cudaLaunchKernel  1075..1082 corr 3 -> threshold      1083..1087
 *     aten::zeros         1095..1098
 *       aten::empty       1095..1096
 *   (thread 2) AddmmBackward0 1100..1130
 *       cudaLaunchKernel  1110..1120 corr 5 -> sgemm_64x64    1121..1151
 *   ProfilerStep#2        1200..1300
 *     aten::relu          1210..1226
 *       cudaLaunchKernel  1214..1220 corr 4 -> threshold      1221..1225
 *
 * With the paper's correction, 2 µs per profiled CPU event (c) and 4 µs
 * per launch, each taking at most half of its interval:
 *   linear: T2 = 1020 − 1010 − c·1 (addmm) = 8; T5 = 1036 − 1028 = 8;
 *           T3 = 1060 − 1042 − c·1 (view) = 16; no T1 (first in step)
 *   relu#1: T1 = (1070 − 1060) − 2 = 8; T2 = 5; T3 = 1090 − 1082 = 8
 *   zeros:  T1 = (1095 − 1090) − 2 = 3; no launch: T5 = 3 − min(c, 3/2)
 *           = 1.5
 *   AddmmBackward0: T2 = 10, T3 = 10 (first op on its thread: no T1)
 *   relu#2: T2 = 4, T3 = 6; no T1 (the previous op is in step 1)
 *   relu:   T2 = {5, 4}: mean 4.5, std 0.7071; T3 = {8, 6}: 7, 1.4142
 *   T4 (cudaLaunchKernel, all launched a kernel: dur − min(2 + 4, dur/2)):
 *           {8, 6, 7, 10, 6} → {4, 3, 3.5, 5, 3}; sorted {3,3,3.5,4,5},
 *           Q1 = 3, Q3 = 4, fences [1.5, 5.5]: all kept; mean 3.7,
 *           std sqrt(2.8 / 4) = 0.83666
 *   defaults (pooled means): t1 = (8 + 3)/2 = 5.5;
 *           t2 = (8 + 5 + 4 + 10)/4 = 6.75; t3 = (16 + 8 + 6 + 10)/4 = 10;
 *           t5 = (8 + 1.5)/2 = 4.75; t4 = 3.7
 *   kernel_gap: only the add kernel was launched (call ended 1042) before
 *           its predecessor ended (1050): gap 1051 − 1050 = 1
 *   steps: #1 GPU union 20 + 5 + 4 + 30 = 59 µs of 200 (util 0.295);
 *          #2 4 µs of 100 (util 0.040)
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "runtime/trace/trace.h"
#include "trace_fixture.h"


#define assert_near(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-3)

static const dc_op_overheads *find_op(const dc_profile *p, const char *n) {
  for (size_t i = 0; i < p->n_ops; i++)
    if (strcmp(p->ops[i].op, n) == 0) return &p->ops[i];
  return NULL;
}

/* Extracts a profile from the given fixtures (pooled). */
static void extract(const char *const *names, size_t n, const char *steps,
                    dc_profile *p, dc_arena *a) {
  dc_ovh_acc *acc = dc_ovh_acc_new();
  dc_diags d = {0};
  dc_trace_steps_sel sel = {0};
  if (steps) assert_true(dc_trace_steps_parse(steps, &sel));
  for (size_t i = 0; i < n; i++) {
    char *path = fixture(names[i]);
    dc_trace t;
    dc_trace_model m;
    assert_true(dc_trace_load(path, &t, a, &d));
    assert_true(dc_trace_model_build(&t, &sel, &m, &d));
    dc_ovh_acc_add(acc, &m, (dc_ovh_correction){DC_TRACE_CPU_EVENT_US, DC_TRACE_GPU_EVENT_US});
    dc_trace_model_free(&m);
    dc_trace_free(&t);
    free(path);
  }
  assert_int_equal(d.errors, 0);
  dc_ovh_acc_profile(acc, "synth", "test", p, a);
  dc_ovh_acc_free(acc);
  dc_diags_free(&d);
}

static void check_hand_worked(const dc_profile *p, int64_t scale) {
  assert_near(p->t1_us, 5.5);
  assert_near(p->t2_us, 6.75);
  assert_near(p->t3_us, 10.0);
  assert_near(p->t4_us, 3.7);
  assert_near(p->t5_us, 4.75);
  assert_near(p->kernel_gap_us, 1.0);
  assert_int_equal(p->n_ops, 4);
  const dc_op_overheads *lin = find_op(p, "aten::linear");
  assert_non_null(lin);
  assert_near(lin->t2.mean, 8);
  assert_near(lin->t3.mean, 16);
  assert_near(lin->t5.mean, 8);
  assert_int_equal(lin->t1.n, 0);
  assert_true(lin->t1.mean < 0);
  const dc_op_overheads *relu = find_op(p, "aten::relu");
  assert_non_null(relu);
  assert_near(relu->t1.mean, 8);
  assert_int_equal(relu->t1.n, 1 * scale);
  assert_near(relu->t2.mean, 4.5);
  assert_int_equal(relu->t2.n, 2 * scale);
  assert_near(relu->t2.std, scale == 1 ? 0.70711 : 0.57735);
  assert_near(relu->t3.mean, 7);
  const dc_op_overheads *z = find_op(p, "aten::zeros");
  assert_non_null(z);
  assert_near(z->t1.mean, 3);
  assert_near(z->t5.mean, 1.5);
  assert_int_equal(z->t2.n, 0);
  const dc_op_overheads *bw =
      find_op(p, "autograd::engine::evaluate_function: AddmmBackward0");
  assert_non_null(bw);
  assert_near(bw->t2.mean, 10);
  assert_near(bw->t3.mean, 10);
  assert_null(find_op(p, "aten::empty")); /* outside the steps, or nested */
  assert_null(find_op(p, "aten::addmm")); /* not top-level */
  assert_int_equal(p->n_runtime, 1);
  assert_string_equal(p->runtime[0].call, "cudaLaunchKernel");
  assert_near(p->runtime[0].t4.mean, 3.7);
  assert_near(p->runtime[0].t4.std, scale == 1 ? 0.83666 : 0.78881);
  assert_int_equal(p->runtime[0].t4.n, 5 * scale);
}

static void test_current_format(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  dc_profile p;
  const char *n[] = {"synthetic_kineto.json"};
  extract(n, 1, NULL, &p, &a);
  check_hand_worked(&p, 1);
  dc_arena_free(&a);
}

/* The 2021 categories (Operator/Runtime/Kernel, string tids, "stream 7")
 * and the gzip file give the same numbers. */
static void test_legacy_and_gzip(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  dc_profile p;
  const char *n1[] = {"synthetic_legacy_kineto.json"};
  extract(n1, 1, NULL, &p, &a);
  check_hand_worked(&p, 1);
  const char *n2[] = {"synthetic_kineto.json.gz"};
  extract(n2, 1, NULL, &p, &a);
  check_hand_worked(&p, 1);
  dc_arena_free(&a);
}

/* Two traces pool their samples: means stay, counts double and the
 * sample std shrinks: relu T2 {5,4,5,4} -> std sqrt(1/3) = 0.57735;
 * T4 {4,3,3.5,5,3} twice: Q1 = 3, Q3 = 4, all kept, std
 * sqrt(5.6 / 9) = 0.78881. */
static void test_merge(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  dc_profile p;
  const char *n[] = {"synthetic_kineto.json", "synthetic_legacy_kineto.json"};
  extract(n, 2, NULL, &p, &a);
  check_hand_worked(&p, 2);
  dc_arena_free(&a);
}

/* --steps 2: only relu#2: T2 4, T3 6, T4 of its 6 µs launch 6 − 3 = 3
 * (the correction takes at most half); no T1. */
static void test_steps(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  dc_profile p;
  const char *n[] = {"synthetic_kineto.json"};
  extract(n, 1, "2:2", &p, &a);
  assert_int_equal(p.n_ops, 1);
  assert_string_equal(p.ops[0].op, "aten::relu");
  assert_near(p.ops[0].t2.mean, 4);
  assert_near(p.ops[0].t3.mean, 6);
  assert_near(p.t4_us, 3);
  assert_near(p.t1_us, 0); /* no sample: 0 */
  dc_arena_free(&a);

  dc_trace_steps_sel s;
  assert_true(dc_trace_steps_parse("3:", &s));
  assert_true(s.first == 3 && s.last == INT64_MAX);
  assert_true(dc_trace_steps_parse(":7", &s));
  assert_true(s.first == 0 && s.last == 7);
  assert_true(dc_trace_steps_parse("5", &s));
  assert_true(s.first == 5 && s.last == 5);
  assert_false(dc_trace_steps_parse("7:3", &s));
  assert_false(dc_trace_steps_parse(":", &s));
  assert_false(dc_trace_steps_parse("a:b", &s));
  assert_false(dc_trace_steps_parse("-1:3", &s));
}

static void test_steps_none_selected(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_trace t;
  dc_trace_model m;
  char *path = fixture("synthetic_kineto.json");
  assert_true(dc_trace_load(path, &t, &a, &d));
  dc_trace_steps_sel sel;
  assert_true(dc_trace_steps_parse("9:12", &sel));
  assert_false(dc_trace_model_build(&t, &sel, &m, &d));
  assert_int_equal(d.errors, 1);
  assert_non_null(strstr(d.items[0].message, "selects none"));
  assert_non_null(strstr(d.items[0].help, "ProfilerStep#1 to #2"));
  dc_trace_model_free(&m);
  dc_trace_free(&t);
  free(path);
  dc_diags_free(&d);
  dc_arena_free(&a);
}

/* The IQR rule: {1, 2, 3, 4, 100}: Q1 2, Q3 4, fences [−1, 7]; 100 goes,
 * mean of {1,2,3,4} = 2.5, std sqrt(5/3) = 1.29099. */
static void test_iqr(void **state) {
  (void)state;
  double v[] = {100, 3, 1, 4, 2};
  dc_stat s = dc_trace_iqr_stat(v, 5);
  assert_int_equal(s.n, 4);
  assert_near(s.mean, 2.5);
  assert_near(s.std, 1.29099);
  double one[] = {7};
  s = dc_trace_iqr_stat(one, 1);
  assert_int_equal(s.n, 1);
  assert_near(s.mean, 7);
  assert_near(s.std, 0);
  s = dc_trace_iqr_stat(NULL, 0);
  assert_int_equal(s.n, 0);
  assert_true(s.mean < 0);
}

static void test_stats(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_trace t;
  dc_trace_model m;
  char *path = fixture("synthetic_kineto.json");
  assert_true(dc_trace_load(path, &t, &a, &d));
  assert_true(dc_trace_model_build(&t, NULL, &m, &d));
  assert_int_equal(m.n_steps, 2);
  assert_int_equal(m.n_tops, 5);
  dc_buf out = {0};
  dc_trace_stats_write(&m, false, DC_TRACE_TABLE_STEPS, 20, &out);
  assert_string_equal(
      out.data, "step,wall_ms,gpu_active_ms,gpu_idle_ms,gpu_util,kernel_sum_ms,"
                "gpu_events\n"
                "1,0.200,0.059,0.141,0.295,0.059,4\n"
                "2,0.100,0.004,0.096,0.040,0.004,1\n"
                "mean,0.150,0.032,0.119,0.210,0.032,2.5\n");
  dc_buf_clear(&out);
  dc_trace_stats_write(&m, false, DC_TRACE_TABLE_KINDS, 20, &out);
  /* gemm 20 + 30 = 50 of 63 µs; elementwise 5 + 4 + 4 = 13. */
  assert_string_equal(out.data, "kind,gpu_events,time_ms,ms_per_step,share\n"
                                "gemm,2,0.050,0.025,0.794\n"
                                "elementwise,3,0.013,0.006,0.206\n");
  dc_buf_clear(&out);
  dc_trace_stats_write(&m, false, DC_TRACE_TABLE_OPS, 20, &out);
  assert_string_equal(
      out.data,
      "op,count,cpu_ms,cpu_mean_us,gpu_ms,gpu_events\n"
      "aten::linear,1,0.050,50.0,0.025,2\n"
      "autograd::engine::evaluate_function: AddmmBackward0,1,0.030,30.0,"
      "0.030,1\n"
      "aten::relu,2,0.036,18.0,0.008,2\n"
      "aten::zeros,1,0.003,3.0,0.000,0\n");
  dc_buf_clear(&out);
  dc_trace_stats_write(&m, true, DC_TRACE_TABLE_KERNELS, 1, &out);
  assert_string_equal(out.data,
                      "### kernels\n\n"
                      "| kernel | kind | count | time_ms | mean_us | share |\n"
                      "|---|---|---|---|---|---|\n"
                      "| `volta_sgemm_64x64_nt` | gemm | 1 | 0.030 | 30.0 | "
                      "0.476 |\n");
  dc_buf_free(&out);
  dc_trace_model_free(&m);
  dc_trace_free(&t);
  free(path);
  dc_diags_free(&d);
  dc_arena_free(&a);
}

static void test_kinds(void **state) {
  (void)state;
  static const struct {
    const char *name;
    uint8_t kind;
    const char *want;
  } cases[] = {
      {"ncclKernel_AllReduce_RING_LL_Sum_float", DC_TRACE_KERNEL, "collective"},
      {"volta_sgemm_128x64_nn", DC_TRACE_KERNEL, "gemm"},
      {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64>",
       DC_TRACE_KERNEL, "gemm"},
      {"void implicit_convolve_sgemm<float>", DC_TRACE_KERNEL, "conv"},
      {"void split_embedding_codegen_forward_unweighted_kernel<float>",
       DC_TRACE_KERNEL, "embedding"},
      {"void split_embedding_backward_codegen_rowwise_adagrad_unweighted",
       DC_TRACE_KERNEL, "embedding"},
      {"void multi_tensor_apply_kernel<AdamFunctor<float>>", DC_TRACE_KERNEL,
       "optimizer"},
      {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float>",
       DC_TRACE_KERNEL, "concat"},
      {"void at::native::vectorized_elementwise_kernel<4, relu>",
       DC_TRACE_KERNEL, "elementwise"},
      {"void at::native::reduce_kernel<128, 4>", DC_TRACE_KERNEL, "reduce"},
      {"Memcpy HtoD (Pageable -> Device)", DC_TRACE_MEMCPY, "memcpy"},
      {"Memset (Device)", DC_TRACE_MEMSET, "memset"},
      {"my_custom_kernel", DC_TRACE_KERNEL, "other"},
  };
  for (size_t i = 0; i < DC_COUNTOF(cases); i++)
    assert_string_equal(dc_trace_kernel_kind(cases[i].name, cases[i].kind),
                        cases[i].want);
}

static void test_containers(void **state) {
  (void)state;
  assert_true(dc_trace_is_container("ProfilerStep#3"));
  assert_true(dc_trace_is_container("## forward:over_arch ##"));
  assert_true(dc_trace_is_container("DistributedDataParallel.forward"));
  assert_true(dc_trace_is_container("[param|cuda]"));
  assert_true(dc_trace_is_container("module::Linear"));
  assert_false(dc_trace_is_container("Optimizer.step#SGD.step"));
  assert_false(dc_trace_is_container("aten::linear"));
  assert_false(dc_trace_is_container("nccl:all_reduce"));
}

/* The profile YAML: exact text for the fixture, and it loads back with
 * dc_profile_load (the reader `dlrmc run` uses) to the same numbers. */
static void test_profile_roundtrip(void **state) {
  (void)state;
  dc_arena a;
  dc_arena_init(&a);
  dc_profile p;
  const char *n[] = {"synthetic_kineto.json"};
  extract(n, 1, NULL, &p, &a);
  dc_buf y = {0};
  dc_profile_write(&p, &y);
  assert_string_equal(
      y.data,
      "name: \"synth\"\n"
      "units: us\n"
      "source: \"test\"\n"
      "defaults: {t1: 5.500, t2: 6.750, t3: 10.000, t4: 3.700, t5: 4.750, "
      "kernel_gap: 1.000}\n"
      "ops:\n"
      "  \"aten::linear\": {t2: 8.000, t2_std: 0.000, t2_n: 1, t3: 16.000, "
      "t3_std: 0.000, t3_n: 1, t5: 8.000, t5_std: 0.000, t5_n: 1}\n"
      "  \"aten::relu\": {t1: 8.000, t1_std: 0.000, t1_n: 1, t2: 4.500, "
      "t2_std: 0.707, t2_n: 2, t3: 7.000, t3_std: 1.414, t3_n: 2}\n"
      "  \"aten::zeros\": {t1: 3.000, t1_std: 0.000, t1_n: 1, t5: 1.500, "
      "t5_std: 0.000, t5_n: 1}\n"
      "  \"autograd::engine::evaluate_function: AddmmBackward0\": {t2: "
      "10.000, t2_std: 0.000, t2_n: 1, t3: 10.000, t3_std: 0.000, t3_n: 1}\n"
      "runtime:\n"
      "  \"cudaLaunchKernel\": {t4: 3.700, t4_std: 0.837, n: 5}\n");

  char tmpl[] = "/tmp/dc_trace_profile_XXXXXX";
  int fd = mkstemp(tmpl);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fwrite(y.data, 1, y.len, f);
  fclose(f);
  char path[64];
  snprintf(path, sizeof path, "%s.yaml", tmpl);
  assert_int_equal(rename(tmpl, path), 0);
  dc_profile q;
  dc_diags d = {0};
  bool ok = dc_profile_load(path, &q, &a, &d);
  if (!ok) dc_diags_render(&d, stderr, false);
  assert_true(ok);
  assert_near(q.t2_us, 6.75);
  assert_near(q.kernel_gap_us, 1.0);
  assert_int_equal(q.n_ops, 4);
  dc_op_cost c = dc_profile_op(&q, "aten::relu");
  assert_near(c.t2_us, 4.5);
  assert_near(c.t3_us, 7.0);
  assert_near(c.t1_us, 8.0);
  assert_near(c.t5_us, 4.75); /* relu has no T5 sample: the default */
  assert_near(dc_profile_t4(&q, NULL), 3.7);
  remove(path);
  dc_diags_free(&d);
  dc_buf_free(&y);
  dc_arena_free(&a);
}

/* A fixture's trace and its model over every step, with the arena and
 * diagnostics they use (model_open / model_close). */
typedef struct fixture_model {
  dc_arena a;
  dc_diags d;
  dc_trace t;
  dc_trace_model m;
} fixture_model;

static void model_open(fixture_model *f, const char *name) {
  memset(f, 0, sizeof *f);
  dc_arena_init(&f->a);
  dc_trace_steps_sel sel = {0};
  char *path = fixture(name);
  assert_true(dc_trace_load(path, &f->t, &f->a, &f->d));
  assert_true(dc_trace_model_build(&f->t, &sel, &f->m, &f->d));
  free(path);
}

static void model_close(fixture_model *f) {
  dc_trace_model_free(&f->m);
  dc_trace_free(&f->t);
  dc_diags_free(&f->d);
  dc_arena_free(&f->a);
}

/* The measured correction: the sibling gaps of the selected steps are
 * {0 (step #1 -> #2), 2 (addmm -> view), 5 (relu -> zeros), 8 (the two
 * launches in addmm), 10 (linear -> relu), 95 (aten::empty -> step #1,
 * the later event in a step)}: 5th percentile 0 + 0.25·2 = 0.5 µs.
 * The self-consistency check, with the paper's correction: measured
 * host time = the five ops' durations 50 + 20 + 3 + 30 + 16 plus the two
 * sampled T1 gaps 10 + 5 = 134 µs; the profile charges linear 8 + 2·3.7
 * + 8 + 16, relu#1 8 + 4.5 + 3.7 + 7, zeros 3 + 1.5, AddmmBackward0
 * 10 + 3.7 + 10, relu#2 4.5 + 3.7 + 7 = 106 µs. */
static void test_correction_and_check(void **state) {
  (void)state;
  fixture_model f;
  model_open(&f, "synthetic_kineto.json");
  dc_ovh_correction c = dc_ovh_measure_correction(&f.m);
  assert_near(c.cpu_us, 0.5);
  assert_near(c.gpu_us, 0.0);
  dc_profile p;
  const char *n[] = {"synthetic_kineto.json"};
  extract(n, 1, NULL, &p, &f.a);
  double meas, pred;
  dc_ovh_host_check(&f.m, &p, (dc_ovh_correction){0, 0}, &meas, &pred);
  assert_near(meas, 134.0);
  assert_near(pred, 106.0);
  /* corrected as the samples were: the profiler's 0.5 us per CPU event
   * in the ops and gaps leaves the measured side; the prediction stays */
  dc_ovh_host_check(&f.m, &p, c, &meas, &pred);
  assert_near(meas, 129.0); /* 10 events and gaps x 0.5 */
  assert_near(pred, 106.0);
  model_close(&f);
}

/* The profile of one fixture's own samples, without profiler correction. */
/* --check of a fixture against its own profile, without correction. */
static void assert_own_check(fixture_model *f, const dc_profile *p,
                             double meas_want, double pred_want) {
  double meas, pred;
  dc_ovh_host_check(&f->m, p, (dc_ovh_correction){0, 0}, &meas, &pred);
  assert_near(meas, meas_want);
  assert_near(pred, pred_want);
}

static void own_profile(fixture_model *f, const char *name, dc_profile *p) {
  dc_ovh_acc *acc = dc_ovh_acc_new();
  dc_ovh_acc_add(acc, &f->m, (dc_ovh_correction){0.0, 0.0});
  dc_ovh_acc_profile(acc, name, "test", p, &f->a);
  dc_ovh_acc_free(acc);
}

/* Each (correlation, µs) of `want`: the one runtime call with that
 * correlation id waited that long (wait_ns). */
static void expect_waits(const fixture_model *f, int64_t (*want)[2],
                         size_t n) {
  for (size_t w = 0; w < n; w++) {
    size_t found = 0;
    for (size_t i = 0; i < f->t.n_ev; i++)
      if (f->t.ev[i].kind == DC_TRACE_RUNTIME &&
          f->t.ev[i].corr == want[w][0]) {
        assert_int_equal(f->m.wait_ns[i], want[w][1] * 1000);
        found++;
      }
    assert_int_equal(found, 1);
  }
}

/* Blocking calls (tests/fixtures/traces/blocking_kineto.json, one step,
 * stream 7, no profiler correction so the numbers stay whole):
 *   aten::mm                  1000..1010  launch 1002..1007 -> GEMM 1010..1400
 *   _local_scalar_dense       1020..1420
 *     cudaMemcpyAsync         1025..1415 -> D2H 1405..1407: finished inside
 *                             the call, so it blocked: wait 1407 − 1025 = 382
 *     cudaStreamSynchronize   1416..1419: nothing ends inside it, wait 0
 *   aten::copy_               1430..1450
 *     cudaMemcpyAsync         1435..1443 -> H2D 1447..1452: after the call
 *                             returned, asynchronous, wait 0
 *   aten::mm                  1460..1470  launch 1462..1467 -> GEMM 1470..1670
 *   cuda_synchronize          1480..1680
 *     cudaDeviceSynchronize   1485..1675: the GEMM launched before it ends at
 *                             1670 inside it, wait 185
 * T4 is the call less its wait: cudaMemcpyAsync {390 − 382, 8} = 8,
 * cudaDeviceSynchronize 190 − 185 = 5 (without the separation the copy's
 * T4 would be 199). The check: measured 640 µs of ops + 4 T1 gaps of 10 =
 * 680; the profile gives mm 2 + 5 + 3 = 10, _local_scalar_dense 10 +
 * max(5, 387) + 8 + 1 + 3 + 1 = 410, copy_ 10 + 5 + 8 + 7 = 30, mm 20,
 * cuda_synchronize 10 + max(5, 190) + 5 + 5 = 210: 680, the host waiting
 * for the GPU as the evaluator's host sync does. */
static void test_blocking_calls(void **state) {
  (void)state;
  fixture_model f;
  model_open(&f, "blocking_kineto.json");
  int64_t want[][2] = {{2, 382}, {3, 0}, {4, 0}, {6, 185}, {1, 0}};
  expect_waits(&f, want, DC_COUNTOF(want));
  dc_profile p;
  own_profile(&f, "blocking", &p);
  assert_near(dc_profile_t4(&p, "cudaMemcpyAsync"), 8.0);
  assert_near(dc_profile_t4(&p, "cudaDeviceSynchronize"), 5.0);
  assert_near(dc_profile_t4(&p, "cudaStreamSynchronize"), 3.0);
  assert_own_check(&f, &p, 680.0, 680.0);
  model_close(&f);
}

/* A copy staged from pageable memory (tests/fixtures/traces/staged_kineto.json,
 * no profiler correction):
 *   aten::copy_            1000..1300
 *     cudaMemcpyAsync      1010..1290 -> H2D (Pageable) 1060..1295: the
 *                          host was held in the call until it returned, a
 *                          little before the copy ended: wait 280
 *   aten::copy_            1350..1380
 *     cudaMemcpyAsync      1355..1365 -> H2D (Pageable) 1370..1372: after
 *                          the call returned, asynchronous, wait 0
 * T4 {280 − 280, 10}: 5 (without the rule 145). The check: ops 300 + 30
 * and a T1 gap of 50 = 380 measured; the profile gives T2 7.5, then the
 * wait until 290 from the op's start, T4 5 and T3 12.5 = 307.5, then 7.5
 * + 5 + 12.5 = 25, and T1 50: 382.5. */
static void test_staged_copy(void **state) {
  (void)state;
  fixture_model f;
  model_open(&f, "staged_kineto.json");
  int64_t want[][2] = {{1, 280}, {2, 0}};
  for (size_t w = 0; w < DC_COUNTOF(want); w++)
    for (size_t i = 0; i < f.t.n_ev; i++)
      if (f.t.ev[i].kind == DC_TRACE_RUNTIME && f.t.ev[i].corr == want[w][0])
        assert_int_equal(f.m.wait_ns[i], want[w][1] * 1000);
  dc_profile p;
  own_profile(&f, "staged", &p);
  assert_near(dc_profile_t4(&p, "cudaMemcpyAsync"), 5.0);
  assert_own_check(&f, &p, 380.0, 382.5);
  model_close(&f);
}

/* The collective wait on a CPU run (tests/fixtures/traces/gloo_wait_kineto.json,
 * one step, gloo, no profiler correction):
 *   aten::mm                 1000..1050  CPU work, T5 50
 *   c10d::allreduce_         1100..1700  no GPU work beneath it: the thread
 *     record_param_comms     1105..1695  waited in it, wait 600 (the nested
 *                                        record_param_comms is part of it)
 *   gloo:all_reduce (tid 2)  1150..1650  the collective itself: no host op
 *   aten::add                1750..1780  T5 30
 *   evaluate_function: AccumulateGrad 1800..2050
 *     c10d::allreduce_       1820..2020  wait 200: T2 20, T3 30, no T5
 * The check: measured 930 µs of ops + T1 gaps 50, 50, 20 = 1050; the
 * profile gives the same, the waits replayed as measured (without the
 * separation AccumulateGrad's T5 would be 250 and allreduce_'s 600). */
static void test_collective_waits(void **state) {
  (void)state;
  fixture_model f;
  model_open(&f, "gloo_wait_kineto.json");
  int64_t waits[] = {600, 0, 200};
  size_t k = 0;
  for (size_t i = 0; i < f.t.n_ev; i++) {
    const char *nm = f.t.names[f.t.ev[i].name];
    if (strcmp(nm, "c10d::allreduce_") == 0 ||
        strcmp(nm, "record_param_comms") == 0) {
      assert_true(k < DC_COUNTOF(waits));
      assert_int_equal(f.m.wait_ns[i], waits[k] * 1000);
      k++;
    }
  }
  assert_int_equal(k, DC_COUNTOF(waits));
  assert_int_equal(f.m.n_tops, 4); /* gloo:* is not a host op */
  for (size_t i = 0; i < f.m.n_tops; i++)
    assert_false(dc_trace_is_comm_worker(f.t.names[f.t.ev[f.m.tops[i].ev].name]));
  dc_profile p;
  own_profile(&f, "gloo", &p);
  dc_op_cost ar = dc_profile_op(&p, "c10d::allreduce_");
  assert_near(ar.t5_us, 0.0);
  dc_op_cost ag =
      dc_profile_op(&p, "autograd::engine::evaluate_function: AccumulateGrad");
  assert_near(ag.t2_us, 20.0);
  assert_near(ag.t3_us, 30.0);
  assert_own_check(&f, &p, 1050.0, 1050.0);
  model_close(&f);
}

/* A call that copies from pageable memory (tests/fixtures/traces/
 * pageable_kineto.json): the host waits in it for the transfer it staged
 * (220 µs); a pinned copy's call does not wait. */
static void test_pageable_copy_wait(void **state) {
  (void)state;
  fixture_model f;
  model_open(&f, "pageable_kineto.json");
  int64_t want[][2] = {{1, 220}, {2, 0}};
  expect_waits(&f, want, DC_COUNTOF(want));
  model_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_correction_and_check),
      cmocka_unit_test(test_blocking_calls),
      cmocka_unit_test(test_collective_waits),
      cmocka_unit_test(test_staged_copy),
      cmocka_unit_test(test_pageable_copy_wait),
      cmocka_unit_test(test_current_format),
      cmocka_unit_test(test_legacy_and_gzip),
      cmocka_unit_test(test_merge),
      cmocka_unit_test(test_steps),
      cmocka_unit_test(test_steps_none_selected),
      cmocka_unit_test(test_iqr),
      cmocka_unit_test(test_stats),
      cmocka_unit_test(test_kinds),
      cmocka_unit_test(test_containers),
      cmocka_unit_test(test_profile_roundtrip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
