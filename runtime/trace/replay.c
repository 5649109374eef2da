/*
 * replay.c — `dlrmc replay`: predicts a recorded iteration from its
 * execution trace and, given the Kineto trace of the same run, says how
 * wrong the prediction is (spec/replay.md).
 *
 * 1. The ET becomes a dc_graph (et_graph.c): ops, tensors and the kernel
 *    each op launches.
 * 2. Matching ET ops to Kineto CPU events: by record-function id (ET
 *    `rf_id` = Kineto `Record function id`) when both traces carry it,
 *    else by op order — the ET's ops in start order against the Kineto
 *    CPU events in time order, each ET op taking the next event of its
 *    name within a window of REPLAY_WINDOW events (ops the other trace
 *    lacks are skipped, not fatal). With ProfilerStep windows the order
 *    match is tried from each step's first event and the step that
 *    matches most ops is the iteration compared.
 * 3. Each matched op that launches a kernel gets the GPU activity its
 *    Kineto event launched (attrib.c), less what its own launching
 *    descendants launched; an op no model prices is priced by that
 *    measured time when it has one; a float GEMM whose kernel ran on
 *    TF32 tensor cores is priced as TF32 (the ET cannot say).
 * 4. The graph is evaluated (runtime/eval.c) with the named overhead
 *    profile, or with the profile extracted from the Kineto trace itself
 *    (`self`, the paper's per-workload mode; the default with a trace).
 * 5. The report compares per iteration: E2E (the step's window, else the
 *    matched ops' span with the GPU work they launched), GPU active (the
 *    union of GPU activity in the window), GPU idle, CPU (window start to
 *    the end of the last matched top-level op); per kernel family the
 *    GMAE and the signed mean of predicted/measured − 1 over matched
 *    kernels; and the 20 worst kernels with their shapes.
 * 6. For `dlrmc calibrate`, the matched kernels with their measured times
 *    (dc_replay_samples).
 *
 * (About 740 lines, over the house's ~700: the calibration samples need
 * the matching state and its static helpers, which a second file would
 * have to export only for them.)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/trace.h"

#define REPLAY_WINDOW 256
#define REPLAY_WORST  20

enum { FAM_GEMM, FAM_EMB, FAM_EW, FAM_COPY, FAM_COLL, FAM_N };
static const char *const fam_name[FAM_N] = {"GEMM", "embedding", "element-wise",
                                            "copies", "collectives"};

static int family_of(dc_kernel_kind k) {
  switch (k) {
  case DC_KERNEL_GEMM:
    return FAM_GEMM;
  case DC_KERNEL_EMBEDDING_FWD:
  case DC_KERNEL_EMBEDDING_BWD:
    return FAM_EMB;
  case DC_KERNEL_CONCAT:
  case DC_KERNEL_MEMCPY_H2D:
  case DC_KERNEL_MEMCPY_D2H:
  case DC_KERNEL_MEMCPY_D2D:
    return FAM_COPY;
  default:
    return dc_kernel_is_collective(k) ? FAM_COLL : FAM_EW;
  }
}

typedef struct replay {
  const dc_replay_opts *o;
  dc_et_graph e;
  dc_graph *g;
  dc_arena *a;
  dc_diags *d;
  /* Kineto */
  bool have_k;
  dc_trace t;
  dc_trace_model m;
  dc_trace_attrib at;
  int32_t *match; /* per op: Kineto event, -1 */
  int32_t n_matched, n_matchable;
  bool by_rf;
  int32_t step; /* the step compared, -1: none */
  /* pricing */
  dc_device dev;
  const dc_kmodels *km;
  double *pred_us; /* per op: its kernel's predicted time, -1 */
  double *meas_us; /* per op: the GPU time it launched itself, -1 */
  int32_t n_measured_unpriced;
  int32_t n_fp32_gemm; /* matched float GEMM ops with a recorded kernel */
  int32_t n_tf32;      /* those priced as TF32 from their kernels */
  dc_launch *mlaunch;  /* the unpriced ops' launches, priced as measured */
  double *mtime_us;    /* [n_measured_unpriced] */
  dc_profile prof;
  const char *prof_name;
} replay;

/* ---- matching ------------------------------------------------------------ */

static bool is_cpu_op(uint8_t k) {
  return k == DC_TRACE_OP || k == DC_TRACE_ANNOT;
}

