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
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/trace.h"

#define REPLAY_WINDOW 256
#define REPLAY_WORST  20
/* the alignment table's cells per thread (bytes); past it, greedy */
#define REPLAY_LCS_CELLS (UINT64_C(1) << 26)
/* starts tried without steps, and the work they may cost (comparisons) */
#define REPLAY_STARTS 64
#define REPLAY_WORK   (UINT64_C(1) << 28)

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

static const dc_trace *cmp_t; /* qsort's context (single-threaded) */

/* Time order; a parent (longer) before its child at one start; then the
 * order the trace wrote them. */
static int cmp_time(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  const dc_trace_event *x = &cmp_t->ev[a], *y = &cmp_t->ev[b];
  if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
  if (x->dur_ns != y->dur_ns) return x->dur_ns > y->dur_ns ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* The Kineto CPU events (ops and annotations) in time order. */
static uint32_t *kineto_ops(const dc_trace *t, size_t *n) {
  uint32_t *v = dc_xmalloc((t->n_ev + 1) * sizeof *v);
  size_t k = 0;
  for (size_t i = 0; i < t->n_ev; i++)
    if (is_cpu_op(t->ev[i].kind)) v[k++] = (uint32_t)i;
  cmp_t = t;
  qsort(v, k, sizeof *v, cmp_time);
  *n = k;
  return v;
}

static const char *ev_name(const replay *r, int32_t ev) {
  return r->t.names[r->t.ev[ev].name];
}

typedef struct rf_pair {
  int64_t rf;
  uint32_t ev;
} rf_pair;

static int cmp_rf(const void *pa, const void *pb) {
  const rf_pair *a = pa, *b = pb;
  if (a->rf != b->rf) return a->rf < b->rf ? -1 : 1;
  return a->ev < b->ev ? -1 : a->ev > b->ev;
}

/* By record-function id: the ids must be recorded on most ops of the ET
 * and on some of the trace's events. The trace's (id, event) pairs are
 * sorted and searched, so memory follows the events, not the ids'
 * values. Returns -1 when the ids are not there to match by. */
static int32_t match_by_rf(replay *r) {
  const dc_trace *t = &r->t;
  int32_t with = 0;
  for (int32_t j = 0; j < r->g->n_ops; j++)
    with += r->e.ops[j].rf_id > 0;
  if (with == 0 || with * 2 < r->g->n_ops) return -1;
  size_t n = 0;
  rf_pair *v = dc_xmalloc((t->n_ev + 1) * sizeof *v);
  for (size_t i = 0; i < t->n_ev; i++) {
    const dc_trace_args *a = dc_trace_args_of(t, i);
    if (a && a->record_function_id > 0 && is_cpu_op(t->ev[i].kind))
      v[n++] = (rf_pair){a->record_function_id, (uint32_t)i};
  }
  if (n == 0) {
    free(v);
    return -1;
  }
  qsort(v, n, sizeof *v, cmp_rf);
  int32_t got = 0;
  for (int32_t j = 0; j < r->g->n_ops; j++) {
    int64_t rf = r->e.ops[j].rf_id;
    r->match[j] = -1;
    if (rf <= 0) continue;
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (v[mid].rf < rf) lo = mid + 1;
      else hi = mid;
    }
    for (size_t q = lo; q < n && v[q].rf == rf; q++)
      if (strcmp(ev_name(r, (int32_t)v[q].ev), r->g->ops[j].name) == 0) {
        r->match[j] = (int32_t)v[q].ev;
        got++;
        break;
      }
  }
  free(v);
  return got;
}

/* Name ids: each ET op's index among the Kineto names (UINT32_MAX when
 * the trace never names it), by binary search over the name indices
 * sorted by text. */
static const char *const *cmp_names;

static int cmp_name_idx(const void *pa, const void *pb) {
  return strcmp(cmp_names[*(const uint32_t *)pa],
                cmp_names[*(const uint32_t *)pb]);
}

