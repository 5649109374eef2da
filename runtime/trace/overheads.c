/*
 * overheads.c — host overheads T1–T5 from the event tree (the
 * paper's §III-C and Fig. 6; the extraction rules the authors used are
 * in owensgroup/ml_perf_model).
 *
 * For each top-level op O with descendants D (same thread, by time
 * containment) and launches L1..Lk (descendant runtime calls that launched
 * GPU activity, matched by correlation, or cudaStreamSynchronize /
 * cudaDeviceSynchronize), with c = 2 µs per profiled CPU event:
 *   T2 = L1.start − O.start − c·#{d ∈ D \ L : d.start < L1.start}
 *   T5 = L(j+1).start − Lj.end − c·#{d : Lj.end ≤ d.start < L(j+1)}
 *   T3 = O.end − Lk.end − c·#{d : d.start ≥ Lk.end}
 *   no launch: T5 = O.dur − c·|D|   (the op's whole CPU time)
 * For consecutive top-level ops A, B on one thread with the same parent
 * (container) in the same step, gap = B.start − A.end:
 *   T1 (of B) = gap − c, kept only when 2 < gap < 200 µs.
 * For every runtime call R (per call name), W its blocking wait (the time
 * it waited for the GPU, tree.c; 0 for an asynchronous call):
 *   T4 = R.dur − W − c − (R launched GPU activity ? 4 µs : 0)
 * (the GPU-event profiler overhead of 4 µs is paid by the launching call;
 * the authors' stored launch T4 is 10 − 2 − 4 µs for the same reason).
 * The wait is not host overhead: the evaluator makes the host wait for
 * the GPU at a synchronising op (max(cpu, GPU end)), so a T4 that kept
 * it would count it twice. On the A100 trace the blocking D2H copies wait
 * 12.6 ms per step (of 73 ms of host time).
 * kernel_gap: on each stream, the gap between consecutive GPU activities
 * when the second one had already been launched before the first one
 * ended (so the gap is the GPU's own, not the host's).
 *
 * Every sample is clamped at 0, then per (op, type) the IQR rule drops
 * values outside [Q1 − 1.5·IQR, Q3 + 1.5·IQR]; we store mean, std and
 * count. `defaults` are the pooled means of the kept samples of all ops
 * (T4: of launching calls only, since the evaluator charges T4 per
 * launch). Samples of several traces are pooled before the statistics,
 * which gives the paper's "shared" overheads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/trace.h"

typedef struct samples {
  double *v;
  size_t n, cap;
} samples;

static void push(samples *s, double x) {
  if (x < 0) x = 0;
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 16;
    s->v = dc_xrealloc(s->v, s->cap * sizeof *s->v);
  }
  s->v[s->n++] = x;
}

typedef struct op_entry {
  char *name;
  samples t[DC_OVH_NTYPES_];
} op_entry;

typedef struct call_entry {
  char *name;
  samples t4;
} call_entry;

struct dc_ovh_acc {
  dc_map op_index, call_index; /* name -> entry */
  op_entry **ops;
  size_t n_ops;
  call_entry **calls;
  size_t n_calls;
  samples launch_t4; /* T4 of calls that launched GPU activity */
  samples gap;       /* kernel_gap */
  int64_t n_tops;
};

dc_ovh_acc *dc_ovh_acc_new(void) {
  return dc_xcalloc(1, sizeof(dc_ovh_acc));
}

void dc_ovh_acc_free(dc_ovh_acc *acc) {
  if (!acc) return;
  for (size_t i = 0; i < acc->n_ops; i++) {
    for (int k = 0; k < DC_OVH_NTYPES_; k++)
      free(acc->ops[i]->t[k].v);
    free(acc->ops[i]->name);
    free(acc->ops[i]);
  }
  for (size_t i = 0; i < acc->n_calls; i++) {
    free(acc->calls[i]->t4.v);
    free(acc->calls[i]->name);
    free(acc->calls[i]);
  }
  free(acc->ops);
  free(acc->calls);
  free(acc->launch_t4.v);
  free(acc->gap.v);
  dc_map_free(&acc->op_index);
  dc_map_free(&acc->call_index);
  free(acc);
}

int64_t dc_ovh_acc_ops(const dc_ovh_acc *acc) {
  return acc->n_tops;
}

