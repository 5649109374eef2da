/*
 * family.c — fitted bandwidth models of the memory-bound kernel families
 * (spec/calibrate.md): element-wise, reduce, indexed (gather / scatter),
 * concat, device copies, and the embedding lookups (FBGEMM's table-batched
 * and PyTorch's stock nn.EmbeddingBag, forward and backward).
 *
 * A family's model is its analytic model (kernels/heuristic.c: the same
 * bytes, flops and L2 terms) with two of the device's constants replaced
 * by what a GPU was measured to reach on that family:
 *
 *   fraction    the achieved fraction of the datasheet DRAM bandwidth
 *               (the analytic models use the catalog's dram factor)
 *   latency_us  the fixed cost of a small kernel of the family (the
 *               analytic models use the catalog's kernel_us)
 *
 *   row_ns      lookups only: the time per looked-up row (B·T·L rows)
 *               when the kernel is bound by issuing its irregular row
 *               accesses, not by their bytes (Little's law: rows in
 *               flight / DRAM latency). PyTorch's sparse backward takes
 *               the same time per row at D = 64 and 128 on an H200
 *               (its gather writes each row; tests/validation/h200/steps)
 *   bag_ns      lookups only: the time per pooled bag (B·T), the same
 *               issue bound for the work done once per bag (offsets,
 *               the pooled row): PyTorch's forward at L = 1 takes 1.4 ns
 *               more per bag from B = 2048 to 8192 on an H200, a fraction
 *               of what its bytes would take
 *
 *   t = latency_us + max(bytes / (fraction · datasheet DRAM), compute,
 *                        rows · row_ns + bags · bag_ns)
 *
 * A lookup backward without a fused optimizer writes fresh gradient rows:
 * no table row is read, so no L2 hit on the table can save its bytes,
 * and it is priced plain (DRAM only) whatever the kernel's model says.
 *
 * Physics bounds the fit: 0 < fraction ≤ 1 (no family beats the datasheet
 * bandwidth; the file reader refuses more) and latency_us > 0, and the
 * price is raised to the kernel's physical floor (kernels/bounds.c) like
 * every fitted answer. The fit (dc_kfam_fit) minimises the absolute log
 * error over a grid of fractions, latencies (and per-row times for lookups), and
 * reports its error on k folds it did not fit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/kernels_int.h"

static const char *const fam_names[DC_KFAM_COUNT_] = {
    "elementwise",     "reduce",        "indexed",
    "concat",          "memcpy_d2d",    "embedding_fwd",
    "embedding_bwd",   "embedding_fwd_stock", "embedding_bwd_stock"};

const char *dc_kfam_name(dc_kfam_id f) {
  return (unsigned)f < DC_KFAM_COUNT_ ? fam_names[f] : "?";
}

/* Whether a lookup reads a table kept beyond HBM: the UVM model prices
 * it (kernels/uvm.c, the host link beside the HBM part), and no family
 * fitted on HBM-resident runs may. */
static bool beyond_hbm(const dc_kernel *k) {
  for (int32_t i = 0; i < k->u.emb.n_groups; i++)
    if (k->u.emb.groups[i].memory != DC_MEMORY_HBM) return true;
  return false;
}

int dc_kfam_of(const dc_kernel *k) {
  switch (k->kind) {
  case DC_KERNEL_ELEMENTWISE:
  case DC_KERNEL_REDUCE:
    if (k->u.ew.indexed) return DC_KFAM_INDEXED;
    return k->kind == DC_KERNEL_REDUCE ? DC_KFAM_REDUCE : DC_KFAM_ELEMENTWISE;
  case DC_KERNEL_CONCAT: return DC_KFAM_CONCAT;
  case DC_KERNEL_MEMCPY_D2D: return DC_KFAM_MEMCPY_D2D;
  case DC_KERNEL_EMBEDDING_FWD:
    if (beyond_hbm(k)) return -1;
    return k->u.emb.stock ? DC_KFAM_EMB_FWD_STOCK : DC_KFAM_EMB_FWD;
  case DC_KERNEL_EMBEDDING_BWD:
    if (beyond_hbm(k)) return -1;
    return k->u.emb.stock ? DC_KFAM_EMB_BWD_STOCK : DC_KFAM_EMB_BWD;
  default: return -1;
  }
}

/* B·T·L and B·T: the rows a lookup reads or writes, its bags. */
static void lookup_counts(const dc_kernel *k, double *rows, double *bags) {
  double r = 0, t = 0;
  for (int32_t i = 0; i < k->u.emb.n_groups; i++) {
    r += (double)k->u.emb.groups[i].tables * k->u.emb.groups[i].pooling;
    t += (double)k->u.emb.groups[i].tables;
  }
  *rows = r * (double)k->u.emb.batch;
  *bags = t * (double)k->u.emb.batch;
}

