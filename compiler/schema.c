/*
 * schema.c — the study language's keys in one table, the walk that
 * reports unknown keys and misshapen sections, and the leaf parsers that
 * turn scalars into typed values with a diagnostic on every failure.
 *
 * The table is the single source of truth for which dotted paths exist:
 * the structure walk, `sweep:` keys, `-D` overrides, `baseline:` keys and
 * "did you mean" all read it, so a key documented in spec/study.md and
 * listed here is accepted everywhere at once. List items have the path of
 * their list plus "[]" ("model.embedding.tables[].rows"). Types, units and
 * bounds of each key are documented in spec/study.md; keep the two in step.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/study_int.h"
#include "compiler/support/metric_names.h"

const char *const fe_enum_interaction[] = {"dot", "cat", "dcn", NULL};
const char *const fe_enum_loss[] = {"mse", "bce", NULL};
const char *const fe_enum_embedding_kernel[] = {"per_table", "batched", NULL};
const char *const fe_enum_framework[] = {"pytorch", "torchrec", "fused", NULL};
/* index = DC_SHARP_* bits: none 0, nvls 1, ib 2, both 3 */
const char *const fe_enum_sharp[] = {"none", "nvls", "ib", "both", NULL};
const char *const fe_enum_precision[] = {"fp32", "tf32", "fp16", "bf16",
                                         NULL};
/* Same order as dc_storage (point.h); the exchange has no int8 codec. */
const char *const fe_enum_storage[] = {"fp32", "fp16", "bf16", "int8", "fp8",
                                       NULL};
const char *const fe_enum_comm_storage[] = {"fp32", "fp16", "bf16", "fp8",
                                            NULL};
const char *const fe_enum_optimizer[] = {"sgd", "adagrad", "rowwise_adagrad",
                                         "adam", NULL};
const char *const fe_enum_zero_grad[] = {"set_to_none", "legacy", NULL};
/* Same order as dc_sharding (point.h), without "explicit" (a list). */
const char *const fe_enum_plan[] = {"auto",           "table_wise",
                                    "row_wise",       "column_wise",
                                    "table_row_wise", "data_parallel",
                                    "grid_shard",     "table_column_wise",
                                    NULL};
const char *const fe_enum_table_sharding[] = {
    "auto",           "table_wise",    "row_wise", "column_wise",
    "table_row_wise", "data_parallel", "grid_shard", "table_column_wise",
    NULL};
const char *const fe_enum_embedding_model[] = {"enhanced", "plain", NULL};
const char *const fe_enum_format[] = {"csv", "md", "jsonl", "html", NULL};
static const char *const enum_mode[] = {"product", "zip", NULL};
const char *const fe_enum_estimator[] = {"dlrmc", "torchrec", NULL};
/* Same order as dc_objective (point.h). */
const char *const fe_enum_objective[] = {"dlrmc", "torchrec", NULL};
/* Same order as dc_table_memory (point.h), without "auto". */
const char *const fe_enum_table_memory[] = {"hbm", "uvm", "uvm_caching",
                                            NULL};
const char *const fe_enum_memory[] = {"hbm", "auto", NULL};

/* The metric columns the runtime reports per point, from the one table
 * (compiler/support/metric_names.h): output.columns is checked against
 * them, besides the swept paths. */
const char *const fe_metric_columns[] = {
#define DC_METRIC_COLUMN(sym, name) name,
    DC_METRIC_NAMES(DC_METRIC_COLUMN)
#undef DC_METRIC_COLUMN
};
const size_t fe_n_metric_columns = DC_COUNTOF(fe_metric_columns);

#define S FE_SF_SWEEP | FE_SF_OVERRIDE
#define O FE_SF_OVERRIDE
#define BIG 9.2e18
#define PATHS 0x100u /* keys of this mapping are dotted paths */

