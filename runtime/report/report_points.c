/*
 * report_points.c — the report's per-point charts (spec/report.md):
 *
 * - where each point's iteration goes: a horizontal stacked bar of
 *   compute_ms, exposed_comm_ms, exposed_host_ms and other_idle_ms (they
 *   add up to e2e_ms; runtime/metrics.c defines them), one row per point;
 * - for points run on several GPUs, each rank's embedding time and memory
 *   against the device's HBM, the critical rank (the slowest, which sets
 *   e2e_ms) marked.
 *
 * Both read figures a CSV lacks unless output.columns names them (the
 * breakdown) or never has (per-rank): JSON lines rows carry them in their
 * "detail", and without them the section says so instead of a chart.
 * Decimation: at most 60 breakdown rows and 8 per-rank charts, taken
 * evenly over the table's order, with a note saying so.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runtime/report/report_int.h"

enum {
  W = 760,
  LABEL_W = 236,
  ROW_H = 18,
  MAX_ROWS = 60,
  MAX_RANK_CHARTS = 8,
  RANK_H = 250
};

static const dc_report_fig segs[] = {
    DC_REPORT_FIG_COMPUTE, DC_REPORT_FIG_EXPOSED_COMM,
    DC_REPORT_FIG_EXPOSED_HOST, DC_REPORT_FIG_OTHER_IDLE};
static const char *const seg_names[] = {
    "GPU compute", "exposed communication", "exposed host overhead",
    "other idle"};

static void label_of(const rep_chart *c, const dc_report_row *row,
                     size_t max, dc_buf *b) {
  dc_buf full = {0};
  rep_chart_point_label(c, row, -1, &full);
  size_t n = full.len;
  if (n <= max) {
    dc_buf_puts(b, full.data);
  } else {
    size_t k = max - 1;
    while (k > 0 && ((unsigned char)full.data[k] & 0xC0) == 0x80) k--;
    dc_buf_append(b, full.data, k);
    dc_buf_puts(b, "…");
  }
  dc_buf_free(&full);
}

/* Every k-th row of `n` so that at most `max` are drawn. */
static int64_t stride_of(int64_t n, int64_t max) {
  return n <= max ? 1 : (n + max - 1) / max;
}

static void x_ticks(rep_chart *c, const rep_axis *x, double y0, double y1,
                    const char *unit) {
  for (int i = 0; i < x->n_ticks; i++) {
    double px = rep_axis_map(x, x->ticks[i]);
    rep_svg_line(&c->svg, px, y0, px, y1, "class=\"grid\"");
    dc_buf_clear(&c->tmp);
    rep_label(&c->tmp, x->ticks[i], unit);
    rep_svg_text(&c->svg, px, y1 + 14, "middle", "class=\"tick\"",
                 c->tmp.data);
  }
}

static void seg_swatch(rep_chart *c, int j, double x, double y) {
  char attrs[64];
  snprintf(attrs, sizeof attrs, "class=\"seg g%d\"", j);
  rep_svg_rect(&c->svg, x, y - 10, 14, 11, attrs, false);
  if (j == 1 || j == 2) {
    snprintf(attrs, sizeof attrs, "class=\"pat\" fill=\"url(#p%d)\"",
             j == 1 ? 1 : 2);
    rep_svg_rect(&c->svg, x, y - 10, 14, 11, attrs, false);
  }
}