static uint32_t *op_name_ids(const replay *r) {
  const dc_trace *t = &r->t;
  uint32_t *by = dc_xmalloc((t->n_names + 1) * sizeof *by);
  for (uint32_t i = 0; i < t->n_names; i++)
    by[i] = i;
  cmp_names = t->names;
  qsort(by, t->n_names, sizeof *by, cmp_name_idx);
  uint32_t *id = dc_xmalloc(((size_t)r->g->n_ops + 1) * sizeof *id);
  for (int32_t j = 0; j < r->g->n_ops; j++) {
    const char *key = r->g->ops[j].name;
    size_t lo = 0, hi = t->n_names;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (strcmp(t->names[by[mid]], key) < 0) lo = mid + 1;
      else hi = mid;
    }
    id[j] = lo < t->n_names && strcmp(t->names[by[lo]], key) == 0
                ? by[lo]
                : UINT32_MAX;
  }
  free(by);
  return id;
}

/* What the order match works on: the CPU events in time order (k, with
 * each event's position in it), the ET ops' name ids, and which events
 * are taken. */
typedef struct omatch {
  uint32_t *k;   /* [n_k] event indices in time order */
  size_t n_k;
  uint32_t *pos; /* per event: its position in k, UINT32_MAX: none */
  uint32_t *nid; /* per ET op */
  bool *used;    /* per position */
} omatch;

/* Greedy from position `from`: each op takes the next event of its name
 * within REPLAY_WINDOW events (ops the trace lacks are skipped). No state
 * is kept: it only scores a start. */
static int32_t greedy_from(const replay *r, const omatch *om, size_t from,
                           int32_t *out) {
  size_t p = from;
  int32_t n = 0;
  for (int32_t j = 0; j < r->g->n_ops; j++) {
    out[j] = -1;
    if (om->nid[j] == UINT32_MAX) continue;
    for (size_t q = p; q < om->n_k && q < p + REPLAY_WINDOW; q++)
      if (r->t.ev[om->k[q]].name == om->nid[j]) {
        out[j] = (int32_t)om->k[q];
        p = q + 1;
        n++;
        break;
      }
  }
  return n;
}

/* The steps' scores: how many of the ET's ops each step's events could
 * match by name (a multiset overlap), one pass over the events. */
static int32_t best_step(const replay *r, const omatch *om, size_t *lo,
                         size_t *hi) {
  const dc_trace *t = &r->t;
  int32_t *want = dc_xcalloc(t->n_names + 1, sizeof *want);
  int32_t *seen = dc_xcalloc(t->n_names + 1, sizeof *seen);
  for (int32_t j = 0; j < r->g->n_ops; j++)
    if (om->nid[j] != UINT32_MAX) want[om->nid[j]]++;
  int32_t best = -1, best_score = -1;
  size_t p = 0;
  for (size_t s = 0; s < r->m.n_steps; s++) {
    const dc_trace_step *st = &r->m.steps[s];
    while (p < om->n_k && t->ev[om->k[p]].ts_ns < st->ts_ns)
      p++;
    size_t q = p;
    int32_t score = 0;
    for (; q < om->n_k && t->ev[om->k[q]].ts_ns < st->end_ns; q++) {
      uint32_t nm = t->ev[om->k[q]].name;
      score += ++seen[nm] <= want[nm];
    }
    for (size_t x = p; x < q; x++)
      seen[t->ev[om->k[x]].name] = 0;
    if (score > best_score) {
      best_score = score;
      best = (int32_t)s;
      *lo = p;
      *hi = q;
    }
    /* steps may overlap (nested): do not skip past this one's events */
  }
  free(want);
  free(seen);
  return best;
}

/* Longest common subsequence of the ET ops `a` (name ids) and the events
 * `b` (positions in k): the most ops matched in order. O(|a||b|) time
 * and bytes; the caller bounds the product. */
