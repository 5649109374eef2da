/*
 * report_svg.c — the SVG vocabulary of the report: elements with checked
 * coordinates, axes (linear 1-2-5, base-2 logarithmic), tick labels with
 * units, and the series' markers and dashes; and dc_html_escape, the one
 * escaping of text and attribute values, which every writer above uses.
 *
 * Coordinates are written with one decimal (a tenth of a pixel is below
 * what a screen or a printer shows, and it keeps a 2,000-point chart
 * small); rep_svg_num refuses what is not finite (report_int.h). Numbers
 * are printed in the C locale (the driver sets it).
 */
#include <math.h>
#include <string.h>

#include "runtime/report/report_int.h"

void dc_html_escape(dc_buf *b, const char *s) {
  if (!s) return;
  const char *run = s;
  size_t left = strlen(s);
  while (*s) {
    const char *rep = NULL;
    unsigned char ch = (unsigned char)*s;
    size_t n = 1;
    switch (ch) {
    case '&': rep = "&amp;"; break;
    case '<': rep = "&lt;"; break;
    case '>': rep = "&gt;"; break;
    case '"': rep = "&quot;"; break;
    case '\'': rep = "&#39;"; break;
    default:
      /* A results table is any bytes (a Latin-1 CSV): the page must be
       * valid UTF-8 with no control characters, so an invalid sequence
       * or a control byte other than tab and newline becomes U+FFFD. */
      n = dc_utf8_len((const unsigned char *)s, left);
      if (n == 0 || (ch < 0x20 && ch != '\t' && ch != '\n') || ch == 0x7f) {
        rep = "\xEF\xBF\xBD";
        n = 1;
      }
      break;
    }
    if (rep) {
      dc_buf_append(b, run, (size_t)(s - run));
      dc_buf_puts(b, rep);
      run = s + n;
    }
    s += n, left -= n;
  }
  dc_buf_append(b, run, (size_t)(s - run));
}

void rep_svg_num(rep_svg *s, double v) {
  if (!isfinite(v) || fabs(v) > 1e7) {
    if (!s->bad) s->failed = s->where;
    s->bad = true;
    v = 0.0;
  }
  dc_buf_put_double(s->b, v, 1);
}

static void attr_num(rep_svg *s, const char *name, double v) {
  dc_buf_putc(s->b, ' ');
  dc_buf_puts(s->b, name);
  dc_buf_puts(s->b, "=\"");
  rep_svg_num(s, v);
  dc_buf_putc(s->b, '"');
}

static void attrs_raw(rep_svg *s, const char *attrs) {
  if (attrs && *attrs) {
    dc_buf_putc(s->b, ' ');
    dc_buf_puts(s->b, attrs);
  }
}

