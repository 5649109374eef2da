/*
 * cmd_kernel.c — `dlrmc kernel KIND key=value... --gpu NAME`: prices one
 * kernel with the same function the evaluator uses (dc_kernel_time) and
 * prints the predicted µs as the only line on stdout, so scripts can read
 * it. With --csv FILE every row of the CSV (columns named like the
 * parameters; a `gpu` column instead of --gpu, never both) is priced and
 * written back with a `pred_us` column (replacing one the file has);
 * key=value arguments then act as defaults for columns the file lacks;
 * other columns are carried through, unless one is a parameter's name in
 * other letter case (an error). --analytic ignores fitted models (the zero-shot
 * figures); --explain names the model used on stderr, the kernel's
 * physical floor (kernels/bounds.c), and says when the model's answer
 * was clamped to it.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "kernels/kernels.h"

typedef struct kargs {
  dc_kernel_kind kind;
  const char *gpu, *csv, *out;
  bool analytic, explain;
  int n_kv;
  char **kv;
} kargs;

/* Applies the command line's key=value pairs to `k`. */
static bool apply_cli(const kargs *ka, dc_kernel *k, bool skip_unknown,
                      dc_diags *d) {
  bool ok = true;
  for (int i = 0; i < ka->n_kv; i++) {
    char *eq = strchr(ka->kv[i], '=');
    *eq = 0;
    bool known;
    if (!dc_kernel_param_set(k, ka->kv[i], eq + 1, (dc_span){0},
                             skip_unknown ? &known : NULL, d))
      ok = false;
    *eq = '=';
  }
  return ok;
}

/* --explain: the model, the floor's bounds, and whether the model's
 * answer was clamped to one of them. */
static void explain(const dc_kernel *k, const dc_device *dev,
                    const dc_kmodels *km, const dc_kprice *p) {
  fprintf(stderr, "%s on %s: model %s\n", dc_kernel_kind_name(k->kind),
          dev->name, p->model);
  dc_buf why = {0};
  dc_kernel_model_why(k, km, &why);
  fprintf(stderr, "  why: %s\n", why.data ? why.data : "");
  dc_buf_free(&why);
  if (dc_kernel_is_collective(k->kind) && k->u.coll.ranks > 1) {
    dc_coll_plan c;
    dc_collective_plan(k, dev, &c);
    fprintf(stderr,
            "  %s %s over %dx%d (domains x GPUs): inside %.3f MB at %.1f "
            "GB/s = %.3f us, across %.3f MB at %.1f GB/s = %.3f us, "
            "latency %.3f us, ramp %.3f us\n",
            dc_coll_algo_name(c.algo), dc_coll_proto_name(c.proto),
            (int)c.domains, (int)c.domain_ranks, c.intra_bytes / 1e6,
            c.intra_gbps, c.intra_us, c.inter_bytes / 1e6, c.inter_gbps,
            c.inter_us, c.latency_us, c.ramp_us);
  }
  const dc_kfloor *f = &p->floor;
  fprintf(stderr, "  floor %.3f us (%s bound): FLOP %.3f, DRAM %.3f, "
                  "link %.3f, launch %.3f us\n",
          f->us, dc_kbound_name(f->binding), f->flop_us, f->dram_us,
          f->link_us, f->launch_us);
  if (p->clamped != DC_KBOUND_NONE)
    fprintf(stderr, "  clamped to the %s bound: the model said %.3f us\n",
            dc_kbound_name(p->clamped), p->model_us);
}

/* A price that leaves dlrmc: finite, or an error naming the kernel (a
 * scale or a size whose time cannot be represented). */
static bool finite_price(double us, const dc_kernel *k, dc_span at,
                         dc_diags *d) {
  if (isfinite(us)) return true;
  dc_diag *g = dc_diag_error(d, DC_DIAG_NON_FINITE, at,
                             "the predicted time of this %s kernel is %g "
                             "us, not a finite time",
                             dc_kernel_kind_name(k->kind), us);
  dc_diag_set_help(g, "its sizes or its scale are too large to price");
  return false;
}