static op_entry *op_get(dc_ovh_acc *acc, const char *name) {
  op_entry *e = dc_map_get(&acc->op_index, name);
  if (e) return e;
  e = dc_xcalloc(1, sizeof *e);
  e->name = dc_xstrdup(name);
  acc->ops = dc_xrealloc(acc->ops, (acc->n_ops + 1) * sizeof *acc->ops);
  acc->ops[acc->n_ops++] = e;
  dc_map_put(&acc->op_index, name, e);
  return e;
}

static call_entry *call_get(dc_ovh_acc *acc, const char *name) {
  call_entry *e = dc_map_get(&acc->call_index, name);
  if (e) return e;
  e = dc_xcalloc(1, sizeof *e);
  e->name = dc_xstrdup(name);
  acc->calls = dc_xrealloc(acc->calls, (acc->n_calls + 1) * sizeof *acc->calls);
  acc->calls[acc->n_calls++] = e;
  dc_map_put(&acc->call_index, name, e);
  return e;
}

static double us(int64_t ns) {
  return (double)ns / 1000.0;
}

/* A runtime call the evaluator charges as a launch: one that launched
 * GPU activity, or a synchronisation call. */
static bool is_launch(const dc_trace_model *m, uint32_t ei) {
  const dc_trace_event *e = &m->t->ev[ei];
  return e->kind == DC_TRACE_RUNTIME &&
         (m->n_gpu[ei] > 0 || dc_trace_is_sync_call(m->t->names[e->name]));
}

/* A host collective that waited (tree.c): its span is no T2/T3/T5. */
static bool is_coll_wait(const dc_trace_model *m, uint32_t ei) {
  return m->t->ev[ei].kind != DC_TRACE_RUNTIME && m->wait_ns[ei] > 0;
}

/* The points an op's host time is cut at: launches and host collectives. */
static bool is_cut(const dc_trace_model *m, uint32_t ei) {
  return is_launch(m, ei) || is_coll_wait(m, ei);
}

/* The T1 gap before top-level op i (µs), or -1 when it is not sampled:
 * the previous top-level op is on another thread, under another
 * container or in another step, or the gap is outside the kept range. */
static double t1_gap(const dc_trace_model *m, size_t i) {
  if (i == 0) return -1;
  const dc_trace *t = m->t;
  const dc_trace_top *tp = &m->tops[i], *pv = &m->tops[i - 1];
  const dc_trace_event *o = &t->ev[tp->ev], *p = &t->ev[pv->ev];
  if (p->thread != o->thread || pv->parent != tp->parent ||
      pv->step != tp->step)
    return -1;
  double gap = us(o->ts_ns - (p->ts_ns + p->dur_ns));
  return gap > DC_TRACE_T1_MIN_US && gap < DC_TRACE_T1_MAX_US ? gap : -1;
}

/* raw − corr, the correction taking at most half of the interval. */
static double corrected(double raw, double corr) {
  if (raw <= 0) return raw;
  return raw - (corr < raw / 2 ? corr : raw / 2);
}

/* T4 of runtime call ei: its span less its wait and the profiler's cost
 * (formula at the top of the file). */
static double call_t4(const dc_trace_model *m, uint32_t ei,
                      dc_ovh_correction c) {
  const dc_trace_event *e = &m->t->ev[ei];
  bool gpu = m->n_gpu[ei] > 0;
  return corrected(us(e->dur_ns - m->wait_ns[ei]),
                   c.cpu_us + (gpu ? c.gpu_us : 0.0));
}

static void push_if(op_entry *oe, int k, double x) {
  if (oe) push(&oe->t[k], x);
}

/* T2, T3, T5 of one top-level op (formulas at the top of the file),
 * pushed as samples when `oe` is given. Returns the op's host time as
 * those samples measure it: the samples (clamped at 0 as pushed), the T4
 * of its launch calls and every wait — the op's span, less what the
 * profiler cost in each piece, the correction the samples carry. */
