/*
 * cmd_calibrate.c — `dlrmc calibrate RUN.et.json KINETO.json [...] --gpu
 * NAME -o DIR`: fits dlrmc's kernel models to a user's own recorded run
 * (spec/calibrate.md). The kernels of each iteration (the execution trace
 * priced and matched to its Kineto trace, runtime/trace/replay.c) are
 * grouped by family; every family with enough distinct kernels gets a
 * fitted model, the others keep the analytic one:
 *
 *   GEMM                the MLP regressor (dlrmc fit's, a fixed small
 *                       network), held out: the 20 % `fit` keeps back
 *   memory-bound kinds  achieved bandwidth and small-kernel latency
 *                       (kernels/family.c), held out: k folds
 *
 * dlrmc-bench's embedding rows (--bench-embedding) and micro.py's
 * stock-PyTorch kernel tables (--micro DIR, kernels/micro.c) join the
 * traced kernels as more rows of the same families.
 *
 * Identical kernels (same kind and sizes) are one row, their time the
 * geometric mean of the measurements, so that no held-out row has a twin
 * in the rows fitted. DIR gets gemm.yaml and families.yaml, the files
 * spec/kernels/<gpu>/ holds; a study uses them with
 * `system.kernel_models: DIR`. The report (stdout) is a Markdown table of
 * each family's rows and held-out error, fitted against analytic.
 *
 * Exit status: 0 written; 1 unreadable traces or GPU, or nothing to fit;
 * 2 usage errors.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compiler/cli/cli_int.h"
#include "kernels/kernels.h"
#include "runtime/trace/trace.h"

#define CAL_MAX_TRACES 64
#define CAL_FOLDS_DEFAULT 5
#define CAL_MIN_FAMILY 6  /* distinct kernels a family needs to be fitted */
#define CAL_MIN_GEMM 30   /* distinct GEMMs the MLP needs */

/* Whether two kernels are the same work (kind and every size). */
static bool same_kernel(const dc_kernel *a, const dc_kernel *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case DC_KERNEL_GEMM:
    return a->u.gemm.m == b->u.gemm.m && a->u.gemm.n == b->u.gemm.n &&
           a->u.gemm.k == b->u.gemm.k && a->u.gemm.batch == b->u.gemm.batch &&
           a->u.gemm.transa == b->u.gemm.transa &&
           a->u.gemm.transb == b->u.gemm.transb &&
           a->u.gemm.dtype == b->u.gemm.dtype;
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD: {
    if (a->u.emb.batch != b->u.emb.batch || a->u.emb.n_groups != b->u.emb.n_groups ||
        a->u.emb.dtype != b->u.emb.dtype || a->u.emb.stock != b->u.emb.stock ||
        a->u.emb.fused_optimizer != b->u.emb.fused_optimizer ||
        a->u.emb.optimizer != b->u.emb.optimizer)
      return false;
    for (int32_t i = 0; i < a->u.emb.n_groups; i++)
      if (a->u.emb.groups[i].tables != b->u.emb.groups[i].tables ||
          a->u.emb.groups[i].rows != b->u.emb.groups[i].rows ||
          a->u.emb.groups[i].dim != b->u.emb.groups[i].dim ||
          a->u.emb.groups[i].pooling != b->u.emb.groups[i].pooling)
        return false;
    return true;
  }
  case DC_KERNEL_ELEMENTWISE:
  case DC_KERNEL_REDUCE:
    return a->u.ew.elements == b->u.ew.elements &&
           a->u.ew.bytes_per_elem == b->u.ew.bytes_per_elem &&
           a->u.ew.flops_per_elem == b->u.ew.flops_per_elem &&
           a->u.ew.indexed == b->u.ew.indexed;
  case DC_KERNEL_CONCAT:
  case DC_KERNEL_MEMCPY_D2D:
    return a->u.copy.bytes == b->u.copy.bytes;
  default: return false;
  }
}

/* Collapses identical kernels of s[0..n) in place (first appearance
 * order; time: geometric mean); returns the distinct count. */
