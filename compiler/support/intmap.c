/*
 * intmap.c — dc_imap, a map from int64 keys to int32 values >= 0
 * (support.h): open addressing with linear probing over a power-of-two
 * table kept at most half full, Fibonacci hashing of the key, -1 in a
 * slot's value marking it empty. The trace readers key events by
 * correlation id and tensors and nodes by id through it.
 */
#include <stdlib.h>

#include "compiler/support/support.h"

static size_t slot_of(const dc_imap *m, int64_t k) {
  return (size_t)(((uint64_t)k * 11400714819323198485ull) & (m->cap - 1));
}

void dc_imap_put(dc_imap *m, int64_t k, int32_t v) {
  DC_ASSERT(v >= 0);
  if ((m->n + 1) * 2 > m->cap) {
    dc_imap old = *m;
    m->cap = old.cap ? old.cap * 2 : 1024;
    m->key = dc_xmalloc(m->cap * sizeof *m->key);
    m->val = dc_xmalloc(m->cap * sizeof *m->val);
    for (size_t i = 0; i < m->cap; i++)
      m->val[i] = -1;
    m->n = 0;
    for (size_t i = 0; i < old.cap; i++)
      if (old.val[i] >= 0) dc_imap_put(m, old.key[i], old.val[i]);
    free(old.key);
    free(old.val);
  }
  size_t i = slot_of(m, k);
  while (m->val[i] >= 0 && m->key[i] != k)
    i = (i + 1) & (m->cap - 1);
  if (m->val[i] < 0) m->n++;
  m->key[i] = k;
  m->val[i] = v;
}

int32_t dc_imap_get(const dc_imap *m, int64_t k) {
  if (!m->cap) return -1;
  size_t i = slot_of(m, k);
  while (m->val[i] >= 0) {
    if (m->key[i] == k) return m->val[i];
    i = (i + 1) & (m->cap - 1);
  }
  return -1;
}

void dc_imap_free(dc_imap *m) {
  free(m->key);
  free(m->val);
  m->key = NULL;
  m->val = NULL;
  m->cap = m->n = 0;
}
