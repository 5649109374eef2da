/*
 * memo.c — a per-thread cache of kernel prices. A sweep prices the same
 * kernels over and over (the bottom MLP's GEMMs do not change when only the
 * GPU count or the top MLP is swept; every rank of a data-parallel point
 * launches the same kernels), and dc_kernel_time is a pure function of
 * (kernel, device, fitted models), so a price can be reused exactly.
 *
 * The key is the descriptor's meaningful fields serialised to 64-bit words
 * (never the struct's raw bytes: a union with padding and pointers to
 * per-table arrays would make equal kernels look different), plus the
 * caller's device id. Keys are compared in full, so a hash collision can
 * never return a wrong price.
 *
 * Only kinds whose price costs more than a lookup go through the cache:
 * GEMM, embedding, transpose and tril (a fitted MLP, a hit-rate model, a
 * loop over rows). Element-wise, copies and collectives are closed-form
 * rooflines of a few nanoseconds, cheaper to price again than to hash;
 * they are priced directly and counted as neither hit nor miss (as is an
 * embedding kernel whose key would exceed MEMO_MAX_KEY words).
 *
 * One cache per worker thread: no locks on the hot path, and because prices
 * are pure the output cannot depend on which thread priced what. The table
 * is bounded and simply cleared when full, so memory stays constant on a
 * sweep of any length.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

enum {
  MEMO_CAP = 1 << 13,          /* slots (power of two): 192 KiB, fits L2 */
  MEMO_MAX_ENTRIES = MEMO_CAP / 2,
  MEMO_POOL_WORDS = 1 << 16,   /* key storage, 512 KiB */
  MEMO_MAX_KEY = 512           /* longer keys are priced without caching */
};

typedef struct memo_slot {
  uint64_t hash;  /* 0: empty */
  uint32_t off;   /* key words in the pool */
  uint32_t len;
  double value;
} memo_slot;

struct dc_memo {
  memo_slot *slots;
  uint64_t *pool;
  size_t pool_used;
  size_t entries;
  int64_t hits, misses;
};

dc_memo *dc_memo_new(void) {
  dc_memo *m = dc_xcalloc(1, sizeof *m);
  m->slots = dc_xcalloc(MEMO_CAP, sizeof *m->slots);
  m->pool = dc_xmalloc(MEMO_POOL_WORDS * sizeof *m->pool);
  return m;
}

void dc_memo_free(dc_memo *m) {
  if (!m) return;
  free(m->slots);
  free(m->pool);
  free(m);
}

void dc_memo_stats(const dc_memo *m, int64_t *hits, int64_t *misses) {
  *hits = m->hits;
  *misses = m->misses;
}

static uint64_t dbits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

/* Serialises what determines a kernel's price. Returns the word count, or
 * 0 for a kernel not cached: a closed-form kind, or a key too long. */
