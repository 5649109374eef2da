/*
 * test_runtime_torchrec.c — every formula of TorchRec's estimator against
 * rows worked out by hand (torchrec's shard_estimators.py), with its
 * default constants. Bandwidths in bytes/ms (GiB/s · 1024³ / 1000):
 *
 *   HBM 897      → 963 146 416.128      (fused kernel bw)
 *   HBM/2        → 481 573 208.064      (dense kernel, data-parallel)
 *   intra 600    → 644 245 094.4
 *   cross 12.5   →  13 421 772.8
 *
 * Table: 1000 rows × 64, pooling L = 10, fp32 (e = 4); global batch 1024.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "runtime/plan/plan.h"
#include "tests/golden/graph/points.h"
#include "tests/unit/graph_fixture.h"

static void near_ok(double a, double b) {
  if (!(fabs(a - b) <= 1e-12 * fabs(b) + 1e-15))
    fail_msg("%.17g != %.17g", a, b);
}
#define NEAR(a, b) near_ok((double)(a), (double)(b))

static void model(tp_cfg *c, int gpus, int hosts, int T, int dim) {
  static const int64_t bot[] = {4, 64};
  static const int64_t top[] = {2, 1};
  tp_init(c, bot, 2, top, 2, T, 1000, dim, 10, 1024);
  c->p.interaction = DC_INTERACTION_CAT;
  c->p.gpus = gpus;
  c->p.hosts = hosts;
  c->p.gpus_per_host = gpus / hosts;
}

static dc_shard_plan *plan(tp_cfg *c, dc_sharding type) {
  dc_diags d = {0};
  c->p.sharding = type;
  dc_shard_plan *s = dc_shard_plan_default(&c->p, &arena, &d);
  assert_non_null(s);
  dc_diags_free(&d);
  return s;
}

/* Constants and kernel bandwidths. */
static void test_constants(void **state) {
  (void)state;
  dc_torchrec_consts c;
  dc_torchrec_defaults(&c);
  NEAR(dc_torchrec_device_bw(&c, DC_TORCHREC_FUSED), 963146416.128);
  NEAR(dc_torchrec_device_bw(&c, DC_TORCHREC_DENSE), 481573208.064);
  /* uvm: 32 GiB/s → 34 359 738.368 B/ms, / 10 */
  NEAR(dc_torchrec_device_bw(&c, DC_TORCHREC_FUSED_UVM), 3435973.8368);
  /* caching: (0.2·963146416.128 + 0.8·34359738.368) / 10
   *        = (192629283.2256 + 27487790.6944) / 10 = 22011707.392 */
  NEAR(dc_torchrec_device_bw(&c, DC_TORCHREC_FUSED_UVM_CACHING),
       22011707.392);
}

/* Table-wise on 2 GPUs of one host, B = 512 per rank, D = 64:
 *   I = 10·512 = 5120, O = 512, W = 2
 *   input_read = 5120·2·8 = 81 920; lookup = 5120·2·64·4 = 2 621 440;
 *   fwd_out = 512·2·64·4 = 262 144; sum 2 965 504; penalty 1.15 (64 ≤ D
 *   < 128) → 3 410 329.6; fwd_compute = 3 410 329.6 / 963 146 416.128 =
 *   0.0035408215645032 ms; fwd_comms = 262 144 / 644 245 094.4 (intra:
 *   the group fits in one host) = 0.00040690104166667 ms = bwd_comms;
 *   bwd_compute = 2·fwd = 0.0070816431290064; total 0.011436266776843.
 *   Storage (SGD): 1000·64·4 = 256 000 + 81 920 + 262 144 = 600 064 B. */
