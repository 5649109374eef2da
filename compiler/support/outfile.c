/*
 * outfile.c — output files that never exist half-written (DESIGN §6). The
 * bytes go to a temporary sibling, PATH.tmp-XXXXXX in the same directory
 * (so the rename cannot cross file systems), which is fsynced, given the
 * mode a plain create would have (mkstemp makes 0600) and renamed over
 * PATH only when complete. A killed process leaves at most the temporary.
 * Two exceptions: NULL or "-" is standard output, and an existing device or
 * FIFO (/dev/null, /dev/stdout, a pipe) is written in place, because
 * renaming over it would replace the device node itself. Errors are
 * returned as text in `err`; nothing here prints.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/support/support.h"

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

bool dc_outfile_open(dc_outfile *f, const char *path, dc_buf *err) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  if (!path || strcmp(path, "-") == 0) {
    f->to_stdout = true;
    return true;
  }
  f->path = path;
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    dc_buf_printf(err, "cannot write '%s': it is a directory", path);
    return false;
  }
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    f->fd = open(path, O_WRONLY | O_TRUNC);
    if (f->fd < 0) {
      dc_buf_printf(err, "cannot open '%s': %s", path, strerror(errno));
      return false;
    }
    f->in_place = true;
    return true;
  }
  size_t n = strlen(path);
  f->tmp = dc_xmalloc(n + sizeof ".tmp-XXXXXX");
  memcpy(f->tmp, path, n);
  memcpy(f->tmp + n, ".tmp-XXXXXX", sizeof ".tmp-XXXXXX");
  f->fd = mkstemp(f->tmp);
  if (f->fd < 0) {
    dc_buf_printf(err, "cannot create '%s': %s", f->tmp, strerror(errno));
    free(f->tmp);
    f->tmp = NULL;
    return false;
  }
  return true;
}

bool dc_outfile_write(dc_outfile *f, const char *data, size_t len,
                      dc_buf *err) {
  if (f->to_stdout) {
    if (len == 0 || fwrite(data, 1, len, stdout) == len) return true;
    dc_buf_printf(err, "cannot write to standard output: %s",
                  strerror(errno));
    return false;
  }
  if (write_all(f->fd, data, len)) return true;
  dc_buf_printf(err, "cannot write '%s': %s", f->tmp ? f->tmp : f->path,
                strerror(errno));
  return false;
}

bool dc_outfile_commit(dc_outfile *f, dc_buf *err) {
  if (f->to_stdout) {
    if (fflush(stdout) == 0) return true;
    dc_buf_printf(err, "cannot write to standard output: %s",
                  strerror(errno));
    return false;
  }
  bool ok = true;
  int saved = 0;
  if (!f->in_place) {
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(f->fd, 0666 & ~mask) != 0 || fsync(f->fd) != 0) {
      ok = false;
      saved = errno;
    }
  }
  if (close(f->fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  f->fd = -1;
  if (ok && !f->in_place && rename(f->tmp, f->path) != 0) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    dc_buf_printf(err, "cannot write '%s': %s", f->path, strerror(saved));
    if (f->tmp) unlink(f->tmp);
  }
  free(f->tmp);
  f->tmp = NULL;
  return ok;
}

void dc_outfile_abort(dc_outfile *f) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  if (f->tmp) unlink(f->tmp);
  free(f->tmp);
  f->tmp = NULL;
}

bool dc_file_write_atomic(const char *path, const char *data, size_t len,
                          dc_buf *err) {
  dc_outfile f;
  if (!dc_outfile_open(&f, path, err)) return false;
  if (!dc_outfile_write(&f, data, len, err)) {
    dc_outfile_abort(&f);
    return false;
  }
  return dc_outfile_commit(&f, err);
}
