/*
 * eval_fixture.h — what the runtime tests that evaluate whole points
 * share: evaluate_point() builds a point's graph and evaluates it as
 * `dlrmc run` does (dc_plan_build_graph, then dc_eval_point with the
 * point's device, links applied), failing the test on any diagnostic
 * (with tests/unit/graph_fixture.h included first: its arena);
 * eval_graph_ok() evaluates a graph built any other way.
 */
#ifndef DC_TESTS_EVAL_FIXTURE_H
#define DC_TESTS_EVAL_FIXTURE_H

#include "runtime/plan/plan.h"
#include "runtime/runtime.h"

/* Evaluates a built graph g (NULL fails the test) into r and m with the
 * arena a, as `dlrmc run` prices a row; any diagnostic fails the test. */
static inline void eval_graph_ok(const dc_graph *g, dc_arena *a,
                                 dc_eval_result *r, dc_metrics *m,
                                 dc_diags *d) {
  if (!g) dc_diags_render(d, stderr, false);
  assert_non_null(g);
  dc_profile prof;
  bool ok = dc_eval_point(g, false, a, r, m, &prof, d);
  if (!ok) dc_diags_render(d, stderr, false);
  assert_true(ok);
}

#ifdef DC_TESTS_GRAPH_FIXTURE_H
static inline const dc_graph *evaluate_point(const dc_point *p,
                                             dc_eval_result *r,
                                             dc_metrics *m) {
  dc_diags d = {0};
  const dc_graph *g = dc_plan_build_graph(p, DC_GRAPH_FULL, &arena, &d);
  if (!g) dc_diags_render(&d, stderr, false);
  assert_non_null(g);
  dc_profile prof;
  bool ok = dc_eval_point(g, true, &arena, r, m, &prof, &d);
  if (!ok) dc_diags_render(&d, stderr, false);
  assert_true(ok);
  dc_diags_free(&d);
  return g;
}
#endif

#endif /* DC_TESTS_EVAL_FIXTURE_H */
