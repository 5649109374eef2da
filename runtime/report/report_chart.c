/*
 * report_chart.c — the report's main chart: the charted metric (e2e_ms
 * unless asked) against the sweep, shaped by what was swept
 * (spec/report.md):
 *
 * - a numeric parameter swept (batch size, GPUs, tables): lines of the
 *   metric against it (a base-2 log axis when it spans 8× or more), one
 *   line per combination of the other swept parameters;
 * - categorical parameters only (GPU generations, sharding plans): grouped
 *   bars, one group per combination of all but the series parameter (the
 *   last one with at most eight values), the baseline's ratio above each
 *   bar when the table has speedups.
 *
 * Legibility from 2 to 2,000 points (and beyond) is by faceting and
 * decimation, never by shrinking marks: at most eight series per panel
 * (more series: more panels, at most eight panels, the rest named in a
 * note); a line of more than 400 points is decimated to the minimum and
 * maximum of 200 buckets (extremes survive); marks are drawn for lines of
 * at most 60 points; bars at most 48 per panel. Points that do not fit in
 * memory are never drawn as times: a line breaks there and a ✕ marks the
 * x position in a band above the plot; their bars are hatched to the top.
 *
 * One file: both chart shapes share their faceting, legend and panel
 * code here; split, that code would be exported for one caller each.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/report/report_int.h"

enum {
  W = 760,
  H = 380,
  LEFT = 78,
  TOP = 34,
  LEGEND_W = 200,
  MAX_PANELS = 8,
  DECIMATE_ABOVE = 400,
  BUCKETS = 200,
  MARKS_UP_TO = 60,
  BARS_PER_PANEL = 48
};

/* ---- shared helpers ----------------------------------------------------- */

double rep_chart_value(const rep_chart *c, const dc_report_row *row) {
  return c->metric_col >= 0 ? row->num[c->metric_col]
                            : row->fig[c->metric_fig];
}

bool rep_chart_fits(const dc_report_row *row) {
  return row->fig[DC_REPORT_FIG_FITS] != 0.0; /* NaN: unknown, fits */
}

void rep_chart_point_label(const rep_chart *c, const dc_report_row *row,
                           int32_t skip, dc_buf *b) {
  bool first = true;
  for (int32_t i = 0; i < c->n_swept; i++) {
    int32_t col = c->swept[i];
    if (col == skip) continue;
    if (!first) dc_buf_puts(b, " · ");
    dc_buf_puts(b, row->cells[col]);
    first = false;
  }
  if (first) dc_buf_puts(b, "(one point)");
}

void rep_chart_note(rep_chart *c, const char *fmt, ...) {
  dc_buf t = {0};
  va_list ap;
  va_start(ap, fmt);
  dc_buf_vprintf(&t, fmt, ap);
  va_end(ap);
  dc_buf_puts(c->out, "<p class=\"note\">");
  dc_html_escape(c->out, t.data ? t.data : "");
  dc_buf_puts(c->out, "</p>\n");
  dc_buf_free(&t);
}

const char *rep_ordinal(int64_t k, char *buf, size_t cap) {
  int64_t t = k % 100, u = k % 10;
  const char *suf = t >= 11 && t <= 13 ? "th"
                    : u == 1           ? "st"
                    : u == 2           ? "nd"
                    : u == 3           ? "rd"
                                       : "th";
  snprintf(buf, cap, "%lld%s", (long long)k, suf);
  return buf;
}

/* Indexes of distinct keys in first-appearance order. */
typedef struct keyset {
  dc_map map;
  int32_t n;
} keyset;

static int32_t keyset_index(keyset *k, const char *key) {
  void *v = dc_map_get(&k->map, key);
  if (v) return (int32_t)((uintptr_t)v - 1);
  dc_map_put(&k->map, key, (void *)(uintptr_t)(k->n + 1));
  return k->n++;
}

/* The key of a row over the swept columns but `skip` (and but `only`
 * when only >= 0: that column alone). */
static void row_key(const rep_chart *c, const dc_report_row *row, int32_t skip,
                    int32_t only, dc_buf *b) {
  dc_buf_clear(b);
  dc_buf_puts(b, "");
  for (int32_t i = 0; i < c->n_swept; i++) {
    int32_t col = c->swept[i];
    if (col == skip || (only >= 0 && col != only)) continue;
    dc_buf_puts(b, row->cells[col]);
    dc_buf_putc(b, '\x1f');
  }
}

static void truncate_label(dc_buf *b, const char *s, size_t max) {
  size_t n = strlen(s);
  if (n <= max) {
    dc_buf_puts(b, s);
    return;
  }
  size_t k = max - 1;
  while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--; /* UTF-8 */
  dc_buf_append(b, s, k);
  dc_buf_puts(b, "…");
}