void rep_chart_breakdown(rep_chart *c) {
  const dc_report *r = c->r;
  dc_buf_puts(c->out, "<section id=\"breakdown\">\n<h2>Where the time "
                      "goes</h2>\n");
  c->svg.where = "the breakdown chart";
  for (int64_t i = 0; i < r->n_rows; i++)
    for (size_t j = 0; j < DC_COUNTOF(segs); j++)
      if (!isfinite(r->rows[i].fig[segs[j]])) {
        rep_chart_note(c, "No breakdown: it needs compute_ms, "
                         "exposed_comm_ms, exposed_host_ms and "
                         "other_idle_ms for every point (%s lacks %s, row "
                         "at line %d). JSON lines rows carry them in their "
                         "detail; a CSV has them only when the study's "
                         "output.columns names them.",
                       r->source, dc_report_fig_name(segs[j]),
                       (int)r->rows[i].line);
        dc_buf_puts(c->out, "</section>\n");
        return;
      }
  int64_t k = stride_of(r->n_rows, MAX_ROWS);
  int64_t n = (r->n_rows + k - 1) / k;
  double xmax = 0.0;
  for (int64_t i = 0; i < r->n_rows; i += k) {
    double t = 0.0;
    for (size_t j = 0; j < DC_COUNTOF(segs); j++) t += r->rows[i].fig[segs[j]];
    if (t > xmax) xmax = t;
  }
  double top = 40, h = top + (double)n * ROW_H + 40;
  rep_axis x;
  rep_axis_linear(&x, 0.0, xmax > 0 ? xmax : 1.0, LABEL_W, W - 110);
  dc_buf_puts(c->out, "<figure>\n");
  rep_svg_open(&c->svg, W, h, "where the time goes, per point");
  x_ticks(c, &x, top - 4, top + (double)n * ROW_H, "ms");
  /* the legend, across the top */
  double lx = LABEL_W;
  for (size_t j = 0; j < DC_COUNTOF(segs); j++) {
    seg_swatch(c, (int)j, lx, 16);
    rep_svg_text(&c->svg, lx + 18, 16, "start", "class=\"legend\"",
                 seg_names[j]);
    lx += 28 + 6.0 * (double)strlen(seg_names[j]);
  }
  char attrs[128];
  int64_t drawn = 0;
  for (int64_t i = 0; i < r->n_rows; i += k, drawn++) {
    const dc_report_row *row = &r->rows[i];
    double y = top + (double)drawn * ROW_H;
    dc_buf_clear(&c->tmp);
    label_of(c, row, 36, &c->tmp);
    rep_svg_text(&c->svg, LABEL_W - 6, y + 12, "end", "class=\"tick\"",
                 c->tmp.data);
    double at = 0.0;
    for (size_t j = 0; j < DC_COUNTOF(segs); j++) {
      double v = row->fig[segs[j]];
      double a = rep_axis_map(&x, at), b = rep_axis_map(&x, at + v);
      snprintf(attrs, sizeof attrs, "class=\"seg g%d\" data-row=\"%lld\"",
               (int)j, (long long)i);
      rep_svg_rect(&c->svg, a, y + 2, b - a, ROW_H - 4, attrs, true);
      c->svg.b->len--;
      rep_svg_data_value(&c->svg, v);
      dc_buf_putc(c->svg.b, '>');
      dc_buf_clear(&c->tmp);
      rep_chart_point_label(c, row, -1, &c->tmp);
      dc_buf_printf(&c->tmp, ": %s ", seg_names[j]);
      rep_label(&c->tmp, v, "ms");
      rep_svg_title(&c->svg, c->tmp.data);
      rep_svg_end(&c->svg, "rect");
      if (j == 1 || j == 2) {
        snprintf(attrs, sizeof attrs, "class=\"pat\" fill=\"url(#p%d)\"",
                 j == 1 ? 1 : 2);
        rep_svg_rect(&c->svg, a, y + 2, b - a, ROW_H - 4, attrs, false);
      }
      at += v;
    }
    double end = rep_axis_map(&x, at);
    if (!rep_chart_fits(row)) {
      rep_svg_rect(&c->svg, LABEL_W, y + 2, end - LABEL_W, ROW_H - 4,
                   "class=\"pat\" fill=\"url(#poom)\"", false);
      rep_svg_text(&c->svg, end + 4, y + 13, "start", "class=\"oom-mark\"",
                   "✕ does not fit");
    } else {
      dc_buf_clear(&c->tmp);
      rep_label(&c->tmp, at, "ms");
      rep_svg_text(&c->svg, end + 4, y + 13, "start", "class=\"val\"",
                   c->tmp.data);
    }
  }
  rep_svg_text(&c->svg, (LABEL_W + W - 110) / 2.0, h - 6, "middle",
               "class=\"title\"", "time per iteration (ms), critical rank");
  rep_svg_close(&c->svg);
  dc_buf_puts(c->out, "<figcaption>Each point's iteration on its critical "
                      "rank: GPU compute, then communication no compute "
                      "hides, then the idle time host overheads add, then "
                      "the rest of the idle time. Hatched with ✕: does not "
                      "fit in memory.</figcaption>\n</figure>\n");
  if (k > 1) {
    char ord[32];
    rep_chart_note(c, "Every %s of %lld points shown (decimated to at "
                     "most %d rows).",
                   rep_ordinal(k, ord, sizeof ord), (long long)r->n_rows,
                   MAX_ROWS);
  }
  dc_buf_puts(c->out, "</section>\n");
}

