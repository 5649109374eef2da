/*
 * cmd_kernel.c — `dlrmc kernel`: placeholder until its issue lands; it says so
 * and exits with the usage status rather than pretending to work.
 */
#include "compiler/cmd.h"

static int cmd_kernel(int argc, char **argv) {
  if (dc_cli_wants_help(&dc_cmd_kernel_def, argc, argv)) return DC_EXIT_OK;
  fprintf(stderr, "dlrmc kernel: not available yet in this version (tracked by %s)\n",
          "issue #4");
  return DC_EXIT_USAGE;
}

const dc_command dc_cmd_kernel_def = {
    "kernel", cmd_kernel, "dlrmc kernel KIND key=value... --gpu NAME [--csv FILE]", "Price one kernel (or every row of a CSV) on a GPU.",
    "Not available yet in this version.\n"};
