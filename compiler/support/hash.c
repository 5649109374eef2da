/*
 * hash.c — the tree's one hash and one pseudo-random generator
 * (support.h). FNV-1a (Fowler, Noll, Vo; 64-bit offset basis and prime)
 * keys the hash tables: the string map, the trace readers' interning, the
 * benchmark sweep's set of configurations. splitmix64 (Steele, Lea and
 * Flood, OOPSLA 2014) drives every seeded draw — the fit's shuffles and
 * splits, the benchmark sweep's sampling, the tests' random kernels — so
 * a seed means the same sequence everywhere.
 */
#include "compiler/support/support.h"

#define FNV_PRIME 1099511628211ull

uint64_t dc_fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= FNV_PRIME;
  }
  return h;
}

uint64_t dc_fnv1a_str(uint64_t h, const char *s) {
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= FNV_PRIME;
  }
  return h;
}

uint64_t dc_fnv1a_u64(uint64_t h, uint64_t x) {
  for (int b = 0; b < 8; b++) {
    h ^= (x >> (8 * b)) & 0xff;
    h *= FNV_PRIME;
  }
  return h;
}

uint64_t dc_fnv1a_word(uint64_t h, uint64_t x) {
  return (h ^ x) * FNV_PRIME;
}

uint64_t dc_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