/* The span of column `col`'s name in the header row. */
static dc_span header_span(const dc_csv *c, int32_t col) {
  size_t len;
  int32_t line = 1;
  for (; line <= (int32_t)c->src->n_lines; line++) {
    const char *t = dc_source_line(c->src, line, &len);
    size_t i = 0;
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r')) i++;
    if (i < len && t[i] != '#') break;
  }
  const char *t = dc_source_line(c->src, line, &len);
  size_t i = 0;
  bool quoted = false;
  for (int32_t f = 0; i < len && f < col; i++) { /* to the col-th comma */
    if (t[i] == '"') quoted = !quoted;
    if (t[i] == ',' && !quoted) f++;
  }
  while (i < len && (t[i] == ' ' || t[i] == '\t')) i++;
  return (dc_span){c->src, line, (int32_t)i + 1,
                   (int32_t)strlen(c->cols[col])};
}

static int price_csv(const kargs *ka, dc_arena *a, dc_diags *d) {
  dc_csv c;
  if (!dc_csv_read(ka->csv, &c, a, d)) return CLI_EXIT_INPUT;
  int32_t gpu_col = dc_csv_col(&c, "gpu");
  if (!ka->gpu && gpu_col < 0) {
    dc_diag_error(d, DC_DIAG_BAD_CSV, (dc_span){c.src, 1, 1, 0},
                  "no --gpu given and the CSV has no 'gpu' column");
    return CLI_EXIT_INPUT;
  }
  if (ka->gpu && gpu_col >= 0) {
    dc_diag *g = dc_diag_error(d, DC_DIAG_CONFLICT, header_span(&c, gpu_col),
                               "--gpu %s is given and the CSV has a 'gpu' "
                               "column: which one prices the rows?",
                               ka->gpu);
    dc_diag_set_help(g, "drop --gpu to price each row on its own GPU, or "
                        "remove the column");
    return CLI_EXIT_INPUT;
  }
  /* Measurement columns (the benchmark's, and a pred_us from an earlier
   * run, whose cells are replaced) are no parameters; other columns that
   * are not parameters of the kind (annotations such as `trace kernels`'
   * op and layout) are carried through unread, except one that is a
   * parameter's name in other letter case ('M' for 'm'): an error, not a
   * column silently not read. */
  static const char *const skip[] = {"gpu", "time_us", "mean_us", "pred_us",
                                     "std_us", "min_us", "max_us", "runs"};
  bool *is_param = dc_arena_array(a, (size_t)c.n_cols + 1, sizeof *is_param);
  int32_t pred_col = dc_csv_col(&c, "pred_us");
  for (int32_t col = 0; col < c.n_cols; col++) {
    bool skipped = false;
    for (size_t s = 0; s < DC_COUNTOF(skip); s++)
      if (strcmp(c.cols[col], skip[s]) == 0) skipped = true;
    if (skipped) continue;
    char *lower = dc_arena_strdup(a, c.cols[col]);
    for (char *q = lower; *q; q++) *q = (char)tolower((unsigned char)*q);
    bool known = true, known_lower = true;
    dc_kernel probe;
    dc_kernel_params_init(&probe, ka->kind, a);
    dc_diags quiet = {0};
    dc_kernel_param_set(&probe, c.cols[col], "1", (dc_span){0}, &known,
                        &quiet);
    dc_kernel_param_set(&probe, lower, "1", (dc_span){0}, &known_lower,
                        &quiet);
    dc_diags_free(&quiet);
    is_param[col] = known;
    if (!known && known_lower) {
      dc_diag *g = dc_diag_error(d, DC_DIAG_UNKNOWN_KEY,
                                 header_span(&c, col),
                                 "column '%s' is not a parameter of kernel "
                                 "'%s'; parameters are lower case",
                                 c.cols[col], dc_kernel_kind_name(ka->kind));
      dc_diag_set_help(g, "did you mean '%s'?", lower);
    }
  }
  if (d->errors) return CLI_EXIT_INPUT;
  dc_buf o = {0};
  for (int32_t i = 0; i < c.n_cols; i++) {
    dc_buf_put_csv_field(&o, c.cols[i]);
    dc_buf_putc(&o, i + 1 < c.n_cols || pred_col < 0 ? ',' : '\n');
  }
  if (pred_col < 0) dc_buf_puts(&o, "pred_us\n");
  const char *cur_name = NULL;
  dc_device dev;
  const dc_kmodels *km = NULL;
  bool dev_ok = false;
  for (int32_t r = 0; r < c.n_rows; r++) {
    const char *gname = gpu_col >= 0 && !ka->gpu ? c.cells[r][gpu_col]
                                                : ka->gpu;
    if (!cur_name || strcmp(cur_name, gname) != 0) {
      cur_name = gname;
      size_t before = d->errors;
      dev_ok = dc_device_lookup(gname, &dev, a, d);
      if (!dev_ok && gpu_col >= 0 && !ka->gpu && d->errors > before &&
          d->items[d->count - 1].span.line == 0)
        d->items[d->count - 1].span = dc_csv_span(&c, r, gpu_col);
      km = dev_ok && !ka->analytic ? dc_kmodels_for(&dev) : NULL;
    }
    dc_kernel k;
    dc_kernel_params_init(&k, ka->kind, a);
    bool ok = apply_cli(ka, &k, false, d);
    for (int32_t col = 0; col < c.n_cols; col++)
      if (is_param[col] &&
          !dc_kernel_param_set(&k, c.cols[col], c.cells[r][col],
                               dc_csv_span(&c, r, col), NULL, d))
        ok = false;
    dc_span row = {c.src, c.row_line[r], 1, 0};
    if (!ok || !dc_kernel_params_check(&k, row, d) || !dev_ok) continue;
    double us = dc_kernel_time(&k, &dev, km);
    if (!finite_price(us, &k, row, d)) continue;
    for (int32_t col = 0; col < c.n_cols; col++) {
      if (col == pred_col)
        dc_buf_printf(&o, "%.3f", us);
      else
        dc_buf_put_csv_field(&o, c.cells[r][col]);
      dc_buf_putc(&o, col + 1 < c.n_cols || pred_col < 0 ? ',' : '\n');
    }
    if (pred_col < 0) dc_buf_printf(&o, "%.3f\n", us);
  }
  int rc = CLI_EXIT_OK;
  if (d->errors) rc = CLI_EXIT_INPUT;
  else if (!cli_write_file_atomic(ka->out, o.data ? o.data : "", o.len))
    rc = CLI_EXIT_INPUT;
  dc_buf_free(&o);
  return rc;
}

