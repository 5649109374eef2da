/*
 * cmd_replay.c — `dlrmc replay ET... [KINETO...] --gpu NAME
 * [--overheads PROFILE|self] [--csv] [-o FILE]`: predicts the iteration a
 * PyTorch execution trace recorded and, given the Kineto trace of the same
 * run, compares the prediction with the measurement (runtime/trace/
 * replay.c; spec/replay.md). A thin wrapper: arguments in, report out.
 *
 * Exit status: 0 written; 1 a trace, the GPU or the profile cannot be
 * read (diagnostics on stderr, nothing written); 2 usage errors.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "runtime/trace/trace.h"

static int cmd_replay(int argc, char **argv) {
  const cli_command *cmd = &cli_cmd_replay_def;
  if (cli_wants_help(cmd, argc, argv)) return CLI_EXIT_OK;
  dc_replay_opts o = {0};
  const char *out_path = NULL;
  enum { O_CSV, O_GPU, O_OVERHEADS, O_OUT };
  static const cli_opt opts[] = {[O_CSV] = {"--csv", NULL, false},
                                 [O_GPU] = {"--gpu", NULL, true},
                                 [O_OVERHEADS] = {"--overheads", NULL, true},
                                 [O_OUT] = {"--output", "-o", true},
                                 {0}};
  const char **paths = dc_xmalloc((size_t)argc * sizeof *paths);
  int32_t n_paths = 0;
  cli_iter it = cli_args(argc, argv, 1);
  char *v;
  for (int k; (k = cli_next(cmd, opts, &it, &v)) != CLI_END;) {
    switch (k) {
    case CLI_FAIL: free(paths); return CLI_EXIT_USAGE;
    case O_CSV: o.csv = true; break;
    case O_GPU: o.gpu = v; break;
    case O_OVERHEADS: o.overheads = v; break;
    case O_OUT: out_path = v; break;
    default: paths[n_paths++] = v; /* traces, classified by content */
    }
  }
  if (n_paths == 0 || !o.gpu) {
    free(paths);
    return n_paths == 0
               ? cli_usage_error(cmd, "missing the execution trace")
               : cli_usage_error(cmd, "--gpu NAME is required (`dlrmc "
                                         "gpus` lists the catalog)");
  }
  o.paths = paths;
  o.n_paths = n_paths;
  dc_diags d = {0};
  d.max_errors = 100;
  dc_arena arena;
  dc_arena_init(&arena);
  dc_buf out = {0};
  int rc = CLI_EXIT_INPUT;
  if (dc_replay(&o, &out, &arena, &d))
    rc = cli_write_file_atomic(out_path, out.data ? out.data : "", out.len)
             ? CLI_EXIT_OK
             : CLI_EXIT_INPUT;
  cli_report(&d);
  dc_buf_free(&out);
  dc_arena_free(&arena);
  dc_diags_free(&d);
  free(paths);
  return rc;
}

const cli_command cli_cmd_replay_def = {
    "replay", cmd_replay,
    "dlrmc replay ET... [KINETO...] --gpu NAME "
    "[--overheads PROFILE|self] [--csv] [-o FILE]",
    "Predict a recorded iteration (one rank or every rank) from its "
    "execution traces; compare with their Kineto traces.",
    "Reads PyTorch execution traces (ExecutionTraceObserver JSON, plain or\n"
    "gzip) and Kineto traces, in any order (told apart by content), prices\n"
    "the ops on GPU NAME with dlrmc's kernel models and the overhead\n"
    "profile, and evaluates the iteration. Ops are matched by\n"
    "record-function id when both traces carry it, else by op order, per\n"
    "thread (spec/replay.md). Ops no model prices are listed, and priced by\n"
    "their measured GPU time when the Kineto trace has it.\n"
    "\n"
    "One execution trace: per iteration E2E, GPU active, GPU idle and CPU\n"
    "time; per kernel family the GMAE and signed mean error over matched\n"
    "kernels; the 20 worst kernels with their shapes.\n"
    "\n"
    "Several (one per rank): each is paired with the Kineto trace of its\n"
    "process and numbered by its rank (Kineto distributedInfo); all ranks\n"
    "are evaluated together, a collective ending at its latest arrival\n"
    "plus its transfer. The clocks are aligned on the first collective\n"
    "every trace holds and the profiler's start skew reported; per rank\n"
    "predicted and measured E2E, GPU active, the wait at collectives and\n"
    "the transfer, ops matched; the slowest rank and why; per collective\n"
    "its bytes, group, transfer and each rank's wait.\n"
    "\n"
    "options:\n"
    "  --gpu NAME           the device (catalog name or GPU YAML path)\n"
    "  --overheads PROFILE  a host-overhead profile (catalog name or path),\n"
    "                       or `self`: extracted from the Kineto traces.\n"
    "                       Default: `self` when the Kineto traces hold GPU\n"
    "                       activity; paper-v100 with no Kineto trace or\n"
    "                       ones recorded on the CPU only (they time the\n"
    "                       work inside each op, not the host's launch\n"
    "                       overhead). The report names the profile used\n"
    "  --csv                CSV instead of Markdown: one rank, rows e2e,\n"
    "                       gpu_active, gpu_idle, cpu, then one per kernel\n"
    "                       family; several ranks, one row per rank (rank,\n"
    "                       e2e_pred_ms, e2e_meas_ms, gpu_active_pred_ms,\n"
    "                       gpu_active_meas_ms, comm_wait_meas_ms,\n"
    "                       ops_matched, ops, comm_wait_pred_ms,\n"
    "                       comm_transfer_meas_ms, skew_ms,\n"
    "                       comm_overlap_pred_pct, comm_overlap_meas_pct)\n"
    "  -o, --output FILE    write there (atomically) instead of stdout\n"
    "Exit status: 0 ok, 1 unreadable input or files that do not pair,\n"
    "2 usage errors.\n"};
