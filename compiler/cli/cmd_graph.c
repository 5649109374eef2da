/*
 * cmd_graph.c — `dlrmc graph STUDY [--point N] [--format et|dot|text]
 * [--rank R|all] [--with-device] [-o FILE|DIR] [-D path=value]...`:
 * builds the training-iteration graph of one point of the study and
 * writes it as a readable listing (text, the default), Graphviz DOT, or a
 * PyTorch execution trace (et, one rank: an ET is one process's trace;
 * rank 0 unless --rank; --rank all: every rank's into the directory -o
 * names). --with-device evaluates the point and adds each rank's kernels
 * as device nodes with their predicted times (spec/astra-sim.md).
 *
 * Exit status: 0 written; 1 the study or the configuration has errors
 * (diagnostics on stderr, nothing written); 2 usage errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compiler/cli/cli_int.h"
#include "compiler/compiler.h"
#include "graphgen/graphgen.h"
#include "runtime/plan/plan.h"
#include "runtime/runtime.h"
#include "runtime/trace/trace.h"

typedef struct graph_args {
  const char *study, *out, *from_et;
  int64_t point, rank;
  bool rank_given, all_ranks, with_device;
  dc_graph_format format;
  dc_override *ov;
  size_t n_ov;
} graph_args;

/* Returns 0 or the usage status. */
static int parse_args(int argc, char **argv, graph_args *a) {
  const cli_command *cmd = &cli_cmd_graph_def;
  memset(a, 0, sizeof *a);
  a->format = DC_GRAPH_TEXT;
  a->ov = dc_xcalloc((size_t)argc + 1, sizeof *a->ov);
  enum { O_D, O_POINT, O_FORMAT, O_OUT, O_RANK, O_FROM_ET, O_BUDGET,
         O_DEVICE };
  static const cli_opt opts[] = {
      [O_D] = {"-D", NULL, true, true},
      [O_POINT] = {"--point", NULL, true},
      [O_FORMAT] = {"--format", NULL, true},
      [O_OUT] = {NULL, "-o", true},
      [O_RANK] = {"--rank", NULL, true},
      [O_FROM_ET] = {"--from-et", NULL, true},
      [O_BUDGET] = {"--memory-budget", NULL, true},
      [O_DEVICE] = {"--with-device", NULL, false},
      {0}};
  cli_iter it = cli_args(argc, argv, 1);
  char *v;
  for (int k; (k = cli_next(cmd, opts, &it, &v)) != CLI_END;) {
    switch (k) {
    case CLI_FAIL: return CLI_EXIT_USAGE;
    case O_D: {
      int rc = cli_define_value(cmd, v, a->ov, &a->n_ov);
      if (rc) return rc;
      break;
    }
    case O_POINT:
      if (!cli_parse_int(v, 0, INT64_MAX, &a->point))
        return cli_usage_error(cmd, "--point '%s': expected a point "
                                       "index (0, 1, ...)", v);
      break;
    case O_RANK:
      if (strcmp(v, "all") == 0)
        a->all_ranks = true;
      else if (!cli_parse_int(v, 0, INT64_MAX, &a->rank))
        return cli_usage_error(cmd, "--rank '%s': expected a rank "
                                       "(0, 1, ...) or all", v);
      a->rank_given = true;
      break;
    case O_DEVICE: a->with_device = true; break;
    case O_FORMAT:
      if (!dc_graph_format_parse(v, &a->format))
        return cli_usage_error(cmd, "--format '%s': expected et, dot "
                                       "or text", v);
      break;
    case O_FROM_ET: a->from_et = v; break;
    case O_BUDGET: {
      int rc = cli_memory_budget(cmd, v);
      if (rc) return rc;
      break;
    }
    case O_OUT: a->out = v; break;
    default:
      if (a->study) return cli_usage_error(cmd, "more than one study file");
      a->study = v;
    }
  }
  if (a->from_et && a->study)
    return cli_usage_error(cmd, "give a study or --from-et, not both");
  if (!a->study && !a->from_et)
    return cli_usage_error(cmd, "missing the study file");
  if (a->with_device && a->format != DC_GRAPH_ET)
    return cli_usage_error(cmd, "--with-device writes an execution "
                                   "trace: add --format et");
  if (a->with_device && a->from_et)
    return cli_usage_error(cmd, "--with-device needs a study (it prices "
                                   "the point), not --from-et");
  if (a->all_ranks && (a->format != DC_GRAPH_ET || !a->out))
    return cli_usage_error(cmd, "--rank all writes one execution trace "
                                   "per rank: add --format et and -o DIR");
  return 0;
}

