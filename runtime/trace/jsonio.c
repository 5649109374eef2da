/*
 * jsonio.c — the streaming JSON input of the trace readers (jsonio.h):
 * zlib's gzread (plain files read as they are) in 256 KiB chunks into
 * yajl's SAX parser, so no reader ever holds the text; and the E0801
 * diagnostics with the file's line:col. Lines are counted chunk by chunk
 * (advance_lines) so that an error deep in a 200 MB file costs nothing
 * until it happens; the offending line, or a window of it round the
 * offending byte when it is long (a one-line JSON file), is echoed under
 * the message when that byte lies in the chunk at hand.
 */
#define _POSIX_C_SOURCE 200809L
#include "runtime/trace/jsonio.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CHUNK_BYTES     (256u * 1024u)
#define ECHO_MAX_LINE   400
#define ECHO_BEFORE     120
#define ECHO_MAX_LINENO (1 << 20)

/* The source a diagnostic points into: the path, and when the offending
 * byte `off` lies in the current chunk, its line from `line_start` (the
 * renderer echoes it under the message with a caret) — a line longer
 * than ECHO_MAX_LINE, or one that began in an earlier chunk, as a window
 * from ECHO_BEFORE bytes before `off` (echo_col0: the window's first
 * column, `col0_at_start` being the column of line_start). */
static const dc_source *error_source(dc_json_in *in, int64_t line,
                                     size_t line_start, int64_t col0_at_start,
                                     size_t off, bool have_line) {
  dc_source *s = dc_arena_alloc(in->a, sizeof *s);
  s->path = in->path;
  s->text = "";
  if (!have_line || line < 1 || line > ECHO_MAX_LINENO) return s;
  const char *chunk = (const char *)in->chunk;
  size_t a = line_start;
  if (off > a + ECHO_BEFORE) a = dc_utf8_floor(chunk, off - ECHO_BEFORE);
  if (a < line_start) a = line_start;
  size_t end = a;
  while (end < in->chunk_len && chunk[end] != '\n' &&
         end - a < ECHO_MAX_LINE)
    end++;
  if (end - a >= ECHO_MAX_LINE && end < in->chunk_len)
    end = dc_utf8_floor(chunk, end);
  s->echo_col0 = (size_t)col0_at_start + (a - line_start);
  s->echo_cut = end < in->chunk_len && chunk[end] != '\n';
  s->text = dc_arena_strndup(in->a, chunk + a, end - a);
  s->len = end - a;
  /* Every line before `line` maps to an empty prefix: only `line` is ever
   * asked for. */
  s->line_starts = dc_arena_array(in->a, (size_t)line, sizeof(size_t));
  s->n_lines = (size_t)line;
  return s;
}

static void verror_at(dc_json_in *in, size_t off, const char *fmt,
                      va_list ap) __attribute__((format(printf, 3, 0)));
static void verror_at(dc_json_in *in, size_t off, const char *fmt, va_list ap) {
  if (off > in->chunk_len) off = in->chunk_len;
  int64_t line = in->line_before + 1;
  size_t line_start = 0;
  int64_t col_base = in->chunk_off - in->last_nl_before;
  for (size_t i = 0; i < off; i++)
    if (in->chunk && in->chunk[i] == '\n') {
      line++;
      line_start = i + 1;
      col_base = 0;
    }
  int64_t col = col_base + (int64_t)(off - line_start) + 1;
  dc_span sp = {error_source(in, line, line_start, col_base, off,
                             in->chunk != NULL),
                (int32_t)(line > INT32_MAX ? INT32_MAX : line),
                (int32_t)(col > INT32_MAX ? INT32_MAX : col), 1};
  dc_buf b = {0};
  dc_buf_vprintf(&b, fmt, ap);
  dc_diag_error(in->d, DC_DIAG_BAD_TRACE, sp, "%s", b.data ? b.data : "");
  dc_buf_free(&b);
  in->failed = true;
}

void dc_json_error_at(dc_json_in *in, size_t off, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror_at(in, off, fmt, ap);
  va_end(ap);
}

void dc_json_error_here(dc_json_in *in, const char *fmt, ...) {
  size_t off = yajl_get_bytes_consumed(in->h);
  size_t tok = in->tok_len ? in->tok_len : 1;
  va_list ap;
  va_start(ap, fmt);
  /* yajl has consumed the token just read: point at its first byte
   * (strings: the opening quote; exact unless the string has escapes). */
  verror_at(in, off >= tok ? off - tok : 0, fmt, ap);
  va_end(ap);
}

void dc_json_error_file(dc_json_in *in, const char *help, const char *fmt,
                        ...) {
  dc_source *src = dc_arena_alloc(in->a, sizeof *src);
  src->path = in->path;
  src->text = "";
  dc_span none = {src, 0, 0, 0};
  dc_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  dc_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  dc_diag *gd =
      dc_diag_error(in->d, DC_DIAG_BAD_TRACE, none, "%s", b.data ? b.data : "");
  if (help) dc_diag_set_help(gd, "%s", help);
  dc_buf_free(&b);
  in->failed = true;
}

