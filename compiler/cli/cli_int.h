/*
 * cli_int.h — the driver's subcommands (internal to compiler/cli/). Each
 * command lives in compiler/cli/cmd_<name>.c, reads its arguments with
 * cli_next from a table of its options and returns the process exit
 * status: 0 success, 1 errors in the user's input (study, trace, CSV), 2
 * usage errors. Commands print diagnostics to stderr with dc_diags_render
 * and results to stdout or the -o file (written to a temporary name and
 * renamed when complete: cli_write_file_atomic).
 */
#ifndef DC_COMPILER_CLI_CLI_INT_H
#define DC_COMPILER_CLI_CLI_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/support/support.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_INPUT 1
#define CLI_EXIT_USAGE 2

typedef int (*cli_cmd_fn)(int argc, char **argv);

typedef struct cli_command {
  const char *name;      /* "run" */
  cli_cmd_fn fn;
  const char *synopsis;  /* one line of usage */
  const char *summary;   /* one sentence */
  const char *help;      /* the full text of `dlrmc help NAME` */
} cli_command;

/* Defined in each cmd_<name>.c. */
extern const cli_command cli_cmd_check_def, cli_cmd_run_def, cli_cmd_graph_def,
    cli_cmd_explain_def, cli_cmd_gpus_def, cli_cmd_overheads_def,
    cli_cmd_trace_def, cli_cmd_fit_def, cli_cmd_kernel_def, cli_cmd_replay_def,
    cli_cmd_report_def, cli_cmd_calibrate_def;

/* Shared helpers for commands (compiler/cli/cmd_common.c). */

/* True when stderr is a terminal (colours, progress bars). */
bool cli_stderr_tty(void);
/* Renders diagnostics to stderr (coloured on a terminal). */
void cli_report(const dc_diags *d);
/* Prints "dlrmc CMD: message" and a usage hint to stderr; returns 2. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Writes `len` bytes to `path` atomically (temp file in the same
 * directory, fsync, rename), or to stdout when path is NULL or "-".
 * Returns false and prints the OS error on failure. */
bool cli_write_file_atomic(const char *path, const char *data, size_t len);
/* A whole decimal number in [lo, hi] (option values: --jobs, --point,
 * --epochs, ...); false for anything else, trailing junk included. */
bool cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
struct dc_override;
/* Loads a study for a command and prints its diagnostics (at most 100
 * errors, then a count); NULL when it did not load. */
struct dc_study;
struct dc_study *cli_load_study(const char *path,
                                const struct dc_override *ov,
                                size_t n_ov);
/* Loads every GPU and overhead profile the study uses, so that a broken
 * entry (a user's GPU file without a bandwidth, a malformed profile) is
 * reported before anything is evaluated; prints the diagnostics. */
bool cli_check_catalogs(const struct dc_study *s);
/* 0 when 0 <= point < the study's point count, else a usage error (2). */
int cli_check_point(const cli_command *cmd, const struct dc_study *s,
                    int64_t point);
/* Commands with one subcommand word (`overheads extract`, `trace stats`):
 * returns 0 when argv[1] is `word`, else prints a usage error and returns
 * 2. */
int cli_subcommand(const cli_command *cmd, int argc, char **argv,
                   const char *word);
/* The command line as a shell would take it back ("dlrmc run 'a b'"),
 * appended to out: the HTML report shows it. */
void cli_command_line(int argc, char **argv, dc_buf *out);
/* Renders the HTML report of a results table read from `src` (the CSV or
 * JSON lines `dlrmc run` writes) and writes it atomically to `out_path`
 * (stdout when NULL); prints diagnostics. `metric` NULL: e2e_ms. Exit
 * status: 0, or 1 with nothing written (compiler/cli/cmd_report.c). */
int cli_html_report(const dc_source *src, const char *title,
                    const char *command, const char *metric,
                    const char *out_path);
/* ---- options: one table-driven reader for every command -----------------
 * A command lists its options in a table ending with {0}. Each has a long
 * name ("--point") and/or a short one ("-p"), and either takes a value
 * or is a flag. cli_next reads argv one argument at a time:
 *   --opt value, --opt=value, -o value   an option with its value;
 *   -Dpath=value, -D path=value           the option named "-D", when the
 *                                         table has it;
 *   --                                    ends the options: every later
 *                                         argument is positional;
 *   -                                     positional (standard input);
 *   anything else starting with '-'       unknown: a usage error.
 * A flag given a value (--per-rank=x) and an option without one are usage
 * errors. -h/--help are handled before (cli_wants_help). */
typedef struct cli_opt {
  const char *name;  /* "--point"; NULL when only `brief` */
  const char *brief; /* "-p"; NULL when none */
  bool value;        /* takes a value */
  bool many;         /* a value option that may be given more than once
                        (-D); any other given twice is a usage error, as
                        the last one would win silently */
} cli_opt;

typedef struct cli_iter {
  int argc;
  char **argv;
  int i;             /* the next argument */
  bool dashdash;     /* past "--" */
  const char *arg;   /* the argument as given ("--point=3", "-p") */
  const char *given[64]; /* the value of each value option (index < 64)
                            once given */
} cli_iter;

#define CLI_ARG (-1)  /* a positional argument: *val */
#define CLI_END (-2)  /* no more arguments */
#define CLI_FAIL (-3) /* a usage error, printed: return CLI_EXIT_USAGE */

/* An iterator over argv[first..argc) (first: 1, or 2 after a
 * subcommand word). */
cli_iter cli_args(int argc, char **argv, int first);
/* The next argument: the index of the option in `opts` with its value in
 * *val (NULL for a flag), CLI_ARG with the argument in *val,
 * CLI_END, or CLI_FAIL after printing the usage error. */
int cli_next(const cli_command *cmd, const cli_opt *opts,
             cli_iter *it, char **val);
/* -D's value (path=value, split in place) into ov[*n_ov]; 0, or a usage
 * error (2). */
/* --memory-budget SIZE: sets the study memory budget (compiler.h; a size
 * as in studies, "8GiB", at least 1 MiB); 0, or the exit status of a
 * usage error. */
int cli_memory_budget(const cli_command *cmd, const char *v);
int cli_define_value(const cli_command *cmd, char *def,
                     struct dc_override *ov, size_t *n_ov);

/* Handles -h/--help for a command: prints its help, returns true. */
bool cli_wants_help(const cli_command *cmd, int argc, char **argv);

#endif /* DC_COMPILER_CLI_CLI_INT_H */
