/*
 * fit.c — `dlrmc fit`: trains the paper's MLP regressor (§III-B2, Table II)
 * on benchmark CSV. Target ln(µs), features ln sizes + flags, loss MSE on
 * the standardised target. The split is 80/20 with a fixed seed; the grid
 * search picks a configuration on a validation fifth of the 80 %, refits it
 * on the whole 80 % and reports on the untouched 20 %, so the reported
 * error is honest. Everything is deterministic: a splitmix64 generator for
 * the split, the initialisation and the mini-batch order; the same CSV and
 * options give the same model bytes.
 *
 * Grids: "full" is Table II — hidden layers 3..7 × neurons {128, 256, 512,
 * 1024} × {Adam, SGD} × lr {1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2}
 * (SGD rates × 10, as the paper does): 280 trainings, hours on 2 cores.
 * "small" (default): hidden {3, 4} × neurons {32, 64} × Adam × lr {1e-3,
 * 5e-3}: 8 trainings, about a minute; its models stay small enough to embed
 * (a 64-wide, 3-layer model is ~140 KB of YAML). SGD here is mini-batch SGD
 * with momentum 0.9; Adam uses β = (0.9, 0.999), ε = 1e-8; batch 32.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/kernels_int.h"

double km_rand_uniform(uint64_t *s) {
  return (double)(dc_splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

static void shuffle(int32_t *idx, int32_t n, uint64_t *st) {
  for (int32_t i = n - 1; i > 0; i--) {
    int32_t j = (int32_t)(dc_splitmix64(st) % (uint64_t)(i + 1));
    int32_t t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
}

void dc_fit_split(int32_t n, uint64_t seed, bool *is_test) {
  int32_t *idx = dc_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
  for (int32_t i = 0; i < n; i++) idx[i] = i, is_test[i] = false;
  uint64_t st = seed;
  shuffle(idx, n, &st);
  int32_t n_test = (n + 2) / 5; /* 20 %, rounded */
  for (int32_t i = 0; i < n_test; i++) is_test[idx[i]] = true;
  free(idx);
}

void dc_fit_errors(const double *pred, const double *real, int32_t n,
                   double *gmae, double *mean, double *std) {
  double sl = 0, s = 0, ss = 0;
  for (int32_t i = 0; i < n; i++) {
    double r = pred[i] / real[i] - 1;
    double a = fabs(r) > 1e-12 ? fabs(r) : 1e-12;
    sl += log(a);
    s += r;
    ss += r * r;
  }
  double nn = n > 0 ? n : 1;
  *gmae = n > 0 ? exp(sl / nn) : 0;
  *mean = s / nn;
  double var = ss / nn - (*mean) * (*mean);
  *std = var > 0 ? sqrt(var) : 0;
}

/* ---- training -------------------------------------------------------------- */

