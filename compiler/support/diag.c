/*
 * diag.c — the diagnostics list and its compiler-style rendering:
 *
 *   file:12:3: error: unknown key 'bacth' in 'training' [E0101]
 *      12 |   bacth: 2048
 *         |   ^~~~~
 *         = help: did you mean 'batch_size'?
 *
 * Stages append; only the driver renders. Columns are 1-based bytes in
 * the span; the caret line is laid out in display columns (a UTF-8
 * sequence is one column, a tab is kept as a tab) so that the caret sits
 * under the right character. Control bytes and invalid UTF-8 in the
 * echoed line are shown as '?' so that a binary file cannot garble the
 * terminal.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/support/support.h"

static const struct {
  const char *id;
  const char *title;
} code_table[] = {
#define DC_DIAG_ROW(sym, id, title) {id, title},
    DC_DIAG_CODES(DC_DIAG_ROW)
#undef DC_DIAG_ROW
};

const char *dc_diag_code_id(dc_diag_code c) {
  DC_ASSERT((size_t)c < DC_COUNTOF(code_table));
  return code_table[c].id;
}

const char *dc_diag_code_title(dc_diag_code c) {
  DC_ASSERT((size_t)c < DC_COUNTOF(code_table));
  return code_table[c].title;
}

void dc_diags_free(dc_diags *d) {
  for (size_t i = 0; i < d->count; i++) {
    free(d->items[i].message);
    free(d->items[i].help);
  }
  free(d->items);
  memset(d, 0, sizeof *d);
}

/* Messages and echoed lines are clipped (issue #19: a 5 MB key must not
 * echo 10 MB): a message or help past MAX_TEXT bytes ends in "...", and a
 * source line past MAX_ECHO bytes is echoed as a window around the caret. */
enum { MAX_TEXT = 512, MAX_ECHO = 512, ECHO_BEFORE = 128 };

/* The largest n' <= n that does not split a UTF-8 sequence of s. */
static size_t utf8_floor(const char *s, size_t n) {
  while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
  return n;
}

__attribute__((format(printf, 1, 0)))
static char *vformat(const char *fmt, va_list ap) {
  dc_buf b = {0};
  dc_buf_vprintf(&b, fmt, ap);
  if (b.len > MAX_TEXT) {
    b.len = utf8_floor(b.data, MAX_TEXT - 3);
    b.data[b.len] = '\0';
    dc_buf_puts(&b, "...");
  }
  return b.data ? b.data : dc_xstrdup("");
}

__attribute__((format(printf, 5, 0)))
static dc_diag *diag_add(dc_diags *d, dc_severity sev, dc_diag_code code,
                         dc_span span, const char *fmt, va_list ap) {
  if (sev == DC_SEV_ERROR) d->errors++;
  if (d->max_errors && d->count >= d->max_errors) {
    /* Counted but not kept: return a scratch slot nobody renders. */
    static _Thread_local dc_diag scratch;
    free(scratch.message);
    free(scratch.help);
    memset(&scratch, 0, sizeof scratch);
    scratch.message = vformat(fmt, ap);
    return &scratch;
  }
  if (d->count == d->cap) {
    d->cap = d->cap ? d->cap * 2 : 8;
    d->items = dc_xrealloc(d->items, d->cap * sizeof *d->items);
  }
  dc_diag *g = &d->items[d->count++];
  memset(g, 0, sizeof *g);
  g->code = code;
  g->severity = sev;
  g->span = span;
  g->message = vformat(fmt, ap);
  return g;
}

dc_diag *dc_diag_error(dc_diags *d, dc_diag_code code, dc_span span,
                       const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dc_diag *g = diag_add(d, DC_SEV_ERROR, code, span, fmt, ap);
  va_end(ap);
  return g;
}

dc_diag *dc_diag_warning(dc_diags *d, dc_diag_code code, dc_span span,
                         const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dc_diag *g = diag_add(d, DC_SEV_WARNING, code, span, fmt, ap);
  va_end(ap);
  return g;
}

void dc_diags_append(dc_diags *d, const dc_diags *from) {
  for (size_t i = 0; i < from->count; i++) {
    const dc_diag *g = &from->items[i];
    dc_diag *n = g->severity == DC_SEV_ERROR
                     ? dc_diag_error(d, g->code, g->span, "%s", g->message)
                     : dc_diag_warning(d, g->code, g->span, "%s", g->message);
    if (g->help) dc_diag_set_help(n, "%s", g->help);
  }
}

void dc_diag_set_help(dc_diag *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  free(g->help);
  g->help = vformat(fmt, ap);
  va_end(ap);
}

/* Length of a valid UTF-8 sequence starting at s (max n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  size_t len;
  if (s[0] < 0x80) return 1;
  if ((s[0] & 0xE0) == 0xC0 && s[0] >= 0xC2)
    len = 2;
  else if ((s[0] & 0xF0) == 0xE0)
    len = 3;
  else if ((s[0] & 0xF8) == 0xF0 && s[0] <= 0xF4)
    len = 4;
  else
    return 0;
  if (len > n) return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  return len;
}

/* Appends the echoed source line and computes the display column of byte
 * offsets `from` and `to` (0-based) for the caret. */
