/*
 * cmd_run.c — `dlrmc run`: placeholder until its issue lands; it says so
 * and exits with the usage status rather than pretending to work.
 */
#include "compiler/cmd.h"

static int cmd_run(int argc, char **argv) {
  if (dc_cli_wants_help(&dc_cmd_run_def, argc, argv)) return DC_EXIT_OK;
  fprintf(stderr, "dlrmc run: not available yet in this version (tracked by %s)\n",
          "issue #5");
  return DC_EXIT_USAGE;
}

const dc_command dc_cmd_run_def = {
    "run", cmd_run, "dlrmc run STUDY.yaml [-o OUT] [--format csv|md|jsonl] [-D path=value]... [--jobs N] [--shard K/N] [--timeline DIR]", "Predict every point of a study and write the comparison table.",
    "Not available yet in this version.\n"};
