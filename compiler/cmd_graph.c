/*
 * cmd_graph.c — `dlrmc graph`: placeholder until its issue lands; it says so
 * and exits with the usage status rather than pretending to work.
 */
#include "compiler/cmd.h"

static int cmd_graph(int argc, char **argv) {
  if (dc_cli_wants_help(&dc_cmd_graph_def, argc, argv)) return DC_EXIT_OK;
  fprintf(stderr, "dlrmc graph: not available yet in this version (tracked by %s)\n",
          "issue #3");
  return DC_EXIT_USAGE;
}

const dc_command dc_cmd_graph_def = {
    "graph", cmd_graph, "dlrmc graph STUDY.yaml [--point N] [--format et|dot|text] [-o FILE]", "Write the training-iteration graph of one point.",
    "Not available yet in this version.\n"};