static void test_table_wise(void **state) {
  (void)state;
  tp_cfg m;
  model(&m, 2, 1, 1, 64);
  dc_shard_plan *s = plan(&m, DC_SHARDING_TABLE_WISE);
  dc_torchrec_consts c;
  dc_torchrec_defaults(&c);
  dc_torchrec_shard x = dc_torchrec_price_shard(&m.p, s, 0, 0, &c);
  NEAR(x.fwd_compute_ms, 0.0035408215645032046);
  NEAR(x.fwd_comms_ms, 0.0004069010416666667);
  NEAR(x.bwd_compute_ms, 0.007081643129006409);
  NEAR(x.bwd_comms_ms, 0.0004069010416666667);
  NEAR(x.total_ms, 0.011436266776842948);
  NEAR(x.hbm_bytes, 600064);
  assert_int_equal(x.type, DC_SHARDING_TABLE_WISE);
}

/* Column-wise: a 32-wide table cut in two 16-column shards (ranks 0, 1):
 *   lookup uses max(D, 32) = 32: 5120·2·32·4 = 1 310 720;
 *   input_read 81 920; fwd_out = 512·2·16·4 = 65 536; sum 1 458 176;
 *   penalty 1.75 (D < 64) → 2 551 808; / 963 146 416.128 =
 *   0.0026494497173739 ms; comms 65 536 / 644 245 094.4 =
 *   0.00010172526041667 ms. */
static void test_column_wise(void **state) {
  (void)state;
  tp_cfg m;
  model(&m, 2, 1, 1, 32);
  m.ranks[0] = 0;
  m.ranks[1] = 1;
  m.tables[0].sharding = DC_SHARDING_COLUMN_WISE;
  m.tables[0].n_ranks = 2;
  m.tables[0].ranks = m.ranks;
  dc_shard_plan *s = plan(&m, DC_SHARDING_EXPLICIT);
  assert_int_equal(s->tables[0].shards[1].cols, 16);
  dc_torchrec_consts c;
  dc_torchrec_defaults(&c);
  dc_torchrec_shard x = dc_torchrec_price_shard(&m.p, s, 0, 1, &c);
  assert_int_equal(x.rank, 1);
  NEAR(x.fwd_compute_ms, 0.002649449717373885);
  NEAR(x.fwd_comms_ms, 0.00010172526041666667);
  NEAR(x.bwd_compute_ms, 2 * 0.002649449717373885);
}

/* A feature read in half the samples (L = 0.5): TorchRec's batch_outputs
 * is min(1, L)·B, not B (tests/fixtures/planner: dlrmc had O = B and
 * doubled every output term of such a table). Table-wise, D = 64, W = 2:
 *   I = 0.5·512 = 256, O = 0.5·512 = 256;
 *   input_read = 256·2·8 = 4 096; lookup = 256·2·64·4 = 131 072;
 *   fwd_out = 256·2·64·4 = 131 072; sum 266 240 × 1.15 = 306 176;
 *   fwd_compute = 306 176 / 963 146 416.128 = 0.00031789139…;
 *   fwd_comms = 131 072 / 644 245 094.4 = 0.00020345052083333 ms.
 * Row-wise Adagrad on a 256-dim table cut in two 128-column shards: the
 * state is the shard's bytes / 256 (the whole table's dim, TorchRec's
 * _get_optimizer_multipler), 1000·128·4 / 256 = 2 000 B, not / 128. */