static int32_t distinct(dc_fit_sample *s, int32_t n) {
  int32_t m = 0;
  int32_t *cnt = dc_xmalloc(((size_t)n + 1) * sizeof *cnt);
  for (int32_t i = 0; i < n; i++) {
    int32_t j = 0;
    while (j < m && !same_kernel(&s[j].k, &s[i].k)) j++;
    if (j == m) {
      s[m] = s[i];
      s[m].time_us = log(s[i].time_us);
      cnt[m++] = 1;
    } else {
      s[j].time_us += log(s[i].time_us);
      cnt[j]++;
    }
  }
  for (int32_t j = 0; j < m; j++) s[j].time_us = exp(s[j].time_us / cnt[j]);
  free(cnt);
  return m;
}

/* The built-in models' GMAE on s[0..n), and their mean |ln(pred / real)|
 * in *mlae (what a fit must beat: GMAE rewards the odd row that happens
 * to be exact). */
static double gmae_of(const dc_fit_sample *s, int32_t n, const dc_device *dev,
                      const dc_kmodels *km, double *mlae) {
  double *p = dc_xmalloc(((size_t)n + 1) * sizeof *p);
  double *r = dc_xmalloc(((size_t)n + 1) * sizeof *r);
  for (int32_t i = 0; i < n; i++) {
    p[i] = dc_kernel_time(&s[i].k, dev, km);
    r[i] = s[i].time_us;
  }
  double g, mu, sd, la = 0;
  for (int32_t i = 0; i < n; i++) la += fabs(log(p[i] / r[i]));
  if (mlae) *mlae = n ? la / n : 0;
  dc_fit_errors(p, r, n, &g, &mu, &sd);
  free(p);
  free(r);
  return g;
}

/* dlrmc-bench's embedding CSV (direction,batch,rows,tables,pooling,dim,
 * time_us: the table-batched lookup, forward and backward with the SGD
 * update fused, fp32): one sample per row, appended to *s. Other columns
 * name kernel parameters (dtype, optimizer, fused, ...) or are skipped. */
static bool bench_rows(const char *path, dc_fit_sample **s, int32_t *n,
                       dc_arena *a, dc_diags *d) {
  dc_csv c;
  if (!dc_csv_read(path, &c, a, d)) return false;
  int32_t dir = dc_csv_col(&c, "direction"), t = dc_csv_col(&c, "time_us");
  if (dir < 0 || t < 0) {
    dc_span at = c.n_rows ? dc_csv_span(&c, 0, 0)
                          : (dc_span){c.src, 1, 1, 0};
    dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_CSV, at,
                               "an embedding benchmark needs the columns "
                               "direction and time_us");
    dc_diag_set_help(g, "dlrmc-bench embedding writes them (spec/calibrate.md)");
    return false;
  }
  *s = dc_xrealloc(*s, ((size_t)*n + (size_t)c.n_rows + 1) * sizeof **s);
  for (int32_t r = 0; r < c.n_rows; r++) {
    const char *dv = c.cells[r][dir];
    dc_kernel k;
    bool fwd = strcmp(dv, "fwd") == 0;
    if (!fwd && strcmp(dv, "bwd") != 0) {
      dc_diag_error(d, DC_DIAG_BAD_CSV, dc_csv_span(&c, r, dir),
                    "'direction' must be fwd or bwd, not '%s'", dv);
      return false;
    }
    dc_kernel_params_init(&k, fwd ? DC_KERNEL_EMBEDDING_FWD
                                  : DC_KERNEL_EMBEDDING_BWD, a);
    bool ok = true;
    for (int32_t col = 0; col < c.n_cols && ok; col++) {
      if (col == dir || col == t) continue;
      bool known = true;
      ok = dc_kernel_param_set(&k, c.cols[col], c.cells[r][col],
                               dc_csv_span(&c, r, col), &known, d) ||
           !known;
    }
    double us;
    const char *why;
    if (!ok || !dc_parse_double(c.cells[r][t], &us, &why) || !(us > 0)) {
      if (ok)
        dc_diag_error(d, DC_DIAG_BAD_CSV, dc_csv_span(&c, r, t),
                      "'time_us' must be a positive number");
      return false;
    }
    if (!dc_kernel_params_check(&k, dc_csv_span(&c, r, 0), d)) return false;
    (*s)[(*n)++] = (dc_fit_sample){k, us, "bench"};
  }
  return true;
}

static bool make_dir(const char *dir) {
  if (mkdir(dir, 0777) == 0 || errno == EEXIST) {
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return true;
  }
  fprintf(stderr, "dlrmc calibrate: cannot create the folder '%s': %s\n", dir,
          strerror(errno ? errno : ENOTDIR));
  return false;
}

