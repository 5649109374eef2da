/*
 * cmd_replay.c — `dlrmc replay RUN.et.json [KINETO.json] --gpu NAME
 * [--overheads PROFILE|self] [--csv] [-o FILE]`: predicts the iteration a
 * PyTorch execution trace recorded and, given the Kineto trace of the same
 * run, compares the prediction with the measurement (runtime/trace/
 * replay.c; spec/replay.md). A thin wrapper: arguments in, report out.
 *
 * Exit status: 0 written; 1 a trace, the GPU or the profile cannot be
 * read (diagnostics on stderr, nothing written); 2 usage errors.
 */
#include <string.h>

#include "compiler/cli/cmd.h"
#include "runtime/trace/trace.h"

static int cmd_replay(int argc, char **argv) {
  const dc_command *cmd = &dc_cmd_replay_def;
  if (dc_cli_wants_help(cmd, argc, argv)) return DC_EXIT_OK;
  dc_replay_opts o = {0};
  const char *out_path = NULL;
  bool dashdash = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!dashdash && strcmp(a, "--") == 0) {
      dashdash = true;
      continue;
    }
    if (dashdash || a[0] != '-' || a[1] == '\0') {
      if (!o.et_path)
        o.et_path = a;
      else if (!o.kineto_path)
        o.kineto_path = a;
      else
        return dc_cli_usage_error(cmd,
                                  "unexpected argument '%s': give the "
                                  "execution trace and at most one "
                                  "Kineto trace",
                                  a);
      continue;
    }
    if (strcmp(a, "--csv") == 0) {
      o.csv = true;
      continue;
    }
    if (strcmp(a, "--gpu") != 0 && strcmp(a, "--overheads") != 0 &&
        strcmp(a, "-o") != 0 && strcmp(a, "--output") != 0)
      return dc_cli_usage_error(cmd, "unknown option '%s'", a);
    if (i + 1 >= argc) return dc_cli_usage_error(cmd, "%s needs a value", a);
    const char *v = argv[++i];
    const char **dst = strcmp(a, "--gpu") == 0         ? &o.gpu
                       : strcmp(a, "--overheads") == 0 ? &o.overheads
                                                       : &out_path;
    if (*dst) /* the last one would win silently */
      return dc_cli_usage_error(cmd, "%s given twice ('%s', then '%s')", a,
                                *dst, v);
    *dst = v;
  }
  if (!o.et_path) return dc_cli_usage_error(cmd, "missing the execution trace");
  if (!o.gpu)
    return dc_cli_usage_error(cmd, "--gpu NAME is required (`dlrmc gpus` "
                                   "lists the catalog)");
  dc_diags d = {0};
  d.max_errors = 100;
  dc_arena arena;
  dc_arena_init(&arena);
  dc_buf out = {0};
  int rc = DC_EXIT_INPUT;
  if (dc_replay(&o, &out, &arena, &d))
    rc = dc_write_file_atomic(out_path, out.data ? out.data : "", out.len)
             ? DC_EXIT_OK
             : DC_EXIT_INPUT;
  dc_cli_report(&d);
  dc_buf_free(&out);
  dc_arena_free(&arena);
  dc_diags_free(&d);
  return rc;
}

const dc_command dc_cmd_replay_def = {
    "replay", cmd_replay,
    "dlrmc replay RUN.et.json [KINETO.json] --gpu NAME "
    "[--overheads PROFILE|self] [--csv] [-o FILE]",
    "Predict a recorded iteration from its execution trace; compare with "
    "its Kineto trace.",
    "Reads a PyTorch execution trace (ExecutionTraceObserver JSON, plain or\n"
    "gzip), prices its ops on GPU NAME with dlrmc's kernel models and the\n"
    "overhead profile, and evaluates the iteration. Given the Kineto trace\n"
    "of the same run it compares, per iteration, E2E, GPU active, GPU idle\n"
    "and CPU time; per kernel family (GEMM, embedding, element-wise,\n"
    "copies, collectives) the GMAE and the signed mean error over matched\n"
    "kernels; and lists the 20 worst kernels with their shapes. Ops are\n"
    "matched by record-function id when both traces carry it, else by op\n"
    "order (spec/replay.md). Ops no model prices are listed, and priced by\n"
    "their measured GPU time when the Kineto trace has it.\n"
    "\n"
    "options:\n"
    "  --gpu NAME           the device (catalog name or GPU YAML path)\n"
    "  --overheads PROFILE  a host-overhead profile (catalog name or path),\n"
    "                       or `self`: extracted from KINETO.json (the\n"
    "                       default with a Kineto trace; else paper-v100)\n"
    "  --csv                CSV rows instead of Markdown: e2e, gpu_active,\n"
    "                       gpu_idle, cpu, then one per kernel family\n"
    "  -o, --output FILE    write there (atomically) instead of stdout\n"
    "Exit status: 0 ok, 1 unreadable input, 2 usage errors.\n"};
