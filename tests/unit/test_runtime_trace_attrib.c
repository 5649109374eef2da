/*
 * test_runtime_trace_attrib.c — the CPU-op args the Kineto loader keeps
 * (Input Dims, Input type, Input Strides, External id, Record function id,
 * Sequence number, Fwd thread id) and the op -> GPU activity attribution
 * (attrib.c), on the hand-written tests/fixtures/traces/shapes_kineto.json.
 *
 * The fixture (µs; thread 1 forward, thread 2 autograd, stream 7):
 *
 *   ProfilerStep#1                    1000..1500
 *     aten::linear                    1010..1110
 *       aten::t                       1012..1017
 *       aten::addmm                   1020..1100
 *         launch corr 1 -> sgemm_tn      50 µs
 *         launch corr 2 -> splitKreduce   6 µs
 *     aten::relu                      1120..1140  corr 3 -> threshold 4
 *     aten::bmm ("args" before "cat") 1150..1190  corr 4 -> fp16 gemm 30
 *                                                   + a 2 µs memset
 *     aten::mm (no Input Dims)        1200..1230  corr 5 -> sgemm 10
 *     aten::cat (a TensorList input)  1250..1270
 *     aten::weird (malformed args)    1480..1485
 *   (thread 2) evaluate_function: AddmmBackward0 1300..1400
 *     AddmmBackward0                  1301..1391
 *       aten::t, aten::mm             corr 6 -> sgemm 20
 *       aten::t, aten::mm             corr 7 -> s1688gemm 20, corr 8 ->
 *                                     splitKreduce 5
 *
 * So linear and addmm launched 56 µs in 2 kernels; bmm 32 µs of which
 * 30 in its one kernel; the backward op 45 µs in 3 kernels and its second
 * mm 25 µs in 2; ProfilerStep#1 everything of thread 1: 102 µs, 6
 * activities, 5 kernels.
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

#include "runtime/trace/trace.h"
#include "trace_fixture.h"


#define assert_near(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-6)

typedef struct fx {
  dc_arena a;
  dc_trace t;
  dc_trace_model m;
  dc_trace_attrib at;
} fx;

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  dc_arena_init(&f->a);
  dc_diags d = {0};
  char *path = fixture("shapes_kineto.json");
  bool ok = dc_trace_load(path, &f->t, &f->a, &d) &&
            dc_trace_model_build(&f->t, NULL, &f->m, &d);
  free(path);
  dc_diags_free(&d);
  if (!ok) return -1;
  dc_trace_attrib_build(&f->m, &f->at);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  dc_trace_attrib_free(&f->at);
  dc_trace_model_free(&f->m);
  dc_trace_free(&f->t);
  dc_arena_free(&f->a);
  free(f);
  return 0;
}

/* The n-th (0-based) event named `name` in file order. */
static size_t find(const dc_trace *t, const char *name, int nth) {
  for (size_t i = 0; i < t->n_ev; i++)
    if (strcmp(t->names[t->ev[i].name], name) == 0 && nth-- == 0) return i;
  fail_msg("no event '%s'", name);
  return 0;
}

static void assert_dims(const dc_trace *t, const dc_trace_input *in,
                        const int64_t *want, uint32_t rank) {
  uint32_t r;
  const int64_t *d = dc_trace_input_dims(t, in, &r);
  assert_non_null(d);
  assert_int_equal(r, rank);
  for (uint32_t i = 0; i < rank; i++) assert_int_equal(d[i], want[i]);
}

static void test_record_size(void **state) {
  (void)state;
  assert_int_equal(sizeof(dc_trace_event), 40);
}

static void test_addmm_args(void **state) {
  fx *f = *state;
  const dc_trace *t = &f->t;
  const dc_trace_args *a = dc_trace_args_of(t, find(t, "aten::addmm", 0));
  assert_non_null(a);
  assert_int_equal(a->external_id, 12);
  assert_int_equal(a->record_function_id, 99);
  assert_int_equal(a->sequence, 7);
  assert_int_equal(a->fwd_thread, 0);
  assert_int_equal(a->n_inputs, 5);
  const dc_trace_input *x = dc_trace_input_at(t, a, 1);
  assert_dims(t, x, (int64_t[]){64, 32}, 2);
  assert_string_equal(dc_trace_input_type(t, x), "float");
  uint32_t r;
  const int64_t *s = dc_trace_input_strides(t, dc_trace_input_at(t, a, 2), &r);
  assert_non_null(s);
  assert_int_equal(r, 2);
  assert_int_equal(s[0], 1);
  assert_int_equal(s[1], 32);
  const dc_trace_input *alpha = dc_trace_input_at(t, a, 4);
  assert_dims(t, alpha, NULL, 0);
  assert_string_equal(dc_trace_input_type(t, alpha), "Scalar");
  assert_null(dc_trace_input_at(t, a, 5));
}

