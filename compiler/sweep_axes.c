/*
 * sweep_axes.c — the `sweep:` and `baseline:` sections: axes (one per swept
 * path) made of a value list or a numeric range, grouped into the digits
 * of a mixed-radix number whose value is the point index.
 *
 * Product mode gives each axis its own digit (the last key varies
 * fastest); `mode: zip` puts every axis of `sweep:` in one digit, so their
 * lists must have the same length. `-D path=a,b,c` adds a product digit of
 * its own. Nothing is materialized per point: the count is known up front
 * (with an overflow check) and point i is decoded from its digits, so a
 * million-point sweep takes the memory of its value lists only.
 *
 * schema: sweep: {mode?: product | zip, <dotted path>: [v, ...] |
 *   {from, to, times} | {from, to, step}, ...}
 * schema: baseline: {<swept path>: <one of its values>, ...}
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compiler/study_int.h"

#define MAX_FRANGE 100000000 /* values in one real-valued range */

bool fe_scalar_equal(const char *a, const char *b) {
  if (strcasecmp(a, b) == 0) return true;
  double x, y;
  const char *why;
  if (dc_parse_double(a, &x, &why) && dc_parse_double(b, &y, &why))
    return x == y;
  int64_t i, j;
  if (dc_parse_size(a, true, &i, &why) && dc_parse_size(b, true, &j, &why))
    return i == j;
  return false;
}

/* One value as one line of text (flow style), for the output columns. */
static void flow(dc_buf *b, const dc_node *n, int depth) {
  if (depth > 16) {
    dc_buf_puts(b, "...");
    return;
  }
  if (n->kind == DC_NODE_SCALAR) {
    dc_buf_append(b, n->text, n->text_len);
    return;
  }
  bool map = n->kind == DC_NODE_MAP;
  dc_buf_putc(b, map ? '{' : '[');
  for (size_t i = 0; i < n->n; i++) {
    if (i) dc_buf_puts(b, ", ");
    if (map) {
      dc_buf_append(b, n->keys[i]->text, n->keys[i]->text_len);
      dc_buf_puts(b, ": ");
    }
    flow(b, n->items[i], depth + 1);
    if (b->len > 4096) break;
  }
  dc_buf_putc(b, map ? '}' : ']');
}

const char *fe_node_flow(const dc_node *n, dc_arena *a) {
  dc_buf b = {0};
  flow(&b, n, 0);
  char *r = dc_arena_strndup(a, b.data ? b.data : "", b.len);
  dc_buf_free(&b);
  return r;
}

static int64_t ipow_at(int64_t from, int64_t times, int64_t i) {
  int64_t v = from;
  for (int64_t k = 0; k < i; k++) v *= times; /* bounded: counted */
  return v;
}

const dc_node *fe_axis_value(const fe_axis *ax, int64_t i, dc_arena *a,
                             const char **text) {
  if (ax->kind == FE_AXIS_LIST) {
    if (text) *text = ax->texts[i];
    return ax->values[i];
  }
  dc_node *n = dc_arena_alloc(a, sizeof *n);
  n->kind = DC_NODE_SCALAR;
  n->span = ax->range_span;
  char buf[64];
  if (ax->kind == FE_AXIS_IRANGE) {
    int64_t v = ax->i_times ? ipow_at(ax->i_from, ax->i_times, i)
                            : ax->i_from + i * ax->i_step;
    snprintf(buf, sizeof buf, "%lld", (long long)v);
  } else {
    double v = ax->f_times > 0 ? ax->f_from * pow(ax->f_times, (double)i)
                               : ax->f_from + (double)i * ax->f_step;
    snprintf(buf, sizeof buf, "%.15g", v);
  }
  n->text = dc_arena_strdup(a, buf);
  n->text_len = strlen(buf);
  if (text) *text = n->text;
  return n;
}

static bool range_err(dc_diags *d, dc_span sp, const char *path,
                      const char *msg) {
  dc_diag *g = dc_diag_error(d, DC_DIAG_SWEEP_RANGE, sp,
                             "bad range for '%s': %s", path, msg);
  dc_diag_set_help(g, "write {from: 512, to: 8192, times: 2} or "
                      "{from: 1, to: 64, step: 1}");
  return false;
}

