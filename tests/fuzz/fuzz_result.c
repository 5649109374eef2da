/*
 * fuzz_result.c — libFuzzer target from a study to its result: what the
 * front end accepts (parsed from memory, every check run) is lowered,
 * built into a graph (graphgen, the planner for `plan: auto`), priced
 * (kernel models, overhead profile) and evaluated by runtime's sweep
 * executor, which writes the JSON-lines table and each point's timeline
 * to sinks that check and drop them. Sizes are bounded so that one input
 * runs in milliseconds: the first FUZZ_POINTS points only, and a point
 * with more than 8 tables, 4 GPUs, 6 MLP layers, 3 cross layers or 6
 * capacity candidates is skipped (a diagnostic, not a bug), as is a study
 * whose GPU or overhead profile is a path (the other targets read those
 * files). Any crash, hang or sanitizer report is a bug, and so is a
 * failed run without an error diagnostic, or a row or timeline holding
 * "inf" or "nan". Built with clang -fsanitize=fuzzer when DC_FUZZ=ON;
 * corpus_replay.c drives the same function over the corpus under any
 * compiler.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "kernels/kernels.h"
#include "runtime/plan/plan.h"
#include "runtime/runtime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_POINTS 2

typedef struct fuzz_src {
  const dc_study *s;
  int64_t n;
} fuzz_src;

static bool bounded(const dc_point *p) {
  return p->n_tables <= 8 && p->gpus <= 4 && p->hosts <= 4 &&
         p->n_bottom <= 6 && p->n_top <= 6 && p->dcn_layers <= 3 &&
         p->n_transforms <= 8 &&
         (int64_t)p->n_capacity_gpus * p->n_capacity_types <= 6;
}

static const dc_graph *build(void *ctx, int64_t index,
                                dc_graph_detail detail, dc_arena *a,
                             dc_diags *d) {
  const fuzz_src *f = ctx;
  dc_point *p = dc_arena_alloc(a, sizeof *p);
  dc_study_point(f->s, index, a, p);
  if (!bounded(p)) {
    dc_diag_error(d, DC_DIAG_NON_FINITE, (dc_span){0}, "fuzz: too large");
    return NULL;
  }
  return dc_plan_build_graph(p, detail, a, d);
}

static int64_t baseline(void *ctx, int64_t index) {
  const fuzz_src *f = ctx;
  int64_t b = dc_study_baseline_of(f->s, index);
  return b < f->n ? b : -1;
}

/* No number leaves dlrmc as inf or nan: a bare inf or nan
 * token where JSON has a number (after ':', ',' or '[', or their '-').
 * (No memcmp: libFuzzer hooks every call.) */
static void no_nonfinite(const char *text, size_t len) {
  for (size_t i = 2; i + 3 <= len; i++) {
    char c = text[i];
    if (c != 'i' && c != 'n') continue;
    bool word = (c == 'i' && text[i + 1] == 'n' && text[i + 2] == 'f') ||
                (c == 'n' && text[i + 1] == 'a' && text[i + 2] == 'n');
    char b = text[i - 1] == '-' ? text[i - 2] : text[i - 1];
    if (word && (b == ':' || b == ',' || b == '[')) abort();
  }
}

static size_t table_bytes, timeline_bytes; /* FUZZ_VERBOSE reports them */

static bool sink(void *ctx, const char *data, size_t len) {
  (void)ctx;
  table_bytes += len;
  no_nonfinite(data, len);
  return true;
}

static bool timeline(void *ctx, int64_t index, const char *json, size_t len) {
  (void)ctx;
  (void)index;
  timeline_bytes += len;
  no_nonfinite(json, len);
  return true;
}

/* The study's GPUs and profiles: catalog names that load. */
static bool catalogs_ok(const dc_study *s) {
  static const char *const dirs[] = {"gpus", "overheads"};
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  bool ok = true;
  for (size_t k = 0; k < 2 && ok; k++) {
    const char **names;
    size_t n = dc_study_catalog_names(s, dirs[k], &a, &names);
    for (size_t i = 0; i < n && ok; i++) {
      if (dc_catalog_is_path(names[i])) {
        ok = false;
      } else if (k == 0) {
        dc_device dev;
        ok = dc_device_lookup(names[i], &dev, &a, &d);
      } else {
        dc_profile prof;
        ok = dc_profile_load(names[i], &prof, &a, &d);
      }
    }
  }
  dc_diags_free(&d);
  dc_arena_free(&a);
  return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 16)) return 0;
  char *text = dc_xmalloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  dc_diags d = {0};
  d.max_errors = 50;
  dc_study *s = dc_study_load_memory("fuzz.yaml", text, size, NULL, 0, &d);
  dc_diags_free(&d);
  if (s && catalogs_ok(s)) {
    fuzz_src f = {s, dc_study_point_count(s)};
    if (f.n > FUZZ_POINTS) f.n = FUZZ_POINTS;
    const char *const *params = NULL, *const *columns = NULL;
    size_t n_params = dc_study_params(s, &params);
    size_t n_columns = dc_study_columns(s, &columns);
    dc_sweep_source src = {&f,      f.n,     build,     baseline,
                           n_params, params, n_columns, columns,
                           dc_study_torchrec(s)};
    dc_sweep_opts o;
    memset(&o, 0, sizeof o);
    o.jobs = 1;
    o.shard_k = o.shard_n = 1;
    o.format = DC_FORMAT_JSONL;
    o.sink = sink;
    o.timeline_sink = timeline;
    o.precision = dc_study_precision(s);
    o.has_precision = o.precision >= 0;
    if (dc_study_capacity(s)) o.rows = DC_ROWS_CAPACITY;
    bool go = true;
    if (f.n > 0) {
      dc_arena pa;
      dc_arena_init(&pa);
      dc_point p0;
      dc_study_point(s, 0, &pa, &p0);
      go = bounded(&p0);
      dc_arena_free(&pa);
    }
    dc_diags e = {0};
    e.max_errors = 50;
    table_bytes = timeline_bytes = 0;
    bool ok = go && dc_sweep_run(&src, &o, &e);
    if (go && !ok && e.errors == 0) abort();
    if (getenv("FUZZ_VERBOSE"))
      fprintf(stderr, "fuzz_result: %lld points, %s, %zu table bytes, %zu "
              "timeline bytes, %zu errors\n", (long long)f.n,
              !go ? "skipped" : ok ? "ran" : "failed", table_bytes,
              timeline_bytes, e.errors);
    dc_diags_free(&e);
  }
  dc_study_free(s);
  dc_study_release_failed();
  free(text);
  return 0;
}
