/*
 * cmd_overheads.c — `dlrmc overheads extract TRACE... [-o PROFILE.yaml]
 * [--steps A:B] [--name NAME] [--profiler-correction C] [--check]`:
 * PyTorch profiler (Kineto) traces in, one
 * host-overhead profile out (spec/design.md). Each trace is read, analysed
 * and dropped before the next one, so memory is that of the largest
 * trace; the samples of all traces are pooled into one shared profile.
 * All files are checked and every error reported before exiting 1;
 * nothing is written unless every trace was read.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compiler/cli/cli_int.h"
#include "runtime/runtime.h"
#include "runtime/trace/trace.h"

/* "dir/a100_x_kineto.json.gz" -> "a100_x_kineto". */
static char *default_name(const char *path) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  char *s = dc_xstrdup(b);
  static const char *const ext[] = {".gz", ".json", ".trace"};
  for (size_t i = 0; i < DC_COUNTOF(ext); i++) {
    size_t n = strlen(s), k = strlen(ext[i]);
    if (n > k && strcmp(s + n - k, ext[i]) == 0) s[n - k] = '\0';
  }
  return s;
}

/* --profiler-correction measured | paper | none | CPU_US[,GPU_US] */
static bool parse_correction(const char *v, bool *measured,
                             dc_ovh_correction *c) {
  *measured = false;
  if (strcmp(v, "measured") == 0) {
    *measured = true;
    return true;
  }
  if (strcmp(v, "paper") == 0) {
    *c = (dc_ovh_correction){DC_TRACE_CPU_EVENT_US, DC_TRACE_GPU_EVENT_US};
    return true;
  }
  if (strcmp(v, "none") == 0) {
    *c = (dc_ovh_correction){0.0, 0.0};
    return true;
  }
  char *end;
  errno = 0;
  double cpu = strtod(v, &end), gpu = 0.0;
  if (end == v || errno) return false;
  if (*end == ',') {
    const char *g = end + 1;
    gpu = strtod(g, &end);
    if (end == g || errno) return false;
  }
  if (*end != '\0' || !(cpu >= 0 && cpu <= 1000) || !(gpu >= 0 && gpu <= 1000))
    return false;
  *c = (dc_ovh_correction){cpu, gpu};
  return true;
}

/* --check: the profile against each trace's own host time per step. */
static bool check_traces(const char *const *traces, size_t n,
                         const dc_trace_steps_sel *sel, const dc_profile *p,
                         bool measured, dc_ovh_correction corr, dc_arena *a,
                         dc_diags *d) {
  for (size_t i = 0; i < n; i++) {
    dc_trace t;
    dc_trace_model m;
    if (!dc_trace_load(traces[i], &t, a, d)) return false;
    if (!dc_trace_model_build(&t, sel, &m, d)) {
      dc_trace_free(&t);
      return false;
    }
    double meas, pred;
    /* the correction the samples had */
    dc_ovh_correction c = measured ? dc_ovh_measure_correction(&m) : corr;
    dc_ovh_host_check(&m, p, c, &meas, &pred);
    size_t steps = 0;
    for (size_t s = 0; s < m.n_steps; s++) steps += m.step_selected[s];
    double per = steps ? (double)steps : 1.0;
    fprintf(stderr,
            "dlrmc overheads: check %s: %zu steps, %zu top-level ops; host "
            "time per step measured %.3f ms, the profile gives %.3f ms "
            "(%+.1f %%)\n",
            traces[i], steps, m.n_tops, meas / per / 1000.0,
            pred / per / 1000.0,
            meas > 0 ? 100.0 * (pred / meas - 1.0) : 0.0);
    dc_trace_model_free(&m);
    dc_trace_free(&t);
  }
  return true;
}

