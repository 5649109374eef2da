/*
 * test_runtime_plan_torchrec.c — `plan: auto` under `sharding.objective:
 * torchrec` (runtime/plan/planner_torchrec.c): the cost it reports is TorchRec's
 * estimate of the plan it returns; it finds the optimum of a small
 * partition that longest-first placement misses; it is no worse, under
 * TorchRec's cost, than every uniform plan nor than the dlrmc objective's
 * plan; it keeps every rank within TorchRec's storage budget and says so
 * when nothing fits; it honours pinned ranks, fixed types and allowed
 * types; it copes with one GPU; and it is deterministic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka 1.1 needs the four above first */
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "runtime/plan/plan.h"
#include "runtime/runtime.h"
#include "tests/golden/graph/points.h"
#include "tests/unit/graph_fixture.h"

static dc_device dev_of(const char *name) {
  dc_device dev;
  dc_diags d = {0};
  assert_true(dc_device_lookup(name, &dev, &arena, &d));
  dc_diags_free(&d);
  return dev;
}

/* T tables of varied size, dim and pooling on `gpus` GPUs, `gph` per
 * host, the torchrec objective. */
static void model(tp_cfg *c, int T, int gpus, int gph) {
  static const int64_t bot[] = {13, 64};
  static const int64_t top[] = {64, 1};
  static const int dims[] = {16, 64, 128, 256, 48, 512, 96, 32};
  tp_init(c, bot, 2, top, 2, T, 100000, 64, 1, 1024L * gpus);
  for (int t = 0; t < T; t++) {
    c->tables[t].rows = 50000 + 300000 * (int64_t)((t * 5) % 7);
    c->tables[t].dim = dims[t % 8];
    c->tables[t].pooling = 1 + (t * 3) % 11 * 4;
  }
  c->p.gpu = "H100-SXM5-80GB";
  c->p.overheads = "paper-v100";
  c->p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c->p.sparse_optimizer = DC_OPTIMIZER_ADAGRAD;
  c->p.gpus = gpus;
  c->p.gpus_per_host = gph;
  c->p.hosts = gpus / gph;
  c->p.objective = DC_OBJECTIVE_TORCHREC;
}

/* TorchRec's cost of a plan, ms. */
static double trec_ms(const dc_point *p, const dc_shard_plan *s) {
  dc_torchrec_consts tc;
  dc_torchrec_consts_of(p, &tc);
  dc_torchrec_estimate e;
  dc_torchrec_estimate_plan(p, s, &tc, &arena, &e);
  return e.max_ms;
}

/* The reported cost is TorchRec's estimate of the returned plan, which
 * dlrmc's own checks accept, and within the storage budget. */
static void test_cost_is_torchrec(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 12, 8, 4);
  dc_device dev = dev_of(c.p.gpu);
  dc_plan_opts o = {.dev = &dev};
  dc_diags d = {0};
  dc_plan_cost cost;
  dc_shard_plan *a = dc_plan_auto(&c.p, &o, &arena, &d, &cost);
  assert_non_null(a);
  assert_true(dc_shard_plan_check(&c.p, a, &d));
  assert_true(cost.fits);
  double ms = trec_ms(&c.p, a);
  assert_true(cost.total_us == ms * 1000);
  assert_true(cost.max_fwd_us + cost.max_bwd_us <= cost.total_us * 1.000001);
  dc_plan_cost again;
  dc_plan_cost_of(&c.p, a, &o, &arena, &again);
  assert_true(again.total_us == cost.total_us);
  dc_diags_free(&d);
}

/* Five table-wise tables on 2 GPUs, two heavy (pooling 300) and three
 * light (200): longest-first puts a heavy and a light table on each GPU
 * and the third light one on the first (3 units + 2 + 2 against 3 + 2);
 * the optimum pairs the heavy tables (3 + 3 against 2 + 2 + 2). The
 * planner must reach the optimum, found here by trying all 2^5
 * assignments. */