static void test_fractional_pooling_and_rowwise_state(void **state) {
  (void)state;
  tp_cfg m;
  model(&m, 2, 1, 1, 64);
  m.tables[0].pooling = 0.5;
  dc_shard_plan *s = plan(&m, DC_SHARDING_TABLE_WISE);
  dc_torchrec_consts c;
  dc_torchrec_defaults(&c);
  dc_torchrec_shard x = dc_torchrec_price_shard(&m.p, s, 0, 0, &c);
  NEAR(x.fwd_compute_ms, 306176 / 963146416.128);
  NEAR(x.fwd_comms_ms, 0.00020345052083333333);
  NEAR(x.bwd_comms_ms, 0.00020345052083333333);
  NEAR(x.hbm_bytes, 256000 + 4096 + 131072);

  tp_cfg w;
  model(&w, 2, 1, 1, 256);
  w.p.sparse_optimizer = DC_OPTIMIZER_ROWWISE_ADAGRAD;
  w.ranks[0] = 0;
  w.ranks[1] = 1;
  w.tables[0].sharding = DC_SHARDING_COLUMN_WISE;
  w.tables[0].n_ranks = 2;
  w.tables[0].ranks = w.ranks;
  dc_shard_plan *cw = plan(&w, DC_SHARDING_EXPLICIT);
  assert_int_equal(cw->tables[0].shards[0].cols, 128);
  x = dc_torchrec_price_shard(&w.p, cw, 0, 0, &c);
  /* weights 512 000 + state 2 000 + input 5120·2·8 = 81 920 + output
   * 512·2·128·4 = 524 288 */
  NEAR(x.hbm_bytes, 512000 + 2000 + 81920 + 524288);
}

/* Row-wise on 2 GPUs: I/W = 2560 per shard;
 *   input_read = 2560·2·8 = 40 960; lookup = 2560·2·64·4 = 1 310 720;
 *   out = 512·2·64·4 = 262 144; sum 1 613 824 (no penalty) →
 *   fwd_compute 0.0016755749416458 ms; fwd_comms (reduce-scatter, intra)
 *   262 144 / 644 245 094.4 = 0.00040690104166667; bwd_comms = that +
 *   262 144·2.455 / 963 146 416.128 = 0.00040690104166667 +
 *   0.00066818866708472 = 0.0010750897087514 ms.
 *   Storage with Adam: shard 500·64·4 = 128 000 × (1 + 2) = 384 000 +
 *   40 960 + 262 144 = 687 104 B. */
static void test_row_wise(void **state) {
  (void)state;
  tp_cfg m;
  model(&m, 2, 1, 1, 64);
  m.p.optimizer = DC_OPTIMIZER_ADAM;
  m.p.sparse_optimizer = DC_OPTIMIZER_ADAM;
  dc_shard_plan *s = plan(&m, DC_SHARDING_ROW_WISE);
  dc_torchrec_consts c;
  dc_torchrec_defaults(&c);
  for (int32_t i = 0; i < 2; i++) {
    dc_torchrec_shard x = dc_torchrec_price_shard(&m.p, s, 0, i, &c);
    NEAR(x.fwd_compute_ms, 0.0016755749416457635);
    NEAR(x.fwd_comms_ms, 0.0004069010416666667);
    NEAR(x.bwd_comms_ms, 0.0010750897087513935);
    NEAR(x.bwd_compute_ms, 2 * 0.0016755749416457635);
    NEAR(x.hbm_bytes, 687104);
  }
}

/* Table-row-wise on 2 hosts × 2 GPUs, B = 256: I = 2560, I/S = 1280;
 *   input_read = 1280·4·8 = 40 960; lookup = 1280·4·64·4 = 1 310 720;
 *   out = 256·4·64·4 = 262 144 → fwd_compute 0.0016755749416458 ms as
 *   above; cross-host all-to-all O·(W/S)·D·e = 256·2·64·4 = 131 072 B /
 *   13 421 772.8 = 0.009765625 ms each way; fwd_comms = 0.00040690104167
 *   (intra reduce-scatter) + 0.009765625 = 0.010172526041667; bwd_comms =
 *   0.00040690104167 + 0.00066818866708 + 0.009765625 =
 *   0.010840714708751 ms. */
static void test_table_row_wise(void **state) {
  (void)state;
  tp_cfg m;
  model(&m, 4, 2, 1, 64);
  dc_shard_plan *s = plan(&m, DC_SHARDING_TABLE_ROW_WISE);
  assert_int_equal(s->tables[0].n_shards, 2);
  dc_torchrec_consts c;
  dc_torchrec_defaults(&c);
  dc_torchrec_shard x = dc_torchrec_price_shard(&m.p, s, 0, 0, &c);
  NEAR(x.fwd_compute_ms, 0.0016755749416457635);
  NEAR(x.fwd_comms_ms, 0.010172526041666666);
  NEAR(x.bwd_comms_ms, 0.010840714708751394);
}

