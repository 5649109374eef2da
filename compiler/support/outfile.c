/*
 * outfile.c — output files that never exist half-written (spec/design.md). The
 * bytes go to a temporary sibling, .NAME.tmp-PID-XXXXXX in the same
 * directory (so the rename cannot cross file systems; the leading dot
 * keeps it out of `*.csv` globs), which is fsynced, given the mode and
 * owner of the file it replaces (or the mode a plain create would have:
 * mkstemp makes 0600) and renamed over NAME only when complete.
 *
 * Every live temporary is listed in a fixed table that the SIGINT,
 * SIGTERM and SIGHUP handler (installed by the first open, unless the
 * signal is ignored) walks: it unlinks each, restores the default action
 * and re-raises, using only async-signal-safe calls. The table has
 * DC_OUTFILE_SLOTS entries (timelines are written by up to --jobs threads
 * at once); a temporary that finds it full is written unlisted. Those
 * signals are blocked while a temporary is created and listed, and while
 * it is renamed and unlisted, so the handler never misses one (another
 * thread creating one while the handler runs is waited for). SIGKILL
 * cannot be caught: the temporary it leaves names its process, and the
 * next run's first open in the same directory removes every
 * .NAME.tmp-PID-XXXXXX there whose PID is no longer running
 * (spec/outputs.md).
 *
 * Special cases: NULL or "-" is standard output; an existing device or
 * FIFO (/dev/null, /dev/stdout, a pipe) is written in place, because
 * renaming over it would replace the device node itself; a symbolic link
 * is followed (to any depth up to 40, dangling or not) and its target is
 * replaced, the link staying a link. Errors are returned as text in
 * `err`; nothing here prints.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compiler/support/support.h"

/* ---- the signal handler's table of live temporaries --------------------- */

#define DC_OUTFILE_SLOTS 272 /* --jobs is at most 256, plus the table */
#define DC_OUTFILE_PATH 4096

static char live_path[DC_OUTFILE_SLOTS][DC_OUTFILE_PATH];
/* 0 free, 1 claimed (name being written), 2 live (the handler unlinks) */
static atomic_int live_state[DC_OUTFILE_SLOTS];
static const int caught[] = {SIGINT, SIGTERM, SIGHUP};
/* Set by the handler; counted by threads creating a temporary. The
 * handler waits for creations in flight, and a creation that sees
 * `dying` gives up, so no temporary appears after the handler's sweep
 * (both are sequentially consistent: one of the two sees the other). */
static atomic_int dying, creating;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static mode_t create_mode; /* 0666 & ~umask, read once */