static void test_partition_optimum(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 5, 2, 2);
  for (int t = 0; t < 5; t++) {
    c.tables[t].dim = 128;
    c.tables[t].rows = 1000;
    c.tables[t].pooling = t < 2 ? 300 : 200;
  }
  dc_device dev = dev_of(c.p.gpu);
  dc_plan_opts o = {.dev = &dev,
                    .allowed = DC_PLAN_TYPE(DC_SHARDING_TABLE_WISE)};
  dc_diags d = {0};
  dc_plan_cost cost;
  dc_shard_plan *a = dc_plan_auto(&c.p, &o, &arena, &d, &cost);
  assert_non_null(a);
  dc_torchrec_consts tc;
  dc_torchrec_consts_of(&c.p, &tc);
  double w[5];
  for (int t = 0; t < 5; t++) {
    assert_int_equal(a->tables[t].type, DC_SHARDING_TABLE_WISE);
    w[t] = dc_torchrec_price_shard(&c.p, a, t, 0, &tc).total_ms;
  }
  double best = -1;
  for (int m = 0; m < 32; m++) {
    double l[2] = {0, 0};
    for (int t = 0; t < 5; t++)
      l[(m >> t) & 1] += w[t];
    double mx = l[0] > l[1] ? l[0] : l[1];
    if (best < 0 || mx < best) best = mx;
  }
  double lpt = w[0] + w[2] + w[4]; /* heavy + light + light */
  assert_true(best < lpt * (1 - 1e-6));
  double got = trec_ms(&c.p, a);
  printf("# optimum %.6f ms, planner %.6f ms, longest-first %.6f ms\n", best,
         got, lpt);
  assert_true(got <= best * (1 + 1e-12));
  dc_diags_free(&d);
}

/* Under TorchRec's cost the plan is no worse than any uniform plan
 * (every table one type, greedy placement) nor than the plan the dlrmc
 * objective picks. */
static void test_no_worse_than_others(void **state) {
  (void)state;
  for (int shape = 0; shape < 3; shape++) {
    static const int gpus[] = {4, 8, 16}, gph[] = {4, 2, 8};
    tp_cfg c;
    model(&c, 20, gpus[shape], gph[shape]);
    dc_device dev = dev_of(c.p.gpu);
    dc_plan_opts o = {.dev = &dev, .models = dc_kmodels_for(&dev)};
    dc_diags d = {0};
    dc_shard_plan *a = dc_plan_auto(&c.p, &o, &arena, &d, NULL);
    assert_non_null(a);
    double ours = trec_ms(&c.p, a);
    for (int y = DC_SHARDING_TABLE_WISE; y <= DC_SHARDING_DATA_PARALLEL; y++) {
      c.p.sharding = (dc_sharding)y;
      dc_shard_plan *u = dc_shard_plan_default(&c.p, &arena, &d);
      assert_non_null(u);
      assert_true(ours <= trec_ms(&c.p, u) * (1 + 1e-12));
    }
    c.p.sharding = DC_SHARDING_AUTO;
    c.p.objective = DC_OBJECTIVE_DLRMC;
    dc_shard_plan *b = dc_plan_auto(&c.p, &o, &arena, &d, NULL);
    assert_non_null(b);
    double theirs = trec_ms(&c.p, b);
    printf("# %d GPUs: torchrec objective %.6f ms, dlrmc objective %.6f ms\n",
           gpus[shape], ours, theirs);
    assert_true(ours <= theirs * (1 + 1e-12));
    dc_diags_free(&d);
  }
}

/* Storage: on 4 GiB GPUs a 20M × 128 Adagrad table (20 GB with its
 * state) must be split; every rank's TorchRec storage stays within the
 * budget. Table-wise only: nothing fits, E0503. */