/* Data-parallel, table 1000·64·4 = 256 000 B, dense bw 481 573 208.064:
 * W = 4, S = 2, B = 256: I = 2560; I·8 + I·64·4 + 256·64·4 = 20 480 +
 *   655 360 + 65 536 = 741 376 → fwd 0.0015394876367405 ms; n = min(2, 2)
 *   = 2: all_reduce = 256 000·(3/2) / (13 421 772.8·2) = 0.0143051147461
 *   (not doubled: W = 2S); optimizer 256 000·9.22 / 481 573 208.064 =
 *   0.0049012693407278; bwd_comms 0.019206384086822 ms.
 * W = 2, S = 2, B = 512: 1 482 752 B → fwd 0.003078975273481; n = 1:
 *   256 000 / (13 421 772.8·2) = 0.0095367431640625; bwd_comms
 *   0.014438012504790 ms.
 * W = 8, S = 2: n = 2, doubled (W > 2S): 2 × 256 000·1.5 / 26 843 545.6 =
 *   0.0286102294921875 ms of all-reduce. */
static void test_data_parallel(void **state) {
  (void)state;
  tp_cfg m;
  dc_torchrec_consts c;
  dc_torchrec_defaults(&c);
  model(&m, 4, 2, 1, 64);
  dc_shard_plan *s = plan(&m, DC_SHARDING_DATA_PARALLEL);
  dc_torchrec_shard x = dc_torchrec_price_shard(&m.p, s, 0, 3, &c);
  assert_int_equal(x.rank, 3);
  NEAR(x.fwd_compute_ms, 0.001539487636740524);
  assert_true(x.fwd_comms_ms == 0);
  NEAR(x.bwd_comms_ms, 0.019206384086821522);

  model(&m, 2, 1, 1, 64);
  s = plan(&m, DC_SHARDING_DATA_PARALLEL);
  x = dc_torchrec_price_shard(&m.p, s, 0, 0, &c);
  NEAR(x.fwd_compute_ms, 0.003078975273481048);
  NEAR(x.bwd_comms_ms, 0.014438012504790272);

  model(&m, 8, 4, 1, 64);
  s = plan(&m, DC_SHARDING_DATA_PARALLEL);
  x = dc_torchrec_price_shard(&m.p, s, 0, 0, &c);
  double opt = 256000 * 9.22 / 481573208.064;
  NEAR(x.bwd_comms_ms - opt, 0.0286102294921875);
}

/* Imbalance: v = [3, 1], k = 2: p = [0.75, 0.25], 1/k = 0.5;
 *   total variation max|p − 0.5| = 0.25; total distance 0.5;
 *   chi: Σ 2(p − 0.5)² = 2·0.0625·2 = 0.25, / [(1/2)²·2 + 1/2] = 1 → 0.25;
 *   KL: 0.75 ln 1.5 + 0.25 ln 0.5 = 0.304099 − 0.173287 = 0.130812,
 *   / ln 2 = 0.18872187554087; max/mean 3/2 = 1.5.
 * v = [4, 0, 0, 0]: the worst case, every statistic at its maximum:
 *   tv 0.75, td 1.5, chi 1, KL 1; v all equal: all 0, max/mean 1. */