static void axis_y(rep_chart *c, const rep_axis *y, double x0, double x1) {
  const char *unit = rep_unit(c->metric);
  for (int i = 0; i < y->n_ticks; i++) {
    double py = rep_axis_map(y, y->ticks[i]);
    rep_svg_line(&c->svg, x0, py, x1, py, "class=\"grid\"");
    dc_buf_clear(&c->tmp);
    rep_label(&c->tmp, y->ticks[i], unit);
    rep_svg_text(&c->svg, x0 - 6, py + 4, "end", "class=\"tick\"",
                 c->tmp.data);
  }
  rep_svg_line(&c->svg, x0, y->px0, x0, y->px1, "class=\"axis\"");
  dc_buf_clear(&c->tmp);
  dc_buf_puts(&c->tmp, c->metric);
  if (*unit) dc_buf_printf(&c->tmp, " (%s)", unit);
  double mid = (y->px0 + y->px1) / 2;
  dc_buf_puts(c->svg.b, "<text x=\"14\" y=\"");
  rep_svg_num(&c->svg, mid);
  dc_buf_puts(c->svg.b, "\" text-anchor=\"middle\" class=\"title\" "
                        "transform=\"rotate(-90 14 ");
  rep_svg_num(&c->svg, mid);
  dc_buf_puts(c->svg.b, ")\">");
  dc_html_escape(c->svg.b, c->tmp.data);
  dc_buf_puts(c->svg.b, "</text>\n");
}

static void legend_entry(rep_chart *c, int k, double x, double y,
                         const char *label, bool line) {
  char attrs[96];
  if (line) {
    snprintf(attrs, sizeof attrs, "class=\"ln s%d\"%s%s%s", k,
             *rep_series_dash(k) ? " stroke-dasharray=\"" : "",
             rep_series_dash(k), *rep_series_dash(k) ? "\"" : "");
    rep_svg_line(&c->svg, x, y - 4, x + 26, y - 4, attrs);
    snprintf(attrs, sizeof attrs, "class=\"pt s%d\"", k);
    rep_svg_marker(&c->svg, k, x + 13, y - 4, attrs, false);
  } else {
    snprintf(attrs, sizeof attrs, "class=\"bar s%d\"", k);
    rep_svg_rect(&c->svg, x + 4, y - 11, 18, 12, attrs, false);
    if (k > 0) {
      snprintf(attrs, sizeof attrs, "class=\"pat\" fill=\"url(#p%d)\"", k);
      rep_svg_rect(&c->svg, x + 4, y - 11, 18, 12, attrs, false);
    }
  }
  dc_buf_clear(&c->tmp);
  truncate_label(&c->tmp, label, 24);
  rep_svg_text(&c->svg, x + 32, y, "start", "class=\"legend\"", c->tmp.data);
}

static void legend_oom(rep_chart *c, double x, double y) {
  rep_svg_text(&c->svg, x + 13, y, "middle", "class=\"oom-mark\"", "✕");
  rep_svg_text(&c->svg, x + 32, y, "start", "class=\"legend\"",
               "does not fit in memory");
}

/* ---- lines on a numeric axis ---------------------------------------------- */

/* A row index with its x: qsort's comparator sees only the two elements,
 * so the key travels with the index (no global). Equal x keep row order. */
typedef struct x_ix {
  double x;
  int64_t row;
} x_ix;

static int cmp_x(const void *pa, const void *pb) {
  const x_ix *a = pa, *b = pb;
  if (a->x != b->x) return a->x < b->x ? -1 : 1;
  return a->row < b->row ? -1 : a->row > b->row;
}

/* Sorts the row indices idx[0..n) by their rows' value in column xcol. */
static void sort_by_x(const dc_report_row *rows, int32_t xcol, int64_t *idx,
                      int64_t n) {
  if (n < 2) return;
  x_ix *k = dc_xmalloc((size_t)n * sizeof *k);
  for (int64_t i = 0; i < n; i++)
    k[i] = (x_ix){rows[idx[i]].num[xcol], idx[i]};
  qsort(k, (size_t)n, sizeof *k, cmp_x);
  for (int64_t i = 0; i < n; i++) idx[i] = k[i].row;
  free(k);
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return a < b ? -1 : a > b;
}

/* The points of one series to draw, in x order: all of them, or the
 * bucket extremes of a long series. */