static void test_storage(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 6, 8, 8);
  c.tables[0].rows = 20000000;
  c.tables[0].dim = 128;
  dc_device dev = dev_of(c.p.gpu);
  dev.hbm_bytes = (int64_t)4 << 30;
  dc_plan_opts o = {.dev = &dev};
  dc_diags d = {0};
  dc_plan_cost cost;
  dc_shard_plan *a = dc_plan_auto(&c.p, &o, &arena, &d, &cost);
  assert_non_null(a);
  assert_true(cost.fits);
  assert_true(a->tables[0].n_shards > 1);
  dc_torchrec_consts tc;
  dc_torchrec_consts_of(&c.p, &tc);
  tc.hbm_gib = 4;
  double cap = dc_torchrec_usable_hbm(&c.p, &tc);
  dc_torchrec_estimate e;
  dc_torchrec_estimate_plan(&c.p, a, &tc, &arena, &e);
  assert_true(e.max_hbm_bytes <= cap);
  assert_true((double)cost.max_mem_bytes <= cap);
  o.allowed = DC_PLAN_TYPE(DC_SHARDING_TABLE_WISE);
  assert_null(dc_plan_auto(&c.p, &o, &arena, &d, NULL));
  assert_int_equal(d.items[d.count - 1].code, DC_DIAG_NO_PLAN);
  dc_diags_free(&d);
}

/* Constraints: a table pinned to rank 3 stays there (table-wise, or its
 * only column block); a fixed type is kept; a per-table mask is obeyed. */
/* `plan: auto` with per-table allowed types; the plan passes dlrmc's
 * checks. */
static dc_shard_plan *plan_allowed(tp_cfg *c, const uint32_t *allowed) {
  dc_device dev = dev_of(c->p.gpu);
  dc_plan_opts o = {.dev = &dev, .table_allowed = allowed};
  dc_diags d = {0};
  dc_shard_plan *a = dc_plan_auto(&c->p, &o, &arena, &d, NULL);
  assert_non_null(a);
  assert_true(dc_shard_plan_check(&c->p, a, &d));
  dc_diags_free(&d);
  return a;
}

static void test_constraints(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 10, 4, 2);
  c.ranks[0] = 3;
  c.tables[0].n_ranks = 1;
  c.tables[0].ranks = c.ranks;
  c.tables[1].sharding = DC_SHARDING_DATA_PARALLEL;
  uint32_t allowed[10] = {0};
  allowed[2] = DC_PLAN_TYPE(DC_SHARDING_ROW_WISE);
  allowed[3] = DC_PLAN_TYPE(DC_SHARDING_TABLE_ROW_WISE);
  dc_shard_plan *a = plan_allowed(&c, allowed);
  assert_int_equal(a->tables[0].n_shards, 1);
  assert_int_equal(a->tables[0].shards[0].rank, 3);
  assert_int_equal(a->tables[1].type, DC_SHARDING_DATA_PARALLEL);
  assert_int_equal(a->tables[2].type, DC_SHARDING_ROW_WISE);
  assert_int_equal(a->tables[3].type, DC_SHARDING_TABLE_ROW_WISE);
}

/* model() of 6 tables on 16 GPUs (4 a host) in the torchrec style, t0
 * and t1 of dim 256 with their own sharding `ty`, t1 pinned to ranks r0
 * and r1. */
static void two_own(tp_cfg *c, dc_sharding ty, int32_t r0, int32_t r1) {
  model(c, 6, 16, 4);
  c->p.framework = DC_FRAMEWORK_TORCHREC;
  c->tables[0].dim = 256;
  c->tables[0].sharding = ty;
  c->tables[1].dim = 256;
  c->tables[1].sharding = ty;
  c->ranks[0] = r0;
  c->ranks[1] = r1;
  c->tables[1].n_ranks = 2;
  c->tables[1].ranks = c->ranks;
}

/* Two shards' TorchRec prices are the same, and not free. */
static void same_price(const dc_torchrec_shard *x,
                       const dc_torchrec_shard *y) {
  assert_true(x->fwd_compute_ms == y->fwd_compute_ms);
  assert_true(x->fwd_comms_ms == y->fwd_comms_ms);
  assert_true(x->bwd_compute_ms == y->bwd_compute_ms);
  assert_true(x->bwd_comms_ms == y->bwd_comms_ms);
  assert_true(x->hbm_bytes == y->hbm_bytes);
  assert_true(x->fwd_comms_ms > 0);
}

