/*
 * study.c — dc_study_load, the driver of the front end's checks, and the
 * accessors of compiler.h.
 *
 * Order of the checks (all errors of a file are reported in one run):
 *   1. read and parse the YAML (a syntax error stops here: the tree is
 *      incomplete, so everything after would be noise);
 *   2. the structure walk: unknown keys and misshapen sections;
 *   3. -D overrides and `sweep:` axes (paths, lists, ranges, zip lengths,
 *      point count);
 *   4. the base point (every sweep key at its first value), with every
 *      leaf checked by the resolver;
 *   5. every other sweep value once, in the context of the base point;
 *   6. the constraints between keys over every combination of the values
 *      that change them (from per-value summaries: no point is lowered);
 *   7. baseline and output.
 * A study that passes cannot make dc_study_point fail.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/study_int.h"

typedef struct fe_fastpoint fe_fastpoint;
static fe_fastpoint *fast_new(const dc_study *s);
static void fast_free(fe_fastpoint *f);

#define MAX_VALUE_ERRORS 20         /* per sweep digit */
#define MAX_COMBO_ERRORS 10
#define MAX_COMBOS (INT64_C(1) << 26) /* cross-key combinations checked */

static bool same_diag(const dc_diag *a, const dc_diag *b) {
  return a->code == b->code && a->span.src == b->span.src &&
         a->span.line == b->span.line && a->span.col == b->span.col &&
         strcmp(a->message, b->message) == 0;
}

static bool same_place(const dc_diag *a, const dc_diag *b) {
  return a->code == b->code && a->span.src == b->span.src &&
         a->span.line == b->span.line && a->span.col == b->span.col;
}

/* Moves the diagnostics of `from` that `to` does not have yet (by place
 * only with `by_place`: one report per broken constraint and place). */
static size_t merge_(dc_diags *to, dc_diags *from, bool by_place) {
  size_t added = 0;
  for (size_t i = 0; i < from->count; i++) {
    dc_diag *g = &from->items[i];
    bool dup = false;
    for (size_t j = 0; j < to->count && !dup; j++)
      dup = by_place ? same_place(&to->items[j], g)
                     : same_diag(&to->items[j], g);
    if (dup) continue;
    dc_diag *n = g->severity == DC_SEV_ERROR
                     ? dc_diag_error(to, g->code, g->span, "%s", g->message)
                     : dc_diag_warning(to, g->code, g->span, "%s",
                                       g->message);
    if (g->help) dc_diag_set_help(n, "%s", g->help);
    added++;
  }
  return added;
}

static size_t merge(dc_diags *to, dc_diags *from) {
  return merge_(to, from, false);
}

static bool resolve_digits(dc_study *s, const int64_t *digits, dc_arena *a,
                           dc_diags *d, bool fill, fe_xkeys *x) {
  fe_sub *subs = dc_arena_array(a, s->n_axes + 1, sizeof *subs);
  fe_sweep_subs(s, digits, a, subs, NULL);
  dc_point p;
  memset(&p, 0, sizeof p);
  fe_rctx c = {.s = s, .subs = subs, .n_subs = s->n_axes, .a = a, .d = d,
               .p = &p};
  bool ok = fe_resolve(&c, fill);
  if (x) *x = c.x;
  return ok;
}

/* Overlays the fields in which `v` differs from `base0` onto `dst`. */
static void overlay(fe_xkeys *dst, const fe_xkeys *base0, const fe_xkeys *v) {
#define OV(f, sp)                                                            \
  if (v->f != base0->f) {                                                    \
    dst->f = v->f;                                                           \
    dst->sp = v->sp;                                                         \
  }
  OV(batch, batch_sp)
  OV(gpus, gpus_sp)
  OV(hosts, hosts_sp)
  OV(gph, gph_sp)
  OV(bottom_last, bottom_sp)
  OV(emb_dim, dim_sp)
  OV(lookups, lookups_sp)
  OV(max_rank, rank_sp)
  OV(dcn_rank, dcn_rank_sp)
  OV(gpu_fp8, gpu_sp)
  OV(fp8_key, fp8_sp)
  OV(fused, fw_sp)
  OV(half, half_sp)
#undef OV
  if (v->gpu_nvidia != base0->gpu_nvidia) dst->gpu_nvidia = v->gpu_nvidia;
  if (v->gpu_tc != base0->gpu_tc) dst->gpu_tc = v->gpu_tc;
  if (v->gpu_arch != base0->gpu_arch) dst->gpu_arch = v->gpu_arch;
  if (v->dot != base0->dot) dst->dot = v->dot;
  if (v->dcn != base0->dcn) dst->dcn = v->dcn;
  if (v->gpu != base0->gpu) dst->gpu = v->gpu;
  if (v->host_size != base0->host_size) dst->host_size = v->host_size;
  if (v->n_tables != base0->n_tables) dst->n_tables = v->n_tables;
  if (v->sum_dims != base0->sum_dims) dst->sum_dims = v->sum_dims;
}

