/*
 * report_read.c — reads the tables `dlrmc run` writes back into the
 * report model (report.h): CSV through kernels/csv.c's reader (the one
 * CSV reader of the tree: quoted fields, 1-based cell positions), JSON
 * lines through yajl's tree parser, one line at a time, so a line's
 * errors point at that line.
 *
 * What makes a table one dlrmc wrote: every column is a metric
 * (dc_metric_parse) or a swept parameter, which is always a dotted path
 * into the study (training.batch_size, system.gpu). Anything else is
 * reported at the header with the column's name — the per-rank,
 * per-shard and capacity tables get their own hint, since they are
 * dlrmc's but not a point table. Metric cells must be finite numbers (or
 * true/false for `fits`, empty for a speedup without baseline); a
 * parameter cell is kept as text and read as a number when it is one (a
 * numeric axis). JSON lines rows may end with the "detail" object
 * runtime/sweep_exec.c writes; its unknown keys are ignored, so a newer
 * dlrmc's rows still read.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "kernels/kernels.h"
#include "runtime/report/report.h"
#include "runtime/runtime.h"

enum { MAX_ERRORS = 20 };

static const char *const fig_names[] = {
#define DC_REPORT_FIG_STR(sym, name) name,
    DC_REPORT_FIGS(DC_REPORT_FIG_STR)
#undef DC_REPORT_FIG_STR
};

const char *dc_report_fig_name(dc_report_fig f) {
  DC_ASSERT((unsigned)f < DC_REPORT_FIG_COUNT_);
  return fig_names[f];
}

static int fig_of(const char *name) {
  for (int i = 0; i < DC_REPORT_FIG_COUNT_; i++)
    if (strcmp(fig_names[i], name) == 0) return i;
  return -1;
}

/* The numbers a results table may hold: every dlrmc figure is from 0
 * to REPORT_MAX (times in ms, bytes, rates, ratios); a swept parameter
 * within ±REPORT_MAX is a number (else its text is a category). Charts
 * pad, scale and subtract these, and the bound keeps every such result
 * finite (no "nan" tick on a page). */
#define REPORT_MAX 1e30

/* A finite number within ±REPORT_MAX in the C locale ("12", "3.5e-3"). */
static bool parse_finite(const char *s, double *out) {
  if (!*s) return false;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (*end || end == s || !(fabs(v) <= REPORT_MAX)) return false;
  *out = v;
  return true;
}

/* Columns of dlrmc's other tables (--per-rank, --per-shard, capacity). */
static bool row_mode_column(const char *name) {
  static const char *const names[] = {"rank",  "table", "shard",
                                      "gpu",   "gpus",  "hosts",
                                      "mem_gib", "hbm_gib", "meets_target",
                                      "sharding", "rows", "cols"};
  for (size_t i = 0; i < DC_COUNTOF(names); i++)
    if (strcmp(names[i], name) == 0) return true;
  return false;
}

/* Sorts the columns into parameters and metrics; false (with errors at
 * `spans`) for a column dlrmc's point table never has. */
static bool classify(dc_report *r, const dc_span *spans, dc_diags *d) {
  bool ok = true;
  for (int32_t i = 0; i < r->n_cols; i++) {
    const char *name = r->cols[i];
    dc_metric_id m;
    if (dc_metric_parse(name, &m)) {
      r->is_param[i] = false;
    } else if (strchr(name, '.') && name[0] != '.') {
      r->is_param[i] = true;
    } else {
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_BAD_RESULTS, spans[i],
          "%s: column '%s' is neither a dlrmc metric nor a swept parameter",
          r->source, name);
      if (row_mode_column(name))
        dc_diag_set_help(g, "per-rank, per-shard and capacity tables are "
                            "not charted: report the point table (dlrmc "
                            "run without --per-rank/--per-shard)");
      else
        dc_diag_set_help(g, "dlrmc report reads the CSV or JSON lines that "
                            "`dlrmc run` wrote (swept parameters are dotted "
                            "paths such as training.batch_size)");
      ok = false;
    }
  }
  return ok;
}

