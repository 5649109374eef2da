/*
 * tree.c — the event tree of a Kineto trace (the paper's §III-A):
 * per host thread (pid, tid), CPU events sorted by start time (longer
 * first on ties) nest by time containment; GPU activity (kernels, copies,
 * memsets) is linked to the runtime call that launched it by
 * args.correlation; ops are linked to runtime calls by containment on the
 * same thread. We never use "External id": in PyTorch 1.13–2.1 a runtime
 * event's External id is its own correlation, not its op's.
 *
 * Top-level ops are the first non-container op on each path from a root
 * (owensgroup/ml_perf_model): containers are ProfilerStep#N, record_function
 * scopes named "## x ##", "__x", "module::", "DLRM ",
 * "DistributedDataParallel", and bracketed tool annotations ("[param|x]");
 * python_function events are transparent. Other user annotations
 * ("Optimizer.step#SGD.step", "nccl:all_reduce") are ops, as in the
 * graph dlrmc builds.
 *
 * Blocking calls (trace.h states the rule): a call's wait for the GPU is
 * read off the trace, never guessed from its name alone — a copy call is
 * blocking if its copy finished before it returned (it waited from its
 * start), or if it returned during its copy having overlapped at least
 * half of it (a pageable copy: it waited for the transfer), and a
 * synchronisation call waits only until the last GPU work launched
 * before it that ended inside it. The overhead extraction charges T4 the
 * rest of the call, and its self-consistency check lets the host wait as
 * the evaluator does (overheads.c).
 *
 * Steps: ProfilerStep#N events delimit iterations. An op belongs to the
 * step whose window contains its start, on whatever thread it runs (the
 * autograd engine's thread has no ProfilerStep of its own). A trace
 * without steps is one step covering everything.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/trace.h"

bool dc_trace_is_container(const char *name) {
  static const char *const prefixes[] = {
      "ProfilerStep#",           "## ", "__", "module::", "DLRM ",
      "DistributedDataParallel", "["};
  for (size_t i = 0; i < DC_COUNTOF(prefixes); i++)
    if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) return true;
  return false;
}

bool dc_trace_is_sync_call(const char *name) {
  return strcmp(name, "cudaStreamSynchronize") == 0 ||
         strcmp(name, "cudaDeviceSynchronize") == 0;
}

/* ---- sorting ---------------------------------------------------------------
 */

/* An event index with its sort keys: qsort's comparator sees only the two
 * elements, so the keys travel with the index (no global, so two threads
 * may read traces at once). */
typedef struct ev_key {
  int64_t ts_ns, dur_ns; /* cmp_end: the end in ts_ns */
  uint32_t thread, ix;
  int rank; /* equal spans: annotation 0, op 1, runtime call 2 */
} ev_key;

static int cmp_cpu(const void *pa, const void *pb) {
  const ev_key *x = pa, *y = pb;
  if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
  if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
  if (x->dur_ns != y->dur_ns) return x->dur_ns > y->dur_ns ? -1 : 1;
  /* Equal spans: a runtime call nests inside an op, an op inside an
   * annotation. */
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return x->ix < y->ix ? -1 : x->ix > y->ix;
}

/* Sorts event indices v[0..n) of t with cmp (cmp_cpu or cmp_end). */
static void sort_events(const dc_trace_event *ev, uint32_t *v, size_t n,
                        bool by_end, int (*cmp)(const void *, const void *)) {
  if (n < 2) return;
  ev_key *k = dc_xmalloc(n * sizeof *k);
  for (size_t i = 0; i < n; i++) {
    const dc_trace_event *e = &ev[v[i]];
    int rank = e->kind == DC_TRACE_RUNTIME ? 2 : e->kind == DC_TRACE_OP ? 1 : 0;
    k[i] = (ev_key){by_end ? e->ts_ns + e->dur_ns : e->ts_ns, e->dur_ns,
                    e->thread, v[i], rank};
  }
  qsort(k, n, sizeof *k, cmp);
  for (size_t i = 0; i < n; i++) v[i] = k[i].ix;
  free(k);
}

static int cmp_step(const void *pa, const void *pb) {
  const dc_trace_step *a = pa, *b = pb;
  if (a->ts_ns != b->ts_ns) return a->ts_ns < b->ts_ns ? -1 : 1;
  return a->number < b->number ? -1 : a->number > b->number;
}

