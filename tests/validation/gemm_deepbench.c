/*
 * gemm_deepbench.c — the GEMM models against real cuBLAS timings
 * (tests/data/deepbench: V100 and T4, fp32 and fp16, 160 shapes each).
 * Reports, per GPU and dtype:
 *   - the analytic zero-shot model's GMAE on every row;
 *   - the shipped MLP's GMAE on the held-out 20 % — the same split `dlrmc
 *     fit` made (seed 20221218, fp32 rows then fp16 rows), so these rows
 *     were never trained on.
 * GMAE = exp(mean(ln|pred/real − 1|)). Prints a CSV; fails when the
 * zero-shot GMAE over all rows exceeds 25 % or a fitted GPU's held-out
 * GMAE exceeds 10 %. Fails when the data cannot be read.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

int main(void) {
  const char *root = getenv("DC_TEST_DATA");
  if (!root) root = "tests/data";
  static const char *gpus[] = {"V100", "T4"};
  static const char *dts[] = {"fp32", "fp16"};
  char path[1024];
  snprintf(path, sizeof path, "%s/deepbench/deepbench_gemm_V100_fp32.csv",
           root);
  FILE *probe = fopen(path, "r");
  if (!probe) {
    printf("FAIL: %s not found (DeepBench data lives in tests/data)\n",
           path);
    return 1;
  }
  fclose(probe);
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  int rc = 0;
  double all_log = 0;
  int all_n = 0;
  printf("gpu,dtype,model,rows,gmae,mean_rel,std_rel\n");
  for (int g = 0; g < 2; g++) {
    dc_device dev;
    if (!dc_device_lookup(gpus[g], &dev, &a, &d)) return 1;
    const dc_kmodels *km = dc_kmodels_for(&dev);
    dc_fit_sample *s[2];
    int32_t n[2];
    for (int t = 0; t < 2; t++) {
      snprintf(path, sizeof path, "%s/deepbench/deepbench_gemm_%s_%s.csv",
               root, gpus[g], dts[t]);
      if (!dc_fit_load_csv(DC_KERNEL_GEMM, path, &s[t], &n[t], &a, &d)) {
        dc_diags_render(&d, stderr, false);
        return 1;
      }
      double *p = calloc((size_t)n[t], sizeof *p);
      double *r = calloc((size_t)n[t], sizeof *r);
      for (int32_t i = 0; i < n[t]; i++) {
        p[i] = dc_kernel_gemm_analytic_us(&s[t][i].k, &dev);
        r[i] = s[t][i].time_us;
        double e = fabs(p[i] / r[i] - 1);
        all_log += log(e > 1e-12 ? e : 1e-12);
        all_n++;
      }
      double gm, mu, sd;
      dc_fit_errors(p, r, n[t], &gm, &mu, &sd);
      printf("%s,%s,analytic,%d,%.4f,%+.4f,%.4f\n", gpus[g], dts[t],
             (int)n[t], gm, mu, sd);
      free(p);
      free(r);
    }
    /* the held-out 20 % of the fit (fp32 rows, then fp16 rows) */
    int32_t nn = n[0] + n[1];
    bool *test = calloc((size_t)nn, sizeof *test);
    dc_fit_split(nn, 20221218, test);
    const dc_mlp *m = dc_kmodels_get(km, DC_KERNEL_GEMM);
    if (!m) {
      printf("%s: no fitted GEMM model\n", gpus[g]);
      rc = 1;
    }
    double *p = calloc((size_t)nn, sizeof *p);
    double *r = calloc((size_t)nn, sizeof *r);
    double worst = 0;
    for (int t = 0; t < 2 && m; t++) {
      int32_t k = 0;
      for (int32_t i = 0; i < n[t]; i++)
        if (test[(t ? n[0] : 0) + i]) {
          p[k] = dc_mlp_predict_us(m, &s[t][i].k);
          r[k++] = s[t][i].time_us;
        }
      double gm, mu, sd;
      dc_fit_errors(p, r, k, &gm, &mu, &sd);
      printf("%s,%s,mlp-heldout,%d,%.4f,%+.4f,%.4f\n", gpus[g], dts[t],
             (int)k, gm, mu, sd);
    }
    if (m) {
      int32_t k = 0;
      for (int32_t i = 0; i < nn; i++)
        if (test[i]) {
          const dc_fit_sample *x = i < n[0] ? &s[0][i] : &s[1][i - n[0]];
          p[k] = dc_mlp_predict_us(m, &x->k);
          r[k++] = x->time_us;
        }
      double gm, mu, sd;
      dc_fit_errors(p, r, k, &gm, &mu, &sd);
      printf("%s,all,mlp-heldout,%d,%.4f,%+.4f,%.4f\n", gpus[g], (int)k, gm,
             mu, sd);
      worst = gm;
      if (worst > 0.10) {
        printf("FAIL: %s held-out GMAE %.4f > 0.10\n", gpus[g], worst);
        rc = 1;
      }
    }
    free(test);
    free(p);
    free(r);
  }
  double all = exp(all_log / all_n);
  printf("all,all,analytic,%d,%.4f,,\n", all_n, all);
  if (all > 0.25) {
    printf("FAIL: zero-shot GMAE %.4f > 0.25\n", all);
    rc = 1;
  }
  dc_diags_free(&d);
  dc_arena_free(&a);
  return rc;
}
