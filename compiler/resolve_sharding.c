/*
 * resolve_sharding.c — how a point's embedding tables are placed: the
 * sharding plan (one scheme for all tables, or an explicit list naming
 * tables, schemes and ranks) and the cost estimator the planner uses
 * (dlrmc's own, or TorchRec's with its bandwidth settings).
 *
 * An explicit plan edits the tables resolve_model.c built, so it runs
 * after the model; a rank is checked against the GPU count as a cross-key
 * constraint (the count may be swept), through the highest rank recorded
 * in the summary.
 */
#include <string.h>

#include "compiler/resolve_int.h"

/* schema: sharding.plan: auto | table_wise | row_wise | column_wise |
 * table_row_wise | data_parallel, or a list of {table, sharding, ranks}. */
void res_sharding(fe_rctx *c, dc_point *p) {
  const dc_node *n = res_get(c, "sharding.plan");
  p->sharding = DC_SHARDING_AUTO;
  if (!n) return;
  if (n->kind != DC_NODE_SEQ) {
    int v = 0;
    if (!fe_leaf_enum(n, "sharding.plan", fe_enum_plan, &v, c->d))
      res_fail(c);
    p->sharding = (dc_sharding)v;
    return;
  }
  p->sharding = DC_SHARDING_EXPLICIT;
  dc_table *t = (dc_table *)p->tables;
  const char **names = dc_arena_array(c->a, (size_t)p->n_tables + 1,
                                      sizeof *names);
  for (int32_t i = 0; i < p->n_tables; i++) names[i] = t[i].name;
  for (size_t i = 0; i < n->n; i++) {
    const dc_node *it = n->items[i];
    char w[96];
    snprintf(w, sizeof w, "sharding.plan[%zu]", i);
    if (!fe_expect_kind(it, DC_NODE_MAP, w, c->d)) {
      res_fail(c);
      continue;
    }
    const dc_node *tn = dc_node_get(it, "table");
    const char *tname = NULL;
    if (!tn) {
      if (c->d)
        dc_diag_error(c->d, DC_DIAG_MISSING_KEY, it->span,
                      "%s has no 'table'", w);
      res_fail(c);
      continue;
    }
    if (!fe_leaf_str(tn, "sharding.plan[].table", &tname, c->d)) {
      res_fail(c);
      continue;
    }
    int32_t j = 0;
    while (j < p->n_tables && strcmp(t[j].name, tname) != 0) j++;
    if (j == p->n_tables) {
      if (c->d) {
        dc_diag *g = dc_diag_error(c->d, DC_DIAG_SEMANTIC, tn->span,
                                   "no embedding table named '%s'", tname);
        const char *s = dc_suggest(tname, names, (size_t)p->n_tables);
        if (s) dc_diag_set_help(g, "did you mean '%s'?", s);
      }
      res_fail(c);
      continue;
    }
    int v = DC_SHARDING_TABLE_WISE;
    const dc_node *sn = dc_node_get(it, "sharding");
    if (sn && !fe_leaf_enum(sn, "sharding.plan[].sharding",
                            fe_enum_table_sharding, &v, c->d))
      res_fail(c);
    t[j].sharding = (dc_sharding)v;
    t[j].plan_span = it->span;
    const dc_node *rn = dc_node_get(it, "ranks");
    if (rn) {
      int64_t *r = NULL;
      int32_t nr = 0;
      if (!res_intlist(c, rn, "sharding.plan[].ranks",
                   fe_schema_find("sharding.plan[].ranks"), 1, &r, &nr)) {
        res_fail(c);
        continue;
      }
      int32_t *r32 = dc_arena_array(c->a, (size_t)nr, sizeof *r32);
      for (int32_t q = 0; q < nr; q++) {
        r32[q] = (int32_t)r[q];
        if (r[q] > c->x.max_rank) {
          c->x.max_rank = r[q];
          c->x.rank_sp = rn->items[q]->span;
        }
      }
      t[j].ranks = r32;
      t[j].n_ranks = nr;
    }
  }
}

/* schema: sharding.memory: hbm | auto (default hbm);
 * sharding.cache_load_factor: (0, 1] (default 0.2, TorchRec's
 * CACHE_LOAD_FACTOR); system.host_memory: bytes per host (default: the
 * GPU catalog's host, runtime). A table group's own `memory` wins; the
 * others follow sharding.memory (HBM, or AUTO for the planner). */
void res_memory(fe_rctx *c, dc_point *p) {
  p->memory_auto = res_enum(c, "sharding.memory", 0) == 1;
  p->cache_load_factor = 0.2;
  res_num(c, "sharding.cache_load_factor", &p->cache_load_factor);
  p->host_memory_bytes = 0;
  res_int(c, "system.host_memory", &p->host_memory_bytes);
  dc_table *t = (dc_table *)p->tables;
  if (!p->memory_auto)
    for (int32_t i = 0; i < p->n_tables; i++)
      if (t[i].memory == DC_MEMORY_AUTO) t[i].memory = DC_MEMORY_HBM;
}

/* schema: sharding.estimator: dlrmc | torchrec; sharding.torchrec:
 * {hbm_bw, ddr_bw, hbm_to_ddr_bw, intra_host_bw, cross_host_bw} in
 * TorchRec's GB/s (0 / absent: TorchRec's default,
 * runtime/plan/torchrec_estimate.c). */
void res_estimator(fe_rctx *c, dc_point *p) {
  p->torchrec = res_enum(c, "sharding.estimator", 0) == 1;
  p->torchrec_hbm_bw = p->torchrec_ddr_bw = p->torchrec_hbm_to_ddr_bw = 0;
  p->torchrec_intra_host_bw = p->torchrec_cross_host_bw = 0;
  res_num(c, "sharding.torchrec.hbm_bw", &p->torchrec_hbm_bw);
  res_num(c, "sharding.torchrec.ddr_bw", &p->torchrec_ddr_bw);
  res_num(c, "sharding.torchrec.hbm_to_ddr_bw", &p->torchrec_hbm_to_ddr_bw);
  res_num(c, "sharding.torchrec.intra_host_bw", &p->torchrec_intra_host_bw);
  res_num(c, "sharding.torchrec.cross_host_bw", &p->torchrec_cross_host_bw);
}