/* ---- blocking-call waits ------------------------------------------------ */

static int cmp_end(const void *pa, const void *pb) {
  const ev_key *x = pa, *y = pb; /* ts_ns holds the end */
  if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
  return x->ix < y->ix ? -1 : x->ix > y->ix;
}

/* Fills m->wait_ns (the rule is in trace.h). Needs m->launcher. */
static void block_waits(dc_trace_model *m) {
  const dc_trace *t = m->t;
  size_t n = t->n_ev;
  m->wait_ns = dc_xcalloc(n ? n : 1, sizeof *m->wait_ns);
  /* copy_end[r]: the last end of call r's copies; INT64_MAX when r also
   * launched something else (a kernel, a memset), INT64_MIN when none. */
  int64_t *copy_end = dc_xmalloc((n ? n : 1) * sizeof *copy_end);
  /* copy_start[r]: the first start of call r's copies */
  int64_t *copy_start = dc_xmalloc((n ? n : 1) * sizeof *copy_start);
  uint32_t *by_end = dc_xmalloc((n ? n : 1) * sizeof *by_end);
  size_t n_linked = 0;
  for (size_t i = 0; i < n; i++) {
    copy_end[i] = INT64_MIN;
    copy_start[i] = INT64_MAX;
  }
  for (size_t i = 0; i < n; i++) {
    int32_t r = m->launcher[i];
    if (r < 0) continue;
    by_end[n_linked++] = (uint32_t)i;
    const dc_trace_event *g = &t->ev[i];
    int64_t end = g->ts_ns + g->dur_ns;
    if (g->kind != DC_TRACE_MEMCPY)
      copy_end[r] = INT64_MAX;
    else if (copy_end[r] != INT64_MAX && end > copy_end[r])
      copy_end[r] = end;
    if (g->kind == DC_TRACE_MEMCPY && g->ts_ns < copy_start[r])
      copy_start[r] = g->ts_ns;
  }
  sort_events(t->ev, by_end, n_linked, true, cmp_end);
  for (size_t r = 0; r < n; r++) {
    const dc_trace_event *c = &t->ev[r];
    if (c->kind != DC_TRACE_RUNTIME) continue;
    int64_t c_end = c->ts_ns + c->dur_ns, until = INT64_MIN;
    if (dc_trace_is_sync_call(t->names[c->name])) {
      /* The last GPU end at or before the call's end... */
      size_t lo = 0, hi = n_linked;
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const dc_trace_event *g = &t->ev[by_end[mid]];
        if (g->ts_ns + g->dur_ns <= c_end)
          lo = mid + 1;
        else
          hi = mid;
      }
      /* ...of work launched before the call, ending inside it. */
      for (size_t k = lo; k-- > 0;) {
        const dc_trace_event *g = &t->ev[by_end[k]];
        if (g->ts_ns + g->dur_ns <= c->ts_ns) break;
        if (t->ev[m->launcher[by_end[k]]].ts_ns < c->ts_ns) {
          until = g->ts_ns + g->dur_ns;
          break;
        }
      }
    } else if (copy_end[r] != INT64_MIN && copy_end[r] != INT64_MAX &&
               copy_end[r] <= c_end) {
      until = copy_end[r];
    } else if (copy_end[r] != INT64_MIN && copy_end[r] != INT64_MAX &&
               2 * (c_end - copy_start[r]) >= copy_end[r] - copy_start[r]) {
      /* A copy from pageable memory returns once its last chunk is
       * staged, a few µs before that chunk's DMA ends: a call that
       * overlapped at least half of its transfer was held for it. */
      until = c_end;
    }
    if (until > c->ts_ns) m->wait_ns[r] = until - c->ts_ns;
  }
  free(copy_start);
  free(by_end);
  free(copy_end);
}

/* ---- steps ------------------------------------------------------------------
 */

int32_t dc_trace_model_step_of(const dc_trace_model *m, int64_t ts_ns) {
  if (m->n_steps == 0) return 0;
  /* Binary search for the last step starting at or before ts. */
  size_t lo = 0, hi = m->n_steps;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->steps[mid].ts_ns <= ts_ns)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return -1;
  size_t s = lo - 1;
  if (ts_ns >= m->steps[s].end_ns || !m->step_selected[s]) return -1;
  return (int32_t)s;
}

