/*
 * test_compiler_fastpoint.c — dc_study_point lowers a sweep over
 * training.batch_size from a template resolved once and patched (study.c);
 * these tests check that every point equals the one the full resolver
 * gives (fe_study_point_full), field by field, on studies that sweep the
 * batch size alone, zipped, crossed with other keys, with -D overrides,
 * and from several threads at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <string.h>

#include "compiler/study_int.h"

static dc_study *load(const char *text, const dc_override *ov, size_t n) {
  dc_diags d = {0};
  dc_study *s = dc_study_load_memory("t.yaml", text, strlen(text), ov, n, &d);
  if (!s)
    for (size_t i = 0; i < d.count; i++)
      print_error("%s\n", d.items[i].message);
  dc_diags_free(&d);
  assert_non_null(s);
  return s;
}

static void same_str(const char *a, const char *b) {
  if (!a || !b) {
    assert_ptr_equal(a, b);
    return;
  }
  assert_string_equal(a, b);
}

static void same_point(const dc_point *a, const dc_point *b) {
  assert_int_equal(a->index, b->index);
  same_str(a->study, b->study);
  same_str(a->model_name, b->model_name);
  assert_int_equal(a->n_bottom, b->n_bottom);
  for (int32_t i = 0; i < a->n_bottom; i++)
    assert_int_equal(a->bottom_mlp[i], b->bottom_mlp[i]);
  assert_int_equal(a->n_top, b->n_top);
  for (int32_t i = 0; i < a->n_top; i++)
    assert_int_equal(a->top_mlp[i], b->top_mlp[i]);
  assert_int_equal(a->n_tables, b->n_tables);
  for (int32_t i = 0; i < a->n_tables; i++) {
    const dc_table *x = &a->tables[i], *y = &b->tables[i];
    same_str(x->name, y->name);
    assert_int_equal(x->rows, y->rows);
    assert_int_equal(x->dim, y->dim);
    assert_true(x->pooling == y->pooling);
    assert_int_equal(x->sharding, y->sharding);
    assert_int_equal(x->n_ranks, y->n_ranks);
    for (int32_t r = 0; r < x->n_ranks; r++)
      assert_int_equal(x->ranks[r], y->ranks[r]);
  }
  assert_int_equal(a->interaction, b->interaction);
  assert_int_equal(a->interaction_self, b->interaction_self);
  assert_int_equal(a->dcn_layers, b->dcn_layers);
  assert_int_equal(a->dcn_low_rank, b->dcn_low_rank);
  assert_int_equal(a->sparse_optimizer, b->sparse_optimizer);
  assert_int_equal(a->embedding_precision, b->embedding_precision);
  assert_int_equal(a->comm_precision, b->comm_precision);
  assert_int_equal(a->loss, b->loss);
  assert_int_equal(a->embedding_kernel, b->embedding_kernel);
  assert_int_equal(a->batch_size, b->batch_size);
  assert_int_equal(a->precision, b->precision);
  assert_int_equal(a->optimizer, b->optimizer);
  assert_int_equal(a->zero_grad_legacy, b->zero_grad_legacy);
  assert_int_equal(a->ddp_bucket_bytes, b->ddp_bucket_bytes);
  same_str(a->gpu, b->gpu);
  assert_int_equal(a->gpus, b->gpus);
  assert_int_equal(a->hosts, b->hosts);
  assert_int_equal(a->gpus_per_host, b->gpus_per_host);
  same_str(a->overheads, b->overheads);
  assert_true(a->nvlink_gbps == b->nvlink_gbps);
  assert_true(a->pcie_gbps == b->pcie_gbps);
  assert_true(a->nic_gbps == b->nic_gbps);
  assert_true(a->link_latency_us == b->link_latency_us);
  assert_int_equal(a->nvlink_domain, b->nvlink_domain);
  assert_int_equal(a->sharp, b->sharp);
  assert_int_equal(a->sharding, b->sharding);
  assert_int_equal(a->embedding_model, b->embedding_model);
  assert_int_equal(a->n_transforms, b->n_transforms);
  for (int32_t i = 0; i < a->n_transforms; i++) {
    assert_int_equal(a->transforms[i].kind, b->transforms[i].kind);
    same_str(a->transforms[i].match, b->transforms[i].match);
    assert_true(a->transforms[i].factor == b->transforms[i].factor);
    assert_int_equal(a->transforms[i].stream, b->transforms[i].stream);
  }
  assert_int_equal(a->n_params, b->n_params);
  for (int32_t i = 0; i < a->n_params; i++) {
    same_str(a->params[i].path, b->params[i].path);
    same_str(a->params[i].value, b->params[i].value);
  }
}

/* Every point both ways; returns whether the fast path was taken. */
static bool check_all(const dc_study *s) {
  dc_arena a, b;
  dc_arena_init(&a);
  dc_arena_init(&b);
  for (int64_t i = 0; i < dc_study_point_count(s); i++) {
    dc_point p, q;
    dc_arena_reset(&a);
    dc_arena_reset(&b);
    dc_study_point(s, i, &a, &p);
    fe_study_point_full(s, i, &b, &q);
    same_point(&p, &q);
  }
  dc_arena_free(&a);
  dc_arena_free(&b);
  return s->fast != NULL;
}