static const fe_skey keys[] = {
    {"study", FE_SK_STR, NULL, 0, 0, O},
    {"description", FE_SK_STR, NULL, 0, 0, O},
    {"model", FE_SK_MAP, NULL, 0, 0, 0},
    {"model.preset", FE_SK_NAME, NULL, 0, 0, S},
    {"model.bottom_mlp", FE_SK_INTLIST, NULL, 1, 1 << 20, S},
    {"model.top_mlp", FE_SK_INTLIST, NULL, 1, 1 << 20, S},
    {"model.embedding", FE_SK_MAP, NULL, 0, 0, S},
    {"model.embedding.dim", FE_SK_INT, NULL, 1, 65536, S},
    {"model.embedding.pooling", FE_SK_NUM, NULL, 1e-9, 1e6, S},
    {"model.embedding.tables", FE_SK_LIST, NULL, 0, 0, S},
    {"model.embedding.tables[]", FE_SK_MAP, NULL, 0, 0, 0},
    {"model.embedding.tables[].name", FE_SK_STR, NULL, 0, 0, 0},
    {"model.embedding.tables[].count", FE_SK_INT, NULL, 1, 65536, 0},
    {"model.embedding.tables[].rows", FE_SK_INT, NULL, 1, BIG, 0},
    {"model.embedding.tables[].dim", FE_SK_INT, NULL, 1, 65536, 0},
    {"model.embedding.tables[].pooling", FE_SK_NUM, NULL, 1e-9, 1e6, 0},
    {"model.embedding.tables[].sharding", FE_SK_ENUM, fe_enum_table_sharding,
     0, 0, 0},
    {"model.embedding.tables[].ranks", FE_SK_INTLIST, NULL, 0, 65535, 0},
    {"model.embedding.tables[].memory", FE_SK_ENUM, fe_enum_table_memory, 0,
     0, 0},
    {"model.embedding.tables[].zipf", FE_SK_NUM, NULL, 0, 100, 0},
    {"model.embedding.tables[].hit_rate", FE_SK_NUM, NULL, 0, 1, 0},
    {"model.interaction", FE_SK_ENUM, fe_enum_interaction, 0, 0, S},
    {"model.interaction_self", FE_SK_BOOL, NULL, 0, 0, S},
    {"model.dcn", FE_SK_MAP, NULL, 0, 0, 0},
    {"model.dcn.layers", FE_SK_INT, NULL, 1, 64, S},
    {"model.dcn.low_rank", FE_SK_INT, NULL, 1, 1 << 20, S},
    {"model.loss", FE_SK_ENUM, fe_enum_loss, 0, 0, S},
    {"model.embedding_kernel", FE_SK_ENUM, fe_enum_embedding_kernel, 0, 0, S},
    {"training", FE_SK_MAP, NULL, 0, 0, 0},
    {"training.batch_size", FE_SK_INT, NULL, 1, BIG, S},
    {"training.precision", FE_SK_ENUM, fe_enum_precision, 0, 0, S},
    {"training.optimizer", FE_SK_ENUM, fe_enum_optimizer, 0, 0, S},
    {"training.sparse_optimizer", FE_SK_ENUM, fe_enum_optimizer, 0, 0, S},
    {"training.embedding_precision", FE_SK_ENUM, fe_enum_storage, 0, 0, S},
    {"training.comm_precision", FE_SK_ENUM, fe_enum_comm_storage, 0, 0, S},
    {"training.zero_grad", FE_SK_ENUM, fe_enum_zero_grad, 0, 0, S},
    {"training.ddp_bucket", FE_SK_BYTES, NULL, 1, BIG, S},
    {"system", FE_SK_MAP, NULL, 0, 0, 0},
    {"system.gpu", FE_SK_NAME, NULL, 0, 0, S},
    {"system.gpus", FE_SK_INT, NULL, 1, 65536, S},
    {"system.hosts", FE_SK_INT, NULL, 1, 65536, S},
    {"system.gpus_per_host", FE_SK_INT, NULL, 1, 1024, S},
    {"system.overheads", FE_SK_NAME, NULL, 0, 0, S},
    {"system.kernel_models", FE_SK_NAME, NULL, 0, 0, S},
    {"system.framework", FE_SK_ENUM, fe_enum_framework, 0, 0, S},
    {"system.pipeline", FE_SK_BOOL, NULL, 0, 0, S},
    {"system.host_memory", FE_SK_BYTES, NULL, 1, BIG, S},
    {"system.links", FE_SK_MAP, NULL, 0, 0, S},
    {"system.links.nvlink", FE_SK_GBPS, NULL, 1e-6, 1e6, S},
    {"system.links.pcie", FE_SK_GBPS, NULL, 1e-6, 1e6, S},
    {"system.links.nic", FE_SK_GBPS, NULL, 1e-6, 1e6, S},
    {"system.links.latency", FE_SK_TIME, NULL, 0, 1e7, S},
    {"system.links.sharp", FE_SK_ENUM, fe_enum_sharp, 0, 0, S},
    {"system.nvlink_domain", FE_SK_INT, NULL, 1, 65536, S},
    {"sharding", FE_SK_MAP, NULL, 0, 0, 0},
    {"sharding.plan", FE_SK_PLAN, fe_enum_plan, 0, 0, S},
    {"sharding.plan[]", FE_SK_MAP, NULL, 0, 0, 0},
    {"sharding.plan[].table", FE_SK_STR, NULL, 0, 0, 0},
    {"sharding.plan[].sharding", FE_SK_ENUM, fe_enum_table_sharding, 0, 0, 0},
    {"sharding.plan[].ranks", FE_SK_INTLIST, NULL, 0, 65535, 0},
    {"sharding.estimator", FE_SK_ENUM, fe_enum_estimator, 0, 0, O},
    {"sharding.objective", FE_SK_ENUM, fe_enum_objective, 0, 0, S},
    {"sharding.memory", FE_SK_ENUM, fe_enum_memory, 0, 0, S},
    {"sharding.cache_load_factor", FE_SK_NUM, NULL, 1e-6, 1, S},
    {"sharding.torchrec", FE_SK_MAP, NULL, 0, 0, 0},
    {"sharding.torchrec.hbm_bw", FE_SK_NUM, NULL, 1e-9, 1e9, S},
    {"sharding.torchrec.ddr_bw", FE_SK_NUM, NULL, 1e-9, 1e9, S},
    {"sharding.torchrec.hbm_to_ddr_bw", FE_SK_NUM, NULL, 1e-9, 1e9, S},
    {"sharding.torchrec.intra_host_bw", FE_SK_NUM, NULL, 1e-9, 1e9, S},
    {"sharding.torchrec.cross_host_bw", FE_SK_NUM, NULL, 1e-9, 1e9, S},
    {"kernels", FE_SK_MAP, NULL, 0, 0, 0},
    {"kernels.embedding_model", FE_SK_ENUM, fe_enum_embedding_model, 0, 0, S},
    {"transforms", FE_SK_LIST, NULL, 0, 0, S},
    {"transforms[]", FE_SK_MAP, NULL, 0, 0, 0},
    {"transforms[].scale", FE_SK_MAP, NULL, 0, 0, 0},
    {"transforms[].scale.match", FE_SK_STR, NULL, 0, 0, 0},
    {"transforms[].scale.factor", FE_SK_NUM, NULL, 1e-9, 1e6, 0},
    {"transforms[].remove", FE_SK_MAP, NULL, 0, 0, 0},
    {"transforms[].remove.match", FE_SK_STR, NULL, 0, 0, 0},
    {"transforms[].stream", FE_SK_MAP, NULL, 0, 0, 0},
    {"transforms[].stream.match", FE_SK_STR, NULL, 0, 0, 0},
    {"transforms[].stream.stream", FE_SK_INT, NULL, 0, 63, 0},
    {"transforms[].fuse", FE_SK_BOOL, NULL, 0, 0, 0},
    {"sweep", FE_SK_MAP, NULL, 0, 0, PATHS},
    {"sweep.mode", FE_SK_ENUM, enum_mode, 0, 0, 0},
    {"baseline", FE_SK_MAP, NULL, 0, 0, PATHS},
    {"capacity", FE_SK_MAP, NULL, 0, 0, 0},
    {"capacity.target_step_ms", FE_SK_NUM, NULL, 1e-9, 1e12, O},
    {"capacity.gpus", FE_SK_INTLIST, NULL, 1, 65536, O},
    {"capacity.gpu", FE_SK_STRLIST, NULL, 0, 0, O},
    {"capacity.gpus_per_host", FE_SK_INT, NULL, 1, 1024, O},
    {"output", FE_SK_MAP, NULL, 0, 0, 0},
    {"output.columns", FE_SK_STRLIST, NULL, 0, 0, O},
    {"output.format", FE_SK_ENUM, fe_enum_format, 0, 0, O},
    {"output.precision", FE_SK_INT, NULL, 0, 12, O},
};

