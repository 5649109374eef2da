/*
 * test_runtime_sharding.c — the sharding outputs: the sharding metrics
 * (TorchRec's columns and the imbalance statistics) against values worked
 * out by hand, the per-rank/per-shard row emitter in every format, the
 * capacity inversion on an in-memory study, and, on the shipped sharding
 * studies, that `plan: auto` never exceeds a rank's HBM and beats greedy
 * table-wise placement on the slowest rank's time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "runtime/emit_int.h"
#include "runtime/plan/plan.h"
#include "tests/golden/graph/points.h"
#include "tests/unit/graph_fixture.h"

static void near_ok(double a, double b) {
  if (!(fabs(a - b) <= 1e-12 * fabs(b) + 1e-15))
    fail_msg("%.17g != %.17g", a, b);
}
#define NEAR(a, b) near_ok((double)(a), (double)(b))

/* Two tables of 1000 × 64, pooling 10, global batch 1024, table-wise on
 * 2 GPUs of one host: one table per rank (equal sizes: greedy by size
 * puts the first on rank 0, the second on rank 1). Per shard, as in
 * test_runtime_torchrec.c: fwd_compute 0.0035408215645032 ms, fwd_comms
 * = bwd_comms 0.00040690104166667 ms, bwd_compute 0.0070816431290064,
 * total 0.011436266776843; storage 600 064 B. Both ranks cost the same,
 * so torchrec_ms is that total and torchrec_imbalance 1.
 * Embedding times 3 and 1 µs on the two ranks: p = (0.75, 0.25), k = 2:
 *   total variation max|p − 1/2| = 0.25, total distance 0.5,
 *   chi 2·(0.25² + 0.25²) / [(1/2)²·2 + 1/2] = 0.25,
 *   KL (0.75 ln 1.5 + 0.25 ln 0.5) / ln 2 = 0.18872187554086717. */
static void test_metrics(void **state) {
  (void)state;
  static const int64_t bot[] = {4, 64};
  static const int64_t top[] = {2, 1};
  tp_cfg m;
  tp_init(&m, bot, 2, top, 2, 2, 1000, 64, 10, 1024);
  m.p.interaction = DC_INTERACTION_CAT;
  m.p.gpus = 2;
  m.p.hosts = 1;
  m.p.gpus_per_host = 2;
  m.p.sharding = DC_SHARDING_TABLE_WISE;
  dc_diags d = {0};
  dc_shard_plan *s = dc_shard_plan_default(&m.p, &arena, &d);
  assert_non_null(s);
  assert_int_equal(s->tables[0].shards[0].rank, 0);
  assert_int_equal(s->tables[1].shards[0].rank, 1);
  dc_graph g;
  memset(&g, 0, sizeof g);
  g.point = &m.p;
  g.plan = s;
  g.n_ranks = 2;
  dc_eval_rank ranks[2];
  memset(ranks, 0, sizeof ranks);
  ranks[0].emb_us = 3;
  ranks[1].emb_us = 1;
  dc_eval_result r;
  memset(&r, 0, sizeof r);
  r.n_ranks = 2;
  r.ranks = ranks;
  dc_metrics x;
  memset(&x, 0, sizeof x);
  dc_metrics_sharding(&g, &r, &arena, &x);
  NEAR(x.v[DC_METRIC_TORCHREC_MS], 0.011436266776843);
  NEAR(x.v[DC_METRIC_TORCHREC_FWD_COMPUTE_MS], 0.0035408215645032);
  NEAR(x.v[DC_METRIC_TORCHREC_FWD_COMMS_MS], 0.00040690104166667);
  NEAR(x.v[DC_METRIC_TORCHREC_BWD_COMPUTE_MS], 0.0070816431290064);
  NEAR(x.v[DC_METRIC_TORCHREC_BWD_COMMS_MS], 0.00040690104166667);
  NEAR(x.v[DC_METRIC_TORCHREC_HBM_GIB], 600064.0 / 1073741824.0);
  NEAR(x.v[DC_METRIC_TORCHREC_IMBALANCE], 1.0);
  NEAR(x.v[DC_METRIC_EMB_TOTAL_VARIATION], 0.25);
  NEAR(x.v[DC_METRIC_EMB_TOTAL_DISTANCE], 0.5);
  NEAR(x.v[DC_METRIC_EMB_CHI_DIVERGENCE], 0.25);
  NEAR(x.v[DC_METRIC_EMB_KL_DIVERGENCE], 0.18872187554086717);
  /* An override: intra-host 300 GiB/s halves the bandwidth, doubling
   * the comms: 2 × 0.00040690104166667. */
  m.p.torchrec_intra_host_bw = 300;
  dc_metrics_sharding(&g, &r, &arena, &x);
  NEAR(x.v[DC_METRIC_TORCHREC_FWD_COMMS_MS], 0.00081380208333333);
  NEAR(x.v[DC_METRIC_TORCHREC_MS], 0.011436266776843 + 0.00081380208333333);
  /* The output precision of the statistics: 6 decimals. */
  dc_buf b = {0};
  dc_metric_format(DC_METRIC_EMB_KL_DIVERGENCE, &x, &b);
  assert_string_equal(b.data, "0.188722");
  dc_buf_free(&b);
  dc_diags_free(&d);
}

