/*
 * bench_sweep.c — value lists and sweeps: from "32:4096:32,40:4104:32" to
 * the list of configurations dlrmc-bench times.
 *
 * A sweep is the cartesian product of one value list per dimension (the
 * last dimension varies fastest), filtered by dc_bench_config_valid and
 * the --max-bytes memory cap. The paper's GEMM set is too large to time
 * whole (256³ shapes × transposes), so a set may ask for a sample: a
 * fixed-seed uniform draw without replacement from the filtered product,
 * kept in grid order so that the same command always produces the same
 * CSV. Small products are enumerated and drawn with a partial
 * Fisher–Yates shuffle; large ones are drawn by rejection on indices.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/bench/bench.h"

/* Longest list one dimension may hold. */
#define MAX_LIST 1000000

/* ---- a set of int64 keys, for de-duplication --------------------------- */

/* Inserts key into `set` (a dc_imap whose values are unused); false when
 * it was already there. */
static bool set_add(dc_imap *set, int64_t key) {
  if (dc_imap_get(set, key) >= 0)
    return false;
  dc_imap_put(set, key, 0);
  return true;
}

/* ---- value lists ------------------------------------------------------- */

static bool parse_value(const dc_bench_dim *dim, const char *s, size_t len,
                        int64_t *out, dc_buf *err) {
  char tmp[64];
  const char *why = NULL;
  if (len == 0 || len >= sizeof tmp) {
    dc_buf_printf(err, "--%s: '%.*s' is not a number", dim->name, (int)len,
                  s);
    return false;
  }
  memcpy(tmp, s, len);
  tmp[len] = '\0';
  if (!dc_parse_size(tmp, strcmp(dim->name, "bytes") == 0, out, &why)) {
    dc_buf_printf(err, "--%s: '%s' is not a number (%s)", dim->name, tmp,
                  why ? why : "invalid");
    return false;
  }
  return true;
}

static bool push_value(const dc_bench_dim *dim, int64_t v, int64_t **vals,
                       size_t *n, size_t *cap, dc_imap *seen, dc_buf *err) {
  if (dim->words == NULL && (v < dim->min || v > dim->max)) {
    dc_buf_printf(err, "--%s: %lld is out of range [%lld, %lld]", dim->name,
                  (long long)v, (long long)dim->min, (long long)dim->max);
    return false;
  }
  if (!set_add(seen, v))
    return true; /* duplicate: first occurrence kept */
  if (*n >= MAX_LIST) {
    dc_buf_printf(err, "--%s: more than %d values", dim->name, MAX_LIST);
    return false;
  }
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 16;
    *vals = dc_xrealloc(*vals, *cap * sizeof **vals);
  }
  (*vals)[(*n)++] = v;
  return true;
}

static bool parse_word(const dc_bench_dim *dim, const char *s, size_t len,
                       int64_t *out, dc_buf *err) {
  for (int64_t i = 0; dim->words[i]; i++)
    if (strlen(dim->words[i]) == len && memcmp(dim->words[i], s, len) == 0) {
      *out = i;
      return true;
    }
  dc_buf_printf(err, "--%s: unknown value '%.*s' (expected ", dim->name,
                (int)len, s);
  for (int i = 0; dim->words[i]; i++)
    dc_buf_printf(err, "%s%s", i ? ", " : "", dim->words[i]);
  dc_buf_puts(err, ")");
  return false;
}