#undef S
#undef O

const fe_skey *fe_schema_all(size_t *n) {
  *n = DC_COUNTOF(keys);
  return keys;
}

const fe_skey *fe_schema_findn(const char *path, size_t len) {
  if (len == 0) return NULL;
  for (size_t i = 0; i < DC_COUNTOF(keys); i++)
    if (keys[i].path[0] == path[0] && strncmp(keys[i].path, path, len) == 0 &&
        keys[i].path[len] == '\0')
      return &keys[i];
  return NULL;
}

const fe_skey *fe_schema_find(const char *path) {
  return fe_schema_findn(path, strlen(path));
}

const char *fe_schema_suggest_path(const char *path) {
  const char *cands[DC_COUNTOF(keys)];
  size_t n = 0;
  for (size_t i = 0; i < DC_COUNTOF(keys); i++)
    if (keys[i].flags & FE_SF_OVERRIDE) cands[n++] = keys[i].path;
  return dc_suggest(path, cands, n);
}

/* A dotted path given to `sweep:` or `-D` must name a key of the table
 * that may be swept (set): the check both override.c and sweep_axes.c
 * make, with the same diagnostics. */
const fe_skey *fe_path_check(const char *path, dc_span at, bool sweep,
                             dc_diags *d) {
  const fe_skey *k = fe_schema_find(path);
  unsigned need = sweep ? FE_SF_SWEEP : FE_SF_OVERRIDE;
  dc_diag_code code = sweep ? DC_DIAG_SWEEP_PATH : DC_DIAG_BAD_OVERRIDE;
  if (k && (k->flags & need)) return k;
  if (!d) return NULL;
  if (k) {
    dc_diag *g = dc_diag_error(d, code, at, "'%s' cannot be %s", path,
                               sweep ? "swept" : "set with -D");
    if (sweep)
      dc_diag_set_help(g, "sweep the keys of model, training, system, "
                          "sharding, kernels or transforms");
    return NULL;
  }
  dc_diag *g = dc_diag_error(d, code, at, "no key '%s' in the study language",
                             path);
  const char *s = fe_schema_suggest_path(path);
  if (s)
    dc_diag_set_help(g, "did you mean '%s'?", s);
  else
    dc_diag_set_help(g, "keys are dotted paths such as "
                        "'training.batch_size'; see spec/study.md");
  return NULL;
}

