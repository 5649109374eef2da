/*
 * profile_write.c — dc_profile_write: the overhead-profile YAML of
 * runtime.h, as `dlrmc overheads extract` writes it and dc_profile_load
 * (runtime/profile.c) reads it back:
 *
 *   name: "a100-recsys"
 *   units: us
 *   source: "dlrmc overheads extract: trace.json.gz (...)"
 *   defaults: {t1: 7.700, t2: 20.000, t3: 10.000, t4: 4.000, t5: 8.000,
 * kernel_gap: 1.000} ops: "aten::linear": {t1: 7.1, t1_std: 2.0, t1_n: 40,
 * t2: 33.0, ...} runtime: "cudaLaunchKernel": {t4: 5.000, t4_std: 1.200, n:
 * 141}
 *
 * Output is deterministic: ops and calls sorted by name (byte order),
 * every number with three decimals in the C locale, keys and strings
 * double-quoted with YAML escapes. An overhead type is written when it
 * has samples (n > 0) or a value (mean >= 0); its _std and _n only when
 * it has samples.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

#define DECIMALS 3

/* A YAML double-quoted scalar. */
static void put_quoted(dc_buf *out, const char *s) {
  dc_buf_putc(out, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"':
      dc_buf_puts(out, "\\\"");
      break;
    case '\\':
      dc_buf_puts(out, "\\\\");
      break;
    case '\n':
      dc_buf_puts(out, "\\n");
      break;
    case '\t':
      dc_buf_puts(out, "\\t");
      break;
    case '\r':
      dc_buf_puts(out, "\\r");
      break;
    default:
      if (*p < 0x20 || *p == 0x7f)
        dc_buf_printf(out, "\\x%02x", *p);
      else
        dc_buf_putc(out, (char)*p);
    }
  }
  dc_buf_putc(out, '"');
}

static void put_num(dc_buf *out, bool *first, const char *key, double v) {
  dc_buf_puts(out, *first ? "" : ", ");
  *first = false;
  dc_buf_printf(out, "%s: ", key);
  dc_buf_put_double(out, v, DECIMALS);
}

static void put_count(dc_buf *out, bool *first, const char *key, int64_t n) {
  dc_buf_puts(out, *first ? "" : ", ");
  *first = false;
  dc_buf_printf(out, "%s: %lld", key, (long long)n);
}

static void put_stat(dc_buf *out, bool *first, const char *key,
                     const dc_stat *s) {
  if (s->n <= 0 && s->mean < 0) return;
  put_num(out, first, key, s->mean);
  if (s->n <= 0) return;
  char k[16];
  snprintf(k, sizeof k, "%s_std", key);
  put_num(out, first, k, s->std);
  snprintf(k, sizeof k, "%s_n", key);
  put_count(out, first, k, s->n);
}

/* Sorted views without touching the caller's arrays. */
static int cmp_op_ptr(const void *a, const void *b) {
  return strcmp((*(const dc_op_overheads *const *)a)->op,
                (*(const dc_op_overheads *const *)b)->op);
}
static int cmp_rt_ptr(const void *a, const void *b) {
  return strcmp((*(const dc_runtime_overheads *const *)a)->call,
                (*(const dc_runtime_overheads *const *)b)->call);
}

void dc_profile_write(const dc_profile *p, dc_buf *out) {
  dc_buf_puts(out, "name: ");
  put_quoted(out, p->name ? p->name : "unnamed");
  dc_buf_puts(out, "\nunits: us\n");
  if (p->source) {
    dc_buf_puts(out, "source: ");
    put_quoted(out, p->source);
    dc_buf_putc(out, '\n');
  }
  bool first = true;
  dc_buf_puts(out, "defaults: {");
  put_num(out, &first, "t1", p->t1_us);
  put_num(out, &first, "t2", p->t2_us);
  put_num(out, &first, "t3", p->t3_us);
  put_num(out, &first, "t4", p->t4_us);
  put_num(out, &first, "t5", p->t5_us);
  put_num(out, &first, "kernel_gap", p->kernel_gap_us);
  dc_buf_puts(out, "}\n");

  const dc_op_overheads **ops =
      dc_xmalloc((p->n_ops ? p->n_ops : 1) * sizeof *ops);
  for (size_t i = 0; i < p->n_ops; i++)
    ops[i] = &p->ops[i];
  qsort(ops, p->n_ops, sizeof *ops, cmp_op_ptr);
  dc_buf_puts(out, p->n_ops ? "ops:\n" : "ops: {}\n");
  for (size_t i = 0; i < p->n_ops; i++) {
    const dc_op_overheads *o = ops[i];
    dc_buf_puts(out, "  ");
    put_quoted(out, o->op);
    dc_buf_puts(out, ": {");
    first = true;
    put_stat(out, &first, "t1", &o->t1);
    put_stat(out, &first, "t2", &o->t2);
    put_stat(out, &first, "t3", &o->t3);
    put_stat(out, &first, "t5", &o->t5);
    dc_buf_puts(out, "}\n");
  }
  free(ops);

  const dc_runtime_overheads **rt =
      dc_xmalloc((p->n_runtime ? p->n_runtime : 1) * sizeof *rt);
  for (size_t i = 0; i < p->n_runtime; i++)
    rt[i] = &p->runtime[i];
  qsort(rt, p->n_runtime, sizeof *rt, cmp_rt_ptr);
  dc_buf_puts(out, p->n_runtime ? "runtime:\n" : "runtime: {}\n");
  for (size_t i = 0; i < p->n_runtime; i++) {
    const dc_runtime_overheads *r = rt[i];
    dc_buf_puts(out, "  ");
    put_quoted(out, r->call);
    dc_buf_puts(out, ": {");
    first = true;
    if (r->t4.n > 0 || r->t4.mean >= 0) put_num(out, &first, "t4", r->t4.mean);
    if (r->t4.n > 0) {
      put_num(out, &first, "t4_std", r->t4.std);
      put_count(out, &first, "n", r->t4.n);
    }
    dc_buf_puts(out, "}\n");
  }
  free(rt);
}
