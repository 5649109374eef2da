/*
 * mlp.c — inference for the paper's MLP regressor (§III-B2): features are
 * natural logs of a kernel's sizes and 0/1 flags, standardised with the
 * training set's mean and std; layers [Linear, ReLU] × hidden + Linear(h,1)
 * predict the standardised ln µs. Inference allocates nothing (two stack
 * rows of DC_MLP_MAX_WIDTH doubles) and only reads the model, so one model
 * serves every thread.
 *
 * The model YAML (written by `dlrmc fit`, embedded from spec/kernels/):
 *   kind: gemm
 *   features: [ln_batch, ln_m, ln_n, ln_k, transa, transb, half]
 *   feature_mean: [...]   feature_std: [...]
 *   feature_min: [...]    feature_max: [...]  # the training rows' range
 *   target: {mean: ..., std: ...}         # of ln µs
 *   dtypes: [fp32, fp16]                  # dtypes it was trained on
 *   layers:
 *     - {in: 7, out: 64, w: [...out×in, row-major...], b: [...]}
 *   fit: {...}                            # how it was fitted (informative)
 *
 * The domain (feature_min, feature_max; optional, written by `dlrmc fit`)
 * is where the model may be used: a kernel with any feature outside the
 * range of the rows it was trained on is priced by the analytic model
 * instead (price.c). A box, not a hull: the simplest guard that keeps a
 * network trained on DeepBench's single GEMMs from pricing a batched one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

static const char *const feature_names[DC_MLPF_COUNT_] = {
    "ln_batch", "ln_m", "ln_n", "ln_k", "transa", "transb", "half", "tf32",
    "diag"};

const char *dc_mlp_feature_name(dc_mlp_feature f) {
  return (unsigned)f < DC_MLPF_COUNT_ ? feature_names[f] : "?";
}

static bool feature_is_ln(int32_t f) { return f <= DC_MLPF_LN_K; }

static double size_of(int64_t v) { return v > 0 ? (double)v : 1.0; }

/* The value behind feature f of kernel k: the size (at least 1) for an
 * ln_ feature, the 0/1 flag for the others. */
static double feature_raw(int32_t f, const dc_kernel *k) {
  bool gemm = k->kind == DC_KERNEL_GEMM;
  dc_dtype t = gemm ? k->u.gemm.dtype : k->u.mat.dtype;
  switch ((dc_mlp_feature)f) {
  case DC_MLPF_LN_BATCH:
    return size_of(gemm ? k->u.gemm.batch : k->u.mat.batch);
  case DC_MLPF_LN_M: return size_of(gemm ? k->u.gemm.m : k->u.mat.m);
  case DC_MLPF_LN_N: return size_of(gemm ? k->u.gemm.n : k->u.mat.n);
  case DC_MLPF_LN_K: return gemm ? size_of(k->u.gemm.k) : 1;
  case DC_MLPF_TRANSA: return gemm && k->u.gemm.transa;
  case DC_MLPF_TRANSB: return gemm && k->u.gemm.transb;
  case DC_MLPF_HALF: return t == DC_DTYPE_FP16 || t == DC_DTYPE_BF16;
  case DC_MLPF_TF32: return t == DC_DTYPE_TF32;
  case DC_MLPF_DIAG: return !gemm && k->u.mat.diag;
  default: return 0;
  }
}

void dc_mlp_features(const dc_mlp *m, const dc_kernel *k, double *x) {
  for (int32_t i = 0; i < m->n_features; i++) {
    double v = feature_raw(m->features[i], k);
    x[i] = feature_is_ln(m->features[i]) ? log(v) : v;
  }
}

/* raw_min/raw_max from feat_min/feat_max: sizes are exp of the logs,
 * widened by 1e-9 so that rounding keeps the training rows inside. */
