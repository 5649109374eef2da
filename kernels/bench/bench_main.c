/*
 * bench_main.c — the dlrmc-bench driver: parse, build the sweep, and for
 * each configuration set it up, run the warm-up iterations, time each
 * measured iteration with CUPTI, and write one CSV row (median and mean
 * µs). The paper's protocol (§III-B) is the default: 5 warm-up and 30
 * measured iterations, default application clocks.
 *
 * The CSV is assembled in memory and written once at the end through a
 * temporary file and a rename, so a failed or interrupted sweep leaves no
 * truncated file. A configuration whose buffers do not fit in device
 * memory is skipped with a warning; any other CUDA, cuBLAS or CUPTI error
 * stops the run (exit 1). Without a GPU every command that needs one
 * exits 77, ctest's skip status, so the smoke test skips itself.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/bench/bench_run_int.h"

static void join_command(int argc, char **argv, dc_buf *out) {
  dc_buf_puts(out, "dlrmc-bench");
  for (int i = 1; i < argc; i++) {
    dc_buf_putc(out, ' ');
    dc_buf_puts(out, argv[i]);
  }
}

static int fail(const char *msg) {
  fprintf(stderr, "dlrmc-bench: error: %s\n", msg);
  return DC_BENCH_EXIT_FAIL;
}

static void config_text(const dc_bench_kind_info *k, const int64_t *v,
                        dc_buf *out) {
  for (int d = 0; d < k->n_dims; d++) {
    const dc_bench_dim *dim = &k->dims[d];
    dc_buf_printf(out, "%s%s=", d ? " " : "", dim->name);
    if (dim->words)
      dc_buf_puts(out, dim->words[v[d]]);
    else
      dc_buf_printf(out, "%lld", (long long)v[d]);
  }
}

static int devices(void) {
  dc_buf why = {0}, name = {0}, err = {0};
  int n = bn_device_count(&why);
  if (n == 0) {
    fprintf(stderr, "dlrmc-bench: no GPU: %s\n", why.data);
    dc_buf_free(&why);
    return DC_BENCH_EXIT_NO_GPU;
  }
  for (int i = 0; i < n; i++) {
    dc_bench_meta m = {0};
    dc_buf_clear(&name);
    if (!bn_device_meta(i, &m, &name, &err))
      return fail(err.data);
    printf("%d: %s (sm_%d%d, %d SMs, %lld MiB, %d MHz)\n", i, m.device,
           (int)m.cc_major, (int)m.cc_minor, (int)m.sms,
           (long long)(m.memory_bytes >> 20), (int)m.sm_clock_mhz);
  }
  dc_buf_free(&why);
  dc_buf_free(&name);
  dc_buf_free(&err);
  return DC_BENCH_EXIT_OK;
}

/* Times every configuration of `s` into `csv`. */
static bool run_sweep(const dc_bench_opts *o, const dc_bench_sweep *s,
                      const bn_ctx *ctx, dc_buf *csv, size_t *skipped,
                      dc_buf *err) {
  const dc_bench_kind_info *k = o->kind;
  double *t = dc_xmalloc((size_t)o->iters * sizeof *t);
  bool tty = isatty(STDERR_FILENO), ok = true;
  dc_buf what = {0};
  for (size_t i = 0; i < s->n && ok; i++) {
    const int64_t *v = dc_bench_sweep_at(s, i);
    dc_buf_clear(&what);
    config_text(k, v, &what);
    bn_case c = {0};
    bool oom = false;
    dc_buf why = {0};
    if (!bn_case_setup(k->kind, v, ctx, &c, &oom, &why)) {
      if (oom) {
        fprintf(stderr, "%sdlrmc-bench: warning: skipped %s: %s\n",
                tty ? "\n" : "", what.data, why.data);
        (*skipped)++;
        dc_buf_free(&why);
        continue;
      }
      dc_buf_printf(err, "%s: %s", what.data, why.data);
      dc_buf_free(&why);
      ok = false;
      break;
    }
    double us;
    int64_t records;
    for (int32_t w = 0; w < o->warmup && ok; w++)
      ok = c.run(c.state, ctx, &why);
    /* Discards the setup's and the warm-up's records. */
    ok = ok && bn_timer_collect(&us, &records, &why);
    for (int32_t it = 0; it < o->iters && ok; it++) {
      ok = c.run(c.state, ctx, &why) &&
           bn_timer_collect(&us, &records, &why);
      if (ok && records == 0) {
        dc_buf_puts(&why, "CUPTI recorded no kernel, memcpy or memset");
        ok = false;
      }
      t[it] = us;
    }
    c.release(c.state);
    if (!ok) {
      dc_buf_printf(err, "%s: %s", what.data, why.data);
      dc_buf_free(&why);
      break;
    }
    double mean = dc_bench_mean(t, (size_t)o->iters);
    double median = dc_bench_median(t, (size_t)o->iters);
    dc_bench_csv_row(csv, k, v, median, mean);
    if (tty)
      fprintf(stderr, "\r[%zu/%zu] %s: %.3f us\033[K", i + 1, s->n,
              what.data, median);
    dc_buf_free(&why);
  }
  if (tty)
    fputc('\n', stderr);
  dc_buf_free(&what);
  free(t);
  return ok;
}