void dc_mlp_train(dc_mlp *m, const double *x, const double *y, int32_t n,
                  int32_t hidden, int32_t width, bool adam, double lr,
                  int32_t epochs, uint64_t seed, dc_arena *a) {
  int32_t nf = m->n_features;
  DC_ASSERT(hidden >= 1 && hidden + 1 <= DC_MLP_MAX_LAYERS);
  DC_ASSERT(width >= 1 && width <= DC_MLP_MAX_WIDTH && n > 0);
  /* standardisation */
  for (int32_t f = 0; f < nf; f++) {
    double s = 0, ss = 0;
    for (int32_t i = 0; i < n; i++) s += x[i * nf + f];
    double mu = s / n;
    for (int32_t i = 0; i < n; i++) {
      double dv = x[i * nf + f] - mu;
      ss += dv * dv;
    }
    double sd = sqrt(ss / n);
    m->feat_mean[f] = mu;
    m->feat_std[f] = sd > 1e-12 ? sd : 1;
  }
  double ys = 0, yss = 0;
  for (int32_t i = 0; i < n; i++) ys += log(y[i]);
  m->y_mean = ys / n;
  for (int32_t i = 0; i < n; i++) {
    double dv = log(y[i]) - m->y_mean;
    yss += dv * dv;
  }
  m->y_std = sqrt(yss / n) > 1e-12 ? sqrt(yss / n) : 1;
  double *xn = dc_arena_array(a, (size_t)n * (size_t)nf, sizeof *xn);
  double *yn = dc_arena_array(a, (size_t)n, sizeof *yn);
  for (int32_t i = 0; i < n; i++) {
    for (int32_t f = 0; f < nf; f++)
      xn[i * nf + f] = (x[i * nf + f] - m->feat_mean[f]) / m->feat_std[f];
    yn[i] = (log(y[i]) - m->y_mean) / m->y_std;
  }
  /* layers and He-uniform initialisation */
  m->n_layers = hidden + 1;
  for (int32_t l = 0; l < DC_MLP_MAX_LAYERS; l++) m->wt[l] = NULL;
  m->width[0] = nf;
  for (int32_t l = 1; l <= hidden; l++) m->width[l] = width;
  m->width[hidden + 1] = 1;
  uint64_t st = seed;
  double *gw[DC_MLP_MAX_LAYERS], *gb[DC_MLP_MAX_LAYERS];
  double *m1w[DC_MLP_MAX_LAYERS], *m1b[DC_MLP_MAX_LAYERS];
  double *m2w[DC_MLP_MAX_LAYERS], *m2b[DC_MLP_MAX_LAYERS];
  enum { BS = 32 };
  double *act[DC_MLP_MAX_LAYERS + 1], *del[DC_MLP_MAX_LAYERS + 1];
  for (int32_t l = 0; l < m->n_layers; l++) {
    size_t ni = (size_t)m->width[l], no = (size_t)m->width[l + 1];
    m->w[l] = dc_arena_array(a, ni * no, sizeof(double));
    m->b[l] = dc_arena_array(a, no, sizeof(double));
    gw[l] = dc_arena_array(a, ni * no, sizeof(double));
    gb[l] = dc_arena_array(a, no, sizeof(double));
    m1w[l] = dc_arena_array(a, ni * no, sizeof(double));
    m1b[l] = dc_arena_array(a, no, sizeof(double));
    m2w[l] = dc_arena_array(a, ni * no, sizeof(double));
    m2b[l] = dc_arena_array(a, no, sizeof(double));
    double lim = sqrt(6.0 / (double)ni);
    for (size_t i = 0; i < ni * no; i++)
      m->w[l][i] = (2 * km_rand_uniform(&st) - 1) * lim;
  }
  for (int32_t l = 0; l <= m->n_layers; l++) {
    act[l] = dc_arena_array(a, (size_t)BS * (size_t)m->width[l],
                            sizeof(double));
    del[l] = dc_arena_array(a, (size_t)BS * (size_t)m->width[l],
                            sizeof(double));
  }
  int32_t *idx = dc_arena_array(a, (size_t)n, sizeof *idx);
  for (int32_t i = 0; i < n; i++) idx[i] = i;
  double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  int64_t step = 0;
  for (int32_t ep = 0; ep < epochs; ep++) {
    shuffle(idx, n, &st);
    for (int32_t s0 = 0; s0 < n; s0 += BS) {
      int32_t bs = n - s0 < BS ? n - s0 : BS;
      for (int32_t j = 0; j < bs; j++)
        memcpy(act[0] + j * nf, xn + (size_t)idx[s0 + j] * (size_t)nf,
               (size_t)nf * sizeof(double));
      /* forward */
      for (int32_t l = 0; l < m->n_layers; l++) {
        int32_t ni = m->width[l], no = m->width[l + 1];
        bool relu = l + 1 < m->n_layers;
        for (int32_t j = 0; j < bs; j++) {
          const double *in = act[l] + j * ni;
          double *out = act[l + 1] + j * no;
          for (int32_t o = 0; o < no; o++) {
            const double *w = m->w[l] + (size_t)o * (size_t)ni;
            double acc = m->b[l][o];
            for (int32_t i = 0; i < ni; i++) acc += w[i] * in[i];
            out[o] = relu && acc < 0 ? 0 : acc;
          }
        }
      }
      /* loss gradient: d(mean (o - y)²)/do = 2 (o - y) / bs */
      int32_t L = m->n_layers;
      for (int32_t j = 0; j < bs; j++)
        del[L][j] = 2 * (act[L][j] - yn[idx[s0 + j]]) / bs;
      /* backward */
      for (int32_t l = L - 1; l >= 0; l--) {
        int32_t ni = m->width[l], no = m->width[l + 1];
        memset(gw[l], 0, (size_t)ni * (size_t)no * sizeof(double));
        memset(gb[l], 0, (size_t)no * sizeof(double));
        for (int32_t j = 0; j < bs; j++) {
          const double *in = act[l] + j * ni, *dout = del[l + 1] + j * no;
          for (int32_t o = 0; o < no; o++) {
            double g = dout[o];
            if (g == 0) continue;
            double *w = gw[l] + (size_t)o * (size_t)ni;
            for (int32_t i = 0; i < ni; i++) w[i] += g * in[i];
            gb[l][o] += g;
          }
        }
        if (l > 0) {
          for (int32_t j = 0; j < bs; j++) {
            const double *dout = del[l + 1] + j * no;
            const double *in = act[l] + j * ni;
            double *din = del[l] + j * ni;
            for (int32_t i = 0; i < ni; i++) din[i] = 0;
            for (int32_t o = 0; o < no; o++) {
              double g = dout[o];
              if (g == 0) continue;
              const double *w = m->w[l] + (size_t)o * (size_t)ni;
              for (int32_t i = 0; i < ni; i++) din[i] += g * w[i];
            }
            for (int32_t i = 0; i < ni; i++)
              if (in[i] <= 0) din[i] = 0; /* ReLU' */
          }
        }
      }
      /* update */
      step++;
      double c1 = 1 - pow(b1, (double)step), c2 = 1 - pow(b2, (double)step);
      for (int32_t l = 0; l < L; l++) {
        size_t nw = (size_t)m->width[l] * (size_t)m->width[l + 1];
        size_t nb = (size_t)m->width[l + 1];
        for (int part = 0; part < 2; part++) {
          double *p = part ? m->b[l] : m->w[l], *g = part ? gb[l] : gw[l];
          double *v1 = part ? m1b[l] : m1w[l], *v2 = part ? m2b[l] : m2w[l];
          size_t cnt = part ? nb : nw;
          for (size_t i = 0; i < cnt; i++) {
            if (adam) {
              v1[i] = b1 * v1[i] + (1 - b1) * g[i];
              v2[i] = b2 * v2[i] + (1 - b2) * g[i] * g[i];
              p[i] -= lr * (v1[i] / c1) / (sqrt(v2[i] / c2) + eps);
            } else {
              v1[i] = 0.9 * v1[i] + g[i];
              p[i] -= lr * v1[i];
            }
          }
        }
      }
    }
  }
  dc_mlp_prepare(m, a);
}

