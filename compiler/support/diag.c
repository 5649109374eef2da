/*
 * diag.c — the diagnostics list: the code table (diag_codes.h), and the
 * errors and warnings stages append, each with its span, message and
 * help. Stages append; only the driver renders (diag_render.c, which
 * reads the source lines: kept apart so that source.c, which reports the
 * files it cannot read, and the renderer, which echoes their lines, do
 * not depend on each other).
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

/* Messages are clipped (issue #19: a 5 MB key must not echo 10 MB): a
 * message or help past MAX_TEXT bytes ends in "..." (diag_render.c clips
 * the echoed source line the same way). */
enum { MAX_TEXT = 512 };

__attribute__((format(printf, 1, 0)))
static char *vformat(const char *fmt, va_list ap) {
  dc_buf b = {0};
  dc_buf_vprintf(&b, fmt, ap);
  if (b.len > MAX_TEXT) {
    b.len = dc_utf8_floor(b.data, MAX_TEXT - 3);
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
