/*
 * replay_match.c — which Kineto event each ET op is (spec/replay.md,
 * "Matching"): by record-function id when both traces carry it (a sorted
 * (id, event) array: memory follows the events, not the ids' values);
 * else by op order, per thread: the step whose events share most names
 * with the ET (one pass), the ET ops of each thread aligned with the
 * events of the Kineto threads that share their names by longest common
 * subsequence (a table of at most REPLAY_LCS_CELLS; past it a greedy
 * walk that leaves skipped events free); then ops left between two
 * matched neighbours take a free event of their name there.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/replay_int.h"

/* ---- matching ------------------------------------------------------------ */

static bool is_cpu_op(uint8_t k) {
  return k == DC_TRACE_OP || k == DC_TRACE_ANNOT;
}

/* An event index with its sort keys: qsort's comparator sees only the two
 * elements, so the keys travel with the index (no global). */
typedef struct ev_key {
  int64_t ts_ns, dur_ns;
  uint32_t ev;
} ev_key;

/* Time order; a parent (longer) before its child at one start; then the
 * order the trace wrote them. */
static int cmp_time(const void *pa, const void *pb) {
  const ev_key *x = pa, *y = pb;
  if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
  if (x->dur_ns != y->dur_ns) return x->dur_ns > y->dur_ns ? -1 : 1;
  return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* The Kineto CPU events (ops and annotations) in time order. */
uint32_t *rp_kineto_ops(const dc_trace *t, size_t *n) {
  ev_key *key = dc_xmalloc((t->n_ev + 1) * sizeof *key);
  size_t k = 0;
  for (size_t i = 0; i < t->n_ev; i++)
    if (is_cpu_op(t->ev[i].kind))
      key[k++] = (ev_key){t->ev[i].ts_ns, t->ev[i].dur_ns, (uint32_t)i};
  qsort(key, k, sizeof *key, cmp_time);
  uint32_t *v = dc_xmalloc((t->n_ev + 1) * sizeof *v);
  for (size_t i = 0; i < k; i++) v[i] = key[i].ev;
  free(key);
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

void rp_match_ops(replay *r) {
  int32_t n_ops = r->g->n_ops;
  r->match = dc_arena_array(r->a, (size_t)n_ops + 1, sizeof *r->match);
  for (int32_t j = 0; j < n_ops; j++)
    r->match[j] = -1;
  r->step = -1;
  omatch om = {0};
  om.k = rp_kineto_ops(&r->t, &om.n_k);
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