/* The Kineto CPU events (ops and annotations) in time order. */
static uint32_t *kineto_ops(const dc_trace *t, size_t *n) {
  uint32_t *v = dc_xmalloc((t->n_ev + 1) * sizeof *v);
  size_t k = 0;
  for (size_t i = 0; i < t->n_ev; i++)
    if (is_cpu_op(t->ev[i].kind)) v[k++] = (uint32_t)i;
  /* insertion into time order: Kineto writes CPU events nearly sorted */
  for (size_t i = 1; i < k; i++) {
    uint32_t x = v[i];
    size_t j = i;
    while (j > 0 && (t->ev[v[j - 1]].ts_ns > t->ev[x].ts_ns ||
                     (t->ev[v[j - 1]].ts_ns == t->ev[x].ts_ns &&
                      t->ev[v[j - 1]].dur_ns < t->ev[x].dur_ns))) {
      v[j] = v[j - 1];
      j--;
    }
    v[j] = x;
  }
  *n = k;
  return v;
}

static const char *ev_name(const replay *r, int32_t ev) {
  return r->t.names[r->t.ev[ev].name];
}

/* By record-function id: the ids must be recorded on most ops of both. */
static int32_t match_by_rf(replay *r) {
  const dc_trace *t = &r->t;
  int64_t max_rf = 0;
  int32_t with = 0;
  for (size_t i = 0; i < t->n_ev; i++) {
    const dc_trace_args *a = dc_trace_args_of(t, i);
    if (a && a->record_function_id > max_rf) max_rf = a->record_function_id;
  }
  for (int32_t j = 0; j < r->g->n_ops; j++)
    with += r->e.ops[j].rf_id > 0;
  if (max_rf <= 0 || with * 2 < r->g->n_ops || max_rf > INT32_MAX - 1)
    return -1;
  int32_t *by = dc_xmalloc(((size_t)max_rf + 1) * sizeof *by);
  for (int64_t i = 0; i <= max_rf; i++)
    by[i] = -1;
  for (size_t i = 0; i < t->n_ev; i++) {
    const dc_trace_args *a = dc_trace_args_of(t, i);
    if (a && a->record_function_id > 0 && is_cpu_op(t->ev[i].kind))
      by[a->record_function_id] = (int32_t)i;
  }
  int32_t n = 0;
  for (int32_t j = 0; j < r->g->n_ops; j++) {
    int64_t rf = r->e.ops[j].rf_id;
    r->match[j] = -1;
    if (rf <= 0 || rf > max_rf || by[rf] < 0) continue;
    if (strcmp(ev_name(r, by[rf]), r->g->ops[j].name) != 0) continue;
    r->match[j] = by[rf];
    n++;
  }
  free(by);
  return n;
}

/* By op order from Kineto position `from` (see the header). */
static int32_t match_from(replay *r, const uint32_t *k, size_t n_k, size_t from,
                          int32_t *out) {
  size_t p = from;
  int32_t n = 0;
  for (int32_t j = 0; j < r->g->n_ops; j++) {
    out[j] = -1;
    for (size_t q = p; q < n_k && q < p + REPLAY_WINDOW; q++)
      if (strcmp(ev_name(r, (int32_t)k[q]), r->g->ops[j].name) == 0) {
        out[j] = (int32_t)k[q];
        p = q + 1;
        n++;
        break;
      }
  }
  return n;
}

