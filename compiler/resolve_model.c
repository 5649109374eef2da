/*
 * resolve_model.c — the model section of a point: the preset it names,
 * the MLP widths, the interaction and its own keys (dot's self-interaction,
 * DCN's layers and rank), loss, embedding kernel, and the embedding table
 * groups, expanded to one dc_table per table.
 *
 * A preset is read as the bottom layer of the substitution stack, so a key
 * the user writes wins over the preset's; keys that apply to another
 * interaction than the chosen one are errors when the user wrote them (a
 * preset's own are not). The table walk counts first (bounded) and
 * allocates once; it also fills the cross-key summary (dims, lookups per
 * sample, explicit ranks) that resolve_xcheck.c checks over the sweep.
 */
#include <math.h>
#include <string.h>

#include "compiler/resolve_int.h"

#define MAX_TABLES (1 << 20)
#define EMB_BYTES 4 /* fp32 weights: the size bound is the fp32 one */

/* schema: model.embedding.tables[] = {count?, rows, dim?, pooling?, name?,
 * sharding?, ranks?, memory?, zipf?, hit_rate?}; a group of `count`
 * identical tables. memory: hbm | uvm | uvm_caching (unset: AUTO here,
 * which res_sharding turns into HBM unless sharding.memory is auto);
 * zipf (access skew) and hit_rate (a measured cache hit rate) exclude
 * each other. */
