/*
 * emit.c — the table emitters: CSV (RFC 4180: fields with a comma, quote,
 * CR or LF are quoted, quotes doubled, records end in CRLF), Markdown (a
 * pipe table, numbers right-aligned) and JSON lines (one object per point,
 * numbers as numbers, `fits` a boolean, a missing speedup null).
 *
 * Rows are formatted one at a time into a caller's buffer so that the sweep
 * executor can format points in parallel and emit them in index order
 * without ever holding the whole table (a million-point sweep stays in
 * constant memory). Columns are resolved once per run (emit_columns).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/emit.h"

bool dc_emit_columns(const dc_sweep_source *src, bool has_baseline,
                     dc_emit_col **cols, size_t *n, dc_diags *d) {
  size_t cap = src->n_columns ? src->n_columns
                              : src->n_params + DC_METRIC_COUNT_;
  dc_emit_col *c = dc_xcalloc(cap + 1, sizeof *c);
  size_t k = 0;
  bool ok = true;
  if (!src->n_columns) {
    for (size_t i = 0; i < src->n_params; i++)
      c[k++] = (dc_emit_col){src->param_paths[i], true, (int)i, 0};
    for (int m = 0; m < DC_METRIC_COUNT_; m++) {
      if (m == DC_METRIC_SPEEDUP && !has_baseline) continue;
      c[k++] = (dc_emit_col){dc_metric_name((dc_metric_id)m), false, -1,
                             (dc_metric_id)m};
    }
  } else {
    for (size_t i = 0; i < src->n_columns; i++) {
      const char *name = src->columns[i];
      size_t p = 0;
      while (p < src->n_params && strcmp(src->param_paths[p], name) != 0) p++;
      dc_metric_id m;
      if (p < src->n_params) {
        c[k++] = (dc_emit_col){name, true, (int)p, 0};
      } else if (dc_metric_parse(name, &m)) {
        c[k++] = (dc_emit_col){name, false, -1, m};
      } else {
        /* The front end validates output.columns; this guards the
         * contract between the two. */
        dc_diag_error(d, DC_DIAG_BAD_COLUMN, (dc_span){0},
                      "unknown output column '%s'", name);
        ok = false;
      }
    }
  }
  *cols = c;
  *n = k;
  return ok;
}

static void csv_field(dc_buf *b, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    dc_buf_puts(b, s);
    return;
  }
  dc_buf_putc(b, '"');
  for (; *s; s++) {
    if (*s == '"') dc_buf_putc(b, '"');
    dc_buf_putc(b, *s);
  }
  dc_buf_putc(b, '"');
}

static void md_field(dc_buf *b, const char *s) {
  for (; *s; s++) {
    if (*s == '|') dc_buf_putc(b, '\\');
    if (*s == '\n' || *s == '\r') {
      dc_buf_putc(b, ' ');
      continue;
    }
    dc_buf_putc(b, *s);
  }
}

static void json_string(dc_buf *b, const char *s) {
  dc_buf_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': dc_buf_puts(b, "\\\""); break;
    case '\\': dc_buf_puts(b, "\\\\"); break;
    case '\n': dc_buf_puts(b, "\\n"); break;
    case '\r': dc_buf_puts(b, "\\r"); break;
    case '\t': dc_buf_puts(b, "\\t"); break;
    default:
      if (*p < 0x20)
        dc_buf_printf(b, "\\u%04x", *p);
      else
        dc_buf_putc(b, (char)*p);
    }
  }
  dc_buf_putc(b, '"');
}

/* A JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool is_json_number(const char *s) {
  const char *p = s;
  if (*p == '-') p++;
  if (*p == '0')
    p++;
  else if (*p >= '1' && *p <= '9')
    while (*p >= '0' && *p <= '9') p++;
  else
    return false;
  if (*p == '.') {
    p++;
    if (!(*p >= '0' && *p <= '9')) return false;
    while (*p >= '0' && *p <= '9') p++;
  }
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-') p++;
    if (!(*p >= '0' && *p <= '9')) return false;
    while (*p >= '0' && *p <= '9') p++;
  }
  return *p == '\0';
}

static bool right_aligned(const dc_emit_col *c) {
  return !c->is_param && c->metric != DC_METRIC_FITS;
}

void dc_emit_header(dc_format f, const dc_emit_col *cols, size_t n,
                    dc_buf *b) {
  switch (f) {
  case DC_FORMAT_CSV:
    for (size_t i = 0; i < n; i++) {
      if (i) dc_buf_putc(b, ',');
      csv_field(b, cols[i].name);
    }
    dc_buf_puts(b, "\r\n");
    break;
  case DC_FORMAT_MD:
    dc_buf_putc(b, '|');
    for (size_t i = 0; i < n; i++) {
      dc_buf_putc(b, ' ');
      md_field(b, cols[i].name);
      dc_buf_puts(b, " |");
    }
    dc_buf_puts(b, "\n|");
    for (size_t i = 0; i < n; i++)
      dc_buf_puts(b, right_aligned(&cols[i]) ? "---:|" : "---|");
    dc_buf_putc(b, '\n');
    break;
  case DC_FORMAT_JSONL:
    break; /* self-describing */
  }
}

static const char *param_value(const dc_point *p, int idx) {
  if (p && idx < p->n_params && p->params[idx].value)
    return p->params[idx].value;
  return "";
}

void dc_emit_row(dc_format f, const dc_emit_col *cols, size_t n,
                 const dc_point *p, const dc_metrics *m, dc_buf *b,
                 dc_buf *scratch) {
  if (f == DC_FORMAT_MD) dc_buf_putc(b, '|');
  if (f == DC_FORMAT_JSONL) dc_buf_putc(b, '{');
  for (size_t i = 0; i < n; i++) {
    const dc_emit_col *c = &cols[i];
    const char *text;
    if (c->is_param) {
      text = param_value(p, c->param);
    } else {
      dc_buf_clear(scratch);
      dc_buf_puts(scratch, "");
      dc_metric_format(c->metric, m, scratch);
      text = scratch->data ? scratch->data : "";
    }
    switch (f) {
    case DC_FORMAT_CSV:
      if (i) dc_buf_putc(b, ',');
      csv_field(b, text);
      break;
    case DC_FORMAT_MD:
      dc_buf_putc(b, ' ');
      md_field(b, text);
      dc_buf_puts(b, " |");
      break;
    case DC_FORMAT_JSONL:
      if (i) dc_buf_putc(b, ',');
      json_string(b, c->name);
      dc_buf_putc(b, ':');
      if (!c->is_param && c->metric == DC_METRIC_FITS)
        dc_buf_puts(b, text);
      else if (!c->is_param && c->metric == DC_METRIC_SPEEDUP &&
               !m->has_speedup)
        dc_buf_puts(b, "null");
      else if (is_json_number(text))
        dc_buf_puts(b, text);
      else
        json_string(b, text);
      break;
    }
  }
  switch (f) {
  case DC_FORMAT_CSV: dc_buf_puts(b, "\r\n"); break;
  case DC_FORMAT_MD: dc_buf_putc(b, '\n'); break;
  case DC_FORMAT_JSONL: dc_buf_puts(b, "}\n"); break;
  }
}