static bool write_in(const char *dir, const char *name, const dc_buf *b) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *path = dc_xmalloc(n);
  snprintf(path, n, "%s/%s", dir, name);
  bool ok = cli_write_file_atomic(path, b->data ? b->data : "", b->len);
  free(path);
  return ok;
}

static int cmd_calibrate(int argc, char **argv) {
  const cli_command *cmd = &cli_cmd_calibrate_def;
  if (cli_wants_help(cmd, argc, argv)) return CLI_EXIT_OK;
  const char *traces[CAL_MAX_TRACES], *bench[CAL_MAX_TRACES],
      *micro[CAL_MAX_TRACES];
  int nt = 0, nb = 0, nm = 0;
  const char *gpu = NULL, *dir = NULL;
  int64_t folds = CAL_FOLDS_DEFAULT;
  enum { O_GPU, O_OUT, O_FOLDS, O_BENCH, O_MICRO };
  static const cli_opt opts[] = {[O_GPU] = {"--gpu", NULL, true},
                                 [O_OUT] = {"--output", "-o", true},
                                 [O_FOLDS] = {"--folds", NULL, true},
                                 [O_BENCH] = {"--bench-embedding", NULL,
                                              true, true},
                                 [O_MICRO] = {"--micro", NULL, true, true},
                                 {0}};
  cli_iter it = cli_args(argc, argv, 1);
  char *v;
  for (int k; (k = cli_next(cmd, opts, &it, &v)) != CLI_END;) {
    switch (k) {
    case CLI_FAIL: return CLI_EXIT_USAGE;
    case O_GPU: gpu = v; break;
    case O_OUT: dir = v; break;
    case O_FOLDS:
      if (!cli_parse_int(v, 2, 100, &folds))
        return cli_usage_error(cmd, "--folds needs 2..100");
      break;
    case O_BENCH:
      if (nb == CAL_MAX_TRACES)
        return cli_usage_error(cmd, "at most %d benchmark files",
                               CAL_MAX_TRACES);
      bench[nb++] = v;
      break;
    case O_MICRO:
      if (nm == CAL_MAX_TRACES)
        return cli_usage_error(cmd, "at most %d --micro folders",
                               CAL_MAX_TRACES);
      micro[nm++] = v;
      break;
    default:
      if (nt == CAL_MAX_TRACES)
        return cli_usage_error(cmd, "at most %d traces", CAL_MAX_TRACES);
      traces[nt++] = v;
    }
  }
  if ((nt == 0 && nb == 0 && nm == 0) || nt % 2)
    return cli_usage_error(cmd, "give pairs of traces: RUN.et.json "
                                   "KINETO.json (the same run's), or "
                                   "--bench-embedding CSV, or --micro DIR");
  if (!gpu)
    return cli_usage_error(cmd, "--gpu NAME is required (`dlrmc gpus` "
                                   "lists the catalog)");
  if (!dir) return cli_usage_error(cmd, "-o DIR is required");
  dc_diags d = {0};
  d.max_errors = 100;
  dc_arena arena;
  dc_arena_init(&arena);
  dc_device dev;
  dc_fit_sample *s = NULL;
  int32_t n = 0;
  int rc = CLI_EXIT_INPUT;
  if (!dc_device_lookup(gpu, &dev, &arena, &d)) goto out;
  for (int i = 0; i < nt; i += 2)
    if (!dc_replay_samples(traces[i], traces[i + 1], &dev, &s, &n, &arena, &d))
      goto out;
  for (int i = 0; i < nb; i++)
    if (!bench_rows(bench[i], &s, &n, &arena, &d)) goto out;
  int32_t mfiles = 0, mskipped = 0;
  for (int i = 0; i < nm; i++) {
    int32_t before = mfiles;
    if (!dc_micro_load_dir(micro[i], &s, &n, &mfiles, &mskipped, &arena, &d))
      goto out;
    if (mfiles == before) {
      fprintf(stderr, "dlrmc calibrate: --micro %s: the folder has none of "
                      "elementwise.csv, copy.csv, embedding.csv, "
                      "embedding_rows.csv\n", micro[i]);
      goto out;
    }
  }
  const dc_kmodels *km = dc_kmodels_for(&dev);
  /* GEMMs first, then each family, each collapsed to distinct kernels */
  dc_fit_sample *g = dc_xmalloc(((size_t)n + 1) * sizeof *g);
  int32_t ng = 0;
  for (int32_t i = 0; i < n; i++)
    if (s[i].k.kind == DC_KERNEL_GEMM) {
      g[ng] = s[i];
      g[ng].group = dc_dtype_name(s[i].k.u.gemm.dtype);
      ng++;
    }
  ng = distinct(g, ng);
  dc_buf rep = {0}, yaml = {0};
  dc_buf_printf(&rep, "# dlrmc calibrate: %d kernels of %d iteration%s and "
                "%d benchmark file%s on %s -> %s/\n", (int)n, nt / 2,
                nt == 2 ? "" : "s", nb, nb == 1 ? "" : "s", dev.name, dir);
  if (nm)
    dc_buf_printf(&rep, "# (%d microbenchmark file%s; %d row%s skipped: host "
                  "copies, several-kernel rows)\n", (int)mfiles,
                  mfiles == 1 ? "" : "s", (int)mskipped,
                  mskipped == 1 ? "" : "s");
  dc_buf_putc(&rep, '\n');
  dc_buf_puts(&rep, "| family | kernels | distinct | model | built-in GMAE "
                    "| fitted GMAE (held out) | fraction | latency µs | row ns |\n"
                    "|---|---:|---:|---|---:|---:|---:|---:|---:|\n");
  if (!make_dir(dir)) goto out_bufs;
  bool any = false;
  if (ng >= CAL_MIN_GEMM) {
    dc_fit_opts fo = {.kind = DC_KERNEL_GEMM, .grid = "small", .layers = 3,
                      .neurons = 32};
    dc_mlp m;
    dc_buf frep = {0};
    if (!dc_fit_run(&fo, g, ng, &m, &frep, &arena, &d)) {
      dc_buf_free(&frep);
      goto out_bufs;
    }
    /* the held-out GMAE is on the report's third line */
    const char *h = frep.data ? strstr(frep.data, "held-out: GMAE ") : NULL;
    double hg = h ? atof(h + 15) : NAN;
    dc_buf_printf(&rep, "| gemm | - | %d | mlp | %.1f %% | %.1f %% (20 %%) "
                  "| - | - | - |\n", (int)ng, 100 * gmae_of(g, ng, &dev, km, NULL),
                  100 * hg);
    dc_mlp_write_yaml(&m, "# Fitted by dlrmc calibrate from a recorded run "
                      "(spec/calibrate.md).\n", &yaml);
    if (!write_in(dir, "gemm.yaml", &yaml)) goto out_bufs;
    any = true;
    dc_buf_free(&frep);
  } else {
    dc_buf_printf(&rep, "| gemm | - | %d | analytic (fewer than %d) | %s | - "
                  "| - | - | - |\n", (int)ng, CAL_MIN_GEMM,
                  ng ? "" : "-");
  }
  dc_kfams fams = {0};
  fams.source = dc_arena_printf(&arena, "dlrmc calibrate, %d trace pair(s), "
                                "%d benchmark file(s), %sfirst %s", nt / 2,
                                nb,
                                nm ? dc_arena_printf(&arena, "%d "
                                                     "microbenchmark file(s) "
                                                     "of %s, ", (int)mfiles,
                                                     micro[0])
                                   : "",
                                nt ? traces[1] : nb ? bench[0] : micro[0]);
  bool any_fam = false;
  for (int f = 0; f < DC_KFAM_COUNT_; f++) {
    int32_t nf = 0, raw = 0;
    for (int32_t i = 0; i < n; i++)
      if (dc_kfam_of(&s[i].k) == f) g[nf++] = s[i];
    raw = nf;
    if (raw == 0) continue;
    nf = distinct(g, nf);
    double an_log;
    double an = gmae_of(g, nf, &dev, km, &an_log);
    if (nf < CAL_MIN_FAMILY) {
      dc_buf_printf(&rep, "| %s | %d | %d | analytic (fewer than %d) | %.1f "
                    "%% | - | - | - | - |\n", dc_kfam_name((dc_kfam_id)f),
                    (int)raw, (int)nf, CAL_MIN_FAMILY, 100 * an);
      continue;
    }
    dc_kfam *m = &fams.f[f];
    dc_kfam_fit(g, nf, &dev, (int32_t)folds, m);
    if (!(m->heldout_mlae < an_log)) { /* it must beat what it replaces */
      dc_buf_printf(&rep, "| %s | %d | %d | analytic (the fit's %.1f %% held "
                    "out is no better) | %.1f %% | - | - | - | - |\n",
                    dc_kfam_name((dc_kfam_id)f), (int)raw, (int)nf,
                    100 * m->heldout_gmae, 100 * an);
      m->set = false;
      continue;
    }
    dc_buf_printf(&rep, "| %s | %d | %d | fitted-bandwidth | %.1f %% | %.1f "
                  "%% (%d-fold) | %.3f | %.2f | %s |\n",
                  dc_kfam_name((dc_kfam_id)f), (int)raw, (int)nf, 100 * an,
                  100 * m->heldout_gmae, (int)(folds < nf ? folds : nf),
                  m->fraction, m->latency_us,
                  m->row_ns > 0 ? dc_arena_printf(&arena, "%.3f", m->row_ns)
                                : "-");
    any_fam = any = true;
  }
  if (any_fam) {
    dc_buf_clear(&yaml);
    dc_kfams_write_yaml(&fams, dev.name,
                        "# Fitted by dlrmc calibrate from a recorded run "
                        "(spec/calibrate.md): each family's achieved\n"
                        "# fraction of the datasheet DRAM bandwidth and "
                        "small-kernel latency.\n",
                        &yaml);
    if (!write_in(dir, "families.yaml", &yaml)) goto out_bufs;
  }
  if (!any) {
    fprintf(stderr, "dlrmc calibrate: no family has enough kernels to fit "
                    "(GEMM %d distinct, need %d; others need %d)\n",
            (int)ng, CAL_MIN_GEMM, CAL_MIN_FAMILY);
    goto out_bufs;
  }
  dc_buf_puts(&rep, "\nA family is fitted when its held-out mean |ln(pred / "
                    "real)| beats the built-in model's on the same kernels "
                    "(GMAE, the geometric mean of |pred / real - 1|, also "
                    "rewards the odd row that happens to be exact).\n");
  dc_buf_printf(&rep, "\nUse it: `system: {gpu: %s, kernel_models: %s}` in a "
                "study.\n", dev.name, dir);
  fwrite(rep.data, 1, rep.len, stdout);
  rc = CLI_EXIT_OK;
out_bufs:
  free(g);
  dc_buf_free(&rep);
  dc_buf_free(&yaml);
out:
  cli_report(&d);
  free(s);
  dc_arena_free(&arena);
  dc_diags_free(&d);
  return rc;
}

