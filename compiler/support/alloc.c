/*
 * alloc.c — allocation that aborts in one place, fatal internal errors and
 * checked 64-bit arithmetic. Running out of memory is not a user error
 * dlrmc can report usefully, so every allocation goes through dc_xmalloc
 * and the rest of the program never checks for NULL.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/support/alloc.h"

_Noreturn void dc_fatal(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "dlrmc: internal error at %s:%d: ", file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

static _Noreturn void out_of_memory(size_t size) {
  fprintf(stderr, "dlrmc: out of memory (allocating %zu bytes)\n", size);
  abort();
}

void *dc_xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) out_of_memory(size);
  return p;
}

void *dc_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) out_of_memory(n * size);
  return p;
}

void *dc_xrealloc(void *p, size_t size) {
  void *q = realloc(p, size ? size : 1);
  if (!q) out_of_memory(size);
  return q;
}

char *dc_xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = dc_xmalloc(n);
  memcpy(p, s, n);
  return p;
}
