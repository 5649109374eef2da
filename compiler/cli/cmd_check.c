/*
 * cmd_check.c — `dlrmc check STUDY [-D path=value]...`: runs every check of
 * the front end (syntax, schema, values, sweeps, catalogs, constraints
 * between keys) and lowers nothing. On success it prints one line,
 *   STUDY: ok, N points
 * to stdout and exits 0; on errors it prints the diagnostics to stderr and
 * exits 1; a malformed command line exits 2. It never writes a file.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "compiler/compiler.h"

/* Parses [-D path=value | -Dpath=value]... STUDY; returns 0 or the exit
 * status of a usage error. */
int cli_study_args(const cli_command *cmd, int argc, char **argv,
                   const char **study, dc_override **ov, size_t *n_ov);
int cli_study_args(const cli_command *cmd, int argc, char **argv,
                   const char **study, dc_override **ov, size_t *n_ov) {
  static const cli_opt opts[] = {{"-D", NULL, true, true},
                                 {"--memory-budget", NULL, true, false},
                                 {0}};
  *study = NULL;
  *ov = dc_xcalloc((size_t)argc + 1, sizeof **ov);
  *n_ov = 0;
  cli_iter it = cli_args(argc, argv, 1);
  char *v;
  for (int k; (k = cli_next(cmd, opts, &it, &v)) != CLI_END;) {
    if (k == CLI_FAIL) return CLI_EXIT_USAGE;
    if (k == 0) {
      int rc = cli_define_value(cmd, v, *ov, n_ov);
      if (rc) return rc;
      continue;
    }
    if (k == 1) {
      int rc = cli_memory_budget(cmd, v);
      if (rc) return rc;
      continue;
    }
    if (*study) return cli_usage_error(cmd, "more than one study file");
    *study = v;
  }
  if (!*study) return cli_usage_error(cmd, "missing the study file");
  return 0;
}

static int cmd_check(int argc, char **argv) {
  if (cli_wants_help(&cli_cmd_check_def, argc, argv)) return CLI_EXIT_OK;
  const char *path;
  dc_override *ov;
  size_t n_ov;
  int rc = cli_study_args(&cli_cmd_check_def, argc, argv, &path, &ov,
                          &n_ov);
  if (rc) {
    free(ov);
    return rc;
  }
  dc_study *s = cli_load_study(path, ov, n_ov);
  rc = CLI_EXIT_INPUT;
  if (s && cli_check_catalogs(s)) {
    int64_t n = dc_study_point_count(s);
    printf("%s: ok, %lld point%s\n", path, (long long)n, n == 1 ? "" : "s");
    rc = CLI_EXIT_OK;
  }
  dc_study_free(s);
  free(ov);
  return rc;
}

const cli_command cli_cmd_check_def = {
    "check", cmd_check, "dlrmc check STUDY.yaml [-D path=value]... "
                        "[--memory-budget SIZE]",
    "Check a study and print its number of points.",
    "Runs every check of the study front end without evaluating anything:\n"
    "YAML syntax, unknown keys (with 'did you mean'), types, units and\n"
    "ranges of every value, sweep paths and ranges, catalog names (GPUs,\n"
    "overhead profiles, model presets) and the constraints between keys,\n"
    "for every point of the sweep. All errors are reported in one run.\n"
    "\n"
    "options:\n"
    "  -D path=value   override a key of the study (as Hydra does); a comma\n"
    "                  list (-D training.batch_size=512,1024) sweeps it\n"
    "  --memory-budget SIZE\n"
    "                  the memory one point may need (default 1GiB): a\n"
    "                  point estimated above it is an error (E0208; the\n"
    "                  estimate is in spec/numbers.md)\n"
    "\n"
    "On success prints 'STUDY: ok, N points'. Exit status: 0 ok, 1 errors\n"
    "in the study, 2 usage errors. The language is in spec/study.md and\n"
    "the error codes in spec/diagnostics.md.\n"};