const char *fe_node_describe(const dc_node *n, char *buf, size_t cap) {
  if (!n || n->is_null) return "nothing";
  if (n->kind == DC_NODE_SEQ) return "a list";
  if (n->kind == DC_NODE_MAP) return "a mapping";
  size_t len = n->text_len;
  if (len > 40) {
    snprintf(buf, cap, "'%.37s...'", n->text);
  } else {
    snprintf(buf, cap, "'%s'", n->text);
  }
  return buf;
}

static const char *kind_article(dc_node_kind k) {
  return k == DC_NODE_MAP ? "a mapping" : k == DC_NODE_SEQ ? "a list"
                                                           : "a value";
}

bool fe_expect_kind(const dc_node *n, dc_node_kind k, const char *what,
                    dc_diags *d) {
  if (n && n->kind == k && !(k == DC_NODE_SCALAR && n->is_null)) return true;
  if (d) {
    char buf[64];
    dc_diag_error(d, DC_DIAG_WRONG_TYPE, n->span,
                  "expected %s for '%s', found %s", kind_article(k), what,
                  fe_node_describe(n, buf, sizeof buf));
  }
  return false;
}

/* dc_suggest, and failing that the candidate whose first word is close to
 * the misspelt key ("bacth" → "batch_size"). */
const char *fe_schema_suggest_key(const char *word, const char *const *c,
                                  size_t n) {
  const char *s = dc_suggest(word, c, n);
  if (s || n > 64) return s;
  char heads[64][32];
  const char *hp[64] = {0};
  for (size_t i = 0; i < n; i++) {
    size_t l = strcspn(c[i], "_.");
    if (l >= sizeof heads[i]) l = sizeof heads[i] - 1;
    memcpy(heads[i], c[i], l);
    heads[i][l] = '\0';
    hp[i] = strcmp(heads[i], c[i]) ? heads[i] : NULL;
  }
  s = dc_suggest(word, hp, n);
  for (size_t i = 0; s && i < n; i++)
    if (hp[i] == s) return c[i];
  return NULL;
}

