/*
 * cmd_common.c — what every subcommand shares: diagnostics to stderr,
 * usage errors, --help handling and atomic output files. Output files are
 * written to a temporary sibling and renamed only when complete, so a
 * killed or failed run never leaves a partial file behind (DESIGN §6).
 * Devices and FIFOs (-o /dev/null) are written in place: renaming over
 * them would replace the device node.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/cmd.h"
#include "compiler/compiler.h"

bool dc_cli_stderr_tty(void) {
  const char *nc = getenv("NO_COLOR");
  if (nc && *nc) return false;
  return isatty(STDERR_FILENO) == 1;
}

void dc_cli_report(const dc_diags *d) {
  dc_diags_render(d, stderr, dc_cli_stderr_tty());
}

int dc_cli_usage_error(const dc_command *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "dlrmc %s: ", cmd->name);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nusage: %s\n  = help: run 'dlrmc help %s' for details\n",
          cmd->synopsis, cmd->name);
  return DC_EXIT_USAGE;
}

bool dc_cli_wants_help(const dc_command *cmd, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      printf("usage: %s\n\n%s\n\n%s", cmd->synopsis, cmd->summary, cmd->help);
      return true;
    }
  }
  return false;
}

static bool write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, data, len);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    len -= (size_t)w;
  }
  return true;
}

bool dc_write_file_atomic(const char *path, const char *data, size_t len) {
  if (!path || strcmp(path, "-") == 0) {
    if (len && fwrite(data, 1, len, stdout) != len) goto stdout_fail;
    if (fflush(stdout) != 0) goto stdout_fail;
    return true;
  stdout_fail:
    fprintf(stderr, "dlrmc: error: cannot write to standard output: %s\n",
            strerror(errno));
    return false;
  }
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    fprintf(stderr, "dlrmc: error: cannot write '%s': it is a directory\n",
            path);
    return false;
  }
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    /* A device or a FIFO (/dev/null, /dev/stdout, a pipe): renaming over
     * it would replace the node itself, so write in place. */
    int fd = open(path, O_WRONLY | O_TRUNC);
    bool ok = fd >= 0 && write_all(fd, data, len);
    int saved = errno;
    if (fd >= 0 && close(fd) != 0 && ok) {
      ok = false;
      saved = errno;
    }
    if (!ok)
      fprintf(stderr, "dlrmc: error: cannot write '%s': %s\n", path,
              strerror(saved));
    return ok;
  }
  size_t n = strlen(path);
  char *tmp = dc_xmalloc(n + 16);
  memcpy(tmp, path, n);
  memcpy(tmp + n, ".tmp-XXXXXX", 12);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    fprintf(stderr, "dlrmc: error: cannot create '%s': %s\n", tmp,
            strerror(errno));
    free(tmp);
    return false;
  }
  bool ok = write_all(fd, data, len) && fsync(fd) == 0;
  int saved = errno;
  if (close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok && rename(tmp, path) != 0) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    fprintf(stderr, "dlrmc: error: cannot write '%s': %s\n", path,
            strerror(saved));
    unlink(tmp);
  }
  free(tmp);
  return ok;
}

int dc_cli_define(const dc_command *cmd, int argc, char **argv, int *i,
                  dc_override *ov, size_t *n_ov) {
  char *a = argv[*i];
  char *def = a[2] ? a + 2 : (*i + 1 < argc ? argv[++*i] : NULL);
  if (!def) return dc_cli_usage_error(cmd, "-D needs path=value");
  char *eq = strchr(def, '=');
  if (!eq || eq == def)
    return dc_cli_usage_error(cmd, "-D '%s': expected path=value", def);
  *eq = '\0';
  ov[*n_ov].path = def;
  ov[*n_ov].value = eq + 1;
  (*n_ov)++;
  return 0;
}

int dc_cli_subcommand(const dc_command *cmd, int argc, char **argv,
                      const char *word) {
  if (argc < 2)
    return dc_cli_usage_error(cmd, "missing subcommand '%s'", word);
  if (strcmp(argv[1], word) != 0)
    return dc_cli_usage_error(cmd, "unknown subcommand '%s' (expected '%s')",
                              argv[1], word);
  return 0;
}