static void tables(fe_rctx *c, dc_point *p, const dc_node *list) {
  const char *what = "model.embedding.tables";
  const fe_skey *k_count = fe_schema_find("model.embedding.tables[].count");
  const fe_skey *k_rows = fe_schema_find("model.embedding.tables[].rows");
  const fe_skey *k_dim = fe_schema_find("model.embedding.tables[].dim");
  const fe_skey *k_pool = fe_schema_find("model.embedding.tables[].pooling");
  const fe_skey *k_ranks = fe_schema_find("model.embedding.tables[].ranks");
  int64_t dim0 = -1;
  double pool0 = 1;
  const dc_node *dim_n = res_int(c, "model.embedding.dim", &dim0);
  const dc_node *pool_n = res_num(c, "model.embedding.pooling", &pool0);
  /* A pooling the user writes wins over the preset's tables' own. */
  bool pool_forced = pool_n && c->preset &&
                     res_descend(c->preset, "embedding.tables") == list &&
                     res_descend(c->preset, "embedding.pooling") != pool_n;
  if (!fe_expect_kind(list, DC_NODE_SEQ, what, c->d)) {
    res_fail(c);
    return;
  }
  if (list->n == 0) {
    if (c->d)
      dc_diag_error(c->d, DC_DIAG_EMPTY_LIST, list->span,
                    "'%s' is empty: a DLRM needs at least one table", what);
    res_fail(c);
    return;
  }
  /* Pass 1: the number of tables, bounded. */
  int64_t total = 0;
  for (size_t i = 0; i < list->n; i++) {
    const dc_node *g = list->items[i];
    int64_t cnt = 1;
    if (g->kind != DC_NODE_MAP) continue; /* reported by the walk/below */
    const dc_node *cn = dc_node_get(g, "count");
    char w[96] = "";
    if (c->d) snprintf(w, sizeof w, "%s[%zu].count", what, i);
    if (cn && !fe_leaf_int(cn, w, k_count,
                           &cnt, c->d)) {
      res_fail(c);
      cnt = 1;
    }
    total += cnt;
  }
  if (total > MAX_TABLES) {
    if (c->d)
      dc_diag_error(c->d, DC_DIAG_OUT_OF_RANGE, list->span,
                    "%lld embedding tables; at most %d are supported",
                    (long long)total, MAX_TABLES);
    res_fail(c);
    return;
  }
  dc_table *t = dc_arena_array(c->a, (size_t)total, sizeof *t);
  int64_t k = 0, mem = 0, lookups = 0;
  bool mixed = false;
  int64_t first_dim = 0;
  for (size_t i = 0; i < list->n; i++) {
    const dc_node *g = list->items[i];
    char w[128] = "";
    if (c->d) snprintf(w, sizeof w, "%s[%zu]", what, i);
    if (!fe_expect_kind(g, DC_NODE_MAP, w, c->d)) {
      res_fail(c);
      continue;
    }
    int64_t cnt = 1, rows = 0, dim = dim0;
    double pool = pool0;
    const char *name = NULL;
    int shard = 0, memk = DC_MEMORY_AUTO;
    double zipf = 0, hit = -1;
    int64_t *ranks = NULL;
    int32_t n_ranks = 0;
    const dc_node *n;
    if ((n = dc_node_get(g, "count")))
      fe_leaf_int(n, w, k_count,
                  &cnt, NULL);
#define FIELD(key) \
  (c->d ? (snprintf(w, sizeof w, "%s[%zu].%s", what, i, key), w) : what)
    const dc_node *rows_n = dc_node_get(g, "rows");
    if (!rows_n) {
      if (c->d)
        dc_diag_error(c->d, DC_DIAG_MISSING_KEY, g->span,
                      "table group %s[%zu] has no 'rows'", what, i);
      res_fail(c);
    } else if (!fe_leaf_int(rows_n, FIELD("rows"),
                            k_rows,
                            &rows, c->d)) {
      res_fail(c);
    }
    const dc_node *dn = dc_node_get(g, "dim");
    if (dn) {
      if (!fe_leaf_int(dn, FIELD("dim"),
                       k_dim, &dim,
                       c->d))
        res_fail(c);
    } else if (!res_get(c, "model.embedding.dim")) {
      if (c->d)
        dc_diag_error(c->d, DC_DIAG_MISSING_KEY, g->span,
                      "table group %s[%zu] has no 'dim' and "
                      "model.embedding.dim is not set",
                      what, i);
      res_fail(c);
    }
    if (!pool_forced && (n = dc_node_get(g, "pooling")) &&
        !fe_leaf_num(n, FIELD("pooling"),
                     k_pool,
                     &pool, c->d))
      res_fail(c);
    if ((n = dc_node_get(g, "name")) &&
        !fe_leaf_str(n, FIELD("name"), &name, c->d))
      res_fail(c);
    if ((n = dc_node_get(g, "sharding")) &&
        !fe_leaf_enum(n, FIELD("sharding"), fe_enum_table_sharding, &shard,
                      c->d))
      res_fail(c);
    if ((n = dc_node_get(g, "ranks"))) {
      if (!res_intlist(c, n, FIELD("ranks"),
                   k_ranks, 1,
                   &ranks, &n_ranks))
        res_fail(c);
      for (int32_t r = 0; r < n_ranks && ranks; r++)
        if (ranks[r] > c->x.max_rank) {
          c->x.max_rank = ranks[r];
          c->x.rank_sp = n->items[r]->span;
        }
    }
    if ((n = dc_node_get(g, "memory")) &&
        !fe_leaf_enum(n, FIELD("memory"), fe_enum_table_memory, &memk, c->d))
      res_fail(c);
    const dc_node *zn = dc_node_get(g, "zipf");
    const dc_node *hn = dc_node_get(g, "hit_rate");
    if (zn && !fe_leaf_num(zn, FIELD("zipf"),
                           fe_schema_find("model.embedding.tables[].zipf"),
                           &zipf, c->d))
      res_fail(c);
    if (hn && !fe_leaf_num(hn, FIELD("hit_rate"),
                           fe_schema_find("model.embedding.tables[].hit_rate"),
                           &hit, c->d))
      res_fail(c);
    if (zn && hn) {
      if (c->d) {
        dc_diag *e = dc_diag_error(
            c->d, DC_DIAG_CONFLICT, hn->span,
            "table group %s[%zu] gives both 'zipf' and 'hit_rate'", what, i);
        dc_diag_set_help(e, "a measured hit rate replaces the one the Zipf "
                            "exponent would give: keep one of them");
      }
      res_fail(c);
    }
#undef FIELD
    if (rows > 0 && dim > 0) {
      int64_t bytes, gbytes;
      if (!dc_mul_i64(rows, dim, &bytes) ||
          !dc_mul_i64(bytes, EMB_BYTES, &bytes) ||
          !dc_mul_i64(bytes, cnt, &gbytes) || !dc_add_i64(mem, gbytes, &mem)) {
        if (c->d)
          dc_diag_error(c->d, DC_DIAG_OVERFLOW, rows_n->span,
                        "embedding memory (rows × dim × 4 bytes × count, "
                        "summed over tables) overflows 64 bits");
        res_fail(c);
        mem = 0;
      }
      if (first_dim == 0) first_dim = dim;
      if (dim != first_dim) mixed = true;
    }
    lookups = dc_sat_add_i64(
        lookups, dc_sat_mul_i64(cnt, dc_f64_sat_i64(ceil(pool))));
    for (int64_t j = 0; j < cnt && k < total; j++, k++) {
      dc_table *tb = &t[k];
      if (name && cnt == 1)
        tb->name = name;
      else if (name)
        tb->name = dc_arena_printf(c->a, "%s_%lld", name, (long long)j);
      else
        tb->name = dc_arena_printf(c->a, "t%lld", (long long)k);
      tb->rows = rows;
      tb->dim = (int32_t)(dim > 0 ? dim : 1);
      tb->pooling = pool;
      tb->sharding = (dc_sharding)shard;
      tb->memory = (dc_table_memory)memk;
      tb->zipf = zipf;
      tb->hit_rate = hit;
      if (n_ranks && ranks) {
        int32_t *r32 = dc_arena_array(c->a, (size_t)n_ranks, sizeof *r32);
        for (int32_t r = 0; r < n_ranks; r++) r32[r] = (int32_t)ranks[r];
        tb->ranks = r32;
        tb->n_ranks = n_ranks;
      }
      tb->span = g->span;
    }
  }
  p->tables = t;
  p->n_tables = (int32_t)k;
  c->x.emb_dim = mixed ? -1 : first_dim;
  c->x.n_tables = (int64_t)k;
  c->x.sum_dims = 0;
  for (int64_t i = 0; i < (int64_t)k; i++) c->x.sum_dims += t[i].dim;
  c->x.dim_sp = dim_n ? dim_n->span : list->span;
  c->x.lookups = lookups;
  c->x.lookups_sp = list->span;
}

