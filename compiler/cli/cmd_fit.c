/*
 * cmd_fit.c — `dlrmc fit KIND DATA.csv... [-o MODEL.yaml]`: trains the MLP
 * regressor of a kernel kind (gemm, transpose, tril_fwd, tril_bwd) on
 * benchmark CSV — ours (batch,m,n,k,transa,transb,dtype,time_us) or
 * DeepBench's (gpu,precision,m,n,k,transa,transb,time_us) — with the
 * paper's grid search, and writes the model YAML (to -o atomically, or to
 * stdout). The held-out report (GMAE, mean and std of the relative error,
 * per GPU and dtype) goes to stdout with -o, to stderr without.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "kernels/kernels.h"

/* --gate-of MODEL: the model as it is (weights, comments), with the
 * distance-to-data gate of the rows `dlrmc fit` trained it on (the same
 * CSVs and seed) added. */
static int gate_only(const char *path, const dc_fit_opts *o,
                     const dc_fit_sample *s, int32_t n, const char *out,
                     dc_arena *a, dc_diags *d) {
  const dc_source *src = dc_source_load(path, a, d);
  const dc_node *root = src ? dc_yaml_parse(src, a, d) : NULL;
  dc_mlp m;
  if (!root || !dc_mlp_from_node(root, &m, a, d)) return CLI_EXIT_INPUT;
  if (m.kind != o->kind || !dc_fit_gate(&m, s, n, o->seed, a)) {
    dc_diag_error(d, DC_DIAG_BAD_MODEL, root->span,
                  "fitted model: '%s' is not a %s model, or fewer than 10 "
                  "rows", path, dc_kernel_kind_name(o->kind));
    return CLI_EXIT_INPUT;
  }
  dc_buf head = {0}, yaml = {0};
  for (const char *p = src->text; *p == '#';) { /* its comment lines */
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
    if (strncmp(p, "# gate:", 7) != 0) dc_buf_append(&head, p, len);
    p += len;
  }
  dc_buf_printf(&head, "# gate: %d fitted rows, radius %.3f (ln units: the "
                "95th percentile of the held-out rows' distances)\n",
                (int)m.n_support, m.gate_radius);
  dc_mlp_write_yaml(&m, head.data, &yaml);
  bool ok = cli_write_file_atomic(out, yaml.data, yaml.len);
  dc_buf_free(&head);
  dc_buf_free(&yaml);
  return ok ? CLI_EXIT_OK : CLI_EXIT_INPUT;
}

static int cmd_fit(int argc, char **argv) {
  const cli_command *cmd = &cli_cmd_fit_def;
  if (cli_wants_help(cmd, argc, argv)) return CLI_EXIT_OK;
  dc_fit_opts o = {0};
  o.grid = "small";
  const char *kind = NULL, *out = NULL, *gate_of = NULL;
  const char *files[64];
  int nfiles = 0;
  enum { O_OUT, O_GRID, O_EPOCHS, O_LAYERS, O_NEURONS, O_SEED, O_VERBOSE,
         O_GATE_OF };
  static const cli_opt opts[] = {[O_OUT] = {"--output", "-o", true},
                                 [O_GRID] = {"--grid", NULL, true},
                                 [O_EPOCHS] = {"--epochs", NULL, true},
                                 [O_LAYERS] = {"--layers", NULL, true},
                                 [O_NEURONS] = {"--neurons", NULL, true},
                                 [O_SEED] = {"--seed", NULL, true},
                                 [O_VERBOSE] = {"--verbose", "-v", false},
                                 [O_GATE_OF] = {"--gate-of", NULL, true},
                                 {0}};
  cli_iter it = cli_args(argc, argv, 1);
  char *arg;
  for (int k; (k = cli_next(cmd, opts, &it, &arg)) != CLI_END;) {
    int64_t v;
    switch (k) {
    case CLI_FAIL: return CLI_EXIT_USAGE;
    case O_OUT: out = arg; break;
    case O_GATE_OF: gate_of = arg; break;
    case O_GRID:
      o.grid = arg;
      if (strcmp(o.grid, "small") != 0 && strcmp(o.grid, "full") != 0)
        return cli_usage_error(cmd, "--grid must be small or full");
      break;
    case O_EPOCHS:
      if (!cli_parse_int(arg, 1, 1000000, &v))
        return cli_usage_error(cmd, "--epochs needs 1..1000000");
      o.epochs = (int32_t)v;
      break;
    case O_LAYERS:
      if (!cli_parse_int(arg, 1, DC_MLP_MAX_LAYERS - 1, &v))
        return cli_usage_error(cmd, "--layers needs 1..8");
      o.layers = (int32_t)v;
      break;
    case O_NEURONS:
      if (!cli_parse_int(arg, 1, DC_MLP_MAX_WIDTH, &v))
        return cli_usage_error(cmd, "--neurons needs 1..1024");
      o.neurons = (int32_t)v;
      break;
    case O_SEED:
      if (!cli_parse_int(arg, 1, 2147483647L, &v))
        return cli_usage_error(cmd, "--seed needs a positive integer");
      o.seed = (uint64_t)v;
      break;
    case O_VERBOSE: o.verbose = true; break;
    default:
      if (!kind) {
        kind = arg;
      } else if (nfiles < (int)DC_COUNTOF(files)) {
        files[nfiles++] = arg;
      } else {
        return cli_usage_error(cmd, "too many CSV files");
      }
    }
  }
  if (!kind || nfiles == 0)
    return cli_usage_error(cmd, "expected KIND and at least one CSV file");
  if (!dc_kernel_kind_parse(kind, &o.kind) ||
      (o.kind != DC_KERNEL_GEMM && o.kind != DC_KERNEL_TRANSPOSE &&
       o.kind != DC_KERNEL_TRIL_FWD && o.kind != DC_KERNEL_TRIL_BWD))
    return cli_usage_error(cmd, "KIND must be gemm, transpose, tril_fwd "
                                   "or tril_bwd, not '%s'", kind);
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_buf rep = {0}, yaml = {0}, head = {0};
  int rc = CLI_EXIT_OK;
  dc_fit_sample *all = NULL;
  int32_t n_all = 0;
  for (int f = 0; f < nfiles; f++) {
    dc_fit_sample *s;
    int32_t n;
    if (!dc_fit_load_csv(o.kind, files[f], &s, &n, &a, &d)) continue;
    dc_fit_sample *m = dc_arena_array(&a, (size_t)(n_all + n + 1), sizeof *m);
    if (n_all) memcpy(m, all, (size_t)n_all * sizeof *m);
    memcpy(m + n_all, s, (size_t)n * sizeof *m);
    all = m;
    n_all += n;
  }
  dc_mlp model;
  if (gate_of && !d.errors) {
    rc = gate_only(gate_of, &o, all, n_all, out, &a, &d);
    goto done;
  }
  if (d.errors || !dc_fit_run(&o, all, n_all, &model, &rep, &a, &d)) {
    rc = CLI_EXIT_INPUT;
    goto done;
  }
  dc_buf_printf(&head, "# Fitted MLP regressor (the paper's §III-B2): "
                "dlrmc fit %s", kind);
  for (int f = 0; f < nfiles; f++) {
    const char *b = strrchr(files[f], '/');
    dc_buf_printf(&head, " %s", b ? b + 1 : files[f]);
  }
  dc_buf_puts(&head, "\n");
  /* the report, as comments, so the model says how good it is */
  const char *p = rep.data;
  while (p && *p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (strncmp(p, "grid ", 5) != 0) {
      dc_buf_puts(&head, "# ");
      dc_buf_append(&head, p, len);
      dc_buf_putc(&head, '\n');
    }
    p = nl ? nl + 1 : p + len;
  }
  dc_mlp_write_yaml(&model, head.data, &yaml);
  if (!cli_write_file_atomic(out, yaml.data, yaml.len)) {
    rc = CLI_EXIT_INPUT;
    goto done;
  }
  fputs(rep.data, out && strcmp(out, "-") != 0 ? stdout : stderr);
done:
  if (d.count) cli_report(&d);
  dc_buf_free(&rep);
  dc_buf_free(&yaml);
  dc_buf_free(&head);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return rc;
}