static int32_t lcs(const replay *r, const omatch *om, const int32_t *a,
                   int32_t na, const uint32_t *b, size_t nb, int32_t *match) {
  size_t w = nb + 1;
  int32_t *row = dc_xcalloc(2 * w, sizeof *row);
  uint8_t *dir = dc_xmalloc((size_t)na * nb + 1);
  for (int32_t i = 1; i <= na; i++) {
    int32_t *cur = row + (size_t)(i & 1) * w;
    const int32_t *prev = row + (size_t)((i - 1) & 1) * w;
    uint32_t nm = om->nid[a[i - 1]];
    cur[0] = 0;
    for (size_t j = 1; j <= nb; j++) {
      uint8_t d;
      int32_t v;
      if (nm != UINT32_MAX && r->t.ev[om->k[b[j - 1]]].name == nm) {
        v = prev[j - 1] + 1;
        d = 0;
      } else if (cur[j - 1] >= prev[j]) {
        v = cur[j - 1]; /* skip the event */
        d = 2;
      } else {
        v = prev[j]; /* skip the op */
        d = 1;
      }
      cur[j] = v;
      dir[(size_t)(i - 1) * nb + (j - 1)] = d;
    }
  }
  int32_t n = 0;
  int32_t i = na;
  size_t j = nb;
  while (i > 0 && j > 0) {
    uint8_t d = dir[(size_t)(i - 1) * nb + (j - 1)];
    if (d == 0) {
      match[a[i - 1]] = (int32_t)om->k[b[j - 1]];
      n++;
      i--;
      j--;
    } else if (d == 1) {
      i--;
    } else {
      j--;
    }
  }
  free(dir);
  free(row);
  return n;
}

/* Too large for the table: each op takes the first free event of its
 * name from a little before the last match to REPLAY_WINDOW after it
 * (a free event stays free, so a wrong far match does not lose the ops
 * between). */
static int32_t greedy_free(const replay *r, const omatch *om, const int32_t *a,
                           int32_t na, const uint32_t *b, size_t nb,
                           bool *taken, int32_t *match) {
  size_t last = 0;
  int32_t n = 0;
  for (int32_t i = 0; i < na; i++) {
    uint32_t nm = om->nid[a[i]];
    if (nm == UINT32_MAX) continue;
    size_t q0 = last > 32 ? last - 32 : 0;
    for (size_t q = q0; q < nb && q < last + REPLAY_WINDOW; q++)
      if (!taken[q] && r->t.ev[om->k[b[q]]].name == nm) {
        taken[q] = true;
        match[a[i]] = (int32_t)om->k[b[q]];
        last = q + 1;
        n++;
        break;
      }
  }
  return n;
}

/* Per thread: the ET's ops of each thread (0 main, 1 the others) against
 * the events of the Kineto threads whose names they share most, within
 * positions [lo, hi) of k. */