static void match_ops(replay *r) {
  int32_t n_ops = r->g->n_ops;
  r->match = dc_arena_array(r->a, (size_t)n_ops + 1, sizeof *r->match);
  r->step = -1;
  int32_t n = match_by_rf(r);
  if (n > 0) {
    r->by_rf = true;
    r->n_matched = n;
  } else {
    size_t n_k;
    uint32_t *k = kineto_ops(&r->t, &n_k);
    int32_t *try = dc_xmalloc(((size_t)n_ops + 1) * sizeof *try);
    int32_t best = -1;
    /* where the iteration may start: each step's first event, else each
     * event named as the ET's first op (the ET is one of the iterations
     * the Kineto trace holds) */
    size_t n_from = 0, cap_from = r->m.n_steps ? r->m.n_steps : 256;
    size_t *froms = dc_xmalloc((cap_from + 1) * sizeof *froms);
    if (r->m.n_steps) {
      for (size_t s = 0; s < r->m.n_steps; s++) {
        size_t from = 0;
        while (from < n_k && r->t.ev[k[from]].ts_ns < r->m.steps[s].ts_ns)
          from++;
        froms[n_from++] = from;
      }
    } else {
      for (size_t q = 0; q < n_k && n_from < cap_from && n_ops > 0; q++)
        if (strcmp(ev_name(r, (int32_t)k[q]), r->g->ops[0].name) == 0)
          froms[n_from++] = q;
      if (n_from == 0) froms[n_from++] = 0;
    }
    for (size_t s = 0; s < n_from; s++) {
      int32_t got = match_from(r, k, n_k, froms[s], try);
      if (got > best) {
        best = got;
        memcpy(r->match, try, (size_t)n_ops * sizeof *try);
      }
    }
    free(froms);
    r->n_matched = best > 0 ? best : 0;
    free(try);
    free(k);
  }
  /* the step the first matched unit falls in */
  for (int32_t j = 0; j < n_ops && r->m.n_steps; j++)
    if (r->match[j] >= 0 && dc_op_is_unit(r->g, j)) {
      int64_t ts = r->t.ev[r->match[j]].ts_ns;
      for (size_t s = 0; s < r->m.n_steps; s++)
        if (ts >= r->m.steps[s].ts_ns && ts < r->m.steps[s].end_ns)
          r->step = (int32_t)s;
      break;
    }
  for (int32_t j = 0; j < n_ops; j++)
    r->n_matchable++;
}

/* ---- measured and predicted kernel times --------------------------------- */

static double ktime(void *ctx, const dc_launch *l, int32_t rank) {
  (void)rank;
  replay *r = ctx;
  /* an unpriced op's launch carries its measured time (add_measured) */
  if (r->mlaunch && l >= r->mlaunch && l < r->mlaunch + r->n_measured_unpriced)
    return r->mtime_us[l - r->mlaunch];
  return dc_kernel_time(&l->k, &r->dev, r->km);
}

/* GPU time op j's Kineto event launched itself: its subtree's, less that
 * of its descendants that launch in the graph (they are compared on
 * their own). -1 when j is unmatched. */
static double own_gpu_us(replay *r, int32_t j) {
  if (r->match[j] < 0) return -1;
  double us = dc_trace_attrib_of(&r->at, (size_t)r->match[j]).us;
  const dc_graph *g = r->g;
  for (int32_t c = j + 1; c < g->ops[j].end; c++)
    if ((g->ops[c].n_launches || r->e.ops[c].unpriced) && r->match[c] >= 0) {
      us -= dc_trace_attrib_of(&r->at, (size_t)r->match[c]).us;
      c = g->ops[c].end - 1; /* its subtree is counted in it */
    }
  return us > 0 ? us : 0;
}

/* TF32: an ET records a float GEMM as float whether or not it ran on
 * TF32 tensor cores (allow_tf32 is not recorded); the matched op's
 * kernel says what ran — the rule `trace kernels` labels its rows with
 * (krows.c) — and its FP32 GEMM launches are priced as TF32. */
static void tf32_from_kernels(replay *r) {
  dc_graph *g = r->g;
  for (int32_t j = 0; j < g->n_ops; j++) {
    dc_op *o = &g->ops[j];
    bool fp32 = false;
    for (int32_t i = 0; i < o->n_launches; i++)
      fp32 |= o->launches[i].k.kind == DC_KERNEL_GEMM &&
              o->launches[i].k.u.gemm.dtype == DC_DTYPE_FP32;
    if (!fp32 || r->match[j] < 0) continue;
    dc_trace_launched L = dc_trace_attrib_of(&r->at, (size_t)r->match[j]);
    const char *gk = dc_trace_gemm_kernel(&r->t, &L);
    if (!gk) continue; /* no GEMM kernel recorded (a CPU run) */
    r->n_fp32_gemm++;
    if (!dc_trace_kernel_is_tf32(gk)) continue;
    for (int32_t i = 0; i < o->n_launches; i++)
      if (o->launches[i].k.kind == DC_KERNEL_GEMM &&
          o->launches[i].k.u.gemm.dtype == DC_DTYPE_FP32)
        o->launches[i].k.u.gemm.dtype = DC_DTYPE_TF32;
    r->n_tf32++;
  }
}

