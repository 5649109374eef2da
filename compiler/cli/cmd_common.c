/*
 * cmd_common.c — what every subcommand shares: diagnostics to stderr,
 * usage errors, --help handling, the option reader (cli_next: one
 * table per command), -D overrides, and atomic output files
 * (the mechanics are dc_outfile in compiler/support/outfile.c; here the
 * error is printed).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/cli/cli_int.h"
#include "compiler/compiler.h"
#include "kernels/kernels.h"
#include "runtime/runtime.h"

bool cli_stderr_tty(void) {
  const char *nc = getenv("NO_COLOR");
  if (nc && *nc) return false;
  return isatty(STDERR_FILENO) == 1;
}

void cli_report(const dc_diags *d) {
  dc_diags_render(d, stderr, cli_stderr_tty());
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "dlrmc %s: ", cmd->name);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nusage: %s\n  = help: run 'dlrmc help %s' for details\n",
          cmd->synopsis, cmd->name);
  return CLI_EXIT_USAGE;
}

bool cli_wants_help(const cli_command *cmd, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      printf("usage: %s\n\n%s\n\n%s", cmd->synopsis, cmd->summary, cmd->help);
      return true;
    }
  }
  return false;
}

void cli_command_line(int argc, char **argv, dc_buf *out) {
  dc_buf_puts(out, "dlrmc");
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool plain = *a != '\0';
    for (const char *p = a; *p && plain; p++)
      plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789_./=:,+-@%", *p) != NULL;
    dc_buf_putc(out, ' ');
    if (plain) {
      dc_buf_puts(out, a);
      continue;
    }
    dc_buf_putc(out, '\'');
    for (const char *p = a; *p; p++) {
      if (*p == '\'') dc_buf_puts(out, "'\\''");
      else dc_buf_putc(out, *p);
    }
    dc_buf_putc(out, '\'');
  }
}

bool cli_write_file_atomic(const char *path, const char *data, size_t len) {
  dc_buf err = {0};
  bool ok = dc_file_write_atomic(path, data, len, &err);
  if (!ok) fprintf(stderr, "dlrmc: error: %s\n", err.data ? err.data : "");
  dc_buf_free(&err);
  return ok;
}

int cli_subcommand(const cli_command *cmd, int argc, char **argv,
                   const char *word) {
  if (argc < 2)
    return cli_usage_error(cmd, "missing subcommand '%s'", word);
  if (strcmp(argv[1], word) != 0)
    return cli_usage_error(cmd, "unknown subcommand '%s' (expected '%s')",
                           argv[1], word);
  return 0;
}

dc_study *cli_load_study(const char *path, const dc_override *ov,
                         size_t n_ov) {
  dc_diags d = {0};
  d.max_errors = 100;
  dc_study *s = dc_study_load(path, ov, n_ov, &d);
  cli_report(&d);
  dc_diags_free(&d);
  return s;
}

int cli_check_point(const cli_command *cmd, const dc_study *s,
                    int64_t point) {
  int64_t n = dc_study_point_count(s);
  if (point >= 0 && point < n) return 0;
  return cli_usage_error(cmd,
                         "--point %lld is out of range: the study has "
                         "%lld point%s (0..%lld)",
                         (long long)point, (long long)n, n == 1 ? "" : "s",
                         (long long)(n - 1));
}

bool cli_check_catalogs(const dc_study *s) {
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  d.max_errors = 100;
  const char **names;
  size_t n = dc_study_catalog_names(s, "gpus", &a, &names);
  for (size_t i = 0; i < n; i++) {
    dc_device dev;
    dc_device_lookup(names[i], &dev, &a, &d);
  }
  n = dc_study_catalog_names(s, "overheads", &a, &names);
  for (size_t i = 0; i < n; i++) {
    dc_profile prof;
    dc_profile_load(names[i], &prof, &a, &d);
  }
  n = dc_study_catalog_names(s, "kernel_models", &a, &names);
  for (size_t i = 0; i < n; i++)
    dc_kmodels_check_dir(names[i], dc_study_catalog_span(s, "kernel_models",
                                                         names[i]),
                         &a, &d);
  bool ok = d.errors == 0;
  cli_report(&d);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return ok;
}

bool cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

cli_iter cli_args(int argc, char **argv, int first) {
  return (cli_iter){.argc = argc, .argv = argv, .i = first};
}

int cli_next(const cli_command *cmd, const cli_opt *opts,
             cli_iter *it, char **val) {
  *val = NULL;
  if (it->i >= it->argc) return CLI_END;
  char *a = it->argv[it->i++];
  it->arg = a;
  if (!it->dashdash && strcmp(a, "--") == 0) {
    it->dashdash = true;
    return cli_next(cmd, opts, it, val);
  }
  if (it->dashdash || a[0] != '-' || a[1] == '\0') {
    *val = a;
    return CLI_ARG;
  }
  /* the option's name: "--name" or "--name=value"; "-x"; "-Dpath=value" */
  size_t len = strlen(a);
  char *eq = NULL;
  if (a[1] == '-') {
    eq = strchr(a, '=');
    if (eq) len = (size_t)(eq - a);
  } else if (a[1] == 'D' && a[2]) {
    len = 2;
    eq = a + 1; /* the value follows "-D" */
  }
  for (int k = 0; opts[k].name || opts[k].brief; k++) {
    const char *n = opts[k].name, *b = opts[k].brief;
    bool hit = (n && strlen(n) == len && strncmp(a, n, len) == 0) ||
               (b && strlen(b) == len && strncmp(a, b, len) == 0);
    if (!hit) continue;
    if (!opts[k].value) {
      if (!eq) return k;
      cli_usage_error(cmd, "option '%.*s' takes no value", (int)len, a);
      return CLI_FAIL;
    }
    if (eq) {
      *val = eq + 1;
    } else if (it->i < it->argc) {
      *val = it->argv[it->i++];
    } else {
      cli_usage_error(cmd, "option '%s' needs a value", a);
      return CLI_FAIL;
    }
    if (!opts[k].many && k < 64) {
      if (it->given[k]) {
        cli_usage_error(cmd, "%.*s given twice ('%s', then '%s')",
                        (int)len, a, it->given[k], *val);
        return CLI_FAIL;
      }
      it->given[k] = *val;
    }
    return k;
  }
  cli_usage_error(cmd, "unknown option '%s'", a);
  return CLI_FAIL;
}

int cli_memory_budget(const cli_command *cmd, const char *v) {
  int64_t bytes;
  const char *why = NULL;
  if (!dc_parse_size(v, true, &bytes, &why) || bytes < ((int64_t)1 << 20))
    return cli_usage_error(cmd, "--memory-budget wants a size of at least "
                                   "1MiB (\"8GiB\"), not '%s'%s%s", v,
                           why ? ": " : "", why ? why : "");
  dc_study_set_memory_budget(bytes);
  return 0;
}

int cli_define_value(const cli_command *cmd, char *def, dc_override *ov,
                     size_t *n_ov) {
  char *eq = strchr(def, '=');
  if (!eq || eq == def)
    return cli_usage_error(cmd, "-D '%s': expected path=value", def);
  *eq = '\0'; /* split in place: argv outlives the overrides */
  ov[*n_ov].path = def;
  ov[*n_ov].value = eq + 1;
  (*n_ov)++;
  return 0;
}
