/*
 * cmd_gpus.c — `dlrmc gpus`: placeholder until its issue lands; it says so
 * and exits with the usage status rather than pretending to work.
 */
#include "compiler/cmd.h"

static int cmd_gpus(int argc, char **argv) {
  if (dc_cli_wants_help(&dc_cmd_gpus_def, argc, argv)) return DC_EXIT_OK;
  fprintf(stderr, "dlrmc gpus: not available yet in this version (tracked by %s)\n",
          "issue #4");
  return DC_EXIT_USAGE;
}

const dc_command dc_cmd_gpus_def = {
    "gpus", cmd_gpus, "dlrmc gpus [NAME]", "List the GPU catalog or show one entry.",
    "Not available yet in this version.\n"};