void rep_svg_open(rep_svg *s, double w, double h, const char *label) {
  dc_buf_puts(s->b, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ");
  rep_svg_num(s, w);
  dc_buf_putc(s->b, ' ');
  rep_svg_num(s, h);
  dc_buf_putc(s->b, '"');
  attr_num(s, "width", w);
  attr_num(s, "height", h);
  dc_buf_puts(s->b, " role=\"img\" aria-label=\"");
  dc_html_escape(s->b, label);
  dc_buf_puts(s->b, "\">\n");
}

void rep_svg_close(rep_svg *s) { dc_buf_puts(s->b, "</svg>\n"); }

void rep_svg_end(rep_svg *s, const char *element) {
  dc_buf_puts(s->b, "</");
  dc_buf_puts(s->b, element);
  dc_buf_puts(s->b, ">\n");
}

static void finish(rep_svg *s, bool open) {
  dc_buf_puts(s->b, open ? ">" : "/>\n");
}

void rep_svg_rect(rep_svg *s, double x, double y, double w, double h,
                  const char *attrs, bool open) {
  if (w < 0) w = 0;
  if (h < 0) h = 0;
  dc_buf_puts(s->b, "<rect");
  attr_num(s, "x", x);
  attr_num(s, "y", y);
  attr_num(s, "width", w);
  attr_num(s, "height", h);
  attrs_raw(s, attrs);
  finish(s, open);
}

void rep_svg_line(rep_svg *s, double x1, double y1, double x2, double y2,
                  const char *attrs) {
  dc_buf_puts(s->b, "<line");
  attr_num(s, "x1", x1);
  attr_num(s, "y1", y1);
  attr_num(s, "x2", x2);
  attr_num(s, "y2", y2);
  attrs_raw(s, attrs);
  finish(s, false);
}

void rep_svg_text(rep_svg *s, double x, double y, const char *anchor,
                  const char *attrs, const char *text) {
  dc_buf_puts(s->b, "<text");
  attr_num(s, "x", x);
  attr_num(s, "y", y);
  if (anchor && strcmp(anchor, "start") != 0) {
    dc_buf_puts(s->b, " text-anchor=\"");
    dc_buf_puts(s->b, anchor);
    dc_buf_putc(s->b, '"');
  }
  attrs_raw(s, attrs);
  dc_buf_putc(s->b, '>');
  dc_html_escape(s->b, text);
  dc_buf_puts(s->b, "</text>\n");
}

void rep_svg_title(rep_svg *s, const char *text) {
  dc_buf_puts(s->b, "<title>");
  dc_html_escape(s->b, text);
  dc_buf_puts(s->b, "</title>");
}

void rep_svg_data_value(rep_svg *s, double v) {
  if (!isfinite(v)) {
    if (!s->bad) s->failed = s->where;
    s->bad = true;
    v = 0.0;
  }
  dc_buf_printf(s->b, " data-value=\"%.9g\"", v);
}

/* ---- axes --------------------------------------------------------------- */

static double nice_step(double range) {
  double raw = range / 5.0;
  double p = pow(10.0, floor(log10(raw)));
  double m = raw / p;
  return p * (m <= 1.0 ? 1.0 : m <= 2.0 ? 2.0 : m <= 5.0 ? 5.0 : 10.0);
}

void rep_axis_linear(rep_axis *a, double lo, double hi, double px0,
                     double px1) {
  memset(a, 0, sizeof *a);
  /* the reader bounds every figure (±1e30), so the span is finite; a
   * span that is not falls back to [0, 1] rather than NaN ticks */
  if (!isfinite(lo) || !isfinite(hi) || !isfinite(hi - lo)) lo = 0.0, hi = 1.0;
  if (hi <= lo) hi = lo + (lo != 0.0 ? fabs(lo) : 1.0);
  double step = nice_step(hi - lo);
  double first = floor(lo / step) * step;
  a->lo = first;
  a->px0 = px0;
  a->px1 = px1;
  double t = first;
  for (int i = 0; i < REP_AXIS_MAX_TICKS; i++) {
    t = first + i * step;
    /* snap values like 0.30000000000000004 to the step's grid */
    a->ticks[a->n_ticks++] = fabs(t) < step * 1e-9 ? 0.0 : t;
    if (t >= hi - step * 1e-9) break;
  }
  a->hi = t;
}

void rep_axis_log2(rep_axis *a, double lo, double hi, const double *values,
                   int n_values, double px0, double px1) {
  memset(a, 0, sizeof *a);
  if (!(lo > 0.0) || !isfinite(hi) || hi < lo) lo = 1.0, hi = 2.0;
  a->log2 = true;
  a->px0 = px0;
  a->px1 = px1;
  double l0 = log2(lo), l1 = log2(hi);
  double pad = (l1 - l0) * 0.04 + 0.1;
  a->lo = exp2(l0 - pad);
  a->hi = exp2(l1 + pad);
  if (n_values > 0 && n_values <= 12) {
    for (int i = 0; i < n_values; i++) a->ticks[a->n_ticks++] = values[i];
    return;
  }
  int e0 = dc_f64_sat_i32(ceil(l0 - 1e-9)),
      e1 = dc_f64_sat_i32(floor(l1 + 1e-9));
  int step = 1;
  while ((e1 - e0) / step + 1 > 12) step++;
  for (int e = e0; e <= e1 && a->n_ticks < REP_AXIS_MAX_TICKS; e += step)
    a->ticks[a->n_ticks++] = exp2(e);
}

double rep_axis_map(const rep_axis *a, double v) {
  double f;
  if (a->log2)
    f = v > 0 ? (log2(v) - log2(a->lo)) / (log2(a->hi) - log2(a->lo)) : 0.0;
  else
    f = a->hi > a->lo ? (v - a->lo) / (a->hi - a->lo) : 0.0;
  return a->px0 + f * (a->px1 - a->px0);
}

/* ---- labels ------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

const char *rep_unit(const char *metric) {
  if (ends_with(metric, "_ms")) return "ms";
  if (ends_with(metric, "_gib")) return "GiB";
  if (strcmp(metric, "samples_per_s") == 0) return "samples/s";
  if (strcmp(metric, "comm_bytes") == 0) return "B";
  if (strcmp(metric, "speedup") == 0) return "×";
  return "";
}

void rep_label(dc_buf *b, double v, const char *unit) {
  double a = fabs(v);
  double whole = floor(a);
  if (a >= 1024 && whole == a && fmod(a, 1024.0) == 0.0) {
    if (a >= 1048576 && fmod(a, 1048576.0) == 0.0)
      dc_buf_printf(b, "%.4gM", v / 1048576.0);
    else
      dc_buf_printf(b, "%.4gk", v / 1024.0);
  } else if (a >= 1e9) {
    dc_buf_printf(b, "%.3gG", v / 1e9);
  } else if (a >= 1e6) {
    dc_buf_printf(b, "%.3gM", v / 1e6);
  } else if (a >= 1e4) {
    dc_buf_printf(b, "%.3gk", v / 1e3);
  } else if (a == 0.0) {
    dc_buf_putc(b, '0');
  } else {
    /* four digits below 10,000 keep "4000" from becoming "4e+03" */
    dc_buf_printf(b, a >= 1000 ? "%.4g" : "%.3g", v);
  }
  if (unit && *unit) {
    if (strcmp(unit, "×") != 0) dc_buf_putc(b, ' ');
    dc_buf_puts(b, unit);
  }
}

