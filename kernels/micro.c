/*
 * micro.c — the tables of stock-PyTorch kernel microbenchmarks
 * (tests/validation/gpu/micro.py: elementwise.csv, copy.csv,
 * embedding.csv) as fit samples for `dlrmc calibrate --micro`
 * (spec/calibrate.md). Each file is read with the one CSV reader and its
 * kind told by its columns:
 *
 *   op,inputs,elements,dtype,...   relu/add/addcmul → an element-wise
 *                                  kernel of 1/2/3 inputs: flops_per_elem
 *                                  = inputs, bytes_per_elem = (inputs +
 *                                  1) · element size, as graphgen prices
 *                                  such an op
 *   kind,host,bytes,...            d2d → a device copy; h2d and d2h have
 *                                  no fitted family and are skipped
 *   op,rows,dim,pooling,batch,...  fwd → nn.EmbeddingBag's forward lookup
 *                                  (one table, stock); train and fused_bwd
 *                                  time several kernels and are skipped
 *
 * `kernel_us` is the device time of a row's `kernels` kernels. A recording
 * whose `names` list a `rep#` annotation span counted that span as one
 * more event lasting from the first kernel's start to the last one's end:
 * such a row's real kernel count is one less and, for a single kernel,
 * its time half the figure. Only rows of one real kernel are samples;
 * the others are counted in *skipped.
 */
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels/kernels.h"

typedef enum { MICRO_EW, MICRO_COPY, MICRO_EMB } micro_kind;

/* The header's span: the line before the first row (micro.py writes no
 * blank lines), else the file's first line. */
static dc_span header_span(const dc_csv *c) {
  int32_t line = c->n_rows && c->row_line[0] > 1 ? c->row_line[0] - 1 : 1;
  return (dc_span){c->src, line, 1, 0};
}

static bool need(const dc_csv *c, const char *const *cols, int32_t n,
                 int32_t *idx, const char *what, dc_diags *d) {
  for (int32_t i = 0; i < n; i++) {
    idx[i] = dc_csv_col(c, cols[i]);
    if (idx[i] < 0) {
      dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_CSV, header_span(c),
                                 "a micro.py %s table needs the column '%s'",
                                 what, cols[i]);
      dc_diag_set_help(g, "tests/validation/gpu/micro.py writes it "
                          "(spec/calibrate.md)");
      return false;
    }
  }
  return true;
}

static bool num(const dc_csv *c, int32_t r, int32_t col, double lo,
                double *out, dc_diags *d) {
  const char *why;
  if (dc_parse_double(c->cells[r][col], out, &why) && isfinite(*out) &&
      *out >= lo)
    return true;
  dc_diag_error(d, DC_DIAG_BAD_CSV, dc_csv_span(c, r, col),
                "'%s' must be a number of at least %g, not '%s'", c->cols[col],
                lo, c->cells[r][col]);
  return false;
}

/* Sets one kernel parameter from a cell (the cell's span on error). */
static bool param(dc_kernel *k, const char *key, const char *v,
                  const dc_csv *c, int32_t r, int32_t col, dc_diags *d) {
  return dc_kernel_param_set(k, key, v, dc_csv_span(c, r, col), NULL, d);
}

/* One element-wise row: op relu/add/addcmul in fp32 or bf16. */
static bool ew_row(const dc_csv *c, int32_t r, const int32_t *ix,
                   dc_kernel *k, dc_arena *a, dc_diags *d) {
  static const char *const ops[] = {"relu", "add", "addcmul"};
  const char *op = c->cells[r][ix[0]], *dt = c->cells[r][ix[3]];
  int inputs = 0;
  for (int i = 0; i < 3; i++)
    if (strcmp(op, ops[i]) == 0) inputs = i + 1;
  if (!inputs) {
    dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_ENUM, dc_csv_span(c, r, ix[0]),
                               "'op': '%s' is not relu, add or addcmul", op);
    const char *s = dc_suggest(op, ops, 3);
    if (s) dc_diag_set_help(g, "did you mean '%s'?", s);
    return false;
  }
  double in;
  if (!num(c, r, ix[1], 1, &in, d)) return false;
  if (in != inputs) {
    dc_diag_error(d, DC_DIAG_BAD_CSV, dc_csv_span(c, r, ix[1]),
                  "'inputs': %s has %d, not %s", op, inputs, c->cells[r][ix[1]]);
    return false;
  }
  int es = strcmp(dt, "fp32") == 0 ? 4
           : strcmp(dt, "bf16") == 0 || strcmp(dt, "fp16") == 0 ? 2 : 0;
  if (!es) {
    dc_diag_error(d, DC_DIAG_BAD_ENUM, dc_csv_span(c, r, ix[3]),
                  "'dtype': '%s' is not fp32, bf16 or fp16", dt);
    return false;
  }
  dc_kernel_params_init(k, DC_KERNEL_ELEMENTWISE, a);
  if (!param(k, "elements", c->cells[r][ix[2]], c, r, ix[2], d))
    return false;
  k->u.ew.flops_per_elem = inputs;
  k->u.ew.bytes_per_elem = (inputs + 1.0) * es;
  return true;
}

/* One copy row: d2d a device copy; *use false for host copies. */
static bool copy_row(const dc_csv *c, int32_t r, const int32_t *ix,
                     dc_kernel *k, bool *use, dc_arena *a, dc_diags *d) {
  const char *kind = c->cells[r][ix[0]];
  dc_kernel_params_init(k, DC_KERNEL_MEMCPY_D2D, a);
  if (!param(k, "direction", kind, c, r, ix[0], d) ||
      !param(k, "bytes", c->cells[r][ix[2]], c, r, ix[2], d))
    return false;
  *use = k->kind == DC_KERNEL_MEMCPY_D2D;
  return true;
}

