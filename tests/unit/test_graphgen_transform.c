/*
 * test_graphgen_transform.c — the what-if transforms (scale, remove, move
 * to a stream) and the verifier: each transform changes exactly what its
 * pattern matches and leaves a valid graph; the verifier catches graphs
 * broken on purpose.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "graphgen/graphgen.h"
#include "tests/golden/graph/points.h"
#include "tests/unit/graph_fixture.h"

static void small(tp_cfg *c) {
  static const int64_t bot[] = {4, 3};
  static const int64_t top[] = {5, 1};
  tp_init(c, bot, 2, top, 2, 2, 10, 3, 2, 8);
}

static void add(tp_cfg *c, dc_transform_kind kind, const char *match,
                double factor, int32_t stream) {
  dc_transform *t = &c->tr[c->p.n_transforms++];
  t->kind = kind;
  t->match = match;
  t->factor = factor;
  t->stream = stream;
  c->p.transforms = c->tr;
}

static void test_scale(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  add(&c, DC_TRANSFORM_SCALE, "^gemm$", 0.5, 0);
  add(&c, DC_TRANSFORM_SCALE, "ReluBackward0", 3, 0);
  dc_graph *g = build(&c);
  int gemm = 0, relu_bw = 0, other = 0;
  for (int32_t i = 0; i < g->n_ops; i++) {
    const char *top = g->ops[i].name;
    for (int32_t q = g->ops[i].parent; q >= 0; q = g->ops[q].parent)
      top = g->ops[q].name;
    for (int32_t l = 0; l < g->ops[i].n_launches; l++) {
      const dc_kernel *k = &g->ops[i].launches[l].k;
      if (k->kind == DC_KERNEL_GEMM) {
        assert_true(k->scale == 0.5);
        gemm++;
      } else if (strstr(top, "ReluBackward0")) {
        /* reaches the threshold_backward kernel inside */
        assert_true(k->scale == 3.0);
        relu_bw++;
      } else {
        assert_true(k->scale == 1.0);
        other++;
      }
    }
  }
  assert_int_equal(gemm, 3 + 1 + 5 + 2);
  assert_int_equal(relu_bw, 2);
  assert_true(other > 10);
}

static void test_remove(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  dc_graph *g0 = build(&c);
  int32_t n0 = g0->n_ops;
  add(&c, DC_TRANSFORM_REMOVE, "^aten::relu$|IndexBackward0", 1, 0);
  dc_graph *g = build(&c); /* verified: still valid */
  int relu = 0, idx_bw = 0, h2d_in_bw = 0;
  for (int32_t i = 0; i < g->n_ops; i++) {
    relu += strcmp(g->ops[i].name, "aten::relu") == 0;
    idx_bw += strstr(g->ops[i].name, "IndexBackward0") != NULL;
    h2d_in_bw += strcmp(g->ops[i].name, "aten::_index_put_impl_") == 0;
  }
  assert_int_equal(relu, 0);
  assert_int_equal(idx_bw, 0);
  assert_int_equal(h2d_in_bw, 0); /* the subtree went with it */
  /* 2 relu + IndexBackward0 with its 2 children */
  assert_int_equal(g->n_ops, n0 - 2 - 3);
  assert_int_equal(g->rank_first[1], g->n_ops);
  /* what the removed relu produced is now an input of the iteration */
  int32_t lin = -1;
  for (int32_t i = 0; i < g->n_ops; i = g->ops[i].end)
    if (strcmp(g->ops[i].name, "aten::linear") == 0 && lin < 0) lin = i;
  int32_t bw_relu = -1;
  for (int32_t i = 0; i < g->n_ops; i++)
    if (strcmp(g->ops[i].name, "aten::threshold_backward") == 0) {
      bw_relu = i;
      break;
    }
  assert_true(bw_relu > 0);
  assert_int_equal(g->tensors[g->ops[bw_relu].inputs[1]].producer, -1);
}

static void test_stream(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  add(&c, DC_TRANSFORM_STREAM, "embedding_bag|EmbeddingBag", 1, 2);
  dc_graph *g = build(&c);
  assert_int_equal(g->n_streams, 3);
  int moved = 0;
  for (int32_t i = 0; i < g->n_ops; i++)
    for (int32_t l = 0; l < g->ops[i].n_launches; l++) {
      const dc_launch *x = &g->ops[i].launches[l];
      if (x->k.kind == DC_KERNEL_EMBEDDING_FWD ||
          x->k.kind == DC_KERNEL_EMBEDDING_BWD) {
        assert_int_equal(x->stream, 2);
        moved++;
      } else {
        assert_int_equal(x->stream, 0);
      }
    }
  assert_int_equal(moved, 4);
}

static void test_bad_pattern(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  add(&c, DC_TRANSFORM_SCALE, "(gemm", 2, 0);
  dc_diags d = {0};
  assert_null(dc_graph_build(&c.p, &arena, &d));
  assert_int_equal(d.errors, 1);
  assert_int_equal(d.items[0].code, DC_DIAG_BAD_REGEX);
  dc_diags_free(&d);
}

/* The verifier on graphs broken on purpose (a fresh build each time). */
static void expect_invalid(dc_graph *g, const char *what) {
  dc_diags d = {0};
  if (dc_graph_verify(g, &d)) fail_msg("verifier accepted: %s", what);
  assert_true(d.errors > 0);
  assert_int_equal(d.items[0].code, DC_DIAG_GRAPH);
  dc_diags_free(&d);
}

static int32_t find(const dc_graph *g, const char *name) {
  for (int32_t i = 0; i < g->n_ops; i++)
    if (strcmp(g->ops[i].name, name) == 0) return i;
  return -1;
}

static void test_verifier(void **state) {
  (void)state;
  tp_cfg c;
  small(&c);
  dc_graph *g = build(&c);

  /* a tensor used before it is produced */
  int32_t relu = find(g, "aten::relu");
  int32_t t = g->ops[relu].inputs[0];
  int32_t saved = g->tensors[t].producer;
  g->tensors[t].producer = relu + 1;
  expect_invalid(g, "use before production");
  g->tensors[t].producer = saved;

  /* a GEMM of size zero */
  int32_t mm = find(g, "aten::addmm");
  g->ops[mm].launches[0].k.u.gemm.k = 0;
  expect_invalid(g, "gemm k = 0");
  g->ops[mm].launches[0].k.u.gemm.k = 4;

  /* inconsistent shapes: linear weight with the wrong in-features */
  int32_t lin = find(g, "aten::linear");
  int32_t w = g->ops[lin].inputs[1];
  g->tensors[w].shape[1] = 5;
  expect_invalid(g, "linear shapes");
  g->tensors[w].shape[1] = 4;

  /* a kernel on a stream that does not exist; a zero scale */
  g->ops[relu].launches[0].stream = 3;
  expect_invalid(g, "stream");
  g->ops[relu].launches[0].stream = 0;
  g->ops[relu].launches[0].k.scale = 0;
  expect_invalid(g, "scale");
  g->ops[relu].launches[0].k.scale = 1;

  /* a tree that does not nest */
  int32_t end = g->ops[lin].end;
  g->ops[lin].end = lin;
  expect_invalid(g, "end");
  g->ops[lin].end = end;

  /* a zero dimension */
  g->tensors[t].shape[0] = 0;
  expect_invalid(g, "zero dim");
  g->tensors[t].shape[0] = 8;

  dc_diags d = {0};
  assert_true(dc_graph_verify(g, &d)); /* repaired */
  dc_diags_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_scale, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_pattern, setup, teardown),
      cmocka_unit_test_setup_teardown(test_verifier, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