static const char *batch_range =
    "study: t\n"
    "model: {preset: dlrm_mlperf, embedding_kernel: batched}\n"
    "system: {gpu: A100-SXM4-80GB, overheads: paper-v100}\n"
    "sweep:\n"
    "  training.batch_size: {from: 1, to: 300, step: 7}\n";

static void range_alone(void **st) {
  (void)st;
  dc_study *s = load(batch_range, NULL, 0);
  assert_true(check_all(s));
  dc_point p;
  dc_arena a;
  dc_arena_init(&a);
  dc_study_point(s, 3, &a, &p);
  assert_int_equal(p.batch_size, 22); /* 1 + 3 × 7 */
  assert_string_equal(p.params[0].value, "22");
  dc_arena_free(&a);
  dc_study_free(s);
}

static void crossed_and_zipped(void **st) {
  (void)st;
  /* batch × (gpu, precision) lists: one template per GPU and precision */
  dc_study *s = load("study: t\n"
                     "model: {preset: dlrm_default}\n"
                     "sweep:\n"
                     "  system.gpu: [V100-SXM2-16GB, A100-SXM4-80GB, B200]\n"
                     "  training.precision: [fp32, fp16]\n"
                     "  training.batch_size: [512, 1024, 4096]\n",
                     NULL, 0);
  assert_true(check_all(s));
  dc_study_free(s);
  /* batch zipped with the GPU count: the group is not patchable */
  s = load("study: t\n"
           "model: {preset: dlrm_default}\n"
           "sweep:\n"
           "  mode: zip\n"
           "  training.batch_size: [1024, 2048]\n"
           "  system.gpus: [1, 2]\n",
           NULL, 0);
  check_all(s);
  dc_study_free(s);
  /* the modern keys through templates and batch patching */
  s = load("study: t\n"
           "model: {preset: dlrm_dcnv2}\n"
           "system: {gpu: H100, gpus: 8}\n"
           "sweep:\n"
           "  model.dcn.low_rank: [64, 512]\n"
           "  training.embedding_precision: [fp32, fp16, fp8]\n"
           "  training.sparse_optimizer: [sgd, rowwise_adagrad]\n"
           "  training.comm_precision: [fp32, bf16]\n"
           "  training.batch_size: [8192, 65536]\n",
           NULL, 0);
  assert_true(check_all(s));
  dc_study_free(s);
}

static void with_overrides(void **st) {
  (void)st;
  /* -D sets a fixed batch (the sweep value still wins) and a list axis */
  dc_override ov[] = {{"training.batch_size", "64"},
                      {"model.embedding_kernel", "per_table,batched"}};
  dc_study *s = load(batch_range, ov, 2);
  assert_true(check_all(s));
  dc_study_free(s);
}

typedef struct job {
  const dc_study *s;
  bool ok;
} job;

static void *worker(void *arg) {
  job *j = arg;
  dc_arena a, b;
  dc_arena_init(&a);
  dc_arena_init(&b);
  j->ok = true;
  for (int64_t i = dc_study_point_count(j->s); i-- > 0;) {
    dc_point p, q;
    dc_arena_reset(&a);
    dc_arena_reset(&b);
    dc_study_point(j->s, i, &a, &p);
    fe_study_point_full(j->s, i, &b, &q);
    if (p.batch_size != q.batch_size || strcmp(p.gpu, q.gpu) != 0 ||
        p.precision != q.precision || p.n_tables != q.n_tables)
      j->ok = false;
  }
  dc_arena_free(&a);
  dc_arena_free(&b);
  return NULL;
}

static void threads(void **st) {
  (void)st;
  dc_study *s = load("study: t\n"
                     "model: {preset: dlrm_default}\n"
                     "sweep:\n"
                     "  system.gpu: [V100-SXM2-16GB, A100-SXM4-80GB]\n"
                     "  training.precision: [fp32, fp16, bf16]\n"
                     "  training.batch_size: {from: 8, to: 800, step: 8}\n",
                     NULL, 0);
  job j[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    j[i] = (job){s, false};
    assert_int_equal(pthread_create(&t[i], NULL, worker, &j[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_true(j[i].ok);
  }
  dc_study_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(range_alone),
      cmocka_unit_test(crossed_and_zipped),
      cmocka_unit_test(with_overrides),
      cmocka_unit_test(threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