/* grid_shard under the torchrec objective: a table whose own sharding is
 * grid_shard gets a grid plan (column blocks on distinct hosts; pinned,
 * on the hosts its ranks name); a table left to the planner never does, even where its allowed
 * types include it (TorchRec's planner takes grid only on request). Each
 * grid shard is priced as a table-row-wise shard of its columns
 * (TorchRec's GridShardEvaluator is its TableRowWiseEvaluator). */
static void test_grid(void **state) {
  (void)state;
  tp_cfg c;
  two_own(&c, DC_SHARDING_GRID_SHARD, 12, 4);
  uint32_t allowed[6] = {0};
  allowed[2] = DC_PLAN_TYPE(DC_SHARDING_GRID_SHARD) |
               DC_PLAN_TYPE(DC_SHARDING_TABLE_WISE);
  dc_shard_plan *a = plan_allowed(&c, allowed);
  /* n blocks of 256/n columns, 4 row shards each, on distinct hosts */
  const dc_table_plan *g = &a->tables[0];
  assert_int_equal(g->type, DC_SHARDING_GRID_SHARD);
  int32_t n = g->n_shards / 4;
  assert_int_equal(g->n_shards, 4 * n);
  assert_int_equal(g->shards[0].cols * n, 256);
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = 0; j < i; j++)
      assert_true(dc_shard_plan_host(a, g->shards[4 * i].rank) !=
                  dc_shard_plan_host(a, g->shards[4 * j].rank));
  const dc_table_plan *p1 = &a->tables[1];
  assert_int_equal(p1->type, DC_SHARDING_GRID_SHARD);
  assert_int_equal(p1->shards[0].rank, 12);
  assert_int_equal(p1->shards[4].rank, 4);
  assert_int_equal(a->tables[2].type, DC_SHARDING_TABLE_WISE);
  for (int32_t t = 3; t < 6; t++)
    assert_true(a->tables[t].type != DC_SHARDING_GRID_SHARD);

  /* a grid shard's price: a table-row-wise shard of its 128 columns */
  dc_torchrec_consts tc;
  dc_torchrec_consts_of(&c.p, &tc);
  dc_torchrec_shard x = dc_torchrec_price_shard(&c.p, a, 1, 0, &tc);
  tp_cfg h;
  model(&h, 6, 16, 4);
  h.tables[1].dim = 128;
  h.tables[1].sharding = DC_SHARDING_TABLE_ROW_WISE;
  h.tables[1].n_ranks = 1;
  h.tables[1].ranks = h.ranks;
  h.ranks[0] = 12;
  dc_diags d = {0};
  dc_shard_plan *b = dc_shard_plan_default(&h.p, &arena, &d);
  assert_non_null(b);
  dc_torchrec_shard y = dc_torchrec_price_shard(&h.p, b, 1, 0, &tc);
  assert_int_equal(x.type, DC_SHARDING_GRID_SHARD);
  same_price(&x, &y);
  dc_diags_free(&d);
}

/* table_column_wise under both objectives: a table whose own sharding is
 * table_column_wise gets its column blocks on distinct GPUs of one host
 * (pinned: the ranks it names); a table left to the planner never does,
 * even where its allowed types include it (the column-wise candidates
 * hold every one-host placement). Its shards are priced as column-wise
 * ones (TorchRec's TableColumnWiseEvaluator is its TableWiseEvaluator). */