/* ---- CSV to samples ------------------------------------------------------------ */

bool dc_fit_load_csv(dc_kernel_kind kind, const char *path,
                     dc_fit_sample **samples, int32_t *n, dc_arena *a,
                     dc_diags *d) {
  dc_csv c = {0};
  size_t before = d->errors;
  /* rows with the wrong field count are reported and skipped; the other
   * rows are still checked so that one run reports every error */
  if (!dc_csv_read(path, &c, a, d) && !c.cols) return false;
  int32_t t_col = dc_csv_col(&c, "time_us");
  if (t_col < 0) t_col = dc_csv_col(&c, "mean_us");
  dc_span head = {c.src, 1, 1, 0};
  for (size_t ln = 1; ln <= c.src->n_lines; ln++) {
    size_t len;
    const char *s = dc_source_line(c.src, (int32_t)ln, &len);
    if (len && s[0] != '#') {
      head.line = (int32_t)ln;
      head.len = (int32_t)len;
      break;
    }
  }
  if (t_col < 0) {
    dc_diag_error(d, DC_DIAG_BAD_CSV, head, "no 'time_us' column");
    return false;
  }
  static const char *const need_gemm[] = {"m", "n", "k"};
  static const char *const need_mat[] = {"m", "n"};
  const char *const *need = kind == DC_KERNEL_GEMM ? need_gemm : need_mat;
  size_t n_need = kind == DC_KERNEL_GEMM ? 3 : 2;
  for (size_t i = 0; i < n_need; i++)
    if (dc_csv_col(&c, need[i]) < 0) {
      dc_diag_error(d, DC_DIAG_BAD_CSV, head, "no '%s' column for %s data",
                    need[i], dc_kernel_kind_name(kind));
      return false;
    }
  int32_t gpu_col = dc_csv_col(&c, "gpu");
  dc_fit_sample *out = dc_arena_array(a, (size_t)(c.n_rows ? c.n_rows : 1),
                                      sizeof *out);
  int32_t cnt = 0;
  for (int32_t r = 0; r < c.n_rows; r++) {
    dc_fit_sample *s = &out[cnt];
    dc_kernel_params_init(&s->k, kind, a);
    bool ok = true;
    for (int32_t col = 0; col < c.n_cols; col++) {
      const char *key = c.cols[col];
      if (col == t_col || col == gpu_col) continue;
      bool known;
      if (!dc_kernel_param_set(&s->k, key, c.cells[r][col],
                               dc_csv_span(&c, r, col), &known, d))
        ok = false;
    }
    const char *why;
    dc_span tsp = dc_csv_span(&c, r, t_col);
    /* spec/numbers.md: a measured kernel time is in (0, 1e9] us. */
    if (!dc_parse_double(c.cells[r][t_col], &s->time_us, &why) ||
        !(s->time_us > 0) || !(s->time_us <= 1e9)) {
      dc_diag_error(d, DC_DIAG_BAD_CSV, tsp,
                    "time_us must be a positive number of microseconds up "
                    "to 1e9, got '%s'",
                    c.cells[r][t_col]);
      ok = false;
    }
    dc_span rsp = {c.src, c.row_line[r], 1, 0};
    if (ok && !dc_kernel_params_check(&s->k, rsp, d)) ok = false;
    if (!ok) continue;
    dc_dtype t = kind == DC_KERNEL_GEMM ? s->k.u.gemm.dtype : s->k.u.mat.dtype;
    s->group = dc_arena_printf(a, "%s%s%s",
                               gpu_col >= 0 ? c.cells[r][gpu_col] : "",
                               gpu_col >= 0 ? " " : "", dc_dtype_name(t));
    cnt++;
  }
  *samples = out;
  *n = cnt;
  return d->errors == before;
}

