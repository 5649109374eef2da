/*
 * cmd_trace.c — `dlrmc trace stats TRACE [--format csv|md] [--steps A:B]
 * [--table steps|kinds|ops|kernels] [--top N] [-o FILE]`: where the time
 * of each profiled iteration goes (the paper's §III-A breakdown and
 * Fig. 5): per step wall, GPU active and idle time and utilization; GPU
 * time per kernel kind; per top-level op CPU and GPU time; top kernels.
 * The tables themselves are written by runtime/trace/stats.c.
 * `dlrmc trace kernels TRACE [--kind gemm|elementwise] [--csv]
 * [--steps A:B] [-o FILE]`: the trace's ops recorded with shapes as
 * kernel rows with measured times (runtime/trace/krows.c), for
 * `dlrmc kernel --csv` and `dlrmc fit`; skipped ops are counted on stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compiler/cli/cli_int.h"
#include "runtime/trace/trace.h"

/* `trace kernels`: the rows, and on stderr what was skipped and why. */
static void write_rows(const dc_trace_model *m, dc_trace_rows_kind kind,
                       dc_buf *out) {
  dc_trace_attrib at;
  dc_trace_attrib_build(m, &at);
  dc_trace_rows_report rep;
  dc_trace_rows_write(&at, kind, out, &rep);
  dc_trace_attrib_free(&at);
  const char *what = kind == DC_TRACE_ROWS_GEMM ? "GEMM" : "element-wise";
  fprintf(stderr, "%lld %s rows", (long long)rep.rows, what);
  if (rep.nested)
    fprintf(stderr, "; %lld parent ops left to the %s op they call",
            (long long)rep.nested, what);
  if (rep.tf32)
    fprintf(stderr, "; %lld float GEMMs ran TF32 tensor-core kernels "
                    "(dtype tf32)", (long long)rep.tf32);
  fputc('\n', stderr);
  for (int r = 0; r < DC_TRACE_SKIP_COUNT_; r++)
    if (rep.skipped[r])
      fprintf(stderr, "skipped %lld %s ops: %s\n", (long long)rep.skipped[r],
              what, dc_trace_skip_reason((dc_trace_skip)r));
}

static int cmd_trace(int argc, char **argv) {
  const cli_command *cmd = &cli_cmd_trace_def;
  if (cli_wants_help(cmd, argc, argv)) return CLI_EXIT_OK;
  bool krows = argc >= 2 && strcmp(argv[1], "kernels") == 0;
  int sub = krows ? 0 : cli_subcommand(cmd, argc, argv, "stats");
  if (sub) return sub;
  dc_trace_rows_kind kind = DC_TRACE_ROWS_GEMM;
  const char *path = NULL, *out_path = NULL, *steps_text = NULL;
  bool md = true;
  dc_trace_table table = DC_TRACE_TABLE_ALL;
  int top = 20;
  enum { O_CSV, O_FORMAT, O_STEPS, O_TABLE, O_TOP, O_KIND, O_OUT };
  static const cli_opt opts[] = {[O_CSV] = {"--csv", NULL, false},
                                 [O_FORMAT] = {"--format", NULL, true},
                                 [O_STEPS] = {"--steps", NULL, true},
                                 [O_TABLE] = {"--table", NULL, true},
                                 [O_TOP] = {"--top", NULL, true},
                                 [O_KIND] = {"--kind", NULL, true},
                                 [O_OUT] = {"--output", "-o", true},
                                 {0}};
  cli_iter it = cli_args(argc, argv, 2); /* after the subcommand */
  char *v;
  for (int k; (k = cli_next(cmd, opts, &it, &v)) != CLI_END;) {
    if (k == CLI_FAIL) return CLI_EXIT_USAGE;
    if (k == CLI_ARG) {
      if (path)
        return cli_usage_error(cmd,
                               "one trace at a time (got '%s' and "
                               "'%s')",
                               path, v);
      path = v;
      continue;
    }
    if (krows && (k == O_TABLE || k == O_TOP || k == O_FORMAT))
      return cli_usage_error(cmd, "'%s' is for 'trace stats'; 'trace "
                                     "kernels' writes CSV rows", opts[k].name);
    if (!krows && (k == O_KIND || k == O_CSV))
      return cli_usage_error(cmd, "'%s' is for 'trace kernels'",
                             opts[k].name);
    switch (k) {
    case O_CSV: md = false; break; /* rows are always CSV; for symmetry */
    case O_FORMAT:
      if (strcmp(v, "md") == 0)
        md = true;
      else if (strcmp(v, "csv") == 0)
        md = false;
      else
        return cli_usage_error(cmd, "unknown format '%s' (csv or md)", v);
      break;
    case O_STEPS: steps_text = v; break;
    case O_KIND:
      if (strcmp(v, "gemm") == 0)
        kind = DC_TRACE_ROWS_GEMM;
      else if (strcmp(v, "elementwise") == 0)
        kind = DC_TRACE_ROWS_ELEMENTWISE;
      else
        return cli_usage_error(cmd, "unknown --kind '%s' (gemm or "
                                       "elementwise)", v);
      break;
    case O_TABLE: {
      static const struct {
        const char *n;
        dc_trace_table t;
      } tabs[] = {{"all", DC_TRACE_TABLE_ALL},
                  {"steps", DC_TRACE_TABLE_STEPS},
                  {"kinds", DC_TRACE_TABLE_KINDS},
                  {"ops", DC_TRACE_TABLE_OPS},
                  {"kernels", DC_TRACE_TABLE_KERNELS}};
      size_t j = 0;
      while (j < DC_COUNTOF(tabs) && strcmp(tabs[j].n, v) != 0)
        j++;
      if (j == DC_COUNTOF(tabs))
        return cli_usage_error(cmd,
                               "unknown table '%s' (all, steps, "
                               "kinds, ops or kernels)",
                               v);
      table = tabs[j].t;
      break;
    }
    case O_TOP: {
      int64_t n;
      if (!cli_parse_int(v, 1, 1000000, &n))
        return cli_usage_error(cmd, "bad --top '%s' (a count >= 1)", v);
      top = (int)n;
      break;
    }
    default: out_path = v;
    }
  }
  if (!path) return cli_usage_error(cmd, "no trace given");
  dc_trace_steps_sel sel = {0};
  if (steps_text && !dc_trace_steps_parse(steps_text, &sel))
    return cli_usage_error(cmd,
                           "bad --steps '%s' (expected A:B, A:, :B "
                           "or N, with step numbers A <= B)",
                           steps_text);

  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  int rc = CLI_EXIT_INPUT;
  dc_trace t;
  dc_trace_model m;
  if (dc_trace_load(path, &t, &a, &d)) {
    if (dc_trace_model_build(&t, &sel, &m, &d)) {
      dc_buf out = {0};
      if (krows)
        write_rows(&m, kind, &out);
      else
        dc_trace_stats_write(&m, md, table, top, &out);
      rc = cli_write_file_atomic(out_path, out.data ? out.data : "", out.len)
               ? CLI_EXIT_OK
               : CLI_EXIT_INPUT;
      dc_buf_free(&out);
      dc_trace_model_free(&m);
    }
    dc_trace_free(&t);
  }
  if (d.count) cli_report(&d);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return rc;
}

