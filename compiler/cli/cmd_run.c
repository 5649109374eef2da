/*
 * cmd_run.c — `dlrmc run`: predict every point of a study and write the
 * comparison table (spec/design.md).
 *
 * The driver owns the pipeline's glue: it loads the study (front end),
 * hands runtime's sweep executor a callback that lowers a point and builds
 * its graph (graphgen), and decides where the table goes. A file named by
 * -o is streamed to a temporary sibling and renamed only when the whole
 * table is written, so a run that fails or is interrupted (SIGINT, SIGTERM,
 * SIGHUP: outfile.c's handler removes every live temporary, the table's
 * and the timelines') never leaves a partial file under the requested
 * name, and a million-point table never sits in memory. Timelines
 * (--timeline DIR) are written one file per point, each atomically.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/cli/cli_int.h"
#include "compiler/compiler.h"
#include "graphgen/graphgen.h"
#include "runtime/plan/plan.h"
#include "runtime/runtime.h"

/* ---- the point source --------------------------------------------------- */

static const dc_graph *build_point(void *ctx, int64_t index,
                                   dc_graph_detail detail, dc_arena *a,
                                   dc_diags *d) {
  const dc_study *s = ctx;
  dc_point *p = dc_arena_alloc(a, sizeof *p);
  dc_study_point(s, index, a, p);
  return dc_plan_build_graph(p, detail, a, d);
}

static int64_t baseline_of(void *ctx, int64_t index) {
  return dc_study_baseline_of((const dc_study *)ctx, index);
}

/* ---- streaming atomic output -------------------------------------------- */

static bool report(dc_buf *err) {
  fprintf(stderr, "dlrmc: error: %s\n", err->data ? err->data : "");
  dc_buf_free(err);
  return false;
}

static bool sink_memory(void *ctx, const char *data, size_t len) {
  dc_buf_append(ctx, data, len);
  return true;
}

static bool sink_write(void *ctx, const char *data, size_t len) {
  dc_buf err = {0};
  return dc_outfile_write(ctx, data, len, &err) || report(&err);
}

static bool out_open(dc_outfile *o, const char *path) {
  dc_buf err = {0};
  return dc_outfile_open(o, path, &err) || report(&err);
}

static bool out_close(dc_outfile *o, bool ok) {
  dc_buf err = {0};
  if (!ok) {
    dc_outfile_abort(o);
  } else if (!dc_outfile_commit(o, &err)) {
    ok = report(&err);
  }
  return ok;
}

/* ---- timelines ---------------------------------------------------------- */

typedef struct timeline_ctx {
  const char *dir;
  const char *study;
} timeline_ctx;

static bool write_timeline(void *ctx, int64_t index, const char *json,
                           size_t len) {
  const timeline_ctx *t = ctx;
  char path[4096];
  int n = snprintf(path, sizeof path, "%s/%s-%06lld.json", t->dir, t->study,
                   (long long)index);
  if (n < 0 || (size_t)n >= sizeof path) return false;
  return cli_write_file_atomic(path, json, len);
}

/* ---- the Markdown caption ------------------------------------------------ */

/* A Markdown table of a study on several GPUs opens with the machine it
 * models, hosts × GPUs per host included, since a bare system.gpus is
 * laid out by the catalog's host size (spec/multi-gpu.md). One GPU needs
 * no caption; a capacity table has its own layout columns. */
static void md_caption(const dc_study *s, dc_buf *b) {
  if (dc_study_point_count(s) < 1) return;
  dc_arena a;
  dc_arena_init(&a);
  dc_point p;
  dc_study_point(s, 0, &a, &p);
  const char *const *params;
  size_t n = dc_study_params(s, &params);
  bool swept = false;
  for (size_t i = 0; i < n; i++)
    swept |= strncmp(params[i], "system.gpu", 10) == 0 ||
             strcmp(params[i], "system.hosts") == 0;
  if (p.gpus > 1 || swept) {
    char lay[64];
    dc_point_layout(&p, lay, sizeof lay);
    dc_buf_printf(b, "Study %s: %s x%d, %s%s.\n\n", dc_study_name(s), p.gpu,
                  (int)p.gpus, lay,
                  swept ? " at the first point (the system keys are swept)"
                        : "");
  }
  dc_arena_free(&a);
}