/* Unpriced ops with measured GPU time launch one kernel of that time
 * (an element-wise descriptor that ktime never prices). */
static void add_measured(replay *r) {
  dc_graph *g = r->g;
  int32_t n = 0;
  for (int32_t j = 0; j < g->n_ops; j++)
    n += r->e.ops[j].unpriced && r->meas_us[j] > 0;
  r->mlaunch = dc_arena_array(r->a, (size_t)n + 1, sizeof *r->mlaunch);
  r->mtime_us = dc_arena_array(r->a, (size_t)n + 1, sizeof *r->mtime_us);
  for (int32_t j = 0; j < g->n_ops; j++) {
    if (!r->e.ops[j].unpriced || r->meas_us[j] <= 0) continue;
    int32_t k = r->n_measured_unpriced++;
    dc_launch *l = &r->mlaunch[k];
    l->k.kind = DC_KERNEL_ELEMENTWISE;
    l->k.scale = 1.0;
    l->runtime = "cudaLaunchKernel";
    r->mtime_us[k] = r->meas_us[j];
    g->ops[j].launches = l;
    g->ops[j].n_launches = 1;
  }
}

/* The profile: named, or `self` (extracted from the Kineto trace), the
 * default when that trace ran on a GPU. A trace recorded on the CPU
 * times the computation inside every op, not the host's overhead around
 * a launch, so its default is paper-v100. */
static bool load_profile(replay *r) {
  const char *name = r->o->overheads;
  bool gpu = false;
  for (size_t i = 0; r->have_k && i < r->t.n_ev && !gpu; i++)
    gpu = dc_trace_kind_is_gpu(r->t.ev[i].kind);
  if (!name) name = gpu ? "self" : "paper-v100";
  r->prof_name = name;
  if (strcmp(name, "self") != 0)
    return dc_profile_load(name, &r->prof, r->a, r->d);
  if (!r->have_k) {
    dc_source *src = dc_arena_alloc(r->a, sizeof *src);
    src->path = r->o->et_path;
    src->text = "";
    dc_diag *gd =
        dc_diag_error(r->d, DC_DIAG_BAD_TRACE, (dc_span){src, 0, 0, 0},
                      "--overheads self needs the Kineto trace "
                      "of the run");
    dc_diag_set_help(gd, "give KINETO.json after the execution trace, or "
                         "name a profile (paper-v100, ...)");
    return false;
  }
  dc_ovh_acc *acc = dc_ovh_acc_new();
  dc_ovh_acc_add(acc, &r->m, dc_ovh_measure_correction(&r->m));
  dc_ovh_acc_profile(acc, "self", r->t.path, &r->prof, r->a);
  dc_ovh_acc_free(acc);
  return true;
}

/* ---- the measured iteration ---------------------------------------------- */

typedef struct iter {
  double e2e_us, active_us, idle_us, cpu_us;
  bool gpu; /* the window holds GPU activity */
} iter;

static int cmp_iv(const void *pa, const void *pb) {
  const int64_t *a = pa, *b = pb;
  return a[0] < b[0] ? -1 : a[0] > b[0];
}

