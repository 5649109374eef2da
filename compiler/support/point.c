/*
 * point.c — widths and parameter counts derived from a dc_point, in one
 * place: graphgen builds the tensors with them, runtime's memory estimate
 * and the TorchRec estimator count with them, so the three can never
 * disagree on the top MLP's input or the cross network's size. The host
 * layout of a bare GPU count is here too, so that the sweep's points and
 * the capacity search lay GPUs out by the same rule.
 *
 * All arithmetic saturates at INT64_MAX: the front end has already bounded
 * widths and table counts, so saturation only guards hand-made points.
 */
#include <stdio.h>

#include "compiler/support/point.h"

bool dc_host_layout(int64_t gpus, int64_t host_size, int64_t *hosts,
                    int64_t *per_host) {
  if (host_size < 1) host_size = 1;
  if (gpus <= host_size || gpus % host_size != 0) {
    *hosts = 1;
    *per_host = gpus;
    return gpus <= host_size;
  }
  *hosts = gpus / host_size;
  *per_host = host_size;
  return true;
}

void dc_point_layout(const dc_point *p, char *buf, size_t cap) {
  snprintf(buf, cap, "%d host%s × %d GPU%s", (int)p->hosts,
           p->hosts == 1 ? "" : "s", (int)p->gpus_per_host,
           p->gpus_per_host == 1 ? "" : "s");
}

int64_t dc_point_x0_width(const dc_point *p) {
  int64_t w = p->n_bottom > 0 ? p->bottom_mlp[p->n_bottom - 1] : 0;
  for (int32_t t = 0; t < p->n_tables; t++)
    w = dc_sat_add_i64(w, p->tables[t].dim);
  return w;
}

/* dot: the bottom output beside the F(F−1)/2 pairwise dot products of the
 * F = T + 1 features (F(F+1)/2 with the diagonal). */
int64_t dc_point_top_in(const dc_point *p) {
  if (p->interaction != DC_INTERACTION_DOT) return dc_point_x0_width(p);
  int64_t D = p->n_bottom > 0 ? p->bottom_mlp[p->n_bottom - 1] : 0;
  int64_t F = (int64_t)p->n_tables + 1;
  int64_t pairs = dc_sat_mul_i64(F, p->interaction_self ? F + 1 : F - 1) / 2;
  return dc_sat_add_i64(D, pairs);
}

int64_t dc_point_cross_params(const dc_point *p) {
  if (p->interaction != DC_INTERACTION_DCN || p->dcn_layers < 1) return 0;
  int64_t N = dc_point_x0_width(p);
  int64_t R = p->dcn_low_rank;
  int64_t kernels = R > 0 ? dc_sat_mul_i64(2, dc_sat_mul_i64(N, R))
                          : dc_sat_mul_i64(N, N);
  int64_t per = dc_sat_add_i64(kernels, N); /* + the bias */
  return dc_sat_mul_i64(per, p->dcn_layers);
}

/* Σ in·out + out over the layers of an MLP of widths w[0..n-1]. */
static int64_t mlp_params(int64_t in, const int64_t *w, int32_t n) {
  int64_t total = 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t layer = dc_sat_add_i64(dc_sat_mul_i64(in, w[i]), w[i]);
    total = dc_sat_add_i64(total, layer);
    in = w[i];
  }
  return total;
}

int64_t dc_point_dense_params(const dc_point *p) {
  if (!p || p->n_bottom < 1) return 0;
  int64_t total =
      mlp_params(p->bottom_mlp[0], p->bottom_mlp + 1, p->n_bottom - 1);
  total = dc_sat_add_i64(total, dc_point_cross_params(p));
  int64_t top = mlp_params(dc_point_top_in(p), p->top_mlp, p->n_top);
  return dc_sat_add_i64(total, top);
}

int64_t dc_optimizer_state_bytes(dc_optimizer o, int64_t rows,
                                 int64_t elems) {
  switch (o) {
  case DC_OPTIMIZER_SGD: return 0;
  case DC_OPTIMIZER_ADAGRAD: return dc_sat_mul_i64(elems, 4);
  case DC_OPTIMIZER_ROWWISE_ADAGRAD: return dc_sat_mul_i64(rows, 4);
  case DC_OPTIMIZER_ADAM: return dc_sat_mul_i64(elems, 8);
  }
  return 0;
}
