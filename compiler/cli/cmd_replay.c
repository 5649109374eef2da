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
  enum { O_CSV, O_GPU, O_OVERHEADS, O_OUT };
  static const dc_cli_opt opts[] = {[O_CSV] = {"--csv", NULL, false},
                                    [O_GPU] = {"--gpu", NULL, true},
                                    [O_OVERHEADS] = {"--overheads", NULL, true},
                                    [O_OUT] = {"--output", "-o", true},
                                    {0}};
  dc_cli_iter it = dc_cli_args(argc, argv, 1);
  char *v;
  for (int k; (k = dc_cli_next(cmd, opts, &it, &v)) != DC_CLI_END;) {
    switch (k) {
    case DC_CLI_FAIL: return DC_EXIT_USAGE;
    case O_CSV: o.csv = true; break;
    case O_GPU: o.gpu = v; break;
    case O_OVERHEADS: o.overheads = v; break;
    case O_OUT: out_path = v; break;
    default:
      if (!o.et_path)
        o.et_path = v;
      else if (!o.kineto_path)
        o.kineto_path = v;
      else
        return dc_cli_usage_error(cmd,
                                  "unexpected argument '%s': give the "
                                  "execution trace and at most one "
                                  "Kineto trace",
                                  v);
    }
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
    "                       or `self`: extracted from KINETO.json. Default:\n"
    "                       `self` when KINETO.json holds GPU activity;\n"
    "                       paper-v100 with no Kineto trace or one recorded\n"
    "                       on the CPU only (it times the work inside each\n"
    "                       op, not the host's launch overhead). The report\n"
    "                       names the profile used\n"
    "  --csv                CSV rows instead of Markdown: e2e, gpu_active,\n"
    "                       gpu_idle, cpu, then one per kernel family\n"
    "  -o, --output FILE    write there (atomically) instead of stdout\n"
    "Exit status: 0 ok, 1 unreadable input, 2 usage errors.\n"};