const cli_command cli_cmd_calibrate_def = {
    "calibrate", cmd_calibrate,
    "dlrmc calibrate RUN.et.json KINETO.json [...] --gpu NAME -o DIR "
    "[--bench-embedding CSV] [--micro DIR] [--folds K]",
    "Fit the kernel models to a recorded run; a study uses them with "
    "system.kernel_models.",
    "Reads pairs of a PyTorch execution trace and the Kineto trace of the\n"
    "same run (plain or gzip; the pairs `dlrmc replay` reads), matches each\n"
    "op's kernels to their measured GPU time and fits, per kernel family\n"
    "with enough distinct kernels, a model of GPU NAME: GEMM (the MLP\n"
    "regressor, 30 distinct shapes at least) and the memory-bound families\n"
    "(element-wise, reduce, indexed gather/scatter, concat, device copies,\n"
    "the embedding lookups: achieved bandwidth and small-kernel latency, 6\n"
    "distinct kernels at least). Other families keep the analytic models.\n"
    "Writes DIR/gemm.yaml and DIR/families.yaml and prints each family's\n"
    "held-out error against the analytic model's (spec/calibrate.md).\n"
    "\n"
    "options:\n"
    "  --gpu NAME      the device the run was recorded on\n"
    "  -o DIR          the folder to write (created if absent)\n"
    "  --folds K       cross-validation folds of the family fits (default 5)\n"
    "  --bench-embedding CSV\n"
    "                  dlrmc-bench's embedding rows too (the table-batched\n"
    "                  lookup, forward and backward with fused SGD)\n"
    "  --micro DIR     micro.py's stock-PyTorch kernel tables in DIR too\n"
    "                  (elementwise.csv, copy.csv, embedding.csv,\n"
    "                  embedding_rows.csv; rows of one kernel: element-wise,\n"
    "                  device copies, nn.EmbeddingBag's forward)\n"
    "Exit status: 0 written, 1 unreadable input or nothing to fit, 2 usage\n"
    "errors.\n"};
