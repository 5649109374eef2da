/*
 * resolve.c — reads one point of a study through the substitution layer
 * (sweep values, then -D overrides, then the file, then the model preset)
 * and lowers it to a dc_point, checking every value on the way.
 *
 * The same code checks and lowers (see study_int.h): with a diagnostics
 * list it reports every problem it meets and keeps going; without one it
 * is the lowering of a point that was already checked, and cannot fail.
 * Defaults are the ones documented in spec/study.md.
 */
#include <math.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "compiler/study_int.h"

#define DEFAULT_BATCH 2048
#define DEFAULT_BUCKET_BYTES (25 * 1024 * 1024) /* DDP bucket_cap_mb=25 */
#define DEFAULT_GPU "V100-SXM2-16GB"
#define DEFAULT_OVERHEADS "paper-v100"
#define MAX_TABLES (1 << 20)
#define EMB_BYTES 4 /* fp32 weights: the size bound is the fp32 one */

static const dc_node *map_getn(const dc_node *m, const char *k, size_t n) {
  if (!m || m->kind != DC_NODE_MAP) return NULL;
  for (size_t i = 0; i < m->n; i++)
    if (m->keys[i]->text_len == n && memcmp(m->keys[i]->text, k, n) == 0)
      return m->items[i];
  return NULL;
}

static const dc_node *descend(const dc_node *n, const char *rest) {
  while (n && *rest) {
    const char *dot = strchr(rest, '.');
    size_t len = dot ? (size_t)(dot - rest) : strlen(rest);
    n = map_getn(n, rest, len);
    rest += len + (dot ? 1 : 0);
  }
  return n;
}

static const dc_node *lookup_subs(const dc_sub *subs, size_t n,
                                  const char *path) {
  for (size_t i = n; i-- > 0;) {
    size_t l = strlen(subs[i].path);
    if (strncmp(path, subs[i].path, l) != 0) continue;
    if (path[l] == '\0') return subs[i].node;
    if (path[l] == '.') {
      const dc_node *r = descend(subs[i].node, path + l + 1);
      if (r) return r;
    }
  }
  return NULL;
}

/* The node for `path` in this point, or NULL when not written anywhere. */
static const dc_node *get(const dc_rctx *c, const char *path) {
  const dc_node *n = lookup_subs(c->subs, c->n_subs, path);
  if (!n) n = lookup_subs(c->s->fixed, c->s->n_fixed, path);
  if (!n) n = descend(c->s->root, path);
  if (!n && c->preset && strncmp(path, "model.", 6) == 0)
    n = descend(c->preset, path + 6);
  return n;
}

/* Where to point when a key is missing: the key of its section. */
static dc_span missing_span(const dc_rctx *c, const char *section) {
  const dc_node *k = dc_node_key(c->s->root, section);
  if (k) return k->span;
  dc_span sp = c->s->root->span;
  sp.len = 0;
  return sp;
}

static void fail(dc_rctx *c) { c->ok = false; }

static const dc_node *g_int(dc_rctx *c, const char *path, int64_t *out) {
  const dc_node *n = get(c, path);
  if (!n) return NULL;
  if (!dc_leaf_int(n, path, dc_schema_find(path), out, c->d)) {
    fail(c);
    return NULL;
  }
  return n;
}

static const dc_node *g_num(dc_rctx *c, const char *path, double *out) {
  const dc_node *n = get(c, path);
  if (!n) return NULL;
  if (!dc_leaf_num(n, path, dc_schema_find(path), out, c->d)) {
    fail(c);
    return NULL;
  }
  return n;
}

static int g_enum(dc_rctx *c, const char *path, int def) {
  const dc_node *n = get(c, path);
  int v = def;
  if (n && !dc_leaf_enum(n, path, dc_schema_find(path)->enums, &v, c->d))
    fail(c);
  return v;
}

static bool g_bool(dc_rctx *c, const char *path, bool def) {
  const dc_node *n = get(c, path);
  bool v = def;
  if (n && !dc_leaf_bool(n, path, &v, c->d)) fail(c);
  return v;
}

static double g_gbps(dc_rctx *c, const char *path, double def) {
  const dc_node *n = get(c, path);
  double v = def;
  if (n && !dc_leaf_gbps(n, path, dc_schema_find(path), &v, c->d)) fail(c);
  return v;
}

/* A list of counts: `what` names it in messages, `min` entries at least. */
static bool intlist(dc_rctx *c, const dc_node *n, const char *what,
                    const dc_skey *k, size_t min, int64_t **out,
                    int32_t *count) {
  if (!dc_expect_kind(n, DC_NODE_SEQ, what, c->d)) return false;
  if (n->n < min) {
    if (c->d) {
      if (n->n == 0)
        dc_diag_error(c->d, DC_DIAG_EMPTY_LIST, n->span, "'%s' is empty",
                      what);
      else
        dc_diag_error(c->d, DC_DIAG_OUT_OF_RANGE, n->span,
                      "'%s' needs at least %zu entries, found %zu", what, min,
                      n->n);
    }
    return false;
  }
  int64_t *v = dc_arena_array(c->a, n->n ? n->n : 1, sizeof *v);
  bool ok = true;
  for (size_t i = 0; i < n->n; i++) {
    char w[160] = "";
    if (c->d) snprintf(w, sizeof w, "%s[%zu]", what, i);
    if (!dc_leaf_int(n->items[i], w, k, &v[i], c->d)) ok = false;
  }
  *out = v;
  *count = (int32_t)n->n;
  return ok;
}