/* ITEM := VALUE | VALUE ':' VALUE [':' STEP], STEP := VALUE | 'x' VALUE */
static bool parse_item(const dc_bench_dim *dim, const char *s, size_t len,
                       int64_t **vals, size_t *n, size_t *cap, dc_imap *seen,
                       dc_buf *err) {
  if (dim->words) {
    int64_t w;
    return parse_word(dim, s, len, &w, err) &&
           push_value(dim, w, vals, n, cap, seen, err);
  }
  const char *c1 = memchr(s, ':', len);
  if (!c1) {
    int64_t v;
    return parse_value(dim, s, len, &v, err) &&
           push_value(dim, v, vals, n, cap, seen, err);
  }
  const char *end = s + len;
  const char *c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
  int64_t lo, hi, step = 1;
  bool geometric = false;
  if (!parse_value(dim, s, (size_t)(c1 - s), &lo, err) ||
      !parse_value(dim, c1 + 1, (size_t)((c2 ? c2 : end) - c1 - 1), &hi,
                   err))
    return false;
  if (c2) {
    const char *st = c2 + 1;
    if (st < end && *st == 'x') {
      geometric = true;
      st++;
    }
    if (!parse_value(dim, st, (size_t)(end - st), &step, err))
      return false;
    if (step < (geometric ? 2 : 1)) {
      dc_buf_printf(err, "--%s: the step of '%.*s' must be at least %d",
                    dim->name, (int)len, s, geometric ? 2 : 1);
      return false;
    }
  }
  if (lo > hi || (geometric && lo < 1)) {
    dc_buf_printf(err, "--%s: '%.*s' is an empty range", dim->name,
                  (int)len, s);
    return false;
  }
  for (int64_t v = lo;;) {
    if (!push_value(dim, v, vals, n, cap, seen, err))
      return false;
    int64_t next;
    bool ok = geometric ? dc_mul_i64(v, step, &next)
                        : dc_add_i64(v, step, &next);
    if (!ok || next > hi)
      break;
    v = next;
  }
  return true;
}

bool dc_bench_list_parse(const dc_bench_dim *dim, const char *text,
                         int64_t **values, size_t *n, dc_buf *err) {
  int64_t *vals = NULL;
  size_t count = 0, cap = 0;
  dc_imap seen = {0};
  bool ok = true;
  const char *s = text;
  for (;;) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    /* Spaces around items are allowed ("32, 64"). */
    while (len && (*s == ' ' || *s == '\t')) {
      s++;
      len--;
    }
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
      len--;
    if (len == 0) {
      dc_buf_printf(err, "--%s: empty item in '%s'", dim->name, text);
      ok = false;
      break;
    }
    if (!parse_item(dim, s, len, &vals, &count, &cap, &seen, err)) {
      ok = false;
      break;
    }
    if (!comma)
      break;
    s = comma + 1;
  }
  dc_imap_free(&seen);
  if (!ok) {
    free(vals);
    return false;
  }
  *values = vals;
  *n = count;
  return true;
}

/* ---- sweeps ------------------------------------------------------------ */

typedef struct grid {
  int n_dims;
  int64_t *vals[DC_BENCH_MAX_DIMS];
  size_t cnt[DC_BENCH_MAX_DIMS];
  int64_t total; /* product of cnt */
} grid;

static void grid_free(grid *g) {
  for (int d = 0; d < g->n_dims; d++)
    free(g->vals[d]);
}

static void grid_decode(const grid *g, int64_t idx, int64_t *v) {
  for (int d = g->n_dims - 1; d >= 0; d--) {
    v[d] = g->vals[d][idx % (int64_t)g->cnt[d]];
    idx /= (int64_t)g->cnt[d];
  }
}