static bool xdiffer(const fe_xkeys *a, const fe_xkeys *b) {
  return a->batch != b->batch || a->gpus != b->gpus || a->hosts != b->hosts ||
         a->gph != b->gph || a->bottom_last != b->bottom_last ||
         a->emb_dim != b->emb_dim || a->lookups != b->lookups ||
         a->max_rank != b->max_rank || a->dot != b->dot ||
         a->dcn != b->dcn || a->dcn_rank != b->dcn_rank ||
         a->n_tables != b->n_tables || a->sum_dims != b->sum_dims ||
         a->gpu != b->gpu || a->host_size != b->host_size ||
         a->gpu_fp8 != b->gpu_fp8 || a->fp8_key != b->fp8_key ||
         a->fused != b->fused || a->half != b->half ||
         a->gpu_nvidia != b->gpu_nvidia || a->gpu_tc != b->gpu_tc ||
         a->gpu_arch != b->gpu_arch;
}

/* Per digit: the summaries of its values (lists: each; ranges: the ends,
 * with the swept field computed for the values in between). */
typedef struct digit_x {
  fe_xkeys *x;      /* lists: n entries; ranges: [first, last] */
  bool range;
  const fe_axis *ax;
} digit_x;

static void range_x(const digit_x *dx, int64_t i, int64_t n, dc_arena *a,
                    fe_xkeys *out) {
  *out = dx->x[i == 0 ? 0 : 1];
  if (i == 0 || i == n - 1) return;
  (void)a;
  const fe_axis *ax = dx->ax;
  if (ax->kind != FE_AXIS_IRANGE) return;
  int64_t v = ax->i_from;
  if (ax->i_times)
    for (int64_t k = 0; k < i; k++) v *= ax->i_times; /* < to: no overflow */
  else
    v += i * ax->i_step;
  const char *p = dx->ax->path;
  if (!strcmp(p, "training.batch_size")) out->batch = v;
  else if (!strcmp(p, "system.gpus")) out->gpus = v;
  else if (!strcmp(p, "system.hosts")) out->hosts = v;
  else if (!strcmp(p, "system.gpus_per_host")) out->gph = v;
  else if (!strcmp(p, "model.embedding.dim") && out->emb_dim > 0)
    out->emb_dim = v;
}