static void domain_raw(dc_mlp *m) {
  for (int32_t i = 0; i < m->n_features; i++) {
    bool ln = feature_is_ln(m->features[i]);
    m->raw_min[i] = ln ? exp(m->feat_min[i]) * (1 - 1e-9) : m->feat_min[i];
    m->raw_max[i] = ln ? exp(m->feat_max[i]) * (1 + 1e-9) : m->feat_max[i];
  }
  m->has_domain = true;
}

void dc_mlp_set_domain(dc_mlp *m, const double *x, int32_t n) {
  for (int32_t i = 0; i < m->n_features; i++) {
    double lo = INFINITY, hi = -INFINITY;
    for (int32_t r = 0; r < n; r++) {
      double v = x[(size_t)r * (size_t)m->n_features + (size_t)i];
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    m->feat_min[i] = lo, m->feat_max[i] = hi;
  }
  domain_raw(m);
}

/* Distance between feature rows a and b: INFINITY when a flag other than
 * the transposes differs (the model is evaluated untransposed), else the
 * Euclidean distance over the ln-size features. */
static double row_distance(const dc_mlp *m, const double *a, const double *b) {
  double s = 0;
  for (int32_t i = 0; i < m->n_features; i++) {
    int32_t f = m->features[i];
    if (feature_is_ln(f)) {
      double d = a[i] - b[i];
      s += d * d;
    } else if (f != DC_MLPF_TRANSA && f != DC_MLPF_TRANSB && a[i] != b[i]) {
      return INFINITY;
    }
  }
  return sqrt(s);
}

/* The nearest of `n` rows sorted by column `key` to x, scanning only the
 * rows whose key lies within `within` of x's (a row farther along one
 * feature is farther in all); stops at the first row within `enough`. */
static double nearest_sorted(const dc_mlp *m, const double *x,
                             const double *rows, int32_t n, int32_t key,
                             double within, double enough) {
  size_t nf = (size_t)m->n_features;
  double lo = x[key] - within, best = INFINITY;
  int32_t a = 0, b = n; /* first row with key >= lo */
  while (a < b) {
    int32_t mid = a + (b - a) / 2;
    if (rows[(size_t)mid * nf + (size_t)key] < lo)
      a = mid + 1;
    else
      b = mid;
  }
  for (int32_t r = a; r < n; r++) {
    const double *row = rows + (size_t)r * nf;
    if (row[key] > x[key] + within) break;
    double d = row_distance(m, x, row);
    if (d < best) {
      best = d;
      if (best <= enough) break;
      if (best < within) within = best;
    }
  }
  return best;
}

static double nearest(const dc_mlp *m, const double *x, const double *rows,
                      int32_t n) {
  double best = INFINITY;
  for (int32_t r = 0; r < n; r++) {
    double d = row_distance(m, x, rows + (size_t)r * (size_t)m->n_features);
    if (d < best) best = d;
  }
  return best;
}

double dc_mlp_gate_distance(const dc_mlp *m, const dc_kernel *k) {
  if (m->n_support <= 0) return 0;
  double x[DC_MLP_MAX_FEATURES];
  dc_mlp_features(m, k, x);
  return nearest_sorted(m, x, m->support, m->n_support, m->gate_key,
                        INFINITY, 0);
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return a < b ? -1 : a > b;
}

typedef struct keyed {
  double key;
  int32_t row;
} keyed;

static int cmp_keyed(const void *pa, const void *pb) {
  const keyed *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return a->row - b->row;
}

/* Picks the ln feature of widest spread as the key and sorts the rows of
 * s (n × n_features, in place) by it. */
static void sort_support(dc_mlp *m, double *s, int32_t n) {
  size_t nf = (size_t)m->n_features;
  double spread = -1;
  m->gate_key = 0;
  for (int32_t i = 0; i < m->n_features; i++) {
    if (!feature_is_ln(m->features[i])) continue;
    double lo = INFINITY, hi = -INFINITY;
    for (int32_t r = 0; r < n; r++) {
      double v = s[(size_t)r * nf + (size_t)i];
      lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
    if (hi - lo > spread) spread = hi - lo, m->gate_key = i;
  }
  keyed *kv = malloc(((size_t)n + 1) * sizeof *kv);
  double *copy = malloc(((size_t)n * nf + 1) * sizeof *copy);
  if (!kv || !copy) abort();
  for (int32_t r = 0; r < n; r++)
    kv[r] = (keyed){s[(size_t)r * nf + (size_t)m->gate_key], r};
  qsort(kv, (size_t)n, sizeof *kv, cmp_keyed);
  memcpy(copy, s, (size_t)n * nf * sizeof *s);
  for (int32_t r = 0; r < n; r++)
    memcpy(s + (size_t)r * nf, copy + (size_t)kv[r].row * nf,
           nf * sizeof *s);
  free(kv);
  free(copy);
}

void dc_mlp_set_gate(dc_mlp *m, const double *x, int32_t n, const double *xt,
                     int32_t nt, dc_arena *a) {
  size_t nf = (size_t)m->n_features;
  double *s = dc_arena_array(a, (size_t)n * nf + 1, sizeof *s);
  memcpy(s, x, (size_t)n * nf * sizeof *s);
  sort_support(m, s, n);
  m->support = s;
  m->n_support = n;
  double *d = dc_arena_array(a, (size_t)nt + 1, sizeof *d);
  int32_t k = 0;
  for (int32_t i = 0; i < nt; i++) {
    double v = nearest(m, xt + (size_t)i * nf, s, n);
    if (isfinite(v)) d[k++] = v;
  }
  qsort(d, (size_t)k, sizeof *d, cmp_double);
  /* the 95th percentile (the largest below it, rounded up) */
  m->gate_radius = k ? d[(size_t)ceil(0.95 * k) - 1] : 0;
}

bool dc_mlp_covers(const dc_mlp *m, const dc_kernel *k) {
  if (m->n_support > 0) {
    double x[DC_MLP_MAX_FEATURES];
    dc_mlp_features(m, k, x);
    return nearest_sorted(m, x, m->support, m->n_support, m->gate_key,
                          m->gate_radius, m->gate_radius) <= m->gate_radius;
  }
  if (!m->has_domain) return true;
  for (int32_t i = 0; i < m->n_features; i++) {
    double v = feature_raw(m->features[i], k);
    if (v < m->raw_min[i] || v > m->raw_max[i]) return false;
  }
  return true;
}

double dc_mlp_predict_raw(const dc_mlp *m, const double *x) {
  double a[DC_MLP_MAX_WIDTH], b[DC_MLP_MAX_WIDTH];
  double *in = a, *out = b;
  for (int32_t i = 0; i < m->n_features; i++)
    in[i] = (x[i] - m->feat_mean[i]) / m->feat_std[i];
  for (int32_t l = 0; l < m->n_layers; l++) {
    int32_t ni = m->width[l], no = m->width[l + 1];
    const double *w = m->w[l];
    bool relu = l + 1 < m->n_layers;
    if (m->wt[l]) {
      /* out += in[i] · row i of wᵀ: vectorises over outputs without
       * reassociating sums, and skips the inputs ReLU zeroed */
      const double *wt = m->wt[l];
      for (int32_t o = 0; o < no; o++) out[o] = m->b[l][o];
      for (int32_t i = 0; i < ni; i++) {
        double v = in[i];
        if (v == 0) continue;
        const double *row = wt + (size_t)i * (size_t)no;
        for (int32_t o = 0; o < no; o++) out[o] += v * row[o];
      }
      if (relu)
        for (int32_t o = 0; o < no; o++) out[o] = out[o] < 0 ? 0 : out[o];
      double *t = in;
      in = out;
      out = t;
      continue;
    }
    for (int32_t o = 0; o < no; o++) {
      const double *row = w + (size_t)o * (size_t)ni;
      double acc = m->b[l][o];
      for (int32_t i = 0; i < ni; i++) acc += row[i] * in[i];
      out[o] = relu && acc < 0 ? 0 : acc;
    }
    double *t = in;
    in = out;
    out = t;
  }
  return exp(in[0] * m->y_std + m->y_mean);
}

double dc_mlp_predict_us(const dc_mlp *m, const dc_kernel *k) {
  double x[DC_MLP_MAX_FEATURES];
  dc_mlp_features(m, k, x);
  return dc_mlp_predict_raw(m, x);
}

void dc_mlp_prepare(dc_mlp *m, dc_arena *a) {
  for (int32_t l = 0; l < m->n_layers; l++) {
    size_t ni = (size_t)m->width[l], no = (size_t)m->width[l + 1];
    double *t = dc_arena_array(a, ni * no, sizeof *t);
    for (size_t o = 0; o < no; o++)
      for (size_t i = 0; i < ni; i++) t[i * no + o] = m->w[l][o * ni + i];
    m->wt[l] = t;
  }
}

/* ---- YAML ---------------------------------------------------------------- */

/* %.9g for weights (ample for a fitted number), %.17g for what is compared
 * exactly (the domain). */
static void put_list_as(dc_buf *o, const double *v, int32_t n, bool exact) {
  dc_buf_putc(o, '[');
  for (int32_t i = 0; i < n; i++)
    dc_buf_printf(o, exact ? "%s%.17g" : "%s%.9g", i ? ", " : "", v[i]);
  dc_buf_putc(o, ']');
}

static void put_list(dc_buf *o, const double *v, int32_t n) {
  put_list_as(o, v, n, false);
}

void dc_mlp_write_yaml(const dc_mlp *m, const char *header_comment,
                       dc_buf *o) {
  if (header_comment) dc_buf_puts(o, header_comment);
  dc_buf_printf(o, "kind: %s\nfeatures: [", dc_kernel_kind_name(m->kind));
  for (int32_t i = 0; i < m->n_features; i++)
    dc_buf_printf(o, "%s%s", i ? ", " : "",
                  dc_mlp_feature_name((dc_mlp_feature)m->features[i]));
  dc_buf_puts(o, "]\nfeature_mean: ");
  put_list(o, m->feat_mean, m->n_features);
  dc_buf_puts(o, "\nfeature_std: ");
  put_list(o, m->feat_std, m->n_features);
  if (m->has_domain) { /* exact: the bounds are compared, not fitted */
    dc_buf_puts(o, "\nfeature_min: ");
    put_list_as(o, m->feat_min, m->n_features, true);
    dc_buf_puts(o, "\nfeature_max: ");
    put_list_as(o, m->feat_max, m->n_features, true);
  }
  if (m->n_support > 0) { /* exact, like the domain: compared, not fitted */
    dc_buf_printf(o, "\ngate_radius: %.17g\nsupport: ", m->gate_radius);
    put_list(o, m->support, m->n_support * m->n_features);
  }
  dc_buf_printf(o, "\ntarget: {mean: %.9g, std: %.9g}\ndtypes: [", m->y_mean,
                m->y_std);
  bool first = true;
  for (int t = DC_DTYPE_FP32; t <= DC_DTYPE_BF16; t++)
    if (m->dtypes & (1u << t)) {
      dc_buf_printf(o, "%s%s", first ? "" : ", ", dc_dtype_name((dc_dtype)t));
      first = false;
    }
  dc_buf_puts(o, "]\nlayers:\n");
  for (int32_t l = 0; l < m->n_layers; l++) {
    dc_buf_printf(o, "  - in: %d\n    out: %d\n    w: ", (int)m->width[l],
                  (int)m->width[l + 1]);
    put_list(o, m->w[l], m->width[l] * m->width[l + 1]);
    dc_buf_puts(o, "\n    b: ");
    put_list(o, m->b[l], m->width[l + 1]);
    dc_buf_putc(o, '\n');
  }
}

/* spec/numbers.md: every number of a fitted model (log-space statistics,
 * weights, biases) is within ±1e6; a fitted model's are of order 1. */
#define DC_MLP_MAX_ABS 1e6

static bool bad(dc_diags *d, const dc_node *n, const dc_node *root,
                const char *what) {
  dc_diag_error(d, DC_DIAG_BAD_MODEL, n ? n->span : root->span,
                "fitted model: %s", what);
  return false;
}

/* Reads a sequence of numbers of exactly `want` items (want < 0: any). */
static double *read_list(const dc_node *n, int32_t want, int32_t *got,
                         dc_arena *a, dc_diags *d, const dc_node *root,
                         const char *what) {
  if (!n || n->kind != DC_NODE_SEQ || n->n == 0 || n->n > (1u << 24) ||
      (want >= 0 && n->n != (size_t)want)) {
    bad(d, n, root, what);
    return NULL;
  }
  double *v = dc_arena_array(a, n->n, sizeof *v);
  for (size_t i = 0; i < n->n; i++) {
    const char *why;
    const dc_node *it = n->items[i];
    if (it->kind != DC_NODE_SCALAR || !dc_parse_double(it->text, &v[i], &why)) {
      bad(d, it, root, "not a number");
      return NULL;
    }
    if (!(fabs(v[i]) <= DC_MLP_MAX_ABS)) {
      bad(d, it, root, "a fitted number must be within -1e6 and 1e6");
      return NULL;
    }
  }
  if (got) *got = (int32_t)n->n;
  return v;
}

bool dc_mlp_from_node(const dc_node *root, dc_mlp *m, dc_arena *a,
                      dc_diags *d) {
  memset(m, 0, sizeof *m);
  if (!root || root->kind != DC_NODE_MAP)
    return bad(d, root, root, "the document must be a mapping");
  const dc_node *kind = dc_node_get(root, "kind");
  if (!kind || kind->kind != DC_NODE_SCALAR ||
      !dc_kernel_kind_parse(kind->text, &m->kind))
    return bad(d, kind, root, "'kind' must name a kernel kind");
  const dc_node *f = dc_node_get(root, "features");
  if (!f || f->kind != DC_NODE_SEQ || f->n == 0 || f->n > DC_MLP_MAX_FEATURES)
    return bad(d, f, root, "'features' must list 1 to 9 feature names");
  m->n_features = (int32_t)f->n;
  for (size_t i = 0; i < f->n; i++) {
    int found = -1;
    for (int j = 0; j < DC_MLPF_COUNT_; j++)
      if (f->items[i]->kind == DC_NODE_SCALAR &&
          strcmp(f->items[i]->text, feature_names[j]) == 0)
        found = j;
    if (found < 0) return bad(d, f->items[i], root, "unknown feature");
    m->features[i] = found;
  }
  double *mean = read_list(dc_node_get(root, "feature_mean"), m->n_features,
                           NULL, a, d, root, "'feature_mean' length");
  double *std = read_list(dc_node_get(root, "feature_std"), m->n_features,
                          NULL, a, d, root, "'feature_std' length");
  if (!mean || !std) return false;
  for (int32_t i = 0; i < m->n_features; i++) {
    m->feat_mean[i] = mean[i];
    m->feat_std[i] = std[i] > 0 ? std[i] : 1;
  }
  const dc_node *lo = dc_node_get(root, "feature_min");
  const dc_node *hi = dc_node_get(root, "feature_max");
  if (lo || hi) {
    double *vlo = read_list(lo, m->n_features, NULL, a, d, root,
                            "'feature_min' needs 'feature_max' and one "
                            "number per feature");
    double *vhi = vlo ? read_list(hi, m->n_features, NULL, a, d, root,
                                  "'feature_max' needs 'feature_min' and "
                                  "one number per feature")
                      : NULL;
    if (!vhi) return false;
    for (int32_t i = 0; i < m->n_features; i++) {
      if (!(vlo[i] <= vhi[i]))
        return bad(d, lo->items[i], root,
                   "'feature_min' above 'feature_max'");
      m->feat_min[i] = vlo[i], m->feat_max[i] = vhi[i];
    }
    domain_raw(m);
  }
  const dc_node *sup = dc_node_get(root, "support");
  const dc_node *rad = dc_node_get(root, "gate_radius");
  if (sup || rad) {
    int32_t got = 0;
    const char *why;
    double *v = read_list(sup, -1, &got, a, d, root,
                          "'support' needs 'gate_radius' and the fitted rows, "
                          "one number per feature each");
    if (!v) return false;
    if (got % m->n_features)
      return bad(d, sup, root, "'support' must hold whole rows (a multiple "
                               "of the feature count)");
    if (!rad || rad->kind != DC_NODE_SCALAR ||
        !dc_parse_double(rad->text, &m->gate_radius, &why) ||
        !(m->gate_radius >= 0 && m->gate_radius <= 100))
      return bad(d, rad ? rad : sup, root,
                 "'gate_radius' must be a distance in ln units, 0 to 100");
    m->n_support = got / m->n_features;
    sort_support(m, v, m->n_support);
    m->support = v;
  }
  const dc_node *t = dc_node_get(root, "target");
  const dc_node *tm = dc_node_get(t, "mean"), *ts = dc_node_get(t, "std");
  const char *why;
  if (!tm || !ts || tm->kind != DC_NODE_SCALAR || ts->kind != DC_NODE_SCALAR ||
      !dc_parse_double(tm->text, &m->y_mean, &why) ||
      !dc_parse_double(ts->text, &m->y_std, &why) ||
      !(fabs(m->y_mean) <= DC_MLP_MAX_ABS) ||
      !(fabs(m->y_std) <= DC_MLP_MAX_ABS))
    return bad(d, t, root, "'target' needs numeric mean and std, within "
                           "-1e6 and 1e6");
  const dc_node *dt = dc_node_get(root, "dtypes");
  if (!dt || dt->kind != DC_NODE_SEQ)
    return bad(d, dt, root, "'dtypes' must list the trained dtypes");
  for (size_t i = 0; i < dt->n; i++) {
    bool ok = false;
    for (int j = DC_DTYPE_FP32; j <= DC_DTYPE_BF16; j++)
      if (dt->items[i]->kind == DC_NODE_SCALAR &&
          strcmp(dt->items[i]->text, dc_dtype_name((dc_dtype)j)) == 0) {
        m->dtypes |= 1u << j;
        ok = true;
      }
    if (!ok) return bad(d, dt->items[i], root, "unknown dtype");
  }
  const dc_node *ls = dc_node_get(root, "layers");
  if (!ls || ls->kind != DC_NODE_SEQ || ls->n < 1 ||
      ls->n > DC_MLP_MAX_LAYERS)
    return bad(d, ls, root, "'layers' must list 1 to 9 layers");
  m->n_layers = (int32_t)ls->n;
  m->width[0] = m->n_features;
  for (size_t l = 0; l < ls->n; l++) {
    const dc_node *L = ls->items[l];
    const dc_node *in = dc_node_get(L, "in"), *out = dc_node_get(L, "out");
    double vi = 0, vo = 0;
    if (!in || !out || in->kind != DC_NODE_SCALAR ||
        out->kind != DC_NODE_SCALAR || !dc_parse_double(in->text, &vi, &why) ||
        !dc_parse_double(out->text, &vo, &why) || vi != m->width[l] ||
        vo < 1 || vo > DC_MLP_MAX_WIDTH || vo != floor(vo) ||
        (l + 1 == ls->n && vo != 1))
      return bad(d, L, root, "layer widths do not chain (in = previous out, "
                             "last out = 1, at most 1024)");
    m->width[l + 1] = dc_f64_sat_i32(vo);
    m->w[l] = read_list(dc_node_get(L, "w"), dc_f64_sat_i32(vi * vo), NULL, a, d,
                        root, "layer 'w' must have in*out numbers");
    m->b[l] = read_list(dc_node_get(L, "b"), dc_f64_sat_i32(vo), NULL, a, d, root,
                        "layer 'b' must have out numbers");
    if (!m->w[l] || !m->b[l]) return false;
  }
  dc_mlp_prepare(m, a);
  return true;
}