/* ---- grid search --------------------------------------------------------------- */

typedef struct fit_cfg {
  int32_t hidden, width;
  bool adam;
  double lr;
} fit_cfg;

static void features_for(dc_mlp *m, dc_kernel_kind kind,
                         const dc_fit_sample *s, int32_t n) {
  m->kind = kind;
  m->n_features = 0;
  m->dtypes = 0;
  for (int32_t i = 0; i < n; i++) {
    dc_dtype t = kind == DC_KERNEL_GEMM ? s[i].k.u.gemm.dtype
                                        : s[i].k.u.mat.dtype;
    m->dtypes |= 1u << t;
  }
  int f[DC_MLPF_COUNT_], nf = 0;
  f[nf++] = DC_MLPF_LN_BATCH;
  f[nf++] = DC_MLPF_LN_M;
  f[nf++] = DC_MLPF_LN_N;
  if (kind == DC_KERNEL_GEMM) {
    f[nf++] = DC_MLPF_LN_K;
    f[nf++] = DC_MLPF_TRANSA;
    f[nf++] = DC_MLPF_TRANSB;
  }
  if (m->dtypes & ((1u << DC_DTYPE_FP16) | (1u << DC_DTYPE_BF16)))
    f[nf++] = DC_MLPF_HALF;
  if (m->dtypes & (1u << DC_DTYPE_TF32)) f[nf++] = DC_MLPF_TF32;
  if (kind == DC_KERNEL_TRIL_FWD || kind == DC_KERNEL_TRIL_BWD)
    f[nf++] = DC_MLPF_DIAG;
  for (int i = 0; i < nf; i++) m->features[i] = f[i];
  m->n_features = nf;
}