/* A range {from, to, times|step} over a numeric key. Both ends are
 * checked against the key's bounds; values in between lie between them. */
static bool range(fe_axis *ax, const dc_node *v, const fe_skey *k,
                  dc_diags *d) {
  const char *p = ax->path;
  ax->range_span = v->span;
  const dc_node *from = NULL, *to = NULL, *times = NULL, *step = NULL;
  bool ok = true;
  for (size_t i = 0; i < v->n; i++) {
    const char *kn = v->keys[i]->text;
    if (!strcmp(kn, "from")) from = v->items[i];
    else if (!strcmp(kn, "to")) to = v->items[i];
    else if (!strcmp(kn, "times")) times = v->items[i];
    else if (!strcmp(kn, "step")) step = v->items[i];
    else {
      static const char *const rk[] = {"from", "to", "times", "step"};
      dc_diag *g = dc_diag_error(d, DC_DIAG_SWEEP_RANGE, v->keys[i]->span,
                                 "unknown key '%s' in the range for '%s'",
                                 kn, p);
      const char *s = dc_suggest(kn, rk, 4);
      if (s)
        dc_diag_set_help(g, "did you mean '%s'?", s);
      else
        dc_diag_set_help(g, "a range has from, to and times or step");
      ok = false;
    }
  }
  if (!ok) return false;
  if (!from || !to) return range_err(d, v->span, p, "needs 'from' and 'to'");
  if (!times == !step)
    return range_err(d, v->span, p, "needs exactly one of 'times' and 'step'");
  bool is_int = k->kind == FE_SK_INT || k->kind == FE_SK_BYTES;
  if (!is_int && k->kind != FE_SK_NUM) {
    char b[80];
    snprintf(b, sizeof b, "'%s' is not numeric; list its values instead", p);
    return range_err(d, v->span, p, b);
  }
  if (is_int) {
    int64_t f, t, m;
    bool okf = fe_leaf_int(from, p, k, &f, d);
    bool okt = fe_leaf_int(to, p, k, &t, d); /* report both ends */
    if (!okf || !okt) return false;
    if (!fe_leaf_int(times ? times : step, times ? "times" : "step", NULL,
                     &m, d))
      return false;
    if (t < f) return range_err(d, to->span, p, "'to' is less than 'from'");
    ax->kind = FE_AXIS_IRANGE;
    ax->i_from = f;
    if (times) {
      if (m < 2) return range_err(d, times->span, p, "'times' must be >= 2");
      if (f < 1) return range_err(d, from->span, p, "'from' must be >= 1");
      int64_t n = 0, x = f;
      for (;;) {
        n++;
        int64_t y;
        if (!dc_mul_i64(x, m, &y) || y > t) break;
        x = y;
      }
      ax->i_times = m;
      ax->n = n;
    } else {
      if (m < 1) return range_err(d, step->span, p, "'step' must be >= 1");
      ax->i_step = m;
      ax->n = (int64_t)(((uint64_t)t - (uint64_t)f) / (uint64_t)m) + 1;
    }
    return true;
  }
  double f, t, m;
  bool okf = fe_leaf_num(from, p, k, &f, d);
  bool okt = fe_leaf_num(to, p, k, &t, d); /* report both ends */
  if (!okf || !okt) return false;
  if (!fe_leaf_num(times ? times : step, times ? "times" : "step", NULL, &m,
                   d))
    return false;
  if (t < f) return range_err(d, to->span, p, "'to' is less than 'from'");
  ax->kind = FE_AXIS_FRANGE;
  ax->f_from = f;
  double cnt;
  if (times) {
    if (!(m > 1)) return range_err(d, times->span, p, "'times' must be > 1");
    ax->f_times = m;
    cnt = floor(log(t / f) / log(m) + 1e-9) + 1;
  } else {
    if (!(m > 0)) return range_err(d, step->span, p, "'step' must be > 0");
    ax->f_step = m;
    cnt = floor((t - f) / m + 1e-9) + 1;
  }
  if (!(cnt <= MAX_FRANGE))
    return range_err(d, v->span, p, "more than 100000000 values");
  ax->n = dc_f64_sat_i64(cnt);
  return true;
}

