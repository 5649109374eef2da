/*
 * source.c — a user's file held in memory with its line table, so that any
 * later stage can turn a byte offset into a 1-based line:col and print the
 * source line under a diagnostic. Files over DC_SOURCE_MAX_BYTES are
 * refused before they are read whole; a leading UTF-8 byte-order mark is
 * dropped.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "compiler/support/support.h"

static void index_lines(dc_source *s, dc_arena *a) {
  size_t n = 1;
  for (size_t i = 0; i < s->len; i++)
    if (s->text[i] == '\n') n++;
  s->line_starts = dc_arena_array(a, n, sizeof *s->line_starts);
  s->n_lines = 0;
  s->line_starts[s->n_lines++] = 0;
  for (size_t i = 0; i < s->len; i++)
    if (s->text[i] == '\n') s->line_starts[s->n_lines++] = i + 1;
}

const dc_source *dc_source_from_memory(const char *name, const char *data,
                                       size_t len, dc_arena *a) {
  /* A UTF-8 byte-order mark (editors on Windows write one) is no part of
   * the text: dropped here, so that the YAML and CSV readers and every
   * line:col agree on what line 1 is. */
  if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) data += 3, len -= 3;
  dc_source *s = dc_arena_alloc(a, sizeof *s);
  s->path = dc_arena_strdup(a, name);
  s->text = dc_arena_strndup(a, data, len);
  s->len = len;
  index_lines(s, a);
  return s;
}

const dc_source *dc_source_load(const char *path, dc_arena *a,
                                dc_diags *d) {
  dc_span none = {0};
  FILE *f = fopen(path, "rb");
  if (!f) {
    dc_diag *g = dc_diag_error(d, DC_DIAG_IO, none, "cannot open '%s': %s",
                               path, strerror(errno));
    (void)g;
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    dc_diag_error(d, DC_DIAG_IO, none, "'%s' is a directory, not a file",
                  path);
    fclose(f);
    return NULL;
  }
  dc_buf b = {0};
  char chunk[65536];
  size_t n;
  bool too_large = false;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (b.len + n > DC_SOURCE_MAX_BYTES) {
      too_large = true;
      break;
    }
    dc_buf_append(&b, chunk, n);
  }
  bool read_error = ferror(f);
  fclose(f);
  if (too_large) {
    dc_diag *g = dc_diag_error(d, DC_DIAG_TOO_LARGE, none,
                               "'%s' is larger than %u MiB", path,
                               DC_SOURCE_MAX_BYTES >> 20);
    dc_diag_set_help(g, "a study file is a few kilobytes; is this the "
                        "right file?");
    dc_buf_free(&b);
    return NULL;
  }
  if (read_error) {
    dc_diag_error(d, DC_DIAG_IO, none, "cannot read '%s'", path);
    dc_buf_free(&b);
    return NULL;
  }
  const dc_source *s =
      dc_source_from_memory(path, b.data ? b.data : "", b.len, a);
  dc_buf_free(&b);
  return s;
}

const char *dc_source_line(const dc_source *s, int32_t line, size_t *len) {
  if (!s || line < 1 || (size_t)line > s->n_lines) {
    *len = 0;
    return "";
  }
  size_t start = s->line_starts[line - 1];
  size_t end = (size_t)line < s->n_lines ? s->line_starts[line] - 1 : s->len;
  if (end > start && s->text[end - 1] == '\r') end--;
  *len = end - start;
  return s->text + start;
}

dc_span dc_span_at(const dc_source *s, size_t offset, size_t len) {
  dc_span sp = {s, 0, 0, (int32_t)(len > INT32_MAX ? INT32_MAX : len)};
  if (!s) return sp;
  if (offset > s->len) offset = s->len;
  /* Binary search for the line containing offset. */
  size_t lo = 0, hi = s->n_lines;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->line_starts[mid] <= offset)
      lo = mid;
    else
      hi = mid;
  }
  sp.line = (int32_t)(lo + 1);
  sp.col = (int32_t)(offset - s->line_starts[lo] + 1);
  return sp;
}
