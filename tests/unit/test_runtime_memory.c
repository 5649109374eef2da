/*
 * test_runtime_memory.c — the one-GPU memory estimate (runtime/metrics.c,
 * the graph walk): a tensor counts once however many ops list it (an
 * aten::linear and its aten::addmm name the same output), activations grow
 * with the batch and parameters do not, and the parameter bytes are those
 * worked out from the model by hand; and the walk and graphgen's per-rank
 * formula (dc_shard_plan_memory, what the columns report on more than one
 * GPU) agree on parameters and optimizer state and differ on workspace by
 * the embedding gradients alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>

#include "runtime/runtime.h"
#include "tests/golden/graph/points.h"
#include "tests/unit/graph_fixture.h"

static int64_t bytes_of(const dc_tensor *t) {
  int64_t n = dc_dtype_bytes(t->dtype);
  for (int32_t i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

/* Bottom 16-32-8, top 8-1 (dot over 2 tables of dim 8: 8 + 3 = 11 inputs,
 * so the top MLP is 11-8-1), 2 tables of 1000 rows. */
static void small(tp_cfg *c, int64_t batch) {
  static const int64_t bot[] = {16, 32, 8};
  static const int64_t top[] = {8, 1};
  tp_init(c, bot, 3, top, 2, 2, 1000, 8, 2, batch);
}

/* Every device tensor of the forward counts at most once: the estimate is
 * no more than the sum of the distinct tensors the input, forward and loss
 * ops write. (An output that a parent and its child both list, counted
 * once per op, breaks this bound.) */
static void tensor_counts_once(void **state) {
  (void)state;
  tp_cfg c;
  small(&c, 64);
  dc_graph *g = build(&c);
  bool *seen = dc_arena_array(&arena, (size_t)g->n_tensors, sizeof(bool));
  int64_t distinct = 0, listed = 0;
  for (int32_t j = 0; j < g->n_ops; j++) {
    const dc_op *op = &g->ops[j];
    if (op->phase > DC_PHASE_LOSS) continue;
    for (int32_t i = 0; i < op->n_outputs; i++) {
      const dc_tensor *t = &g->tensors[op->outputs[i]];
      if (t->on_host) continue;
      listed += bytes_of(t);
      if (!seen[op->outputs[i]]) distinct += bytes_of(t);
      seen[op->outputs[i]] = true;
    }
  }
  assert_true(listed > distinct); /* the graph does list tensors twice */
  dc_memory m;
  dc_memory_estimate(g, (int64_t)16 << 30, &m);
  assert_true(m.activations_bytes > 0);
  assert_true(m.activations_bytes <= distinct);
}

/* Parameters: MLPs (16·32 + 32) + (32·8 + 8) + (11·8 + 8) + (8·1 + 1) =
 * 544 + 264 + 96 + 9 = 913 fp32, plus 2 tables × 1000 × 8 fp32; SGD keeps no state. Batch 64
 * against 128: same parameters, more activations. */
static void params_and_batch(void **state) {
  (void)state;
  tp_cfg c;
  small(&c, 64);
  dc_memory a, b;
  dc_memory_estimate(build(&c), (int64_t)16 << 30, &a);
  small(&c, 128);
  dc_memory_estimate(build(&c), (int64_t)16 << 30, &b);
  assert_int_equal(a.params_bytes, 913 * 4 + 2 * 1000 * 8 * 4);
  assert_int_equal(a.optimizer_bytes, 0);
  assert_int_equal(b.params_bytes, a.params_bytes);
  assert_true(b.activations_bytes > a.activations_bytes);
  assert_true(b.activations_bytes <= 2 * a.activations_bytes);
}

/* The two memory models (spec/design.md) on one GPU, for each optimizer:
 * the formula's parameters and optimizer state are the walk's; its
 * workspace is the walk's plus the embedding gradients; activations
 * differ by design (the walk counts views' outputs). */
static void walk_and_formula_agree(void **state) {
  (void)state;
  static const dc_optimizer opts[] = {DC_OPTIMIZER_SGD, DC_OPTIMIZER_ADAGRAD,
                                      DC_OPTIMIZER_ROWWISE_ADAGRAD,
                                      DC_OPTIMIZER_ADAM};
  for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
    tp_cfg c;
    small(&c, 64);
    c.p.optimizer = c.p.sparse_optimizer = opts[k];
    dc_graph *g = build(&c);
    dc_memory walk;
    dc_memory_estimate(g, (int64_t)16 << 30, &walk);
    dc_diags d = {0};
    dc_shard_plan *s = dc_shard_plan_default(&c.p, &arena, &d);
    assert_non_null(s);
    dc_diags_free(&d);
    dc_rank_memory f;
    dc_shard_plan_memory(&c.p, s, 0, &f);
    assert_int_equal(walk.params_bytes, f.emb_weights + f.dense_weights);
    assert_int_equal(walk.optimizer_bytes,
                     f.emb_optimizer + f.dense_optimizer);
    /* the walk's workspace leaves out the embedding gradients the
     * formula keeps (the lookups' backward writes them in place) */
    assert_int_equal(walk.workspace_bytes, f.dense_grad + f.workspace);
    assert_true(f.emb_grad > 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(walk_and_formula_agree, setup, teardown),
      cmocka_unit_test_setup_teardown(tensor_counts_once, setup, teardown),
      cmocka_unit_test_setup_teardown(params_and_batch, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