/* One embedding row: fwd the stock forward lookup; *use false for the
 * several-kernel train and fused_bwd rows. */
static bool emb_row(const dc_csv *c, int32_t r, const int32_t *ix,
                    dc_kernel *k, bool *use, dc_arena *a, dc_diags *d) {
  static const char *const ops[] = {"fwd", "train", "fused_bwd"};
  static const char *const keys[] = {"rows", "dim", "pooling", "batch",
                                     "dtype"};
  const char *op = c->cells[r][ix[0]];
  *use = strcmp(op, "fwd") == 0;
  if (!*use && strcmp(op, "train") != 0 && strcmp(op, "fused_bwd") != 0) {
    dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_ENUM, dc_csv_span(c, r, ix[0]),
                               "'op': '%s' is not fwd, train or fused_bwd",
                               op);
    const char *s = dc_suggest(op, ops, 3);
    if (s) dc_diag_set_help(g, "did you mean '%s'?", s);
    return false;
  }
  dc_kernel_params_init(k, DC_KERNEL_EMBEDDING_FWD, a);
  k->u.emb.stock = true;
  for (int i = 0; i < 5; i++)
    if (!param(k, keys[i], c->cells[r][ix[i + 1]], c, r, ix[i + 1], d))
      return false;
  return true;
}

bool dc_micro_load_csv(const char *path, dc_fit_sample **s, int32_t *n,
                       int32_t *skipped, dc_arena *a, dc_diags *d) {
  dc_csv c;
  if (!dc_csv_read(path, &c, a, d)) return false;
  static const char *const ew_cols[] = {"op", "inputs", "elements", "dtype"};
  static const char *const copy_cols[] = {"kind", "host", "bytes"};
  static const char *const emb_cols[] = {"op",    "rows",  "dim", "pooling",
                                         "batch", "dtype"};
  static const char *const time_cols[] = {"kernel_us", "kernels"};
  micro_kind mk;
  int32_t ix[6], tx[2];
  bool ok;
  if (dc_csv_col(&c, "inputs") >= 0 || dc_csv_col(&c, "elements") >= 0) {
    mk = MICRO_EW;
    ok = need(&c, ew_cols, 4, ix, "element-wise", d);
  } else if (dc_csv_col(&c, "kind") >= 0 && dc_csv_col(&c, "host") >= 0) {
    mk = MICRO_COPY;
    ok = need(&c, copy_cols, 3, ix, "copy", d);
  } else if (dc_csv_col(&c, "op") >= 0 && dc_csv_col(&c, "pooling") >= 0) {
    mk = MICRO_EMB;
    ok = need(&c, emb_cols, 6, ix, "embedding", d);
  } else {
    dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_CSV, header_span(&c),
                               "not a micro.py table: no element-wise (op, "
                               "inputs, elements), copy (kind, host, bytes) "
                               "or embedding (op, rows, dim, pooling, batch) "
                               "columns");
    dc_diag_set_help(g, "--micro reads elementwise.csv, copy.csv, "
                        "embedding.csv and embedding_rows.csv "
                        "(spec/calibrate.md)");
    return false;
  }
  if (!ok || !need(&c, time_cols, 2, tx, "", d)) return false;
  int32_t names = dc_csv_col(&c, "names");
  *s = dc_xrealloc(*s, ((size_t)*n + (size_t)c.n_rows + 1) * sizeof **s);
  for (int32_t r = 0; r < c.n_rows; r++) {
    dc_kernel k;
    bool use = true;
    ok = mk == MICRO_EW     ? ew_row(&c, r, ix, &k, a, d)
         : mk == MICRO_COPY ? copy_row(&c, r, ix, &k, &use, a, d)
                            : emb_row(&c, r, ix, &k, &use, a, d);
    double us, kernels;
    if (!ok || !num(&c, r, tx[0], 0, &us, d) ||
        !num(&c, r, tx[1], 1, &kernels, d))
      return false;
    if (!(us > 0)) {
      dc_diag_error(d, DC_DIAG_BAD_CSV, dc_csv_span(&c, r, tx[0]),
                    "'kernel_us' must be a positive number");
      return false;
    }
    /* the annotation span counted as an event: one kernel fewer, and a
     * lone kernel half the time */
    bool span = false;
    if (names >= 0)
      for (const char *p = c.cells[r][names]; p; p = strchr(p, '|')) {
        if (*p == '|') p++;
        if (strncmp(p, "rep#", 4) == 0) span = true;
      }
    if (span) kernels -= 1, us /= 2;
    if (!dc_kernel_params_check(&k, dc_csv_span(&c, r, 0), d)) return false;
    if (!use || kernels != 1) {
      (*skipped)++;
      continue;
    }
    (*s)[(*n)++] = (dc_fit_sample){k, us, "micro"};
  }
  return true;
}

bool dc_micro_load_dir(const char *dir, dc_fit_sample **s, int32_t *n,
                       int32_t *files, int32_t *skipped, dc_arena *a,
                       dc_diags *d) {
  static const char *const names[] = {"elementwise.csv", "copy.csv",
                                      "embedding.csv", "embedding_rows.csv"};
  for (int i = 0; i < 4; i++) {
    const char *p = dc_arena_printf(a, "%s/%s", dir, names[i]);
    struct stat st;
    if (stat(p, &st) != 0) continue;
    if (!dc_micro_load_csv(p, s, n, skipped, a, d)) return false;
    (*files)++;
  }
  return true;
}