static void test_other_ops(void **state) {
  fx *f = *state;
  const dc_trace *t = &f->t;
  /* "args" before "cat": kept all the same */
  const dc_trace_args *b = dc_trace_args_of(t, find(t, "aten::bmm", 0));
  assert_non_null(b);
  assert_int_equal(b->external_id, 14);
  assert_int_equal(b->sequence, -1);
  assert_dims(t, dc_trace_input_at(t, b, 0), (int64_t[]){8, 64, 16}, 3);
  assert_string_equal(dc_trace_input_type(t, dc_trace_input_at(t, b, 1)),
                      "c10::Half");
  /* no Input Dims: args with no inputs */
  const dc_trace_args *mm = dc_trace_args_of(t, find(t, "aten::mm", 0));
  assert_non_null(mm);
  assert_int_equal(mm->external_id, 15);
  assert_int_equal(mm->n_inputs, 0);
  /* a TensorList input is a list of shapes, not a tensor */
  const dc_trace_args *c = dc_trace_args_of(t, find(t, "aten::cat", 0));
  const dc_trace_input *l = dc_trace_input_at(t, c, 0);
  assert_true(l->list);
  assert_int_equal(l->n_shapes, 2);
  uint32_t r;
  assert_null(dc_trace_input_dims(t, l, &r));
  assert_int_equal(t->shapes[l->shape + 1].rank, 2);
  assert_int_equal(t->dims[t->shapes[l->shape + 1].first], 64);
  /* backward op: its forward's sequence number and thread */
  const dc_trace_args *bw = dc_trace_args_of(t, find(t, "AddmmBackward0", 0));
  assert_int_equal(bw->sequence, 7);
  assert_int_equal(bw->fwd_thread, 1);
  /* runtime calls and kernels keep no args */
  assert_null(dc_trace_args_of(t, find(t, "cudaLaunchKernel", 0)));
  assert_null(dc_trace_args_of(t, find(t, "ampere_sgemm_128x64_nn", 0)));
  /* annotations keep theirs (replay matches them by record-function id) */
  assert_non_null(dc_trace_args_of(t, find(t, "ProfilerStep#1", 0)));
}

/* Malformed entries spoil only themselves. */
static void test_malformed_args(void **state) {
  fx *f = *state;
  const dc_trace *t = &f->t;
  const dc_trace_args *a = dc_trace_args_of(t, find(t, "aten::weird", 0));
  assert_non_null(a);
  assert_int_equal(a->n_inputs, 6);
  assert_int_equal(a->sequence, -1);   /* "7": not a number */
  assert_int_equal(a->fwd_thread, -1); /* negative */
  for (uint32_t i = 0; i < 6; i++) {
    const dc_trace_input *in = dc_trace_input_at(t, a, i);
    if (i == 4) {
      assert_dims(t, in, (int64_t[]){2, 3}, 2);
    } else {
      assert_int_equal(in->shape, DC_TRACE_NONE);
      assert_int_equal(in->n_shapes, 0);
      assert_false(in->list);
    }
  }
  static const char *const types[] = {"float", "", "", "", "", "long int"};
  for (uint32_t i = 0; i < 6; i++)
    assert_string_equal(dc_trace_input_type(t, dc_trace_input_at(t, a, i)),
                        types[i]);
}

static void expect(const fx *f, const char *name, int nth, uint32_t n,
                   uint32_t n_kernels, double us, double kernel_us) {
  dc_trace_launched l = dc_trace_attrib_of(&f->at, find(&f->t, name, nth));
  if (l.n != n || l.n_kernels != n_kernels || fabs(l.us - us) > 1e-9 ||
      fabs(l.kernel_us - kernel_us) > 1e-9)
    fail_msg("%s#%d: %u activities (%u kernels), %.3f us (%.3f), expected "
             "%u (%u), %.3f (%.3f)",
             name, nth, l.n, l.n_kernels, l.us, l.kernel_us, n, n_kernels, us,
             kernel_us);
}

static void test_attribution(void **state) {
  fx *f = *state;
  expect(f, "aten::linear", 0, 2, 2, 56, 56);
  expect(f, "aten::addmm", 0, 2, 2, 56, 56);
  expect(f, "aten::t", 0, 0, 0, 0, 0);
  expect(f, "aten::relu", 0, 1, 1, 4, 4);
  expect(f, "aten::bmm", 0, 2, 1, 32, 30);
  expect(f, "aten::mm", 0, 1, 1, 10, 10);
  expect(f, "aten::cat", 0, 0, 0, 0, 0);
  expect(f, "autograd::engine::evaluate_function: AddmmBackward0", 0, 3, 3,
         45, 45);
  expect(f, "AddmmBackward0", 0, 3, 3, 45, 45);
  expect(f, "aten::mm", 1, 1, 1, 20, 20);
  expect(f, "aten::mm", 2, 2, 2, 25, 25);
  expect(f, "ProfilerStep#1", 0, 6, 5, 102, 100);
  /* a runtime call: what it launched itself; a kernel: nothing */
  expect(f, "cudaLaunchKernel", 0, 1, 1, 50, 50);
  expect(f, "ampere_sgemm_128x64_nn", 0, 0, 0, 0, 0);
  /* launch order: the addmm's gemm, then its reduction */
  const dc_trace *t = &f->t;
  dc_trace_launched l = dc_trace_attrib_of(&f->at, find(t, "aten::addmm", 0));
  assert_string_equal(t->names[t->ev[l.gpu[0]].name],
                      "ampere_sgemm_64x32_sliced1x4_tn");
  assert_true(strncmp(t->names[t->ev[l.gpu[1]].name],
                      "void splitKreduce_kernel", 24) == 0);
  /* top-level ops agree with the tree's own sums */
  for (size_t i = 0; i < f->m.n_tops; i++) {
    const dc_trace_top *tp = &f->m.tops[i];
    dc_trace_launched x = dc_trace_attrib_of(&f->at, tp->ev);
    assert_int_equal(x.n, tp->n_gpu);
    assert_near(x.us, tp->kernel_us);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_size),
      cmocka_unit_test_setup_teardown(test_addmm_args, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_ops, setup, teardown),
      cmocka_unit_test_setup_teardown(test_malformed_args, setup, teardown),
      cmocka_unit_test_setup_teardown(test_attribution, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