/* Trains on rows with sel[i] == want_train, scores on the others. */
static double train_score(const dc_mlp *proto, const double *x,
                          const double *y, int32_t n, const bool *is_eval,
                          const fit_cfg *c, int32_t epochs, uint64_t seed,
                          dc_mlp *out, dc_arena *a) {
  int32_t nf = proto->n_features, nt = 0, ne = 0;
  double *xt = dc_arena_array(a, (size_t)n * (size_t)nf, sizeof *xt);
  double *yt = dc_arena_array(a, (size_t)n, sizeof *yt);
  for (int32_t i = 0; i < n; i++)
    if (!is_eval || !is_eval[i]) {
      memcpy(xt + (size_t)nt * (size_t)nf, x + (size_t)i * (size_t)nf,
             (size_t)nf * sizeof *xt);
      yt[nt++] = y[i];
    }
  *out = *proto;
  dc_mlp_train(out, xt, yt, nt, c->hidden, c->width, c->adam, c->lr, epochs,
               seed, a);
  if (!is_eval) return 0;
  double *p = dc_arena_array(a, (size_t)n, sizeof *p);
  double *r = dc_arena_array(a, (size_t)n, sizeof *r);
  for (int32_t i = 0; i < n; i++)
    if (is_eval[i]) {
      p[ne] = dc_mlp_predict_raw(out, x + (size_t)i * (size_t)nf);
      r[ne++] = y[i];
    }
  double g, mu, sd;
  dc_fit_errors(p, r, ne, &g, &mu, &sd);
  return g;
}

/* What pricing assumes of a GEMM model and the fit cannot promise
 *: the rows per operand layout (pricing evaluates the model
 * on the NN layout, kernels/price.c, so transposed rows only teach it
 * their shapes), and the model's monotonicity per dtype, where it is not
 * monotone within DC_MLP_MONO_TOL. */
static void report_gemm_shape(const dc_mlp *m, const dc_fit_sample *s,
                              int32_t n, dc_buf *rep) {
  int32_t layout[4] = {0, 0, 0, 0};
  for (int32_t i = 0; i < n; i++)
    layout[s[i].k.u.gemm.transa + 2 * s[i].k.u.gemm.transb]++;
  dc_buf_printf(rep, "layouts: NN %d, TN %d, NT %d, TT %d rows; priced as "
                "NN (transposes are not inputs of the price)\n",
                (int)layout[0], (int)layout[1], (int)layout[2],
                (int)layout[3]);
  static const char *const axis[] = {"m", "n", "k"};
  for (int t = DC_DTYPE_FP32; t <= DC_DTYPE_BF16; t++) {
    if (!(m->dtypes & (1u << t))) continue;
    dc_mlp_mono r;
    dc_mlp_check_monotone(m, (dc_dtype)t, DC_MLP_MONO_TOL, &r);
    dc_buf_printf(rep, "monotone %s: %lld of %lld steps of 2^(1/4) more "
                  "than %.0f%% faster%s; worst x%.3f at m=%lld n=%lld "
                  "k=%lld (larger %s)%s\n", dc_dtype_name((dc_dtype)t),
                  (long long)r.violations, (long long)r.pairs,
                  DC_MLP_MONO_TOL * 100,
                  r.max_step > 1.19 ? " (coarser steps on an axis wider "
                                      "than 2^24)"
                                    : "",
                  r.worst, (long long)r.m,
                  (long long)r.n, (long long)r.k,
                  r.axis >= 0 ? axis[r.axis] : "-",
                  r.violations ? " NOT MONOTONE" : "");
  }
}

