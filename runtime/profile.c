/*
 * profile.c — host-overhead profiles (spec/design.md, the paper's §III-C):
 * loading the YAML form documented in runtime.h from the catalog
 * (spec/overheads/) or a path, and the per-op lookup the evaluator does for
 * every top-level op.
 *
 * The paper stores one mean per overhead type per op name and falls back to
 * pooled means for ops it has not seen; we do the same. Ops and runtime
 * calls are kept sorted by name so that a lookup is a binary search: the
 * evaluator does one per top-level op of every point, and a million-point
 * sweep must not pay a hash map per point. Values are µs (`units: us` is the
 * only unit accepted, so a profile in ms cannot be misread by a factor of
 * 1000). The reader reports every problem of a file, not just the first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

#define DC_PROFILE_MAX_US 1e7

static const dc_stat stat_unset = {-1.0, 0.0, 0};

static bool stat_given(dc_stat s) { return s.mean >= 0.0; }

static int cmp_op(const void *a, const void *b) {
  return strcmp(((const dc_op_overheads *)a)->op,
                ((const dc_op_overheads *)b)->op);
}

static int cmp_rt(const void *a, const void *b) {
  return strcmp(((const dc_runtime_overheads *)a)->call,
                ((const dc_runtime_overheads *)b)->call);
}

void dc_profile_sort(dc_profile *p) {
  if (p->n_ops > 1) qsort(p->ops, p->n_ops, sizeof *p->ops, cmp_op);
  if (p->n_runtime > 1)
    qsort(p->runtime, p->n_runtime, sizeof *p->runtime, cmp_rt);
}

dc_op_cost dc_profile_op(const dc_profile *p, const char *op) {
  dc_op_cost c = {p->t1_us, p->t2_us, p->t3_us, p->t5_us};
  size_t lo = 0, hi = p->n_ops;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int r = strcmp(op, p->ops[mid].op);
    if (r == 0) {
      const dc_op_overheads *o = &p->ops[mid];
      if (stat_given(o->t1)) c.t1_us = o->t1.mean;
      if (stat_given(o->t2)) c.t2_us = o->t2.mean;
      if (stat_given(o->t3)) c.t3_us = o->t3.mean;
      if (stat_given(o->t5)) c.t5_us = o->t5.mean;
      return c;
    }
    if (r < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return c;
}

double dc_profile_t4(const dc_profile *p, const char *call) {
  if (!call) call = "cudaLaunchKernel";
  size_t lo = 0, hi = p->n_runtime;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int r = strcmp(call, p->runtime[mid].call);
    if (r == 0)
      return stat_given(p->runtime[mid].t4) ? p->runtime[mid].t4.mean
                                            : p->t4_us;
    if (r < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return p->t4_us;
}

/* ---- reading the YAML form ---------------------------------------------- */

typedef struct reader {
  dc_diags *d;
  bool ok;
} reader;

static bool read_number(reader *r, const dc_node *n, const char *what,
                        double *out) {
  const char *why = NULL;
  if (!n || n->kind != DC_NODE_SCALAR || n->is_null ||
      !dc_parse_double(n->text, out, &why)) {
    dc_diag_error(r->d, DC_DIAG_BAD_PROFILE, n ? n->span : (dc_span){0},
                  "'%s' must be a number of microseconds", what);
    r->ok = false;
    return false;
  }
  /* spec/numbers.md: an overhead is at most 10 s, so that the host clock
   * of an iteration of any size stays finite. */
  if (!(*out >= 0.0) || !(*out <= DC_PROFILE_MAX_US)) {
    dc_diag_error(r->d, DC_DIAG_OUT_OF_RANGE, n->span,
                  "'%s' is %s; an overhead must be between 0 and %.0f us",
                  what, n->text, DC_PROFILE_MAX_US);
    r->ok = false;
    *out = 0.0;
    return false;
  }
  return true;
}

static bool read_count(reader *r, const dc_node *n, const char *what,
                       int64_t *out) {
  const char *why = NULL;
  if (!n || n->kind != DC_NODE_SCALAR || !dc_parse_size(n->text, false, out,
                                                        &why) ||
      *out < 0) {
    dc_diag_error(r->d, DC_DIAG_BAD_PROFILE, n ? n->span : (dc_span){0},
                  "'%s' must be a whole count >= 0", what);
    r->ok = false;
    return false;
  }
  return true;
}