bool dc_json_int(const char *s, size_t n, int64_t *out) {
  char buf[32];
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, s, n);
  buf[n] = '\0';
  char *end;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (errno || *end != '\0') {
    double dv = strtod(buf, &end); /* "7.0" */
    int64_t iv;
    if (*end != '\0' || dv != floor(dv) || !dc_f64_to_i64(dv, &iv))
      return false;
    v = iv;
  }
  *out = v;
  return true;
}

int64_t dc_json_line_here(dc_json_in *in) {
  size_t off = in->h ? yajl_get_bytes_consumed(in->h) : 0;
  size_t tok = in->tok_len ? in->tok_len : 1;
  off = off >= tok ? off - tok : 0;
  if (off > in->chunk_len) off = in->chunk_len;
  if (off < in->scan_off) in->scan_off = 0, in->scan_lines = 0;
  for (size_t i = in->scan_off; in->chunk && i < off; i++)
    if (in->chunk[i] == '\n') in->scan_lines++;
  in->scan_off = off;
  return in->line_before + in->scan_lines + 1;
}

/* Counts the newlines of the chunk just parsed into the position state. */
static void advance_lines(dc_json_in *in) {
  in->scan_off = 0, in->scan_lines = 0;
  const unsigned char *p = in->chunk, *end = in->chunk + in->chunk_len;
  while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
    in->line_before++;
    p++;
    in->last_nl_before = in->chunk_off + (p - in->chunk);
  }
  in->chunk_off += (int64_t)in->chunk_len;
}

static void report_yajl(dc_json_in *in, size_t off) {
  unsigned char *msg = yajl_get_error(in->h, 0, NULL, 0);
  char *m = (char *)msg;
  size_t len = strlen(m);
  while (len && (m[len - 1] == '\n' || m[len - 1] == ' '))
    m[--len] = '\0';
  const char *shown = m;
  if (strncmp(shown, "parse error: ", 13) == 0) shown += 13;
  if (strncmp(shown, "lexical error: ", 15) == 0) shown += 15;
  dc_json_error_at(in, off, "invalid JSON: %s", shown);
  yajl_free_error(in->h, msg);
}

dc_json_status dc_json_stream(dc_json_in *in, const char *path,
                              const yajl_callbacks *cb, void *ctx, dc_arena *a,
                              dc_diags *d) {
  memset(in, 0, sizeof *in);
  in->path = dc_arena_strdup(a, path);
  in->a = a;
  in->d = d;
  dc_json_status st = DC_JSON_FAILED;
  unsigned char *buf = NULL;
  errno = 0;
  gzFile g = gzopen(path, "rb");
  if (!g) {
    dc_source *src = dc_arena_alloc(a, sizeof *src);
    src->path = in->path;
    src->text = "";
    dc_diag_error(d, DC_DIAG_IO, (dc_span){src, 0, 0, 0}, "cannot open: %s",
                  errno ? strerror(errno) : "out of memory");
    in->failed = true;
    return DC_JSON_FAILED;
  }
  gzbuffer(g, CHUNK_BYTES);
  in->h = yajl_alloc(cb, NULL, ctx);
  buf = dc_xmalloc(CHUNK_BYTES);
  bool stopped = false;
  for (;;) {
    int n = gzread(g, buf, CHUNK_BYTES);
    int zerr;
    const char *zmsg = gzerror(g, &zerr);
    if (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
      if (zerr == Z_ERRNO) {
        dc_source *src = dc_arena_alloc(a, sizeof *src);
        src->path = in->path;
        src->text = "";
        dc_diag_error(d, DC_DIAG_IO, (dc_span){src, 0, 0, 0}, "cannot read: %s",
                      strerror(errno));
        in->failed = true;
      } else {
        /* zlib prefixes the message with the path: drop it. */
        const char *z = strstr(zmsg, ": ");
        z = z && strncmp(zmsg, path, (size_t)(z - zmsg)) == 0 ? z + 2 : zmsg;
        char help[120];
        snprintf(help, sizeof help,
                 "%lld bytes decompressed before the error; was the file "
                 "cut off while copying?",
                 (long long)in->total);
        dc_json_error_file(in, help, "corrupt or truncated gzip data: %s", z);
      }
      goto done;
    }
    if (n == 0) break;
    in->total += n;
    in->chunk = buf;
    in->chunk_len = (size_t)n;
    yajl_status ys = yajl_parse(in->h, buf, (size_t)n);
    if (ys == yajl_status_client_canceled) {
      if (in->failed) goto done;
      stopped = true;
      break;
    }
    if (ys != yajl_status_ok) {
      report_yajl(in, yajl_get_bytes_consumed(in->h));
      goto done;
    }
    advance_lines(in);
  }
  if (stopped) {
    st = DC_JSON_STOPPED;
    goto done;
  }
  if (in->total == 0) {
    dc_json_error_file(in, NULL, "empty file");
    goto done;
  }
  in->chunk = NULL;
  in->chunk_len = 0;
  if (yajl_complete_parse(in->h) != yajl_status_ok) {
    if (!in->failed) {
      char help[80];
      snprintf(help, sizeof help, "%lld bytes read; the trace looks truncated",
               (long long)in->total);
      dc_json_error_file(in, help,
                         "invalid JSON: premature EOF: the file ends inside "
                         "the JSON text");
    }
    goto done;
  }
  st = DC_JSON_DONE;
done:
  if (in->h) yajl_free(in->h);
  in->h = NULL;
  gzclose(g);
  free(buf);
  return st;
}