static double op_samples(const dc_trace_model *m, const dc_trace_top *tp,
                         op_entry *oe, dc_ovh_correction cc) {
  const dc_trace *t = m->t;
  const dc_trace_event *o = &t->ev[tp->ev];
  double c = cc.cpu_us;
  int64_t o_end = o->ts_ns + o->dur_ns;
  double x;
  if (is_coll_wait(m, tp->ev)) { /* the op is a collective: its rest */
    x = corrected(us(o->dur_ns - m->wait_ns[tp->ev]),
                  c * (double)(tp->end_desc - tp->first_desc));
    push_if(oe, DC_OVH_T5, x);
    return (x > 0 ? x : 0) + us(m->wait_ns[tp->ev]);
  }
  bool any = false;
  int64_t prev_end = 0;
  int pending = 0;
  double host = 0;
  for (uint32_t j = tp->first_desc; j < tp->end_desc; j++) {
    uint32_t ei = m->cpu[j];
    const dc_trace_event *e = &t->ev[ei];
    if (is_cut(m, ei)) {
      x = corrected(us(e->ts_ns - (any ? prev_end : o->ts_ns)), c * pending);
      push_if(oe, any ? DC_OVH_T5 : DC_OVH_T2, x);
      host += x > 0 ? x : 0;
      host += us(m->wait_ns[ei]);
      if (e->kind == DC_TRACE_RUNTIME) {
        double t4 = call_t4(m, ei, cc);
        host += t4 > 0 ? t4 : 0;
      }
      any = true;
      pending = 0;
      prev_end = e->ts_ns + e->dur_ns;
    } else if (!any || e->ts_ns >= prev_end) {
      pending++; /* events inside a launch call belong to its T4 */
    }
  }
  if (any)
    x = corrected(us(o_end - prev_end), c * pending);
  else
    x = corrected(us(o->dur_ns), c * (double)(tp->end_desc - tp->first_desc));
  push_if(oe, any ? DC_OVH_T3 : DC_OVH_T5, x);
  return host + (x > 0 ? x : 0);
}

static const dc_trace_event *gap_ev;
static int cmp_gpu(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  const dc_trace_event *x = &gap_ev[a], *y = &gap_ev[b];
  if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
  if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
  return a < b ? -1 : a > b;
}

void dc_ovh_acc_add(dc_ovh_acc *acc, const dc_trace_model *m,
                    dc_ovh_correction c) {
  const dc_trace *t = m->t;
  /* T2, T3, T5 and T1. */
  for (size_t i = 0; i < m->n_tops; i++) {
    const dc_trace_top *tp = &m->tops[i];
    const dc_trace_event *o = &t->ev[tp->ev];
    op_entry *oe = op_get(acc, t->names[o->name]);
    op_samples(m, tp, oe, c);
    double gap = t1_gap(m, i);
    if (gap >= 0) push(&oe->t[DC_OVH_T1], corrected(gap, c.cpu_us));
  }
  acc->n_tops += (int64_t)m->n_tops;

  /* T4 per runtime call, in the selected steps. */
  for (size_t j = 0; j < m->n_cpu; j++) {
    uint32_t ei = m->cpu[j];
    const dc_trace_event *e = &t->ev[ei];
    if (e->kind != DC_TRACE_RUNTIME) continue;
    if (dc_trace_model_step_of(m, e->ts_ns) < 0) continue;
    double t4 = call_t4(m, ei, c);
    push(&call_get(acc, t->names[e->name])->t4, t4);
    if (m->n_gpu[ei] > 0) push(&acc->launch_t4, t4);
  }

  /* kernel_gap: back-to-back GPU activity on one stream. */
  size_t ng = 0;
  uint32_t *g = dc_xmalloc((t->n_ev ? t->n_ev : 1) * sizeof *g);
  for (size_t i = 0; i < t->n_ev; i++)
    if (dc_trace_kind_is_gpu(t->ev[i].kind)) g[ng++] = (uint32_t)i;
  gap_ev = t->ev;
  qsort(g, ng, sizeof *g, cmp_gpu);
  for (size_t k = 1; k < ng; k++) {
    const dc_trace_event *a = &t->ev[g[k - 1]], *b = &t->ev[g[k]];
    int32_t r = m->launcher[g[k]];
    if (a->thread != b->thread || r < 0) continue;
    const dc_trace_event *call = &t->ev[r];
    int64_t a_end = a->ts_ns + a->dur_ns;
    if (dc_trace_model_step_of(m, call->ts_ns) < 0) continue;
    if (call->ts_ns + call->dur_ns <= a_end && b->ts_ns >= a_end)
      push(&acc->gap, us(b->ts_ns - a_end));
  }
  free(g);
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return a < b ? -1 : a > b;
}