static bool keep(const dc_bench_opts *o, const int64_t *v) {
  int64_t bytes;
  return dc_bench_config_valid(o->kind->kind, v) &&
         dc_bench_footprint(o->kind->kind, v, &bytes) &&
         bytes <= o->max_bytes;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The grid indices of one set's configurations, ascending. */
static bool draw(const dc_bench_opts *o, const grid *g, int64_t samples,
                 uint64_t seed, int64_t **out, size_t *n_out, dc_buf *err) {
  int64_t v[DC_BENCH_MAX_DIMS];
  int64_t *idx = NULL;
  size_t n = 0;
  if (g->total <= DC_BENCH_MAX_GRID) {
    idx = dc_xmalloc((size_t)(g->total ? g->total : 1) * sizeof *idx);
    for (int64_t i = 0; i < g->total; i++) {
      grid_decode(g, i, v);
      if (keep(o, v))
        idx[n++] = i;
    }
    if (samples > 0 && (size_t)samples < n) {
      /* Partial Fisher–Yates: the first `samples` slots are the draw. */
      uint64_t st = seed;
      for (size_t i = 0; i < (size_t)samples; i++) {
        size_t j = i + (size_t)(dc_splitmix64(&st) % (n - i));
        int64_t t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
      }
      n = (size_t)samples;
      qsort(idx, n, sizeof *idx, cmp_i64);
    }
  } else if (samples == 0) {
    dc_buf_printf(err,
                  "the %s sweep has %lld configurations, more than %d: "
                  "draw a sample with --samples N",
                  o->kind->name, (long long)g->total, DC_BENCH_MAX_GRID);
    return false;
  } else {
    /* Rejection on indices: uniform over the kept configurations. */
    dc_imap seen = {0};
    uint64_t st = seed;
    int64_t tries = 0, limit = 1000 * samples + 100000;
    idx = dc_xmalloc((size_t)samples * sizeof *idx);
    while ((int64_t)n < samples && tries++ < limit) {
      int64_t i = (int64_t)(dc_splitmix64(&st) % (uint64_t)g->total);
      grid_decode(g, i, v);
      if (keep(o, v) && set_add(&seen, i))
        idx[n++] = i;
    }
    dc_imap_free(&seen);
    qsort(idx, n, sizeof *idx, cmp_i64);
  }
  *out = idx;
  *n_out = n;
  return true;
}

/* FNV-1a over a configuration's values. */
static uint64_t config_hash(const int64_t *v, int n) {
  uint64_t h = DC_FNV1A_INIT;
  for (int d = 0; d < n; d++)
    h = dc_fnv1a_u64(h, (uint64_t)v[d]);
  return h;
}

static bool config_seen(const dc_bench_sweep *s, size_t **table,
                        size_t *cap, const int64_t *v) {
  /* table holds row index + 1 of kept rows; grown by the caller. */
  int n = s->n_dims;
  size_t j = config_hash(v, n) & (*cap - 1);
  while ((*table)[j]) {
    if (memcmp(dc_bench_sweep_at(s, (*table)[j] - 1), v,
               (size_t)n * sizeof *v) == 0)
      return true;
    j = (j + 1) & (*cap - 1);
  }
  (*table)[j] = s->n + 1;
  return false;
}

bool dc_bench_sweep_build(const dc_bench_opts *o, dc_bench_sweep *out,
                          dc_buf *err) {
  const dc_bench_kind_info *k = o->kind;
  dc_bench_sweep s = {k->n_dims, 0, NULL};
  size_t cap_rows = 0, hcap = 0;
  size_t *table = NULL;
  bool ok = true;
  for (int si = 0; si < k->n_sets && ok; si++) {
    const dc_bench_set *set = &k->sets[si];
    grid g = {k->n_dims, {NULL}, {0}, 1};
    for (int d = 0; d < k->n_dims && ok; d++) {
      const char *text = o->lists[d] ? o->lists[d] : set->lists[d];
      ok = dc_bench_list_parse(&k->dims[d], text, &g.vals[d], &g.cnt[d],
                               err);
      if (ok && !dc_mul_i64(g.total, (int64_t)g.cnt[d], &g.total)) {
        dc_buf_printf(err, "the %s sweep has more than 2^63 configurations",
                      k->name);
        ok = false;
      }
    }
    int64_t *idx = NULL;
    size_t n = 0;
    int64_t samples = o->samples >= 0 ? o->samples : set->samples;
    if (ok)
      ok = draw(o, &g, samples, o->seed + (uint64_t)si, &idx, &n, err);
    for (size_t i = 0; ok && i < n; i++) {
      if (s.n == cap_rows) {
        cap_rows = cap_rows ? 2 * cap_rows : 256;
        s.v = dc_xrealloc(s.v, cap_rows * (size_t)s.n_dims * sizeof *s.v);
      }
      if (2 * (s.n + 1) > hcap) { /* rebuild the duplicate table */
        hcap = hcap ? 2 * hcap : 512;
        free(table);
        table = dc_xcalloc(hcap, sizeof *table);
        size_t kept = s.n;
        s.n = 0;
        for (size_t r = 0; r < kept; r++, s.n++)
          (void)config_seen(&s, &table, &hcap, dc_bench_sweep_at(&s, r));
      }
      int64_t *row = s.v + s.n * (size_t)s.n_dims;
      grid_decode(&g, idx[i], row);
      if (!config_seen(&s, &table, &hcap, row))
        s.n++;
    }
    free(idx);
    grid_free(&g);
  }
  free(table);
  if (ok && s.n == 0) {
    dc_buf_printf(err,
                  "the %s sweep is empty: every configuration is invalid "
                  "or needs more than --max-bytes %lld of device memory",
                  k->name, (long long)o->max_bytes);
    ok = false;
  }
  if (!ok) {
    free(s.v);
    return false;
  }
  *out = s;
  return true;
}

void dc_bench_sweep_free(dc_bench_sweep *s) {
  free(s->v);
  s->v = NULL;
  s->n = 0;
}
