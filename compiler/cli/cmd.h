/*
 * cmd.h — the driver's subcommands (internal to compiler/cli/). Each
 * command lives in compiler/cli/cmd_<name>.c, reads its arguments with
 * dc_cli_next from a table of its options and returns the process exit
 * status: 0 success, 1 errors in the user's input (study, trace, CSV), 2
 * usage errors. Commands print diagnostics to stderr with dc_diags_render
 * and results to stdout or the -o file (written to a temporary name and
 * renamed when complete: dc_write_file_atomic).
 */
#ifndef DC_CMD_H
#define DC_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/support/support.h"

#define DC_EXIT_OK 0
#define DC_EXIT_INPUT 1
#define DC_EXIT_USAGE 2

typedef int (*dc_cmd_fn)(int argc, char **argv);

typedef struct dc_command {
  const char *name;      /* "run" */
  dc_cmd_fn fn;
  const char *synopsis;  /* one line of usage */
  const char *summary;   /* one sentence */
  const char *help;      /* the full text of `dlrmc help NAME` */
} dc_command;

/* Defined in each cmd_<name>.c. */
extern const dc_command dc_cmd_check_def, dc_cmd_run_def, dc_cmd_graph_def,
    dc_cmd_explain_def, dc_cmd_gpus_def, dc_cmd_overheads_def,
    dc_cmd_trace_def, dc_cmd_fit_def, dc_cmd_kernel_def, dc_cmd_replay_def,
    dc_cmd_report_def, dc_cmd_calibrate_def;

/* Shared helpers for commands (compiler/cli/cmd_common.c). */

/* True when stderr is a terminal (colours, progress bars). */
bool dc_cli_stderr_tty(void);
/* Renders diagnostics to stderr (coloured on a terminal). */
void dc_cli_report(const dc_diags *d);
/* Prints "dlrmc CMD: message" and a usage hint to stderr; returns 2. */
int dc_cli_usage_error(const dc_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Writes `len` bytes to `path` atomically (temp file in the same
 * directory, fsync, rename), or to stdout when path is NULL or "-".
 * Returns false and prints the OS error on failure. */
bool dc_write_file_atomic(const char *path, const char *data, size_t len);
/* A whole decimal number in [lo, hi] (option values: --jobs, --point,
 * --epochs, ...); false for anything else, trailing junk included. */
bool dc_cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
struct dc_override;
/* Loads a study for a command and prints its diagnostics (at most 100
 * errors, then a count); NULL when it did not load. */
struct dc_study;
struct dc_study *dc_cli_load_study(const char *path,
                                   const struct dc_override *ov,
                                   size_t n_ov);
/* Loads every GPU and overhead profile the study uses, so that a broken
 * entry (a user's GPU file without a bandwidth, a malformed profile) is
 * reported before anything is evaluated; prints the diagnostics. */
bool dc_cli_check_catalogs(const struct dc_study *s);
/* 0 when 0 <= point < the study's point count, else a usage error (2). */
int dc_cli_check_point(const dc_command *cmd, const struct dc_study *s,
                       int64_t point);
/* Commands with one subcommand word (`overheads extract`, `trace stats`):
 * returns 0 when argv[1] is `word`, else prints a usage error and returns
 * 2. */
int dc_cli_subcommand(const dc_command *cmd, int argc, char **argv,
                      const char *word);
/* The command line as a shell would take it back ("dlrmc run 'a b'"),
 * appended to out: the HTML report shows it. */
void dc_cli_command_line(int argc, char **argv, dc_buf *out);
/* Renders the HTML report of a results table read from `src` (the CSV or
 * JSON lines `dlrmc run` writes) and writes it atomically to `out_path`
 * (stdout when NULL); prints diagnostics. `metric` NULL: e2e_ms. Exit
 * status: 0, or 1 with nothing written (compiler/cli/cmd_report.c). */
int dc_cli_html_report(const dc_source *src, const char *title,
                       const char *command, const char *metric,
                       const char *out_path);
/* ---- options: one table-driven reader for every command -----------------
 * A command lists its options in a table ending with {0}. Each has a long
 * name ("--point") and/or a short one ("-p"), and either takes a value
 * or is a flag. dc_cli_next reads argv one argument at a time:
 *   --opt value, --opt=value, -o value   an option with its value;
 *   -Dpath=value, -D path=value           the option named "-D", when the
 *                                         table has it;
 *   --                                    ends the options: every later
 *                                         argument is positional;
 *   -                                     positional (standard input);
 *   anything else starting with '-'       unknown: a usage error.
 * A flag given a value (--per-rank=x) and an option without one are usage
 * errors. -h/--help are handled before (dc_cli_wants_help). */
typedef struct dc_cli_opt {
  const char *name;  /* "--point"; NULL when only `brief` */
  const char *brief; /* "-p"; NULL when none */
  bool value;        /* takes a value */
  bool many;         /* a value option that may be given more than once
                        (-D); any other given twice is a usage error, as
                        the last one would win silently */
} dc_cli_opt;

typedef struct dc_cli_iter {
  int argc;
  char **argv;
  int i;             /* the next argument */
  bool dashdash;     /* past "--" */
  const char *arg;   /* the argument as given ("--point=3", "-p") */
  const char *given[64]; /* the value of each value option (index < 64)
                            once given */
} dc_cli_iter;

#define DC_CLI_ARG (-1)  /* a positional argument: *val */
#define DC_CLI_END (-2)  /* no more arguments */
#define DC_CLI_FAIL (-3) /* a usage error, printed: return DC_EXIT_USAGE */

/* An iterator over argv[first..argc) (first: 1, or 2 after a
 * subcommand word). */
dc_cli_iter dc_cli_args(int argc, char **argv, int first);
/* The next argument: the index of the option in `opts` with its value in
 * *val (NULL for a flag), DC_CLI_ARG with the argument in *val,
 * DC_CLI_END, or DC_CLI_FAIL after printing the usage error. */
int dc_cli_next(const dc_command *cmd, const dc_cli_opt *opts,
                dc_cli_iter *it, char **val);
/* -D's value (path=value, split in place) into ov[*n_ov]; 0, or a usage
 * error (2). */
/* --memory-budget SIZE: sets the study memory budget (compiler.h; a size
 * as in studies, "8GiB", at least 1 MiB); 0, or the exit status of a
 * usage error. */
int dc_cli_memory_budget(const dc_command *cmd, const char *v);
int dc_cli_define_value(const dc_command *cmd, char *def,
                        struct dc_override *ov, size_t *n_ov);

/* Handles -h/--help for a command: prints its help, returns true. */
bool dc_cli_wants_help(const dc_command *cmd, int argc, char **argv);

#endif /* DC_CMD_H */