static void test_imbalance(void **state) {
  (void)state;
  dc_imbalance im;
  double v[] = {3, 1};
  dc_imbalance_of(v, 2, &im);
  NEAR(im.total_variation, 0.25);
  NEAR(im.total_distance, 0.5);
  NEAR(im.chi_divergence, 0.25);
  NEAR(im.kl_divergence, 0.18872187554086714);
  NEAR(im.max_over_mean, 1.5);
  double w[] = {4, 0, 0, 0};
  dc_imbalance_of(w, 4, &im);
  NEAR(im.total_variation, 0.75);
  NEAR(im.total_distance, 1.5);
  NEAR(im.chi_divergence, 1.0);
  NEAR(im.kl_divergence, 1.0);
  double e[] = {2, 2, 2, 2};
  dc_imbalance_of(e, 4, &im);
  assert_true(im.total_distance == 0 && im.chi_divergence == 0);
  assert_true(fabs(im.kl_divergence) < 1e-15);
  NEAR(im.max_over_mean, 1.0);
}

/* A whole plan: 2 identical tables table-wise on 2 GPUs, one per rank:
 * each rank costs one shard (0.011436266776843 ms), the plan's max is
 * that, and the per-rank statistics are perfectly balanced. A third table
 * on rank 0 makes rank 0 cost 2 shards: max 0.022872533553686 ms. */
static void test_plan(void **state) {
  (void)state;
  tp_cfg m;
  model(&m, 2, 1, 2, 64);
  dc_shard_plan *s = plan(&m, DC_SHARDING_TABLE_WISE);
  dc_torchrec_consts c;
  dc_torchrec_defaults(&c);
  dc_torchrec_estimate e;
  dc_torchrec_estimate_plan(&m.p, s, &c, &arena, &e);
  assert_int_equal(e.n_shards, 2);
  NEAR(e.max_ms, 0.011436266776842948);
  NEAR(e.ranks[1].total_ms, 0.011436266776842948);
  assert_true(e.perf.total_distance < 1e-15);
  model(&m, 2, 1, 3, 64);
  s = plan(&m, DC_SHARDING_TABLE_WISE);
  dc_torchrec_estimate_plan(&m.p, s, &c, &arena, &e);
  assert_int_equal(e.max_rank, 0);
  NEAR(e.max_ms, 2 * 0.011436266776842948);
  NEAR(e.ranks[0].fwd_compute_ms, 2 * 0.0035408215645032046);
  NEAR(e.perf.max_over_mean, 2.0 / 1.5);
  NEAR(e.max_hbm_bytes, 2 * 600064.0);
  /* an override: twice the HBM bandwidth halves the compute terms */
  c.hbm_gibps = 2 * 897;
  dc_torchrec_shard x = dc_torchrec_price_shard(&m.p, s, 0, 0, &c);
  NEAR(x.fwd_compute_ms, 0.0035408215645032046 / 2);
}

/* Usable HBM: 32 GiB · 0.85 = 29 205 777 612.8 B; dense parameters of
 * the model (bottom 4→64: 64·5 = 320; cat interaction: top input 64 + 64
 * = 128, 2·129 = 258, then 1·3 = 3 → 581 params) · 4 B · 6 = 13 944;
 * inputs B·L = 512·10 = 5120 · 8 · 20 = 819 200 →
 * 29 205 777 612.8 − 13 944 − 819 200 = 29 204 944 468.8 B. */
static void test_usable_hbm(void **state) {
  (void)state;
  tp_cfg m;
  model(&m, 2, 1, 1, 64);
  dc_torchrec_consts c;
  dc_torchrec_defaults(&c);
  NEAR(dc_torchrec_usable_hbm(&m.p, &c), 29204944468.8);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_constants),
      cmocka_unit_test_setup_teardown(test_table_wise, setup, teardown),
      cmocka_unit_test_setup_teardown(test_column_wise, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fractional_pooling_and_rowwise_state,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_row_wise, setup, teardown),
      cmocka_unit_test_setup_teardown(test_table_row_wise, setup, teardown),
      cmocka_unit_test_setup_teardown(test_data_parallel, setup, teardown),
      cmocka_unit_test(test_imbalance),
      cmocka_unit_test_setup_teardown(test_plan, setup, teardown),
      cmocka_unit_test_setup_teardown(test_usable_hbm, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
