/*
 * cmd_explain.c — `dlrmc explain`: placeholder until its issue lands; it says so
 * and exits with the usage status rather than pretending to work.
 */
#include "compiler/cmd.h"

static int cmd_explain(int argc, char **argv) {
  if (dc_cli_wants_help(&dc_cmd_explain_def, argc, argv)) return DC_EXIT_OK;
  fprintf(stderr, "dlrmc explain: not available yet in this version (tracked by %s)\n",
          "issue #5");
  return DC_EXIT_USAGE;
}

const dc_command dc_cmd_explain_def = {
    "explain", cmd_explain, "dlrmc explain STUDY.yaml [--point N]", "Per-op breakdown of one point's predicted iteration.",
    "Not available yet in this version.\n"};