static int run(const dc_bench_opts *o, int argc, char **argv) {
  dc_buf err = {0}, csv = {0}, cmd = {0}, name = {0};
  dc_bench_sweep s = {0};
  dc_bench_meta meta = {0};
  int rc = DC_BENCH_EXIT_FAIL;
  join_command(argc, argv, &cmd);
  meta.command = cmd.data;
  meta.warmup = o->warmup;
  meta.iters = o->iters;
  if (!dc_bench_sweep_build(o, &s, &err)) {
    fprintf(stderr, "dlrmc-bench: error: %s\n", err.data);
    rc = DC_BENCH_EXIT_USAGE;
    goto out;
  }
  if (o->list) { /* the sweep only: no GPU touched */
    meta.device = "none (--list: nothing was run)";
    dc_bench_csv_header(&csv, o->kind, &meta);
    for (size_t i = 0; i < s.n; i++)
      dc_bench_csv_row(&csv, o->kind, dc_bench_sweep_at(&s, i), -1, -1);
    rc = dc_file_write_atomic(o->out_path, csv.data, csv.len, &err)
             ? DC_BENCH_EXIT_OK
             : fail(err.data);
    goto out;
  }
  int n = bn_device_count(&err);
  if (n == 0) {
    fprintf(stderr, "dlrmc-bench: no GPU: %s\n", err.data);
    rc = DC_BENCH_EXIT_NO_GPU;
    goto out;
  }
  if (o->device >= n) {
    fprintf(stderr, "dlrmc-bench: error: --device %d: only %d device%s\n",
            (int)o->device, n, n == 1 ? "" : "s");
    rc = DC_BENCH_EXIT_USAGE;
    goto out;
  }
  cudaError_t ce = cudaSetDevice(o->device);
  if (ce != cudaSuccess) {
    rc = fail(cudaGetErrorString(ce));
    goto out;
  }
  if (!bn_device_meta(o->device, &meta, &name, &err) ||
      !bn_timer_start(&err)) {
    rc = fail(err.data);
    goto out;
  }
  bn_ctx ctx = {0};
  ctx.seed = o->seed;
  size_t skipped = 0;
  bool ok =
      bn_cuda_ok(cudaStreamCreateWithFlags(&ctx.stream,
                                           cudaStreamNonBlocking),
                 "cudaStreamCreate", NULL, &err) &&
      bn_cublas_ok(cublasCreate(&ctx.cublas), "cublasCreate", &err) &&
      bn_cublas_ok(cublasSetStream(ctx.cublas, ctx.stream),
                   "cublasSetStream", &err);
  if (ok) {
    dc_bench_csv_header(&csv, o->kind, &meta);
    ok = run_sweep(o, &s, &ctx, &csv, &skipped, &err);
  }
  if (ctx.cublas)
    cublasDestroy(ctx.cublas);
  if (ctx.stream)
    cudaStreamDestroy(ctx.stream);
  bn_timer_stop();
  if (!ok) {
    rc = fail(err.data);
    goto out;
  }
  if (!dc_file_write_atomic(o->out_path, csv.data, csv.len, &err)) {
    rc = fail(err.data);
    goto out;
  }
  fprintf(stderr,
          "dlrmc-bench: %s: %zu configurations timed, %zu skipped (device "
          "memory)%s%s\n",
          o->kind->name, s.n - skipped, skipped, o->out_path ? " -> " : "",
          o->out_path ? o->out_path : "");
  rc = DC_BENCH_EXIT_OK;
out:
  dc_bench_sweep_free(&s);
  dc_buf_free(&err);
  dc_buf_free(&csv);
  dc_buf_free(&cmd);
  dc_buf_free(&name);
  return rc;
}

int main(int argc, char **argv) {
  dc_bench_opts o;
  dc_buf err = {0}, hint = {0}, out = {0};
  if (!dc_bench_args_parse(argc, argv, &o, &err, &hint)) {
    fprintf(stderr, "dlrmc-bench: error: %s\n", err.data);
    if (hint.len)
      fprintf(stderr, "  = help: %s\n", hint.data);
    dc_buf_free(&err);
    dc_buf_free(&hint);
    return DC_BENCH_EXIT_USAGE;
  }
  int rc = DC_BENCH_EXIT_OK;
  switch (o.action) {
  case DC_BENCH_ACT_HELP:
    if (o.kind)
      dc_bench_help_kind(o.kind, &out);
    else
      dc_bench_help_overview(&out);
    fputs(out.data, stdout);
    break;
  case DC_BENCH_ACT_VERSION:
    printf("dlrmc-bench %s\n", DC_BENCH_VERSION);
    break;
  case DC_BENCH_ACT_DEVICES:
    rc = devices();
    break;
  case DC_BENCH_ACT_RUN:
    rc = run(&o, argc, argv);
    break;
  }
  dc_buf_free(&out);
  return rc;
}
