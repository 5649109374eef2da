/*
 * buf.c — a growable string buffer and a string-keyed hash map, the two
 * containers every stage needs. The buffer is how output is assembled
 * before it is written atomically; doubles go through dc_buf_put_double so
 * that output never depends on the locale.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/support/support.h"

static void buf_reserve(dc_buf *b, size_t extra) {
  size_t need = b->len + extra + 1;
  if (need <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  b->data = dc_xrealloc(b->data, cap);
  b->cap = cap;
}

void dc_buf_free(dc_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

void dc_buf_clear(dc_buf *b) {
  b->len = 0;
  if (b->data) b->data[0] = '\0';
}

void dc_buf_append(dc_buf *b, const char *s, size_t n) {
  buf_reserve(b, n);
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void dc_buf_puts(dc_buf *b, const char *s) { dc_buf_append(b, s, strlen(s)); }

void dc_buf_putc(dc_buf *b, char c) { dc_buf_append(b, &c, 1); }

void dc_buf_vprintf(dc_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  DC_ASSERT(n >= 0);
  buf_reserve(b, (size_t)n);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  b->len += (size_t)n;
}

void dc_buf_printf(dc_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dc_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

/* UTF-8 (support.h): where text can be cut, and which bytes start a valid
 * sequence. */
size_t dc_utf8_floor(const char *s, size_t n) {
  while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
  return n;
}

size_t dc_utf8_len(const unsigned char *s, size_t n) {
  size_t len;
  if (n == 0) return 0;
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
  /* overlong three- and four-byte forms, UTF-16 surrogates, past U+10FFFF */
  if (len == 3 && s[0] == 0xE0 && s[1] < 0xA0) return 0;
  if (len == 3 && s[0] == 0xED && s[1] >= 0xA0) return 0;
  if (len == 4 && s[0] == 0xF0 && s[1] < 0x90) return 0;
  if (len == 4 && s[0] == 0xF4 && s[1] >= 0x90) return 0;
  return len;
}

bool dc_printable(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    size_t k = dc_utf8_len(u + i, n - i);
    if (k == 0 || (k == 1 && (u[i] < 0x20 || u[i] == 0x7f))) return false;
    i += k;
  }
  return true;
}

void dc_buf_put_printable(dc_buf *b, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    size_t k = dc_utf8_len(u + i, n - i);
    if (k > 1 || (k == 1 && u[i] >= 0x20 && u[i] != 0x7f)) {
      dc_buf_append(b, s + i, k);
      i += k;
      continue;
    }
    if (u[i] == '\n') dc_buf_puts(b, "\\n");
    else if (u[i] == '\r') dc_buf_puts(b, "\\r");
    else if (u[i] == '\t') dc_buf_puts(b, "\\t");
    else dc_buf_printf(b, "\\x%02X", u[i]);
    i++;
  }
}

void dc_buf_put_double(dc_buf *b, double v, int decimals) {
  if (isnan(v)) {
    dc_buf_puts(b, "nan");
    return;
  }
  if (isinf(v)) {
    dc_buf_puts(b, v < 0 ? "-inf" : "inf");
    return;
  }
  /* Avoid "-0.000": a value that rounds to zero prints as zero. */
  double scale = pow(10.0, decimals);
  if (fabs(v) * scale < 0.5) v = 0.0;
  dc_buf_printf(b, "%.*f", decimals, v);
}

void dc_buf_put_csv_field(dc_buf *b, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    dc_buf_puts(b, s);
    return;
  }
  dc_buf_putc(b, '"');
  for (; *s; s++) {
    if (*s == '"') dc_buf_putc(b, '"');
    dc_buf_putc(b, *s);
  }
  dc_buf_putc(b, '"');
}

void dc_buf_put_json_string(dc_buf *b, const char *s) {
  dc_buf_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': dc_buf_puts(b, "\\\""); break;
    case '\\': dc_buf_puts(b, "\\\\"); break;
    case '\n': dc_buf_puts(b, "\\n"); break;
    case '\r': dc_buf_puts(b, "\\r"); break;
    case '\t': dc_buf_puts(b, "\\t"); break;
    default:
      if (*p < 0x20)
        dc_buf_printf(b, "\\u%04x", *p);
      else
        dc_buf_putc(b, (char)*p);
    }
  }
  dc_buf_putc(b, '"');
}

/* ---- hash map: open addressing, FNV-1a, power-of-two capacity ---------- */

struct dc_map_entry {
  char *key; /* NULL: empty slot */
  void *value;
};

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 1099511628211ull;
  }
  return h;
}

void dc_map_free(dc_map *m) {
  for (size_t i = 0; i < m->cap; i++) free(m->slots[i].key);
  free(m->slots);
  m->slots = NULL;
  m->cap = m->count = 0;
}

static dc_map_entry *map_find(const dc_map *m, const char *key) {
  size_t mask = m->cap - 1;
  size_t i = (size_t)hash_str(key) & mask;
  for (;;) {
    dc_map_entry *e = &m->slots[i];
    if (!e->key || strcmp(e->key, key) == 0) return e;
    i = (i + 1) & mask;
  }
}

static void map_grow(dc_map *m) {
  size_t old_cap = m->cap;
  dc_map_entry *old = m->slots;
  m->cap = old_cap ? old_cap * 2 : 16;
  m->slots = dc_xcalloc(m->cap, sizeof *m->slots);
  for (size_t i = 0; i < old_cap; i++) {
    if (!old[i].key) continue;
    *map_find(m, old[i].key) = old[i];
  }
  free(old);
}

void *dc_map_put(dc_map *m, const char *key, void *value) {
  if ((m->count + 1) * 4 > m->cap * 3) map_grow(m);
  dc_map_entry *e = map_find(m, key);
  if (e->key) {
    void *prev = e->value;
    e->value = value;
    return prev;
  }
  e->key = dc_xstrdup(key);
  e->value = value;
  m->count++;
  return NULL;
}

void *dc_map_get(const dc_map *m, const char *key) {
  if (!m->cap) return NULL;
  dc_map_entry *e = map_find(m, key);
  return e->key ? e->value : NULL;
}

void dc_map_each(const dc_map *m,
                 void (*fn)(const char *key, void *value, void *ctx),
                 void *ctx) {
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i].key) fn(m->slots[i].key, m->slots[i].value, ctx);
}