static void measure(replay *r, iter *it) {
  const dc_trace *t = &r->t;
  const dc_graph *g = r->g;
  int64_t lo = INT64_MAX, hi = INT64_MIN, cpu_end = INT64_MIN;
  for (int32_t j = 0; j < g->n_ops; j++) {
    if (r->match[j] < 0) continue;
    const dc_trace_event *e = &t->ev[r->match[j]];
    if (dc_op_is_unit(g, j)) {
      if (e->ts_ns < lo) lo = e->ts_ns;
      if (e->ts_ns + e->dur_ns > cpu_end) cpu_end = e->ts_ns + e->dur_ns;
    }
    if (e->ts_ns + e->dur_ns > hi) hi = e->ts_ns + e->dur_ns;
    dc_trace_launched L = dc_trace_attrib_of(&r->at, (size_t)r->match[j]);
    for (uint32_t k = 0; k < L.n; k++) {
      const dc_trace_event *x = &t->ev[L.gpu[k]];
      if (x->ts_ns + x->dur_ns > hi) hi = x->ts_ns + x->dur_ns;
    }
  }
  if (r->step >= 0) {
    lo = r->m.steps[r->step].ts_ns;
    hi = r->m.steps[r->step].end_ns;
  }
  memset(it, 0, sizeof *it);
  if (lo == INT64_MAX || hi <= lo) return;
  /* the union of GPU activity inside the window */
  size_t n = 0;
  int64_t(*iv)[2] = dc_xmalloc((t->n_ev + 1) * sizeof *iv);
  for (size_t i = 0; i < t->n_ev; i++) {
    const dc_trace_event *x = &t->ev[i];
    if (!dc_trace_kind_is_gpu(x->kind)) continue;
    int64_t a = x->ts_ns > lo ? x->ts_ns : lo;
    int64_t b = x->ts_ns + x->dur_ns < hi ? x->ts_ns + x->dur_ns : hi;
    if (b <= a) continue;
    iv[n][0] = a;
    iv[n][1] = b;
    n++;
  }
  qsort(iv, n, sizeof *iv, cmp_iv);
  int64_t active = 0, cur_a = 0, cur_b = INT64_MIN;
  for (size_t i = 0; i < n; i++) {
    if (iv[i][0] > cur_b) {
      if (cur_b > cur_a) active += cur_b - cur_a;
      cur_a = iv[i][0];
      cur_b = iv[i][1];
    } else if (iv[i][1] > cur_b) {
      cur_b = iv[i][1];
    }
  }
  if (n && cur_b > cur_a) active += cur_b - cur_a;
  free(iv);
  it->gpu = n > 0;
  it->e2e_us = (double)(hi - lo) / 1000.0;
  it->active_us = (double)active / 1000.0;
  it->idle_us = it->e2e_us - it->active_us;
  it->cpu_us = cpu_end > lo ? (double)(cpu_end - lo) / 1000.0 : 0;
}

/* ---- the report -----------------------------------------------------------
 */

typedef struct fam_stat {
  int32_t n;
  double pred_us, meas_us, gmae, mean;
} fam_stat;

typedef struct worst {
  int32_t op;
  double err;
} worst;

static int cmp_worst(const void *pa, const void *pb) {
  const worst *a = pa, *b = pb;
  if (fabs(a->err) != fabs(b->err)) return fabs(a->err) < fabs(b->err) ? 1 : -1;
  return a->op - b->op;
}

static void families(const replay *r, fam_stat *fs, worst *w, int32_t *n_w) {
  const dc_graph *g = r->g;
  double *p = dc_xmalloc(((size_t)g->n_ops + 1) * sizeof *p);
  double *m = dc_xmalloc(((size_t)g->n_ops + 1) * sizeof *m);
  *n_w = 0;
  for (int f = 0; f < FAM_N; f++) {
    int32_t n = 0;
    memset(&fs[f], 0, sizeof fs[f]);
    for (int32_t j = 0; j < g->n_ops; j++) {
      if (r->e.ops[j].unpriced || !g->ops[j].n_launches ||
          family_of(g->ops[j].launches[0].k.kind) != f)
        continue;
      if (r->pred_us[j] <= 0 || r->meas_us[j] <= 0) continue;
      p[n] = r->pred_us[j];
      m[n] = r->meas_us[j];
      fs[f].pred_us += p[n];
      fs[f].meas_us += m[n];
      w[(*n_w)++] = (worst){j, p[n] / m[n] - 1};
      n++;
    }
    double sd;
    fs[f].n = n;
    dc_fit_errors(p, m, n, &fs[f].gmae, &fs[f].mean, &sd);
  }
  free(p);
  free(m);
  qsort(w, (size_t)*n_w, sizeof *w, cmp_worst);
}

static void put_shapes(const dc_graph *g, const dc_op *o, dc_buf *out) {
  for (int32_t i = 0; i < o->n_inputs && i < 4; i++) {
    const dc_tensor *x = &g->tensors[o->inputs[i]];
    dc_buf_puts(out, i ? " " : "");
    dc_buf_putc(out, '[');
    for (int32_t d = 0; d < x->ndim; d++)
      dc_buf_printf(out, "%s%lld", d ? "," : "", (long long)x->shape[d]);
    dc_buf_putc(out, ']');
  }
  if (o->n_inputs > 4) dc_buf_puts(out, " ...");
}

