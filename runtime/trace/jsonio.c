/*
 * jsonio.c — the streaming JSON input of the trace readers (jsonio_int.h):
 * the file, plain or gzip (inflated here, trailing data refused), in
 * 256 KiB chunks into yajl's SAX parser, so no reader ever holds the text; and the E0801
 * diagnostics with the file's line:col. Lines are counted chunk by chunk
 * (advance_lines) so that an error deep in a 200 MB file costs nothing
 * until it happens; the offending line, or a window of it round the
 * offending byte when it is long (a one-line JSON file), is echoed under
 * the message when that byte lies in the chunk at hand.
 */
#define _POSIX_C_SOURCE 200809L
#include "runtime/trace/jsonio_int.h"

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
static const dc_source *error_source(js_in *in, int64_t line,
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

static void verror_at(js_in *in, size_t off, const char *fmt,
                      va_list ap) __attribute__((format(printf, 3, 0)));
static void verror_at(js_in *in, size_t off, const char *fmt, va_list ap) {
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

void js_error_at(js_in *in, size_t off, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror_at(in, off, fmt, ap);
  va_end(ap);
}

void js_error_here(js_in *in, const char *fmt, ...) {
  size_t off = yajl_get_bytes_consumed(in->h);
  size_t tok = in->tok_len ? in->tok_len : 1;
  va_list ap;
  va_start(ap, fmt);
  /* yajl has consumed the token just read: point at its first byte
   * (strings: the opening quote; exact unless the string has escapes). */
  verror_at(in, off >= tok ? off - tok : 0, fmt, ap);
  va_end(ap);
}

void js_error_file(js_in *in, const char *help, const char *fmt,
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

bool js_int(const char *s, size_t n, int64_t *out) {
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

void js_pos_here(js_in *in, int64_t *line, int64_t *col) {
  size_t off = in->h ? yajl_get_bytes_consumed(in->h) : 0;
  size_t tok = in->tok_len ? in->tok_len : 1;
  off = off >= tok ? off - tok : 0;
  if (off > in->chunk_len) off = in->chunk_len;
  if (off < in->scan_off)
    in->scan_off = 0, in->scan_lines = 0, in->scan_bol = 0;
  for (size_t i = in->scan_off; in->chunk && i < off; i++)
    if (in->chunk[i] == '\n') in->scan_lines++, in->scan_bol = i + 1;
  in->scan_off = off;
  *line = in->line_before + in->scan_lines + 1;
  *col = in->scan_lines ? (int64_t)(off - in->scan_bol) + 1
                        : in->chunk_off - in->last_nl_before + (int64_t)off + 1;
}

void js_error_pos(js_in *in, int64_t line, int64_t col,
                  const char *fmt, ...) {
  dc_source *src = dc_arena_alloc(in->a, sizeof *src);
  src->path = in->path;
  src->text = "";
  dc_span sp = {src, (int32_t)(line > INT32_MAX ? INT32_MAX : line),
                (int32_t)(col > INT32_MAX ? INT32_MAX : col), 1};
  dc_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  dc_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  dc_diag_error(in->d, DC_DIAG_BAD_TRACE, sp, "%s", b.data ? b.data : "");
  dc_buf_free(&b);
  in->failed = true;
}

/* Counts the newlines of the chunk just parsed into the position state. */
static void advance_lines(js_in *in) {
  in->scan_off = 0, in->scan_lines = 0, in->scan_bol = 0;
  const unsigned char *p = in->chunk, *end = in->chunk + in->chunk_len;
  while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
    in->line_before++;
    p++;
    in->last_nl_before = in->chunk_off + (p - in->chunk);
  }
  in->chunk_off += (int64_t)in->chunk_len;
}

static void report_yajl(js_in *in, size_t off) {
  unsigned char *msg = yajl_get_error(in->h, 0, NULL, 0);
  char *m = (char *)msg;
  size_t len = strlen(m);
  while (len && (m[len - 1] == '\n' || m[len - 1] == ' '))
    m[--len] = '\0';
  const char *shown = m;
  if (strncmp(shown, "parse error: ", 13) == 0) shown += 13;
  if (strncmp(shown, "lexical error: ", 15) == 0) shown += 15;
  js_error_at(in, off, "invalid JSON: %s", shown);
  yajl_free_error(in->h, msg);
}

/* ---- the byte source: a plain file, or gzip inflated here -------------
 * zlib's gzread would do both, but it ignores whatever follows the last
 * gzip member, and a trace with garbage after its stream must be refused
 * as plain JSON with trailing garbage is. So the file is read raw and a
 * gzip file (magic 1f 8b) inflated member by member: after each member's
 * end, the next bytes must be another member or nothing. */
typedef struct zsrc {
  FILE *f;
  bool gz, member_done;
  z_stream z;
  unsigned char *raw;
  int64_t raw_used; /* compressed bytes consumed by finished members */
} zsrc;

typedef enum zstat { Z_SRC_DATA, Z_SRC_END, Z_SRC_ERROR } zstat;

/* Makes at least `want` (≤ 2) raw bytes available when the file has
 * them, keeping those not yet consumed; false when none is left (the end
 * of the file, or an error: ferror). */
static bool zsrc_fill(zsrc *s, uInt want) {
  if (s->z.avail_in >= want) return true;
  if (s->z.avail_in > 0) memmove(s->raw, s->z.next_in, s->z.avail_in);
  s->z.next_in = s->raw;
  s->z.avail_in += (uInt)fread(s->raw + s->z.avail_in, 1,
                               CHUNK_BYTES - s->z.avail_in, s->f);
  return s->z.avail_in > 0;
}

/* The next bytes of text into buf (at most CHUNK_BYTES): *n > 0 with
 * Z_SRC_DATA, Z_SRC_END at the end, Z_SRC_ERROR with *why (static text
 * or zlib's message) and *garbage_at (the offset of trailing bytes, or
 * -1). */
static zstat zsrc_read(zsrc *s, unsigned char *buf, size_t *n,
                       const char **why, int64_t *garbage_at) {
  *n = 0, *garbage_at = -1;
  if (!s->gz) { /* the bytes read to sniff the magic, then the file */
    size_t k = s->z.avail_in;
    if (k) memcpy(buf, s->z.next_in, k);
    s->z.avail_in = 0;
    *n = k + fread(buf + k, 1, CHUNK_BYTES - k, s->f);
    if (*n > 0) return Z_SRC_DATA;
    if (ferror(s->f)) {
      *why = NULL; /* errno */
      return Z_SRC_ERROR;
    }
    return Z_SRC_END;
  }
  s->z.next_out = buf;
  s->z.avail_out = CHUNK_BYTES;
  while (s->z.avail_out > 0) {
    if (s->member_done) {
      /* after a member: another one (1f 8b), or the end of the file */
      if (!zsrc_fill(s, 2)) break;
      if (s->z.avail_in < 2 || s->z.next_in[0] != 0x1f ||
          s->z.next_in[1] != 0x8b) {
        *garbage_at = s->raw_used;
        *why = "trailing data after the gzip stream";
        return Z_SRC_ERROR;
      }
      inflateReset(&s->z);
      s->member_done = false;
    }
    if (!zsrc_fill(s, 1)) {
      *n = CHUNK_BYTES - s->z.avail_out;
      *why = ferror(s->f) ? NULL : "unexpected end of file";
      return Z_SRC_ERROR;
    }
    uInt before = s->z.avail_in;
    int zr = inflate(&s->z, Z_NO_FLUSH);
    s->raw_used += before - s->z.avail_in;
    if (zr == Z_STREAM_END) {
      s->member_done = true;
      continue;
    }
    if (zr != Z_OK && zr != Z_BUF_ERROR) {
      *n = CHUNK_BYTES - s->z.avail_out;
      *why = s->z.msg ? s->z.msg : "invalid data";
      return Z_SRC_ERROR;
    }
  }
  *n = CHUNK_BYTES - s->z.avail_out;
  return *n > 0 ? Z_SRC_DATA : Z_SRC_END;
}

js_status js_stream(js_in *in, const char *path,
                    const yajl_callbacks *cb, void *ctx, dc_arena *a,
                    dc_diags *d) {
  memset(in, 0, sizeof *in);
  in->path = dc_arena_strdup(a, path);
  in->a = a;
  in->d = d;
  js_status st = JS_FAILED;
  unsigned char *buf = NULL;
  zsrc zs;
  memset(&zs, 0, sizeof zs);
  errno = 0;
  zs.f = fopen(path, "rb");
  if (!zs.f) {
    dc_source *src = dc_arena_alloc(a, sizeof *src);
    src->path = in->path;
    src->text = "";
    dc_diag_error(d, DC_DIAG_IO, (dc_span){src, 0, 0, 0}, "cannot open: %s",
                  errno ? strerror(errno) : "out of memory");
    in->failed = true;
    return JS_FAILED;
  }
  zs.raw = dc_xmalloc(CHUNK_BYTES);
  {
    int c0 = getc(zs.f), c1 = c0 == EOF ? EOF : getc(zs.f);
    zs.gz = c0 == 0x1f && c1 == 0x8b;
    /* put the two bytes back as the start of the raw buffer */
    size_t k = 0;
    if (c0 != EOF) zs.raw[k++] = (unsigned char)c0;
    if (c1 != EOF) zs.raw[k++] = (unsigned char)c1;
    zs.z.next_in = zs.raw;
    zs.z.avail_in = (uInt)k;
    if (zs.gz && inflateInit2(&zs.z, 16 + MAX_WBITS) != Z_OK)
      dc_fatal(__FILE__, __LINE__, "zlib: inflateInit2 failed");
  }
  in->h = yajl_alloc(cb, NULL, ctx);
  buf = dc_xmalloc(CHUNK_BYTES);
  bool stopped = false;
  for (;;) {
    size_t n;
    const char *why = NULL;
    int64_t garbage_at;
    errno = 0;
    zstat zst = zsrc_read(&zs, buf, &n, &why, &garbage_at);
    if (zst == Z_SRC_ERROR && !why) {
      dc_source *src = dc_arena_alloc(a, sizeof *src);
      src->path = in->path;
      src->text = "";
      dc_diag_error(d, DC_DIAG_IO, (dc_span){src, 0, 0, 0}, "cannot read: %s",
                    strerror(errno ? errno : EIO));
      in->failed = true;
      goto done;
    }
    if (zst == Z_SRC_ERROR && garbage_at >= 0) {
      js_error_file(in, "a gzip file must hold gzip data only (the "
                    "stream, or several, back to back)",
                    "%s, at byte %lld of the compressed file", why,
                    (long long)garbage_at);
      goto done;
    }
    if (zst == Z_SRC_ERROR) {
      char help[160];
      snprintf(help, sizeof help,
               "%lld bytes decompressed from %lld compressed before the "
               "error; was the file cut off while copying?",
               (long long)(in->total + (int64_t)n), (long long)zs.raw_used);
      js_error_file(in, help, "corrupt or truncated gzip data: %s", why);
      goto done;
    }
    if (zst == Z_SRC_END) break;
    unsigned char *text = buf;
    if (in->total == 0 && n >= 3 && buf[0] == 0xEF && buf[1] == 0xBB &&
        buf[2] == 0xBF) {
      /* a UTF-8 byte-order mark: not JSON (RFC 8259 §8.1 lets a parser
       * ignore it); the text and its columns start after it */
      text += 3, n -= 3;
      in->total += 3;
    }
    in->total += (int64_t)n;
    in->chunk = text;
    in->chunk_len = n;
    yajl_status ys = yajl_parse(in->h, text, n);
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
    st = JS_STOPPED;
    goto done;
  }
  if (in->total == 0) {
    js_error_file(in, NULL, "empty file");
    goto done;
  }
  in->chunk = NULL;
  in->chunk_len = 0;
  if (yajl_complete_parse(in->h) != yajl_status_ok) {
    if (!in->failed) {
      char help[80];
      snprintf(help, sizeof help, "%lld bytes read; the trace looks truncated",
               (long long)in->total);
      js_error_file(in, help,
                    "invalid JSON: premature EOF: the file ends inside "
                    "the JSON text");
    }
    goto done;
  }
  st = JS_DONE;
done:
  if (in->h) yajl_free(in->h);
  in->h = NULL;
  if (zs.gz) inflateEnd(&zs.z);
  fclose(zs.f);
  free(zs.raw);
  free(buf);
  return st;
}
