/*
 * cmd_explain.c — `dlrmc explain`: what drives one point's answer. Builds
 * the graph of one sweep point, evaluates it with the evaluator's records
 * switched on, and prints the per-op table of one rank (runtime/explain.c):
 * the host time of every top-level op, the overheads T1–T5 it paid, the
 * time the host waited on the GPU, its kernels, their predicted time and the
 * GPU idle time right before them — followed by which model priced the
 * kernels and why, and the point's metrics.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "compiler/compiler.h"
#include "graphgen/graphgen.h"
#include "runtime/plan/plan.h"
#include "runtime/runtime.h"

/* Which model priced the rank's kernels and why (dc_kernel_model_why):
 * one line per distinct (kind, model, reason), with its kernel count, in
 * order of first launch; at most EXPLAIN_MODELS lines. */
#define EXPLAIN_MODELS 40
static void kernel_models(const dc_graph *g, const dc_point *p, int32_t rank,
                          dc_arena *a, dc_buf *out) {
  dc_device dev;
  dc_diags d = {0};
  if (!dc_device_of_point(p, &dev, a, &d)) {
    dc_diags_free(&d);
    return;
  }
  const dc_kmodels *km = dc_kmodels_for(&dev);
  const char *line[EXPLAIN_MODELS];
  int64_t count[EXPLAIN_MODELS];
  int n = 0;
  int64_t more = 0;
  dc_buf why = {0};
  for (int32_t o = 0; o < g->n_ops; o++) {
    if (g->ops[o].rank != rank) continue;
    for (int32_t i = 0; i < g->ops[o].n_launches; i++) {
      const dc_kernel *k = &g->ops[o].launches[i].k;
      dc_buf_clear(&why);
      dc_buf_printf(&why, "%-16s %-18s ", dc_kernel_kind_name(k->kind),
                    dc_kernel_model_used(k, km));
      dc_kernel_model_why(k, km, &why);
      int j = 0;
      while (j < n && strcmp(line[j], why.data) != 0) j++;
      if (j < n) {
        count[j]++;
      } else if (n < EXPLAIN_MODELS) {
        line[n] = dc_arena_strdup(a, why.data);
        count[n++] = 1;
      } else {
        more++;
      }
    }
  }
  dc_buf_puts(out, "\nkernel models (kind, model, why; kernels):\n");
  for (int j = 0; j < n; j++)
    dc_buf_printf(out, "  %s; %lld\n", line[j], (long long)count[j]);
  if (more) dc_buf_printf(out, "  ... and %lld more kernels\n", (long long)more);
  dc_buf_free(&why);
  dc_diags_free(&d);
}