static void put_err(dc_buf *out, double pred, double meas) {
  if (meas > 0 && isfinite(pred / meas))
    dc_buf_printf(out, "%+.1f %%", 100.0 * (pred / meas - 1));
  else
    dc_buf_puts(out, "-");
}

static int32_t count_kernels(const dc_graph *g) {
  int32_t n = 0;
  for (int32_t j = 0; j < g->n_ops; j++)
    n += g->ops[j].n_launches;
  return n;
}

static void report_md(const replay *r, const dc_eval_result *res,
                      const iter *it, dc_buf *out) {
  const dc_graph *g = r->g;
  const dc_eval_rank *pr = &res->ranks[0];
  dc_buf_printf(out, "# dlrmc replay: %s\n\n", r->o->et_path);
  dc_buf_printf(out,
                "- execution trace: schema %s, %lld nodes, %d ops, %d "
                "kernels priced, %d ops unpriced%s\n",
                r->e.schema, (long long)r->e.n_nodes, g->n_ops,
                count_kernels(g) - r->n_measured_unpriced, r->e.n_unpriced,
                r->e.cpu_only ? "; recorded on the CPU: priced as if every "
                                "tensor were on the GPU"
                              : "");
  dc_buf_printf(out, "- device: %s; overheads: %s\n", r->o->gpu,
                strcmp(r->prof_name, "self") == 0
                    ? "self (extracted from the Kineto trace)"
                    : r->prof_name);
  if (!r->have_k) {
    dc_buf_printf(out, "- no Kineto trace: predictions only\n\n");
  } else {
    dc_buf_printf(out,
                  "- Kineto trace: %s; %d of %d ops matched by %s; "
                  "iteration: %s\n",
                  r->t.path, r->n_matched, r->n_matchable,
                  r->by_rf ? "record-function id" : "op order",
                  r->step >= 0 ? "its ProfilerStep window"
                               : "the matched ops' span");
    if (r->n_fp32_gemm)
      dc_buf_printf(out,
                    "- %d of %d float GEMM ops priced as TF32 (their "
                    "kernels ran on TF32 tensor cores)\n",
                    r->n_tf32, r->n_fp32_gemm);
    if (r->n_measured_unpriced)
      dc_buf_printf(out,
                    "- %d unpriced ops priced by their measured GPU "
                    "time\n",
                    r->n_measured_unpriced);
    dc_buf_putc(out, '\n');
  }
  dc_buf_puts(out, "## Iteration\n\n| metric | predicted ms | measured ms "
                   "| error |\n|---|---:|---:|---:|\n");
  const char *names[4] = {"E2E", "GPU active", "GPU idle", "CPU"};
  double pv[4] = {pr->e2e_us, pr->gpu_active_us, pr->e2e_us - pr->gpu_active_us,
                  pr->cpu_us};
  double mv[4] = {it->e2e_us, it->active_us, it->idle_us, it->cpu_us};
  for (int i = 0; i < 4; i++) {
    bool cmp = r->have_k && it->e2e_us > 0 && it->gpu;
    dc_buf_printf(out, "| %s | %.3f | ", names[i], pv[i] / 1000.0);
    if (cmp) {
      dc_buf_printf(out, "%.3f | ", mv[i] / 1000.0);
      put_err(out, pv[i], mv[i]);
    } else {
      dc_buf_puts(out, "- | -");
    }
    dc_buf_puts(out, " |\n");
  }
  if (r->have_k && !it->gpu)
    dc_buf_puts(out, "\nThe Kineto trace has no GPU activity (a run on the "
                     "CPU): nothing of the iteration's time can be "
                     "compared — not E2E, GPU active and idle, nor any "
                     "kernel — and the CPU time measured includes the "
                     "computation the GPU would do. What was checked: the "
                     "ops matched above, and the prediction of the same "
                     "graph on the GPU.\n");
  if (!r->have_k) return;
  fam_stat fs[FAM_N];
  worst *w = dc_xmalloc(((size_t)g->n_ops + 1) * sizeof *w);
  int32_t n_w;
  families(r, fs, w, &n_w);
  dc_buf_puts(out, "\n## Kernels by family (matched kernels)\n\n| family | "
                   "matched | predicted ms | measured ms | GMAE | mean "
                   "error |\n|---|---:|---:|---:|---:|---:|\n");
  for (int f = 0; f < FAM_N; f++) {
    dc_buf_printf(out, "| %s | %d | ", fam_name[f], fs[f].n);
    if (fs[f].n)
      dc_buf_printf(out, "%.3f | %.3f | %.1f %% | %+.1f %% |\n",
                    fs[f].pred_us / 1000, fs[f].meas_us / 1000,
                    100 * fs[f].gmae, 100 * fs[f].mean);
    else
      dc_buf_puts(out, "- | - | - | - |\n");
  }
  if (n_w) {
    dc_buf_printf(out,
                  "\n## The %d worst kernels\n\n| op | kernel | "
                  "shapes | predicted us | measured us | error "
                  "|\n|---|---|---|---:|---:|---:|\n",
                  n_w < REPLAY_WORST ? n_w : REPLAY_WORST);
    for (int32_t i = 0; i < n_w && i < REPLAY_WORST; i++) {
      int32_t j = w[i].op;
      const dc_op *o = &g->ops[j];
      dc_buf_printf(out, "| %s | %s | ", o->name,
                    dc_kernel_kind_name(o->launches[0].k.kind));
      put_shapes(g, o, out);
      dc_buf_printf(out, " | %.1f | %.1f | ", r->pred_us[j], r->meas_us[j]);
      put_err(out, r->pred_us[j], r->meas_us[j]);
      dc_buf_puts(out, " |\n");
    }
  }
  free(w);
  if (r->e.n_unpriced) {
    dc_buf_puts(out, "\n## Unpriced ops (no kernel model)\n\n```\n");
    dc_et_unpriced_write(&r->e, out);
    dc_buf_puts(out, "```\n");
  }
}