/* Children of a mapping path, for "did you mean". */
static size_t children(const char *path, const char **out, size_t cap) {
  size_t pl = strlen(path), n = 0;
  for (size_t i = 0; i < DC_COUNTOF(keys) && n < cap; i++) {
    const char *k = keys[i].path;
    if (pl == 0) {
      if (!strchr(k, '.') && !strchr(k, '[')) out[n++] = k;
    } else if (strncmp(k, path, pl) == 0 && k[pl] == '.' &&
               !strchr(k + pl + 1, '.')) {
      out[n++] = k + pl + 1;
    }
  }
  return n;
}

/* schema: every mapping in the table accepts exactly its listed children;
 * a list (FE_SK_LIST, FE_SK_PLAN as list) holds mappings of "<path>[]";
 * a transform item has exactly one of scale, remove, stream, fuse. */
static void walk(const dc_node *node, char *path, size_t plen, size_t cap,
                 int depth, dc_diags *d) {
  static const fe_skey root = {"", FE_SK_MAP, NULL, 0, 0, 0};
  const fe_skey *k = plen ? fe_schema_findn(path, plen) : &root;
  if (!k || !node || depth > DC_YAML_MAX_DEPTH) return;
  const char *what = plen ? path : "the study";
  if (k->kind == FE_SK_MAP) {
    if (!fe_expect_kind(node, DC_NODE_MAP, what, d)) return;
    if (k->flags & PATHS) return; /* sweep:, baseline: (sweep_axes.c) */
    for (size_t i = 0; i < node->n; i++) {
      const dc_node *key = node->keys[i];
      size_t kl = key->text_len;
      /* A key too long for the path buffer is no key of the schema: it is
       * reported as unknown like any other, never skipped. */
      bool fits = plen + 1 + kl + 3 < cap;
      size_t nl = plen;
      if (fits) {
        if (plen) path[nl++] = '.';
        memcpy(path + nl, key->text, kl);
        nl += kl;
        path[nl] = '\0';
      }
      if (fits && !memchr(key->text, '.', kl) && fe_schema_findn(path, nl)) {
        walk(node->items[i], path, nl, cap, depth + 1, d);
      } else {
        path[plen] = '\0';
        const char *c[64];
        size_t nc = children(path, c, 64);
        dc_diag *g =
            plen ? dc_diag_error(d, DC_DIAG_UNKNOWN_KEY, key->span,
                                 "unknown key '%s' in '%s'", key->text, path)
                 : dc_diag_error(d, DC_DIAG_UNKNOWN_KEY, key->span,
                                 "unknown top-level key '%s'", key->text);
        const char *s = fe_schema_suggest_key(key->text, c, nc);
        if (s) dc_diag_set_help(g, "did you mean '%s'?", s);
      }
      path[plen] = '\0';
    }
    if (strcmp(path, "transforms[]") == 0 && node->n != 1) {
      if (node->n == 0)
        dc_diag_error(d, DC_DIAG_MISSING_KEY, node->span,
                      "empty transform: expected one of scale, remove, "
                      "stream, fuse");
      else
        dc_diag_error(d, DC_DIAG_CONFLICT, node->keys[1]->span,
                      "a transform has exactly one of scale, remove, "
                      "stream, fuse; start a new list item for '%s'",
                      node->keys[1]->text);
    }
    return;
  }
  if (k->kind == FE_SK_LIST || (k->kind == FE_SK_PLAN &&
                                node->kind == DC_NODE_SEQ)) {
    if (!fe_expect_kind(node, DC_NODE_SEQ, what, d)) return;
    if (plen + 3 >= cap) return;
    memcpy(path + plen, "[]", 3);
    for (size_t i = 0; i < node->n; i++)
      walk(node->items[i], path, plen + 2, cap, depth + 1, d);
    path[plen] = '\0';
  }
}