static int64_t decimate(const rep_chart *c, const int64_t *idx, int64_t m,
                        int64_t *out) {
  const dc_report_row *rows = c->r->rows;
  if (m <= DECIMATE_ABOVE) {
    memcpy(out, idx, (size_t)m * sizeof *idx);
    return m;
  }
  int64_t n = 0;
  for (int64_t b = 0; b < BUCKETS; b++) {
    int64_t lo = b * m / BUCKETS, hi = (b + 1) * m / BUCKETS;
    int64_t imin = -1, imax = -1;
    for (int64_t j = lo; j < hi; j++) {
      const dc_report_row *row = &rows[idx[j]];
      double v = rep_chart_value(c, row);
      if (!isfinite(v) || !rep_chart_fits(row)) {
        out[n++] = idx[j]; /* kept: it breaks the line (deduplicated) */
        continue;
      }
      if (imin < 0 || v < rep_chart_value(c, &rows[idx[imin]])) imin = j;
      if (imax < 0 || v > rep_chart_value(c, &rows[idx[imax]])) imax = j;
    }
    if (imin >= 0) out[n++] = idx[imin < imax ? imin : imax];
    if (imax >= 0 && imax != imin) out[n++] = idx[imin < imax ? imax : imin];
  }
  return n;
}

static void line_panel(rep_chart *c, int32_t xcol, const rep_axis *x,
                       const rep_axis *y, const int64_t *idx,
                       const int64_t *start, int32_t s0, int32_t s1,
                       bool any_oom, const char *legend_title,
                       int64_t *buf) {
  const dc_report *r = c->r;
  dc_buf_clear(&c->tmp);
  dc_buf_printf(&c->tmp, "%s against %s", c->metric, r->cols[xcol]);
  rep_svg_open(&c->svg, W, H, c->tmp.data);
  double x0 = x->px0, x1 = x->px1;
  axis_y(c, y, x0, x1);
  /* x ticks */
  for (int i = 0; i < x->n_ticks; i++) {
    double px = rep_axis_map(x, x->ticks[i]);
    rep_svg_line(&c->svg, px, y->px0, px, y->px0 + 5, "class=\"axis\"");
    dc_buf_clear(&c->tmp);
    rep_label(&c->tmp, x->ticks[i], "");
    rep_svg_text(&c->svg, px, y->px0 + 18, "middle", "class=\"tick\"",
                 c->tmp.data);
  }
  rep_svg_line(&c->svg, x0, y->px0, x1, y->px0, "class=\"axis\"");
  dc_buf_clear(&c->tmp);
  dc_buf_puts(&c->tmp, r->cols[xcol]);
  if (x->log2) dc_buf_puts(&c->tmp, " (log scale)");
  rep_svg_text(&c->svg, (x0 + x1) / 2, H - 8, "middle", "class=\"title\"",
               c->tmp.data);
  if (any_oom)
    rep_svg_text(&c->svg, x0 - 6, TOP - 14, "end", "class=\"tick\"",
                 "no fit");
  char attrs[128];
  for (int32_t s = s0; s < s1; s++) {
    int k = s - s0;
    int64_t m = decimate(c, idx + start[s], start[s + 1] - start[s], buf);
    /* the line, broken at points without a finite time in memory */
    bool open = false;
    for (int64_t j = 0; j < m; j++) {
      const dc_report_row *row = &r->rows[buf[j]];
      double v = rep_chart_value(c, row);
      bool ok = isfinite(v) && rep_chart_fits(row);
      if (ok && !open) {
        const char *dash = rep_series_dash(k);
        snprintf(attrs, sizeof attrs, "class=\"ln s%d\"%s%s%s", k,
                 *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "");
        dc_buf_puts(c->svg.b, "<polyline points=\"");
        open = true;
      } else if (ok) {
        dc_buf_putc(c->svg.b, ' ');
      }
      if (ok) {
        rep_svg_num(&c->svg, rep_axis_map(x, row->num[xcol]));
        dc_buf_putc(c->svg.b, ',');
        rep_svg_num(&c->svg, rep_axis_map(y, v));
      }
      if (open && (!ok || j + 1 == m)) {
        dc_buf_printf(c->svg.b, "\" %s/>\n", attrs);
        open = false;
      }
    }
    /* marks, and the ✕ of points that do not fit (one per pixel column) */
    double last_oom = -1e9;
    for (int64_t j = 0; j < m; j++) {
      int64_t i = buf[j];
      const dc_report_row *row = &r->rows[i];
      double v = rep_chart_value(c, row);
      double px = rep_axis_map(x, row->num[xcol]);
      dc_buf_clear(&c->tmp);
      rep_chart_point_label(c, row, -1, &c->tmp);
      if (!rep_chart_fits(row)) {
        if (px - last_oom < 3) continue;
        last_oom = px;
        snprintf(attrs, sizeof attrs,
                 "class=\"oom-mark s%d\" data-row=\"%lld\" data-fits=\"false\"",
                 k, (long long)i);
        dc_buf_puts(&c->tmp, ": does not fit in memory");
        dc_buf_puts(c->svg.b, "<text");
        dc_buf_puts(c->svg.b, " x=\"");
        rep_svg_num(&c->svg, px);
        dc_buf_puts(c->svg.b, "\" y=\"");
        rep_svg_num(&c->svg, TOP - 14 + 4.0 * (k % 3));
        dc_buf_printf(c->svg.b, "\" text-anchor=\"middle\" %s>", attrs);
        rep_svg_title(&c->svg, c->tmp.data);
        dc_buf_puts(c->svg.b, "✕</text>\n");
        continue;
      }
      if (m > MARKS_UP_TO || !isfinite(v)) continue;
      snprintf(attrs, sizeof attrs, "class=\"pt s%d\" data-row=\"%lld\"", k,
               (long long)i);
      size_t at = c->svg.b->len;
      const char *el = rep_svg_marker(&c->svg, k, px, rep_axis_map(y, v),
                                      attrs, true);
      /* data-value goes inside the element's start tag */
      DC_ASSERT(c->svg.b->len > at && c->svg.b->data[c->svg.b->len - 1] == '>');
      c->svg.b->len--;
      rep_svg_data_value(&c->svg, v);
      dc_buf_putc(c->svg.b, '>');
      dc_buf_puts(&c->tmp, ": ");
      rep_label(&c->tmp, v, rep_unit(c->metric));
      rep_svg_title(&c->svg, c->tmp.data);
      rep_svg_end(&c->svg, el);
    }
  }
  /* the legend */
  double lx = W - LEGEND_W + 10, ly = TOP + 4;
  dc_buf_clear(&c->tmp);
  truncate_label(&c->tmp, legend_title, 30);
  rep_svg_text(&c->svg, lx, ly, "start", "class=\"legend-title\"",
               c->tmp.data);
  for (int32_t s = s0; s < s1; s++) {
    ly += 18;
    dc_buf t = {0};
    const dc_report_row *row = &r->rows[idx[start[s]]];
    rep_chart_point_label(c, row, xcol, &t);
    legend_entry(c, s - s0, lx, ly, t.data, true);
    dc_buf_free(&t);
  }
  if (any_oom) legend_oom(c, lx, ly + 18);
  rep_svg_close(&c->svg);
}