static void test_table_column_wise(void **state) {
  (void)state;
  for (int obj = 0; obj < 2; obj++) {
    tp_cfg c;
    two_own(&c, DC_SHARDING_TABLE_COLUMN_WISE, 13, 12);
    if (obj) c.p.objective = DC_OBJECTIVE_DLRMC;
    uint32_t allowed[6] = {0};
    for (int t = 2; t < 6; t++)
      allowed[t] = DC_PLAN_ALL_TYPES;
    dc_shard_plan *a = plan_allowed(&c, allowed);
    const dc_table_plan *g = &a->tables[0];
    assert_int_equal(g->type, DC_SHARDING_TABLE_COLUMN_WISE);
    assert_true(g->n_shards >= 1 && g->n_shards <= 4);
    assert_int_equal(g->shards[0].cols * g->n_shards, 256);
    for (int32_t i = 0; i < g->n_shards; i++)
      assert_int_equal(dc_shard_plan_host(a, g->shards[i].rank), g->host);
    const dc_table_plan *p1 = &a->tables[1];
    assert_int_equal(p1->type, DC_SHARDING_TABLE_COLUMN_WISE);
    assert_int_equal(p1->shards[0].rank, 13);
    assert_int_equal(p1->shards[1].rank, 12);
    assert_int_equal(p1->host, 3);
    for (int32_t t = 2; t < 6; t++)
      assert_true(a->tables[t].type != DC_SHARDING_TABLE_COLUMN_WISE);

    /* a block's price: a column-wise shard of the same columns */
    dc_torchrec_consts tc;
    dc_torchrec_consts_of(&c.p, &tc);
    dc_torchrec_shard x = dc_torchrec_price_shard(&c.p, a, 1, 0, &tc);
    dc_shard_plan *b = dc_shard_plan_copy(a, &arena);
    b->tables[1].type = DC_SHARDING_COLUMN_WISE;
    dc_torchrec_shard y = dc_torchrec_price_shard(&c.p, b, 1, 0, &tc);
    assert_int_equal(x.type, DC_SHARDING_TABLE_COLUMN_WISE);
    same_price(&x, &y);
  }
}

/* One GPU: everything table-wise on rank 0. */
static void test_single(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 8, 1, 1);
  dc_device dev = dev_of(c.p.gpu);
  dc_plan_opts o = {.dev = &dev};
  dc_diags d = {0};
  dc_shard_plan *a = dc_plan_auto(&c.p, &o, &arena, &d, NULL);
  assert_non_null(a);
  for (int32_t t = 0; t < 8; t++) {
    assert_int_equal(a->tables[t].type, DC_SHARDING_TABLE_WISE);
    assert_int_equal(a->tables[t].shards[0].rank, 0);
  }
  dc_diags_free(&d);
}

/* Two runs give the same plan, byte for byte (the search's budgets count
 * steps, not time). */
static void test_deterministic(void **state) {
  (void)state;
  tp_cfg c;
  model(&c, 16, 8, 4);
  dc_device dev = dev_of(c.p.gpu);
  dc_plan_opts o = {.dev = &dev};
  dc_diags d = {0};
  dc_shard_plan *a = dc_plan_auto(&c.p, &o, &arena, &d, NULL);
  dc_shard_plan *b = dc_plan_auto(&c.p, &o, &arena, &d, NULL);
  assert_non_null(a);
  assert_non_null(b);
  dc_buf x = {0}, y = {0};
  dc_shard_plan_write(&c.p, a, &x);
  dc_shard_plan_write(&c.p, b, &y);
  assert_int_equal(x.len, y.len);
  assert_memory_equal(x.data, y.data, x.len);
  dc_buf_free(&x);
  dc_buf_free(&y);
  dc_diags_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_cost_is_torchrec, setup, teardown),
      cmocka_unit_test_setup_teardown(test_partition_optimum, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_worse_than_others, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_storage, setup, teardown),
      cmocka_unit_test_setup_teardown(test_constraints, setup, teardown),
      cmocka_unit_test_setup_teardown(test_grid, setup, teardown),
      cmocka_unit_test_setup_teardown(test_table_column_wise, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_single, setup, teardown),
      cmocka_unit_test_setup_teardown(test_deterministic, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
