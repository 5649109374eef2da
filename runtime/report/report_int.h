/*
 * report_int.h — internal to runtime/report/: the SVG writer and number
 * labels (report_svg.c), the chart planner's shared view of the table
 * (report_chart.c) and the charts of one point each (report_points.c).
 *
 * Every coordinate goes through rep_svg_num, which refuses a non-finite
 * value: it writes 0 and marks the writer bad, and the page is then not
 * written at all (dc_report_render fails), so no NaN ever reaches a file.
 */
#ifndef DC_RUNTIME_REPORT_REPORT_INT_H
#define DC_RUNTIME_REPORT_REPORT_INT_H

#include "runtime/report/report.h"

/* ---- the SVG writer (report_svg.c) ------------------------------------- */

typedef struct rep_svg {
  dc_buf *b;
  bool bad;          /* a non-finite coordinate was refused */
  const char *where; /* the chart being written */
  const char *failed; /* where the first refusal happened */
} rep_svg;

/* A coordinate or length: one decimal, finite or refused. */
void rep_svg_num(rep_svg *s, double v);
/* <svg> with a viewBox of w×h and an accessible label; rep_svg_close. */
void rep_svg_open(rep_svg *s, double w, double h, const char *label);
void rep_svg_close(rep_svg *s);
/* Shapes; `attrs` is trusted markup (class="..."), NULL for none. An
 * element is left open (for a <title>) when `open` is set: close it with
 * rep_svg_end(s, "rect"). */
void rep_svg_rect(rep_svg *s, double x, double y, double w, double h,
                  const char *attrs, bool open);
void rep_svg_line(rep_svg *s, double x1, double y1, double x2, double y2,
                  const char *attrs);
/* Text, escaped; anchor "start" | "middle" | "end". */
void rep_svg_text(rep_svg *s, double x, double y, const char *anchor,
                  const char *attrs, const char *text);
void rep_svg_title(rep_svg *s, const char *text);
void rep_svg_end(rep_svg *s, const char *element);
/* data-value="v" (9 significant digits: what tests compare). */
void rep_svg_data_value(rep_svg *s, double v);

/* ---- axes ----------------------------------------------------------------
 * A linear axis from 0 (or lo) to a "nice" maximum with 1-2-5 ticks, or
 * a base-2 logarithmic one (batch sizes, GPU counts) with ticks at powers
 * of two. map() takes a value to pixels. */
enum { REP_AXIS_MAX_TICKS = 24 };

typedef struct rep_axis {
  double lo, hi;      /* value range (log axes: positive) */
  bool log2;
  double px0, px1;    /* pixels of lo and hi */
  int n_ticks;
  double ticks[REP_AXIS_MAX_TICKS];
} rep_axis;

void rep_axis_linear(rep_axis *a, double lo, double hi, double px0,
                     double px1);
/* Ticks at the values given when there are few, else at powers of two. */
void rep_axis_log2(rep_axis *a, double lo, double hi, const double *values,
                   int n_values, double px0, double px1);
double rep_axis_map(const rep_axis *a, double v);

/* ---- labels --------------------------------------------------------------
 * A unit from a metric's name: _ms → "ms", _gib → "GiB", samples_per_s →
 * "samples/s", speedup → "×", otherwise "". */
const char *rep_unit(const char *metric);
/* A tick label: 3 significant digits (4 below 10,000), k/M/G above (binary k for
 * whole multiples of 1024: 16384 is "16k"), then " unit" when given. */
void rep_label(dc_buf *b, double v, const char *unit);

/* ---- palette --------------------------------------------------------------
 * Okabe & Ito's eight colours, ordered so that neighbours differ in
 * lightness; each series also has its own dash pattern, marker shape
 * and (bars) fill pattern, so greyscale prints keep them apart. */
enum { REP_SERIES_MAX = 8 };
/* Draws series k's marker (k < REP_SERIES_MAX) centred at (x, y), with
 * `attrs`, open for a <title> when `open`; returns the element's name
 * for rep_svg_end. */
const char *rep_svg_marker(rep_svg *s, int k, double x, double y,
                           const char *attrs, bool open);
/* The dash array of series k's line ("" for solid). */
const char *rep_series_dash(int k);

/* ---- the page's charts (report_chart.c, report_points.c) --------------- */

typedef struct rep_chart {
  const dc_report *r;
  const char *metric;   /* the charted metric */
  int32_t metric_col;   /* its column, or -1: a detail figure */
  int metric_fig;       /* its figure, or -1 */
  int32_t *swept;       /* parameter columns with ≥ 2 distinct values */
  int32_t n_swept;
  rep_svg svg;
  dc_buf *out;
  dc_buf tmp;           /* scratch for labels */
} rep_chart;

double rep_chart_value(const rep_chart *c, const dc_report_row *row);
/* False when the row's `fits` is known and false. */
bool rep_chart_fits(const dc_report_row *row);
/* "value · value" of the swept parameters (all of them when `skip` < 0,
 * else all but column `skip`), appended to b. */
void rep_chart_point_label(const rep_chart *c, const dc_report_row *row,
                           int32_t skip, dc_buf *b);
/* A note under a section (an omitted or decimated chart). */
void rep_chart_note(rep_chart *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "2nd", "3rd", "11th", "21st": k as an English ordinal, for notes such
 * as "every 2nd of 30 points". */
const char *rep_ordinal(int64_t k, char *buf, size_t cap);

/* The charted metric against the sweep: lines on a numeric axis, grouped
 * bars otherwise (report_chart.c). */
void rep_chart_main(rep_chart *c);
/* Where each point's time goes (report_points.c). */
void rep_chart_breakdown(rep_chart *c);
/* Per-rank embedding time and memory of sharded points (report_points.c). */
void rep_chart_ranks(rep_chart *c);

#endif /* DC_RUNTIME_REPORT_REPORT_INT_H */