static void align_threads(replay *r, omatch *om, size_t lo, size_t hi) {
  const dc_trace *t = &r->t;
  const dc_graph *g = r->g;
  int32_t n_ops = g->n_ops;
  size_t nt = t->n_threads;
  /* which ET thread each Kineto thread's events go with */
  int32_t *want[2];
  int32_t *seen = dc_xcalloc(t->n_names + 1, sizeof *seen);
  int64_t *score = dc_xcalloc(2 * (nt + 1), sizeof *score);
  for (int c = 0; c < 2; c++) {
    want[c] = dc_xcalloc(t->n_names + 1, sizeof *want[c]);
    for (int32_t j = 0; j < n_ops; j++)
      if ((g->ops[j].thread != 0) == c && om->nid[j] != UINT32_MAX)
        want[c][om->nid[j]]++;
  }
  /* the window's positions grouped by thread, each group in time order */
  size_t n = hi - lo;
  uint32_t *by = dc_xmalloc((n + 1) * sizeof *by);
  size_t *first = dc_xcalloc(nt + 2, sizeof *first);
  for (size_t q = lo; q < hi; q++)
    first[t->ev[om->k[q]].thread + 1]++;
  for (size_t x = 0; x < nt; x++)
    first[x + 1] += first[x];
  size_t *fill = dc_xmalloc((nt + 1) * sizeof *fill);
  memcpy(fill, first, (nt + 1) * sizeof *fill);
  for (size_t q = lo; q < hi; q++)
    by[fill[t->ev[om->k[q]].thread]++] = (uint32_t)q;
  for (size_t x = 0; x < nt; x++)
    for (int c = 0; c < 2; c++) {
      for (size_t i = first[x]; i < first[x + 1]; i++) {
        uint32_t nm = t->ev[om->k[by[i]]].name;
        score[2 * x + (size_t)c] += ++seen[nm] <= want[c][nm];
      }
      for (size_t i = first[x]; i < first[x + 1]; i++)
        seen[t->ev[om->k[by[i]]].name] = 0;
    }
  int32_t *a = dc_xmalloc(((size_t)n_ops + 1) * sizeof *a);
  uint32_t *b = dc_xmalloc((n + 1) * sizeof *b);
  for (int c = 0; c < 2; c++) {
    int32_t na = 0;
    for (int32_t j = 0; j < n_ops; j++)
      if ((g->ops[j].thread != 0) == c) a[na++] = j;
    size_t nb = 0;
    for (size_t q = lo; q < hi; q++) {
      size_t x = t->ev[om->k[q]].thread;
      int64_t mine = score[2 * x + (size_t)c], other = score[2 * x + 1 - c];
      if (mine > 0 && (mine > other || (mine == other && c == 0)))
        b[nb++] = (uint32_t)q;
    }
    if (!na || !nb) continue;
    if ((uint64_t)na * nb <= REPLAY_LCS_CELLS) {
      lcs(r, om, a, na, b, nb, r->match);
    } else {
      bool *taken = dc_xcalloc(nb + 1, sizeof *taken);
      greedy_free(r, om, a, na, b, nb, taken, r->match);
      free(taken);
    }
  }
  free(a);
  free(b);
  free(by);
  free(first);
  free(fill);
  free(score);
  free(seen);
  free(want[0]);
  free(want[1]);
}

/* Ops left unmatched between two matched neighbours of their thread take
 * a free event of their name on the neighbour's Kineto thread between
 * the neighbours' events: an op whose event swapped places with a
 * neighbour's (equal timestamps), or whose record-function id the trace
 * lacks. */
static void fill_gaps(replay *r, omatch *om) {
  const dc_graph *g = r->g;
  const dc_trace *t = &r->t;
  int32_t n_ops = g->n_ops;
  for (int32_t j = 0; j < n_ops; j++)
    if (r->match[j] >= 0 && om->pos[r->match[j]] != UINT32_MAX)
      om->used[om->pos[r->match[j]]] = true;
  for (int c = 0; c < 2; c++) {
    int32_t prev = -1; /* the last matched op of this thread */
    for (int32_t j = 0; j < n_ops; j++) {
      if ((g->ops[j].thread != 0) != c) continue;
      if (r->match[j] >= 0) {
        prev = j;
        continue;
      }
      if (om->nid[j] == UINT32_MAX) continue;
      int32_t next = -1;
      for (int32_t x = j + 1; x < n_ops && x < j + REPLAY_WINDOW; x++)
        if ((g->ops[x].thread != 0) == c && r->match[x] >= 0) {
          next = x;
          break;
        }
      if (prev < 0 && next < 0) continue;
      size_t from = prev >= 0 ? om->pos[r->match[prev]] : 0;
      size_t to = next >= 0 ? om->pos[r->match[next]] : om->n_k;
      uint32_t th = t->ev[r->match[prev >= 0 ? prev : next]].thread;
      if (from > to) { /* the neighbours swapped: search around both */
        size_t x = from;
        from = to;
        to = x;
      }
      if (to - from > 4 * REPLAY_WINDOW) to = from + 4 * REPLAY_WINDOW;
      for (size_t q = prev >= 0 ? from : (to > REPLAY_WINDOW ? to - REPLAY_WINDOW : 0);
           q < to && q < om->n_k; q++) {
        const dc_trace_event *e = &t->ev[om->k[q]];
        if (!om->used[q] && e->name == om->nid[j] && e->thread == th) {
          om->used[q] = true;
          r->match[j] = (int32_t)om->k[q];
          prev = j;
          break;
        }
      }
    }
  }
}