/* One cell: its number (metric cells must have one). */
static bool cell_value(const dc_report *r, int32_t c, const char *text,
                       double *out, dc_span sp, dc_diags *d) {
  *out = NAN;
  if (r->is_param[c]) {
    double v;
    if (parse_finite(text, &v)) *out = v;
    return true;
  }
  if (strcmp(r->cols[c], "fits") == 0 &&
      (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)) {
    *out = text[0] == 't' ? 1.0 : 0.0;
    return true;
  }
  if (!*text && strcmp(r->cols[c], "speedup") == 0) return true;
  if (parse_finite(text, out) && *out >= 0) return true;
  *out = NAN;
  dc_diag_error(d, DC_DIAG_BAD_RESULTS, sp,
                "%s: '%s' in column '%s' is not a number from 0 to 1e30",
                r->source, text, r->cols[c]);
  return false;
}

static void row_init(dc_report_row *row, int32_t n_cols, int32_t line,
                     dc_arena *a) {
  row->cells = dc_arena_array(a, (size_t)n_cols + 1, sizeof *row->cells);
  row->num = dc_arena_array(a, (size_t)n_cols + 1, sizeof *row->num);
  for (int i = 0; i < DC_REPORT_FIG_COUNT_; i++) row->fig[i] = NAN;
  row->line = line;
  row->critical_rank = -1;
}

/* The figures the table's own columns give. */
static void row_figs_from_cells(const dc_report *r, dc_report_row *row) {
  for (int32_t c = 0; c < r->n_cols; c++) {
    if (r->is_param[c]) continue;
    int f = fig_of(r->cols[c]);
    if (f >= 0 && isfinite(row->num[c])) row->fig[f] = row->num[c];
  }
}

/* ---- CSV ------------------------------------------------------------------ */

