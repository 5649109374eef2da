/*
 * arena.c — bump allocation in chained blocks. One arena per compilation
 * and one per study point (spec/design.md): freeing or resetting the
 * arena releases everything built from it, so no stage frees piecemeal.
 * Blocks grow geometrically; an allocation larger than a block gets a
 * block of its own so that big arrays never waste a block's tail.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/support/support.h"

struct dc_arena_block {
  dc_arena_block *next;
  size_t cap;
  size_t used;
  _Alignas(16) unsigned char data[];
};

enum { ARENA_MIN_BLOCK = 16 * 1024, ARENA_ALIGN = 16 };

void dc_arena_init(dc_arena *a) {
  a->head = NULL;
  a->used_bytes = 0;
}

void dc_arena_free(dc_arena *a) {
  dc_arena_block *b = a->head;
  while (b) {
    dc_arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
  a->used_bytes = 0;
}

void dc_arena_reset(dc_arena *a) {
  /* Keep the largest-capacity block: the oldest blocks are the smallest,
   * so keep the head (most recent, largest) and free the rest. */
  if (!a->head) return;
  dc_arena_block *keep = a->head;
  dc_arena_block *b = keep->next;
  while (b) {
    dc_arena_block *next = b->next;
    free(b);
    b = next;
  }
  keep->next = NULL;
  keep->used = 0;
  a->used_bytes = 0;
}

void *dc_arena_alloc_raw(dc_arena *a, size_t size) {
  size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (need < size) dc_fatal(__FILE__, __LINE__, "arena request overflow");
  dc_arena_block *b = a->head;
  if (!b || b->cap - b->used < need) {
    size_t cap = b ? b->cap * 2 : ARENA_MIN_BLOCK;
    if (cap > (64u << 20)) cap = 64u << 20;
    if (cap < need) cap = need;
    dc_arena_block *nb = dc_xmalloc(sizeof *nb + cap);
    nb->cap = cap;
    nb->used = 0;
    if (b && b->cap - b->used >= ARENA_MIN_BLOCK / 4 && cap == need) {
      /* A one-off big block: put it behind the head so the head's free
       * space stays usable. */
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      a->head = nb;
    }
    b = nb;
  }
  void *p = b->data + b->used;
  b->used += need;
  a->used_bytes += need;
  return p;
}

void *dc_arena_alloc(dc_arena *a, size_t size) {
  return memset(dc_arena_alloc_raw(a, size), 0, size);
}

static size_t array_bytes(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total))
    dc_fatal(__FILE__, __LINE__, "arena array overflow (%zu x %zu)", n, size);
  return total;
}

void *dc_arena_array(dc_arena *a, size_t n, size_t size) {
  return dc_arena_alloc(a, array_bytes(n, size));
}

void *dc_arena_array_raw(dc_arena *a, size_t n, size_t size) {
  return dc_arena_alloc_raw(a, array_bytes(n, size));
}

char *dc_arena_strndup(dc_arena *a, const char *s, size_t n) {
  char *p = dc_arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *dc_arena_strdup(dc_arena *a, const char *s) {
  return dc_arena_strndup(a, s, strlen(s));
}

char *dc_arena_printf(dc_arena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  DC_ASSERT(n >= 0);
  char *p = dc_arena_alloc(a, (size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}