static void check_values(dc_study *s, dc_diags *d, bool clean) {
  size_t G = s->n_groups;
  dc_arena scratch;
  dc_arena_init(&scratch);
  int64_t *digits = dc_xcalloc(G + 1, sizeof *digits);
  fe_xkeys base;
  dc_diags base_d = {0};
  bool base_ok = resolve_digits(s, digits, &scratch, &base_d, true, &base);
  merge(d, &base_d);
  dc_diags_free(&base_d);
  bool said = !base_ok, said_cap = !base_ok; /* the layout warned once */
  fe_layout_note(&base, &said, &said_cap, d);
  digit_x *dx = dc_xcalloc(G + 1, sizeof *dx);
  for (size_t g = 0; g < G; g++) {
    /* A digit with a value list (alone or zipped with ranges) checks each
     * of its values; a range alone checks its ends (values in between lie
     * between them; cross-key constraints are checked per combination). */
    const fe_axis *first = NULL;
    bool all_list = false;
    for (size_t i = 0; i < s->n_axes; i++)
      if (s->axes[i].group == (int)g) {
        if (!first) first = &s->axes[i];
        if (s->axes[i].kind == FE_AXIS_LIST) all_list = true;
      }
    int64_t n = s->groups[g].n;
    dx[g].ax = first;
    dx[g].range = !all_list;
    size_t nx = all_list ? (size_t)n : 2;
    dx[g].x = dc_xcalloc(nx, sizeof(fe_xkeys));
    dx[g].x[0] = base;
    size_t errs = 0;
    for (int64_t i = all_list ? 1 : n - 1; i < n && errs < MAX_VALUE_ERRORS;
         i++) {
      if (i == 0) continue;
      dc_arena_reset(&scratch);
      dc_diags tmp = {0};
      digits[g] = i;
      fe_xkeys x;
      resolve_digits(s, digits, &scratch, &tmp, true, &x);
      dx[g].x[all_list ? (size_t)i : 1] = x;
      if (!tmp.errors) fe_layout_note(&x, &said, &said_cap, d);
      errs += merge(d, &tmp);
      dc_diags_free(&tmp);
    }
    digits[g] = 0;
  }
  /* Combinations of the digits that change the cross-key summary. */
  if (clean && base_ok && G > 0 && !d->errors) {
    size_t *rel = dc_xcalloc(G, sizeof *rel);
    size_t nr = 0;
    int64_t combos = 1;
    bool multi_list = false;
    size_t n_list_rel = 0;
    for (size_t g = 0; g < G; g++) {
      int64_t n = s->groups[g].n;
      bool differs = false;
      size_t nx = dx[g].range ? 2 : (size_t)n;
      for (size_t i = 1; i < nx && !differs; i++)
        differs = xdiffer(&dx[g].x[i], &base);
      if (!differs) continue;
      rel[nr++] = g;
      if (!dx[g].range) n_list_rel++;
      if (!dc_mul_i64(combos, n, &combos)) combos = INT64_MAX;
    }
    multi_list = n_list_rel >= 2;
    bool need = nr > 0 && (multi_list || n_list_rel < nr);
    if (need && combos > MAX_COMBOS) {
      dc_diag *e = dc_diag_error(
          d, DC_DIAG_SWEEP_TOO_BIG, s->axes[0].key_span,
          "%lld combinations of GPU counts, batch sizes and widths would "
          "have to be checked; at most %lld are",
          (long long)combos, (long long)MAX_COMBOS);
      dc_diag_set_help(e, "sweep fewer values of system.*, "
                          "training.batch_size or model.* together");
    } else if (need) {
      int64_t *dg = dc_xcalloc(nr, sizeof *dg);
      size_t errs = 0;
      for (int64_t c = 0; c < combos && errs < MAX_COMBO_ERRORS; c++) {
        fe_xkeys x = base, v;
        for (size_t r = 0; r < nr; r++) {
          const digit_x *q = &dx[rel[r]];
          if (dg[r] == 0) continue;
          if (q->range) {
            range_x(q, dg[r], s->groups[rel[r]].n, &scratch, &v);
          } else {
            v = q->x[dg[r]];
          }
          overlay(&x, &base, &v);
        }
        if (!fe_xcheck(&x, NULL)) {
          dc_diags tmp = {0};
          fe_xcheck(&x, &tmp);
          errs += merge_(d, &tmp, true);
          dc_diags_free(&tmp);
        }
        for (size_t r = nr; r-- > 0;) { /* next combination */
          if (++dg[r] < s->groups[rel[r]].n) break;
          dg[r] = 0;
        }
      }
      free(dg);
    }
    free(rel);
  }
  for (size_t g = 0; g < G; g++) free(dx[g].x);
  free(dx);
  free(digits);
  dc_arena_free(&scratch);
}

static const char *stem(dc_arena *a, const char *path) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  const char *e = strrchr(b, '.');
  return dc_arena_strndup(a, b, e && e != b ? (size_t)(e - b) : strlen(b));
}

/* Diagnostics in source order (command line first), stable. */
static void sort_diags(dc_diags *d, size_t from) {
  for (size_t i = from + 1; i < d->count; i++) {
    dc_diag g = d->items[i];
    size_t j = i;
    while (j > from && (d->items[j - 1].span.line > g.span.line ||
                        (d->items[j - 1].span.line == g.span.line &&
                         d->items[j - 1].span.col > g.span.col))) {
      d->items[j] = d->items[j - 1];
      j--;
    }
    d->items[j] = g;
  }
}