static int cmd_kernel(int argc, char **argv) {
  const cli_command *cmd = &cli_cmd_kernel_def;
  if (cli_wants_help(cmd, argc, argv)) return CLI_EXIT_OK;
  kargs ka = {0};
  ka.kv = argv;
  const char *kind_name = NULL;
  enum { O_GPU, O_CSV, O_OUT, O_ANALYTIC, O_EXPLAIN };
  static const cli_opt opts[] = {[O_GPU] = {"--gpu", NULL, true},
                                 [O_CSV] = {"--csv", NULL, true},
                                 [O_OUT] = {"--output", "-o", true},
                                 [O_ANALYTIC] = {"--analytic", NULL, false},
                                 [O_EXPLAIN] = {"--explain", NULL, false},
                                 {0}};
  cli_iter it = cli_args(argc, argv, 1);
  char *s;
  for (int k; (k = cli_next(cmd, opts, &it, &s)) != CLI_END;) {
    switch (k) {
    case CLI_FAIL: return CLI_EXIT_USAGE;
    case O_GPU: ka.gpu = s; break;
    case O_CSV: ka.csv = s; break;
    case O_OUT: ka.out = s; break;
    case O_ANALYTIC: ka.analytic = true; break;
    case O_EXPLAIN: ka.explain = true; break;
    default:
      if (strchr(s, '=')) {
        ka.kv[ka.n_kv++] = s;
      } else if (!kind_name) {
        kind_name = s;
      } else {
        return cli_usage_error(cmd, "unexpected argument '%s' (parameters "
                                       "are key=value)", s);
      }
    }
  }
  if (!kind_name) return cli_usage_error(cmd, "expected a kernel KIND");
  if (!dc_kernel_kind_parse_cli(kind_name, &ka.kind)) {
    const char *names[DC_KERNEL_KIND_COUNT_ + 1];
    for (int i = 0; i < DC_KERNEL_KIND_COUNT_; i++)
      names[i] = dc_kernel_kind_name((dc_kernel_kind)i);
    names[DC_KERNEL_KIND_COUNT_] = "memcpy";
    const char *sug = dc_suggest(kind_name, names, DC_COUNTOF(names));
    if (sug)
      return cli_usage_error(cmd, "unknown kernel kind '%s'; did you mean "
                                     "'%s'?", kind_name, sug);
    return cli_usage_error(cmd, "unknown kernel kind '%s'", kind_name);
  }
  if (!ka.csv && !ka.gpu) return cli_usage_error(cmd, "--gpu is required");
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  int rc = CLI_EXIT_OK;
  if (ka.csv) {
    rc = price_csv(&ka, &a, &d);
  } else {
    dc_device dev;
    dc_kernel k;
    dc_kernel_params_init(&k, ka.kind, &a);
    bool ok = dc_device_lookup(ka.gpu, &dev, &a, &d);
    ok = apply_cli(&ka, &k, false, &d) && ok;
    ok = ok && dc_kernel_params_check(&k, (dc_span){0}, &d);
    if (ok) {
      const dc_kmodels *km = ka.analytic ? NULL : dc_kmodels_for(&dev);
      dc_kprice p;
      dc_kernel_price(&k, &dev, km, &p);
      double t = p.us;
      if (ka.explain) explain(&k, &dev, km, &p);
      char line[64];
      int n = snprintf(line, sizeof line, "%.3f\n", t);
      if (!finite_price(t, &k, (dc_span){0}, &d) ||
          !cli_write_file_atomic(ka.out, line, (size_t)n))
        rc = CLI_EXIT_INPUT;
    } else {
      rc = CLI_EXIT_INPUT;
    }
  }
  if (d.count) cli_report(&d);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return rc;
}

