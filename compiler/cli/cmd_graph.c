/*
 * cmd_graph.c — `dlrmc graph STUDY [--point N] [--format et|dot|text]
 * [--rank R] [-o FILE] [-D path=value]...`: builds the training-iteration
 * graph of one point of the study and writes it as a readable listing
 * (text, the default), Graphviz DOT, or a PyTorch execution trace (et,
 * one rank: an ET is one process's trace; rank 0 unless --rank).
 *
 * Exit status: 0 written; 1 the study or the configuration has errors
 * (diagnostics on stderr, nothing written); 2 usage errors.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "compiler/compiler.h"
#include "graphgen/graphgen.h"
#include "runtime/plan/plan.h"
#include "runtime/trace/trace.h"

typedef struct graph_args {
  const char *study, *out, *from_et;
  int64_t point, rank;
  bool rank_given;
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
  enum { O_D, O_POINT, O_FORMAT, O_OUT, O_RANK, O_FROM_ET, O_BUDGET };
  static const cli_opt opts[] = {
      [O_D] = {"-D", NULL, true, true},
      [O_POINT] = {"--point", NULL, true},
      [O_FORMAT] = {"--format", NULL, true},
      [O_OUT] = {NULL, "-o", true},
      [O_RANK] = {"--rank", NULL, true},
      [O_FROM_ET] = {"--from-et", NULL, true},
      [O_BUDGET] = {"--memory-budget", NULL, true},
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
      if (!cli_parse_int(v, 0, INT64_MAX, &a->rank))
        return cli_usage_error(cmd, "--rank '%s': expected a rank "
                                       "(0, 1, ...)", v);
      a->rank_given = true;
      break;
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
  return 0;
}

/* --from-et: the graph of a recorded execution trace (one rank). */
static int graph_from_et(const graph_args *a, dc_arena *arena, dc_diags *d,
                         dc_buf *out) {
  if (a->n_ov || a->point)
    return cli_usage_error(&cli_cmd_graph_def,
                           "--point and -D apply to a study, not to "
                           "--from-et");
  if (a->rank_given && a->rank > 0)
    return cli_usage_error(&cli_cmd_graph_def,
                           "--rank %lld: an execution trace has one rank",
                           (long long)a->rank);
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
  if (a.rank_given && a.rank >= g->n_ranks) {
    rc = cli_usage_error(&cli_cmd_graph_def,
                         "--rank %lld: the graph has %d rank%s",
                         (long long)a.rank, g->n_ranks,
                         g->n_ranks == 1 ? "" : "s");
    goto done;
  }
  dc_graph_write_rank(g, a.format,
                      a.rank_given ? (int32_t)a.rank
                      : a.format == DC_GRAPH_ET ? 0
                                                : -1,
                      &out);
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
    "[--format text|dot|et] [--rank R] [-o FILE] [-D path=value]...",
    "Write the training-iteration graph of one point.",
    "Builds the graph of one training iteration of point N (default 0) of\n"
    "the study, as stock PyTorch would run it, and writes it:\n"
    "  --format text  a listing of ops, tensor shapes and kernels (default)\n"
    "  --format dot   Graphviz (render with `dot -Tsvg`)\n"
    "  --format et    a PyTorch execution trace (JSON, schema 1.1.1) of one\n"
    "                 rank (--rank R, default 0)\n"
    "  --rank R       text and dot: only rank R (default: every rank)\n"
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