const dc_catref *dc_study_catalog(dc_study *s, const char *dir,
                                  const char *name, const dc_node *at,
                                  dc_diags *d, bool fill) {
  char key[512];
  snprintf(key, sizeof key, "%s\x1f%s", dir, name);
  dc_catref *r = dc_map_get(&s->catalog, key);
  if (r || !fill) return r && r->name ? r : NULL;
  r = dc_arena_alloc(&s->arena, sizeof *r);
  dc_map_put(&s->catalog, key, r);
  const char *look = name;
  bool is_path = strchr(name, '/') || (strlen(name) > 5 &&
                                       !strcmp(name + strlen(name) - 5,
                                               ".yaml"));
  if (is_path && name[0] != '/' && s->dir && *s->dir)
    look = dc_arena_printf(&s->arena, "%s/%s", s->dir, name);
  dc_catalog_entry e;
  dc_diags tmp = {0};
  if (dc_catalog_find(dir, look, &e, &s->arena, &tmp)) {
    r->name = is_path ? look : e.name;
    r->root = e.root;
  }
  dc_diags_free(&tmp);
  if (r->name) return r;
  if (d) {
    dc_diag_code code = !strcmp(dir, "gpus")     ? DC_DIAG_UNKNOWN_GPU
                        : !strcmp(dir, "models") ? DC_DIAG_UNKNOWN_PRESET
                                                 : DC_DIAG_UNKNOWN_PROFILE;
    const char *what = !strcmp(dir, "gpus")     ? "GPU"
                       : !strcmp(dir, "models") ? "model preset"
                                                : "overhead profile";
    dc_span sp = at ? at->span : (dc_span){0};
    dc_diag *g;
    if (is_path)
      g = dc_diag_error(d, code, sp, "cannot load %s file '%s'", what, look);
    else
      g = dc_diag_error(d, code, sp, "unknown %s '%s'", what, name);
    const char *sug = is_path ? NULL : dc_catalog_suggest(dir, name);
    if (sug) {
      dc_diag_set_help(g, "did you mean '%s'?", sug);
    } else if (!is_path) {
      size_t n = 0;
      const char *const *names = dc_catalog_names(dir, &n);
      dc_buf b = {0};
      for (size_t i = 0; i < n && i < 12; i++) {
        if (i) dc_buf_puts(&b, ", ");
        dc_buf_puts(&b, names[i]);
      }
      if (n)
        dc_diag_set_help(g, "known: %s (or give a path to a YAML file)",
                         b.data);
      else
        dc_diag_set_help(g, "the built-in catalog spec/%s/ is empty; give a "
                            "path to a YAML file", dir);
      dc_buf_free(&b);
    }
  }
  return NULL;
}

/* A catalog-valued key: returns the canonical name, or def's. */
static const dc_catref *g_catalog(dc_rctx *c, const char *path,
                                  const char *dir, const char *def,
                                  bool fill) {
  const dc_node *n = get(c, path);
  const char *name = def;
  if (n) {
    if (!dc_leaf_str(n, path, &name, c->d)) {
      fail(c);
      return NULL;
    }
  }
  if (!name) return NULL;
  const dc_catref *r =
      dc_study_catalog((dc_study *)c->s, dir, name, n, c->d, fill);
  if (!r) fail(c);
  return r;
}

/* schema: model.embedding.tables[] = {count?, rows, dim?, pooling?, name?,
 * sharding?, ranks?}; a group of `count` identical tables. */