static int cmd_explain(int argc, char **argv) {
  const cli_command *cmd = &cli_cmd_explain_def;
  if (cli_wants_help(cmd, argc, argv)) return CLI_EXIT_OK;
  const char *study_path = NULL, *out_path = NULL;
  int64_t point = 0, rank = -1;
  dc_override *ov = dc_xcalloc((size_t)argc + 1, sizeof *ov);
  size_t n_ov = 0;
  int rc = CLI_EXIT_USAGE;
  /* --only: the sections to print (bit i: sections[i]); all by default */
  enum { S_OPS = 1u, S_COLL = 2u, S_MODELS = 4u, S_METRICS = 8u,
         S_PLAN = 16u };
  static const char *const sections[] = {"ops", "collectives", "models",
                                         "metrics", "plan"};
  unsigned only = 0;
  enum { O_D, O_POINT, O_RANK, O_OUT, O_BUDGET, O_ONLY };
  static const cli_opt opts[] = {[O_D] = {"-D", NULL, true, true},
                                 [O_POINT] = {"--point", "-p", true},
                                 [O_RANK] = {"--rank", NULL, true},
                                 [O_OUT] = {NULL, "-o", true},
                                 [O_BUDGET] = {"--memory-budget", NULL,
                                               true},
                                 [O_ONLY] = {"--only", NULL, true, true},
                                 {0}};
  cli_iter it = cli_args(argc, argv, 1);
  char *v;
  for (int k; (k = cli_next(cmd, opts, &it, &v)) != CLI_END;) {
    if (k == CLI_FAIL) {
      rc = CLI_EXIT_USAGE;
      goto done;
    }
    if (k == O_POINT) {
      if (!cli_parse_int(v, 0, INT64_MAX, &point)) {
        rc = cli_usage_error(cmd, "--point wants a point index >= 0, not "
                                     "'%s'", v);
        goto done;
      }
    } else if (k == O_RANK) {
      if (!cli_parse_int(v, 0, INT32_MAX, &rank)) {
        rc = cli_usage_error(cmd, "--rank wants a rank >= 0, not '%s'",
                             v);
        goto done;
      }
    } else if (k == O_OUT) {
      out_path = v;
    } else if (k == O_D) {
      rc = cli_define_value(cmd, v, ov, &n_ov);
      if (rc) goto done;
    } else if (k == O_BUDGET) {
      rc = cli_memory_budget(cmd, v);
      if (rc) goto done;
    } else if (k == O_ONLY) {
      size_t i = 0;
      while (i < DC_COUNTOF(sections) && strcmp(v, sections[i]) != 0) i++;
      if (i == DC_COUNTOF(sections)) {
        rc = cli_usage_error(cmd, "--only '%s': expected ops, collectives, "
                                  "plan, models or metrics", v);
        goto done;
      }
      only |= 1u << i;
    } else if (!study_path) {
      study_path = v;
    } else {
      rc = cli_usage_error(cmd, "more than one study");
      goto done;
    }
  }
  if (!study_path) {
    rc = cli_usage_error(cmd, "no study file given");
    goto done;
  }
  if (!only) only = (1u << DC_COUNTOF(sections)) - 1;

  dc_study *s = cli_load_study(study_path, ov, n_ov);
  if (!s || !cli_check_catalogs(s)) {
    dc_study_free(s);
    rc = CLI_EXIT_INPUT;
    goto done;
  }
  int64_t n = dc_study_point_count(s);
  rc = cli_check_point(cmd, s, point);
  if (rc) {
    dc_study_free(s);
    goto done;
  }
  dc_diags d = {0};
  dc_arena a;
  dc_arena_init(&a);
  dc_point *p = dc_arena_alloc(&a, sizeof *p);
  dc_study_point(s, point, &a, p);
  const dc_graph *g = dc_plan_build_graph(p, DC_GRAPH_FULL, &a, &d);
  dc_eval_result r;
  dc_metrics m;
  dc_profile prof;
  rc = CLI_EXIT_INPUT;
  if (g && dc_eval_point(g, true, &a, &r, &m, &prof, &d)) {
    if (rank < 0) rank = r.critical_rank;
    if (rank >= g->n_ranks) {
      rc = cli_usage_error(cmd, "--rank %lld is out of range: the point "
                                   "has %d rank%s",
                           (long long)rank, (int)g->n_ranks,
                           g->n_ranks == 1 ? "" : "s");
    } else {
      dc_buf out = {0};
      dc_buf_printf(&out, "study %s, point %lld of %lld", dc_study_name(s),
                    (long long)point, (long long)n);
      for (int32_t i = 0; i < p->n_params; i++)
        dc_buf_printf(&out, "%s %s=%s", i ? "," : ":", p->params[i].path,
                      p->params[i].value);
      char lay[64];
      dc_point_layout(p, lay, sizeof lay);
      dc_buf_printf(&out, "\nmodel %s, gpu %s x%d (%s), batch %lld, %s\n",
                    p->model_name ? p->model_name : "custom", p->gpu,
                    (int)p->gpus, lay, (long long)p->batch_size,
                    dc_precision_name(p->precision));
      if (only & S_OPS) dc_explain_write(g, &r, &prof, (int32_t)rank, &out);
      dc_device dev;
      if ((only & S_COLL) && dc_device_of_point(p, &dev, &a, &d))
        dc_explain_collectives(g, &r, &dev, (int32_t)rank, &out);
      if (only & S_PLAN) dc_explain_plan(p, g->plan, &out);
      if (only & S_MODELS) kernel_models(g, p, (int32_t)rank, &a, &out);
      if (only & S_METRICS) dc_buf_puts(&out, "\n");
      for (int k = 0; (only & S_METRICS) && k < DC_METRIC_COUNT_; k++) {
        if (k == DC_METRIC_SPEEDUP) continue;
        dc_buf_printf(&out, "%-16s ", dc_metric_name((dc_metric_id)k));
        dc_metric_format((dc_metric_id)k, &m, &out);
        dc_buf_putc(&out, '\n');
      }
      rc = cli_write_file_atomic(out_path, out.data, out.len) ? CLI_EXIT_OK
                                                             : CLI_EXIT_INPUT;
      dc_buf_free(&out);
    }
  }
  if (d.count) cli_report(&d);
  dc_arena_free(&a);
  dc_diags_free(&d);
  dc_study_free(s);
done:
  free(ov);
  return rc;
}

const cli_command cli_cmd_explain_def = {
    "explain", cmd_explain,
    "dlrmc explain STUDY.yaml [--point N] [--rank R] [--only SECTION]... "
    "[-D path=value]... [-o OUT]",
    "Per-op breakdown of one point's predicted iteration.",
    "Evaluates one sweep point (index N, 0-based, default 0) and prints, for\n"
    "every top-level op of one rank (default: the slowest), in microseconds:\n"
    "  cpu_start  host time when the op began (before its T1)\n"
    "  cpu        host time the op took, T1 to T3 inclusive\n"
    "  T1..T5     overheads paid (T4 and T5 summed over its launches)\n"
    "  sync       time the host waited for the GPU (blocking copies, .cpu())\n"
    "  kern       kernels launched; kernel_us their predicted time\n"
    "  gpu_idle   stream idle time right before its kernels: the GPU time\n"
    "             the op's host side (or a dependency) left unused\n"
    "then, on more than one GPU, the rank's collectives: the algorithm and\n"
    "protocol NCCL's tuner would pick, the bytes, the NVLink domains, the\n"
    "time inside and across a domain (spec/collectives.md), and the\n"
    "sharding plan, one line per table (spec/multi-gpu.md); which model\n"
    "priced the rank's kernels and why (a fitted model's distance to its\n"
    "data against its gate, a fitted family's constants;\n"
    "spec/calibrate.md); and the point's metrics. --only SECTION (ops,\n"
    "collectives, plan, models, metrics; repeatable) prints only those\n"
    "sections\n"
    "after the point's two header lines. --memory-budget SIZE raises the\n"
    "memory one point may need (default 1GiB; spec/numbers.md).\n"};
