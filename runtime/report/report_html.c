/*
 * report_html.c — the report page (spec/report.md): one self-contained
 * HTML file, readable offline and attachable to an e-mail. Everything is
 * inline — the style sheet, the SVG charts (report_chart.c,
 * report_points.c), the fill patterns they share — and nothing is ever
 * fetched. A script of a dozen lines only makes the table sortable by a
 * click on a heading; the page reads the same without it.
 *
 * The markup is also well-formed XML (void elements self-closed, the
 * script free of '<' and '&'), so both an HTML and an XML parser read it;
 * tests/report/check_report.py checks that, and every text goes through
 * dc_html_escape (report_svg.c, below every writer), the one escaping
 * function.
 *
 * The table repeats the file's rows and columns as they were written
 * (the CSV's, or the JSON lines' columns without their detail), up to
 * 5,000 rows: a bigger table is what the CSV is for, and a note says how
 * many rows were left out, so a 100,000-point report stays a few MB.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/report/report_int.h"

enum { MAX_TABLE_ROWS = 5000 };

/* Okabe & Ito's palette, neighbours differing in lightness; the breakdown
 * has its own four (g0..g3); patterns p1..p7 tell series apart in grey. */
static const char style[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;"
    "margin:24px auto;max-width:1120px;padding:0 16px;color:#1a1a1a}\n"
    "h1{font-size:1.5em;margin:0 0 4px}h2{font-size:1.15em;margin:28px 0 "
    "8px;border-bottom:1px solid #ddd;padding-bottom:4px}\n"
    "dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px "
    "12px;font-size:.9em}dl.meta dt{color:#555}dl.meta dd{margin:0}\n"
    "code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;"
    "word-break:break-all}\n"
    "figure{margin:8px 0 16px}figcaption{font-size:.85em;color:#444}\n"
    "p.note{font-size:.88em;background:#fff8e1;border-left:3px solid "
    "#E69F00;padding:4px 8px}\n"
    "svg{max-width:100%;height:auto;font-family:system-ui,sans-serif;"
    "display:block}svg.defs{position:absolute;width:0;height:0}\n"
    ".tick{font-size:11px;fill:#333}.title{font-size:12px;font-weight:600;"
    "fill:#222}.legend{font-size:11px;fill:#222}.legend-title{font-size:11px;"
    "font-weight:600;fill:#222}.val{font-size:10px;fill:#333}"
    ".ratio{font-size:10px;font-weight:700;fill:#000}\n"
    ".grid{stroke:#e6e6e6}.axis{stroke:#444}\n"
    ".s0{--c:#0072B2}.s1{--c:#E69F00}.s2{--c:#009E73}.s3{--c:#CC79A7}"
    ".s4{--c:#56B4E9}.s5{--c:#D55E00}.s6{--c:#F0E442}.s7{--c:#000000}\n"
    ".ln{fill:none;stroke:var(--c);stroke-width:2}"
    ".pt{fill:var(--c);stroke:#fff;stroke-width:.8}.pt.s7{fill:#fff;"
    "stroke:#000;stroke-width:1.4}.bar{fill:var(--c);stroke:#222;"
    "stroke-width:.5}\n"
    ".pat{stroke:none;pointer-events:none}\n"
    ".seg{stroke:#fff;stroke-width:.5}.g0{fill:#0072B2}.g1{fill:#E69F00}"
    ".g2{fill:#CC79A7}.g3{fill:#D9D9D9}\n"
    ".oom{fill:url(#poom);stroke:#D55E00;stroke-dasharray:3 2}"
    ".oom-mark{fill:#D55E00;font-weight:700;font-size:12px}\n"
    ".bar.emb{fill:#0072B2}.bar.mem{fill:#009E73}.bar.crit{stroke:#000;"
    "stroke-width:2.5}.crit-mark{font-size:10px;font-weight:700}"
    ".hbm{stroke:#000;stroke-dasharray:6 3;stroke-width:1.5}\n"
    ".scroll{overflow:auto;max-width:100%;max-height:80vh;margin-top:8px;"
    "border:1px solid #ddd}thead th{position:sticky;top:0}\n"
    "table{border-collapse:collapse;font-size:.85em}"
    "th,td{border:1px solid #ddd;padding:2px 6px}th{background:#f3f3f3;"
    "cursor:pointer;text-align:left}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}tr.unfit td{background:#fde7df}\n";

/* Sorts the table by a clicked column (numbers as numbers). */
static const char script[] =
    "document.querySelectorAll('table.sortable th').forEach(function(th,i){"
    "th.addEventListener('click',function(){"
    "var tb=th.closest('table').tBodies[0],up=th.dataset.up!=='1';"
    "th.dataset.up=up?'1':'0';"
    "Array.from(tb.rows).sort(function(a,b){"
    "var x=a.cells[i].textContent,y=b.cells[i].textContent,"
    "p=parseFloat(x),q=parseFloat(y),"
    "c=isNaN(p)||isNaN(q)?x.localeCompare(y):p-q;return up?c:-c;})"
    ".forEach(function(r){tb.appendChild(r);});});});\n";

static const char patterns[] =
    "<svg class=\"defs\" xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" "
    "height=\"0\" aria-hidden=\"true\"><defs>\n"
    "<pattern id=\"p1\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
    "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" "
    "stroke=\"#000\" stroke-opacity=\".5\" stroke-width=\"2\"/></pattern>\n"
    "<pattern id=\"p2\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\">"
    "<circle cx=\"2.5\" cy=\"2.5\" r=\"1.1\" fill=\"#000\" "
    "fill-opacity=\".55\"/></pattern>\n"
    "<pattern id=\"p3\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
    "<path d=\"M0 0L6 6M6 0L0 6\" stroke=\"#000\" stroke-opacity=\".45\" "
    "stroke-width=\"1\"/></pattern>\n"
    "<pattern id=\"p4\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\">"
    "<line x1=\"0\" y1=\"2.5\" x2=\"5\" y2=\"2.5\" stroke=\"#000\" "
    "stroke-opacity=\".5\" stroke-width=\"1.2\"/></pattern>\n"
    "<pattern id=\"p5\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\">"
    "<line x1=\"2.5\" y1=\"0\" x2=\"2.5\" y2=\"5\" stroke=\"#000\" "
    "stroke-opacity=\".5\" stroke-width=\"1.2\"/></pattern>\n"
    "<pattern id=\"p6\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
    "patternTransform=\"rotate(-45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" "
    "stroke=\"#fff\" stroke-opacity=\".8\" stroke-width=\"2\"/></pattern>\n"
    "<pattern id=\"p7\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
    "<rect x=\"0\" y=\"0\" width=\"3\" height=\"3\" fill=\"#fff\" "
    "fill-opacity=\".6\"/></pattern>\n"
    "<pattern id=\"poom\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\">"
    "<rect width=\"8\" height=\"8\" fill=\"#fff\" fill-opacity=\".75\"/>"
    "<path d=\"M0 0L8 8M8 0L0 8\" stroke=\"#D55E00\" stroke-width=\"1.6\"/>"
    "</pattern>\n"
    "</defs></svg>\n";

static void meta_row(dc_buf *b, const char *name, const char *value,
                     bool code) {
  dc_buf_puts(b, "<dt>");
  dc_html_escape(b, name);
  dc_buf_puts(b, code ? "</dt><dd><code>" : "</dt><dd>");
  dc_html_escape(b, value);
  dc_buf_puts(b, code ? "</code></dd>\n" : "</dd>\n");
}

static void table(const dc_report *r, dc_buf *b) {
  dc_buf_puts(b, "<section id=\"table\">\n<h2>Table</h2>\n");
  int64_t n = r->n_rows < MAX_TABLE_ROWS ? r->n_rows : MAX_TABLE_ROWS;
  if (n < r->n_rows)
    dc_buf_printf(b, "<p class=\"note\">The first %lld of %lld rows; the "
                     "whole table is in the file the report was made "
                     "from.</p>\n",
                  (long long)n, (long long)r->n_rows);
  dc_buf_puts(b, "<div class=\"scroll\">\n<table class=\"sortable\">\n"
                 "<thead><tr>");
  for (int32_t c = 0; c < r->n_cols; c++) {
    dc_buf_puts(b, "<th>");
    dc_html_escape(b, r->cols[c]);
    dc_buf_puts(b, "</th>");
  }
  dc_buf_puts(b, "</tr></thead>\n<tbody>\n");
  for (int64_t i = 0; i < n; i++) {
    const dc_report_row *row = &r->rows[i];
    dc_buf_puts(b, rep_chart_fits(row) ? "<tr>" : "<tr class=\"unfit\">");
    for (int32_t c = 0; c < r->n_cols; c++) {
      dc_buf_puts(b, r->is_param[c] ? "<td>" : "<td class=\"num\">");
      dc_html_escape(b, row->cells[c]);
      dc_buf_puts(b, "</td>");
    }
    dc_buf_puts(b, "</tr>\n");
  }
  dc_buf_puts(b, "</tbody>\n</table>\n</div>\n</section>\n");
}

/* Parameter columns with at least two distinct values. */
static int32_t swept_columns(const dc_report *r, int32_t *out) {
  int32_t n = 0;
  for (int32_t c = 0; c < r->n_cols; c++) {
    if (!r->is_param[c] || r->is_attr[c]) continue;
    for (int64_t i = 1; i < r->n_rows; i++)
      if (strcmp(r->rows[i].cells[c], r->rows[0].cells[c]) != 0) {
        out[n++] = c;
        break;
      }
  }
  return n;
}

bool dc_report_render(const dc_report *r, const dc_report_meta *meta,
                      dc_buf *out, dc_diags *d) {
  const char *metric = meta->metric ? meta->metric : "e2e_ms";
  rep_chart c;
  memset(&c, 0, sizeof c);
  c.r = r;
  c.metric = metric;
  c.metric_col = -1;
  c.metric_fig = -1;
  for (int32_t i = 0; i < r->n_cols; i++)
    if (!r->is_param[i] && strcmp(r->cols[i], metric) == 0) c.metric_col = i;
  for (int f = 0; f < DC_REPORT_FIG_COUNT_ && c.metric_col < 0; f++)
    if (strcmp(dc_report_fig_name((dc_report_fig)f), metric) == 0)
      c.metric_fig = f;
  DC_ASSERT(c.metric_col >= 0 || c.metric_fig >= 0); /* check_metric */
  c.swept = dc_xcalloc((size_t)r->n_cols + 1, sizeof *c.swept);
  c.n_swept = swept_columns(r, c.swept);
  dc_buf body = {0};
  c.out = &body;
  c.svg.b = &body;

  dc_buf_puts(&body, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                     "<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" "
                     "content=\"width=device-width, initial-scale=1\"/>\n"
                     "<title>");
  dc_html_escape(&body, meta->title);
  dc_buf_puts(&body, " — dlrmc report</title>\n<style>\n");
  dc_buf_puts(&body, style);
  dc_buf_puts(&body, "</style>\n</head>\n<body>\n");
  dc_buf_puts(&body, patterns);
  dc_buf_puts(&body, "<header>\n<h1>");
  dc_html_escape(&body, meta->title);
  dc_buf_puts(&body, "</h1>\n<dl class=\"meta\">\n");
  meta_row(&body, "command", meta->command ? meta->command : "", true);
  meta_row(&body, "dlrmc", meta->version ? meta->version : "", false);
  dc_buf_clear(&c.tmp);
  dc_buf_printf(&c.tmp, "%lld", (long long)r->n_rows);
  meta_row(&body, r->mode_table ? "rows" : "points", c.tmp.data, false);
  meta_row(&body, "charted", metric, false);
  dc_buf_puts(&body, "</dl>\n</header>\n");

  rep_chart_main(&c);
  if (!r->mode_table) { /* --per-rank and capacity rows carry no detail */
    rep_chart_breakdown(&c);
    rep_chart_ranks(&c);
  }
  table(r, &body);
  dc_buf_puts(&body, "<script>\n");
  dc_buf_puts(&body, script);
  dc_buf_puts(&body, "</script>\n</body>\n</html>\n");

  bool ok = !c.svg.bad;
  if (!ok)
    dc_diag_error(d, DC_DIAG_BAD_RESULTS, (dc_span){0},
                  "%s: a coordinate of %s is not finite; nothing written",
                  r->source, c.svg.failed ? c.svg.failed : "a chart");
  else
    dc_buf_append(out, body.data, body.len);
  dc_buf_free(&body);
  dc_buf_free(&c.tmp);
  free(c.swept);
  return ok;
}