/* The row-mode emitter in the three formats. */
static void test_cells(void **state) {
  (void)state;
  static const char *const params[] = {"sharding.plan"};
  dc_sweep_source src;
  memset(&src, 0, sizeof src);
  src.n_params = 1;
  src.param_paths = params;
  rt_cell_col *cols;
  size_t n;
  rt_emit_mode_columns(&src, DC_ROWS_CAPACITY, &cols, &n);
  assert_int_equal(n, 12);
  assert_string_equal(cols[0].name, "sharding.plan");
  assert_string_equal(cols[1].name, "gpu");
  assert_string_equal(cols[10].name, "meets_target");
  assert_string_equal(cols[11].name, "answer");
  src.torchrec = true;
  free(cols);
  rt_emit_mode_columns(&src, DC_ROWS_RANK, &cols, &n);
  assert_int_equal(n, 1 + 14 + 6);
  assert_string_equal(cols[1].name, "rank");
  assert_string_equal(cols[15].name, "torchrec_ms");
  free(cols);

  rt_cell_col c3[] = {{"plan", RT_CELL_TEXT},
                      {"gpus", RT_CELL_NUM},
                      {"fits", RT_CELL_BOOL},
                      {"note", RT_CELL_TEXT}};
  rt_cells c = {0};
  rt_cells_text(&c, "auto");
  rt_cells_text(&c, ""); /* a missing number */
  rt_cells_bool(&c, true);
  rt_cells_text(&c, "a,\"b\"");
  dc_buf b = {0};
  rt_emit_cells_header(DC_FORMAT_CSV, c3, 4, &b);
  rt_emit_cells_row(DC_FORMAT_CSV, c3, 4, &c, &b);
  assert_string_equal(b.data, "plan,gpus,fits,note\r\n"
                              "auto,,true,\"a,\"\"b\"\"\"\r\n");
  dc_buf_clear(&b);
  rt_emit_cells_header(DC_FORMAT_MD, c3, 4, &b);
  rt_emit_cells_row(DC_FORMAT_MD, c3, 4, &c, &b);
  assert_string_equal(b.data, "| plan | gpus | fits | note |\n"
                              "|---|---:|---|---|\n"
                              "| auto |  | true | a,\"b\" |\n");
  dc_buf_clear(&b);
  rt_emit_cells_row(DC_FORMAT_JSONL, c3, 4, &c, &b);
  assert_string_equal(b.data, "{\"plan\":\"auto\",\"gpus\":null,"
                              "\"fits\":true,\"note\":\"a,\\\"b\\\"\"}\n");
  rt_cells_clear(&c);
  rt_cells_int(&c, 16);
  rt_cells_num(&c, 0.5, 4);
  rt_cells_bool(&c, false);
  rt_cells_text(&c, "2048");
  dc_buf_clear(&b);
  rt_emit_cells_row(DC_FORMAT_JSONL, c3, 4, &c, &b);
  assert_string_equal(b.data, "{\"plan\":16,\"gpus\":0.5000,"
                              "\"fits\":false,\"note\":2048}\n");
  dc_buf_free(&b);
  rt_cells_free(&c);
}

/* ---- the pipeline on in-memory studies ------------------------------- */

static const dc_graph *build_cb(void *ctx, int64_t i,
                                dc_graph_detail detail, dc_arena *a,
                             dc_diags *d) {
  dc_point *p = dc_arena_alloc(a, sizeof *p);
  dc_study_point(ctx, i, a, p);
  return dc_plan_build_graph(p, detail, a, d);
}

static bool sink(void *ctx, const char *data, size_t len) {
  dc_buf_append(ctx, data, len);
  return true;
}

