/*
 * cmd_report.c — `dlrmc report RESULTS.csv|.jsonl`: the HTML report of a
 * saved run (spec/report.md), so that a big sweep, or the
 * concatenated shards of a cluster run, is charted without re-running it.
 * `dlrmc run --format html` goes through the same function
 * (cli_html_report) with the rows it has just written as JSON lines,
 * so both draw the same page from the same rows.
 *
 * The page is rendered whole in memory and written atomically: a table
 * dlrmc did not write, a column missing, a bad number — any error — and
 * nothing is written.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "runtime/report/report.h"

#ifndef DC_VERSION
#define DC_VERSION "0.0.0"
#endif

int cli_html_report(const dc_source *src, const char *title,
                    const char *command, const char *metric,
                    const char *out_path) {
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_report r;
  dc_buf page = {0};
  bool ok = dc_report_parse(src, &r, &a, &d) &&
            dc_report_check_metric(&r, metric ? metric : "e2e_ms", &d);
  if (ok) {
    dc_report_meta meta = {title, command, DC_VERSION, metric};
    ok = dc_report_render(&r, &meta, &page, &d);
  }
  if (d.count) cli_report(&d);
  if (ok) ok = cli_write_file_atomic(out_path, page.data ? page.data : "",
                                     page.len);
  dc_buf_free(&page);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return ok ? CLI_EXIT_OK : CLI_EXIT_INPUT;
}

/* The file's name without its folders and extension. */
static char *title_of(const char *path, dc_arena *a) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  return dc_arena_strndup(a, base, n);
}

static int cmd_report(int argc, char **argv) {
  const cli_command *cmd = &cli_cmd_report_def;
  if (cli_wants_help(cmd, argc, argv)) return CLI_EXIT_OK;
  const char *in = NULL, *out = NULL, *metric = NULL, *title = NULL;
  enum { O_OUT, O_METRIC, O_TITLE };
  static const cli_opt opts[] = {[O_OUT] = {"--output", "-o", true},
                                 [O_METRIC] = {"--metric", NULL, true},
                                 [O_TITLE] = {"--title", NULL, true},
                                 {0}};
  cli_iter it = cli_args(argc, argv, 1);
  char *v;
  for (int k; (k = cli_next(cmd, opts, &it, &v)) != CLI_END;) {
    switch (k) {
    case CLI_FAIL: return CLI_EXIT_USAGE;
    case O_OUT: out = v; break;
    case O_METRIC: metric = v; break;
    case O_TITLE: title = v; break;
    default:
      if (in)
        return cli_usage_error(cmd, "more than one results file ('%s' "
                                       "and '%s')",
                               in, v);
      in = v;
    }
  }
  if (!in) return cli_usage_error(cmd, "no results file given");
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  int rc = CLI_EXIT_INPUT;
  const dc_source *src = dc_report_source_load(in, &a, &d);
  if (!src) {
    cli_report(&d);
  } else {
    dc_buf line = {0};
    cli_command_line(argc, argv, &line);
    rc = cli_html_report(src, title ? title : title_of(in, &a), line.data,
                         metric, out);
    dc_buf_free(&line);
  }
  dc_diags_free(&d);
  dc_arena_free(&a);
  return rc;
}

const cli_command cli_cmd_report_def = {
    "report", cmd_report,
    "dlrmc report RESULTS.csv|RESULTS.jsonl [-o REPORT.html] "
    "[--metric NAME] [--title TEXT]",
    "Draw the HTML report (charts and table) of a saved run.",
    "Reads the CSV or JSON lines that `dlrmc run` wrote and writes one\n"
    "self-contained HTML page: the chosen metric against the sweep (lines\n"
    "on a numeric axis, grouped bars with the baseline's ratio otherwise),\n"
    "where each point's time goes, per-rank embedding time and memory of\n"
    "points on several GPUs, and the table. JSON lines carry every figure\n"
    "the charts need; a CSV only its columns (spec/report.md says which\n"
    "charts a CSV-only report lacks). Same page as `dlrmc run --format\n"
    "html`.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT   write to OUT (atomically); default: standard "
    "output\n"
    "  --metric NAME      the metric to chart (default e2e_ms)\n"
    "  --title TEXT       the page's title (default: the file's name)\n"};