static void unknown_key(reader *r, const dc_node *key, const char *where,
                        const char *const *known, size_t n_known) {
  dc_diag *g = dc_diag_error(r->d, DC_DIAG_UNKNOWN_KEY, key->span,
                             "unknown key '%s' in %s", key->text, where);
  const char *s = dc_suggest(key->text, known, n_known);
  if (s) dc_diag_set_help(g, "did you mean '%s'?", s);
  r->ok = false;
}

static bool expect_map(reader *r, const dc_node *n, const char *what) {
  if (n && n->kind == DC_NODE_MAP) return true;
  dc_diag_error(r->d, DC_DIAG_BAD_PROFILE, n ? n->span : (dc_span){0},
                "'%s' must be a mapping, not %s", what,
                n ? dc_node_kind_name(n->kind) : "missing");
  r->ok = false;
  return false;
}

/* defaults: {t1, t2, t3, t4, t5, kernel_gap} — all µs, all optional (0). */
static void read_defaults(reader *r, const dc_node *m, dc_profile *p) {
  static const char *const keys[] = {"t1", "t2", "t3", "t4", "t5",
                                     "kernel_gap"};
  double *dst[] = {&p->t1_us, &p->t2_us, &p->t3_us,
                   &p->t4_us, &p->t5_us, &p->kernel_gap_us};
  if (!expect_map(r, m, "defaults")) return;
  for (size_t i = 0; i < m->n; i++) {
    const char *k = m->keys[i]->text;
    size_t j = 0;
    while (j < DC_COUNTOF(keys) && strcmp(k, keys[j]) != 0) j++;
    if (j == DC_COUNTOF(keys)) {
      unknown_key(r, m->keys[i], "'defaults'", keys, DC_COUNTOF(keys));
      continue;
    }
    read_number(r, m->items[i], k, dst[j]);
  }
}

/* ops: "name": {t1, t2, t3, t5, n, t<i>_std, t<i>_n} */
static void read_op(reader *r, const char *name, const dc_node *m,
                    dc_op_overheads *o) {
  static const char *const keys[] = {"t1",     "t2",     "t3",     "t5",
                                     "n",      "t1_std", "t2_std", "t3_std",
                                     "t5_std", "t1_n",   "t2_n",   "t3_n",
                                     "t5_n"};
  dc_stat *st[] = {&o->t1, &o->t2, &o->t3, &o->t5};
  o->op = name;
  for (size_t i = 0; i < 4; i++) *st[i] = stat_unset;
  if (!expect_map(r, m, name)) return;
  int64_t n_all = 0;
  bool have_n_all = false;
  int64_t n_each[4] = {0, 0, 0, 0};
  bool have_n_each[4] = {false, false, false, false};
  for (size_t i = 0; i < m->n; i++) {
    const char *k = m->keys[i]->text;
    size_t j = 0;
    while (j < DC_COUNTOF(keys) && strcmp(k, keys[j]) != 0) j++;
    if (j == DC_COUNTOF(keys)) {
      unknown_key(r, m->keys[i], "an op entry", keys, DC_COUNTOF(keys));
    } else if (j < 4) {
      read_number(r, m->items[i], k, &st[j]->mean);
    } else if (j == 4) {
      have_n_all = read_count(r, m->items[i], k, &n_all);
    } else if (j < 9) {
      read_number(r, m->items[i], k, &st[j - 5]->std);
    } else {
      have_n_each[j - 9] = read_count(r, m->items[i], k, &n_each[j - 9]);
    }
  }
  for (size_t i = 0; i < 4; i++) {
    if (!stat_given(*st[i])) continue;
    st[i]->n = have_n_each[i] ? n_each[i] : have_n_all ? n_all : 0;
  }
}