static void line_chart(rep_chart *c, int32_t xcol) {
  const dc_report *r = c->r;
  int64_t n = r->n_rows;
  keyset ks = {0};
  int32_t *series = dc_xcalloc((size_t)n + 1, sizeof *series);
  dc_buf key = {0};
  for (int64_t i = 0; i < n; i++) {
    row_key(c, &r->rows[i], xcol, -1, &key);
    series[i] = keyset_index(&ks, key.data);
  }
  int32_t ns = ks.n;
  int64_t *start = dc_xcalloc((size_t)ns + 2, sizeof *start);
  for (int64_t i = 0; i < n; i++) start[series[i] + 1]++;
  for (int32_t s = 0; s < ns; s++) start[s + 1] += start[s];
  int64_t *fill = dc_xcalloc((size_t)ns + 1, sizeof *fill);
  int64_t *idx = dc_xcalloc((size_t)n + 1, sizeof *idx);
  for (int64_t i = 0; i < n; i++)
    idx[start[series[i]] + fill[series[i]]++] = i;
  for (int32_t s = 0; s < ns; s++)
    sort_by_x(r->rows, xcol, idx + start[s], start[s + 1] - start[s]);
  /* ranges: x over every row, y over the points drawn as times */
  double xmin = INFINITY, xmax = -INFINITY, ymin = 0.0, ymax = -INFINITY;
  bool any_oom = false;
  int32_t drawn = ns < REP_SERIES_MAX * MAX_PANELS ? ns
                                                  : REP_SERIES_MAX * MAX_PANELS;
  for (int64_t i = 0; i < n; i++) {
    const dc_report_row *row = &r->rows[i];
    double xv = row->num[xcol], v = rep_chart_value(c, row);
    if (xv < xmin) xmin = xv;
    if (xv > xmax) xmax = xv;
    if (series[i] >= drawn) continue;
    if (!rep_chart_fits(row)) any_oom = true;
    else if (isfinite(v)) {
      if (v > ymax) ymax = v;
      if (v < ymin) ymin = v;
    }
  }
  if (!(ymax > ymin)) ymax = ymin + 1.0;
  /* distinct x values, for the ticks of a short log axis */
  double xs[13];
  int nx = 0;
  double *all = dc_xcalloc((size_t)n + 1, sizeof *all);
  for (int64_t i = 0; i < n; i++) all[i] = r->rows[i].num[xcol];
  qsort(all, (size_t)n, sizeof *all, cmp_double);
  for (int64_t i = 0; i < n && nx < 13; i++)
    if (i == 0 || all[i] != all[i - 1]) xs[nx++] = all[i];
  free(all);
  rep_axis x, y;
  double px0 = LEFT, px1 = W - LEGEND_W - 16;
  if (xmin > 0 && xmax / xmin >= 8)
    rep_axis_log2(&x, xmin, xmax, xs, nx, px0, px1);
  else {
    rep_axis_linear(&x, xmin, xmax, px0, px1);
    if (nx <= 12) { /* tick the values themselves */
      x.n_ticks = 0;
      for (int i = 0; i < nx; i++) x.ticks[x.n_ticks++] = xs[i];
      double pad = (xmax - xmin) * 0.04 + (xmax == xmin ? 1.0 : 0.0);
      x.lo = xmin - pad;
      x.hi = xmax + pad;
    }
  }
  rep_axis_linear(&y, ymin, ymax * 1.04, H - 48, TOP);
  /* the legend's title: the parameters the series stand for */
  dc_buf title = {0};
  for (int32_t i = 0; i < c->n_swept; i++)
    if (c->swept[i] != xcol) {
      if (title.len) dc_buf_puts(&title, " · ");
      dc_buf_puts(&title, r->cols[c->swept[i]]);
    }
  if (!title.len) dc_buf_puts(&title, c->metric);
  int64_t *buf = dc_xcalloc((size_t)n + 1, sizeof *buf);
  dc_buf_puts(c->out, "<figure>\n");
  for (int32_t s0 = 0; s0 < drawn; s0 += REP_SERIES_MAX) {
    int32_t s1 = s0 + REP_SERIES_MAX < drawn ? s0 + REP_SERIES_MAX : drawn;
    line_panel(c, xcol, &x, &y, idx, start, s0, s1, any_oom, title.data,
               buf);
  }
  dc_buf_puts(c->out, "<figcaption>");
  dc_buf_clear(&c->tmp);
  dc_buf_printf(&c->tmp,
                "%s of %lld points against %s, one line per %s%s.",
                c->metric, (long long)n, r->cols[xcol], title.data,
                ns > REP_SERIES_MAX ? " (eight lines per panel)" : "");
  dc_html_escape(c->out, c->tmp.data);
  dc_buf_puts(c->out, "</figcaption>\n</figure>\n");
  if (ns > drawn)
    rep_chart_note(c, "%d of %d lines drawn (%d panels of eight); the other "
                     "%d are in the table.",
                   (int)drawn, (int)ns, MAX_PANELS, (int)(ns - drawn));
  for (int32_t s = 0; s < drawn; s++)
    if (start[s + 1] - start[s] > DECIMATE_ABOVE) {
      rep_chart_note(c, "Lines of more than %d points are decimated to the "
                       "minimum and maximum of %d buckets each.",
                     DECIMATE_ABOVE, BUCKETS);
      break;
    }
  free(buf);
  dc_buf_free(&title);
  dc_buf_free(&key);
  dc_map_free(&ks.map);
  free(series);
  free(start);
  free(fill);
  free(idx);
}