static size_t key_of(const dc_kernel *k, int32_t device_id, uint64_t *w) {
  size_t n = 0;
  w[n++] = ((uint64_t)(uint32_t)device_id << 32) | (uint64_t)k->kind;
  w[n++] = dbits(k->scale);
  switch (k->kind) {
  case DC_KERNEL_GEMM:
    w[n++] = (uint64_t)k->u.gemm.m;
    w[n++] = (uint64_t)k->u.gemm.n;
    w[n++] = (uint64_t)k->u.gemm.k;
    w[n++] = (uint64_t)k->u.gemm.batch;
    w[n++] = (uint64_t)k->u.gemm.transa | (uint64_t)k->u.gemm.transb << 1 |
             (uint64_t)k->u.gemm.dtype << 8;
    break;
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD:
    if (k->u.emb.n_groups < 0 ||
        (size_t)k->u.emb.n_groups * 3 + 8 > MEMO_MAX_KEY ||
        k->u.emb.part != DC_EMB_WHOLE)
      return 0;
    w[n++] = (uint64_t)k->u.emb.batch;
    w[n++] = (uint64_t)k->u.emb.n_groups | (uint64_t)k->u.emb.dtype << 32 |
             (uint64_t)k->u.emb.optimizer << 40 |
             (uint64_t)k->u.emb.fused_optimizer << 48 |
             (uint64_t)k->u.emb.model << 56;
    for (int32_t i = 0; i < k->u.emb.n_groups; i++) {
      const dc_emb_group *gr = &k->u.emb.groups[i];
      /* tables beyond HBM (a few kernels a graph) are priced uncached */
      if (gr->memory != DC_MEMORY_HBM) return 0;
      w[n++] = (uint64_t)(uint32_t)gr->tables << 32 | (uint32_t)gr->dim;
      w[n++] = (uint64_t)gr->rows;
      w[n++] = dbits(gr->pooling);
    }
    break;
  case DC_KERNEL_TRANSPOSE:
  case DC_KERNEL_TRIL_FWD:
  case DC_KERNEL_TRIL_BWD:
  case DC_KERNEL_INTERACTION_FWD:
  case DC_KERNEL_INTERACTION_BWD:
    w[n++] = (uint64_t)k->u.mat.batch;
    w[n++] = (uint64_t)k->u.mat.m;
    w[n++] = (uint64_t)k->u.mat.n;
    w[n++] = (uint64_t)k->u.mat.diag | (uint64_t)k->u.mat.dtype << 8;
    break;
  default:
    return 0;
  }
  return n;
}

/* Four independent multiply lanes (an embedding kernel's key runs to ~80
 * words, and one dependent multiply chain per word was the memo's main
 * cost), folded at the end. Only slot positions depend on it: keys are
 * compared in full. */
static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

static uint64_t hash_words(const uint64_t *w, size_t n) {
  uint64_t a = 0x9e3779b97f4a7c15ull ^ n, b = 0xbf58476d1ce4e5b9ull,
           c = 0x94d049bb133111ebull, d = 0x2545f4914f6cdd1dull;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a = (a ^ w[i]) * 0x9e3779b97f4a7c15ull;
    b = (b ^ w[i + 1]) * 0xbf58476d1ce4e5b9ull;
    c = (c ^ w[i + 2]) * 0x94d049bb133111ebull;
    d = (d ^ w[i + 3]) * 0xff51afd7ed558ccdull;
    a ^= a >> 29;
    b ^= b >> 29;
    c ^= c >> 29;
    d ^= d >> 29;
  }
  for (; i < n; i++) a = mix((a ^ w[i]) * 0x9e3779b97f4a7c15ull);
  uint64_t h = mix(a ^ mix(b + 0x632be59bd9b4e019ull) ^
                   mix(c ^ 0x8cb92ba72f3d8dd7ull) ^ mix(d * 3));
  return h ? h : 1;
}

static void memo_clear(dc_memo *m) {
  memset(m->slots, 0, MEMO_CAP * sizeof *m->slots);
  m->pool_used = 0;
  m->entries = 0;
}

double dc_memo_time(dc_memo *m, const dc_kernel *k, int32_t device_id,
                    const dc_device *dev, const dc_kmodels *km) {
  uint64_t key[MEMO_MAX_KEY];
  size_t n = key_of(k, device_id, key);
  if (n == 0) return dc_kernel_time(k, dev, km); /* not cached */
  uint64_t h = hash_words(key, n);
  size_t mask = MEMO_CAP - 1, i = (size_t)h & mask;
  while (m->slots[i].hash) {
    memo_slot *s = &m->slots[i];
    if (s->hash == h && s->len == n &&
        memcmp(m->pool + s->off, key, n * sizeof *key) == 0) {
      m->hits++;
      return s->value;
    }
    i = (i + 1) & mask;
  }
  m->misses++;
  double v = dc_kernel_time(k, dev, km);
  if (m->entries >= MEMO_MAX_ENTRIES || m->pool_used + n > MEMO_POOL_WORDS) {
    memo_clear(m);
    i = (size_t)h & mask;
  }
  memcpy(m->pool + m->pool_used, key, n * sizeof *key);
  m->slots[i] = (memo_slot){h, (uint32_t)m->pool_used, (uint32_t)n, v};
  m->pool_used += n;
  m->entries++;
  return v;
}