/* runtime: call: {t4, n, t4_std} */
static void read_runtime(reader *r, const char *name, const dc_node *m,
                         dc_runtime_overheads *o) {
  static const char *const keys[] = {"t4", "n", "t4_std", "t4_n"};
  o->call = name;
  o->t4 = stat_unset;
  if (!expect_map(r, m, name)) return;
  int64_t n = 0;
  for (size_t i = 0; i < m->n; i++) {
    const char *k = m->keys[i]->text;
    if (strcmp(k, "t4") == 0)
      read_number(r, m->items[i], k, &o->t4.mean);
    else if (strcmp(k, "n") == 0 || strcmp(k, "t4_n") == 0)
      read_count(r, m->items[i], k, &n);
    else if (strcmp(k, "t4_std") == 0)
      read_number(r, m->items[i], k, &o->t4.std);
    else
      unknown_key(r, m->keys[i], "a runtime entry", keys, DC_COUNTOF(keys));
  }
  if (stat_given(o->t4)) o->t4.n = n;
}

bool dc_profile_load(const char *name, dc_profile *out, dc_arena *a,
                     dc_diags *d) {
  memset(out, 0, sizeof *out);
  dc_catalog_entry e;
  size_t errors_before = d->errors;
  if (!dc_catalog_find("overheads", name, &e, a, d)) {
    if (d->errors == errors_before) {
      dc_diag *g = dc_diag_error(d, DC_DIAG_UNKNOWN_PROFILE, (dc_span){0},
                                 "unknown overhead profile '%s'", name);
      const char *s = dc_catalog_suggest("overheads", name);
      if (s) dc_diag_set_help(g, "did you mean '%s'?", s);
    }
    return false;
  }
  reader r = {d, true};
  const dc_node *root = e.root;
  if (!expect_map(&r, root, "the profile")) return false;
  /* An empty file (or one with only a name) would be all-zero overheads:
   * refused, as an empty GPU file is. */
  if (!dc_node_get(root, "defaults") && !dc_node_get(root, "ops") &&
      !dc_node_get(root, "runtime")) {
    dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_PROFILE, root->span,
                               "overhead profile '%s' has no 'defaults', "
                               "'ops' or 'runtime'", name);
    dc_diag_set_help(g, "write 'defaults: {t1: ..., t5: ...}' in "
                        "microseconds (spec/overheads/none.yaml is the "
                        "smallest example), or use 'overheads: none' for no "
                        "host overheads");
    return false;
  }
  static const char *const top[] = {"name",     "aliases", "units", "source",
                                    "defaults", "ops",     "runtime",
                                    "description"};
  for (size_t i = 0; i < root->n; i++) {
    const char *k = root->keys[i]->text;
    size_t j = 0;
    while (j < DC_COUNTOF(top) && strcmp(k, top[j]) != 0) j++;
    if (j == DC_COUNTOF(top))
      unknown_key(&r, root->keys[i], "an overhead profile", top,
                  DC_COUNTOF(top));
  }
  out->name = e.name;
  const dc_node *src = dc_node_get(root, "source");
  out->source = src && src->kind == DC_NODE_SCALAR ? src->text : "";
  const dc_node *units = dc_node_get(root, "units");
  if (units && (units->kind != DC_NODE_SCALAR ||
                strcmp(units->text, "us") != 0)) {
    dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_PROFILE, units->span,
                               "overhead profiles are in microseconds");
    dc_diag_set_help(g, "write 'units: us' and convert the values");
    r.ok = false;
  }
  const dc_node *defs = dc_node_get(root, "defaults");
  if (defs) read_defaults(&r, defs, out);

  const dc_node *ops = dc_node_get(root, "ops");
  if (ops && expect_map(&r, ops, "ops") && ops->n) {
    out->ops = dc_arena_array(a, ops->n, sizeof *out->ops);
    out->n_ops = ops->n;
    for (size_t i = 0; i < ops->n; i++)
      read_op(&r, ops->keys[i]->text, ops->items[i], &out->ops[i]);
  }
  const dc_node *rt = dc_node_get(root, "runtime");
  if (rt && expect_map(&r, rt, "runtime") && rt->n) {
    out->runtime = dc_arena_array(a, rt->n, sizeof *out->runtime);
    out->n_runtime = rt->n;
    for (size_t i = 0; i < rt->n; i++)
      read_runtime(&r, rt->keys[i]->text, rt->items[i], &out->runtime[i]);
  }
  dc_profile_sort(out);
  return r.ok;
}
