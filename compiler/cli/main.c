/*
 * main.c — the `dlrmc` driver: dispatches to one subcommand (cmd_*.c) and
 * owns the global options (--help, --version). Commands are listed in one
 * table so that `dlrmc --help`, `dlrmc help CMD` and dispatch never drift.
 * Two rules hold for every command here: an empty output name (-o '',
 * --output=, --timeline '') is a usage error (exit 2), and a failed
 * write to standard output, found when it is flushed and closed at exit
 * (/dev/full, a full disk), is exit 1 whatever the command returned.
 */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "compiler/cli/cli_int.h"

#ifndef DC_VERSION
#define DC_VERSION "0.0.0"
#endif

static const cli_command *const commands[] = {
    &cli_cmd_check_def,     &cli_cmd_run_def,   &cli_cmd_graph_def,
    &cli_cmd_explain_def,   &cli_cmd_gpus_def,  &cli_cmd_kernel_def,
    &cli_cmd_fit_def,       &cli_cmd_overheads_def, &cli_cmd_trace_def,
    &cli_cmd_replay_def,    &cli_cmd_calibrate_def, &cli_cmd_report_def,
};

static const cli_command *find_command(const char *name) {
  for (size_t i = 0; i < DC_COUNTOF(commands); i++)
    if (strcmp(commands[i]->name, name) == 0) return commands[i];
  return NULL;
}

static void print_usage(FILE *out) {
  fputs("dlrmc — what-if performance compiler for DLRM training on GPUs\n\n"
        "usage: dlrmc COMMAND [ARGS...]\n"
        "       dlrmc help COMMAND | --help | --version\n\ncommands:\n",
        out);
  for (size_t i = 0; i < DC_COUNTOF(commands); i++)
    fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
  fputs("\nThe study language is documented in spec/study.md; "
        "`dlrmc help COMMAND` shows a command's options.\n",
        out);
}

static void unknown_command(const char *name) {
  const char *names[DC_COUNTOF(commands)];
  for (size_t i = 0; i < DC_COUNTOF(commands); i++) names[i] = commands[i]->name;
  fprintf(stderr, "dlrmc: unknown command '%s'\n", name);
  const char *s = dc_suggest(name, names, DC_COUNTOF(commands));
  if (s) fprintf(stderr, "  = help: did you mean '%s'?\n", s);
  fputs("  = help: run 'dlrmc --help' for the list of commands\n", stderr);
}

/* -o '', --output '', --output=, --timeline '': 0 or the usage exit. */
static int empty_output(const cli_command *c, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool takes = strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 ||
                 strcmp(a, "--timeline") == 0;
    if (takes && i + 1 < argc && !argv[i + 1][0])
      return cli_usage_error(c, "option '%s' needs a file name, not ''",
                             a);
    if (strcmp(a, "--output=") == 0 || strcmp(a, "--timeline=") == 0)
      return cli_usage_error(c, "option '%.*s' needs a file name, not ''",
                             (int)strlen(a) - 1, a);
  }
  return 0;
}

/* Every exit goes through here: standard output is flushed and closed,
 * and a write that failed makes a successful command exit 1 (a command
 * that failed has said why: a failed table write is reported where it
 * happens). */
static int finish(int rc) {
  dc_buf err = {0};
  if (!dc_stdout_close(&err) && rc == CLI_EXIT_OK) {
    fprintf(stderr, "dlrmc: error: %s\n", err.data ? err.data : "");
    rc = CLI_EXIT_INPUT;
  }
  dc_buf_free(&err);
  return rc;
}

static int run(int argc, char **argv);

int main(int argc, char **argv) { return finish(run(argc, argv)); }

static int run(int argc, char **argv) {
  /* Numbers are printed in the C locale whatever the environment says. */
  setlocale(LC_ALL, "C");
  if (argc < 2) {
    print_usage(stderr);
    return CLI_EXIT_USAGE;
  }
  const char *a = argv[1];
  if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
    print_usage(stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
    printf("dlrmc %s\n", DC_VERSION);
    return CLI_EXIT_OK;
  }
  if (strcmp(a, "help") == 0) {
    if (argc < 3) {
      print_usage(stdout);
      return CLI_EXIT_OK;
    }
    const cli_command *c = find_command(argv[2]);
    if (!c) {
      unknown_command(argv[2]);
      return CLI_EXIT_USAGE;
    }
    printf("usage: %s\n\n%s\n\n%s", c->synopsis, c->summary, c->help);
    return CLI_EXIT_OK;
  }
  const cli_command *c = find_command(a);
  if (!c) {
    unknown_command(a);
    return CLI_EXIT_USAGE;
  }
  int rc = empty_output(c, argc - 1, argv + 1);
  return rc ? rc : c->fn(argc - 1, argv + 1);
}