static void tables(dc_rctx *c, dc_point *p, const dc_node *list) {
  const char *what = "model.embedding.tables";
  const dc_skey *k_count = dc_schema_find("model.embedding.tables[].count");
  const dc_skey *k_rows = dc_schema_find("model.embedding.tables[].rows");
  const dc_skey *k_dim = dc_schema_find("model.embedding.tables[].dim");
  const dc_skey *k_pool = dc_schema_find("model.embedding.tables[].pooling");
  const dc_skey *k_ranks = dc_schema_find("model.embedding.tables[].ranks");
  int64_t dim0 = -1;
  double pool0 = 1;
  const dc_node *dim_n = g_int(c, "model.embedding.dim", &dim0);
  const dc_node *pool_n = g_num(c, "model.embedding.pooling", &pool0);
  /* A pooling the user writes wins over the preset's tables' own. */
  bool pool_forced = pool_n && c->preset &&
                     descend(c->preset, "embedding.tables") == list &&
                     descend(c->preset, "embedding.pooling") != pool_n;
  if (!dc_expect_kind(list, DC_NODE_SEQ, what, c->d)) {
    fail(c);
    return;
  }
  if (list->n == 0) {
    if (c->d)
      dc_diag_error(c->d, DC_DIAG_EMPTY_LIST, list->span,
                    "'%s' is empty: a DLRM needs at least one table", what);
    fail(c);
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
    if (cn && !dc_leaf_int(cn, w, k_count,
                           &cnt, c->d)) {
      fail(c);
      cnt = 1;
    }
    total += cnt;
  }
  if (total > MAX_TABLES) {
    if (c->d)
      dc_diag_error(c->d, DC_DIAG_OUT_OF_RANGE, list->span,
                    "%lld embedding tables; at most %d are supported",
                    (long long)total, MAX_TABLES);
    fail(c);
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
    if (!dc_expect_kind(g, DC_NODE_MAP, w, c->d)) {
      fail(c);
      continue;
    }
    int64_t cnt = 1, rows = 0, dim = dim0;
    double pool = pool0;
    const char *name = NULL;
    int shard = 0;
    int64_t *ranks = NULL;
    int32_t n_ranks = 0;
    const dc_node *n;
    if ((n = dc_node_get(g, "count")))
      dc_leaf_int(n, w, k_count,
                  &cnt, NULL);
#define FIELD(key) \
  (c->d ? (snprintf(w, sizeof w, "%s[%zu].%s", what, i, key), w) : what)
    const dc_node *rows_n = dc_node_get(g, "rows");
    if (!rows_n) {
      if (c->d)
        dc_diag_error(c->d, DC_DIAG_MISSING_KEY, g->span,
                      "table group %s[%zu] has no 'rows'", what, i);
      fail(c);
    } else if (!dc_leaf_int(rows_n, FIELD("rows"),
                            k_rows,
                            &rows, c->d)) {
      fail(c);
    }
    const dc_node *dn = dc_node_get(g, "dim");
    if (dn) {
      if (!dc_leaf_int(dn, FIELD("dim"),
                       k_dim, &dim,
                       c->d))
        fail(c);
    } else if (!get(c, "model.embedding.dim")) {
      if (c->d)
        dc_diag_error(c->d, DC_DIAG_MISSING_KEY, g->span,
                      "table group %s[%zu] has no 'dim' and "
                      "model.embedding.dim is not set",
                      what, i);
      fail(c);
    }
    if (!pool_forced && (n = dc_node_get(g, "pooling")) &&
        !dc_leaf_num(n, FIELD("pooling"),
                     k_pool,
                     &pool, c->d))
      fail(c);
    if ((n = dc_node_get(g, "name")) &&
        !dc_leaf_str(n, FIELD("name"), &name, c->d))
      fail(c);
    if ((n = dc_node_get(g, "sharding")) &&
        !dc_leaf_enum(n, FIELD("sharding"), dc_enum_table_sharding, &shard,
                      c->d))
      fail(c);
    if ((n = dc_node_get(g, "ranks"))) {
      if (!intlist(c, n, FIELD("ranks"),
                   k_ranks, 1,
                   &ranks, &n_ranks))
        fail(c);
      for (int32_t r = 0; r < n_ranks && ranks; r++)
        if (ranks[r] > c->x.max_rank) {
          c->x.max_rank = ranks[r];
          c->x.rank_sp = n->items[r]->span;
        }
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
        fail(c);
        mem = 0;
      }
      if (first_dim == 0) first_dim = dim;
      if (dim != first_dim) mixed = true;
    }
    lookups += cnt * (int64_t)ceil(pool);
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

/* True when `path` is swept or given as a -D list: its value varies from
 * point to point, so keys that apply to only some of its values are
 * legitimately present at the others. */
static bool varies(const dc_rctx *c, const char *path) {
  for (size_t i = 0; i < c->s->n_axes; i++)
    if (!strcmp(c->s->axes[i].path, path)) return true;
  return false;
}

/* Whether a span points into a built-in preset (not the user's text). */
static bool in_preset(dc_span s) {
  return s.src && !strncmp(s.src->path, "builtin:", 8);
}

/* A model key that applies to one interaction only, written (by the user,
 * not a preset) where another is chosen, is an error: it would be
 * ignored. The caret goes on the key where the user's model: has it. */
static void only_for(dc_rctx *c, const char *key, const char *what,
                     bool applies) {
  char path[64];
  snprintf(path, sizeof path, "model.%s", key);
  const dc_node *n = get(c, path);
  if (!n || applies || varies(c, "model.interaction")) return;
  if (in_preset(n->span)) return;
  if (c->d) {
    const dc_node *k = dc_node_key(get(c, "model"), key);
    dc_diag *g = dc_diag_error(
        c->d, DC_DIAG_CONFLICT, k ? k->span : n->span,
        "'%s' applies only to interaction '%s', and this model's "
        "interaction is '%s'",
        path, what, dc_interaction_name(c->p->interaction));
    dc_diag_set_help(g, "remove it, or set model.interaction: %s", what);
  }
  fail(c);
}

/* schema: model.dcn: {layers? (default 3), low_rank? (omitted: full-rank
 * cross layers)}, read when interaction is dcn; interaction_self belongs
 * to dot. low_rank against the cross width is a cross-key check
 * (dc_xcheck: the width depends on the MLP and the tables). */
static void interaction_keys(dc_rctx *c, dc_point *p) {
  only_for(c, "interaction_self", "dot", p->interaction == DC_INTERACTION_DOT);
  only_for(c, "dcn", "dcn", p->interaction == DC_INTERACTION_DCN);
  p->dcn_layers = 0;
  p->dcn_low_rank = 0;
  c->x.dcn = p->interaction == DC_INTERACTION_DCN;
  if (!c->x.dcn) return;
  int64_t layers = 3, rank = 0;
  g_int(c, "model.dcn.layers", &layers);
  const dc_node *n = g_int(c, "model.dcn.low_rank", &rank);
  p->dcn_layers = (int32_t)layers;
  p->dcn_low_rank = rank;
  c->x.dcn_rank = rank;
  if (n) c->x.dcn_rank_sp = n->span;
}

/* schema: model: {preset?, bottom_mlp, top_mlp, embedding: {dim, pooling?,
 * tables}, interaction, interaction_self, loss, embedding_kernel}. Without
 * a preset, bottom_mlp, top_mlp and embedding.tables are required. */
static void model(dc_rctx *c, dc_point *p, bool fill) {
  const dc_node *m = get(c, "model");
  if (!m) {
    if (c->d) {
      dc_diag *g = dc_diag_error(c->d, DC_DIAG_MISSING_KEY,
                                 missing_span(c, "model"),
                                 "missing required key 'model'");
      dc_diag_set_help(g, "name a preset (model: {preset: dlrm_default}) or "
                          "spell out bottom_mlp, top_mlp and embedding");
    }
    fail(c);
    return;
  }
  p->model_name = "custom";
  bool lenient = false;
  if (get(c, "model.preset")) {
    const dc_catref *r = g_catalog(c, "model.preset", "models", NULL, fill);
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
    if (!get(c, req[i])) {
      if (c->d && !lenient)
        dc_diag_error(c->d, DC_DIAG_MISSING_KEY, missing_span(c, "model"),
                      "missing key '%s' (needed when model.preset is not "
                      "set)",
                      req[i]);
      fail(c);
      missing = true;
    }
  p->interaction =
      (dc_interaction)g_enum(c, "model.interaction", DC_INTERACTION_DOT);
  c->x.dot = p->interaction == DC_INTERACTION_DOT;
  p->interaction_self = g_bool(c, "model.interaction_self", false);
  interaction_keys(c, p);
  p->loss = (dc_loss)g_enum(c, "model.loss", DC_LOSS_MSE);
  p->embedding_kernel = (dc_embedding_kernel)g_enum(
      c, "model.embedding_kernel", DC_EMBEDDING_PER_TABLE);

  int64_t *v = NULL;
  int32_t n = 0;
  const dc_node *bn = get(c, "model.bottom_mlp");
  if (bn && intlist(c, bn, "model.bottom_mlp", dc_schema_find("model.bottom_mlp"),
              2, &v, &n)) {
    p->bottom_mlp = v;
    p->n_bottom = n;
    c->x.bottom_last = v[n - 1];
    c->x.bottom_sp = bn->items[n - 1]->span;
  } else if (bn) {
    fail(c);
  }
  const dc_node *tn = get(c, "model.top_mlp");
  if (tn && intlist(c, tn, "model.top_mlp", dc_schema_find("model.top_mlp"), 1, &v,
              &n)) {
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
      fail(c);
    }
  } else if (tn) {
    fail(c);
  }
  const dc_node *tl = get(c, "model.embedding.tables");
  if (tl) tables(c, p, tl);
  (void)missing;
}

/* schema: system: {gpu, gpus, hosts, gpus_per_host, overheads, links:
 * {nvlink, pcie, nic, latency}}; gpus = hosts × gpus_per_host. */
static void system_(dc_rctx *c, dc_point *p, bool fill) {
  const dc_catref *r = g_catalog(c, "system.gpu", "gpus", DEFAULT_GPU, fill);
  p->gpu = r ? r->name : DEFAULT_GPU;
  /* fp8 support, for the cross-key precision check: the entry's
   * fp8_tflops (datasheet, 0 or absent when the GPU has no fp8) */
  c->x.gpu = p->gpu;
  c->x.gpu_fp8 = false;
  const dc_node *f8 = r && r->root ? dc_node_get(r->root, "fp8_tflops") : NULL;
  double f8v = 0;
  if (f8 && dc_leaf_num(f8, "fp8_tflops", NULL, &f8v, NULL) && f8v > 0)
    c->x.gpu_fp8 = true;
  /* what the fused style's kernels need (dc_xcheck): an NVIDIA GPU,
   * tensor cores for half precision, Ampere or later for DCN */
  c->x.gpu_nvidia = c->x.gpu_tc = false;
  c->x.gpu_arch = NULL;
  if (r && r->root) {
    const dc_node *v = dc_node_get(r->root, "vendor");
    const dc_node *ar = dc_node_get(r->root, "arch");
    const dc_node *tc = dc_node_get(r->root, "tensor_cores");
    c->x.gpu_nvidia = v && v->kind == DC_NODE_SCALAR &&
                      !strcmp(v->text, "nvidia");
    c->x.gpu_tc = tc && tc->kind == DC_NODE_SCALAR && !strcmp(tc->text, "true");
    c->x.gpu_arch = ar && ar->kind == DC_NODE_SCALAR ? ar->text : NULL;
  }
  const dc_node *gn = get(c, "system.gpu");
  c->x.gpu_sp = gn ? gn->span : (dc_span){0};
  r = g_catalog(c, "system.overheads", "overheads", DEFAULT_OVERHEADS, fill);
  p->overheads = r ? r->name : DEFAULT_OVERHEADS;
  const dc_node *n;
  if ((n = g_int(c, "system.gpus", &c->x.gpus))) c->x.gpus_sp = n->span;
  if ((n = g_int(c, "system.hosts", &c->x.hosts))) c->x.hosts_sp = n->span;
  if ((n = g_int(c, "system.gpus_per_host", &c->x.gph)))
    c->x.gph_sp = n->span;
  p->nvlink_gbps = g_gbps(c, "system.links.nvlink", 0);
  p->pcie_gbps = g_gbps(c, "system.links.pcie", 0);
  p->nic_gbps = g_gbps(c, "system.links.nic", 0);
  p->link_latency_us = -1;
  n = get(c, "system.links.latency");
  if (n && !dc_leaf_time(n, "system.links.latency",
                         dc_schema_find("system.links.latency"),
                         &p->link_latency_us, c->d))
    fail(c);
}

/* schema: sharding.plan: auto | table_wise | row_wise | column_wise |
 * table_row_wise | data_parallel, or a list of {table, sharding, ranks}. */
static void sharding(dc_rctx *c, dc_point *p) {
  const dc_node *n = get(c, "sharding.plan");
  p->sharding = DC_SHARDING_AUTO;
  if (!n) return;
  if (n->kind != DC_NODE_SEQ) {
    int v = 0;
    if (!dc_leaf_enum(n, "sharding.plan", dc_enum_plan, &v, c->d)) fail(c);
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
    if (!dc_expect_kind(it, DC_NODE_MAP, w, c->d)) {
      fail(c);
      continue;
    }
    const dc_node *tn = dc_node_get(it, "table");
    const char *tname = NULL;
    if (!tn) {
      if (c->d)
        dc_diag_error(c->d, DC_DIAG_MISSING_KEY, it->span,
                      "%s has no 'table'", w);
      fail(c);
      continue;
    }
    if (!dc_leaf_str(tn, "sharding.plan[].table", &tname, c->d)) {
      fail(c);
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
      fail(c);
      continue;
    }
    int v = DC_SHARDING_TABLE_WISE;
    const dc_node *sn = dc_node_get(it, "sharding");
    if (sn && !dc_leaf_enum(sn, "sharding.plan[].sharding",
                            dc_enum_table_sharding, &v, c->d))
      fail(c);
    t[j].sharding = (dc_sharding)v;
    const dc_node *rn = dc_node_get(it, "ranks");
    if (rn) {
      int64_t *r = NULL;
      int32_t nr = 0;
      if (!intlist(c, rn, "sharding.plan[].ranks",
                   dc_schema_find("sharding.plan[].ranks"), 1, &r, &nr)) {
        fail(c);
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

/* schema: sharding.estimator: dlrmc | torchrec; sharding.torchrec:
 * {hbm_bw, ddr_bw, hbm_to_ddr_bw, intra_host_bw, cross_host_bw} in
 * TorchRec's GB/s (0 / absent: TorchRec's default, runtime/torchrec.c). */
static void estimator(dc_rctx *c, dc_point *p) {
  p->torchrec = g_enum(c, "sharding.estimator", 0) == 1;
  p->torchrec_hbm_bw = p->torchrec_ddr_bw = p->torchrec_hbm_to_ddr_bw = 0;
  p->torchrec_intra_host_bw = p->torchrec_cross_host_bw = 0;
  g_num(c, "sharding.torchrec.hbm_bw", &p->torchrec_hbm_bw);
  g_num(c, "sharding.torchrec.ddr_bw", &p->torchrec_ddr_bw);
  g_num(c, "sharding.torchrec.hbm_to_ddr_bw", &p->torchrec_hbm_to_ddr_bw);
  g_num(c, "sharding.torchrec.intra_host_bw", &p->torchrec_intra_host_bw);
  g_num(c, "sharding.torchrec.cross_host_bw", &p->torchrec_cross_host_bw);
}

/* schema: capacity: {target_step_ms, gpus: [counts], gpu: name | [names],
 * gpus_per_host}. Defaults: gpus [1, 2, 4, 8, 16, 32, 64], gpu the
 * point's system.gpu, gpus_per_host 8. Counts are sorted ascending and
 * deduplicated (the search takes the first that meets the target). */
static void capacity(dc_rctx *c, dc_point *p, bool fill) {
  static const int32_t def_counts[] = {1, 2, 4, 8, 16, 32, 64};
  p->capacity_target_ms = 0;
  p->capacity_gpus_per_host = 8;
  p->n_capacity_gpus = 0;
  p->capacity_gpus = NULL;
  p->n_capacity_types = 0;
  p->capacity_types = NULL;
  const dc_node *n = get(c, "capacity.target_step_ms");
  if (!n) {
    if (get(c, "capacity") && c->d) {
      dc_diag_error(c->d, DC_DIAG_MISSING_KEY,
                    dc_node_key(c->s->root, "capacity")
                        ? dc_node_key(c->s->root, "capacity")->span
                        : missing_span(c, "capacity"),
                    "'capacity' has no 'target_step_ms'");
      fail(c);
    }
    return;
  }
  if (!g_num(c, "capacity.target_step_ms", &p->capacity_target_ms)) return;
  int64_t q = 8;
  g_int(c, "capacity.gpus_per_host", &q);
  p->capacity_gpus_per_host = (int32_t)q;
  n = get(c, "capacity.gpus");
  if (n) {
    int64_t *v = NULL;
    int32_t k = 0;
    if (!intlist(c, n, "capacity.gpus", dc_schema_find("capacity.gpus"), 1,
                 &v, &k)) {
      fail(c);
      return;
    }
    int32_t *w = dc_arena_array(c->a, (size_t)k, sizeof *w);
    int32_t m = 0;
    for (int32_t i = 0; i < k; i++) { /* insertion sort, dedup */
      int32_t x = (int32_t)v[i], j = m;
      bool dup = false;
      for (int32_t y = 0; y < m; y++) dup |= w[y] == x;
      if (dup) continue;
      while (j > 0 && w[j - 1] > x) {
        w[j] = w[j - 1];
        j--;
      }
      w[j] = x;
      m++;
    }
    p->capacity_gpus = w;
    p->n_capacity_gpus = m;
  } else {
    p->capacity_gpus = def_counts;
    p->n_capacity_gpus = (int32_t)DC_COUNTOF(def_counts);
  }
  n = get(c, "capacity.gpu");
  const char **names;
  if (!n) {
    names = dc_arena_array(c->a, 1, sizeof *names);
    names[0] = p->gpu;
    p->capacity_types = names;
    p->n_capacity_types = 1;
    return;
  }
  size_t cnt = n->kind == DC_NODE_SEQ ? n->n : 1;
  if (n->kind == DC_NODE_SEQ && cnt == 0) {
    if (c->d)
      dc_diag_error(c->d, DC_DIAG_EMPTY_LIST, n->span,
                    "'capacity.gpu' is empty");
    fail(c);
    return;
  }
  names = dc_arena_array(c->a, cnt, sizeof *names);
  for (size_t i = 0; i < cnt; i++) {
    const dc_node *it = n->kind == DC_NODE_SEQ ? n->items[i] : n;
    const char *name = NULL;
    if (!dc_leaf_str(it, "capacity.gpu", &name, c->d)) {
      fail(c);
      return;
    }
    const dc_catref *r =
        dc_study_catalog((dc_study *)c->s, "gpus", name, it, c->d, fill);
    if (!r) {
      fail(c);
      return;
    }
    names[i] = r->name;
  }
  p->capacity_types = names;
  p->n_capacity_types = (int32_t)cnt;
}

static bool regex_ok(dc_rctx *c, const dc_node *n, const char *pat) {
  if (!c->d) return true;
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF, &err, &off, NULL);
  if (re) {
    pcre2_code_free(re);
    return true;
  }
  PCRE2_UCHAR msg[256];
  pcre2_get_error_message(err, msg, sizeof msg);
  dc_diag_error(c->d, DC_DIAG_BAD_REGEX, n->span,
                "invalid regular expression '%s': %s at offset %zu", pat,
                (const char *)msg, (size_t)off);
  return false;
}

static const char *match_of(dc_rctx *c, const dc_node *body, const char *w) {
  const dc_node *m = dc_node_get(body, "match");
  const char *pat = NULL;
  if (!m) {
    if (c->d)
      dc_diag_error(c->d, DC_DIAG_MISSING_KEY, body->span,
                    "%s has no 'match' pattern", w);
    fail(c);
    return NULL;
  }
  if (!dc_leaf_str(m, w, &pat, c->d) || !regex_ok(c, m, pat)) {
    fail(c);
    return NULL;
  }
  return pat;
}

/* schema: transforms: list of {scale: {match, factor}} | {remove: {match}}
 * | {stream: {match, stream}} | {fuse: true}. */
static void transforms(dc_rctx *c, dc_point *p) {
  const dc_node *n = get(c, "transforms");
  if (!n) return;
  if (!dc_expect_kind(n, DC_NODE_SEQ, "transforms", c->d)) {
    fail(c);
    return;
  }
  dc_transform *t = dc_arena_array(c->a, n->n ? n->n : 1, sizeof *t);
  int32_t k = 0;
  for (size_t i = 0; i < n->n; i++) {
    const dc_node *it = n->items[i];
    if (it->kind != DC_NODE_MAP || it->n == 0) {
      if (it->kind != DC_NODE_MAP)
        dc_expect_kind(it, DC_NODE_MAP, "transforms[]", c->d);
      fail(c);
      continue;
    }
    const char *kind = it->keys[0]->text;
    const dc_node *body = it->items[0];
    char w[64];
    snprintf(w, sizeof w, "transforms[%zu].%s", i, kind);
    if (!strcmp(kind, "fuse")) {
      bool on = false;
      if (!dc_leaf_bool(body, w, &on, c->d)) fail(c);
      if (on) p->embedding_kernel = DC_EMBEDDING_BATCHED;
      continue;
    }
    if (strcmp(kind, "scale") && strcmp(kind, "remove") &&
        strcmp(kind, "stream"))
      continue; /* unknown key: reported by the walk */
    if (!dc_expect_kind(body, DC_NODE_MAP, w, c->d)) {
      fail(c);
      continue;
    }
    dc_transform *x = &t[k];
    x->span = it->span;
    x->match = match_of(c, body, w);
    if (!strcmp(kind, "scale")) {
      x->kind = DC_TRANSFORM_SCALE;
      const dc_node *f = dc_node_get(body, "factor");
      if (!f) {
        if (c->d)
          dc_diag_error(c->d, DC_DIAG_MISSING_KEY, body->span,
                        "%s has no 'factor'", w);
        fail(c);
      } else if (!dc_leaf_num(f, "transforms[].scale.factor",
                              dc_schema_find("transforms[].scale.factor"),
                              &x->factor, c->d)) {
        fail(c);
      }
    } else if (!strcmp(kind, "remove")) {
      x->kind = DC_TRANSFORM_REMOVE;
    } else {
      x->kind = DC_TRANSFORM_STREAM;
      const dc_node *s = dc_node_get(body, "stream");
      int64_t sv = 1;
      if (!s) {
        if (c->d)
          dc_diag_error(c->d, DC_DIAG_MISSING_KEY, body->span,
                        "%s has no 'stream'", w);
        fail(c);
      } else if (!dc_leaf_int(s, "transforms[].stream.stream",
                              dc_schema_find("transforms[].stream.stream"),
                              &sv, c->d)) {
        fail(c);
      }
      x->stream = (int32_t)sv;
    }
    k++;
  }
  p->transforms = t;
  p->n_transforms = k;
}

static bool has_pos(dc_span s) { return s.src && s.line > 0; }

/* a when it points into the user's own text (not a built-in preset). */
static dc_span user_span(dc_span a, dc_span b) {
  bool ua = a.src && !in_preset(a), ub = b.src && !in_preset(b);
  return ua || !ub ? a : b;
}

/* Derives (gpus, hosts, gpus_per_host) from what was written: any two
 * give the third; one alone means a single host (or one GPU per host when
 * only hosts is given); none means one GPU. */
static void derive(const dc_xkeys *x, int64_t *g, int64_t *h, int64_t *q) {
  int64_t G = x->gpus, H = x->hosts, Q = x->gph;
  if (G && H && !Q) Q = G / H;
  else if (G && Q && !H) H = G / Q;
  else if (H && Q && !G) G = H * Q;
  else if (G && !H && !Q) H = 1, Q = G;
  else if (H && !G && !Q) Q = 1, G = H;
  else if (Q && !G && !H) H = 1, G = Q;
  else if (!G && !H && !Q) G = H = Q = 1;
  *g = G > 0 ? G : 1;
  *h = H > 0 ? H : 1;
  *q = Q > 0 ? Q : 1;
}

/* Constraints between keys (DESIGN §2; reported once per combination of
 * sweep values that breaks them):
 *   gpus = hosts × gpus_per_host;
 *   batch_size is a multiple of gpus (the global batch is split evenly);
 *   dot interaction: last bottom_mlp width = embedding dim;
 *   explicit ranks < gpus;
 *   batch_size × lookups per sample × 8 bytes of indices fits 64 bits. */
/* The fused style follows NVIDIA's kernels (spec/frameworks.md): CUDA
 * only; its half-precision interaction runs on tensor cores; HugeCTR's
 * fused cross layer (the MLPerf DLRM-DCNv2 submissions) is built for
 * Ampere and later. Each refusal names the kernel and the GPU. */
static bool ampere_or_later(const char *arch) {
  static const char *const sm80[] = {"ampere", "ada", "hopper", "blackwell"};
  for (size_t i = 0; arch && i < DC_COUNTOF(sm80); i++)
    if (!strcmp(arch, sm80[i])) return true;
  return false;
}

static bool fused_runs(const dc_xkeys *x, dc_diags *d) {
  bool sm80 = ampere_or_later(x->gpu_arch);
  dc_span at = has_pos(x->gpu_sp) ? x->gpu_sp : x->fw_sp;
  const char *arch = x->gpu_arch ? x->gpu_arch : "an older architecture";
  bool ok = x->gpu_nvidia && !(x->dcn && !sm80) &&
            !(x->half && !x->gpu_tc);
  if (ok || !d) return ok;
  dc_diag *e;
  if (!x->gpu_nvidia) {
    e = dc_diag_error(d, DC_DIAG_CONFLICT, at,
                      "framework 'fused' runs NVIDIA's fused kernels "
                      "(HugeCTR, DeepLearningExamples) and CUDA graphs; %s "
                      "is not an NVIDIA GPU",
                      x->gpu);
    dc_diag_set_help(e, "use system.framework: pytorch or torchrec on this "
                        "GPU");
  } else if (x->dcn && !sm80) {
    e = dc_diag_error(d, DC_DIAG_CONFLICT, at,
                      "framework 'fused' with interaction 'dcn' needs "
                      "HugeCTR's fused cross layer, which ships for Ampere "
                      "and later; %s is %s",
                      x->gpu, arch);
    dc_diag_set_help(e, "use system.framework: torchrec for DCN on this "
                        "GPU, or an Ampere or later GPU (A100, H100, H200, "
                        "B200, L4, L40S)");
  } else {
    e = dc_diag_error(d, DC_DIAG_CONFLICT,
                      has_pos(x->half_sp) ? x->half_sp : at,
                      "framework 'fused' in fp16/bf16 runs the fused "
                      "interaction on tensor cores; %s (%s) has none",
                      x->gpu, arch);
    dc_diag_set_help(e, "use training.precision: fp32 with the fused style "
                        "on this GPU");
  }
  (void)e;
  return false;
}

bool dc_xcheck(const dc_xkeys *x, dc_diags *d) {
  bool ok = true;
  int64_t G = x->gpus, H = x->hosts, Q = x->gph, prod;
  if (G && H && Q) {
    if (!dc_mul_i64(H, Q, &prod) || prod != G) {
      if (d)
        dc_diag_error(d, DC_DIAG_SEMANTIC, x->gpus_sp,
                      "system.gpus is %lld but system.hosts × "
                      "system.gpus_per_host is %lld × %lld",
                      (long long)G, (long long)H, (long long)Q);
      ok = false;
    }
  } else if (G && H && G % H) {
    if (d)
      dc_diag_error(d, DC_DIAG_SEMANTIC, x->hosts_sp,
                    "system.gpus (%lld) is not a multiple of system.hosts "
                    "(%lld)",
                    (long long)G, (long long)H);
    ok = false;
  } else if (G && Q && G % Q) {
    if (d)
      dc_diag_error(d, DC_DIAG_SEMANTIC, x->gph_sp,
                    "system.gpus (%lld) is not a multiple of "
                    "system.gpus_per_host (%lld)",
                    (long long)G, (long long)Q);
    ok = false;
  } else if (!G && H && Q && H * Q > 65536) {
    if (d)
      dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, x->hosts_sp,
                    "system.hosts × system.gpus_per_host is %lld; at most "
                    "65536 GPUs are supported",
                    (long long)(H * Q));
    ok = false;
  }
  if (!ok) return false;
  int64_t g, h, q;
  derive(x, &g, &h, &q);
  if (x->batch % g) {
    if (d) {
      dc_span sp = has_pos(x->batch_sp) ? x->batch_sp
                   : has_pos(x->gpus_sp) ? x->gpus_sp
                   : has_pos(x->hosts_sp) ? x->hosts_sp
                                          : x->gph_sp;
      dc_diag *e = dc_diag_error(
          d, DC_DIAG_SEMANTIC, sp,
          "training.batch_size (%lld) is not a multiple of the number of "
          "GPUs (%lld)",
          (long long)x->batch, (long long)g);
      dc_diag_set_help(e, "the global batch is split evenly across the "
                          "data-parallel GPUs");
    }
    ok = false;
  }
  if (x->dot && x->emb_dim < 0) {
    if (d)
      dc_diag_error(d, DC_DIAG_SEMANTIC, x->dim_sp,
                    "with interaction 'dot', every table must have the same "
                    "dim as the last bottom_mlp width (%lld)",
                    (long long)x->bottom_last);
    ok = false;
  } else if (x->dot && x->emb_dim > 0 && x->bottom_last > 0 &&
             x->emb_dim != x->bottom_last) {
    if (d) {
      dc_diag *e = dc_diag_error(
          d, DC_DIAG_SEMANTIC, user_span(x->dim_sp, x->bottom_sp),
          "with interaction 'dot', the last bottom_mlp width (%lld) must "
          "equal the embedding dim (%lld)",
          (long long)x->bottom_last, (long long)x->emb_dim);
      dc_diag_set_help(e, "make them equal (sweep them together with "
                          "mode: zip), or use interaction: cat");
    }
    ok = false;
  }
  if (x->max_rank >= g) {
    if (d)
      dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, x->rank_sp,
                    "rank %lld does not exist with %lld GPUs (ranks are 0 "
                    "to %lld)",
                    (long long)x->max_rank, (long long)g, (long long)(g - 1));
    ok = false;
  }
  if (x->dcn && x->dcn_rank > 0 && x->bottom_last > 0) {
    int64_t dims = x->sum_dims, w;
    if (x->emb_dim > 0 && !dc_mul_i64(x->n_tables, x->emb_dim, &dims))
      dims = INT64_MAX;
    if (!dc_add_i64(x->bottom_last, dims, &w)) w = INT64_MAX;
    if (x->dcn_rank >= w) {
      if (d) {
        dc_diag *e = dc_diag_error(
            d, DC_DIAG_SEMANTIC, x->dcn_rank_sp,
            "model.dcn.low_rank (%lld) must be smaller than the cross "
            "width (%lld: the last bottom_mlp width plus every table's dim)",
            (long long)x->dcn_rank, (long long)w);
        dc_diag_set_help(e, "a rank at or above the width costs more than a "
                            "full-rank layer; omit low_rank for full rank");
      }
      ok = false;
    }
  }
  if (x->fp8_key && x->gpu && !x->gpu_fp8) {
    if (d) {
      dc_diag *e = dc_diag_error(
          d, DC_DIAG_NO_PRECISION,
          has_pos(x->fp8_sp) ? x->fp8_sp : x->gpu_sp,
          "%s fp8 needs a GPU with fp8 support; %s has none", x->fp8_key,
          x->gpu);
      dc_diag_set_help(e, "use fp16 or bf16 on this GPU, or a GPU with fp8 "
                          "(H100, H200, B200, L4, L40S, MI300X)");
    }
    ok = false;
  }
  if (x->fused && x->gpu && !fused_runs(x, d)) ok = false;
  int64_t idx;
  if (!dc_mul_i64(x->batch, x->lookups, &idx) ||
      !dc_mul_i64(idx, 8, &idx)) {
    if (d)
      dc_diag_error(d, DC_DIAG_OVERFLOW,
                    has_pos(x->batch_sp) ? x->batch_sp : x->lookups_sp,
                    "the index bytes of one batch (batch_size %lld × %lld "
                    "lookups per sample × 8 bytes) overflow 64 bits",
                    (long long)x->batch, (long long)x->lookups);
    ok = false;
  }
  return ok;
}

/* schema: system.framework: pytorch | torchrec | fused (default pytorch);
 * system.pipeline (torchrec only, default true). TorchRec and the fused
 * style look every table up with one table-batched kernel (FBGEMM's TBE,
 * a vendor's fused lookup): they imply model.embedding_kernel: batched,
 * and a written per_table conflicts. Whether the GPU can run the fused
 * kernels is a cross-key check (dc_xcheck: the GPU may be swept). */
static void framework(dc_rctx *c, dc_point *p) {
  p->framework = (dc_framework)g_enum(c, "system.framework", 0);
  const dc_node *fn = get(c, "system.framework");
  bool fw_varies = varies(c, "system.framework");
  c->x.fused = p->framework == DC_FRAMEWORK_FUSED;
  c->x.fw_sp = fn ? fn->span : (dc_span){0};
  const dc_node *pn = get(c, "system.pipeline");
  p->pipeline = g_bool(c, "system.pipeline", true) &&
                p->framework == DC_FRAMEWORK_TORCHREC;
  if (pn && p->framework != DC_FRAMEWORK_TORCHREC && !fw_varies) {
    if (c->d) {
      const dc_node *k = dc_node_key(get(c, "system"), "pipeline");
      dc_diag *g = dc_diag_error(
          c->d, DC_DIAG_CONFLICT, k ? k->span : pn->span,
          "'system.pipeline' applies only to framework 'torchrec', and "
          "this study's framework is '%s'",
          dc_framework_name(p->framework));
      dc_diag_set_help(g, "remove it, or set system.framework: torchrec");
    }
    fail(c);
  }
  if (p->framework == DC_FRAMEWORK_PYTORCH) return;
  const dc_node *kn = get(c, "model.embedding_kernel");
  if (kn && !in_preset(kn->span) &&
      p->embedding_kernel == DC_EMBEDDING_PER_TABLE && !fw_varies &&
      !varies(c, "model.embedding_kernel")) {
    if (c->d) {
      dc_diag *g = dc_diag_error(
          c->d, DC_DIAG_CONFLICT, kn->span,
          "model.embedding_kernel per_table cannot run under framework "
          "'%s': it looks every table up with one table-batched kernel",
          dc_framework_name(p->framework));
      dc_diag_set_help(g, "remove model.embedding_kernel (the framework "
                          "implies batched), or use system.framework: "
                          "pytorch");
    }
    fail(c);
  }
  p->embedding_kernel = DC_EMBEDDING_BATCHED;
}

/* schema: training.{sparse_optimizer (default: optimizer),
 * embedding_precision, comm_precision (default fp32)}. fp8 needs a GPU
 * with fp8 support (a cross-key check: the GPU may be swept). Tables in
 * anything but fp32 are FBGEMM's (stock DLRM's nn.EmbeddingBag tables
 * are fp32), so they need embedding_kernel: batched. */
static void storage(dc_rctx *c, dc_point *p) {
  p->sparse_optimizer =
      (dc_optimizer)g_enum(c, "training.sparse_optimizer", p->optimizer);
  p->embedding_precision =
      (dc_storage)g_enum(c, "training.embedding_precision", 0);
  /* comm's list (dc_enum_comm_storage) has no int8 */
  static const dc_storage comm[] = {DC_STORAGE_FP32, DC_STORAGE_FP16,
                                    DC_STORAGE_BF16, DC_STORAGE_FP8};
  p->comm_precision = comm[g_enum(c, "training.comm_precision", 0)];
  static const char *const keys[] = {"training.embedding_precision",
                                     "training.comm_precision"};
  dc_storage v[] = {p->embedding_precision, p->comm_precision};
  for (size_t i = 0; i < DC_COUNTOF(keys); i++) {
    if (v[i] != DC_STORAGE_FP8 || c->x.fp8_key) continue;
    const dc_node *n = get(c, keys[i]);
    c->x.fp8_key = keys[i];
    if (n) c->x.fp8_sp = n->span;
  }
  dc_storage e = p->embedding_precision;
  if (e != DC_STORAGE_FP32 && p->embedding_kernel != DC_EMBEDDING_BATCHED &&
      !varies(c, "model.embedding_kernel")) {
    if (c->d) {
      const dc_node *n = get(c, "training.embedding_precision");
      dc_diag *g = dc_diag_error(
          c->d, DC_DIAG_CONFLICT, n ? n->span : missing_span(c, "training"),
          "training.embedding_precision %s needs model.embedding_kernel: "
          "batched",
          dc_storage_name(e));
      dc_diag_set_help(g, "stock DLRM's nn.EmbeddingBag tables (per_table) "
                          "are fp32; FBGEMM's table-batched lookup "
                          "(batched) holds %s rows",
                       dc_storage_name(e));
    }
    fail(c);
  }
}

bool dc_resolve(dc_rctx *c, bool fill) {
  dc_point *p = c->p;
  c->ok = true;
  c->preset = NULL;
  memset(&c->x, 0, sizeof c->x);
  c->x.max_rank = -1;
  c->x.batch = DEFAULT_BATCH;
  p->study = c->s->name;

  model(c, p, fill);

  const dc_node *n;
  if ((n = g_int(c, "training.batch_size", &c->x.batch)))
    c->x.batch_sp = n->span;
  p->precision = (dc_precision)g_enum(c, "training.precision", 0);
  c->x.half = p->precision == DC_PRECISION_FP16 ||
              p->precision == DC_PRECISION_BF16;
  if ((n = get(c, "training.precision"))) c->x.half_sp = n->span;
  p->optimizer = (dc_optimizer)g_enum(c, "training.optimizer", 0);
  framework(c, p);
  storage(c, p);
  p->zero_grad_legacy = g_enum(c, "training.zero_grad", 0) == 1;
  p->ddp_bucket_bytes = DEFAULT_BUCKET_BYTES;
  g_int(c, "training.ddp_bucket", &p->ddp_bucket_bytes);

  system_(c, p, fill);
  sharding(c, p);
  /* schema: sharding.objective: dlrmc | torchrec */
  p->objective = (dc_objective)g_enum(c, "sharding.objective", 0);
  estimator(c, p);
  capacity(c, p, fill);
  p->embedding_model =
      (dc_embedding_model)g_enum(c, "kernels.embedding_model", 0);
  transforms(c, p);

  if (c->ok && !dc_xcheck(&c->x, c->d)) c->ok = false;
  int64_t g, h, q;
  derive(&c->x, &g, &h, &q);
  p->batch_size = c->x.batch;
  p->gpus = (int32_t)g;
  p->hosts = (int32_t)h;
  p->gpus_per_host = (int32_t)q;
  return c->ok;
}