static int cmd_overheads(int argc, char **argv) {
  const cli_command *cmd = &cli_cmd_overheads_def;
  if (cli_wants_help(cmd, argc, argv)) return CLI_EXIT_OK;
  int sub = cli_subcommand(cmd, argc, argv, "extract");
  if (sub) return sub;
  const char *out_path = NULL, *name = NULL, *steps_text = NULL;
  const char *corr_text = "measured";
  bool check = false;
  dc_trace_steps_sel sel = {0};
  const char **traces = dc_xcalloc((size_t)argc, sizeof *traces);
  size_t n_traces = 0;
  enum { O_CHECK, O_OUT, O_STEPS, O_NAME, O_CORR };
  static const cli_opt opts[] = {
      [O_CHECK] = {"--check", NULL, false},
      [O_OUT] = {"--output", "-o", true},
      [O_STEPS] = {"--steps", NULL, true},
      [O_NAME] = {"--name", NULL, true},
      [O_CORR] = {"--profiler-correction", NULL, true},
      {0}};
  cli_iter it = cli_args(argc, argv, 2); /* after the subcommand */
  char *v;
  for (int k; (k = cli_next(cmd, opts, &it, &v)) != CLI_END;) {
    switch (k) {
    case CLI_FAIL: free(traces); return CLI_EXIT_USAGE;
    case O_CHECK: check = true; break;
    case O_OUT: out_path = v; break;
    case O_STEPS: steps_text = v; break;
    case O_NAME: name = v; break;
    case O_CORR: corr_text = v; break;
    default: traces[n_traces++] = v;
    }
  }
  if (n_traces == 0) {
    free(traces);
    return cli_usage_error(cmd, "no trace given");
  }
  if (steps_text && !dc_trace_steps_parse(steps_text, &sel)) {
    free(traces);
    return cli_usage_error(cmd,
                           "bad --steps '%s' (expected A:B, A:, :B "
                           "or N, with step numbers A <= B)",
                           steps_text);
  }

  bool measured;
  dc_ovh_correction corr = {0.0, 0.0};
  if (!parse_correction(corr_text, &measured, &corr)) {
    free(traces);
    return cli_usage_error(cmd,
                           "bad --profiler-correction '%s' (expected "
                           "measured, paper, none or CPU_US[,GPU_US], "
                           "0 to 1000 us)",
                           corr_text);
  }

  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_ovh_acc *acc = dc_ovh_acc_new();
  dc_buf corr_used = {0};
  int64_t n_steps = 0;
  dc_buf src = {0};
  for (size_t i = 0; i < n_traces; i++) {
    dc_trace t;
    dc_trace_model m;
    if (!dc_trace_load(traces[i], &t, &a, &d)) continue;
    if (dc_trace_model_build(&t, &sel, &m, &d)) {
      if (m.n_steps == 0) {
        dc_span sp = {t.src, 0, 0, 0};
        dc_diag *g = dc_diag_warning(&d, DC_DIAG_BAD_TRACE, sp,
                                     "no ProfilerStep#N events: every op of "
                                     "the trace counts, warm-up included");
        dc_diag_set_help(g, "profile with torch.profiler.schedule(wait, "
                            "warmup, active) and prof.step() per iteration");
      }
      dc_ovh_correction c = measured ? dc_ovh_measure_correction(&m) : corr;
      dc_buf_printf(&corr_used, "%s%.3g+%.3g us", corr_used.len ? ", " : "",
                    c.cpu_us, c.gpu_us);
      dc_ovh_acc_add(acc, &m, c);
      for (size_t s = 0; s < m.n_steps; s++)
        n_steps += m.step_selected[s];
      dc_trace_model_free(&m);
    }
    dc_trace_free(&t);
    const char *b = strrchr(traces[i], '/');
    dc_buf_printf(&src, "%s%s", i ? ", " : "", b ? b + 1 : traces[i]);
  }
  int rc = CLI_EXIT_OK;
  if (d.errors == 0 && dc_ovh_acc_ops(acc) == 0) {
    dc_span none = {0};
    dc_diag *g = dc_diag_error(
        &d, DC_DIAG_BAD_TRACE, none, "no top-level ops found in the trace%s%s",
        n_traces > 1 ? "s" : "", sel.given ? " (in the selected steps)" : "");
    dc_diag_set_help(g, "a profile needs CPU ops (cpu_op or Operator "
                        "events); was the trace recorded with "
                        "ProfilerActivity.CPU?");
  }
  if (d.errors) {
    cli_report(&d);
    rc = CLI_EXIT_INPUT;
    goto done;
  }
  {
    char *nm = name ? dc_xstrdup(name) : default_name(traces[0]);
    dc_buf source = {0};
    dc_buf_printf(&source, "dlrmc overheads extract: %s; %lld top-level ops",
                  src.data, (long long)dc_ovh_acc_ops(acc));
    if (n_steps) dc_buf_printf(&source, " in %lld steps", (long long)n_steps);
    if (steps_text) dc_buf_printf(&source, " (--steps %s)", steps_text);
    dc_buf_printf(&source, "; profiler correction %s per CPU+GPU event (%s)",
                  corr_used.data ? corr_used.data : "-", corr_text);
    dc_profile p;
    dc_ovh_acc_profile(acc, nm, source.data, &p, &a);
    if (check && !check_traces(traces, n_traces, &sel, &p, measured, corr, &a, &d)) {
      cli_report(&d);
      rc = CLI_EXIT_INPUT;
      dc_buf_free(&source);
      free(nm);
      goto done;
    }
    dc_buf yaml = {0};
    dc_profile_write(&p, &yaml);
    if (!cli_write_file_atomic(out_path, yaml.data, yaml.len))
      rc = CLI_EXIT_INPUT;
    else if (out_path && strcmp(out_path, "-") != 0)
      fprintf(stderr,
              "dlrmc overheads: %zu op names, %zu runtime calls from %lld "
              "top-level ops -> %s\n",
              p.n_ops, p.n_runtime, (long long)dc_ovh_acc_ops(acc), out_path);
    dc_buf_free(&yaml);
    dc_buf_free(&source);
    free(nm);
  }
  if (d.count) cli_report(&d); /* warnings */
done:
  dc_buf_free(&corr_used);
  dc_buf_free(&src);
  dc_ovh_acc_free(acc);
  dc_diags_free(&d);
  dc_arena_free(&a);
  free(traces);
  return rc;
}