/* ---- markers ----------------------------------------------------------- */

static const char *const dashes[REP_SERIES_MAX] = {
    "", "6 3", "2 2", "8 3 2 3", "4 4", "10 3", "2 5", "6 2 2 2"};

const char *rep_series_dash(int k) { return dashes[k % REP_SERIES_MAX]; }

static void polygon(rep_svg *s, double x, double y, const double *pts, int n,
                    const char *attrs, bool open) {
  dc_buf_puts(s->b, "<polygon points=\"");
  for (int i = 0; i < n; i++) {
    if (i) dc_buf_putc(s->b, ' ');
    rep_svg_num(s, x + pts[2 * i]);
    dc_buf_putc(s->b, ',');
    rep_svg_num(s, y + pts[2 * i + 1]);
  }
  dc_buf_putc(s->b, '"');
  attrs_raw(s, attrs);
  finish(s, open);
}

const char *rep_svg_marker(rep_svg *s, int k, double x, double y,
                           const char *attrs, bool open) {
  static const double tri[] = {0, -4.5, 4.2, 3, -4.2, 3};
  static const double dia[] = {0, -4.8, 4.2, 0, 0, 4.8, -4.2, 0};
  static const double down[] = {0, 4.5, 4.2, -3, -4.2, -3};
  static const double pent[] = {0, -4.5, 4.3, -1.4, 2.6, 3.6, -2.6, 3.6,
                                -4.3, -1.4};
  static const double hex[] = {-2.2, -3.9, 2.2, -3.9, 4.4, 0, 2.2, 3.9,
                               -2.2, 3.9, -4.4, 0};
  switch (k % REP_SERIES_MAX) {
  case 0:
  case 7:
    dc_buf_puts(s->b, "<circle");
    attr_num(s, "cx", x);
    attr_num(s, "cy", y);
    attr_num(s, "r", 3.6);
    attrs_raw(s, attrs);
    /* the eighth is hollow: its fill is the page's */
    if (k % REP_SERIES_MAX == 7) dc_buf_puts(s->b, " fill=\"#fff\"");
    finish(s, open);
    return "circle";
  case 1:
    rep_svg_rect(s, x - 3.3, y - 3.3, 6.6, 6.6, attrs, open);
    return "rect";
  case 2: polygon(s, x, y, tri, 3, attrs, open); return "polygon";
  case 3: polygon(s, x, y, dia, 4, attrs, open); return "polygon";
  case 4: polygon(s, x, y, down, 3, attrs, open); return "polygon";
  case 5: polygon(s, x, y, pent, 5, attrs, open); return "polygon";
  default: polygon(s, x, y, hex, 6, attrs, open); return "polygon";
  }
}