/* The family's analytic model on a device whose DRAM factor is `frac`
 * and whose small-kernel latency is `lat`, plus the row-issue bound of
 * lookups. Copies: read + write. Never under the device's own launch
 * floor (kernels/bounds.c), in the fit as in the price: a fitted latency
 * below it (a 1 KiB device copy measured 0.77 µs on the H200, under its
 * 1.0 µs) would otherwise price below the physical floor. */
static double fam_us_raw(const dc_kernel *k, const dc_device *dev, double frac,
                         double lat, double row_ns, double bag_ns);

static double fam_us(const dc_kernel *k, const dc_device *dev, double frac,
                     double lat, double row_ns, double bag_ns) {
  double t = fam_us_raw(k, dev, frac, lat, row_ns, bag_ns);
  return t > dev->kernel_floor_us ? t : dev->kernel_floor_us;
}

static double fam_us_raw(const dc_kernel *k, const dc_device *dev, double frac,
                         double lat, double row_ns, double bag_ns) {
  dc_device d = *dev;
  d.dram_eff = frac;
  d.kernel_floor_us = lat;
  switch (k->kind) {
  case DC_KERNEL_ELEMENTWISE:
  case DC_KERNEL_REDUCE: return km_elementwise_us(k, &d);
  case DC_KERNEL_CONCAT:
  case DC_KERNEL_MEMCPY_D2D: {
    double gbps = km_dram_gbps(&d);
    return lat + (gbps > 0 ? 2.0 * (double)k->u.copy.bytes / (gbps * 1e3) : 0);
  }
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD: {
    dc_kernel plain = *k;
    if (k->kind == DC_KERNEL_EMBEDDING_BWD && !k->u.emb.fused_optimizer)
      plain.u.emb.model = DC_EMBMODEL_PLAIN;
    double t = dc_kernel_embedding_us(&plain, &d);
    double rows, bags;
    lookup_counts(k, &rows, &bags);
    double issue = lat + (rows * row_ns + bags * bag_ns) * 1e-3;
    return t > issue ? t : issue;
  }
  default: return lat;
  }
}

double dc_kfam_us(const dc_kernel *k, const dc_device *dev, const dc_kfam *f) {
  return fam_us(k, dev, f->fraction, f->latency_us, f->row_ns, f->bag_ns);
}

/* ---- the file ----------------------------------------------------------
 *   kind: families
 *   gpu: H200-SXM-141GB            (informative)
 *   source: "..."                  (where the rows came from)
 *   families:
 *     elementwise: {fraction: 0.93, latency_us: 1.1, rows: 187,
 *                   heldout_gmae: 0.12}
 * Unknown family names are errors (with the known ones as a hint). */

static bool bad(dc_diags *d, const dc_node *n, const dc_node *root,
                const char *what) {
  dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_MODEL, n ? n->span : root->span,
                             "family models: %s", what);
  dc_diag_set_help(g, "see spec/calibrate.md for the file's format");
  return false;
}

static bool num(const dc_node *m, const char *key, double lo, double hi,
                bool need, double *out, dc_diags *d, const dc_node *root,
                const char *what) {
  const dc_node *n = dc_node_get(m, key);
  if (!n) {
    if (need) return bad(d, m, root, what);
    return true;
  }
  const char *why;
  if (n->kind != DC_NODE_SCALAR || !dc_parse_double(n->text, out, &why) ||
      !(*out >= lo && *out <= hi))
    return bad(d, n, root, what);
  return true;
}