/* ---- grouped bars ---------------------------------------------------------- */

/* How the group labels under the bars are set (bar_labels): level when
 * they fit their slot; else slanted at 45° and cut to SLANT_CHARS, with
 * the chart made taller to hold them and only every `step`-th group
 * labelled when slots are closer than a slanted line's height (the rest
 * keep the name in their bars' tooltips and in the table). */
enum { CHAR_W = 6, LINE_H = 15, SLANT_CHARS = 24, LEVEL_BELOW = 70 };

typedef struct bar_labels {
  bool slant;
  int32_t step;
  double h; /* the panel's height */
} bar_labels;

static double bar_x1(int32_t scol) {
  return scol >= 0 ? W - LEGEND_W - 16 : W - 20;
}

static bar_labels bar_layout(rep_chart *c, const int64_t *cell, int32_t ng,
                             int32_t per_panel, int32_t n_series,
                             int32_t scol) {
  bar_labels L = {false, 1, H};
  int32_t per = ng < per_panel ? ng : per_panel;
  if (per < 1) return L;
  double slot = (bar_x1(scol) - LEFT) / per;
  size_t fit = (size_t)(slot / CHAR_W), longest = 0;
  dc_buf t = {0};
  for (int32_t g = 0; g < ng; g++) {
    for (int32_t s = 0; s < n_series; s++) {
      int64_t i = cell[(int64_t)g * n_series + s];
      if (i < 0) continue;
      dc_buf_clear(&t);
      rep_chart_point_label(c, &c->r->rows[i], scol, &t);
      size_t n = t.data ? strlen(t.data) : 0;
      if (n > longest) longest = n;
      break;
    }
  }
  dc_buf_free(&t);
  if (longest <= fit || fit >= 40) return L;
  L.slant = true;
  double across = slot * 0.7071; /* between two slanted lines */
  L.step = across >= LINE_H ? 1 : (int32_t)ceil(LINE_H / across);
  size_t chars = longest < SLANT_CHARS ? longest : SLANT_CHARS;
  double below = 20 + (double)chars * CHAR_W * 0.7071 + 8;
  if (below > LEVEL_BELOW) L.h = H + (below - LEVEL_BELOW);
  return L;
}