/* A value list: every item is one value; keys whose value is itself a list
 * (bottom_mlp, tables, transforms) take a list of lists. */
static bool list(dc_study *s, fe_axis *ax, const dc_node *v,
                 const fe_skey *k, dc_diags *d) {
  if (v->n == 0) {
    dc_diag_error(d, DC_DIAG_SWEEP_EMPTY, v->span,
                  "empty sweep for '%s': list at least one value", ax->path);
    return false;
  }
  bool listy = k->kind == FE_SK_INTLIST || k->kind == FE_SK_LIST ||
               k->kind == FE_SK_STRLIST;
  if (listy && v->items[0]->kind != DC_NODE_SEQ) {
    dc_diag *g = dc_diag_error(d, DC_DIAG_WRONG_TYPE, v->span,
                               "'%s' takes a list, so its sweep is a list "
                               "of lists",
                               ax->path);
    dc_diag_set_help(g, "write e.g. [[512, 256, 64], [256, 64]]");
    return false;
  }
  const dc_node **vals = dc_arena_array(&s->arena, v->n, sizeof *vals);
  const char **texts = dc_arena_array(&s->arena, v->n, sizeof *texts);
  for (size_t i = 0; i < v->n; i++) {
    vals[i] = v->items[i];
    texts[i] = fe_node_flow(v->items[i], &s->arena);
    if (v->items[i]->kind != DC_NODE_SCALAR)
      fe_schema_walk(v->items[i], ax->path, d);
  }
  ax->kind = FE_AXIS_LIST;
  ax->values = (const dc_node *const *)vals;
  ax->texts = (const char *const *)texts;
  ax->n = (int64_t)v->n;
  return true;
}

static bool named_by_override(const dc_override *ov, size_t n,
                              const char *p) {
  for (size_t i = 0; i < n; i++)
    if (ov[i].path && !strcmp(ov[i].path, p)) return true;
  return false;
}