/* A model key that applies to one interaction only, written (by the user,
 * not a preset) where another is chosen, is an error: it would be
 * ignored. The caret goes on the key where the user's model: has it. */
static void only_for(fe_rctx *c, const char *key, const char *what,
                     bool applies) {
  char path[64];
  snprintf(path, sizeof path, "model.%s", key);
  const dc_node *n = res_get(c, path);
  if (!n || applies || res_varies(c, "model.interaction")) return;
  if (res_in_preset(n->span)) return;
  if (c->d) {
    const dc_node *k = dc_node_key(res_get(c, "model"), key);
    dc_diag *g = dc_diag_error(
        c->d, DC_DIAG_CONFLICT, k ? k->span : n->span,
        "'%s' applies only to interaction '%s', and this model's "
        "interaction is '%s'",
        path, what, dc_interaction_name(c->p->interaction));
    dc_diag_set_help(g, "remove it, or set model.interaction: %s", what);
  }
  res_fail(c);
}

/* schema: model.dcn: {layers? (default 3), low_rank? (omitted: full-rank
 * cross layers)}, read when interaction is dcn; interaction_self belongs
 * to dot. low_rank against the cross width is a cross-key check
 * (fe_xcheck: the width depends on the MLP and the tables). */
static void interaction_keys(fe_rctx *c, dc_point *p) {
  only_for(c, "interaction_self", "dot", p->interaction == DC_INTERACTION_DOT);
  only_for(c, "dcn", "dcn", p->interaction == DC_INTERACTION_DCN);
  p->dcn_layers = 0;
  p->dcn_low_rank = 0;
  c->x.dcn = p->interaction == DC_INTERACTION_DCN;
  if (!c->x.dcn) return;
  int64_t layers = 3, rank = 0;
  res_int(c, "model.dcn.layers", &layers);
  const dc_node *n = res_int(c, "model.dcn.low_rank", &rank);
  p->dcn_layers = (int32_t)layers;
  p->dcn_low_rank = rank;
  c->x.dcn_rank = rank;
  if (n) c->x.dcn_rank_sp = n->span;
}