static void report_csv(const replay *r, const dc_eval_result *res,
                       const iter *it, dc_buf *out) {
  const dc_eval_rank *pr = &res->ranks[0];
  dc_buf_puts(out, "row,matched,predicted_us,measured_us,gmae,mean_error\n");
  const char *names[4] = {"e2e", "gpu_active", "gpu_idle", "cpu"};
  double pv[4] = {pr->e2e_us, pr->gpu_active_us, pr->e2e_us - pr->gpu_active_us,
                  pr->cpu_us};
  double mv[4] = {it->e2e_us, it->active_us, it->idle_us, it->cpu_us};
  for (int i = 0; i < 4; i++) {
    bool cmp = r->have_k && it->e2e_us > 0 && it->gpu && mv[i] > 0;
    dc_buf_printf(out, "%s,,%.3f,", names[i], pv[i]);
    if (cmp)
      dc_buf_printf(out, "%.3f,,%.4f\n", mv[i], pv[i] / mv[i] - 1);
    else
      dc_buf_puts(out, ",,\n");
  }
  if (!r->have_k) return;
  fam_stat fs[FAM_N];
  worst *w = dc_xmalloc(((size_t)r->g->n_ops + 1) * sizeof *w);
  int32_t n_w;
  families(r, fs, w, &n_w);
  free(w);
  for (int f = 0; f < FAM_N; f++) {
    dc_buf_printf(out, "%s,%d,", fam_name[f], fs[f].n);
    if (fs[f].n)
      dc_buf_printf(out, "%.3f,%.3f,%.4f,%.4f\n", fs[f].pred_us, fs[f].meas_us,
                    fs[f].gmae, fs[f].mean);
    else
      dc_buf_puts(out, ",,,\n");
  }
}

/* ---- the run --------------------------------------------------------------
 */