static double quantile(const double *v, size_t n, double q) {
  double pos = q * (double)(n - 1);
  size_t lo = (size_t)dc_f64_sat_i64(floor(pos));
  size_t hi = lo + 1 < n ? lo + 1 : lo;
  double f = pos - (double)lo;
  return v[lo] + (v[hi] - v[lo]) * f;
}

dc_stat dc_trace_iqr_stat(double *v, size_t n) {
  dc_stat s = {-1.0, 0.0, 0};
  if (n == 0) return s;
  qsort(v, n, sizeof *v, cmp_double);
  double q1 = quantile(v, n, 0.25), q3 = quantile(v, n, 0.75);
  double lo = q1 - 1.5 * (q3 - q1), hi = q3 + 1.5 * (q3 - q1);
  double sum = 0;
  int64_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (v[i] >= lo && v[i] <= hi) {
      sum += v[i];
      k++;
    }
  s.n = k;
  s.mean = sum / (double)k;
  double ss = 0;
  for (size_t i = 0; i < n; i++)
    if (v[i] >= lo && v[i] <= hi) ss += (v[i] - s.mean) * (v[i] - s.mean);
  s.std = k > 1 ? sqrt(ss / (double)(k - 1)) : 0.0;
  return s;
}

static dc_stat stat_of(const samples *s) {
  /* The statistics sort a copy: the accumulator stays reusable. */
  double *v = dc_xmalloc((s->n ? s->n : 1) * sizeof *v);
  if (s->n) memcpy(v, s->v, s->n * sizeof *v);
  dc_stat st = dc_trace_iqr_stat(v, s->n);
  free(v);
  return st;
}

static int cmp_op(const void *pa, const void *pb) {
  return strcmp(((const dc_op_overheads *)pa)->op,
                ((const dc_op_overheads *)pb)->op);
}

static int cmp_call(const void *pa, const void *pb) {
  return strcmp(((const dc_runtime_overheads *)pa)->call,
                ((const dc_runtime_overheads *)pb)->call);
}

void dc_ovh_acc_profile(const dc_ovh_acc *acc, const char *name,
                        const char *source, dc_profile *out, dc_arena *a) {
  memset(out, 0, sizeof *out);
  out->name = dc_arena_strdup(a, name);
  out->source = dc_arena_strdup(a, source);
  out->n_ops = acc->n_ops;
  out->ops = dc_arena_array(a, acc->n_ops ? acc->n_ops : 1, sizeof *out->ops);
  double sum[DC_OVH_NTYPES_] = {0};
  int64_t cnt[DC_OVH_NTYPES_] = {0};
  for (size_t i = 0; i < acc->n_ops; i++) {
    const op_entry *e = acc->ops[i];
    dc_op_overheads *o = &out->ops[i];
    o->op = dc_arena_strdup(a, e->name);
    dc_stat *dst[DC_OVH_NTYPES_] = {&o->t1, &o->t2, &o->t3, &o->t5};
    for (int k = 0; k < DC_OVH_NTYPES_; k++) {
      *dst[k] = stat_of(&e->t[k]);
      if (dst[k]->n > 0) {
        sum[k] += dst[k]->mean * (double)dst[k]->n;
        cnt[k] += dst[k]->n;
      }
    }
  }
  qsort(out->ops, out->n_ops, sizeof *out->ops, cmp_op);
  out->n_runtime = acc->n_calls;
  out->runtime =
      dc_arena_array(a, acc->n_calls ? acc->n_calls : 1, sizeof *out->runtime);
  for (size_t i = 0; i < acc->n_calls; i++) {
    out->runtime[i].call = dc_arena_strdup(a, acc->calls[i]->name);
    out->runtime[i].t4 = stat_of(&acc->calls[i]->t4);
  }
  qsort(out->runtime, out->n_runtime, sizeof *out->runtime, cmp_call);
  out->t1_us = cnt[DC_OVH_T1] ? sum[DC_OVH_T1] / (double)cnt[DC_OVH_T1] : 0;
  out->t2_us = cnt[DC_OVH_T2] ? sum[DC_OVH_T2] / (double)cnt[DC_OVH_T2] : 0;
  out->t3_us = cnt[DC_OVH_T3] ? sum[DC_OVH_T3] / (double)cnt[DC_OVH_T3] : 0;
  out->t5_us = cnt[DC_OVH_T5] ? sum[DC_OVH_T5] / (double)cnt[DC_OVH_T5] : 0;
  dc_stat t4 = stat_of(&acc->launch_t4);
  out->t4_us = t4.n > 0 ? t4.mean : 0;
  dc_stat gap = stat_of(&acc->gap);
  out->kernel_gap_us = gap.n > 0 ? gap.mean : DC_TRACE_DEFAULT_GAP_US;
}