static void echo_line(dc_buf *out, const char *line, size_t len, size_t from,
                      size_t to, dc_buf *pad, size_t *caret_cols) {
  const unsigned char *s = (const unsigned char *)line;
  size_t i = 0, cols = 0;
  *caret_cols = 0;
  while (i < len) {
    size_t n = utf8_len(s + i, len - i);
    bool tab = s[i] == '\t';
    if (n == 1 && !tab && (s[i] < 0x20 || s[i] == 0x7f)) n = 0;
    if (i < from) dc_buf_putc(pad, tab ? '\t' : ' ');
    if (i >= from && i < to) (*caret_cols)++;
    if (n == 0) {
      dc_buf_putc(out, '?');
      i++;
    } else {
      dc_buf_append(out, line + i, n);
      i += n;
    }
    cols++;
  }
  if (from >= len && to > from) *caret_cols = 1; /* points past the end */
}

void dc_diag_render_one(const dc_diag *g, dc_buf *out, bool color) {
  const char *sev = g->severity == DC_SEV_ERROR     ? "error"
                    : g->severity == DC_SEV_WARNING ? "warning"
                                                    : "note";
  const char *c_sev = !color                        ? ""
                      : g->severity == DC_SEV_ERROR ? "\033[1;31m"
                      : g->severity == DC_SEV_WARNING ? "\033[1;35m"
                                                      : "\033[1;36m";
  const char *c_bold = color ? "\033[1m" : "";
  const char *c_off = color ? "\033[0m" : "";
  const char *c_blue = color ? "\033[1;34m" : "";
  const char *c_green = color ? "\033[1;32m" : "";
  const dc_span *sp = &g->span;

  dc_buf_puts(out, c_bold);
  if (sp->src && sp->line > 0)
    dc_buf_printf(out, "%s:%d:%d: ", sp->src->path, sp->line, sp->col);
  else if (sp->src)
    dc_buf_printf(out, "%s: ", sp->src->path);
  else
    dc_buf_puts(out, "dlrmc: ");
  dc_buf_printf(out, "%s%s:%s%s %s [%s]%s\n", c_sev, sev, c_off, c_bold,
                g->message, dc_diag_code_id(g->code), c_off);

  if (sp->src && sp->line > 0) {
    size_t len;
    const char *line = dc_source_line(sp->src, sp->line, &len);
    char num[16];
    int w = snprintf(num, sizeof num, "%d", sp->line);
    if (w < 4) w = 4;
    size_t from = sp->col > 0 ? (size_t)sp->col - 1 : 0;
    size_t to = from + (size_t)(sp->len > 0 ? sp->len : 1);
    if (to > len && from < len) to = len;
    dc_buf text = {0}, pad = {0};
    bool cut_end = false;
    if (len > MAX_ECHO) {
      size_t a = from > ECHO_BEFORE ? utf8_floor(line, from - ECHO_BEFORE) : 0;
      if (a > len) a = utf8_floor(line, len - 1);
      size_t b = a + MAX_ECHO < len ? utf8_floor(line, a + MAX_ECHO) : len;
      if (a > 0) {
        dc_buf_puts(&text, "...");
        dc_buf_puts(&pad, "   ");
      }
      cut_end = b < len;
      line += a, len = b - a;
      from = from > a ? from - a : 0;
      to = to > a ? to - a : 0;
      if (to > len + 1) to = len + 1;
    }
    size_t carets;
    echo_line(&text, line, len, from, to, &pad, &carets);
    if (cut_end) dc_buf_puts(&text, "...");
    if (carets == 0) carets = 1;
    dc_buf_printf(out, "%s%*d |%s %s\n", c_blue, w, sp->line, c_off,
                  text.data ? text.data : "");
    dc_buf_printf(out, "%s%*s |%s %s%s^", c_blue, w, "", c_off,
                  pad.data ? pad.data : "", c_sev);
    for (size_t i = 1; i < carets; i++) dc_buf_putc(out, '~');
    dc_buf_printf(out, "%s\n", c_off);
    if (g->help)
      dc_buf_printf(out, "%*s %s=%s %shelp:%s %s\n", w, "", c_blue, c_off,
                    c_green, c_off, g->help);
    dc_buf_free(&text);
    dc_buf_free(&pad);
  } else if (g->help) {
    dc_buf_printf(out, "  %s=%s %shelp:%s %s\n", c_blue, c_off, c_green,
                  c_off, g->help);
  }
}

void dc_diags_render(const dc_diags *d, FILE *out, bool color) {
  dc_buf b = {0};
  for (size_t i = 0; i < d->count; i++) dc_diag_render_one(&d->items[i], &b, color);
  if (d->max_errors && d->errors > d->count)
    dc_buf_printf(&b, "dlrmc: note: %zu more errors not shown\n",
                  d->errors - d->count);
  if (b.len) fwrite(b.data, 1, b.len, out);
  dc_buf_free(&b);
}
