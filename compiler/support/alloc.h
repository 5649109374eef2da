/*
 * alloc.h — allocation that aborts in one place, fatal internal errors,
 * DC_ASSERT and checked 64-bit arithmetic (alloc.c). The floor of the
 * floor: it includes nothing of dlrmc, so alloc.c, which DC_ASSERT calls,
 * depends on no other file, and support.h, which every file includes,
 * includes this one.
 */
#ifndef DC_SUPPORT_ALLOC_H
#define DC_SUPPORT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *dc_xmalloc(size_t size);
void *dc_xcalloc(size_t n, size_t size);
void *dc_xrealloc(void *p, size_t size);
char *dc_xstrdup(const char *s);
_Noreturn void dc_fatal(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An internal invariant that no input can break. */
#define DC_ASSERT(cond)                                                     \
  ((cond) ? (void)0 : dc_fatal(__FILE__, __LINE__, "assertion failed: %s", \
                               #cond))

#define DC_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

/* Checked 64-bit arithmetic: false on overflow (result left unspecified).
 * Inline: graph building and the memory model call them per tensor. */
static inline bool dc_mul_i64(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool dc_add_i64(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
/* Saturating forms, for sums that only need a bound (INT64_MAX on
 * overflow): memory estimates and parameter counts. */
static inline int64_t dc_sat_add_i64(int64_t a, int64_t b) {
  int64_t r;
  return dc_add_i64(a, b, &r) ? r : INT64_MAX;
}
static inline int64_t dc_sat_mul_i64(int64_t a, int64_t b) {
  int64_t r;
  return dc_mul_i64(a, b, &r) ? r : INT64_MAX;
}

#endif /* DC_SUPPORT_ALLOC_H */