static bool parse_step_number(const char *name, int64_t *out) {
  const char *p = name + strlen("ProfilerStep#");
  if (*p < '0' || *p > '9') return false;
  int64_t v = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (*p - '0');
  }
  *out = v;
  return *p == '\0';
}

static bool parse_u63(const char *s, size_t n, int64_t *out) {
  if (n == 0 || n > 18) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

bool dc_trace_steps_parse(const char *text, dc_trace_steps_sel *out) {
  out->given = true;
  out->first = 0;
  out->last = INT64_MAX;
  const char *colon = strchr(text, ':');
  if (!colon) {
    if (!parse_u63(text, strlen(text), &out->first)) return false;
    out->last = out->first;
    return true;
  }
  size_t na = (size_t)(colon - text), nb = strlen(colon + 1);
  if (na == 0 && nb == 0) return false;
  if (na && !parse_u63(text, na, &out->first)) return false;
  if (nb && !parse_u63(colon + 1, nb, &out->last)) return false;
  return out->first <= out->last;
}

/* ---- the model ---------------------------------------------------------- */

bool dc_trace_model_build(const dc_trace *t, const dc_trace_steps_sel *sel,
                          dc_trace_model *m, dc_diags *d) {
  memset(m, 0, sizeof *m);
  m->t = t;
  dc_span none = {t->src, 0, 0, 0};
  size_t n = t->n_ev;

  /* CPU events, sorted per thread. */
  m->cpu = dc_xmalloc((n ? n : 1) * sizeof *m->cpu);
  for (size_t i = 0; i < n; i++)
    if (!dc_trace_kind_is_gpu(t->ev[i].kind)) m->cpu[m->n_cpu++] = (uint32_t)i;
  sort_events(t->ev, m->cpu, m->n_cpu, false, cmp_cpu);
  m->n_threads = t->n_threads;
  m->thread_start = dc_xcalloc(t->n_threads + 1, sizeof *m->thread_start);
  for (size_t i = 0, th = 0; th <= t->n_threads; th++) {
    while (i < m->n_cpu && t->ev[m->cpu[i]].thread < th)
      i++;
    m->thread_start[th] = i;
  }

  /* Containment: a stack of open events per thread. An event is the child
   * of the innermost open event that has not ended when it starts. */
  m->parent = dc_xmalloc((m->n_cpu ? m->n_cpu : 1) * sizeof *m->parent);
  int32_t *stack = dc_xmalloc((m->n_cpu ? m->n_cpu : 1) * sizeof *stack);
  for (size_t th = 0; th < m->n_threads; th++) {
    size_t sp = 0;
    for (size_t i = m->thread_start[th]; i < m->thread_start[th + 1]; i++) {
      const dc_trace_event *e = &t->ev[m->cpu[i]];
      while (sp > 0) {
        const dc_trace_event *top = &t->ev[m->cpu[stack[sp - 1]]];
        if (top->ts_ns + top->dur_ns > e->ts_ns) break;
        sp--;
      }
      m->parent[i] = sp > 0 ? stack[sp - 1] : -1;
      stack[sp++] = (int32_t)i;
    }
  }
  free(stack);

  /* GPU activity -> runtime call by correlation. */
  m->launcher = dc_xmalloc((n ? n : 1) * sizeof *m->launcher);
  m->n_gpu = dc_xcalloc(n ? n : 1, sizeof *m->n_gpu);
  m->gpu_us = dc_xcalloc(n ? n : 1, sizeof *m->gpu_us);
  dc_imap cm = {0};
  for (size_t i = 0; i < n; i++) {
    m->launcher[i] = -1;
    if (t->ev[i].kind == DC_TRACE_RUNTIME && t->ev[i].corr >= 0)
      dc_imap_put(&cm, t->ev[i].corr, (int32_t)i);
  }
  for (size_t i = 0; i < n; i++) {
    const dc_trace_event *e = &t->ev[i];
    if (!dc_trace_kind_is_gpu(e->kind) || e->corr < 0) continue;
    int32_t r = dc_imap_get(&cm, e->corr);
    if (r < 0) continue;
    m->launcher[i] = r;
    m->n_gpu[r]++;
    m->gpu_us[r] += (double)e->dur_ns / 1000.0;
  }
  dc_imap_free(&cm);
  block_waits(m);

  /* Steps. */
  for (size_t i = 0; i < m->n_cpu; i++) {
    const dc_trace_event *e = &t->ev[m->cpu[i]];
    const char *nm = t->names[e->name];
    int64_t num;
    if (strncmp(nm, "ProfilerStep#", 13) != 0 || !parse_step_number(nm, &num))
      continue;
    m->steps = dc_xrealloc(m->steps, (m->n_steps + 1) * sizeof *m->steps);
    m->steps[m->n_steps++] =
        (dc_trace_step){num, e->ts_ns, e->ts_ns + e->dur_ns};
  }
  if (m->n_steps > 1) qsort(m->steps, m->n_steps, sizeof *m->steps, cmp_step);
  m->step_selected = dc_xcalloc(m->n_steps ? m->n_steps : 1, sizeof(bool));
  size_t n_sel = 0;
  for (size_t s = 0; s < m->n_steps; s++) {
    bool on =
        !sel || !sel->given ||
        (m->steps[s].number >= sel->first && m->steps[s].number <= sel->last);
    m->step_selected[s] = on;
    n_sel += on;
  }
  if (sel && sel->given && n_sel == 0) {
    dc_diag *g;
    if (m->n_steps == 0) {
      g = dc_diag_error(d, DC_DIAG_BAD_TRACE, none,
                        "--steps given but the trace has no "
                        "ProfilerStep#N events");
      dc_diag_set_help(g, "profile with torch.profiler.schedule and call "
                          "prof.step() each iteration, or drop --steps");
    } else {
      g = dc_diag_error(d, DC_DIAG_BAD_TRACE, none,
                        "--steps selects none of the trace's steps");
      dc_diag_set_help(g, "the trace has ProfilerStep#%lld to #%lld",
                       (long long)m->steps[0].number,
                       (long long)m->steps[m->n_steps - 1].number);
    }
    dc_trace_model_free(m);
    return false;
  }
  if (m->n_cpu == 0) {
    dc_diag_error(d, DC_DIAG_BAD_TRACE, none,
                  "the trace has no CPU events (cpu_op, Operator, "
                  "cuda_runtime, ...)");
    dc_trace_model_free(m);
    return false;
  }

  /* Top-level ops. top_of[i]: the position of the top-level op above
   * position i (or i itself), -1 when none. Parents precede children. */
  int32_t *top_of = dc_xmalloc((m->n_cpu ? m->n_cpu : 1) * sizeof *top_of);
  size_t cap_tops = 0;
  for (size_t i = 0; i < m->n_cpu; i++) {
    const dc_trace_event *e = &t->ev[m->cpu[i]];
    int32_t p = m->parent[i];
    top_of[i] = p >= 0 ? top_of[p] : -1;
    if (top_of[i] >= 0) {
      dc_trace_top *tp = &m->tops[top_of[i]];
      tp->end_desc = (uint32_t)i + 1;
      if (e->kind == DC_TRACE_RUNTIME) {
        tp->kernel_us += m->gpu_us[m->cpu[i]];
        tp->n_gpu += m->n_gpu[m->cpu[i]];
      }
      continue;
    }
    if ((e->kind != DC_TRACE_OP && e->kind != DC_TRACE_ANNOT) ||
        dc_trace_is_container(t->names[e->name]))
      continue;
    int32_t step = dc_trace_model_step_of(m, e->ts_ns);
    if (step < 0) continue; /* outside the (selected) steps */
    if (m->n_tops == cap_tops) {
      cap_tops = cap_tops ? cap_tops * 2 : 1024;
      m->tops = dc_xrealloc(m->tops, cap_tops * sizeof *m->tops);
    }
    dc_trace_top *tp = &m->tops[m->n_tops];
    memset(tp, 0, sizeof *tp);
    tp->ev = m->cpu[i];
    tp->first_desc = tp->end_desc = (uint32_t)i + 1;
    tp->parent = p >= 0 ? (int32_t)m->cpu[p] : -1;
    tp->step = m->n_steps ? step : -1;
    top_of[i] = (int32_t)m->n_tops++;
  }
  free(top_of);
  return true;
}

void dc_trace_model_free(dc_trace_model *m) {
  free(m->cpu);
  free(m->parent);
  free(m->thread_start);
  free(m->launcher);
  free(m->n_gpu);
  free(m->gpu_us);
  free(m->wait_ns);
  free(m->steps);
  free(m->step_selected);
  free(m->tops);
  memset(m, 0, sizeof *m);
}