static char *run_study(const char *text, dc_rows rows, int jobs) {
  dc_diags d = {0};
  dc_study *s = dc_study_load_memory("t.yaml", text, strlen(text), NULL, 0,
                                     &d);
  if (!s) {
    dc_buf e = {0};
    for (size_t i = 0; i < d.count; i++)
      dc_buf_printf(&e, "%s\n", d.items[i].message);
    fail_msg("study: %s", e.data);
  }
  const char *const *params = NULL;
  size_t np = dc_study_params(s, &params);
  dc_sweep_source src;
  memset(&src, 0, sizeof src);
  src.ctx = s;
  src.n_points = dc_study_point_count(s);
  src.build = build_cb;
  src.n_params = np;
  src.param_paths = params;
  src.torchrec = dc_study_torchrec(s);
  dc_buf out = {0};
  dc_sweep_opts o;
  memset(&o, 0, sizeof o);
  o.jobs = jobs;
  o.shard_k = o.shard_n = 1;
  o.format = DC_FORMAT_CSV;
  o.sink = sink;
  o.sink_ctx = &out;
  o.rows = rows;
  assert_true(dc_sweep_run(&src, &o, &d));
  dc_study_free(s);
  dc_diags_free(&d);
  dc_buf_putc(&out, '\0');
  return out.data;
}

/* Three tables of 30M × 64 fp32 (7.15 GiB each, 21.5 GiB in all): one
 * V100-SXM2-16GB cannot hold them, two can (the planner spreads them);
 * one A100-SXM4-80GB can. With a target no configuration misses, the
 * answer is the smallest count that fits; with an impossible target,
 * none (every count a row, meets_target false, no answer). */
static const char cap_study[] =
    "study: cap\n"
    "model:\n"
    "  bottom_mlp: [13, 64]\n"
    "  top_mlp: [64, 1]\n"
    "  embedding: {dim: 64, tables: [{count: 3, rows: 30M, pooling: 1}]}\n"
    "training: {batch_size: 4096}\n"
    "system: {gpu: V100-SXM2-16GB}\n"
    "sharding: {plan: auto}\n"
    "capacity:\n"
    "  target_step_ms: TARGET\n"
    "  gpus: [4, 1, 2]\n"
    "  gpu: [V100-SXM2-16GB, A100-SXM4-80GB]\n";

static char *cap_text(const char *target) {
  static char buf[1024];
  const char *at = strstr(cap_study, "TARGET");
  snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - cap_study), cap_study,
           target, at + 6);
  return buf;
}

static void test_capacity(void **state) {
  (void)state;
  char *o = run_study(cap_text("1000000"), DC_ROWS_CAPACITY, 1);
  assert_non_null(strstr(o, "gpu,gpus,hosts,gpus_per_host,e2e_ms,"
                            "samples_per_s,mem_gib,hbm_gib,fits,"
                            "meets_target,answer\r\n"));
  /* the curve: every count per type, ascending; the answer is the first
   * that fits and meets the target (V100-16GB: 30M-row tables need 2) */
  const char *v1 = strstr(o, "\r\nV100-SXM2-16GB,1,1,1,");
  const char *v2 = strstr(o, "\r\nV100-SXM2-16GB,2,1,2,");
  const char *v4 = strstr(o, "\r\nV100-SXM2-16GB,4,1,4,");
  assert_true(v1 && v2 && v4 && v1 < v2 && v2 < v4);
  assert_non_null(strstr(v1 + 2, ",false,false,false\r\n"));
  assert_ptr_equal(strstr(v2 + 2, ",true,true,true\r\n"),
                   strstr(v2 + 2, "\r\n") - 15);
  assert_ptr_equal(strstr(v4 + 2, ",true,true,false\r\n"),
                   strstr(v4 + 2, "\r\n") - 16);
  assert_non_null(strstr(o, "\r\nA100-SXM4-80GB,1,1,1,"));
  char *o2 = run_study(cap_text("1000000"), DC_ROWS_CAPACITY, 3);
  assert_string_equal(o, o2);
  free(o2);
  free(o);
  o = run_study(cap_text("0.000001"), DC_ROWS_CAPACITY, 1);
  assert_non_null(strstr(o, "\r\nV100-SXM2-16GB,4,1,4,"));
  assert_non_null(strstr(o, "\r\nA100-SXM4-80GB,4,1,4,"));
  assert_null(strstr(o, ",true\r\n"));
  free(o);
}