bool fe_sweep_parse(dc_study *s, const dc_override *ov, size_t n_ov,
                    dc_diags *d) {
  size_t before = d->errors;
  const dc_node *sw = dc_node_get(s->root, "sweep");
  size_t cap = 8, n = 0;
  fe_axis *axes = dc_xcalloc(cap, sizeof *axes);
  bool zip = false;
  const dc_node *mode_n = sw ? dc_node_get(sw, "mode") : NULL;
  if (mode_n) {
    int m = 0;
    static const char *const modes[] = {"product", "zip", NULL};
    if (fe_leaf_enum(mode_n, "sweep.mode", modes, &m, d)) zip = m == 1;
  }
  if (sw && sw->kind == DC_NODE_MAP) {
    for (size_t i = 0; i < sw->n; i++) {
      const dc_node *key = sw->keys[i], *v = sw->items[i];
      if (!strcmp(key->text, "mode")) continue;
      const fe_skey *k = fe_path_check(key->text, key->span, true, d);
      if (!k || named_by_override(ov, n_ov, key->text)) continue;
      if (n == cap) {
        cap *= 2;
        axes = dc_xrealloc(axes, cap * sizeof *axes);
      }
      fe_axis *ax = &axes[n];
      memset(ax, 0, sizeof *ax);
      ax->path = key->text;
      ax->key_span = key->span;
      bool ok;
      if (v->kind == DC_NODE_SEQ) {
        ok = list(s, ax, v, k, d);
      } else if (v->kind == DC_NODE_MAP) {
        ok = range(ax, v, k, d);
      } else {
        char buf[64];
        dc_diag *g = dc_diag_error(
            d, DC_DIAG_WRONG_TYPE, v->span,
            "expected a list or a range for sweep '%s', found %s", key->text,
            fe_node_describe(v, buf, sizeof buf));
        dc_diag_set_help(g, "write [a, b, c] or {from: 512, to: 8192, "
                            "times: 2}");
        ok = false;
      }
      if (ok) n++;
    }
  } else if (sw && !sw->is_null) {
    fe_expect_kind(sw, DC_NODE_MAP, "sweep", d);
  }
  /* zip: every list has the length of the first. */
  if (zip)
    for (size_t i = n; i-- > 1;)
      if (axes[i].n != axes[0].n) {
        dc_diag *g = dc_diag_error(
            d, DC_DIAG_SWEEP_ZIP, axes[i].key_span,
            "zip sweep: '%s' has %lld values but '%s' has %lld",
            axes[i].path, (long long)axes[i].n, axes[0].path,
            (long long)axes[0].n);
        dc_diag_set_help(g, "mode: zip pairs the i-th values of every key; "
                            "give every key the same number of values");
        memmove(&axes[i], &axes[i + 1], (n - i - 1) * sizeof *axes);
        n--; /* dropped: its values cannot be paired */
      }
  size_t n_sweep = n;
  if (!fe_overrides_parse(s, ov, n_ov, &axes, &n, &cap, d)) {
    /* reported */
  }
  /* Groups: zip → the sweep's axes share digit 0; -D lists follow. */
  s->groups = dc_arena_array(&s->arena, n + 1, sizeof *s->groups);
  size_t g = 0;
  for (size_t i = 0; i < n; i++) {
    if (zip && i > 0 && i < n_sweep) {
      axes[i].group = 0;
      continue;
    }
    axes[i].group = (int)g;
    s->groups[g++].n = axes[i].n;
  }
  s->n_groups = g;
  s->axes = dc_arena_array(&s->arena, n ? n : 1, sizeof *s->axes);
  if (n) memcpy(s->axes, axes, n * sizeof *axes);
  s->n_axes = n;
  free(axes);
  s->param_paths = dc_arena_array(&s->arena, n ? n : 1, sizeof(char *));
  for (size_t i = 0; i < n; i++) s->param_paths[i] = s->axes[i].path;

  int64_t total = 1;
  bool over = false;
  for (size_t i = g; i-- > 0;) {
    s->groups[i].stride = total;
    if (!dc_mul_i64(total, s->groups[i].n, &total)) over = true;
  }
  if (over) {
    dc_span sp = sw ? dc_node_key(s->root, "sweep")->span : (dc_span){0};
    dc_diag *e = dc_diag_error(d, DC_DIAG_SWEEP_TOO_BIG, sp,
                               "the sweep has too many points: the product "
                               "of its value counts overflows 64 bits");
    dc_buf b = {0};
    for (size_t i = 0; i < g && b.len < 200; i++)
      dc_buf_printf(&b, "%s%lld", i ? " × " : "", (long long)s->groups[i].n);
    dc_diag_set_help(e, "value counts: %s", b.data ? b.data : "");
    dc_buf_free(&b);
    total = 0;
  }
  s->n_points = total;
  return d->errors == before;
}

void fe_sweep_digits(const dc_study *s, int64_t index, int64_t *digits) {
  for (size_t g = 0; g < s->n_groups; g++)
    digits[g] = (index / s->groups[g].stride) % s->groups[g].n;
}

void fe_sweep_subs(const dc_study *s, const int64_t *digits, dc_arena *a,
                   fe_sub *subs, dc_param *params) {
  for (size_t i = 0; i < s->n_axes; i++) {
    const fe_axis *ax = &s->axes[i];
    const char *text = NULL;
    subs[i].path = ax->path;
    subs[i].node = fe_axis_value(ax, digits[ax->group], a, &text);
    if (params) {
      params[i].path = ax->path;
      params[i].value = text;
    }
  }
}