bool dc_fit_gate(dc_mlp *m, const dc_fit_sample *s, int32_t n, uint64_t seed,
                 dc_arena *a) {
  if (n < 10) return false;
  int32_t nf = m->n_features;
  bool *is_test = dc_arena_array(a, (size_t)n, sizeof *is_test);
  dc_fit_split(n, seed ? seed : 20221218, is_test);
  double *tr = dc_arena_array(a, (size_t)n * (size_t)nf, sizeof *tr);
  double *te = dc_arena_array(a, (size_t)n * (size_t)nf, sizeof *te);
  int32_t ntr = 0, nte = 0;
  for (int32_t i = 0; i < n; i++) {
    double *row = is_test[i] ? te + (size_t)(nte++) * (size_t)nf
                             : tr + (size_t)(ntr++) * (size_t)nf;
    dc_mlp_features(m, &s[i].k, row);
  }
  dc_mlp_set_gate(m, tr, ntr, te, nte, a);
  return true;
}

bool dc_fit_run(const dc_fit_opts *o, const dc_fit_sample *s, int32_t n,
                dc_mlp *out, dc_buf *rep, dc_arena *a, dc_diags *d) {
  if (n < 10) {
    dc_diag_error(d, DC_DIAG_BAD_CSV, (dc_span){0},
                  "%d usable samples: at least 10 are needed to fit", (int)n);
    return false;
  }
  dc_mlp proto;
  memset(&proto, 0, sizeof proto);
  features_for(&proto, o->kind, s, n);
  int32_t nf = proto.n_features;
  double *x = dc_arena_array(a, (size_t)n * (size_t)nf, sizeof *x);
  double *y = dc_arena_array(a, (size_t)n, sizeof *y);
  for (int32_t i = 0; i < n; i++) {
    dc_mlp_features(&proto, &s[i].k, x + (size_t)i * (size_t)nf);
    y[i] = s[i].time_us;
  }
  uint64_t seed = o->seed ? o->seed : 20221218;
  bool *is_test = dc_arena_array(a, (size_t)n, sizeof *is_test);
  dc_fit_split(n, seed, is_test);
  /* training part and its validation fifth for the grid search */
  int32_t ntr = 0;
  int32_t *tr = dc_arena_array(a, (size_t)n, sizeof *tr);
  for (int32_t i = 0; i < n; i++)
    if (!is_test[i]) tr[ntr++] = i;
  double *xtr = dc_arena_array(a, (size_t)ntr * (size_t)nf, sizeof *xtr);
  double *ytr = dc_arena_array(a, (size_t)ntr, sizeof *ytr);
  for (int32_t i = 0; i < ntr; i++) {
    memcpy(xtr + (size_t)i * (size_t)nf, x + (size_t)tr[i] * (size_t)nf,
           (size_t)nf * sizeof *x);
    ytr[i] = y[tr[i]];
  }
  bool *is_val = dc_arena_array(a, (size_t)ntr, sizeof *is_val);
  dc_fit_split(ntr, seed + 1, is_val);

  bool full = o->grid && strcmp(o->grid, "full") == 0;
  static const int32_t hid_full[] = {3, 4, 5, 6, 7}, hid_small[] = {3, 4};
  static const int32_t wid_full[] = {128, 256, 512, 1024}, wid_small[] = {32, 64};
  static const double lr_full[] = {1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2};
  static const double lr_small[] = {1e-3, 5e-3};
  fit_cfg cfgs[400];
  int32_t nc = 0;
  const int32_t *H = full ? hid_full : hid_small, *W = full ? wid_full : wid_small;
  const double *LR = full ? lr_full : lr_small;
  size_t nh = full ? 5 : 2, nw = full ? 4 : 2, nl = full ? 7 : 2;
  if (o->layers > 0) H = &o->layers, nh = 1;
  if (o->neurons > 0) W = &o->neurons, nw = 1;
  for (int opt = 0; opt < (full ? 2 : 1); opt++)
    for (size_t h = 0; h < nh; h++)
      for (size_t w = 0; w < nw; w++)
        for (size_t l = 0; l < nl; l++)
          cfgs[nc++] = (fit_cfg){H[h], W[w], opt == 0,
                                 LR[l] * (opt == 0 ? 1 : 10)};
  int32_t epochs = o->epochs > 0 ? o->epochs : (full ? 2000 : 800);
  int32_t best = 0;
  double best_g = INFINITY;
  for (int32_t c = 0; c < nc; c++) {
    dc_arena scratch;
    dc_arena_init(&scratch);
    dc_mlp m;
    double g = train_score(&proto, xtr, ytr, ntr, is_val, &cfgs[c], epochs,
                           seed + 2 + (uint64_t)c, &m, &scratch);
    if (o->verbose)
      dc_buf_printf(rep, "grid %d/%d: %d x %d %s lr %g -> validation GMAE "
                    "%.4f\n", (int)(c + 1), (int)nc, (int)cfgs[c].hidden,
                    (int)cfgs[c].width, cfgs[c].adam ? "adam" : "sgd",
                    cfgs[c].lr, g);
    if (g < best_g) best_g = g, best = c;
    dc_arena_free(&scratch);
  }
  /* refit the best configuration on the whole 80 %, whose range is the
   * model's domain */
  train_score(&proto, xtr, ytr, ntr, NULL, &cfgs[best], epochs, seed + 1000,
              out, a);
  dc_mlp_set_domain(out, xtr, ntr);
  /* the gate: the fitted rows, and a radius from the held-out ones */
  int32_t nte = n - ntr;
  double *xte = dc_arena_array(a, (size_t)nte * (size_t)nf + 1, sizeof *xte);
  for (int32_t i = 0, j = 0; i < n; i++)
    if (is_test[i])
      memcpy(xte + (size_t)(j++) * (size_t)nf, x + (size_t)i * (size_t)nf,
             (size_t)nf * sizeof *x);
  dc_mlp_set_gate(out, xtr, ntr, xte, nte, a);
  /* report on the held-out 20 % */
  double *p = dc_arena_array(a, (size_t)n, sizeof *p);
  double *r = dc_arena_array(a, (size_t)n, sizeof *r);
  int32_t k = 0;
  for (int32_t i = 0; i < n; i++)
    if (is_test[i]) {
      p[k] = dc_mlp_predict_raw(out, x + (size_t)i * (size_t)nf);
      r[k++] = y[i];
    }
  double g, mu, sd;
  dc_fit_errors(p, r, k, &g, &mu, &sd);
  dc_buf_printf(rep, "fit %s: %d samples (%d train, %d held out), grid %s "
                "(%d configurations, %d epochs), seed %llu\n",
                dc_kernel_kind_name(o->kind), (int)n, (int)ntr, (int)nte,
                full ? "full" : "small", (int)nc, (int)epochs,
                (unsigned long long)seed);
  dc_buf_printf(rep, "best: %d hidden x %d neurons, %s, lr %g "
                "(validation GMAE %.4f)\n", (int)cfgs[best].hidden,
                (int)cfgs[best].width, cfgs[best].adam ? "adam" : "sgd",
                cfgs[best].lr, best_g);
  dc_buf_printf(rep, "held-out: GMAE %.4f, mean rel. error %+.4f, std %.4f\n",
                g, mu, sd);
  dc_buf_printf(rep, "gate: %d fitted rows, radius %.3f (ln units: the "
                "95th percentile of the held-out rows' distances)\n",
                (int)out->n_support, out->gate_radius);
  /* per group (gpu and dtype), in order of first appearance */
  for (int32_t i = 0; i < n; i++) {
    if (!is_test[i]) continue;
    bool seen = false;
    for (int32_t j = 0; j < i; j++)
      if (is_test[j] && strcmp(s[j].group, s[i].group) == 0) seen = true;
    if (seen) continue;
    int32_t kk = 0;
    for (int32_t j = i; j < n; j++)
      if (is_test[j] && strcmp(s[j].group, s[i].group) == 0) {
        p[kk] = dc_mlp_predict_raw(out, x + (size_t)j * (size_t)nf);
        r[kk++] = y[j];
      }
    dc_fit_errors(p, r, kk, &g, &mu, &sd);
    dc_buf_printf(rep, "  held-out %-12s n=%3d GMAE %.4f mean %+.4f std "
                  "%.4f\n", s[i].group, (int)kk, g, mu, sd);
  }
  if (o->kind == DC_KERNEL_GEMM) report_gemm_shape(out, s, n, rep);
  return true;
}
