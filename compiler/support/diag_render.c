/*
 * diag_render.c — the compiler-style rendering of diagnostics:
 *
 *   file:12:3: error: unknown key 'bacth' in 'training' [E0101]
 *      12 |   bacth: 2048
 *         |   ^~~~~
 *         = help: did you mean 'batch_size'?
 *
 * Only the driver renders. Columns are 1-based bytes in the span; the
 * caret line is laid out in display columns (a UTF-8 sequence is one
 * column, a tab is kept as a tab) so that the caret sits under the right
 * character. Control bytes and invalid UTF-8 in the echoed line are shown
 * as '?' so that a binary file cannot garble the terminal; a very long
 * line is echoed as a window round the caret.
 */
#include <stdio.h>

#include "compiler/support/support.h"

/* A source line past MAX_ECHO bytes (a 5 MB key) is echoed as a window of
 * that many bytes from ECHO_BEFORE before the caret (issue #19). */
enum { MAX_ECHO = 512, ECHO_BEFORE = 128 };

/* Appends the echoed source line and computes the display column of byte
 * offsets `from` and `to` (0-based) for the caret. */
static void echo_line(dc_buf *out, const char *line, size_t len, size_t from,
                      size_t to, dc_buf *pad, size_t *caret_cols) {
  const unsigned char *s = (const unsigned char *)line;
  size_t i = 0, cols = 0;
  *caret_cols = 0;
  while (i < len) {
    size_t n = dc_utf8_len(s + i, len - i);
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

  if (sp->src && sp->line > 0 && (size_t)sp->line <= sp->src->n_lines) {
    size_t len;
    const char *line = dc_source_line(sp->src, sp->line, &len);
    char num[16];
    int w = snprintf(num, sizeof num, "%d", sp->line);
    if (w < 4) w = 4;
    size_t from = sp->col > 0 ? (size_t)sp->col - 1 : 0;
    size_t base = sp->src->echo_col0;
    from = from > base ? from - base : 0;
    size_t to = from + (size_t)(sp->len > 0 ? sp->len : 1);
    if (to > len && from < len) to = len;
    dc_buf text = {0}, pad = {0};
    bool cut_end = sp->src->echo_cut;
    if (base > 0) { /* a window the reader kept */
      dc_buf_puts(&text, "...");
      dc_buf_puts(&pad, "   ");
    }
    if (len > MAX_ECHO) { /* a window round the caret, "..." at the cuts */
      size_t a = from > ECHO_BEFORE ? dc_utf8_floor(line, from - ECHO_BEFORE)
                                    : 0;
      if (a > len) a = dc_utf8_floor(line, len - 1);
      size_t b = a + MAX_ECHO < len ? dc_utf8_floor(line, a + MAX_ECHO) : len;
      if (a > 0 && base == 0) {
        dc_buf_puts(&text, "...");
        dc_buf_puts(&pad, "   ");
      }
      cut_end = cut_end || b < len;
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