const cli_command cli_cmd_fit_def = {
    "fit", cmd_fit,
    "dlrmc fit gemm|transpose|tril_fwd|tril_bwd DATA.csv... [-o MODEL.yaml] "
    "[--grid small|full] [--epochs N] [--layers N] [--neurons N] [--seed N] "
    "[-v] [--gate-of MODEL.yaml]",
    "Fit the MLP kernel-time regressor of a kernel kind to benchmark data.",
    "Trains the paper's MLP regressor (features: ln of batch, m, n, k and "
    "0/1 flags\n"
    "for transposes, half precision, tf32, diag; target: ln of the time in "
    "us;\n"
    "loss: MSE). 80 % of the rows train, 20 % (fixed seed) are held out and "
    "reported:\n"
    "GMAE = exp(mean(ln|pred/real - 1|)), mean and std of pred/real - 1, per "
    "GPU and\n"
    "dtype. The grid search picks a configuration on a validation fifth of "
    "the 80 %.\n"
    "  --grid small   hidden layers {3,4} x neurons {32,64} x Adam x lr "
    "{1e-3,5e-3}\n"
    "                 (default; about a minute; models small enough to "
    "embed)\n"
    "  --grid full    the paper's Table II: layers 3-7 x neurons "
    "128-1024 x\n"
    "                 {Adam, SGD} x lr {1e-4 ... 1e-2} (SGD x10): 280 "
    "trainings,\n"
    "                 hours on a laptop\n"
    "CSV columns (any order, '#' comment lines): gemm "
    "batch,m,n,k,transa,transb,dtype,time_us\n"
    "(DeepBench's gpu,precision,m,n,k,transa,transb,time_us also works); "
    "transpose\n"
    "batch,m,n,dtype,time_us; tril_fwd/tril_bwd batch,m,n,diag,dtype,time_us."
    "\n"
    "Same data and options give the same model, byte for byte. The model\n"
    "records its training rows and a gate radius (the 95th percentile of\n"
    "the held-out rows' distances to them, in ln units) and prices only\n"
    "kernels that near a training row of their precision; the analytic\n"
    "model prices the others. --gate-of MODEL.yaml adds that gate to a\n"
    "model fitted before gates existed (same CSVs and --seed), weights\n"
    "untouched. Install a model as\n"
    "spec/kernels/<gpu name, lowercase>/<kind>.yaml and rebuild.\n\n"
    "  dlrmc fit gemm v100_fp32.csv v100_fp16.csv -o gemm.yaml\n"};