static dc_study *load(dc_study *s, const dc_source *src,
                      const dc_override *ov, size_t n_ov, dc_diags *d) {
  size_t before = d->errors, first = d->count;
  s->src = src;
  s->cmdline = dc_source_from_memory("<command line>", "", 0, &s->arena);
  dc_node *root = dc_yaml_parse(src, &s->arena, d);
  if (!root || d->errors > before) return NULL;
  if (root->kind != DC_NODE_MAP) {
    char buf[64];
    dc_diag_error(d, DC_DIAG_WRONG_TYPE, root->span,
                  "a study is a mapping of sections (study:, model:, "
                  "training:, ...), found %s",
                  fe_node_describe(root, buf, sizeof buf));
    return NULL;
  }
  s->root = root;
  fe_schema_walk(root, "", d);
  fe_sweep_parse(s, ov, n_ov, d);

  const dc_node *nm = NULL;
  for (size_t i = s->n_fixed; i-- > 0 && !nm;)
    if (!strcmp(s->fixed[i].path, "study")) nm = s->fixed[i].node;
  if (!nm) nm = dc_node_get(root, "study");
  s->name = NULL;
  if (nm) fe_leaf_str(nm, "study", &s->name, d);
  if (!s->name) s->name = stem(&s->arena, s->path);
  const dc_node *desc = dc_node_get(root, "description");
  const char *ds;
  if (desc) fe_leaf_str(desc, "description", &ds, d);

  check_values(s, d, d->errors == before);
  fe_baseline_parse(s, d);
  fe_study_output(s, d);
  sort_diags(d, first);
  if (d->errors > before) return NULL;
  s->fast = fast_new(s);
  return s;
}

/* The text of a study that failed to load: its diagnostics point into it,
 * so it lives until the caller is done with them (the next load on this
 * thread, or dc_study_release_failed). */
static _Thread_local dc_arena failed;

void dc_study_release_failed(void) { dc_arena_free(&failed); }

static void bury(dc_study *s) {
  dc_arena_free(&failed);
  failed = s->arena;
  dc_arena_init(&s->arena);
  dc_study_free(s);
}

static dc_study *study_new(const char *path) {
  dc_study_release_failed();
  dc_study *s = dc_xcalloc(1, sizeof *s);
  dc_arena_init(&s->arena);
  s->path = dc_arena_strdup(&s->arena, path);
  const char *sl = strrchr(path, '/');
  s->dir = sl ? dc_arena_strndup(&s->arena, path, (size_t)(sl - path)) : "";
  if (sl && sl == path) s->dir = "/";
  return s;
}

dc_study *dc_study_load(const char *path, const dc_override *overrides,
                        size_t n_overrides, dc_diags *d) {
  dc_study *s = study_new(path);
  const dc_source *src = dc_source_load(path, &s->arena, d);
  if (!src || !load(s, src, overrides, n_overrides, d)) {
    bury(s);
    return NULL;
  }
  return s;
}

dc_study *dc_study_load_memory(const char *name, const char *data,
                               size_t len, const dc_override *overrides,
                               size_t n_overrides, dc_diags *d) {
  dc_study *s = study_new(name);
  const dc_source *src = dc_source_from_memory(name, data, len, &s->arena);
  if (!load(s, src, overrides, n_overrides, d)) {
    bury(s);
    return NULL;
  }
  return s;
}

void dc_study_free(dc_study *s) {
  if (!s) return;
  fast_free(s->fast);
  dc_map_free(&s->catalog);
  dc_arena_free(&s->arena);
  free(s);
}

const char *dc_study_name(const dc_study *s) { return s->name; }
int64_t dc_study_point_count(const dc_study *s) { return s->n_points; }

size_t dc_study_params(const dc_study *s, const char *const **paths) {
  *paths = (const char *const *)s->param_paths;
  return s->n_axes;
}

size_t dc_study_columns(const dc_study *s, const char *const **columns) {
  *columns = s->n_columns ? (const char *const *)s->columns : NULL;
  return s->n_columns;
}

const char *dc_study_format(const dc_study *s) {
  return s->format_set ? fe_enum_format[s->format] : NULL;
}

int dc_study_precision(const dc_study *s) { return s->precision; }

/* Point 0's study-level flags (dc_study_torchrec, dc_study_capacity). */
static void first_point(const dc_study *s, bool *torchrec, bool *capacity) {
  *torchrec = *capacity = false;
  if (s->n_points < 1) return;
  dc_arena a;
  dc_arena_init(&a);
  dc_point p0;
  dc_study_point(s, 0, &a, &p0);
  *torchrec = p0.torchrec;
  *capacity = p0.capacity_target_ms > 0;
  dc_arena_free(&a);
}

bool dc_study_torchrec(const dc_study *s) {
  bool t, c;
  first_point(s, &t, &c);
  return t;
}

bool dc_study_capacity(const dc_study *s) {
  bool t, c;
  first_point(s, &t, &c);
  return c;
}