/* ---- the measured correction and the self-consistency check ---------- */

dc_ovh_correction dc_ovh_measure_correction(const dc_trace_model *m) {
  const dc_trace *t = m->t;
  dc_ovh_correction c = {0.0, 0.0};
  samples gaps = {0};
  /* last[p + 1]: the previous child of parent position p (-1: root) */
  int32_t *last = dc_xmalloc((m->n_cpu + 1) * sizeof *last);
  for (size_t th = 0; th < m->n_threads; th++) {
    size_t lo = m->thread_start[th], hi = m->thread_start[th + 1];
    last[m->n_cpu] = -1; /* the thread's root */
    for (size_t j = lo; j < hi; j++) {
      const dc_trace_event *e = &t->ev[m->cpu[j]];
      size_t slot = m->parent[j] < 0 ? m->n_cpu : (size_t)m->parent[j];
      int32_t prev = last[slot];
      last[slot] = (int32_t)j;
      last[j] = -1; /* j has no child yet (parents precede children) */
      if (prev < 0 || dc_trace_model_step_of(m, e->ts_ns) < 0) continue;
      const dc_trace_event *a = &t->ev[m->cpu[prev]];
      int64_t gap = e->ts_ns - (a->ts_ns + a->dur_ns);
      if (gap >= 0) push(&gaps, us(gap));
    }
  }
  free(last);
  if (gaps.n > 0) {
    qsort(gaps.v, gaps.n, sizeof *gaps.v, cmp_double);
    c.cpu_us = quantile(gaps.v, gaps.n, 0.05);
  }
  free(gaps.v);
  return c;
}

void dc_ovh_host_check(const dc_trace_model *m, const dc_profile *p,
                       dc_ovh_correction c, double *measured_us,
                       double *predicted_us) {
  const dc_trace *t = m->t;
  double meas = 0, pred = 0;
  for (size_t i = 0; i < m->n_tops; i++) {
    const dc_trace_top *tp = &m->tops[i];
    const dc_trace_event *o = &t->ev[tp->ev];
    dc_op_cost oc = dc_profile_op(p, t->names[o->name]);
    /* measured: the op's span corrected piece by piece as its samples */
    meas += op_samples(m, tp, NULL, c);
    double gap = t1_gap(m, i);
    if (gap >= 0) {
      meas += corrected(gap, c.cpu_us);
      pred += oc.t1_us;
    }
    /* The op's host clock from its start: T2, then per launch call
     * (T5 before all but the first) a blocking call first waits until
     * the GPU work it waited on ended — measured, from the op's start,
     * max(clock, GPU end) as the evaluator's host sync — then its T4. */
    if (is_coll_wait(m, tp->ev)) { /* the op is a collective */
      pred += us(m->wait_ns[tp->ev]) + oc.t5_us;
      continue;
    }
    double clock = 0;
    bool any = false;
    for (uint32_t j = tp->first_desc; j < tp->end_desc; j++) {
      uint32_t ei = m->cpu[j];
      if (!is_cut(m, ei)) continue;
      const dc_trace_event *e = &t->ev[ei];
      clock += any ? oc.t5_us : oc.t2_us;
      any = true;
      if (m->wait_ns[ei] > 0) {
        double end = us(e->ts_ns + m->wait_ns[ei] - o->ts_ns);
        if (end > clock) clock = end;
      }
      if (e->kind == DC_TRACE_RUNTIME)
        clock += dc_profile_t4(p, t->names[e->name]);
    }
    pred += any ? clock + oc.t3_us : oc.t5_us;
  }
  *measured_us = meas;
  *predicted_us = pred;
}