static void match_ops(replay *r) {
  int32_t n_ops = r->g->n_ops;
  r->match = dc_arena_array(r->a, (size_t)n_ops + 1, sizeof *r->match);
  for (int32_t j = 0; j < n_ops; j++)
    r->match[j] = -1;
  r->step = -1;
  omatch om = {0};
  om.k = kineto_ops(&r->t, &om.n_k);
  om.pos = dc_xmalloc((r->t.n_ev + 1) * sizeof *om.pos);
  for (size_t i = 0; i < r->t.n_ev; i++)
    om.pos[i] = UINT32_MAX;
  for (size_t q = 0; q < om.n_k; q++)
    om.pos[om.k[q]] = (uint32_t)q;
  om.used = dc_xcalloc(om.n_k + 1, sizeof *om.used);
  om.nid = op_name_ids(r);
  if (match_by_rf(r) > 0) {
    r->by_rf = true;
  } else {
    for (int32_t j = 0; j < n_ops; j++)
      r->match[j] = -1;
    size_t lo = 0, hi = om.n_k;
    if (r->m.n_steps) {
      best_step(r, &om, &lo, &hi);
    } else if (n_ops > 0) {
      /* no steps: the start (an event named as the ET's first op) the
       * greedy order match likes best bounds the window, tried from at
       * most REPLAY_STARTS starts and a bounded amount of work */
      int32_t *try = dc_xmalloc(((size_t)n_ops + 1) * sizeof *try);
      int32_t best = 0;
      int tries = 0;
      for (size_t q = 0; q < om.n_k && tries < REPLAY_STARTS; q++) {
        if (r->t.ev[om.k[q]].name != om.nid[0]) continue;
        if ((uint64_t)tries * (uint64_t)n_ops * REPLAY_WINDOW > REPLAY_WORK)
          break;
        tries++;
        int32_t got = greedy_from(r, &om, q, try);
        if (got <= best) continue;
        best = got;
        size_t a = om.n_k, b = 0;
        for (int32_t j = 0; j < n_ops; j++)
          if (try[j] >= 0) {
            size_t p = om.pos[try[j]];
            if (p < a) a = p;
            if (p + 1 > b) b = p + 1;
          }
        lo = a;
        hi = b;
      }
      free(try);
    }
    if (hi > lo) align_threads(r, &om, lo, hi);
  }
  fill_gaps(r, &om);
  r->n_matched = 0;
  for (int32_t j = 0; j < n_ops; j++)
    r->n_matched += r->match[j] >= 0;
  /* the step the first matched unit falls in (steps sorted by start) */
  for (int32_t j = 0; j < n_ops && r->m.n_steps; j++)
    if (r->match[j] >= 0 && dc_op_is_unit(r->g, j)) {
      int64_t ts = r->t.ev[r->match[j]].ts_ns;
      for (size_t s = 0; s < r->m.n_steps && r->m.steps[s].ts_ns <= ts; s++)
        if (ts < r->m.steps[s].end_ns) r->step = (int32_t)s;
      break;
    }
  r->n_matchable = n_ops;
  free(om.k);
  free(om.pos);
  free(om.used);
  free(om.nid);
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
