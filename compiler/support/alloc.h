/*
 * alloc.h — allocation that aborts in one place, fatal internal errors,
 * DC_ASSERT, checked 64-bit arithmetic and checked float → integer
 * conversions (alloc.c). The floor of the
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

/* Float → integer conversions. C leaves the conversion of a double that
 * is not finite or whose integer part lies outside the target type
 * undefined (gcc and clang give garbage, -fsanitize=float-cast-overflow
 * traps), so every one in dlrmc goes through these. The bounds are
 * written as doubles that are exact: 2^63 and 2^31.
 *
 * dc_f64_to_i64 truncates toward zero and returns false (leaving *out
 * alone) when v is NaN, infinite or its integer part is outside int64_t:
 * for values a diagnostic must refuse. The saturating forms clamp to the
 * type's range (NaN → 0): for values only bounded, never reported. */
#define DC_F64_2POW63 9223372036854775808.0
static inline bool dc_f64_to_i64(double v, int64_t *out) {
  if (!(v >= -DC_F64_2POW63 && v < DC_F64_2POW63)) return false;
  *out = (int64_t)v;
  return true;
}
static inline int64_t dc_f64_sat_i64(double v) {
  if (v != v) return 0;
  if (v >= DC_F64_2POW63) return INT64_MAX;
  if (v <= -DC_F64_2POW63) return INT64_MIN;
  return (int64_t)v;
}
static inline int32_t dc_f64_sat_i32(double v) {
  if (v != v) return 0;
  if (v >= 2147483647.0) return INT32_MAX;
  if (v <= -2147483648.0) return INT32_MIN;
  return (int32_t)v;
}

#endif /* DC_SUPPORT_ALLOC_H */