void fe_schema_walk(const dc_node *node, const char *path, dc_diags *d) {
  char buf[512];
  size_t n = strlen(path);
  if (n >= sizeof buf) return;
  memcpy(buf, path, n + 1);
  walk(node, buf, n, sizeof buf, 0, d);
}

/* ---- leaves ---------------------------------------------------------- */

static bool scalar(const dc_node *n, const char *what, const char *kind,
                   dc_diags *d) {
  if (n && n->kind == DC_NODE_SCALAR && !n->is_null) return true;
  if (d) {
    char buf[64];
    dc_diag_error(d, DC_DIAG_WRONG_TYPE, n->span,
                  "expected %s for '%s', found %s", kind, what,
                  fe_node_describe(n, buf, sizeof buf));
  }
  return false;
}

static void fmt_bound(char *buf, size_t cap, double v) {
  if (v == floor(v) && fabs(v) < 1e15)
    snprintf(buf, cap, "%.0f", v);
  else
    snprintf(buf, cap, "%g", v);
}

bool fe_leaf_int(const dc_node *n, const char *what, const fe_skey *k,
                 int64_t *out, dc_diags *d) {
  bool bytes = k && k->kind == FE_SK_BYTES;
  if (!scalar(n, what, bytes ? "a size" : "a whole number", d)) return false;
  const char *why = NULL;
  int64_t v;
  if (!dc_parse_size(n->text, bytes, &v, &why)) {
    if (!strchr("0123456789+-.", n->text[0]))
      why = bytes ? "expected a size such as 80GB, 40MiB or 4096"
                  : "expected a whole number such as 4096, 1M or 40Mi";
    if (d) {
      dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_SIZE, n->span,
                                 "invalid %s '%s' for '%s'",
                                 bytes ? "size" : "number", n->text, what);
      dc_diag_set_help(g, "%s", why);
    }
    return false;
  }
  if (k && ((double)v < k->lo || (double)v > k->hi)) {
    if (d) {
      char b[32];
      bool low = (double)v < k->lo;
      fmt_bound(b, sizeof b, low ? k->lo : k->hi);
      dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, n->span,
                    "'%s' must be %s %s, found %s", what,
                    low ? "at least" : "at most", b, n->text);
    }
    return false;
  }
  *out = v;
  return true;
}

/* The shared front half of the real-valued leaves (numbers, durations,
 * bandwidths): a scalar that `parse` accepts, else one diagnostic with the
 * parser's reason as help. `kind` is "a number", `noun` is "number". */
typedef bool (*real_parser)(const char *text, double *out, const char **why);

static bool leaf_real(const dc_node *n, const char *what, const char *kind,
                      const char *noun, dc_diag_code code, real_parser parse,
                      double *out, dc_diags *d) {
  if (!scalar(n, what, kind, d)) return false;
  const char *why = NULL;
  if (parse(n->text, out, &why)) return true;
  if (d) {
    dc_diag *g = dc_diag_error(d, code, n->span, "invalid %s '%s' for '%s'",
                               noun, n->text, what);
    dc_diag_set_help(g, "%s", why);
  }
  return false;
}