static void on_signal(int sig) {
  atomic_store(&dying, 1);
  struct timespec ms = {0, 1000000};
  for (int spin = 0; spin < 2000 && atomic_load(&creating) > 0; spin++)
    nanosleep(&ms, NULL);
  for (int i = 0; i < DC_OUTFILE_SLOTS; i++)
    if (atomic_load(&live_state[i]) == 2) unlink(live_path[i]);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Once per process: the umask (umask() sets as it reads, so it is not
 * called again where threads might race) and the handlers. */
static void setup(void) {
  mode_t mask = umask(0);
  umask(mask);
  create_mode = 0666 & ~mask;
  for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++) {
    struct sigaction old, sa;
    if (sigaction(caught[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
      continue; /* nohup: stay ignored */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(caught[i], &sa, NULL);
  }
}

static void block_signals(sigset_t *old) {
  sigset_t s;
  sigemptyset(&s);
  for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
    sigaddset(&s, caught[i]);
  pthread_sigmask(SIG_BLOCK, &s, old);
}

static void restore_signals(const sigset_t *old) {
  pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Lists `path` (signals blocked by the caller); -1 when it cannot be. */
static int slot_claim(const char *path) {
  if (strlen(path) >= DC_OUTFILE_PATH) return -1;
  for (int i = 0; i < DC_OUTFILE_SLOTS; i++) {
    int free_state = 0;
    if (atomic_compare_exchange_strong(&live_state[i], &free_state, 1)) {
      strcpy(live_path[i], path);
      atomic_store(&live_state[i], 2);
      return i;
    }
  }
  return -1;
}

static void slot_release(int slot) {
  if (slot >= 0) atomic_store(&live_state[slot], 0);
}

/* ---- names ------------------------------------------------------------- */

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return dc_xstrdup(".");
  if (slash == path) return dc_xstrdup("/");
  size_t n = (size_t)(slash - path);
  char *d = dc_xmalloc(n + 1);
  memcpy(d, path, n);
  d[n] = '\0';
  return d;
}

/* The temporary's prefix for `base`: ".BASE.tmp-" with BASE cut to 200
 * bytes so that the whole name stays under NAME_MAX. */
static char *tmp_prefix(const char *base) {
  size_t n = strlen(base);
  if (n > 200) n = 200;
  char *p = dc_xmalloc(n + sizeof "..tmp-");
  p[0] = '.';
  memcpy(p + 1, base, n);
  memcpy(p + 1 + n, ".tmp-", sizeof ".tmp-");
  return p;
}

/* Follows symbolic links from `path` (relative targets against the
 * link's directory); NULL with errno ELOOP after 40. */
static char *resolve_links(const char *path) {
  char *cur = dc_xstrdup(path);
  for (int depth = 0; depth <= 40; depth++) {
    struct stat st;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
    if (depth == 40) break;
    char buf[PATH_MAX];
    ssize_t n = readlink(cur, buf, sizeof buf - 1);
    if (n < 0) return cur;
    buf[n] = '\0';
    char *next;
    if (buf[0] == '/' || !strchr(cur, '/')) {
      next = dc_xstrdup(buf);
    } else {
      char *dir = dir_of(cur);
      next = dc_xmalloc(strlen(dir) + (size_t)n + 2);
      sprintf(next, "%s/%s", dir, buf);
      free(dir);
    }
    free(cur);
    cur = next;
  }
  free(cur);
  errno = ELOOP;
  return NULL;
}

/* Whether `name` is one of our temporaries, .NAME.tmp-PID-XXXXXX; its
 * PID in *pid. */
static bool temp_name(const char *name, long *pid) {
  if (name[0] != '.') return false;
  const char *t = NULL;
  for (const char *q = strstr(name + 1, ".tmp-"); q; q = strstr(q + 1, ".tmp-"))
    t = q;
  if (!t || t == name + 1) return false;
  char *end;
  errno = 0;
  *pid = strtol(t + 5, &end, 10);
  return !errno && end > t + 5 && *pid > 0 && end[0] == '-' &&
         strlen(end + 1) == 6;
}

/* Removes the temporaries in `dir` left by processes that are gone: once
 * per directory and process (a --timeline directory gets one file per
 * point; sweeping it per file would be quadratic). A PID that is running,
 * or that this process may not signal, is kept. */
static pthread_mutex_t swept_lock = PTHREAD_MUTEX_INITIALIZER;
static char **swept; /* process lifetime */
static size_t n_swept;

static void remove_stale(const char *dir) {
  pthread_mutex_lock(&swept_lock);
  for (size_t i = 0; i < n_swept; i++)
    if (strcmp(swept[i], dir) == 0) {
      pthread_mutex_unlock(&swept_lock);
      return;
    }
  swept = dc_xrealloc(swept, (n_swept + 1) * sizeof *swept);
  swept[n_swept++] = dc_xstrdup(dir);
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    long pid;
    if (!temp_name(e->d_name, &pid) || pid == (long)getpid()) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    char *p = dc_xmalloc(strlen(dir) + strlen(e->d_name) + 2);
    sprintf(p, "%s/%s", dir, e->d_name);
    unlink(p);
    free(p);
  }
  if (d) closedir(d);
  pthread_mutex_unlock(&swept_lock);
}

/* ---- the file ----------------------------------------------------------- */

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

static void forget(dc_outfile *f) {
  free(f->tmp);
  f->tmp = NULL;
  free(f->target);
  f->target = NULL;
}

bool dc_outfile_open(dc_outfile *f, const char *path, dc_buf *err) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  f->slot = -1;
  if (!path || strcmp(path, "-") == 0) {
    f->to_stdout = true;
    return true;
  }
  f->path = path;
  if (!path[0]) {
    dc_buf_printf(err, "an empty output file name");
    return false;
  }
  pthread_once(&setup_once, setup);
  f->target = resolve_links(path);
  if (!f->target) {
    dc_buf_printf(err, "cannot write '%s': %s", path, strerror(errno));
    return false;
  }
  struct stat st;
  if (stat(f->target, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      dc_buf_printf(err, "cannot write '%s': it is a directory", path);
      forget(f);
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      f->fd = open(f->target, O_WRONLY | O_TRUNC);
      if (f->fd < 0) {
        dc_buf_printf(err, "cannot open '%s': %s", path, strerror(errno));
        forget(f);
        return false;
      }
      f->in_place = true;
      return true;
    }
    f->replaces = true;
    f->mode = st.st_mode & 07777;
    f->uid = st.st_uid;
    f->gid = st.st_gid;
  }
  char *dir = dir_of(f->target);
  const char *base = strrchr(f->target, '/');
  base = base ? base + 1 : f->target;
  char *prefix = tmp_prefix(base);
  remove_stale(dir);
  f->tmp = dc_xmalloc(strlen(dir) + strlen(prefix) + 32);
  sprintf(f->tmp, "%s/%s%ld-XXXXXX", dir, prefix, (long)getpid());
  free(prefix);
  free(dir);
  sigset_t old;
  block_signals(&old);
  atomic_fetch_add(&creating, 1);
  if (atomic_load(&dying)) {
    f->fd = -1;
    errno = EINTR;
  } else {
    f->fd = mkstemp(f->tmp);
    if (f->fd >= 0) f->slot = slot_claim(f->tmp);
  }
  int saved = errno;
  atomic_fetch_sub(&creating, 1);
  restore_signals(&old);
  if (f->fd < 0) {
    dc_buf_printf(err, "cannot write '%s': %s", path, strerror(saved));
    forget(f);
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

/* The replaced file's owner (where permitted: root, or a group change the
 * user may make) and then its mode, since chown may clear set-id bits. */
static bool keep_mode(dc_outfile *f) {
  if (!f->replaces) return fchmod(f->fd, create_mode) == 0;
  if (fchown(f->fd, (uid_t)f->uid, (gid_t)f->gid) != 0)
    (void)!fchown(f->fd, (uid_t)-1, (gid_t)f->gid);
  return fchmod(f->fd, (mode_t)f->mode) == 0;
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
  if (!f->in_place && (!keep_mode(f) || fsync(f->fd) != 0)) {
    ok = false;
    saved = errno;
  }
  if (close(f->fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  f->fd = -1;
  if (f->tmp) {
    sigset_t old;
    block_signals(&old);
    if (ok && rename(f->tmp, f->target) != 0) {
      ok = false;
      saved = errno;
    }
    if (!ok) unlink(f->tmp);
    slot_release(f->slot);
    f->slot = -1;
    restore_signals(&old);
  }
  if (!ok) dc_buf_printf(err, "cannot write '%s': %s", f->path, strerror(saved));
  forget(f);
  return ok;
}

void dc_outfile_abort(dc_outfile *f) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  if (f->tmp) {
    sigset_t old;
    block_signals(&old);
    unlink(f->tmp);
    slot_release(f->slot);
    f->slot = -1;
    restore_signals(&old);
  }
  forget(f);
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

bool dc_stdout_close(dc_buf *err) {
  int e = 0;
  bool bad = false;
  if (fflush(stdout) != 0) {
    bad = true;
    e = errno;
  } else if (ferror(stdout)) {
    bad = true;
    e = EIO;
  }
  /* A stdout closed by the caller (>&-) with nothing written is fine. */
  if (fclose(stdout) != 0 && !bad && errno != EBADF) {
    bad = true;
    e = errno;
  }
  if (bad) dc_buf_printf(err, "cannot write to standard output: %s",
                         strerror(e));
  return !bad;
}