static int32_t header_line(const dc_source *src) {
  for (size_t ln = 1; ln <= src->n_lines; ln++) {
    size_t len;
    const char *s = dc_source_line(src, (int32_t)ln, &len);
    size_t k = 0;
    while (k < len && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r')) k++;
    if (k < len && s[k] != '#') return (int32_t)ln;
  }
  return 1;
}

static bool parse_csv(const dc_source *src, dc_report *r, dc_arena *a,
                      dc_diags *d) {
  dc_csv csv;
  if (!dc_csv_parse(src, &csv, a, d)) return false;
  r->n_cols = csv.n_cols;
  r->cols = (const char **)csv.cols;
  r->is_param = dc_arena_array(a, (size_t)csv.n_cols + 1, sizeof(bool));
  dc_span *spans = dc_arena_array(a, (size_t)csv.n_cols + 1, sizeof *spans);
  int32_t hl = header_line(src);
  size_t hlen;
  const char *htext = dc_source_line(src, hl, &hlen);
  for (int32_t i = 0; i < csv.n_cols; i++) {
    const char *at = strstr(htext, csv.cols[i]);
    int32_t col = at && (size_t)(at - htext) < hlen
                      ? (int32_t)(at - htext) + 1
                      : 1;
    spans[i] = (dc_span){src, hl, col, (int32_t)strlen(csv.cols[i])};
  }
  if (!classify(r, spans, d)) return false;
  r->n_rows = csv.n_rows;
  r->rows = dc_arena_array(a, (size_t)csv.n_rows + 1, sizeof *r->rows);
  bool ok = true;
  for (int32_t i = 0; i < csv.n_rows && d->errors < MAX_ERRORS; i++) {
    dc_report_row *row = &r->rows[i];
    row_init(row, csv.n_cols, csv.row_line[i], a);
    for (int32_t c = 0; c < csv.n_cols; c++) {
      row->cells[c] = csv.cells[i][c];
      if (!cell_value(r, c, csv.cells[i][c], &row->num[c],
                      dc_csv_span(&csv, i, c), d))
        ok = false;
    }
    row_figs_from_cells(r, row);
  }
  return ok && d->errors == 0;
}

/* ---- JSON lines --------------------------------------------------------- */

static dc_span line_span(const dc_source *src, int32_t ln) {
  size_t len;
  dc_source_line(src, ln, &len);
  return (dc_span){src, ln, 1, (int32_t)(len > 80 ? 80 : len)};
}

/* A JSON number from 0 to REPORT_MAX (every detail is a figure). */
static bool json_number(yajl_val v, double *out) {
  if (!YAJL_IS_NUMBER(v) || !(v->u.number.flags & YAJL_NUMBER_DOUBLE_VALID))
    return false;
  if (!(v->u.number.d >= 0 && v->u.number.d <= REPORT_MAX)) return false;
  *out = v->u.number.d;
  return true;
}

static bool detail_error(const dc_report *r, dc_span sp, const char *key,
                         dc_diags *d) {
  dc_diag_error(d, DC_DIAG_BAD_RESULTS, sp,
                "%s: detail '%s' is not a number from 0 to 1e30 (or a "
                "boolean for fits)",
                r->source, key);
  return false;
}

static bool read_ranks(const dc_report *r, yajl_val arr, dc_report_row *row,
                       dc_span sp, dc_arena *a, dc_diags *d) {
  if (!YAJL_IS_ARRAY(arr)) return detail_error(r, sp, "ranks", d);
  size_t n = arr->u.array.len;
  row->ranks = dc_arena_array(a, n + 1, sizeof *row->ranks);
  row->n_ranks = (int32_t)n;
  static const char *const keys[] = {"e2e_ms", "emb_ms", "comm_ms",
                                     "mem_gib"};
  for (size_t i = 0; i < n; i++) {
    yajl_val o = arr->u.array.values[i];
    dc_report_rank *k = &row->ranks[i];
    if (!YAJL_IS_OBJECT(o)) return detail_error(r, sp, "ranks", d);
    double *dst[] = {&k->e2e_ms, &k->emb_ms, &k->comm_ms, &k->mem_gib};
    k->fits = true;
    for (size_t j = 0; j < DC_COUNTOF(keys); j++) {
      const char *path[] = {keys[j], NULL};
      yajl_val v = yajl_tree_get(o, path, yajl_t_any);
      if (!v || !json_number(v, dst[j])) return detail_error(r, sp, keys[j], d);
    }
    const char *fp[] = {"fits", NULL};
    yajl_val f = yajl_tree_get(o, fp, yajl_t_any);
    if (f && !YAJL_IS_TRUE(f) && !YAJL_IS_FALSE(f))
      return detail_error(r, sp, "fits", d);
    k->fits = !f || YAJL_IS_TRUE(f);
  }
  return true;
}

static bool read_detail(const dc_report *r, yajl_val o, dc_report_row *row,
                        dc_span sp, dc_arena *a, dc_diags *d) {
  if (!YAJL_IS_OBJECT(o)) return detail_error(r, sp, "detail", d);
  for (size_t i = 0; i < o->u.object.len; i++) {
    const char *key = o->u.object.keys[i];
    yajl_val v = o->u.object.values[i];
    if (strcmp(key, "ranks") == 0) {
      if (!read_ranks(r, v, row, sp, a, d)) return false;
      continue;
    }
    if (strcmp(key, "critical_rank") == 0) {
      double x;
      if (!json_number(v, &x) || x < 0 || x > 1e9 || x != floor(x))
        return detail_error(r, sp, key, d);
      row->critical_rank = dc_f64_sat_i32(x);
      continue;
    }
    int f = fig_of(key);
    if (f < 0) continue; /* a newer dlrmc's figure */
    double x;
    if (f == DC_REPORT_FIG_FITS && (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)))
      x = YAJL_IS_TRUE(v) ? 1.0 : 0.0;
    else if (!json_number(v, &x))
      return detail_error(r, sp, key, d);
    if (!isfinite(row->fig[f])) row->fig[f] = x;
  }
  if (row->critical_rank >= row->n_ranks && row->n_ranks > 0) {
    dc_diag_error(d, DC_DIAG_BAD_RESULTS, sp,
                  "%s: critical_rank %d but %d ranks", r->source,
                  (int)row->critical_rank, (int)row->n_ranks);
    return false;
  }
  return true;
}