bool dc_kfams_from_node(const dc_node *root, dc_kfams *out, dc_diags *d) {
  memset(out, 0, sizeof *out);
  if (!root || root->kind != DC_NODE_MAP)
    return bad(d, root, root, "the document must be a mapping");
  const dc_node *kind = dc_node_get(root, "kind");
  if (!kind || kind->kind != DC_NODE_SCALAR || strcmp(kind->text, "families"))
    return bad(d, kind, root, "'kind' must be 'families'");
  const dc_node *src = dc_node_get(root, "source");
  if (src && src->kind == DC_NODE_SCALAR) out->source = src->text;
  const dc_node *fs = dc_node_get(root, "families");
  if (!fs || fs->kind != DC_NODE_MAP)
    return bad(d, fs, root, "'families' must map family names to models");
  for (size_t i = 0; i < fs->n; i++) {
    const dc_node *key = fs->keys[i], *v = fs->items[i];
    int f = -1;
    for (int j = 0; j < DC_KFAM_COUNT_; j++)
      if (key->kind == DC_NODE_SCALAR && strcmp(key->text, fam_names[j]) == 0)
        f = j;
    if (f < 0)
      return bad(d, key, root,
                 "unknown family (elementwise, reduce, indexed, concat, "
                 "memcpy_d2d, embedding_fwd, embedding_bwd, "
                 "embedding_fwd_stock, embedding_bwd_stock)");
    if (v->kind != DC_NODE_MAP)
      return bad(d, v, root, "a family needs {fraction, latency_us}");
    static const char *const keys[] = {"fraction", "latency_us", "row_ns",
                                       "bag_ns", "rows", "heldout_gmae"};
    for (size_t k = 0; k < v->n; k++) {
      bool known = false;
      for (size_t j = 0; j < DC_COUNTOF(keys); j++)
        known |= v->keys[k]->kind == DC_NODE_SCALAR &&
                 strcmp(v->keys[k]->text, keys[j]) == 0;
      if (!known)
        return bad(d, v->keys[k], root,
                   "unknown key of a family (fraction, latency_us, row_ns, "
                   "bag_ns, rows, heldout_gmae)");
    }
    dc_kfam *m = &out->f[f];
    double rows = 0;
    if (!num(v, "fraction", 1e-4, 1.0, true, &m->fraction, d, root,
             "'fraction' must be a number in (0, 1]: no kernel beats the "
             "datasheet bandwidth") ||
        !num(v, "latency_us", 1e-3, 1e4, true, &m->latency_us, d, root,
             "'latency_us' must be a number of µs in [0.001, 10000]: "
             "every kernel costs a launch") ||
        !num(v, "row_ns", 0, 1e6, false, &m->row_ns, d, root,
             "'row_ns' must be a number of ns in [0, 1e6]") ||
        !num(v, "bag_ns", 0, 1e6, false, &m->bag_ns, d, root,
             "'bag_ns' must be a number of ns in [0, 1e6]") ||
        !num(v, "rows", 0, 1e9, false, &rows, d, root,
             "'rows' must be a count") ||
        !num(v, "heldout_gmae", 0, 1e6, false, &m->heldout_gmae, d, root,
             "'heldout_gmae' must be a non-negative number"))
      return false;
    m->rows = (int32_t)rows;
    m->set = true;
  }
  return true;
}

void dc_kfams_write_yaml(const dc_kfams *f, const char *gpu,
                         const char *header, dc_buf *o) {
  if (header) dc_buf_puts(o, header);
  dc_buf_printf(o, "kind: families\ngpu: %s\n", gpu ? gpu : "unknown");
  if (f->source) {
    dc_buf_puts(o, "source: \"");
    for (const char *s = f->source; *s; s++)
      if (*s != '"' && *s != '\\' && *s != '\n') dc_buf_putc(o, *s);
    dc_buf_puts(o, "\"\n");
  }
  dc_buf_puts(o, "families:\n");
  for (int i = 0; i < DC_KFAM_COUNT_; i++) {
    const dc_kfam *m = &f->f[i];
    if (!m->set) continue;
    dc_buf_printf(o, "  %s: {fraction: %.4f, latency_us: %.3f, ", fam_names[i],
                  m->fraction, m->latency_us);
    if (m->row_ns > 0) dc_buf_printf(o, "row_ns: %.4f, ", m->row_ns);
    if (m->bag_ns > 0) dc_buf_printf(o, "bag_ns: %.4f, ", m->bag_ns);
    dc_buf_printf(o, "rows: %d, heldout_gmae: %.4f}\n", (int)m->rows,
                  m->heldout_gmae);
  }
}

/* ---- the fit ------------------------------------------------------------
 * Least Σ |ln(pred / real)| over a grid (GMAE's own measure, and robust
 * to the odd kernel far off the family's line): fractions from 1/512 to 1 in
 * quarter octaves, latencies from 0 to the geometric mean of the measured
 * times in 40 steps; then a finer
 * grid around the best pair (1/32 octave, a twentieth of the latency
 * step). Deterministic: no random start. */

#define FIT_COARSE_FRAC 37 /* 2^(-9) .. 2^0 in 1/4 octaves */
#define FIT_COARSE_LAT 40
#define FIT_COARSE_ISSUE 13 /* 0, then 2^(-6) .. 2^(11/2 - 6) ns in half octaves */
#define FIT_FINE 8

typedef struct fit_p {
  double frac, lat, row, bag;
} fit_p;

static double sse(const dc_fit_sample *s, const int32_t *rows, int32_t n,
                  const dc_device *dev, fit_p p) {
  double e = 0;
  for (int32_t i = 0; i < n; i++) {
    const dc_fit_sample *x = &s[rows[i]];
    e += fabs(log(fam_us(&x->k, dev, p.frac, p.lat, p.row, p.bag) /
                  x->time_us));
  }
  return e;
}