/* schema: model: {preset?, bottom_mlp, top_mlp, embedding: {dim, pooling?,
 * tables}, interaction, interaction_self, loss, embedding_kernel}. Without
 * a preset, bottom_mlp, top_mlp and embedding.tables are required. */
void res_model(fe_rctx *c, dc_point *p, bool fill) {
  const dc_node *m = res_get(c, "model");
  if (!m) {
    if (c->d) {
      dc_diag *g = dc_diag_error(c->d, DC_DIAG_MISSING_KEY,
                                 res_missing_span(c, "model"),
                                 "missing required key 'model'");
      dc_diag_set_help(g, "name a preset (model: {preset: dlrm_default}) or "
                          "spell out bottom_mlp, top_mlp and embedding");
    }
    res_fail(c);
    return;
  }
  p->model_name = "custom";
  bool lenient = false;
  if (res_get(c, "model.preset")) {
    const fe_catref *r =
        res_catalog(c, "model.preset", "models", NULL, fill);
    if (r) {
      c->preset = r->root;
      p->model_name = r->name;
    } else {
      lenient = true; /* the missing keys may be in the preset */
    }
  }
  static const char *const req[] = {"model.bottom_mlp", "model.top_mlp",
                                    "model.embedding.tables"};
  bool missing = false;
  for (size_t i = 0; i < DC_COUNTOF(req); i++)
    if (!res_get(c, req[i])) {
      if (c->d && !lenient)
        dc_diag_error(c->d, DC_DIAG_MISSING_KEY,
                      res_missing_span(c, "model"),
                      "missing key '%s' (needed when model.preset is not "
                      "set)",
                      req[i]);
      res_fail(c);
      missing = true;
    }
  p->interaction =
      (dc_interaction)res_enum(c, "model.interaction", DC_INTERACTION_DOT);
  c->x.dot = p->interaction == DC_INTERACTION_DOT;
  p->interaction_self = res_bool(c, "model.interaction_self", false);
  interaction_keys(c, p);
  p->loss = (dc_loss)res_enum(c, "model.loss", DC_LOSS_MSE);
  p->embedding_kernel = (dc_embedding_kernel)res_enum(
      c, "model.embedding_kernel", DC_EMBEDDING_PER_TABLE);

  int64_t *v = NULL;
  int32_t n = 0;
  const dc_node *bn = res_get(c, "model.bottom_mlp");
  if (bn && res_intlist(c, bn, "model.bottom_mlp",
                        fe_schema_find("model.bottom_mlp"), 2, &v, &n)) {
    p->bottom_mlp = v;
    p->n_bottom = n;
    c->x.bottom_last = v[n - 1];
    c->x.bottom_sp = bn->items[n - 1]->span;
  } else if (bn) {
    res_fail(c);
  }
  const dc_node *tn = res_get(c, "model.top_mlp");
  if (tn && res_intlist(c, tn, "model.top_mlp",
                        fe_schema_find("model.top_mlp"), 1, &v, &n)) {
    p->top_mlp = v;
    p->n_top = n;
    if (v[n - 1] != 1) {
      if (c->d) {
        dc_diag *g = dc_diag_error(
            c->d, DC_DIAG_SEMANTIC, tn->items[n - 1]->span,
            "the last top_mlp width must be 1 (the click probability fed "
            "to the loss), found %lld",
            (long long)v[n - 1]);
        dc_diag_set_help(g, "end model.top_mlp with 1");
      }
      res_fail(c);
    }
  } else if (tn) {
    res_fail(c);
  }
  const dc_node *tl = res_get(c, "model.embedding.tables");
  if (tl) tables(c, p, tl);
  (void)missing;
}
