/*
 * cmd_fit.c — `dlrmc fit`: placeholder until its issue lands; it says so
 * and exits with the usage status rather than pretending to work.
 */
#include "compiler/cmd.h"

static int cmd_fit(int argc, char **argv) {
  if (dc_cli_wants_help(&dc_cmd_fit_def, argc, argv)) return DC_EXIT_OK;
  fprintf(stderr, "dlrmc fit: not available yet in this version (tracked by %s)\n",
          "issue #4");
  return DC_EXIT_USAGE;
}

const dc_command dc_cmd_fit_def = {
    "fit", cmd_fit, "dlrmc fit gemm|transpose|tril_fwd|tril_bwd DATA.csv [-o MODEL.yaml]", "Fit an MLP kernel model to benchmark data.",
    "Not available yet in this version.\n"};