/* ---- arguments ------------------------------------------------------------ */

/* html: the rows go to memory as JSON lines, then into the report. */
static bool parse_format(const char *s, dc_format *f, bool *html) {
  *html = strcmp(s, "html") == 0;
  if (*html) *f = DC_FORMAT_JSONL;
  else if (strcmp(s, "csv") == 0) *f = DC_FORMAT_CSV;
  else if (strcmp(s, "md") == 0 || strcmp(s, "markdown") == 0)
    *f = DC_FORMAT_MD;
  else if (strcmp(s, "jsonl") == 0) *f = DC_FORMAT_JSONL;
  else return false;
  return true;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The format -o's extension names (.html/.htm, .md, .jsonl/.json); *f is
 * left as it is for any other. */
static void format_of_path(const char *path, dc_format *f, bool *html) {
  if (ends_with(path, ".html") || ends_with(path, ".htm")) {
    *f = DC_FORMAT_JSONL;
    *html = true;
  } else if (ends_with(path, ".md")) {
    *f = DC_FORMAT_MD;
  } else if (ends_with(path, ".jsonl") || ends_with(path, ".json")) {
    *f = DC_FORMAT_JSONL;
  }
}

static int cmd_run(int argc, char **argv) {
  const cli_command *cmd = &cli_cmd_run_def;
  if (cli_wants_help(cmd, argc, argv)) return CLI_EXIT_OK;
  const char *study_path = NULL, *out_path = NULL, *timeline = NULL;
  const char *format = NULL;
  int64_t jobs = 1, shard_k = 1, shard_n = 1, digits = 0;
  dc_rows rows = DC_ROWS_POINT;
  dc_override *ov = dc_xcalloc((size_t)argc + 1, sizeof *ov);
  size_t n_ov = 0;
  int rc = CLI_EXIT_USAGE;
  enum { O_D, O_OUT, O_FORMAT, O_JOBS, O_SHARD, O_PER_RANK, O_PER_SHARD,
         O_DIGITS, O_TIMELINE, O_BUDGET };
  static const cli_opt opts[] = {
      [O_D] = {"-D", NULL, true, true},
      [O_OUT] = {"--output", "-o", true},
      [O_FORMAT] = {"--format", NULL, true},
      [O_JOBS] = {"--jobs", "-j", true},
      [O_SHARD] = {"--shard", NULL, true},
      [O_PER_RANK] = {"--per-rank", NULL, false},
      [O_PER_SHARD] = {"--per-shard", NULL, false},
      [O_DIGITS] = {"--digits", NULL, true},
      [O_TIMELINE] = {"--timeline", NULL, true},
      [O_BUDGET] = {"--memory-budget", NULL, true},
      {0}};
  /* the report's command line, taken before -D's parsing splits its
   * path=value in place */
  dc_buf line = {0};
  cli_command_line(argc, argv, &line);
  cli_iter it = cli_args(argc, argv, 1);
  char *val;
  for (int k; (k = cli_next(cmd, opts, &it, &val)) != CLI_END;) {
    switch (k) {
    case CLI_FAIL: rc = CLI_EXIT_USAGE; goto done;
    case O_OUT: out_path = val; break;
    case O_BUDGET:
      rc = cli_memory_budget(cmd, val);
      if (rc) goto done;
      break;
    case O_FORMAT: format = val; break;
    case O_JOBS:
      if (!cli_parse_int(val, 1, 256, &jobs)) {
        rc = cli_usage_error(cmd, "--jobs wants a number from 1 to 256, "
                                     "not '%s'", val);
        goto done;
      }
      break;
    case O_SHARD: {
      const char *slash = strchr(val, '/');
      char kbuf[32];
      size_t kl = slash ? (size_t)(slash - val) : 0;
      if (!slash || kl == 0 || kl >= sizeof kbuf) goto bad_shard;
      memcpy(kbuf, val, kl);
      kbuf[kl] = '\0';
      if (!cli_parse_int(kbuf, 1, INT64_MAX, &shard_k) ||
          !cli_parse_int(slash + 1, 1, INT64_MAX, &shard_n) ||
          shard_k > shard_n)
        goto bad_shard;
      break;
    }
    case O_PER_RANK:
    case O_PER_SHARD: {
      dc_rows want = k == O_PER_RANK ? DC_ROWS_RANK : DC_ROWS_SHARD;
      if (rows != DC_ROWS_POINT && rows != want) {
        rc = cli_usage_error(cmd, "--per-rank and --per-shard exclude "
                                     "each other");
        goto done;
      }
      rows = want;
      break;
    }
    case O_DIGITS:
      if (!cli_parse_int(val, 1, 17, &digits)) {
        rc = cli_usage_error(cmd, "--digits wants a number from 1 to 17, "
                                     "not '%s'", val);
        goto done;
      }
      break;
    case O_TIMELINE: timeline = val; break;
    case O_D:
      rc = cli_define_value(cmd, val, ov, &n_ov);
      if (rc) goto done;
      break;
    default:
      if (study_path) {
        rc = cli_usage_error(cmd, "more than one study ('%s' and '%s')",
                             study_path, val);
        goto done;
      }
      study_path = val;
    }
    continue;
  bad_shard:
    rc = cli_usage_error(cmd, "--shard wants K/N with 1 <= K <= N, not "
                                 "'%s'", val);
    goto done;
  }
  if (!study_path) {
    rc = cli_usage_error(cmd, "no study file given");
    goto done;
  }
  dc_format fmt = DC_FORMAT_CSV;
  bool html = false;
  if (format) {
    if (!parse_format(format, &fmt, &html)) {
      rc = cli_usage_error(cmd, "unknown format '%s' (csv, md, jsonl or "
                                   "html)",
                           format);
      goto done;
    }
  }
  if (timeline) {
    struct stat st;
    if (stat(timeline, &st) != 0 && mkdir(timeline, 0777) != 0) {
      fprintf(stderr, "dlrmc: error: cannot create '%s': %s\n", timeline,
              strerror(errno));
      rc = CLI_EXIT_INPUT;
      goto done;
    }
  }

  dc_study *s = cli_load_study(study_path, ov, n_ov);
  if (!s || !cli_check_catalogs(s)) {
    dc_study_free(s);
    rc = CLI_EXIT_INPUT;
    goto done;
  }
  /* --format wins, then the study's output.format, then -o's extension */
  if (!format && dc_study_format(s))
    parse_format(dc_study_format(s), &fmt, &html);
  else if (!format && out_path)
    format_of_path(out_path, &fmt, &html);
  dc_diags d = {0};
  const char *const *params = NULL, *const *columns = NULL;
  size_t n_params = dc_study_params(s, &params);
  size_t n_columns = dc_study_columns(s, &columns);
  dc_sweep_source src = {s,        dc_study_point_count(s), build_point,
                         baseline_of, n_params, params, n_columns, columns,
                         dc_study_torchrec(s)};
  bool capacity = dc_study_capacity(s);
  if (capacity && rows != DC_ROWS_POINT) {
    rc = cli_usage_error(cmd, "a study with 'capacity' writes one row "
                                 "per point and GPU type; drop --per-rank "
                                 "and --per-shard");
    dc_diags_free(&d);
    dc_study_free(s);
    goto done;
  }
  if (html && rows == DC_ROWS_SHARD) {
    rc = cli_usage_error(cmd, "--format html charts the point table, "
                                 "--per-rank rows or a capacity curve; "
                                 "--per-shard rows have no step time to "
                                 "chart: write them as csv, md or jsonl");
    dc_diags_free(&d);
    dc_study_free(s);
    goto done;
  }
  if (capacity) rows = DC_ROWS_CAPACITY;
  dc_outfile of;
  dc_buf rows_jsonl = {0}; /* html: the table, before the report */
  timeline_ctx tctx = {timeline, dc_study_name(s)};
  dc_sweep_opts o;
  memset(&o, 0, sizeof o);
  o.jobs = (int)jobs;
  o.shard_k = shard_k;
  o.shard_n = shard_n;
  o.format = fmt;
  o.sink = html ? sink_memory : sink_write;
  o.sink_ctx = html ? (void *)&rows_jsonl : (void *)&of;
  o.rows = rows;
  o.digits = (int)digits;
  o.precision = dc_study_precision(s);
  o.has_precision = o.precision >= 0;
  o.timeline_sink = timeline ? write_timeline : NULL;
  o.timeline_ctx = &tctx;
  o.progress = cli_stderr_tty() && getenv("DLRMC_NO_PROGRESS") == NULL;
  /* A sweep this large runs for hours even at a million points a second
   * (the progress bar's rate says how fast this one goes): said before it
   * starts, so the user can stop it and split it. */
  int64_t n_run = dc_study_point_count(s) / shard_n;
  if (n_run >= INT64_C(10000000000))
    fprintf(stderr,
            "dlrmc: warning: this run evaluates %lld points (%.3g); at a "
            "million points a second that is still %.1f hours\n"
            "  = help: sweep fewer values, or split it with --shard K/N "
            "over several machines (spec/speed.md)\n",
            (long long)n_run, (double)n_run, (double)n_run / 1e6 / 3600);
  bool ok;
  if (html) {
    ok = dc_sweep_run(&src, &o, &d);
  } else {
    ok = out_open(&of, out_path);
    if (ok && fmt == DC_FORMAT_MD && shard_k == 1 && !capacity) {
      dc_buf cap = {0};
      md_caption(s, &cap);
      if (cap.len) ok = sink_write(&of, cap.data, cap.len);
      dc_buf_free(&cap);
    }
    if (ok) {
      ok = dc_sweep_run(&src, &o, &d);
      ok = out_close(&of, ok);
    }
  }
  if (d.count) cli_report(&d);
  if (ok && o.n_unfit > 0) {
    int64_t n = o.n_points;
    fprintf(stderr,
            "dlrmc: warning: %lld of %lld point%s do%s not fit in GPU "
            "memory (fits false%s): their times are for memory the GPU "
            "does not have\n",
            (long long)o.n_unfit, (long long)n, n == 1 ? "" : "s",
            o.n_unfit == 1 ? "es" : "", fmt == DC_FORMAT_MD ? ", rows marked "
            "with " DC_EMIT_UNFIT : html ? ", rows shaded in the table" : "");
  }
  if (ok && html) {
    dc_arena ra;
    dc_arena_init(&ra);
    const dc_source *rs = dc_source_from_memory(
        "dlrmc run", rows_jsonl.data ? rows_jsonl.data : "", rows_jsonl.len,
        &ra);
    dc_buf_free(&rows_jsonl);
    ok = cli_html_report(rs, dc_study_name(s), line.data, NULL,
                         out_path) == CLI_EXIT_OK;
    dc_arena_free(&ra);
  }
  dc_buf_free(&rows_jsonl);
  if (getenv("DLRMC_MEMO_STATS"))
    fprintf(stderr, "memo: %lld hits, %lld misses\n", (long long)o.memo_hits,
            (long long)o.memo_misses);
  dc_diags_free(&d);
  dc_study_free(s);
  rc = ok ? CLI_EXIT_OK : CLI_EXIT_INPUT;
done:
  dc_buf_free(&line);
  free(ov);
  return rc;
}

const cli_command cli_cmd_run_def = {
    "run", cmd_run,
    "dlrmc run STUDY.yaml [-o OUT] [--format csv|md|jsonl|html] [-D path=value]... "
    "[--jobs N] [--shard K/N] [--timeline DIR] [--per-rank | --per-shard] "
    "[--digits N]",
    "Predict every point of a study and write the comparison table.",
    "Compiles every point of the study into one training iteration's graph,\n"
    "evaluates it (kernel models + host overheads, the paper's Algorithm 1\n"
    "extended to streams and ranks) and writes one row per point: the swept\n"
    "parameters under their dotted paths, then the metrics (or the study's\n"
    "output.columns).\n"
    "\n"
    "options:\n"
    "  -o, --output OUT   write to OUT (atomically: a temporary file renamed\n"
    "                     when complete); default: standard output\n"
    "  --format F         csv (RFC 4180, the default), md (Markdown table),\n"
    "                     jsonl (one JSON object per line, with a \"detail\"\n"
    "                     object the report reads) or html (one self-\n"
    "                     contained page: charts and the table, as `dlrmc\n"
    "                     report` draws it; spec/report.md); inferred from\n"
    "                     OUT's extension (.md, .jsonl, .html) when not given\n"
    "  --memory-budget SIZE\n"
    "                     the memory one point may need (default 1GiB; E0208\n"
    "                     above it, estimated before anything is built)\n"
    "  -D path=value      override any key of the study; a comma list sweeps\n"
    "  --jobs N, -j N     evaluate on N threads (default 1); the output is\n"
    "                     byte-identical for any N\n"
    "  --shard K/N        evaluate only the K-th of N contiguous blocks of\n"
    "                     points; shard 1 carries the header, so `cat` of\n"
    "                     shards 1..N is the single run's output (CSV,\n"
    "                     Markdown, JSON lines)\n"
    "  --timeline DIR     write each point's predicted CPU and GPU timeline\n"
    "                     as Chrome trace JSON (DIR/STUDY-NNNNNN.json; open\n"
    "                     in ui.perfetto.dev or chrome://tracing)\n"
    "  --per-rank         one row per point and rank: rank, e2e_ms, cpu_ms,\n"
    "                     gpu_active_ms, kernel_only_ms, emb_ms, comm_ms,\n"
    "                     comm_bytes, the rank's memory and fits\n"
    "  --per-shard        one row per point and table shard: table, shard,\n"
    "                     rank, sharding, rows, cols, emb_fwd_ms, emb_bwd_ms,\n"
    "                     weights_gib (with sharding.estimator: torchrec,\n"
    "                     both add TorchRec's torchrec_* figures)\n"
    "  --digits N         print numbers with N significant digits (1..17;\n"
    "                     17 round-trips a double) instead of each column's\n"
    "                     fixed decimals: for comparing with another tool\n"
    "\n"
    "metrics: e2e_ms gpu_active_ms gpu_idle_ms gpu_util cpu_ms kernel_only_ms\n"
    "  samples_per_s params_gib optimizer_gib activations_gib workspace_gib\n"
    "  fits emb_ms emb_imbalance comm_ms comm_bytes, and speedup (baseline\n"
    "  e2e / this e2e) when the study has a baseline. With\n"
    "  sharding.estimator: torchrec, also emb_total_variation\n"
    "  emb_total_distance emb_chi_divergence emb_kl_divergence torchrec_ms\n"
    "  torchrec_fwd_compute_ms torchrec_fwd_comms_ms torchrec_bwd_compute_ms\n"
    "  torchrec_bwd_comms_ms torchrec_hbm_gib torchrec_imbalance (any study\n"
    "  may name them in output.columns). The breakdown of e2e_ms,\n"
    "  compute_ms exposed_comm_ms exposed_host_ms other_idle_ms, is in no\n"
    "  default set (jsonl rows carry it under \"detail\" with the memory\n"
    "  and per-rank figures the HTML report draws). Tables beyond HBM:\n"
    "  host_gib (the fullest host's memory) and cache_hit_rate (lookups\n"
    "  served by HBM caches), in no default set. A study with `capacity:`\n"
    "  writes the curve: per point and GPU type, one row per GPU count\n"
    "  tried (e2e_ms, fits, meets_target), `answer` true on the smallest\n"
    "  count that fits and meets capacity.target_step_ms.\n"
    "A progress bar (share done, points per second, time left) is shown\n"
    "on stderr when it is a terminal, never on a line of the table (set\n"
    "DLRMC_NO_PROGRESS to hide it); a run of 10^10 points or more is\n"
    "warned about before it starts. Points that do not fit in GPU memory\n"
    "are counted on stderr and marked in Markdown and HTML.\n"};
