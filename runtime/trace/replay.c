/*
 * replay.c — `dlrmc replay`: predicts a recorded iteration from its
 * execution trace and, given the Kineto trace of the same run, says how
 * wrong the prediction is (spec/replay.md).
 *
 * 1. The ET becomes a dc_graph (et_graph.c): ops, tensors and the kernel
 *    each op launches.
 * 2. Matching ET ops to Kineto CPU events (replay_match.c): by
 *    record-function id (ET `rf_id` = Kineto `Record function id`) when
 *    both traces carry it, else by op order, per thread, by sequence
 *    alignment within the step that shares most names with the ET.
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
 * Several execution traces (one per rank) go to replay_ranks.c. For
 * `dlrmc calibrate`, the matched kernels with their measured times
 * (dc_replay_samples).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/replay_int.h"

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

/* ---- measured and predicted kernel times --------------------------------- */

double rp_ktime(void *ctx, const dc_launch *l, int32_t rank) {
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
    src->path = r->et_path;
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


static int cmp_iv(const void *pa, const void *pb) {
  const int64_t *a = pa, *b = pb;
  return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* The length of the union of n intervals (sorted here). */
static int64_t union_ns(int64_t (*iv)[2], size_t n) {
  qsort(iv, n, sizeof *iv, cmp_iv);
  int64_t total = 0, cur_a = 0, cur_b = INT64_MIN;
  for (size_t i = 0; i < n; i++) {
    if (iv[i][0] > cur_b) {
      if (cur_b > cur_a) total += cur_b - cur_a;
      cur_a = iv[i][0];
      cur_b = iv[i][1];
    } else if (iv[i][1] > cur_b) {
      cur_b = iv[i][1];
    }
  }
  if (n && cur_b > cur_a) total += cur_b - cur_a;
  return total;
}

/* HTA's kernel classes (its get_comm_comp_overlap): a communication
 * kernel is named ^nccl.*Kernel; a computation kernel is any other
 * kernel whose name has no Memcpy, Memset or Sync in it. */
static bool hta_comm(const char *nm) {
  return strncmp(nm, "nccl", 4) == 0 && strstr(nm, "Kernel");
}

static bool hta_comp(const char *nm) {
  return !hta_comm(nm) && !strstr(nm, "Memcpy") && !strstr(nm, "Memset") &&
         !strstr(nm, "Sync");
}

void rp_measure(replay *r, iter *it) {
  const dc_trace *t = &r->t;
  const dc_graph *g = r->g;
  int64_t lo = INT64_MAX, hi = INT64_MIN, cpu_end = INT64_MIN;
  for (int32_t j = 0; j < g->n_ops; j++) {
    /* a record_function scope (a Kineto user_annotation, whether or not
     * the graph prices it as an op) is not a CPU op: neither its span
     * nor the GPU work launched directly under it is the ops' */
    if (r->match[j] < 0 || t->ev[r->match[j]].kind != DC_TRACE_OP) continue;
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
  if (r->lo_override > lo && r->lo_override < hi) lo = r->lo_override;
  memset(it, 0, sizeof *it);
  r->win_lo = lo;
  r->win_hi = hi;
  if (lo == INT64_MAX || hi <= lo) return;
  /* the union of GPU activity inside the window; HTA's communication
   * and computation kernels in it (0: GPU activity, 1: communication,
   * 2: computation, 3: both classes) */
  size_t n = 0, nc[4] = {0};
  int64_t(*iv)[2] = dc_xmalloc((4 * t->n_ev + 1) * sizeof *iv);
  int64_t(*cl[4])[2] = {iv, iv + t->n_ev, iv + 2 * t->n_ev, iv + 3 * t->n_ev};
  for (size_t i = 0; i < t->n_ev; i++) {
    const dc_trace_event *x = &t->ev[i];
    if (!dc_trace_kind_is_gpu(x->kind)) continue;
    int64_t a = x->ts_ns > lo ? x->ts_ns : lo;
    int64_t b = x->ts_ns + x->dur_ns < hi ? x->ts_ns + x->dur_ns : hi;
    if (b <= a) continue;
    const char *nm = t->names[x->name];
    int c = x->kind != DC_TRACE_KERNEL ? 0 : hta_comm(nm) ? 1
            : hta_comp(nm)                                ? 2
                                                          : 0;
    cl[0][nc[0]][0] = a;
    cl[0][nc[0]++][1] = b;
    for (int q = 1; q <= 2; q++)
      if (c == q) {
        cl[q][nc[q]][0] = cl[3][nc[3]][0] = a;
        cl[q][nc[q]++][1] = cl[3][nc[3]++][1] = b;
      }
  }
  n = nc[0];
  int64_t active = union_ns(cl[0], nc[0]);
  int64_t comm = union_ns(cl[1], nc[1]), comp = union_ns(cl[2], nc[2]);
  int64_t both = union_ns(cl[3], nc[3]);
  free(iv);
  it->comm_us = (double)comm / 1000.0;
  /* |comm ∩ comp| = |comm| + |comp| − |comm ∪ comp| */
  it->overlap_us = (double)(comm + comp - both) / 1000.0;
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

void rp_put_err(dc_buf *out, double pred, double meas) {
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
  dc_buf_printf(out, "# dlrmc replay: %s\n\n", r->et_path);
  dc_buf_printf(out,
                "- execution trace: schema %s, %lld nodes, %d ops, %d "
                "kernels priced, %d ops unpriced%s%s\n",
                r->e.schema, (long long)r->e.n_nodes, g->n_ops,
                count_kernels(g) - r->n_measured_unpriced, r->e.n_unpriced,
                r->e.n_device > 0 ? "; its device nodes (a linked trace's) "
                                    "not read: the ops' kernels are priced"
                                  : "",
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
      rp_put_err(out, pv[i], mv[i]);
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
      rp_put_err(out, r->pred_us[j], r->meas_us[j]);
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

/* ---- one rank: its pair loaded, matched and measured ------------------- */

bool rp_rank_match(replay *r) {
  int32_t n = r->g->n_ops;
  r->pred_us = dc_arena_array(r->a, (size_t)n + 1, sizeof *r->pred_us);
  r->meas_us = dc_arena_array(r->a, (size_t)n + 1, sizeof *r->meas_us);
  for (int32_t j = 0; j < n; j++)
    r->meas_us[j] = -1;
  if (!r->k_path) return true;
  dc_trace_steps_sel sel = {0};
  if (!dc_trace_model_build(&r->t, &sel, &r->m, r->d)) {
    dc_trace_free(&r->t);
    r->k_path = NULL;
    return false;
  }
  dc_trace_attrib_build(&r->m, &r->at);
  r->have_k = true;
  rp_match_ops(r);
  for (int32_t j = 0; j < n; j++)
    if (r->g->ops[j].n_launches || r->e.ops[j].unpriced)
      r->meas_us[j] = own_gpu_us(r, j);
  tf32_from_kernels(r);
  add_measured(r);
  return true;
}

static bool rank_load(replay *r) {
  if (!dc_et_import(r->et_path, &r->e, r->a, r->d)) return false;
  r->g = r->e.g;
  r->pid = -1;
  if (r->k_path && !dc_trace_load(r->k_path, &r->t, r->a, r->d)) {
    r->k_path = NULL;
    return false;
  }
  return rp_rank_match(r);
}

void rp_rank_free(replay *r) {
  if (!r->have_k) return;
  dc_trace_attrib_free(&r->at);
  dc_trace_model_free(&r->m);
  dc_trace_free(&r->t);
  r->have_k = false;
}

bool rp_single(const dc_replay_opts *o, const char *et, const char *k,
                   dc_buf *out, dc_arena *a, dc_diags *d) {
  replay r = {0};
  r.o = o;
  r.a = a;
  r.d = d;
  r.et_path = et;
  r.k_path = k;
  bool ok = false;
  if (!dc_device_lookup(o->gpu, &r.dev, a, d)) return false;
  r.km = dc_kmodels_for(&r.dev);
  if (!rank_load(&r)) goto done;
  if (!load_profile(&r)) goto done;
  int32_t n = r.g->n_ops;
  for (int32_t j = 0; j < n; j++)
    r.pred_us[j] =
        r.g->ops[j].n_launches ? rp_ktime(&r, &r.g->ops[j].launches[0], 0) : -1;
  dc_eval_opts eo = {&r.prof, rp_ktime, &r, false};
  dc_eval_result res;
  if (!dc_eval_graph(r.g, &eo, a, &res, d)) goto done;
  iter it = {0};
  if (r.have_k) rp_measure(&r, &it);
  if (o->csv)
    report_csv(&r, &res, &it, out);
  else
    report_md(&r, &res, &it, out);
  ok = true;
done:
  rp_rank_free(&r);
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
  dc_replay_opts o = {0};
  replay r = {0};
  r.o = &o;
  r.a = a;
  r.d = d;
  r.dev = *dev;
  r.km = dc_kmodels_for(&r.dev);
  r.et_path = et_path;
  r.k_path = kineto_path;
  if (!rank_load(&r) || !r.have_k) {
    rp_rank_free(&r);
    return false;
  }
  int32_t nops = r.g->n_ops;
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
      us = r.meas_us[j];
    } else if (r.e.ops[j].has_whole && is_lookup(r.e.ops[j].whole.kind) &&
               !lookup_below(&r, j)) {
      k = &r.e.ops[j].whole;
      us = dc_trace_attrib_of(&r.at, (size_t)r.match[j]).us;
    }
    if (!k || !(us > 0) || dc_kernel_is_collective(k->kind)) continue;
    v[*n] = (dc_fit_sample){*k, us, dc_kernel_kind_name(k->kind)};
    (*n)++;
  }
  rp_rank_free(&r);
  return true;
}
