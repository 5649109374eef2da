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

#include "runtime/emit_int.h"

bool rt_emit_columns(const dc_sweep_source *src, bool has_baseline,
                     rt_emit_col **cols, size_t *n, dc_diags *d) {
  size_t cap = src->n_columns ? src->n_columns
                              : src->n_params + DC_METRIC_COUNT_;
  rt_emit_col *c = dc_xcalloc(cap + 1, sizeof *c);
  size_t k = 0;
  bool ok = true;
  if (!src->n_columns) {
    for (size_t i = 0; i < src->n_params; i++)
      c[k++] = (rt_emit_col){src->param_paths[i], true, (int)i, 0};
    for (int m = 0; m < DC_METRIC_COUNT_; m++) {
      if (m == DC_METRIC_SPEEDUP && !has_baseline) continue;
      if (m >= DC_METRIC_FIRST_DETAIL) continue;
      /* the sharding columns join the default set only when the study asks
       * for TorchRec's estimate (every other table keeps its columns) */
      if (m >= DC_METRIC_FIRST_EXTRA && !src->torchrec) continue;
      c[k++] = (rt_emit_col){dc_metric_name((dc_metric_id)m), false, -1,
                             (dc_metric_id)m};
    }
  } else {
    for (size_t i = 0; i < src->n_columns; i++) {
      const char *name = src->columns[i];
      size_t p = 0;
      while (p < src->n_params && strcmp(src->param_paths[p], name) != 0) p++;
      dc_metric_id m;
      if (p < src->n_params) {
        c[k++] = (rt_emit_col){name, true, (int)p, 0};
      } else if (dc_metric_parse(name, &m)) {
        c[k++] = (rt_emit_col){name, false, -1, m};
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

static bool right_aligned(const rt_emit_col *c) {
  return !c->is_param && c->metric != DC_METRIC_FITS;
}

/* The header line of a table in any format: names, and for Markdown the
 * alignment row (numbers right-aligned). Shared by the point rows and the
 * per-rank / per-shard cell rows. */
typedef struct header_col {
  const char *name;
  bool right;
} header_col;

static void emit_header(dc_format f, const header_col *cols, size_t n,
                        dc_buf *b) {
  switch (f) {
  case DC_FORMAT_CSV:
    for (size_t i = 0; i < n; i++) {
      if (i) dc_buf_putc(b, ',');
      dc_buf_put_csv_field(b, cols[i].name);
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
      dc_buf_puts(b, cols[i].right ? "---:|" : "---|");
    dc_buf_putc(b, '\n');
    break;
  case DC_FORMAT_JSONL:
    break; /* self-describing */
  }
}

void rt_emit_header(dc_format f, const rt_emit_col *cols, size_t n,
                    dc_buf *b) {
  header_col *h = dc_xcalloc(n ? n : 1, sizeof *h);
  for (size_t i = 0; i < n; i++)
    h[i] = (header_col){cols[i].name, right_aligned(&cols[i])};
  emit_header(f, h, n, b);
  free(h);
}

static const char *param_value(const dc_point *p, int idx) {
  if (p && idx < p->n_params && p->params[idx].value)
    return p->params[idx].value;
  return "";
}

/* A row is written field by field in every format: open_row, one
 * emit_field per column, close_row. In JSON lines a field is written raw
 * (JSON_RAW: booleans), as null, as a number when it reads as one, or as
 * a string. */
typedef enum json_as { JSON_AUTO, JSON_RAW, JSON_NULL } json_as;

static void open_row(dc_format f, dc_buf *b) {
  if (f == DC_FORMAT_MD) dc_buf_putc(b, '|');
  if (f == DC_FORMAT_JSONL) dc_buf_putc(b, '{');
}

static void emit_field(dc_format f, size_t i, const char *name,
                       const char *text, json_as as, dc_buf *b) {
  switch (f) {
  case DC_FORMAT_CSV:
    if (i) dc_buf_putc(b, ',');
    dc_buf_put_csv_field(b, text);
    break;
  case DC_FORMAT_MD:
    dc_buf_putc(b, ' ');
    md_field(b, text);
    dc_buf_puts(b, " |");
    break;
  case DC_FORMAT_JSONL:
    if (i) dc_buf_putc(b, ',');
    dc_buf_put_json_string(b, name);
    dc_buf_putc(b, ':');
    if (as == JSON_RAW)
      dc_buf_puts(b, text);
    else if (as == JSON_NULL)
      dc_buf_puts(b, "null");
    else if (is_json_number(text))
      dc_buf_puts(b, text);
    else
      dc_buf_put_json_string(b, text);
    break;
  }
}

static void close_row(dc_format f, dc_buf *b) {
  switch (f) {
  case DC_FORMAT_CSV: dc_buf_puts(b, "\r\n"); break;
  case DC_FORMAT_MD: dc_buf_putc(b, '\n'); break;
  case DC_FORMAT_JSONL: dc_buf_puts(b, "}\n"); break;
  }
}

/* A metric in its fixed output precision (runtime.h): here with the other
 * number printing, so that metrics.c computes and emit.c writes. */
void dc_metric_format(dc_metric_id m, const dc_metrics *x, dc_buf *out) {
  double v = x->v[m];
  switch (m) {
  case DC_METRIC_FITS:
    dc_buf_puts(out, v != 0.0 ? "true" : "false");
    return;
  case DC_METRIC_COMM_BYTES:
    rt_emit_put_int(out, dc_f64_sat_i64(round(v)));
    return;
  case DC_METRIC_SAMPLES_PER_S:
    rt_emit_put_double(out, v, 1);
    return;
  case DC_METRIC_EMB_TOTAL_VARIATION:
  case DC_METRIC_EMB_TOTAL_DISTANCE:
  case DC_METRIC_EMB_CHI_DIVERGENCE:
  case DC_METRIC_EMB_KL_DIVERGENCE:
    rt_emit_put_double(out, v, 6);
    return;
  case DC_METRIC_SPEEDUP:
    if (!x->has_speedup) return; /* empty: the study has no baseline */
    rt_emit_put_double(out, v, 4);
    return;
  default:
    rt_emit_put_double(out, v, 4);
    return;
  }
}

/* A Markdown row of a point that does not fit in GPU memory opens with
 * DC_EMIT_UNFIT: its times assume memory the GPU lacks, and a reader of
 * the table must see so without a fits column (CSV and JSON lines keep
 * their values as they are; they carry fits for programs). */
void rt_emit_row(dc_format f, const rt_emit_col *cols, size_t n,
                 const dc_point *p, const dc_metrics *m, int digits,
                 int decimals, dc_buf *b, dc_buf *scratch) {
  open_row(f, b);
  if (f == DC_FORMAT_MD && m->v[DC_METRIC_FITS] == 0.0 && n > 0)
    dc_buf_puts(b, " " DC_EMIT_UNFIT);
  for (size_t i = 0; i < n; i++) {
    const rt_emit_col *c = &cols[i];
    const char *text;
    json_as as = JSON_AUTO;
    if (c->is_param) {
      text = param_value(p, c->param);
    } else {
      dc_buf_clear(scratch);
      dc_buf_puts(scratch, "");
      bool num = c->metric != DC_METRIC_FITS &&
                 c->metric != DC_METRIC_COMM_BYTES &&
                 !(c->metric == DC_METRIC_SPEEDUP && !m->has_speedup);
      if (num && digits > 0)
        rt_emit_put_sig(scratch, m->v[c->metric], digits);
      else if (num && decimals >= 0)
        rt_emit_put_double(scratch, m->v[c->metric], decimals);
      else
        dc_metric_format(c->metric, m, scratch);
      text = scratch->data ? scratch->data : "";
      if (c->metric == DC_METRIC_FITS)
        as = JSON_RAW;
      else if (c->metric == DC_METRIC_SPEEDUP && !m->has_speedup)
        as = JSON_NULL;
    }
    emit_field(f, i, c->name, text, as, b);
  }
  close_row(f, b);
}

/* ---- row modes ------------------------------------------------ */

static const rt_cell_col rank_cols[] = {
    {"rank", RT_CELL_NUM},          {"e2e_ms", RT_CELL_NUM},
    {"cpu_ms", RT_CELL_NUM},        {"gpu_active_ms", RT_CELL_NUM},
    {"kernel_only_ms", RT_CELL_NUM}, {"emb_ms", RT_CELL_NUM},
    {"comm_ms", RT_CELL_NUM},       {"comm_bytes", RT_CELL_NUM},
    {"params_gib", RT_CELL_NUM},    {"optimizer_gib", RT_CELL_NUM},
    {"activations_gib", RT_CELL_NUM}, {"workspace_gib", RT_CELL_NUM},
    {"mem_gib", RT_CELL_NUM},       {"fits", RT_CELL_BOOL}};

static const rt_cell_col shard_cols[] = {
    {"table", RT_CELL_TEXT},     {"shard", RT_CELL_NUM},
    {"rank", RT_CELL_NUM},       {"sharding", RT_CELL_TEXT},
    {"rows", RT_CELL_NUM},       {"cols", RT_CELL_NUM},
    {"emb_fwd_ms", RT_CELL_NUM}, {"emb_bwd_ms", RT_CELL_NUM},
    {"weights_gib", RT_CELL_NUM}};

static const rt_cell_col capacity_cols[] = {
    {"gpu", RT_CELL_TEXT},          {"gpus", RT_CELL_NUM},
    {"hosts", RT_CELL_NUM},         {"gpus_per_host", RT_CELL_NUM},
    {"e2e_ms", RT_CELL_NUM},        {"samples_per_s", RT_CELL_NUM},
    {"mem_gib", RT_CELL_NUM},       {"hbm_gib", RT_CELL_NUM},
    {"fits", RT_CELL_BOOL},         {"meets_target", RT_CELL_BOOL},
    {"answer", RT_CELL_BOOL}};

static const rt_cell_col torchrec_cols[] = {
    {"torchrec_ms", RT_CELL_NUM},
    {"torchrec_fwd_compute_ms", RT_CELL_NUM},
    {"torchrec_fwd_comms_ms", RT_CELL_NUM},
    {"torchrec_bwd_compute_ms", RT_CELL_NUM},
    {"torchrec_bwd_comms_ms", RT_CELL_NUM},
    {"torchrec_hbm_gib", RT_CELL_NUM}};

void rt_emit_mode_columns(const dc_sweep_source *src, dc_rows rows,
                          rt_cell_col **cols, size_t *n) {
  const rt_cell_col *fixed = rank_cols;
  size_t nf = DC_COUNTOF(rank_cols), nt = DC_COUNTOF(torchrec_cols);
  if (rows == DC_ROWS_SHARD) {
    fixed = shard_cols;
    nf = DC_COUNTOF(shard_cols);
  } else if (rows == DC_ROWS_CAPACITY) {
    fixed = capacity_cols;
    nf = DC_COUNTOF(capacity_cols);
    nt = 1; /* torchrec_ms of the row's configuration */
  }
  if (!src->torchrec) nt = 0;
  rt_cell_col *c = dc_xcalloc(src->n_params + nf + nt + 1, sizeof *c);
  size_t k = 0;
  for (size_t i = 0; i < src->n_params; i++)
    c[k++] = (rt_cell_col){src->param_paths[i], RT_CELL_TEXT};
  for (size_t i = 0; i < nf; i++) c[k++] = fixed[i];
  for (size_t i = 0; i < nt; i++) c[k++] = torchrec_cols[i];
  *cols = c;
  *n = k;
}

static void cells_next(rt_cells *c) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 64;
    c->off = dc_xrealloc(c->off, c->cap * sizeof *c->off);
  }
  c->off[c->n++] = c->buf.len;
}

void rt_cells_clear(rt_cells *c) {
  dc_buf_clear(&c->buf);
  c->n = 0;
}

void rt_cells_free(rt_cells *c) {
  dc_buf_free(&c->buf);
  free(c->off);
  memset(c, 0, sizeof *c);
}

void rt_cells_text(rt_cells *c, const char *s) {
  cells_next(c);
  dc_buf_puts(&c->buf, s ? s : "");
  dc_buf_putc(&c->buf, '\0');
}

void rt_cells_num(rt_cells *c, double v, int decimals) {
  cells_next(c);
  if (c->digits > 0)
    rt_emit_put_sig(&c->buf, v, c->digits);
  else
    rt_emit_put_double(&c->buf, v, c->fixed_decimals ? c->decimals
                                                     : decimals);
  dc_buf_putc(&c->buf, '\0');
}

void rt_cells_int(rt_cells *c, int64_t v) {
  cells_next(c);
  rt_emit_put_int(&c->buf, v);
  dc_buf_putc(&c->buf, '\0');
}

/* ---- number formatting ---------------------------------------------------
 * Every row of a sweep prints a dozen doubles; printf's general machinery
 * (multi-precision arithmetic for the exact decimal expansion) was a tenth
 * of the run time. For |v| < 1e9 and d <= 9 decimals the exact answer of
 * "%.*f" — the decimal rounding of the double's exact binary value to d
 * places, ties to even (glibc in the default rounding mode) — needs only
 * 128-bit integers: v = m·2^e exactly (m < 2^53, e < 0 in this range), so
 * v·10^d = m·10^d / 2^-e with m·10^d < 2^83; its quotient and remainder
 * give the rounded integer q = round(v·10^d) < 10^18 exactly. Other values
 * go to dc_buf_put_double itself. tests/unit/test_runtime_fmt.c compares
 * both on tens of millions of values, ties included. */
__extension__ typedef unsigned __int128 emit_u128;

static const double emit_pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4,
                                    1e5, 1e6, 1e7, 1e8, 1e9};
static const uint64_t emit_pow10_u[] = {
    1ull,      10ull,      100ull,      1000ull,      10000ull,
    100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull};

static char *put_u64(char *end, uint64_t v) { /* writes backwards */
  do {
    *--end = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  return end;
}

void rt_emit_put_int(dc_buf *b, int64_t v) {
  char tmp[24], *end = tmp + sizeof tmp;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  char *s = put_u64(end, u);
  if (v < 0) *--s = '-';
  dc_buf_append(b, s, (size_t)(end - s));
}

void rt_emit_put_sig(dc_buf *b, double v, int digits) {
  if (!isfinite(v) || v == 0.0) {
    dc_buf_put_double(b, v == 0.0 ? 0.0 : v, 0); /* nan, inf, 0 (not -0) */
    return;
  }
  dc_buf_printf(b, "%.*g", digits < 1 ? 1 : digits > 17 ? 17 : digits, v);
}

void rt_emit_put_double(dc_buf *b, double v, int decimals) {
  if (decimals < 0 || decimals > 9 || !(fabs(v) < 1e9)) {
    dc_buf_put_double(b, v, decimals); /* nan, inf, the rare wide value */
    return;
  }
  /* dc_buf_put_double's zero rule, with pow(10, d) (exact for d <= 22) */
  if (fabs(v) * emit_pow10[decimals] < 0.5) v = 0.0;
  bool neg = signbit(v);
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  uint64_t frac = bits & ((1ull << 52) - 1);
  int bexp = (int)((bits >> 52) & 0x7ff);
  uint64_t m = bexp ? frac | (1ull << 52) : frac;
  int sh = bexp ? 1075 - bexp : 1074; /* v = m / 2^sh, sh > 0 here */
  uint64_t q;
  if (m == 0 || sh >= 128) {
    q = 0; /* m·10^d < 2^83 <= half of 2^sh: rounds to 0 */
  } else {
    emit_u128 n = (emit_u128)m * emit_pow10_u[decimals];
    emit_u128 one = 1;
    emit_u128 rem = n & ((one << sh) - 1), half = one << (sh - 1);
    q = (uint64_t)(n >> sh);
    if (rem > half || (rem == half && (q & 1))) q++;
  }
  char tmp[48], *end = tmp + sizeof tmp, *s = end;
  uint64_t p = emit_pow10_u[decimals];
  if (decimals > 0) {
    uint64_t f = q % p;
    for (int i = 0; i < decimals; i++) {
      *--s = (char)('0' + f % 10);
      f /= 10;
    }
    *--s = '.';
  }
  s = put_u64(s, q / p);
  if (neg) *--s = '-';
  dc_buf_append(b, s, (size_t)(end - s));
}

void rt_cells_bool(rt_cells *c, bool v) {
  rt_cells_text(c, v ? "true" : "false");
}

void rt_cells_params(rt_cells *c, const dc_sweep_source *src,
                     const dc_point *p) {
  for (size_t i = 0; i < src->n_params; i++)
    rt_cells_text(c, param_value(p, (int)i));
}

void rt_emit_cells_header(dc_format f, const rt_cell_col *cols, size_t n,
                          dc_buf *b) {
  header_col *h = dc_xcalloc(n ? n : 1, sizeof *h);
  for (size_t i = 0; i < n; i++)
    h[i] = (header_col){cols[i].name, cols[i].kind == RT_CELL_NUM};
  emit_header(f, h, n, b);
  free(h);
}

void rt_emit_cells_row(dc_format f, const rt_cell_col *cols, size_t n,
                       const rt_cells *c, dc_buf *b) {
  DC_ASSERT(c->n == n);
  open_row(f, b);
  for (size_t i = 0; i < n; i++) {
    const char *text = c->buf.data + c->off[i];
    json_as as = cols[i].kind == RT_CELL_BOOL                 ? JSON_RAW
                 : cols[i].kind == RT_CELL_NUM && !*text ? JSON_NULL
                                                             : JSON_AUTO;
    emit_field(f, i, cols[i].name, text, as, b);
  }
  close_row(f, b);
}