bool dc_study_has_baseline(const dc_study *s) { return s->has_baseline; }

int64_t dc_study_baseline_of(const dc_study *s, int64_t index) {
  if (!s->has_baseline || index < 0 || index >= s->n_points) return -1;
  int64_t r = 0;
  for (size_t g = 0; g < s->n_groups; g++) {
    int64_t dg = (index / s->groups[g].stride) % s->groups[g].n;
    if (s->baseline_digit[g] >= 0) dg = s->baseline_digit[g];
    r += dg * s->groups[g].stride;
  }
  return r;
}

/* ---- lowering points fast ------------------------------------------------
 *
 * Resolving a point walks the whole study tree (about 10 µs), while a
 * sweep over training.batch_size changes one integer of the result. So
 * dc_study_point resolves a *template* once per combination of the other
 * sweep digits and patches the batch size in:
 *   - a group is "patchable" when each of its axes is training.batch_size,
 *     a leaf the resolver reads in one place (fe_resolve: g_int into
 *     x.batch, then p->batch_size; the cross-key checks on it ran at load
 *     time). Nothing else of the point depends on it, so the template with
 *     the group at its first value, batch_size set to the leaf's value at
 *     the point's digit, is exactly what fe_resolve lowers;
 *   - templates are keyed by the index with the patchable digits zeroed,
 *     built on first use under a mutex into the cache's own arena and
 *     published with release/acquire, then shared read-only by every
 *     thread (points are const: nothing downstream writes through them);
 *   - only when some group is patchable and the other groups have at most
 *     MAX_TEMPLATES combinations (memory stays bounded); otherwise every
 *     point is resolved in full, as before.
 * A resolver change that makes batch_size feed other fields must drop the
 * path from patchable() (tests/unit/test_compiler_fastpoint.c compares
 * both ways on studies that sweep it). */

#define MAX_TEMPLATES 1024

struct fe_fastpoint {
  pthread_mutex_t mu;
  dc_arena arena;               /* templates, under mu */
  int64_t n_keys;               /* combinations of non-patchable digits */
  bool *patch;                  /* per group */
  int64_t batch_axis;           /* the axis whose value wins, or -1 */
  const fe_skey *batch_key;
  _Atomic(const dc_point *) *tmpl; /* [n_keys] */
};

static bool patchable(const char *path) {
  return strcmp(path, "training.batch_size") == 0;
}

/* The cache, or NULL when the study gains nothing from it. */
static fe_fastpoint *fast_new(const dc_study *s) {
  if (s->n_groups == 0) return NULL;
  bool *patch = dc_xcalloc(s->n_groups, sizeof *patch);
  for (size_t g = 0; g < s->n_groups; g++) patch[g] = true;
  int64_t batch_axis = -1;
  for (size_t i = 0; i < s->n_axes; i++) {
    if (!patchable(s->axes[i].path)) patch[s->axes[i].group] = false;
    else batch_axis = (int64_t)i; /* the last one wins, as in lookup */
  }
  /* An axis on the same path outside a patchable group would be read by
   * the resolver too: then nothing is patched. */
  bool any = false;
  int64_t keys = 1;
  for (size_t g = 0; g < s->n_groups; g++) {
    if (patch[g]) any = true;
    else if (!dc_mul_i64(keys, s->groups[g].n, &keys)) keys = INT64_MAX;
  }
  if (batch_axis >= 0 && !patch[s->axes[batch_axis].group]) any = false;
  if (!any || keys > MAX_TEMPLATES) {
    free(patch);
    return NULL;
  }
  fe_fastpoint *f = dc_xcalloc(1, sizeof *f);
  pthread_mutex_init(&f->mu, NULL);
  dc_arena_init(&f->arena);
  f->n_keys = keys;
  f->patch = patch;
  f->batch_axis = batch_axis;
  f->batch_key = fe_schema_find("training.batch_size");
  f->tmpl = dc_xcalloc((size_t)keys, sizeof *f->tmpl);
  for (int64_t k = 0; k < keys; k++) atomic_init(&f->tmpl[k], NULL);
  return f;
}

static void fast_free(fe_fastpoint *f) {
  if (!f) return;
  pthread_mutex_destroy(&f->mu);
  dc_arena_free(&f->arena);
  free(f->patch);
  free((void *)f->tmpl);
  free(f);
}

/* The template of the point with digits `digits` (patchable ones are
 * read as 0): resolved once, then shared. */