const cli_command cli_cmd_overheads_def = {
    "overheads", cmd_overheads,
    "dlrmc overheads extract TRACE.json... [-o PROFILE.yaml] [--steps A:B] "
    "[--name NAME] [--profiler-correction C] [--check]",
    "Extract a host-overhead profile from PyTorch profiler traces.",
    "Reads PyTorch profiler (Kineto) Chrome-trace JSON files, plain or gzip,\n"
    "in the current categories (cpu_op, cuda_runtime, kernel, ...) or the\n"
    "2021 ones (Operator, Runtime, Kernel, ...), and measures the host\n"
    "overheads of the paper's Fig. 6 per top-level op and CUDA runtime\n"
    "call: T1 between top-level ops, T2 before an op's first launch, T3\n"
    "after its last, T4 the runtime call itself, T5 between launches (or\n"
    "the whole CPU time of an op without kernels). The profiler's own cost\n"
    "per profiled event is subtracted (at most half of any interval, so\n"
    "no sample is made zero by it), negatives clamp to 0 and outliers are\n"
    "dropped by the IQR rule. Several traces are pooled into one shared\n"
    "profile; its defaults are the means over all instances.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE  write the profile YAML there (atomically); default\n"
    "                     standard output\n"
    "  --steps A:B        only ProfilerStep#A..#B (inclusive; A:, :B and N\n"
    "                     work too); default every step, or the whole trace\n"
    "                     when it has no ProfilerStep events\n"
    "  --name NAME        the profile's name (default: the first trace's\n"
    "                     file name)\n"
    "  --profiler-correction C\n"
    "                     the profiler's cost subtracted per CPU event and\n"
    "                     per launch: `measured` (default: per trace, the\n"
    "                     5th percentile of the gaps between sibling CPU\n"
    "                     events, and 0 per launch), `paper` (2 and 4 us,\n"
    "                     the paper's 2021 setup), `none`, or CPU_US[,GPU_US]\n"
    "  --check            then replay each trace's top-level ops with the\n"
    "                     profile and print its host time per step beside\n"
    "                     the measured one (on standard error)\n"
    "\n"
    "The profile is what system.overheads takes in a study (a path).\n"
    "Execution traces (ET, Chakra) carry no timings and are refused.\n"};