static void bar_panel(rep_chart *c, const int64_t *cell, int32_t g0,
                      int32_t g1, int32_t n_series, int32_t scol,
                      const rep_axis *y, bool any_oom, bool ratios,
                      const bar_labels *L) {
  const dc_report *r = c->r;
  double x0 = LEFT, x1 = bar_x1(scol);
  double slot = (x1 - x0) / (g1 - g0);
  double bw = (slot * 0.8) / n_series;
  if (bw > 40) bw = 40;
  double pad = (slot - bw * n_series) / 2;
  rep_svg_open(&c->svg, W, L->h, c->metric);
  axis_y(c, y, x0, x1);
  rep_svg_line(&c->svg, x0, y->px0, x1, y->px0, "class=\"axis\"");
  const char *unit = rep_unit(c->metric);
  char attrs[128];
  for (int32_t g = g0; g < g1; g++) {
    double gx = x0 + (g - g0) * slot;
    const dc_report_row *label_row = NULL;
    for (int32_t s = 0; s < n_series; s++) {
      int64_t i = cell[(int64_t)g * n_series + s];
      if (i < 0) continue;
      const dc_report_row *row = &r->rows[i];
      if (!label_row) label_row = row;
      double v = rep_chart_value(c, row);
      double bx = gx + pad + s * bw;
      dc_buf_clear(&c->tmp);
      rep_chart_point_label(c, row, -1, &c->tmp);
      if (!rep_chart_fits(row)) {
        snprintf(attrs, sizeof attrs,
                 "class=\"oom\" data-row=\"%lld\" data-fits=\"false\"",
                 (long long)i);
        rep_svg_rect(&c->svg, bx + 1, y->px1, bw - 2, y->px0 - y->px1, attrs,
                     true);
        dc_buf_puts(&c->tmp, ": does not fit in memory");
        rep_svg_title(&c->svg, c->tmp.data);
        rep_svg_end(&c->svg, "rect");
        rep_svg_text(&c->svg, bx + bw / 2, y->px1 + 14, "middle",
                     "class=\"oom-mark\"", "✕");
        continue;
      }
      if (!isfinite(v)) continue;
      double top = rep_axis_map(y, v), base = rep_axis_map(y, 0.0);
      if (top > base) { /* a negative value hangs below zero */
        double t = top;
        top = base;
        base = t;
      }
      snprintf(attrs, sizeof attrs, "class=\"bar s%d\" data-row=\"%lld\"",
               (int)s, (long long)i);
      rep_svg_rect(&c->svg, bx + 1, top, bw - 2, base - top, attrs, true);
      c->svg.b->len--;
      rep_svg_data_value(&c->svg, v);
      dc_buf_putc(c->svg.b, '>');
      dc_buf_puts(&c->tmp, ": ");
      rep_label(&c->tmp, v, unit);
      double ratio = row->fig[DC_REPORT_FIG_SPEEDUP];
      if (ratios && isfinite(ratio))
        dc_buf_printf(&c->tmp, " (×%.2f of the baseline's speed)", ratio);
      rep_svg_title(&c->svg, c->tmp.data);
      rep_svg_end(&c->svg, "rect");
      if (s > 0) {
        snprintf(attrs, sizeof attrs, "class=\"pat\" fill=\"url(#p%d)\"",
                 (int)s);
        rep_svg_rect(&c->svg, bx + 1, top, bw - 2, base - top, attrs, false);
      }
      if (bw >= 22) {
        dc_buf_clear(&c->tmp);
        rep_label(&c->tmp, v, "");
        rep_svg_text(&c->svg, bx + bw / 2, top - 4, "middle",
                     "class=\"val\"", c->tmp.data);
        if (ratios && isfinite(ratio)) {
          dc_buf_clear(&c->tmp);
          dc_buf_printf(&c->tmp, "×%.2f", ratio);
          rep_svg_text(&c->svg, bx + bw / 2, top - 16, "middle",
                       "class=\"ratio\"", c->tmp.data);
        }
      }
    }
    if (!label_row || (g - g0) % L->step != 0) continue;
    dc_buf t = {0}, l = {0};
    rep_chart_point_label(c, label_row, scol, &t);
    int64_t max_chars = dc_f64_sat_i64(slot / CHAR_W);
    size_t max = max_chars < 4 ? 4 : (size_t)max_chars;
    truncate_label(&l, t.data, max > 40 ? 40 : max);
    double lx = gx + slot / 2;
    if (L->slant) {
      /* slanted at 45°: lines one LINE_H apart at least (bar_layout) */
      dc_buf_puts(c->svg.b, "<text x=\"");
      rep_svg_num(&c->svg, lx);
      dc_buf_puts(c->svg.b, "\" y=\"");
      rep_svg_num(&c->svg, y->px0 + 14);
      dc_buf_puts(c->svg.b, "\" text-anchor=\"end\" class=\"tick\" "
                            "transform=\"rotate(-45 ");
      rep_svg_num(&c->svg, lx);
      dc_buf_putc(c->svg.b, ' ');
      rep_svg_num(&c->svg, y->px0 + 14);
      dc_buf_puts(c->svg.b, ")\">");
      rep_svg_title(&c->svg, t.data);
      dc_buf_clear(&l);
      truncate_label(&l, t.data, SLANT_CHARS);
      dc_html_escape(c->svg.b, l.data);
      dc_buf_puts(c->svg.b, "</text>\n");
    } else {
      rep_svg_text(&c->svg, lx, y->px0 + 16, "middle", "class=\"tick\"",
                   l.data);
    }
    dc_buf_free(&t);
    dc_buf_free(&l);
  }
  if (scol >= 0 || any_oom) {
    double lx = W - LEGEND_W + 10, ly = TOP + 4;
    if (scol >= 0) {
      rep_svg_text(&c->svg, lx, ly, "start", "class=\"legend-title\"",
                   r->cols[scol]);
      for (int32_t s = 0; s < n_series; s++) {
        /* the series' value: from any row of the panel that has it */
        ly += 18;
        const char *name = "";
        for (int32_t g = g0; g < g1 && !*name; g++) {
          int64_t i = cell[(int64_t)g * n_series + s];
          if (i >= 0) name = r->rows[i].cells[scol];
        }
        legend_entry(c, s, lx, ly, name, false);
      }
    }
    if (any_oom) legend_oom(c, lx, ly + 18);
  }
  rep_svg_close(&c->svg);
}