static double issue_at(int r) {
  return r == 0 ? 0 : pow(2.0, -6.0 + (r - 1) / 2.0);
}

/* The best parameters for rows[0..n); the issue terms only for lookups:
 * the coarse grid takes fraction and latency at quarter-octave and 1/40
 * steps with the issue times at half octaves, the fine grid refines
 * around the best. */
static fit_p fit_rows(const dc_fit_sample *s, const int32_t *rows, int32_t n,
                      const dc_device *dev) {
  double lsum = 0;
  for (int32_t i = 0; i < n; i++) lsum += log(s[rows[i]].time_us);
  double lstep = exp(lsum / n) / FIT_COARSE_LAT;
  dc_kernel_kind kind = s[rows[0]].k.kind;
  bool lookup = kind == DC_KERNEL_EMBEDDING_FWD ||
                kind == DC_KERNEL_EMBEDDING_BWD;
  int ni = lookup ? FIT_COARSE_ISSUE : 1;
  double best = INFINITY;
  fit_p b = {1, 0, 0, 0};
  for (int r = 0; r < ni; r++)
    for (int q = 0; q < ni; q++)
      for (int i = 0; i < FIT_COARSE_FRAC; i += lookup ? 2 : 1)
        for (int j = 0; j < FIT_COARSE_LAT; j += lookup ? 2 : 1) {
          fit_p p = {pow(2.0, -9.0 + i / 4.0), (j + 1) * lstep,
                     issue_at(r), issue_at(q)};
          double e = sse(s, rows, n, dev, p);
          if (e < best) best = e, b = p;
        }
  /* fine: each parameter in turn, then all of them once more */
  for (int pass = 0; pass < 2; pass++) {
    fit_p c = b;
    double lf = log2(c.frac);
    for (int i = -FIT_FINE; i <= FIT_FINE; i++)
      for (int j = -20; j <= 20; j++) {
        fit_p p = c;
        p.frac = pow(2.0, lf + i / 32.0);
        p.lat = c.lat + j * lstep / 10;
        if (p.frac > 1 || p.lat < 1e-3) continue;
        double e = sse(s, rows, n, dev, p);
        if (e < best) best = e, b = p;
      }
    if (!lookup) break;
    c = b;
    for (int r = -8; r <= 8; r++)
      for (int q = -8; q <= 8; q++) {
        fit_p p = c;
        p.row = c.row > 0 ? c.row * pow(2.0, r / 16.0) : 0;
        p.bag = c.bag > 0 ? c.bag * pow(2.0, q / 16.0) : 0;
        double e = sse(s, rows, n, dev, p);
        if (e < best) best = e, b = p;
      }
  }
  return b;
}

bool dc_kfam_fit(const dc_fit_sample *s, int32_t n, const dc_device *dev,
                 int32_t folds, dc_kfam *out) {
  memset(out, 0, sizeof *out);
  if (n < 2 || folds < 2) return false;
  int32_t *rows = malloc(((size_t)n + 1) * sizeof *rows);
  int32_t *test = malloc(((size_t)n + 1) * sizeof *test);
  double *pred = malloc(((size_t)n + 1) * sizeof *pred);
  double *real = malloc(((size_t)n + 1) * sizeof *real);
  if (!rows || !test || !pred || !real) {
    free(rows), free(test), free(pred), free(real);
    return false;
  }
  /* k-fold: row i is in fold i mod k (rows come in trace order, so each
   * fold holds every part of the step) */
  if (folds > n) folds = n;
  int32_t np = 0;
  for (int32_t f = 0; f < folds; f++) {
    int32_t nr = 0, nt = 0;
    for (int32_t i = 0; i < n; i++)
      if (i % folds == f)
        test[nt++] = i;
      else
        rows[nr++] = i;
    fit_p p = fit_rows(s, rows, nr, dev);
    for (int32_t i = 0; i < nt; i++) {
      pred[np] = fam_us(&s[test[i]].k, dev, p.frac, p.lat, p.row, p.bag);
      real[np++] = s[test[i]].time_us;
    }
  }
  double mean, sd, la = 0;
  dc_fit_errors(pred, real, np, &out->heldout_gmae, &mean, &sd);
  for (int32_t i = 0; i < np; i++) la += fabs(log(pred[i] / real[i]));
  out->heldout_mlae = la / np;
  for (int32_t i = 0; i < n; i++) rows[i] = i;
  fit_p p = fit_rows(s, rows, n, dev);
  out->fraction = p.frac;
  out->latency_us = p.lat;
  out->row_ns = p.row;
  out->bag_ns = p.bag;
  out->rows = n;
  out->set = true;
  free(rows), free(test), free(pred), free(real);
  return true;
}