const cli_command cli_cmd_kernel_def = {
    "kernel", cmd_kernel,
    "dlrmc kernel KIND key=value... --gpu NAME [--csv FILE] [-o OUT] "
    "[--analytic] [--explain]",
    "Price one kernel (or every row of a CSV) on a GPU.",
    "Prints the predicted kernel time in microseconds as the only line on "
    "stdout.\n"
    "KIND and its parameters (sizes accept 1M, 64Ki, 2GB):\n"
    "  gemm            m n k batch transa transb dtype(fp32|tf32|fp16|bf16)\n"
    "  embedding_fwd   batch rows tables pooling dim dtype model(enhanced|"
    "plain)\n"
    "  embedding_bwd   ... optimizer(sgd|adagrad|rowwise_adagrad|adam) "
    "fused(1|0)\n"
    "  elementwise     elements flops_per_elem bytes_per_elem (also reduce)\n"
    "  concat          bytes\n"
    "  memcpy          bytes direction(h2d|d2h|d2d) pinned(0|1)\n"
    "  transpose       batch m n dtype\n"
    "  tril_fwd        batch m n diag dtype (also tril_bwd)\n"
    "  all_reduce      bytes ranks hosts (also all_to_all, reduce_scatter,\n"
    "                  all_gather) algo(ring|tree|nvls|nvls_tree|collnet:\n"
    "                  NCCL_ALGO; default the cheapest)\n"
    "Every kind also takes scale (a time multiplier).\n\n"
    "--csv FILE prices every row (columns named like the parameters; a 'gpu'"
    "\n"
    "column instead of --gpu) and writes the rows with a pred_us column\n"
    "(replacing the file's own); other columns are carried through unread\n"
    "(a parameter's name in capitals, like 'M', is an error).\n"
    "--analytic ignores fitted models; --explain names the model on stderr\n"
    "(a collective's algorithm, protocol, domains and each level's time),\n"
    "with the kernel's physical floor (FLOP, DRAM, link and launch bounds)\n"
    "and, when the model's answer was below it, 'clamped to the ... bound'.\n"
    "\n"
    "  dlrmc kernel gemm m=1024 n=1024 k=1024 --gpu V100\n"
    "  dlrmc kernel embedding_fwd batch=2048 rows=1M tables=8 pooling=100 "
    "dim=64 --gpu V100\n"
    "  dlrmc kernel all_reduce bytes=100MB ranks=8 --gpu A100\n"};
