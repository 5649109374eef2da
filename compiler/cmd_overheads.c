/*
 * cmd_overheads.c — `dlrmc overheads`: placeholder until its issue lands; it says so
 * and exits with the usage status rather than pretending to work.
 */
#include "compiler/cmd.h"

static int cmd_overheads(int argc, char **argv) {
  if (dc_cli_wants_help(&dc_cmd_overheads_def, argc, argv)) return DC_EXIT_OK;
  fprintf(stderr, "dlrmc overheads: not available yet in this version (tracked by %s)\n",
          "issue #6");
  return DC_EXIT_USAGE;
}

const dc_command dc_cmd_overheads_def = {
    "overheads", cmd_overheads, "dlrmc overheads extract TRACE.json... [-o PROFILE.yaml] [--steps A:B] [--name NAME]", "Extract a host-overhead profile from PyTorch profiler traces.",
    "Not available yet in this version.\n"};