/* --from-et: the graph of a recorded execution trace (one rank). */
static int graph_from_et(const graph_args *a, dc_arena *arena, dc_diags *d,
                         dc_buf *out) {
  if (a->n_ov || a->point)
    return cli_usage_error(&cli_cmd_graph_def,
                           "--point and -D apply to a study, not to "
                           "--from-et");
  if (a->rank_given && (a->rank > 0 || a->all_ranks))
    return cli_usage_error(&cli_cmd_graph_def,
                           "--rank: an execution trace has one rank");
  dc_et_graph e;
  if (!dc_et_import(a->from_et, &e, arena, d)) return CLI_EXIT_INPUT;
  dc_graph_write_rank(e.g, a->format, a->format == DC_GRAPH_ET ? 0 : -1, out);
  if (e.n_unpriced > 0) {
    dc_buf u = {0};
    dc_et_unpriced_write(&e, &u);
    fprintf(stderr,
            "dlrmc graph: note: %d op%s on the device that no kernel model "
            "prices (`dlrmc replay` prices them from a Kineto trace):\n%s",
            e.n_unpriced, e.n_unpriced == 1 ? "" : "s", u.data);
    dc_buf_free(&u);
  }
  return cli_write_file_atomic(a->out, out->data ? out->data : "", out->len)
             ? CLI_EXIT_OK
             : CLI_EXIT_INPUT;
}

/* One rank's execution trace, with its device nodes when `r` is given. */
static void write_et(const dc_graph *g, int32_t rank, const dc_eval_result *r,
                     const dc_device *dev, dc_arena *arena, dc_buf *out) {
  if (!r) {
    dc_graph_write_rank(g, DC_GRAPH_ET, rank, out);
    return;
  }
  dc_et_schedule s;
  dc_et_schedule_of(g, r, dev, rank, arena, &s);
  dc_graph_write_et(g, rank, &s, out);
}

/* --rank all: DIR/workload.R.et.json for every rank R (the names the
 * Chakra converter's outputs take for ASTRA-sim: workload.R.et) and
 * DIR/comm_group.json, the process groups they name. */
static bool write_all_ranks(const dc_graph *g, const char *dir,
                            const dc_eval_result *r, const dc_device *dev,
                            dc_arena *arena) {
  struct stat st;
  if (stat(dir, &st) != 0 && mkdir(dir, 0777) != 0) {
    fprintf(stderr, "dlrmc: error: cannot create '%s': %s\n", dir,
            strerror(errno));
    return false;
  }
  for (int32_t rk = 0; rk < g->n_ranks; rk++) {
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/workload.%d.et.json", dir,
                     (int)rk);
    if (n < 0 || (size_t)n >= sizeof path) {
      fprintf(stderr, "dlrmc: error: '%s': name too long\n", dir);
      return false;
    }
    dc_buf b = {0};
    write_et(g, rk, r, dev, arena, &b);
    bool ok = cli_write_file_atomic(path, b.data ? b.data : "", b.len);
    dc_buf_free(&b);
    if (!ok) return false;
  }
  char path[4096];
  int n = snprintf(path, sizeof path, "%s/comm_group.json", dir);
  if (n < 0 || (size_t)n >= sizeof path) return false;
  dc_buf b = {0};
  dc_graph_write_comm_groups(g, &b);
  bool ok = cli_write_file_atomic(path, b.data, b.len);
  dc_buf_free(&b);
  return ok;
}

