/*
 * points.h — dc_point values built by hand for graphgen's tests, golden
 * files and benchmark, so that they do not depend on the study front end.
 * The three paper configurations follow owensgroup/ml_perf_model
 * ("The paper's three DLRM configurations, as run"); DLRM_MLPerf uses the
 * 26 Criteo Kaggle row counts the paper trained on, with dim 128.
 *
 * A tp_cfg owns every array its point refers to: build it in place (the
 * point points into it) and do not copy it.
 */
#ifndef DC_TESTS_GRAPH_POINTS_H
#define DC_TESTS_GRAPH_POINTS_H

#include <string.h>

#include "compiler/support/point.h"

#define TP_MAX_TABLES 64

typedef struct tp_cfg {
  dc_point p;
  int64_t bot[16], top[16];
  dc_table tables[TP_MAX_TABLES];
  dc_transform tr[8];
  int32_t ranks[TP_MAX_TABLES];
} tp_cfg;

/* A DLRM: bottom widths [n0, b1, ..., bk], top widths [t1, ..., 1], T
 * identical tables; SGD, fp32, dot, mse, per_table, one GPU. */
static inline void tp_init(tp_cfg *c, const int64_t *bot, int nb,
                           const int64_t *top, int nt, int T, int64_t rows,
                           int dim, double pooling, int64_t batch) {
  static const char *const names[] = {
      "t0",  "t1",  "t2",  "t3",  "t4",  "t5",  "t6",  "t7",  "t8",
      "t9",  "t10", "t11", "t12", "t13", "t14", "t15", "t16", "t17",
      "t18", "t19", "t20", "t21", "t22", "t23", "t24", "t25", "t26",
      "t27", "t28", "t29", "t30", "t31"};
  memset(c, 0, sizeof *c);
  for (int i = 0; i < nb; i++) c->bot[i] = bot[i];
  for (int i = 0; i < nt; i++) c->top[i] = top[i];
  for (int t = 0; t < T && t < TP_MAX_TABLES; t++) {
    c->tables[t].name = t < 32 ? names[t] : "t";
    c->tables[t].rows = rows;
    c->tables[t].dim = dim;
    c->tables[t].pooling = pooling;
    c->tables[t].sharding = DC_SHARDING_AUTO;
  }
  dc_point *p = &c->p;
  p->study = "test";
  p->model_name = "custom";
  p->n_bottom = nb;
  p->bottom_mlp = c->bot;
  p->n_top = nt;
  p->top_mlp = c->top;
  p->n_tables = T;
  p->tables = c->tables;
  p->interaction = DC_INTERACTION_DOT;
  p->loss = DC_LOSS_MSE;
  p->embedding_kernel = DC_EMBEDDING_PER_TABLE;
  p->batch_size = batch;
  p->precision = DC_PRECISION_FP32;
  p->optimizer = DC_OPTIMIZER_SGD;
  p->sparse_optimizer = DC_OPTIMIZER_SGD;
  p->ddp_bucket_bytes = 25 * 1000 * 1000;
  p->gpu = "V100-SXM2-16GB";
  p->gpus = 1;
  p->hosts = 1;
  p->gpus_per_host = 1;
  p->overheads = "paper-v100";
  p->link_latency_us = -1;
  p->sharding = DC_SHARDING_AUTO;
  p->embedding_model = DC_EMBMODEL_ENHANCED;
}

/* The paper's configurations by name; false when unknown. */
static inline int tp_paper(tp_cfg *c, const char *name, int64_t batch) {
  if (strcmp(name, "DLRM_default") == 0) {
    static const int64_t bot[] = {512, 512, 64};
    static const int64_t top[] = {1024, 1024, 1024, 1};
    tp_init(c, bot, 3, top, 4, 8, 1000000, 64, 100, batch);
    c->p.model_name = "dlrm_default";
    return 1;
  }
  if (strcmp(name, "DLRM_MLPerf") == 0) {
    static const int64_t bot[] = {13, 512, 256, 128};
    static const int64_t top[] = {1024, 1024, 512, 256, 1};
    static const int64_t kaggle[26] = {
        1460,   583,   10131227, 2202608, 305,    24,      12517,
        633,    3,     93145,    5683,    8351593, 3194,   27,
        14992,  5461306, 10,     5652,    2173,   4,       7046547,
        18,     15,    286181,   105,     142572};
    tp_init(c, bot, 4, top, 5, 26, 1, 128, 1, batch);
    for (int t = 0; t < 26; t++) c->tables[t].rows = kaggle[t];
    c->p.loss = DC_LOSS_BCE;
    c->p.model_name = "dlrm_mlperf";
    return 1;
  }
  if (strcmp(name, "DLRM_DDP") == 0) {
    static const int64_t bot[] = {128, 128, 128, 128};
    static const int64_t top[] = {512, 512, 512, 256, 1};
    tp_init(c, bot, 4, top, 5, 8, 80000, 128, 10, batch);
    c->p.loss = DC_LOSS_BCE;
    c->p.model_name = "dlrm_ddp";
    return 1;
  }
  return 0;
}

#endif /* DC_TESTS_GRAPH_POINTS_H */