const cli_command cli_cmd_trace_def = {
    "trace", cmd_trace,
    "dlrmc trace stats TRACE.json [--format csv|md] [--steps A:B] "
    "[--table NAME] [--top N] [-o FILE]\n"
    "       dlrmc trace kernels TRACE.json [--kind gemm|elementwise] [--csv] "
    "[--steps A:B] [-o FILE]",
    "Per-step and per-op breakdown of a PyTorch profiler trace; its "
    "kernels with shapes.",
    "Reads a PyTorch profiler (Kineto) trace, plain or gzip, and prints:\n"
    "  steps    per ProfilerStep#N: wall time, GPU active time (union of\n"
    "           kernel, memcpy and memset intervals in the step's window),\n"
    "           idle time, utilization, sum of kernel times, GPU events\n"
    "  kinds    GPU time per kernel kind (gemm, conv, embedding, collective,\n"
    "           elementwise, memcpy, ...): the paper's Fig. 5 breakdown\n"
    "  ops      per top-level op: count, CPU time, GPU time it launched\n"
    "  kernels  the top kernels by total time, with their kind\n"
    "A trace without ProfilerStep events is reported as one step 'all'.\n"
    "\n"
    "options:\n"
    "  --format md|csv    Markdown tables (default) or CSV; with CSV and\n"
    "                     every table, each one is preceded by '# NAME'\n"
    "  --table NAME       only one table: steps, kinds, ops or kernels\n"
    "  --steps A:B        only ProfilerStep#A..#B (inclusive)\n"
    "  --top N            rows of the kernels table (default 20)\n"
    "  -o, --output FILE  write there (atomically) instead of stdout\n"
    "\n"
    "trace kernels: one CSV row per op recorded with shapes (profile with\n"
    "record_shapes=True) and the time of the kernels it launched:\n"
    "  --kind gemm         (default) aten::mm/addmm/bmm/baddbmm/matmul/linear:\n"
    "                      op,batch,m,n,k,transa,transb,dtype,time_us,kernels,\n"
    "                      layout,kernel_names\n"
    "  --kind elementwise  add, mul, relu, sigmoid, ...: op,elements,\n"
    "                      flops_per_elem,bytes_per_elem,time_us,kernels,\n"
    "                      kernel_names\n"
    "The rows feed 'dlrmc kernel KIND --csv' and 'dlrmc fit gemm'; ops that\n"
    "give no row are counted by reason on stderr. Rules: spec/trace-kernels.md.\n"
    "  dlrmc trace kernels run.json.gz --csv > g.csv\n"
    "  dlrmc kernel gemm --csv g.csv --gpu A100\n"};