/* ---- per-rank charts ------------------------------------------------------ */

static void rank_panel(rep_chart *c, const dc_report_row *row, int64_t i,
                       bool mem, double x0, double x1) {
  double y0 = RANK_H - 40, y1 = 40;
  double vmax = 0.0, hbm = row->fig[DC_REPORT_FIG_HBM];
  for (int32_t k = 0; k < row->n_ranks; k++) {
    double v = mem ? row->ranks[k].mem_gib : row->ranks[k].emb_ms;
    if (v > vmax) vmax = v;
  }
  if (mem && isfinite(hbm) && hbm > vmax) vmax = hbm;
  rep_axis y;
  rep_axis_linear(&y, 0.0, vmax > 0 ? vmax * 1.05 : 1.0, y0, y1);
  const char *unit = mem ? "GiB" : "ms";
  for (int t = 0; t < y.n_ticks; t++) {
    double py = rep_axis_map(&y, y.ticks[t]);
    rep_svg_line(&c->svg, x0, py, x1, py, "class=\"grid\"");
    dc_buf_clear(&c->tmp);
    rep_label(&c->tmp, y.ticks[t], unit);
    rep_svg_text(&c->svg, x0 - 5, py + 4, "end", "class=\"tick\"",
                 c->tmp.data);
  }
  rep_svg_line(&c->svg, x0, y0, x1, y0, "class=\"axis\"");
  rep_svg_text(&c->svg, (x0 + x1) / 2, y1 - 12, "middle", "class=\"title\"",
               mem ? "memory per rank (GiB) against HBM"
                  : "embedding time per rank (ms)");
  double slot = (x1 - x0) / row->n_ranks;
  double bw = slot * 0.75;
  int32_t every = row->n_ranks <= 16 ? 1 : (row->n_ranks + 15) / 16;
  char attrs[160];
  for (int32_t k = 0; k < row->n_ranks; k++) {
    const dc_report_rank *rk = &row->ranks[k];
    double v = mem ? rk->mem_gib : rk->emb_ms;
    double bx = x0 + k * slot + (slot - bw) / 2, top = rep_axis_map(&y, v);
    bool crit = k == row->critical_rank;
    bool over = mem && !rk->fits;
    snprintf(attrs, sizeof attrs,
             "class=\"bar %s%s\" data-row=\"%lld\" data-rank=\"%d\"",
             mem ? "mem" : "emb", crit ? " crit" : "", (long long)i, (int)k);
    rep_svg_rect(&c->svg, bx, top, bw, y0 - top, attrs, true);
    c->svg.b->len--;
    rep_svg_data_value(&c->svg, v);
    dc_buf_putc(c->svg.b, '>');
    dc_buf_clear(&c->tmp);
    dc_buf_printf(&c->tmp, "rank %d%s: ", (int)k, crit ? " (critical)" : "");
    rep_label(&c->tmp, v, unit);
    if (over) dc_buf_puts(&c->tmp, ", does not fit");
    rep_svg_title(&c->svg, c->tmp.data);
    rep_svg_end(&c->svg, "rect");
    if (over)
      rep_svg_rect(&c->svg, bx, top, bw, y0 - top,
                   "class=\"pat\" fill=\"url(#poom)\"", false);
    if (k % every == 0 || crit) {
      dc_buf_clear(&c->tmp);
      dc_buf_printf(&c->tmp, "%d", (int)k);
      rep_svg_text(&c->svg, bx + bw / 2, y0 + 13, "middle", "class=\"tick\"",
                   c->tmp.data);
    }
    if (crit)
      rep_svg_text(&c->svg, bx + bw / 2, y0 + 26, "middle",
                   "class=\"crit-mark\"", "▲ critical");
  }
  if (mem && isfinite(hbm)) {
    double py = rep_axis_map(&y, hbm);
    rep_svg_line(&c->svg, x0, py, x1, py, "class=\"hbm\"");
    dc_buf_clear(&c->tmp);
    dc_buf_puts(&c->tmp, "HBM ");
    rep_label(&c->tmp, hbm, "GiB");
    rep_svg_text(&c->svg, x1, py - 4, "end", "class=\"val\"", c->tmp.data);
  }
}

