/*
 * units.c — numbers as users write them in studies and catalogs: counts
 * and byte sizes with SI (k, M, G, T, P: powers of 1000) or binary (Ki, Mi,
 * Gi, Ti, Pi: powers of 1024) suffixes, "_" digit separators and
 * scientific notation ("14e6"); durations in ns/us/ms/s; bandwidths in
 * GB/s. Every conversion is exact where it can be and refuses values that
 * do not fit 64 bits, fractional counts and non-finite numbers.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/support/support.h"

/* Copies text without '_' separators and surrounding blanks into buf. */
static bool clean_number(const char *text, char *buf, size_t cap) {
  while (*text == ' ') text++;
  size_t n = 0;
  for (const char *p = text; *p; p++) {
    if (*p == '_') continue;
    if (n + 1 >= cap) return false;
    buf[n++] = *p;
  }
  while (n > 0 && buf[n - 1] == ' ') n--;
  buf[n] = '\0';
  return n > 0;
}

/* Splits "12.5 GiB" into the number's end and the suffix (spaces skipped). */
static const char *split_suffix(const char *s) {
  const char *p = s;
  if (*p == '+' || *p == '-') p++;
  while (isdigit((unsigned char)*p) || *p == '.') p++;
  if ((*p == 'e' || *p == 'E') &&
      (isdigit((unsigned char)p[1]) ||
       ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
    p += 2;
    while (isdigit((unsigned char)*p)) p++;
  }
  return p;
}

static bool parse_decimal(const char *s, const char *end, double *out) {
  char buf[64];
  size_t n = (size_t)(end - s);
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, s, n);
  buf[n] = '\0';
  /* Only digits, one '.', an exponent: strtod alone accepts hex and
   * "inf", which are not sizes. */
  bool digit = false;
  for (size_t i = 0; i < n; i++) {
    char c = buf[i];
    if (isdigit((unsigned char)c))
      digit = true;
    else if (!(c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
      return false;
  }
  if (!digit) return false;
  errno = 0;
  char *e;
  double v = strtod(buf, &e);
  if (*e || errno == ERANGE || !isfinite(v)) return false;
  *out = v;
  return true;
}

bool dc_parse_size(const char *text, bool bytes, int64_t *out,
                   const char **why) {
  char buf[96];
  if (!clean_number(text, buf, sizeof buf)) {
    *why = "expected a whole number such as 4096, 1M or 40Mi";
    return false;
  }
  const char *suf = split_suffix(buf);
  const char *num_end = suf;
  while (*suf == ' ') suf++;
  double mult = 1;
  const char *p = suf;
  static const char prefixes[] = "kMGTP";
  if (*p) {
    const char *hit = strchr(prefixes, *p == 'K' ? 'k' : *p);
    if (hit && *p) {
      int power = (int)(hit - prefixes) + 1;
      p++;
      if (*p == 'i') {
        mult = ldexp(1.0, 10 * power);
        p++;
      } else {
        mult = pow(1000.0, power);
      }
    }
    if (*p == 'B' && bytes) p++;
    if (*p) {
      *why = bytes ? "unknown size suffix (use k, M, G, T, P, Ki, Mi, Gi, "
                     "Ti, Pi, optionally followed by B)"
                   : "unknown suffix (use k, M, G, T, P or Ki, Mi, Gi, Ti, "
                     "Pi)";
      return false;
    }
  }
  double v;
  if (!parse_decimal(buf, num_end, &v)) {
    *why = "expected a whole number such as 4096, 1M or 40Mi";
    return false;
  }
  /* Exact integers are parsed as integers so that 2^63-1 is not rounded. */
  bool plain_int = mult == 1 && strspn(buf, "0123456789") == strlen(buf);
  if (plain_int) {
    errno = 0;
    char *e;
    long long ll = strtoll(buf, &e, 10);
    if (errno == ERANGE || *e) {
      *why = "the value does not fit in 64 bits";
      return false;
    }
    *out = (int64_t)ll;
    return true;
  }
  double total = v * mult;
  if (total >= 9223372036854775807.0 || total <= -9223372036854775807.0) {
    *why = "the value does not fit in 64 bits";
    return false;
  }
  if (total != floor(total)) {
    *why = "the value must be a whole number";
    return false;
  }
  return dc_f64_to_i64(total, out);
  return true;
}

bool dc_parse_double(const char *text, double *out, const char **why) {
  char buf[96];
  if (!clean_number(text, buf, sizeof buf) ||
      !parse_decimal(buf, buf + strlen(buf), out)) {
    *why = "expected a number such as 0.8 or 1e-3";
    return false;
  }
  return true;
}

/* A unit suffix and the factor that converts it to the base unit; ""
 * (no suffix) is the base unit itself. */
typedef struct unit {
  const char *suffix;
  double scale;
} unit;

/* A number followed by one of `units`: the shared shape of durations and
 * bandwidths. `example` and `unknown` are the two failure reasons. */
static bool parse_with_unit(const char *text, const unit *units, size_t n,
                            double *out, const char **why,
                            const char *example, const char *unknown) {
  char buf[96];
  if (!clean_number(text, buf, sizeof buf)) {
    *why = example;
    return false;
  }
  const char *suf = split_suffix(buf);
  const char *num_end = suf;
  while (*suf == ' ') suf++;
  const unit *u = NULL;
  for (size_t i = 0; i < n && !u; i++)
    if (strcmp(suf, units[i].suffix) == 0) u = &units[i];
  if (!u) {
    *why = unknown;
    return false;
  }
  double v;
  if (!parse_decimal(buf, num_end, &v)) {
    *why = example;
    return false;
  }
  *out = v * u->scale;
  return true;
}

bool dc_parse_time_us(const char *text, double *out_us, const char **why) {
  static const unit units[] = {{"", 1},      {"us", 1},  {"\xc2\xb5s", 1},
                               {"ns", 1e-3}, {"ms", 1e3}, {"s", 1e6}};
  return parse_with_unit(text, units, DC_COUNTOF(units), out_us, why,
                         "expected a duration such as 5us, 1.5ms or 2s",
                         "unknown time unit (use ns, us, ms or s)");
}

bool dc_parse_gbps(const char *text, double *out_gbps, const char **why) {
  static const unit units[] = {
      {"", 1},         {"GB/s", 1},     {"GBps", 1},      {"MB/s", 1e-3},
      {"MBps", 1e-3},  {"TB/s", 1e3},   {"TBps", 1e3},    {"Gb/s", 1.0 / 8},
      {"Gbps", 1.0 / 8}};
  return parse_with_unit(text, units, DC_COUNTOF(units), out_gbps, why,
                         "expected a bandwidth such as 900GB/s",
                         "unknown bandwidth unit (use MB/s, GB/s, TB/s or "
                         "Gb/s)");
}