/* --per-rank / --per-shard rows: one per rank / shard, ordered. */
static void test_rows(void **state) {
  (void)state;
  const char *st =
      "study: rows\n"
      "model:\n"
      "  bottom_mlp: [13, 64]\n"
      "  top_mlp: [64, 1]\n"
      "  embedding: {dim: 64, tables: [{count: 3, rows: 1M, pooling: 4}]}\n"
      "training: {batch_size: 4096}\n"
      "system: {gpu: A100-SXM4-80GB, gpus: 2}\n"
      "sharding: {plan: row_wise, estimator: torchrec}\n"
      "sweep: {training.batch_size: [4096, 8192]}\n";
  char *o = run_study(st, DC_ROWS_RANK, 1);
  int lines = 0;
  for (char *c = o; *c; c++) lines += *c == '\n';
  assert_int_equal(lines, 1 + 2 * 2);
  assert_non_null(strstr(o, "training.batch_size,rank,e2e_ms,"));
  assert_non_null(strstr(o, "\r\n8192,1,"));
  free(o);
  o = run_study(st, DC_ROWS_SHARD, 2);
  lines = 0;
  for (char *c = o; *c; c++) lines += *c == '\n';
  assert_int_equal(lines, 1 + 2 * 3 * 2);
  /* t0's second shard: rows [500000, 1000000) on rank 1 */
  assert_non_null(strstr(o, "\r\n4096,t0,1,1,row_wise,500000,64,"));
  assert_non_null(strstr(o, ",torchrec_hbm_gib\r\n"));
  free(o);
}

/* ---- the shipped studies ---------------------------------------------- */

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  dc_buf b = {0};
  char tmp[4096];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) dc_buf_append(&b, tmp, n);
  fclose(f);
  *len = b.len;
  return b.data;
}

/* Every `auto` point of the sharding studies: the planner's plan holds in
 * every rank's HBM (graphgen's per-rank formula, the `fits` column's
 * source), and its slowest rank's iteration (e2e_ms) is shorter than
 * greedy-by-size table-wise placement's at the same point. */
static void test_shipped(void **state) {
  (void)state;
  const char *root = getenv("DC_SOURCE_DIR");
  if (!root) skip();
  static const char *const studies[] = {"sharding-balance", "mlperf-8xa100",
                                        "mlperf-16xh100"};
  for (size_t k = 0; k < DC_COUNTOF(studies); k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/studies/%s.yaml", root, studies[k]);
    size_t len = 0;
    char *text = slurp(path, &len);
    assert_non_null(text);
    dc_diags d = {0};
    dc_study *s = dc_study_load_memory(path, text, len, NULL, 0, &d);
    assert_non_null(s);
    double tw = -1, au = -1;
    for (int64_t i = 0; i < dc_study_point_count(s); i++) {
      dc_arena a;
      dc_arena_init(&a);
      dc_point p;
      dc_study_point(s, i, &a, &p);
      const dc_graph *g = dc_plan_build_graph(&p, DC_GRAPH_FULL, &a, &d);
      assert_non_null(g);
      dc_eval_result r;
      dc_metrics m;
      dc_profile prof;
      assert_true(dc_eval_point(g, false, &a, &r, &m, &prof, &d));
      if (p.sharding == DC_SHARDING_AUTO) {
        dc_device dev;
        assert_true(dc_device_lookup(p.gpu, &dev, &a, &d));
        for (int32_t rk = 0; rk < g->plan->n_ranks; rk++) {
          dc_rank_memory mem;
          assert_true(dc_shard_plan_memory(&p, g->plan, rk, &mem));
          assert_true(mem.total <= dev.hbm_bytes);
        }
        assert_true(m.v[DC_METRIC_FITS] != 0.0);
        au = r.e2e_us;
      } else if (p.sharding == DC_SHARDING_TABLE_WISE) {
        tw = r.e2e_us;
      }
      dc_arena_free(&a);
    }
    assert_true(tw > 0 && au > 0);
    if (!(au < tw)) fail_msg("%s: auto %.3f us >= table_wise %.3f us",
                             studies[k], au, tw);
    dc_study_free(s);
    dc_diags_free(&d);
    free(text);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_metrics, setup, teardown),
      cmocka_unit_test(test_cells),
      cmocka_unit_test(test_capacity),
      cmocka_unit_test(test_rows),
      cmocka_unit_test(test_shipped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