void rep_chart_ranks(rep_chart *c) {
  const dc_report *r = c->r;
  int64_t n = 0;
  for (int64_t i = 0; i < r->n_rows; i++)
    if (r->rows[i].n_ranks > 1) n++;
  if (n == 0) {
    if (!r->has_detail) {
      dc_buf_puts(c->out, "<section id=\"ranks\">\n<h2>Per rank</h2>\n");
      rep_chart_note(c, "No per-rank charts: %s has no per-rank figures "
                       "(a CSV never has; JSON lines rows of points on "
                       "several GPUs carry them in their detail).",
                     r->source);
      dc_buf_puts(c->out, "</section>\n");
    }
    return;
  }
  c->svg.where = "the per-rank charts";
  dc_buf_puts(c->out, "<section id=\"ranks\">\n<h2>Per rank: embedding "
                      "load and memory</h2>\n");
  int64_t k = stride_of(n, MAX_RANK_CHARTS), seen = 0;
  for (int64_t i = 0; i < r->n_rows; i++) {
    const dc_report_row *row = &r->rows[i];
    if (row->n_ranks <= 1) continue;
    if (seen++ % k != 0) continue;
    dc_buf_puts(c->out, "<figure>\n");
    dc_buf_clear(&c->tmp);
    label_of(c, row, 80, &c->tmp);
    dc_buf lab = {0};
    dc_buf_puts(&lab, c->tmp.data);
    rep_svg_open(&c->svg, W, RANK_H, lab.data);
    rank_panel(c, row, i, false, 70, 360);
    rank_panel(c, row, i, true, 450, 740);
    rep_svg_close(&c->svg);
    dc_buf_puts(c->out, "<figcaption>");
    dc_html_escape(c->out, lab.data);
    dc_buf_printf(c->out, ": %d ranks; critical rank %d (the slowest: it "
                          "sets e2e_ms); hatched: over HBM.",
                  (int)row->n_ranks, (int)row->critical_rank);
    dc_buf_puts(c->out, "</figcaption>\n</figure>\n");
    dc_buf_free(&lab);
  }
  if (k > 1) {
    char ord[32];
    rep_chart_note(c, "Every %s of %lld points on several GPUs shown "
                     "(at most %d).",
                   rep_ordinal(k, ord, sizeof ord), (long long)n,
                   MAX_RANK_CHARTS);
  }
  dc_buf_puts(c->out, "</section>\n");
}