bool fe_leaf_num(const dc_node *n, const char *what, const fe_skey *k,
                 double *out, dc_diags *d) {
  double v;
  if (!leaf_real(n, what, "a number", "number", DC_DIAG_BAD_NUMBER,
                 dc_parse_double, &v, d))
    return false;
  if (k && (v < k->lo || v > k->hi)) {
    if (d) {
      char b[32];
      bool low = v < k->lo;
      fmt_bound(b, sizeof b, low ? k->lo : k->hi);
      if (low && k->lo > 0 && k->lo < 1e-6)
        dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, n->span,
                      "'%s' must be greater than 0, found %s", what,
                      n->text);
      else
        dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, n->span,
                      "'%s' must be %s %s, found %s", what,
                      low ? "at least" : "at most", b, n->text);
    }
    return false;
  }
  *out = v;
  return true;
}

static void enum_help(dc_diag *g, const char *word, const char *const *e) {
  size_t n = 0;
  while (e[n]) n++;
  const char *s = dc_suggest(word, e, n);
  if (s) {
    dc_diag_set_help(g, "did you mean '%s'?", s);
    return;
  }
  dc_buf b = {0};
  for (size_t i = 0; i < n; i++) {
    if (i) dc_buf_puts(&b, ", ");
    dc_buf_puts(&b, e[i]);
  }
  dc_diag_set_help(g, "expected one of: %s", b.data);
  dc_buf_free(&b);
}

bool fe_leaf_enum(const dc_node *n, const char *what, const char *const *e,
                  int *out, dc_diags *d) {
  if (!scalar(n, what, "a name", d)) return false;
  for (int i = 0; e[i]; i++)
    if (strcmp(e[i], n->text) == 0) {
      *out = i;
      return true;
    }
  if (d) {
    char buf[64];
    dc_diag *g =
        dc_diag_error(d, DC_DIAG_BAD_ENUM, n->span, "invalid value %s for '%s'",
                      fe_node_describe(n, buf, sizeof buf), what);
    enum_help(g, n->text, e);
  }
  return false;
}

bool fe_leaf_bool(const dc_node *n, const char *what, bool *out,
                  dc_diags *d) {
  if (!scalar(n, what, "true or false", d)) return false;
  static const char *const t[] = {"true", "True", "TRUE", NULL};
  static const char *const f[] = {"false", "False", "FALSE", NULL};
  for (int i = 0; t[i]; i++) {
    if (!strcmp(n->text, t[i])) {
      *out = true;
      return true;
    }
    if (!strcmp(n->text, f[i])) {
      *out = false;
      return true;
    }
  }
  if (d) {
    char buf[64];
    dc_diag_error(d, DC_DIAG_WRONG_TYPE, n->span,
                  "expected true or false for '%s', found %s", what,
                  fe_node_describe(n, buf, sizeof buf));
  }
  return false;
}

bool fe_leaf_time(const dc_node *n, const char *what, const fe_skey *k,
                  double *out_us, dc_diags *d) {
  double v;
  if (!leaf_real(n, what, "a duration", "duration", DC_DIAG_BAD_TIME,
                 dc_parse_time_us, &v, d))
    return false;
  if (k && (v < k->lo || v > k->hi)) {
    if (d)
      dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, n->span,
                    "'%s' must be between 0 and 10 s, found %s", what,
                    n->text);
    return false;
  }
  *out_us = v;
  return true;
}

bool fe_leaf_gbps(const dc_node *n, const char *what, const fe_skey *k,
                  double *out, dc_diags *d) {
  double v;
  if (!leaf_real(n, what, "a bandwidth", "bandwidth", DC_DIAG_BAD_NUMBER,
                 dc_parse_gbps, &v, d))
    return false;
  if (k && (v < k->lo || v > k->hi)) {
    if (d)
      dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, n->span,
                    "'%s' must be greater than 0 and at most 1000000 GB/s, "
                    "found %s",
                    what, n->text);
    return false;
  }
  *out = v;
  return true;
}

bool fe_leaf_str(const dc_node *n, const char *what, const char **out,
                 dc_diags *d) {
  if (!scalar(n, what, "a string", d)) return false;
  *out = n->text;
  return true;
}