static const dc_point *fast_template(const dc_study *s, fe_fastpoint *f,
                                     const int64_t *digits) {
  int64_t key = 0;
  for (size_t g = 0; g < s->n_groups; g++)
    if (!f->patch[g]) key = key * s->groups[g].n + digits[g];
  const dc_point *t = atomic_load_explicit(&f->tmpl[key],
                                           memory_order_acquire);
  if (t) return t;
  pthread_mutex_lock(&f->mu);
  t = atomic_load_explicit(&f->tmpl[key], memory_order_relaxed);
  if (!t) {
    int64_t *dg = dc_arena_array(&f->arena, s->n_groups, sizeof *dg);
    for (size_t g = 0; g < s->n_groups; g++)
      dg[g] = f->patch[g] ? 0 : digits[g];
    fe_sub *subs = dc_arena_array(&f->arena, s->n_axes + 1, sizeof *subs);
    fe_sweep_subs(s, dg, &f->arena, subs, NULL);
    dc_point *p = dc_arena_alloc(&f->arena, sizeof *p);
    memset(p, 0, sizeof *p);
    fe_rctx c = {.s = s, .subs = subs, .n_subs = s->n_axes, .a = &f->arena,
                 .d = NULL, .p = p};
    bool ok = fe_resolve(&c, false);
    DC_ASSERT(ok);
    atomic_store_explicit(&f->tmpl[key], p, memory_order_release);
    t = p;
  }
  pthread_mutex_unlock(&f->mu);
  return t;
}

static void point_(const dc_study *s, fe_fastpoint *fast, int64_t index,
                   dc_arena *a, dc_point *out) {
  DC_ASSERT(index >= 0 && index < s->n_points);
  int64_t *digits = dc_arena_array(a, s->n_groups + 1, sizeof *digits);
  fe_sweep_digits(s, index, digits);
  fe_sub *subs = dc_arena_array(a, s->n_axes + 1, sizeof *subs);
  dc_param *params = dc_arena_array(a, s->n_axes + 1, sizeof *params);
  fe_sweep_subs(s, digits, a, subs, params);
  if (fast) {
    *out = *fast_template(s, fast, digits);
    if (fast->batch_axis >= 0) {
      int64_t b = 0;
      bool ok = fe_leaf_int(subs[fast->batch_axis].node,
                            "training.batch_size", fast->batch_key, &b,
                            NULL);
      DC_ASSERT(ok);
      out->batch_size = b;
    }
  } else {
    memset(out, 0, sizeof *out);
    fe_rctx c = {.s = s, .subs = subs, .n_subs = s->n_axes, .a = a,
                 .d = NULL, .p = out};
    bool ok = fe_resolve(&c, false);
    DC_ASSERT(ok);
  }
  out->index = index;
  out->params = params;
  out->n_params = (int32_t)s->n_axes;
}

void dc_study_point(const dc_study *s, int64_t index, dc_arena *a,
                    dc_point *out) {
  point_(s, s->fast, index, a, out);
}

void fe_study_point_full(const dc_study *s, int64_t index, dc_arena *a,
                         dc_point *out) {
  point_(s, NULL, index, a, out);
}

typedef struct catalog_names {
  const char *prefix; /* "gpus\x1f" */
  size_t prefix_len;
  const char **names;
  size_t n, cap;
} catalog_names;

static void collect_name(const char *key, void *value, void *ctx) {
  catalog_names *c = ctx;
  const fe_catref *r = value;
  if (strncmp(key, c->prefix, c->prefix_len) != 0 || !r || !r->name) return;
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->names[i], r->name) == 0) return;
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 8;
    c->names = dc_xrealloc(c->names, c->cap * sizeof *c->names);
  }
  c->names[c->n++] = r->name;
}

static int cmp_name(const void *x, const void *y) {
  return strcmp(*(const char *const *)x, *(const char *const *)y);
}

size_t dc_study_catalog_names(const dc_study *s, const char *dir,
                              dc_arena *a, const char ***names) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "%s\x1f", dir);
  catalog_names c = {prefix, strlen(prefix), NULL, 0, 0};
  dc_map_each(&s->catalog, collect_name, &c);
  if (c.n) qsort(c.names, c.n, sizeof *c.names, cmp_name);
  *names = dc_arena_array(a, c.n ? c.n : 1, sizeof **names);
  for (size_t i = 0; i < c.n; i++) (*names)[i] = c.names[i];
  free(c.names);
  return c.n;
}
