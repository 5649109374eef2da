/*
 * cmd_check.c — `dlrmc check`: placeholder until its issue lands; it says so
 * and exits with the usage status rather than pretending to work.
 */
#include "compiler/cmd.h"

static int cmd_check(int argc, char **argv) {
  if (dc_cli_wants_help(&dc_cmd_check_def, argc, argv)) return DC_EXIT_OK;
  fprintf(stderr, "dlrmc check: not available yet in this version (tracked by %s)\n",
          "issue #2");
  return DC_EXIT_USAGE;
}

const dc_command dc_cmd_check_def = {
    "check", cmd_check, "dlrmc check STUDY.yaml [-D path=value]...", "Check a study and print its number of points.",
    "Not available yet in this version.\n"};