/* A row's scalar as the table's text. */
static bool json_cell(yajl_val v, dc_arena *a, const char **out) {
  if (YAJL_IS_NUMBER(v)) *out = dc_arena_strdup(a, v->u.number.r);
  else if (YAJL_IS_STRING(v)) *out = dc_arena_strdup(a, v->u.string);
  else if (YAJL_IS_TRUE(v)) *out = "true";
  else if (YAJL_IS_FALSE(v)) *out = "false";
  else if (YAJL_IS_NULL(v)) *out = "";
  else return false;
  return true;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A key an object holds twice (JSON leaves its meaning open: refused,
 * not resolved to the first or the last), or NULL. Sorted: n log n. */
static const char *dup_key(yajl_val o) {
  size_t n = o->u.object.len;
  if (n < 2) return NULL;
  const char **k = dc_xmalloc(n * sizeof *k);
  memcpy(k, o->u.object.keys, n * sizeof *k);
  qsort(k, n, sizeof *k, cmp_str);
  const char *dup = NULL;
  for (size_t i = 1; i < n && !dup; i++)
    if (strcmp(k[i - 1], k[i]) == 0) dup = k[i];
  free(k);
  return dup;
}

static bool parse_jsonl_row(const dc_source *src, int32_t ln, yajl_val o,
                            dc_report *r, int64_t *cap, dc_arena *a,
                            dc_diags *d) {
  dc_span sp = line_span(src, ln);
  if (!YAJL_IS_OBJECT(o)) {
    dc_diag_error(d, DC_DIAG_BAD_RESULTS, sp,
                  "%s: a JSON lines row is an object", r->source);
    return false;
  }
  const char *dup = dup_key(o);
  if (!dup) {
    size_t nk = o->u.object.len;
    if (nk > 0 && strcmp(o->u.object.keys[nk - 1], "detail") == 0 &&
        YAJL_IS_OBJECT(o->u.object.values[nk - 1]))
      dup = dup_key(o->u.object.values[nk - 1]);
  }
  if (dup) {
    dc_diag_error(d, DC_DIAG_BAD_RESULTS, sp,
                  "%s: key '%s' appears twice in a row", r->source, dup);
    return false;
  }
  size_t n = o->u.object.len;
  bool has_detail = n > 0 && strcmp(o->u.object.keys[n - 1], "detail") == 0;
  int32_t n_cols = (int32_t)(has_detail ? n - 1 : n);
  if (!r->cols) { /* the first row names the columns */
    r->n_cols = n_cols;
    r->cols = dc_arena_array(a, (size_t)n_cols + 1, sizeof *r->cols);
    r->is_param = dc_arena_array(a, (size_t)n_cols + 1, sizeof(bool));
    dc_span *spans = dc_arena_array(a, (size_t)n_cols + 1, sizeof *spans);
    for (int32_t i = 0; i < n_cols; i++) {
      r->cols[i] = dc_arena_strdup(a, o->u.object.keys[i]);
      spans[i] = sp;
    }
    r->has_detail = has_detail;
    if (!classify(r, spans, d)) return false;
  }
  if (n_cols != r->n_cols) {
    dc_diag_error(d, DC_DIAG_BAD_RESULTS, sp,
                  "%s: row has %d columns, the first row has %d", r->source,
                  (int)n_cols, (int)r->n_cols);
    return false;
  }
  if (r->n_rows == *cap) {
    int64_t nc = *cap ? 2 * *cap : 256;
    dc_report_row *rows = dc_arena_array(a, (size_t)nc, sizeof *rows);
    if (r->n_rows) memcpy(rows, r->rows, (size_t)r->n_rows * sizeof *rows);
    r->rows = rows;
    *cap = nc;
  }
  dc_report_row *row = &r->rows[r->n_rows];
  row_init(row, n_cols, ln, a);
  bool ok = true;
  for (int32_t c = 0; c < n_cols; c++) {
    const char *key = o->u.object.keys[c];
    if (strcmp(key, r->cols[c]) != 0) {
      dc_diag_error(d, DC_DIAG_BAD_RESULTS, sp,
                    "%s: column %d is '%s', the first row's is '%s'",
                    r->source, (int)c + 1, key, r->cols[c]);
      return false;
    }
    if (!json_cell(o->u.object.values[c], a, &row->cells[c])) {
      dc_diag_error(d, DC_DIAG_BAD_RESULTS, sp,
                    "%s: '%s' is not a number, string, boolean or null",
                    r->source, key);
      return false;
    }
    if (!cell_value(r, c, row->cells[c], &row->num[c], sp, d)) ok = false;
  }
  row_figs_from_cells(r, row);
  if (has_detail &&
      !read_detail(r, o->u.object.values[n - 1], row, sp, a, d))
    ok = false;
  r->n_rows++;
  return ok;
}

static bool parse_jsonl(const dc_source *src, dc_report *r, dc_arena *a,
                        dc_diags *d) {
  dc_buf line = {0};
  int64_t cap = 0;
  bool ok = true;
  for (size_t ln = 1; ln <= src->n_lines && d->errors < MAX_ERRORS; ln++) {
    size_t len;
    const char *s = dc_source_line(src, (int32_t)ln, &len);
    size_t k = 0;
    while (k < len && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r')) k++;
    if (k == len) continue;
    dc_buf_clear(&line);
    dc_buf_append(&line, s, len);
    char err[256];
    err[0] = '\0';
    yajl_val o = yajl_tree_parse(line.data, err, sizeof err);
    if (!o) {
      for (char *p = err; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
      dc_diag_error(d, DC_DIAG_BAD_RESULTS, line_span(src, (int32_t)ln),
                    "%s: not a JSON object: %s", r->source, err);
      ok = false;
      continue;
    }
    if (!parse_jsonl_row(src, (int32_t)ln, o, r, &cap, a, d)) ok = false;
    yajl_tree_free(o);
    if (!r->cols) break; /* the first row's columns were refused */
  }
  dc_buf_free(&line);
  return ok && d->errors == 0;
}

/* ---- entry points ------------------------------------------------------- */

bool dc_report_parse(const dc_source *src, dc_report *out, dc_arena *a,
                     dc_diags *d) {
  memset(out, 0, sizeof *out);
  out->source = src->path;
  size_t k = 0;
  while (k < src->len && (src->text[k] == ' ' || src->text[k] == '\t' ||
                          src->text[k] == '\r' || src->text[k] == '\n'))
    k++;
  bool ok = k < src->len && src->text[k] == '{' ? parse_jsonl(src, out, a, d)
                                                : parse_csv(src, out, a, d);
  if (ok && out->n_rows == 0) {
    dc_diag_error(d, DC_DIAG_BAD_RESULTS, (dc_span){src, 1, 1, 0},
                  "%s: no rows to report", src->path);
    ok = false;
  }
  return ok;
}

const dc_source *dc_report_source_load(const char *path, dc_arena *a,
                                       dc_diags *d) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    dc_diag_error(d, DC_DIAG_IO, (dc_span){0}, "cannot read '%s': %s", path,
                  strerror(errno));
    return NULL;
  }
  dc_buf b = {0};
  char chunk[1 << 16];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    dc_buf_append(&b, chunk, n);
  bool err = ferror(f);
  fclose(f);
  const dc_source *src = NULL;
  if (err)
    dc_diag_error(d, DC_DIAG_IO, (dc_span){0}, "cannot read '%s'", path);
  else if (b.len && memchr(b.data, '\0', b.len))
    dc_diag_error(d, DC_DIAG_BAD_RESULTS, (dc_span){0},
                  "%s: a NUL byte: not a CSV or JSON lines table", path);
  else
    src = dc_source_from_memory(path, b.data ? b.data : "", b.len, a);
  dc_buf_free(&b);
  return src;
}

bool dc_report_check_metric(const dc_report *r, const char *metric,
                            dc_diags *d) {
  dc_metric_id m;
  if (!dc_metric_parse(metric, &m)) {
    dc_diag_error(d, DC_DIAG_BAD_RESULTS, (dc_span){0},
                  "'%s' is not a dlrmc metric", metric);
    return false;
  }
  int32_t c = 0;
  while (c < r->n_cols && strcmp(r->cols[c], metric) != 0) c++;
  if (c < r->n_cols) return true;
  int f = fig_of(metric);
  for (int64_t i = 0; f >= 0 && i < r->n_rows; i++)
    if (!isfinite(r->rows[i].fig[f])) {
      f = -1;
      break;
    }
  if (f >= 0) return true;
  dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_RESULTS, (dc_span){0},
                             "%s: no column '%s' to chart", r->source,
                             metric);
  dc_diag_set_help(g, "name it in the study's output.columns, write JSON "
                      "lines (whose rows carry it), or chart another "
                      "column with --metric");
  return false;
}
