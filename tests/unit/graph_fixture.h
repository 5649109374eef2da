/*
 * graph_fixture.h — what the graph-level unit tests share: one arena per
 * test (cmocka setup/teardown) and build(), which builds a hand-made point
 * and fails the test unless the graph builds without errors and passes
 * the verifier. Include after cmocka.h and tests/golden/graph/points.h.
 */
#ifndef DC_TESTS_GRAPH_FIXTURE_H
#define DC_TESTS_GRAPH_FIXTURE_H

#include <stdio.h>

#include "graphgen/graphgen.h"

static dc_arena arena;

static inline int setup(void **state) {
  (void)state;
  dc_arena_init(&arena);
  return 0;
}

static inline int teardown(void **state) {
  (void)state;
  dc_arena_free(&arena);
  return 0;
}

static inline dc_graph *build(const tp_cfg *c) {
  dc_diags d = {0};
  dc_graph *g = dc_graph_build(&c->p, &arena, &d);
  if (!g || d.errors) dc_diags_render(&d, stderr, false);
  assert_non_null(g);
  bool ok = dc_graph_verify(g, &d);
  if (!ok) dc_diags_render(&d, stderr, false);
  assert_true(ok);
  assert_int_equal(d.errors, 0);
  dc_diags_free(&d);
  return g;
}

#endif /* DC_TESTS_GRAPH_FIXTURE_H */