static void bar_chart(rep_chart *c) {
  const dc_report *r = c->r;
  int64_t n = r->n_rows;
  /* the series parameter: the last swept one with at most eight values */
  int32_t scol = -1;
  for (int32_t i = c->n_swept - 1; i >= 0 && c->n_swept >= 2; i--) {
    keyset v = {0};
    dc_buf key = {0};
    for (int64_t j = 0; j < n && v.n <= REP_SERIES_MAX; j++) {
      row_key(c, &r->rows[j], -1, c->swept[i], &key);
      keyset_index(&v, key.data);
    }
    bool few = v.n <= REP_SERIES_MAX;
    dc_map_free(&v.map);
    dc_buf_free(&key);
    if (few) {
      scol = c->swept[i];
      break;
    }
  }
  keyset gs = {0}, ss = {0};
  int32_t *gi = dc_xcalloc((size_t)n + 1, sizeof *gi);
  int32_t *si = dc_xcalloc((size_t)n + 1, sizeof *si);
  dc_buf key = {0};
  for (int64_t i = 0; i < n; i++) {
    if (c->n_swept == 0) { /* nothing swept: a bar per row */
      dc_buf_clear(&key);
      dc_buf_printf(&key, "%lld", (long long)i);
    } else {
      row_key(c, &r->rows[i], scol, -1, &key);
    }
    gi[i] = keyset_index(&gs, key.data);
    if (scol >= 0) {
      row_key(c, &r->rows[i], -1, scol, &key);
      si[i] = keyset_index(&ss, key.data);
    }
  }
  int32_t ng = gs.n, nsr = scol >= 0 ? ss.n : 1;
  int64_t *cell = dc_xmalloc(((size_t)ng * (size_t)nsr + 1) * sizeof *cell);
  for (int64_t k = 0; k < (int64_t)ng * nsr; k++) cell[k] = -1;
  for (int64_t i = 0; i < n; i++) {
    int64_t k = (int64_t)gi[i] * nsr + si[i];
    if (cell[k] < 0) cell[k] = i;
  }
  int32_t per_panel = BARS_PER_PANEL / nsr;
  if (per_panel < 1) per_panel = 1;
  int32_t max_groups = per_panel * MAX_PANELS;
  int32_t drawn = ng < max_groups ? ng : max_groups;
  double ymin = 0.0, ymax = -INFINITY;
  bool any_oom = false, ratios = false;
  for (int64_t i = 0; i < n; i++) {
    if (gi[i] >= drawn) continue;
    const dc_report_row *row = &r->rows[i];
    double v = rep_chart_value(c, row);
    if (!rep_chart_fits(row)) any_oom = true;
    else if (isfinite(v)) {
      if (v > ymax) ymax = v;
      if (v < ymin) ymin = v;
    }
    if (isfinite(row->fig[DC_REPORT_FIG_SPEEDUP])) ratios = true;
  }
  if (!(ymax > ymin)) ymax = ymin + 1.0;
  rep_axis y;
  rep_axis_linear(&y, ymin, ymax * (ratios ? 1.14 : 1.06), H - 70, TOP);
  dc_buf_puts(c->out, "<figure>\n");
  bar_labels L = bar_layout(c, cell, drawn, per_panel, nsr, scol);
  for (int32_t g0 = 0; g0 < drawn; g0 += per_panel) {
    int32_t g1 = g0 + per_panel < drawn ? g0 + per_panel : drawn;
    bar_panel(c, cell, g0, g1, nsr, scol, &y, any_oom, ratios, &L);
  }
  dc_buf_clear(&c->tmp);
  dc_buf_printf(&c->tmp, "%s of %lld points", c->metric, (long long)n);
  if (scol >= 0) dc_buf_printf(&c->tmp, ", one bar per %s", r->cols[scol]);
  if (ratios)
    dc_buf_puts(&c->tmp, "; ×: speedup over the baseline (the baseline's "
                         "e2e_ms over this point's)");
  dc_buf_puts(&c->tmp, ".");
  dc_buf_puts(c->out, "<figcaption>");
  dc_html_escape(c->out, c->tmp.data);
  dc_buf_puts(c->out, "</figcaption>\n</figure>\n");
  if (ng > drawn)
    rep_chart_note(c, "%d of %d groups drawn (%d panels); the others are in "
                     "the table.",
                   (int)drawn, (int)ng, MAX_PANELS);
  free(cell);
  free(gi);
  free(si);
  dc_buf_free(&key);
  dc_map_free(&gs.map);
  dc_map_free(&ss.map);
}

