/*
 * cmd_trace.c — `dlrmc trace`: placeholder until its issue lands; it says so
 * and exits with the usage status rather than pretending to work.
 */
#include "compiler/cmd.h"

static int cmd_trace(int argc, char **argv) {
  if (dc_cli_wants_help(&dc_cmd_trace_def, argc, argv)) return DC_EXIT_OK;
  fprintf(stderr, "dlrmc trace: not available yet in this version (tracked by %s)\n",
          "issue #6");
  return DC_EXIT_USAGE;
}

const dc_command dc_cmd_trace_def = {
    "trace", cmd_trace, "dlrmc trace stats TRACE.json [--format csv|md]", "Per-step and per-op breakdown of a PyTorch profiler trace.",
    "Not available yet in this version.\n"};
