/*
 * csv.c — the one CSV reader (support.h): the benchmark tables `dlrmc fit`
 * and `dlrmc kernel --csv` read and the results tables `dlrmc report`
 * reads. '#' comment lines, one header row, then rows with as many fields as the
 * header. Fields are trimmed; a field may be double-quoted ("" inside is a
 * quote). Every cell keeps its 1-based line and column so that a bad value
 * is reported as file:line:col with a caret; a row with the wrong number of
 * fields is reported and skipped, and reading goes on to report them all.
 */
#include <string.h>

#include "compiler/support/support.h"

#define CSV_MAX_COLS 256

static char *trim(dc_arena *a, const char *s, size_t n) {
  while (n && (*s == ' ' || *s == '\t')) s++, n--;
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) n--;
  return dc_arena_strndup(a, s, n);
}

/* Splits one line into fields; returns the count (or -1 on a bad quote). */
static int32_t split_line(const char *line, size_t len, char **out,
                          int32_t *cols, dc_arena *a) {
  int32_t n = 0;
  size_t i = 0;
  for (;;) {
    if (n >= CSV_MAX_COLS) return -2;
    size_t start = i;
    while (start < len && (line[start] == ' ' || line[start] == '\t')) start++;
    cols[n] = (int32_t)start + 1;
    if (start < len && line[start] == '"') {
      dc_buf b = {0};
      size_t j = start + 1;
      for (;;) {
        if (j >= len) {
          dc_buf_free(&b);
          return -1;
        }
        if (line[j] == '"') {
          if (j + 1 < len && line[j + 1] == '"') {
            dc_buf_putc(&b, '"');
            j += 2;
            continue;
          }
          j++;
          break;
        }
        dc_buf_putc(&b, line[j++]);
      }
      out[n++] = dc_arena_strdup(a, b.data ? b.data : "");
      dc_buf_free(&b);
      while (j < len && line[j] != ',') j++;
      i = j;
    } else {
      size_t j = start;
      while (j < len && line[j] != ',') j++;
      out[n++] = trim(a, line + start, j - start);
      i = j;
    }
    if (i >= len) break;
    i++; /* the comma */
  }
  return n;
}

bool dc_csv_parse(const dc_source *src, dc_csv *c, dc_arena *a,
                  dc_diags *d) {
  memset(c, 0, sizeof *c);
  c->src = src;
  size_t cap = 64;
  c->cells = dc_arena_array(a, cap, sizeof *c->cells);
  c->row_line = dc_arena_array(a, cap, sizeof *c->row_line);
  c->cell_col = dc_arena_array(a, cap, sizeof *c->cell_col);
  char *fields[CSV_MAX_COLS];
  int32_t cols[CSV_MAX_COLS];
  bool ok = true;
  for (size_t ln = 1; ln <= src->n_lines; ln++) {
    size_t len;
    const char *line = dc_source_line(src, (int32_t)ln, &len);
    size_t k = 0;
    while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
      k++;
    if (k == len || line[k] == '#') continue;
    int32_t n = split_line(line, len, fields, cols, a);
    dc_span sp = {src, (int32_t)ln, 1, (int32_t)len};
    if (n < 0) {
      dc_diag_error(d, DC_DIAG_BAD_CSV, sp,
                    n == -1 ? "unterminated quoted field"
                            : "more than 256 columns");
      ok = false;
      continue;
    }
    if (!c->cols) {
      c->n_cols = n;
      c->cols = dc_arena_array(a, (size_t)n, sizeof *c->cols);
      for (int32_t i = 0; i < n; i++) {
        c->cols[i] = fields[i];
        for (int32_t j = 0; j < i; j++)
          if (strcmp(c->cols[j], fields[i]) == 0) {
            dc_diag_error(d, DC_DIAG_BAD_CSV,
                          (dc_span){src, (int32_t)ln, cols[i],
                                    (int32_t)strlen(fields[i])},
                          "duplicate column '%s'", fields[i]);
            ok = false;
          }
      }
      continue;
    }
    if (n != c->n_cols) {
      dc_diag_error(d, DC_DIAG_BAD_CSV, sp,
                    "row has %d fields, the header has %d", (int)n,
                    (int)c->n_cols);
      ok = false;
      continue;
    }
    if ((size_t)c->n_rows == cap) {
      size_t nc = cap * 2;
      char ***cells = dc_arena_array(a, nc, sizeof *cells);
      int32_t *rl = dc_arena_array(a, nc, sizeof *rl);
      int32_t **cc = dc_arena_array(a, nc, sizeof *cc);
      memcpy(cells, c->cells, cap * sizeof *cells);
      memcpy(rl, c->row_line, cap * sizeof *rl);
      memcpy(cc, c->cell_col, cap * sizeof *cc);
      c->cells = cells, c->row_line = rl, c->cell_col = cc, cap = nc;
    }
    char **row = dc_arena_array(a, (size_t)n, sizeof *row);
    int32_t *rc = dc_arena_array(a, (size_t)n, sizeof *rc);
    memcpy(row, fields, (size_t)n * sizeof *row);
    memcpy(rc, cols, (size_t)n * sizeof *rc);
    c->cells[c->n_rows] = row;
    c->cell_col[c->n_rows] = rc;
    c->row_line[c->n_rows] = (int32_t)ln;
    c->n_rows++;
  }
  if (!c->cols) {
    dc_diag_error(d, DC_DIAG_BAD_CSV, (dc_span){src, 1, 1, 0},
                  "no header row (only comments or empty)");
    return false;
  }
  return ok;
}

bool dc_csv_read(const char *path, dc_csv *out, dc_arena *a, dc_diags *d) {
  const dc_source *src = dc_source_load(path, a, d);
  if (!src) return false;
  return dc_csv_parse(src, out, a, d);
}

int32_t dc_csv_col(const dc_csv *c, const char *name) {
  for (int32_t i = 0; i < c->n_cols; i++)
    if (strcmp(c->cols[i], name) == 0) return i;
  return -1;
}

dc_span dc_csv_span(const dc_csv *c, int32_t row, int32_t col) {
  return (dc_span){c->src, c->row_line[row], c->cell_col[row][col],
                   (int32_t)strlen(c->cells[row][col])};
}