/* The index of `v` among the axis's values, or -1. */
static int64_t find_value(dc_study *s, const fe_axis *ax, const dc_node *v) {
  const char *text = fe_node_flow(v, &s->arena);
  if (ax->kind == FE_AXIS_LIST) {
    for (int64_t i = 0; i < ax->n; i++)
      if (fe_scalar_equal(ax->texts[i], text)) return i;
    /* catalog names: an alias selects the canonical entry */
    const char *dir = !strcmp(ax->path, "system.gpu")         ? "gpus"
                      : !strcmp(ax->path, "system.overheads") ? "overheads"
                      : !strcmp(ax->path, "model.preset")     ? "models"
                                                              : NULL;
    if (dir && v->kind == DC_NODE_SCALAR) {
      const fe_catref *r = fe_study_catalog(s, dir, text, NULL, NULL, true);
      for (int64_t i = 0; r && i < ax->n; i++) {
        const fe_catref *q =
            fe_study_catalog(s, dir, ax->texts[i], NULL, NULL, true);
        if (q && !strcmp(q->name, r->name)) return i;
      }
    }
    return -1;
  }
  const char *why;
  if (ax->kind == FE_AXIS_IRANGE) {
    int64_t x;
    if (!dc_parse_size(text, true, &x, &why)) return -1;
    for (int64_t i = 0; i < ax->n; i++) {
      int64_t y = ax->i_times ? ipow_at(ax->i_from, ax->i_times, i)
                              : ax->i_from + i * ax->i_step;
      if (y == x) return i;
      if (y > x) break;
    }
    return -1;
  }
  double x;
  if (!dc_parse_double(text, &x, &why)) return -1;
  for (int64_t i = 0; i < ax->n && i < MAX_FRANGE; i++) {
    double y = ax->f_times > 0 ? ax->f_from * pow(ax->f_times, (double)i)
                               : ax->f_from + (double)i * ax->f_step;
    if (fabs(y - x) <= 1e-9 * fmax(1, fabs(x))) return i;
    if (y > x) break;
  }
  return -1;
}

bool fe_baseline_parse(dc_study *s, dc_diags *d) {
  const dc_node *b = dc_node_get(s->root, "baseline");
  s->baseline_digit =
      dc_arena_array(&s->arena, s->n_groups + 1, sizeof(int64_t));
  for (size_t g = 0; g < s->n_groups; g++) s->baseline_digit[g] = -1;
  if (!b || b->is_null) return true;
  if (b->kind != DC_NODE_MAP) return false; /* reported by the walk */
  size_t before = d->errors;
  for (size_t i = 0; i < b->n; i++) {
    const dc_node *key = b->keys[i];
    const fe_axis *ax = NULL;
    for (size_t j = 0; j < s->n_axes; j++)
      if (!strcmp(s->axes[j].path, key->text)) ax = &s->axes[j];
    if (!ax) {
      dc_diag *g = dc_diag_error(d, DC_DIAG_BASELINE, key->span,
                                 "baseline key '%s' is not swept",
                                 key->text);
      const char *sug = dc_suggest(key->text, s->param_paths, s->n_axes);
      if (sug)
        dc_diag_set_help(g, "did you mean '%s'?", sug);
      else
        dc_diag_set_help(g, "baseline keys name sweep keys; it selects, for "
                            "each point, the point to compare it with");
      continue;
    }
    int64_t j = find_value(s, ax, b->items[i]);
    if (j < 0) {
      char buf[64];
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_BASELINE, b->items[i]->span,
          "baseline value %s is not one of the values swept for '%s'",
          fe_node_describe(b->items[i], buf, sizeof buf), key->text);
      if (ax->kind == FE_AXIS_LIST) {
        dc_buf t = {0};
        for (int64_t q = 0; q < ax->n && t.len < 120; q++)
          dc_buf_printf(&t, "%s%s", q ? ", " : "", ax->texts[q]);
        dc_diag_set_help(g, "swept values: %s", t.data);
        dc_buf_free(&t);
      }
      continue;
    }
    int64_t *dg = &s->baseline_digit[ax->group];
    if (*dg >= 0 && *dg != j) {
      dc_diag_error(d, DC_DIAG_BASELINE, b->items[i]->span,
                    "baseline values select different points of the zip "
                    "sweep (%lld and %lld)",
                    (long long)*dg, (long long)j);
      continue;
    }
    *dg = j;
    s->has_baseline = true;
  }
  return d->errors == before;
}