void rep_chart_main(rep_chart *c) {
  const dc_report *r = c->r;
  /* the numeric swept parameter with the most distinct values */
  int32_t xcol = -1, best = 1;
  for (int32_t i = 0; i < c->n_swept; i++) {
    int32_t col = c->swept[i];
    bool numeric = true;
    for (int64_t j = 0; j < r->n_rows && numeric; j++)
      numeric = isfinite(r->rows[j].num[col]);
    if (!numeric) continue;
    keyset v = {0};
    dc_buf key = {0};
    for (int64_t j = 0; j < r->n_rows; j++) {
      row_key(c, &r->rows[j], -1, col, &key);
      keyset_index(&v, key.data);
    }
    if (v.n > best) {
      best = v.n;
      xcol = col;
    }
    dc_map_free(&v.map);
    dc_buf_free(&key);
  }
  c->svg.where = "the main chart";
  dc_buf_puts(c->out, "<section id=\"main\">\n<h2>");
  dc_html_escape(c->out, c->metric);
  if (xcol >= 0) {
    dc_buf_puts(c->out, " against ");
    dc_html_escape(c->out, r->cols[xcol]);
  }
  dc_buf_puts(c->out, "</h2>\n");
  /* A chart of points none of which fits has no bar or line to draw
   * (their times are for memory the GPU lacks): say so above it. */
  int64_t drawable = 0;
  for (int64_t j = 0; j < r->n_rows; j++)
    drawable += rep_chart_fits(&r->rows[j]) &&
                isfinite(rep_chart_value(c, &r->rows[j]));
  if (r->n_rows > 0 && drawable == 0)
    rep_chart_note(c, "Nothing to draw: none of the %lld points fits in GPU "
                     "memory (fits false; marked ✕ below, shaded in the "
                     "table), so none has a %s to chart. Give the study more "
                     "GPUs, GPUs with more memory, or smaller tables; the "
                     "table still lists what each would take.",
                   (long long)r->n_rows, c->metric);
  if (xcol >= 0)
    line_chart(c, xcol);
  else
    bar_chart(c);
  dc_buf_puts(c->out, "</section>\n");
}