bool dc_replay(const dc_replay_opts *o, dc_buf *out, dc_arena *a, dc_diags *d) {
  replay r = {0};
  r.o = o;
  r.a = a;
  r.d = d;
  bool ok = false;
  if (!dc_device_lookup(o->gpu, &r.dev, a, d)) return false;
  r.km = dc_kmodels_for(&r.dev);
  if (!dc_et_import(o->et_path, &r.e, a, d)) return false;
  r.g = r.e.g;
  int32_t n = r.g->n_ops;
  r.pred_us = dc_arena_array(a, (size_t)n + 1, sizeof *r.pred_us);
  r.meas_us = dc_arena_array(a, (size_t)n + 1, sizeof *r.meas_us);
  for (int32_t j = 0; j < n; j++)
    r.meas_us[j] = -1;
  if (o->kineto_path) {
    if (!dc_trace_load(o->kineto_path, &r.t, a, d)) return false;
    dc_trace_steps_sel sel = {0};
    if (!dc_trace_model_build(&r.t, &sel, &r.m, d)) {
      dc_trace_free(&r.t);
      return false;
    }
    dc_trace_attrib_build(&r.m, &r.at);
    r.have_k = true;
    match_ops(&r);
    for (int32_t j = 0; j < n; j++)
      if (r.g->ops[j].n_launches || r.e.ops[j].unpriced)
        r.meas_us[j] = own_gpu_us(&r, j);
    tf32_from_kernels(&r);
    add_measured(&r);
  }
  if (!load_profile(&r)) goto done;
  for (int32_t j = 0; j < n; j++)
    r.pred_us[j] =
        r.g->ops[j].n_launches ? ktime(&r, &r.g->ops[j].launches[0], 0) : -1;
  dc_eval_opts eo = {&r.prof, ktime, &r, false};
  dc_eval_result res;
  if (!dc_eval_graph(r.g, &eo, a, &res, d)) goto done;
  iter it = {0};
  if (r.have_k) measure(&r, &it);
  if (o->csv)
    report_csv(&r, &res, &it, out);
  else
    report_md(&r, &res, &it, out);
  ok = true;
done:
  if (r.have_k) {
    dc_trace_attrib_free(&r.at);
    dc_trace_model_free(&r.m);
    dc_trace_free(&r.t);
  }
  return ok;
}

/* ---- samples for calibration ------------------------------------------ */

static bool is_lookup(dc_kernel_kind k) {
  return k == DC_KERNEL_EMBEDDING_FWD || k == DC_KERNEL_EMBEDDING_BWD;
}

/* Whether an op of j's subtree (j excluded) launches a lookup or is a
 * composite lookup itself: the deepest one is the sample. */
static bool lookup_below(const replay *r, int32_t j) {
  const dc_graph *g = r->g;
  for (int32_t c = j + 1; c < g->ops[j].end; c++) {
    if (r->e.ops[c].has_whole && is_lookup(r->e.ops[c].whole.kind))
      return true;
    for (int32_t i = 0; i < g->ops[c].n_launches; i++)
      if (is_lookup(g->ops[c].launches[i].k.kind)) return true;
  }
  return false;
}

bool dc_replay_samples(const char *et_path, const char *kineto_path,
                       const dc_device *dev, dc_fit_sample **s, int32_t *n,
                       dc_arena *a, dc_diags *d) {
  dc_replay_opts o = {.et_path = et_path, .kineto_path = kineto_path};
  replay r = {0};
  r.o = &o;
  r.a = a;
  r.d = d;
  r.dev = *dev;
  if (!dc_et_import(et_path, &r.e, a, d)) return false;
  r.g = r.e.g;
  int32_t nops = r.g->n_ops;
  if (!dc_trace_load(kineto_path, &r.t, a, d)) return false;
  dc_trace_steps_sel sel = {0};
  if (!dc_trace_model_build(&r.t, &sel, &r.m, d)) {
    dc_trace_free(&r.t);
    return false;
  }
  dc_trace_attrib_build(&r.m, &r.at);
  match_ops(&r);
  tf32_from_kernels(&r);
  int32_t cap = *n + nops + 1;
  dc_fit_sample *v = dc_xrealloc(*s, (size_t)cap * sizeof *v);
  *s = v;
  for (int32_t j = 0; j < nops; j++) {
    if (r.match[j] < 0) continue;
    const dc_op *op = &r.g->ops[j];
    const dc_kernel *k = NULL;
    double us = -1;
    if (op->n_launches && !r.e.ops[j].unpriced) {
      k = &op->launches[0].k;
      us = own_gpu_us(&r, j);
    } else if (r.e.ops[j].has_whole && is_lookup(r.e.ops[j].whole.kind) &&
               !lookup_below(&r, j)) {
      k = &r.e.ops[j].whole;
      us = dc_trace_attrib_of(&r.at, (size_t)r.match[j]).us;
    }
    if (!k || !(us > 0) || dc_kernel_is_collective(k->kind)) continue;
    v[*n] = (dc_fit_sample){*k, us, dc_kernel_kind_name(k->kind)};
    (*n)++;
  }
  dc_trace_attrib_free(&r.at);
  dc_trace_model_free(&r.m);
  dc_trace_free(&r.t);
  return true;
}