static int cmd_graph(int argc, char **argv) {
  if (cli_wants_help(&cli_cmd_graph_def, argc, argv)) return CLI_EXIT_OK;
  graph_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) {
    free(a.ov);
    return rc;
  }
  dc_diags d = {0};
  d.max_errors = 100;
  dc_arena arena;
  dc_arena_init(&arena);
  dc_buf out = {0};
  rc = CLI_EXIT_INPUT;
  dc_study *s = NULL;
  if (a.from_et) {
    rc = graph_from_et(&a, &arena, &d, &out);
    goto done;
  }
  s = cli_load_study(a.study, a.ov, a.n_ov);
  if (!s) goto done;
  int prc = cli_check_point(&cli_cmd_graph_def, s, a.point);
  if (prc) {
    rc = prc;
    goto done;
  }
  dc_point p;
  dc_study_point(s, a.point, &arena, &p);
  dc_graph *g = dc_plan_build_graph(&p, DC_GRAPH_FULL, &arena, &d);
  if (!g) goto done;
  if (!dc_graph_verify(g, &d)) goto done; /* a builder bug, not the user's */
  if (a.rank_given && !a.all_ranks && a.rank >= g->n_ranks) {
    rc = cli_usage_error(&cli_cmd_graph_def,
                         "--rank %lld: the graph has %d rank%s",
                         (long long)a.rank, g->n_ranks,
                         g->n_ranks == 1 ? "" : "s");
    goto done;
  }
  dc_eval_result r, *rp = NULL;
  dc_device dev;
  if (a.with_device) {
    dc_profile prof;
    if (!dc_device_of_point(&p, &dev, &arena, &d) ||
        !dc_eval_point(g, true, &arena, &r, NULL, &prof, &d))
      goto done;
    rp = &r;
  }
  if (a.all_ranks) {
    rc = write_all_ranks(g, a.out, rp, &dev, &arena) ? CLI_EXIT_OK
                                                         : CLI_EXIT_INPUT;
    goto done;
  }
  int32_t rank = a.rank_given ? (int32_t)a.rank
                 : a.format == DC_GRAPH_ET ? 0
                                           : -1;
  if (a.format == DC_GRAPH_ET)
    write_et(g, rank, rp, &dev, &arena, &out);
  else
    dc_graph_write_rank(g, a.format, rank, &out);
  rc = cli_write_file_atomic(a.out, out.data ? out.data : "", out.len)
           ? CLI_EXIT_OK
           : CLI_EXIT_INPUT;
done:
  cli_report(&d);
  dc_buf_free(&out);
  dc_arena_free(&arena);
  dc_study_free(s);
  dc_diags_free(&d);
  free(a.ov);
  return rc;
}

const cli_command cli_cmd_graph_def = {
    "graph", cmd_graph,
    "dlrmc graph STUDY.yaml|--from-et RUN.et.json [--point N] "
    "[--format text|dot|et] [--rank R|all] [--with-device] [-o FILE|DIR] "
    "[-D path=value]...",
    "Write the training-iteration graph of one point.",
    "Builds the graph of one training iteration of point N (default 0) of\n"
    "the study, as stock PyTorch would run it, and writes it:\n"
    "  --format text  a listing of ops, tensor shapes and kernels (default)\n"
    "  --format dot   Graphviz (render with `dot -Tsvg`)\n"
    "  --format et    a PyTorch execution trace (JSON, schema 1.1.1) of one\n"
    "                 rank (--rank R, default 0)\n"
    "  --rank R       text and dot: only rank R (default: every rank)\n"
    "  --rank all     et: every rank, DIR/workload.R.et.json, and their\n"
    "                 process groups, DIR/comm_group.json (needs -o DIR)\n"
    "  --with-device  et: price the point and add each kernel as a device\n"
    "                 node under its op, with its predicted start and\n"
    "                 duration, collectives as NCCL kernels: the layout\n"
    "                 Chakra's converter reads for ASTRA-sim\n"
    "                 (spec/astra-sim.md)\n"
    "  -o FILE        write FILE (atomically) instead of stdout\n"
    "  -D path=value  override a study key\n"
    "  --memory-budget SIZE\n"
    "                 the memory one point may need (default 1GiB)\n"
    "  --from-et RUN.et.json\n"
    "                 instead of a study: the graph of a recorded PyTorch\n"
    "                 execution trace (plain or gzip; spec/replay.md), ops\n"
    "                 mapped to kernels; ops no model prices are listed on\n"
    "                 stderr\n"
    "Exit status: 0 ok, 1 errors in the study, 2 usage errors.\n"};
