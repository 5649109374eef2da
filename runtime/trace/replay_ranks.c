/*
 * replay_ranks.c — `dlrmc replay` of every rank of a distributed run
 * (spec/replay.md, "Several ranks"): the files told apart and paired,
 * the ranks' graphs merged and evaluated together, the clocks aligned,
 * each collective's wait and transfer measured, the report. One file:
 * these steps share the job's state and read as one sequence; the
 * one-rank parts they reuse live in replay.c and replay_match.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/replay_int.h"

/* ---- several ranks -------------------------------------------------------
 * Every rank's pair is loaded and matched as one rank's is; their graphs
 * are put together into one graph of n ranks (ops, tensors renumbered;
 * the k-th collective of every rank is one group: coll_id k) and
 * evaluated with the evaluator's rank machinery, where a collective starts
 * on every rank at the latest arrival. The measured side aligns the ranks'
 * clocks on the first collective every trace holds (its end is one
 * instant on all ranks) and splits each collective's time on each rank
 * into the wait for the last arrival and the transfer after it. */

typedef struct job {
  const dc_replay_opts *o;
  dc_arena *a;
  dc_diags *d;
  replay *r; /* [n], in rank order */
  int32_t n, world;
  bool ranks_given; /* ranks from the order of the files */
  const char *world_from;
  dc_device dev;
  const dc_kmodels *km;
  dc_profile prof;
  const char *prof_name;
  dc_graph *g;
  bool have_k, gpu;
  int32_t n_coll, first_shared;
  int64_t *off;     /* [n] clock offset of each rank, ns */
  int64_t start;    /* the common start, aligned ns */
  double *skew_us;  /* [n] */
  double *wait_us;  /* [n_coll * n], -1: not measured */
  double *xfer_us;  /* [n_coll * n] */
  int32_t *last;    /* [n]: collectives it arrived last at */
  iter *it;         /* [n] */
} job;

static double job_ktime(void *ctx, const dc_launch *l, int32_t rank) {
  job *J = ctx;
  return rp_ktime(&J->r[rank >= 0 && rank < J->n ? rank : 0], l, rank);
}

static dc_span file_span(dc_arena *a, const char *path) {
  dc_source *src = dc_arena_alloc(a, sizeof *src);
  src->path = dc_arena_strdup(a, path);
  src->text = "";
  return (dc_span){src, 0, 0, 0};
}

/* The process of a Kineto trace: the pid of its first CPU op. */
static int64_t kineto_pid(const dc_trace *t) {
  for (size_t i = 0; i < t->n_ev; i++)
    if (t->ev[i].kind == DC_TRACE_OP) {
      const char *s = t->threads[t->ev[i].thread];
      char *end;
      long long v = strtoll(s, &end, 10);
      return end != s && *end == '/' && v >= 0 ? (int64_t)v : -1;
    }
  return -1;
}

static int cmp_rank(const void *pa, const void *pb) {
  const replay *a = pa, *b = pb;
  return (a->rank > b->rank) - (a->rank < b->rank);
}

/* Sorts the files into execution traces and Kineto traces by content,
 * imports the ETs, loads the Kineto traces and pairs them by process
 * (the ET's "pid" and the pid of the trace's events; a rank recorded by
 * both settles two traces of one pid), then numbers the ranks. */
static bool pair_files(job *J) {
  const dc_replay_opts *o = J->o;
  dc_arena *a = J->a;
  dc_diags *d = J->d;
  int32_t n_et = 0, n_k = 0;
  const char **ets = dc_arena_array(a, (size_t)o->n_paths + 1, sizeof *ets);
  const char **ks = dc_arena_array(a, (size_t)o->n_paths + 1, sizeof *ks);
  for (int32_t i = 0; i < o->n_paths; i++) {
    dc_trace_format f;
    if (!dc_trace_classify(o->paths[i], &f, a, d)) return false;
    if (f == DC_TRACE_FMT_EXECUTION_TRACE)
      ets[n_et++] = o->paths[i];
    else
      ks[n_k++] = o->paths[i];
  }
  if (n_et == 0) {
    dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_TRACE, file_span(a, o->paths[0]),
                               "no execution trace among the files: this "
                               "is a Kineto trace");
    dc_diag_set_help(g, "give each rank's execution trace "
                        "(ExecutionTraceObserver JSON) with its Kineto "
                        "trace");
    return false;
  }
  J->n = n_et;
  J->r = dc_arena_array(a, (size_t)n_et, sizeof *J->r);
  for (int32_t i = 0; i < n_et; i++) {
    replay *r = &J->r[i];
    r->o = o;
    r->a = a;
    r->d = d;
    r->et_path = ets[i];
    r->dev = J->dev;
    r->km = J->km;
    if (!dc_et_import(r->et_path, &r->e, a, d)) return false;
    r->g = r->e.g;
  }
  dc_trace *kt = dc_arena_array(a, (size_t)n_k + 1, sizeof *kt);
  int64_t *kpid = dc_arena_array(a, (size_t)n_k + 1, sizeof *kpid);
  int32_t *taken = dc_arena_array(a, (size_t)n_k + 1, sizeof *taken);
  bool ok = true;
  for (int32_t i = 0; i < n_k && ok; i++) {
    if (!dc_trace_load(ks[i], &kt[i], a, d)) {
      for (int32_t x = 0; x < i; x++)
        dc_trace_free(&kt[x]);
      return false;
    }
    kpid[i] = kineto_pid(&kt[i]);
    taken[i] = -1;
  }
  for (int32_t i = 0; i < n_et && n_k && ok; i++) {
    replay *r = &J->r[i];
    int64_t pid = r->e.pid;
    int32_t et_rank = r->e.rank;
    int32_t pick = -1, n_cand = 0;
    for (int32_t k = 0; k < n_k; k++) {
      bool same = n_et == 1 && n_k == 1; /* one pair: as given */
      if (!same && pid >= 0 && kpid[k] == pid) same = true;
      if (!same) continue;
      n_cand++;
      if (pick < 0 || (et_rank >= 0 && kt[k].dist_rank == et_rank)) pick = k;
    }
    if (n_cand > 1 && (et_rank < 0 || kt[pick].dist_rank != et_rank)) {
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_BAD_TRACE, file_span(a, r->et_path),
          "%d Kineto traces are of this execution trace's process (pid "
          "%lld) and its rank does not tell them apart",
          (int)n_cand, (long long)pid);
      dc_diag_set_help(g, "give each rank's pair once (runs on several "
                          "hosts may reuse a pid: record the ranks' "
                          "collectives so their ranks are known)");
      ok = false;
    } else if (pick < 0) {
      dc_diag *g =
          pid >= 0
              ? dc_diag_error(d, DC_DIAG_BAD_TRACE, file_span(a, r->et_path),
                              "no Kineto trace among the files is of this "
                              "execution trace's process (pid %lld)",
                              (long long)pid)
              : dc_diag_error(d, DC_DIAG_BAD_TRACE, file_span(a, r->et_path),
                              "this execution trace records no process id "
                              "(\"pid\"): its Kineto trace cannot be told");
      dc_diag_set_help(g, "give the Kineto trace recorded with it (the "
                          "same run, the same process)");
      ok = false;
    } else if (taken[pick] >= 0) {
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_BAD_TRACE, file_span(a, r->et_path),
          "this execution trace and %s are both of the process of %s (pid "
          "%lld)",
          J->r[taken[pick]].et_path, ks[pick], (long long)pid);
      dc_diag_set_help(g, "give each rank's execution trace once");
      ok = false;
    } else {
      taken[pick] = i;
      r->k_path = ks[pick];
      r->t = kt[pick];
      memset(&kt[pick], 0, sizeof kt[pick]);
      r->pid = kpid[pick];
    }
  }
  for (int32_t k = 0; k < n_k && ok; k++)
    if (taken[k] < 0) {
      dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_TRACE, file_span(a, ks[k]),
                                 "no execution trace among the files is of "
                                 "this Kineto trace's process (pid %lld)",
                                 (long long)kpid[k]);
      dc_diag_set_help(g, "give every rank's execution trace with its "
                          "Kineto trace");
      ok = false;
    }
  for (int32_t k = 0; k < n_k; k++)
    if (kt[k].ev) dc_trace_free(&kt[k]);
  if (!ok) {
    for (int32_t i = 0; i < n_et; i++)
      if (J->r[i].k_path) dc_trace_free(&J->r[i].t);
    return false;
  }
  /* ranks: distributedInfo, else the ET's collectives; none: the order */
  int32_t known = 0;
  for (int32_t i = 0; i < n_et; i++) {
    replay *r = &J->r[i];
    r->rank = r->k_path && r->t.dist_rank >= 0 ? r->t.dist_rank : r->e.rank;
    known += r->rank >= 0;
  }
  J->ranks_given = known == 0;
  for (int32_t i = 0; i < n_et && known == 0; i++)
    J->r[i].rank = i;
  for (int32_t i = 0; i < n_et && ok; i++)
    if (J->r[i].rank < 0) {
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_BAD_TRACE, file_span(a, J->r[i].et_path),
          "the rank of this execution trace is not recorded (its Kineto "
          "trace has no distributedInfo, its collectives no rank) while "
          "other files' ranks are");
      dc_diag_set_help(g, "give the Kineto trace recorded with it, or only "
                          "files that record no rank (ranks then follow "
                          "the order given)");
      ok = false;
    }
  if (ok) qsort(J->r, (size_t)n_et, sizeof *J->r, cmp_rank);
  for (int32_t i = 1; i < n_et && ok; i++)
    if (J->r[i].rank == J->r[i - 1].rank) {
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_BAD_TRACE, file_span(a, J->r[i].et_path),
          "rank %d twice: this execution trace and %s",
          (int)J->r[i].rank, J->r[i - 1].et_path);
      dc_diag_set_help(g, "give each rank's pair once");
      ok = false;
    }
  /* the job's size: distributedInfo, the process group, the ranks given */
  J->world = n_et;
  J->world_from = "the number of ranks given";
  int32_t pg = 0, dist = 0;
  for (int32_t i = 0; i < n_et; i++) {
    const replay *r = &J->r[i];
    if (r->k_path && r->t.dist_world > dist) dist = r->t.dist_world;
    if (r->e.pg_size > pg) pg = r->e.pg_size;
  }
  if (pg > 1 && pg >= n_et) {
    J->world = pg;
    J->world_from = "the process group";
  } else if (dist >= n_et) {
    J->world = dist;
    J->world_from = "distributedInfo.world_size";
  }
  if (!ok)
    for (int32_t i = 0; i < n_et; i++)
      if (J->r[i].k_path) dc_trace_free(&J->r[i].t);
  return ok;
}

static bool is_coll_op(const dc_graph *g, int32_t j) {
  return g->ops[j].n_launches &&
         dc_kernel_is_collective(g->ops[j].launches[0].k.kind);
}

/* One graph of every rank. The collectives of each rank are numbered in
 * launch order (et_graph.c), so the k-th of every rank meet; a rank with
 * a different number of them cannot be paired. A group of size 1 (no
 * pg_size, no process-group record) takes the job's size. */
static bool merge(job *J) {
  dc_arena *a = J->a;
  dc_graph *G = dc_arena_alloc(a, sizeof *G);
  int32_t n_ops = 0, n_t = 0;
  G->n_ranks = J->n;
  G->n_streams = 1;
  J->n_coll = -1;
  for (int32_t i = 0; i < J->n; i++) {
    const dc_graph *g = J->r[i].g;
    n_ops += g->n_ops;
    n_t += g->n_tensors;
    if (g->n_streams > G->n_streams) G->n_streams = g->n_streams;
    int32_t c = 0;
    for (int32_t j = 0; j < g->n_ops; j++)
      c += is_coll_op(g, j);
    J->r[i].n_coll = c;
    if (J->n_coll < 0) J->n_coll = c;
    if (c != J->n_coll) {
      dc_diag *e = dc_diag_error(
          J->d, DC_DIAG_BAD_TRACE, file_span(a, J->r[i].et_path),
          "rank %d launches %d collectives and rank %d (%s) %d: the ranks' "
          "collectives cannot be paired",
          (int)J->r[i].rank, (int)c, (int)J->r[0].rank, J->r[0].et_path,
          (int)J->n_coll);
      dc_diag_set_help(e, "give the traces of one step of one run (every "
                          "rank records the same collectives in the same "
                          "order)");
      return false;
    }
  }
  G->n_ops = n_ops;
  G->n_tensors = n_t;
  G->ops = dc_arena_array(a, (size_t)n_ops + 1, sizeof *G->ops);
  G->tensors = dc_arena_array(a, (size_t)n_t + 1, sizeof *G->tensors);
  G->rank_first = dc_arena_array(a, (size_t)J->n + 1, sizeof *G->rank_first);
  G->world_ranks = J->world;
  int32_t oo = 0, ot = 0;
  for (int32_t i = 0; i < J->n; i++) {
    const dc_graph *g = J->r[i].g;
    G->rank_first[i] = oo;
    for (int32_t t = 0; t < g->n_tensors; t++) {
      dc_tensor x = g->tensors[t];
      x.id = ot + t;
      if (x.producer >= 0) x.producer += oo;
      if (x.view_of > 0) x.view_of += ot;
      G->tensors[ot + t] = x;
    }
    for (int32_t j = 0; j < g->n_ops; j++) {
      dc_op o = g->ops[j];
      o.rank = i;
      if (o.parent >= 0) o.parent += oo;
      o.end += oo;
      int32_t *in = dc_arena_array(a, (size_t)o.n_inputs + 1, sizeof *in);
      int32_t *outv = dc_arena_array(a, (size_t)o.n_outputs + 1, sizeof *outv);
      for (int32_t k = 0; k < o.n_inputs; k++)
        in[k] = o.inputs[k] + ot;
      for (int32_t k = 0; k < o.n_outputs; k++)
        outv[k] = o.outputs[k] + ot;
      o.inputs = in;
      o.outputs = outv;
      for (int32_t k = 0; k < o.n_launches; k++)
        if (dc_kernel_is_collective(o.launches[k].k.kind) &&
            o.launches[k].k.u.coll.ranks <= 1 && J->world > 1)
          o.launches[k].k.u.coll.ranks = J->world;
      G->ops[oo + j] = o;
    }
    oo += g->n_ops;
    ot += g->n_tensors;
  }
  G->rank_first[J->n] = oo;
  J->g = G;
  return true;
}

/* The k-th collective's measured activity on rank r: the GPU activity
 * its op launched; on a trace without GPU activity (gloo on the CPU) the
 * k-th `gloo:*` event of the step in time order (gloo's worker threads
 * may run two at once, so this pairing is approximate). */
static void measure_colls(replay *r, bool gpu) {
  const dc_graph *g = r->g;
  r->coll_arr = dc_arena_array(r->a, (size_t)r->n_coll + 1, sizeof(int64_t));
  r->coll_end = dc_arena_array(r->a, (size_t)r->n_coll + 1, sizeof(int64_t));
  for (int32_t k = 0; k < r->n_coll; k++)
    r->coll_arr[k] = r->coll_end[k] = -1;
  if (!r->have_k) return;
  const dc_trace *t = &r->t;
  if (gpu) {
    int32_t k = 0;
    for (int32_t j = 0; j < g->n_ops; j++) {
      if (!is_coll_op(g, j)) continue;
      if (r->match[j] >= 0) {
        dc_trace_launched L = dc_trace_attrib_of(&r->at, (size_t)r->match[j]);
        for (uint32_t x = 0; x < L.n; x++) {
          const dc_trace_event *e = &t->ev[L.gpu[x]];
          if (r->coll_arr[k] < 0 || e->ts_ns < r->coll_arr[k])
            r->coll_arr[k] = e->ts_ns;
          if (e->ts_ns + e->dur_ns > r->coll_end[k])
            r->coll_end[k] = e->ts_ns + e->dur_ns;
        }
      }
      k++;
    }
    return;
  }
  size_t n_k;
  uint32_t *k = rp_kineto_ops(t, &n_k);
  int32_t c = 0;
  for (size_t q = 0; q < n_k && c < r->n_coll; q++) {
    const dc_trace_event *e = &t->ev[k[q]];
    if (strncmp(t->names[e->name], "gloo:", 5) != 0) continue;
    if (e->ts_ns < r->win_lo || e->ts_ns >= r->win_hi) continue;
    r->coll_arr[c] = e->ts_ns;
    r->coll_end[c] = e->ts_ns + e->dur_ns;
    c++;
  }
  free(k);
}

/* The clocks aligned on the first collective every rank's trace holds,
 * the common start, and each collective's wait and transfer per rank. */
static void align_alloc(job *J) {
  int32_t n = J->n, C = J->n_coll;
  J->off = dc_arena_array(J->a, (size_t)n, sizeof *J->off);
  J->skew_us = dc_arena_array(J->a, (size_t)n, sizeof *J->skew_us);
  J->last = dc_arena_array(J->a, (size_t)n, sizeof *J->last);
  J->wait_us = dc_arena_array(J->a, (size_t)C * n + 1, sizeof *J->wait_us);
  J->xfer_us = dc_arena_array(J->a, (size_t)C * n + 1, sizeof *J->xfer_us);
  for (size_t x = 0; x < (size_t)C * n; x++)
    J->wait_us[x] = J->xfer_us[x] = -1;
  J->first_shared = -1;
}

static void align(job *J) {
  int32_t n = J->n, C = J->n_coll;
  J->first_shared = -1;
  for (int32_t k = 0; k < C && J->first_shared < 0; k++) {
    bool all = true;
    for (int32_t i = 0; i < n; i++)
      all = all && J->r[i].coll_end[k] >= 0;
    if (all) J->first_shared = k;
  }
  int64_t lo_min = INT64_MAX;
  J->start = INT64_MIN;
  for (int32_t i = 0; i < n; i++) {
    const replay *r = &J->r[i];
    if (J->first_shared >= 0)
      J->off[i] = r->coll_end[J->first_shared] -
                  J->r[0].coll_end[J->first_shared];
    int64_t lo = r->win_lo - J->off[i];
    if (lo < lo_min) lo_min = lo;
    if (lo > J->start) J->start = lo;
  }
  if (J->first_shared < 0) return;
  for (int32_t i = 0; i < n; i++)
    J->skew_us[i] =
        (double)(J->r[i].win_lo - J->off[i] - lo_min) / 1000.0;
  for (int32_t k = 0; k < C; k++) {
    bool all = true;
    int64_t L = INT64_MIN;
    for (int32_t i = 0; i < n; i++) {
      const replay *r = &J->r[i];
      if (r->coll_end[k] < 0) {
        all = false;
        break;
      }
      int64_t arr = r->coll_arr[k] - J->off[i];
      if (arr < J->start) arr = J->start;
      if (arr > L) L = arr;
    }
    if (!all) continue;
    for (int32_t i = 0; i < n; i++) {
      const replay *r = &J->r[i];
      int64_t arr = r->coll_arr[k] - J->off[i];
      int64_t end = r->coll_end[k] - J->off[i];
      if (arr < J->start) arr = J->start;
      int64_t w = L - arr, span = end > arr ? end - arr : 0;
      if (w > span) w = span;
      int64_t x = end - (L > arr ? L : arr);
      J->wait_us[(size_t)k * n + i] = (double)w / 1000.0;
      J->xfer_us[(size_t)k * n + i] = x > 0 ? (double)x / 1000.0 : 0;
      if (arr == L) J->last[i]++;
    }
  }
}

static double coll_sum(const job *J, const double *v, int32_t i) {
  double s = 0;
  for (int32_t k = 0; k < J->n_coll; k++)
    if (v[(size_t)k * J->n + i] > 0) s += v[(size_t)k * J->n + i];
  return s;
}

/* HTA's communication/computation overlap in percent of the
 * communication kernels' time; predicted, from the evaluator's unions
 * (|comm ∩ compute| = |comm| + |compute| − |GPU active|; dlrmc runs a
 * rank's collectives on one stream, so their sum is their union). */
static double overlap_pred_pct(const dc_eval_rank *pr) {
  if (pr->comm_us <= 0) return NAN;
  double o = pr->comm_us + pr->compute_us - pr->gpu_active_us;
  return 100.0 * (o > 0 ? o : 0) / pr->comm_us;
}

static double overlap_meas_pct(const iter *it) {
  if (it->comm_us <= 0) return NAN;
  return 100.0 * (it->overlap_us > 0 ? it->overlap_us : 0) / it->comm_us;
}

static void put_pct(dc_buf *out, double pct, const char *none) {
  if (isfinite(pct))
    dc_buf_printf(out, "%.2f", pct);
  else
    dc_buf_puts(out, none);
}

static void put_ms(dc_buf *out, bool have, double us) {
  if (have && isfinite(us))
    dc_buf_printf(out, "%.3f", us / 1000.0);
  else
    dc_buf_puts(out, "-");
}

static bool job_profile(job *J) {
  const char *name = J->o->overheads;
  if (!name) name = J->gpu ? "self" : "paper-v100";
  J->prof_name = name;
  if (strcmp(name, "self") != 0)
    return dc_profile_load(name, &J->prof, J->a, J->d);
  for (int32_t i = 0; i < J->n; i++)
    if (!J->r[i].have_k) {
      dc_diag *gd = dc_diag_error(J->d, DC_DIAG_BAD_TRACE,
                                  file_span(J->a, J->r[i].et_path),
                                  "--overheads self needs every rank's "
                                  "Kineto trace");
      dc_diag_set_help(gd, "give each rank's Kineto trace, or name a "
                           "profile (paper-v100, ...)");
      return false;
    }
  /* one profile of every rank's samples, pooled */
  dc_ovh_acc *acc = dc_ovh_acc_new();
  for (int32_t i = 0; i < J->n; i++)
    dc_ovh_acc_add(acc, &J->r[i].m, dc_ovh_measure_correction(&J->r[i].m));
  dc_ovh_acc_profile(acc, "self", J->r[0].t.path, &J->prof, J->a);
  dc_ovh_acc_free(acc);
  return true;
}

static void report_ranks_md(const job *J, const dc_eval_result *res,
                            dc_buf *out) {
  int32_t n = J->n;
  bool cmp = J->have_k && J->gpu;
  dc_buf_printf(out, "# dlrmc replay: %d ranks\n\n", (int)n);
  dc_buf_printf(out, "- device: %s; overheads: %s\n", J->o->gpu,
                strcmp(J->prof_name, "self") == 0
                    ? "self (extracted from the ranks' Kineto traces, "
                      "pooled)"
                    : J->prof_name);
  dc_buf_printf(out, "- job: %d ranks (%s)%s; %d collectives per rank\n",
                (int)J->world, J->world_from,
                J->ranks_given ? "; no file records its rank: ranks "
                                 "follow the order given"
                               : "",
                (int)J->n_coll);
  for (int32_t i = 0; i < n; i++) {
    const replay *r = &J->r[i];
    dc_buf_printf(out, "- rank %d: %s (%d ops)", (int)r->rank, r->et_path,
                  r->g->n_ops);
    if (r->have_k)
      dc_buf_printf(out, "; %s: %d of %d ops matched by %s", r->k_path,
                    r->n_matched, r->n_matchable,
                    r->by_rf ? "record-function id" : "op order");
    dc_buf_putc(out, '\n');
  }
  if (J->have_k && J->first_shared >= 0) {
    const dc_op *o = NULL;
    for (int32_t j = 0, k = 0; j < J->r[0].g->n_ops; j++)
      if (is_coll_op(J->r[0].g, j) && k++ == J->first_shared)
        o = &J->r[0].g->ops[j];
    dc_buf_printf(out,
                  "- clocks aligned on the end of collective #%d (%s), the "
                  "first every rank's trace holds; each rank's step is "
                  "measured from the latest start, so the profiler's "
                  "start skew is not step time\n",
                  (int)J->first_shared, o ? o->name : "?");
  } else if (J->have_k) {
    dc_buf_puts(out, "- no collective is measured on every rank: clocks "
                     "not aligned, no wait measured\n");
  }
  if (J->have_k && !J->gpu)
    dc_buf_puts(out,
                "\nThe Kineto traces have no GPU activity (a run on the "
                "CPU): E2E and GPU active are predicted only; the "
                "measured waits, transfers and skew are those of the CPU "
                "run's gloo collectives (their `gloo:*` events), not a "
                "measurement of the GPU run predicted.\n");
  dc_buf_puts(out, "\n## Ranks\n\n| rank | ops matched | E2E pred ms | "
                   "E2E meas ms | error | GPU active pred ms | GPU active "
                   "meas ms | comm wait pred ms | comm wait meas ms | "
                   "transfer meas ms | skew ms | overlap pred % | "
                   "overlap meas % |\n"
                   "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
                   "---:|---:|\n");
  bool al = J->have_k && J->first_shared >= 0;
  for (int32_t i = 0; i < n; i++) {
    const replay *r = &J->r[i];
    const dc_eval_rank *pr = &res->ranks[i];
    const iter *it = &J->it[i];
    dc_buf_printf(out, "| %d | ", (int)r->rank);
    if (r->have_k)
      dc_buf_printf(out, "%d of %d", r->n_matched, r->n_matchable);
    else
      dc_buf_puts(out, "-");
    dc_buf_printf(out, " | %.3f | ", pr->e2e_us / 1000.0);
    put_ms(out, cmp, it->e2e_us);
    dc_buf_puts(out, " | ");
    if (cmp) rp_put_err(out, pr->e2e_us, it->e2e_us);
    else dc_buf_puts(out, "-");
    dc_buf_printf(out, " | %.3f | ", pr->gpu_active_us / 1000.0);
    put_ms(out, cmp, it->active_us);
    dc_buf_printf(out, " | %.3f | ", pr->comm_wait_us / 1000.0);
    put_ms(out, al, coll_sum(J, J->wait_us, i));
    dc_buf_puts(out, " | ");
    put_ms(out, al, coll_sum(J, J->xfer_us, i));
    dc_buf_puts(out, " | ");
    put_ms(out, al, J->skew_us[i]);
    dc_buf_puts(out, " | ");
    put_pct(out, overlap_pred_pct(pr), "-");
    dc_buf_puts(out, " | ");
    put_pct(out, cmp ? overlap_meas_pct(it) : NAN, "-");
    dc_buf_puts(out, " |\n");
  }
  /* the slowest rank and why */
  int32_t s = res->critical_rank, fast = 0;
  bool meas = cmp;
  if (meas) s = 0;
  for (int32_t i = 0; meas && i < n; i++)
    if (J->it[i].e2e_us > J->it[s].e2e_us) s = i;
  fast = s == 0 && n > 1 ? 1 : 0;
  for (int32_t i = 0; i < n; i++) {
    double a = meas ? J->it[i].e2e_us : res->ranks[i].e2e_us;
    double b = meas ? J->it[fast].e2e_us : res->ranks[fast].e2e_us;
    if (i != s && a < b) fast = i;
  }
  dc_buf_puts(out, "\n## Slowest rank\n\n");
  dc_buf_printf(out, "%s: rank %d, E2E %.3f ms (the fastest, rank %d: "
                "%.3f ms).",
                meas ? "Measured" : "Predicted", (int)J->r[s].rank,
                (meas ? J->it[s].e2e_us : res->ranks[s].e2e_us) / 1000.0,
                (int)J->r[fast].rank,
                (meas ? J->it[fast].e2e_us : res->ranks[fast].e2e_us) /
                    1000.0);
  if (al && J->n_coll > 0 && n > 1) {
    int32_t most = 0;
    for (int32_t i = 0; i < n; i++)
      if (J->last[i] > J->last[most]) most = i;
    double w = coll_sum(J, J->wait_us, s), others = 0;
    for (int32_t i = 0; i < n; i++)
      if (i != s) others += coll_sum(J, J->wait_us, i);
    others /= n - 1;
    if (most == s)
      dc_buf_printf(out,
                    " In the recorded run it arrives last at %d of %d "
                    "collectives and waits "
                    "%.3f ms at them (the others %.3f ms on average): the "
                    "others wait for it — its work before the collectives "
                    "is the longest.",
                    (int)J->last[s], (int)J->n_coll, w / 1000.0,
                    others / 1000.0);
    else
      dc_buf_printf(out,
                    " In the recorded run it waits %.3f ms at collectives "
                    "(the others %.3f ms "
                    "on average); rank %d arrives last most often (%d of "
                    "%d).",
                    w / 1000.0, others / 1000.0, (int)J->r[most].rank,
                    (int)J->last[most], (int)J->n_coll);
  }
  const dc_eval_rank *ps = &res->ranks[res->critical_rank];
  dc_buf_printf(out,
                " Predicted slowest: rank %d, E2E %.3f ms, GPU active %.3f "
                "ms, waiting %.3f ms at collectives.\n",
                (int)J->r[res->critical_rank].rank, ps->e2e_us / 1000.0,
                ps->gpu_active_us / 1000.0, ps->comm_wait_us / 1000.0);
  if (J->n_coll <= 0) return;
  /* per collective */
  dc_buf_puts(out, "\n## Collectives\n\n| # | collective | bytes | group | "
                   "transfer pred us | transfer meas us |");
  for (int32_t i = 0; i < n; i++)
    dc_buf_printf(out, " wait r%d us |", (int)J->r[i].rank);
  dc_buf_puts(out, "\n|---:|---|---:|---:|---:|---:|");
  for (int32_t i = 0; i < n; i++)
    dc_buf_puts(out, "---:|");
  dc_buf_putc(out, '\n');
  const replay *r0 = &J->r[0];
  for (int32_t j = 0, k = 0; j < r0->g->n_ops; j++) {
    if (!is_coll_op(r0->g, j)) continue;
    const dc_launch *l = &J->g->ops[j].launches[0];
    double pred = 0;
    for (int32_t i = 0; i < n; i++) {
      double p = rp_ktime(&J->r[i], l, i);
      if (p > pred) pred = p;
    }
    double xm = -1;
    for (int32_t i = 0; i < n; i++) {
      double x = J->xfer_us[(size_t)k * n + i];
      if (x >= 0 && (xm < 0 || x < xm)) xm = x;
    }
    dc_buf_printf(out, "| %d | %s | %lld | %d | %.1f | ", (int)k,
                  r0->g->ops[j].name, (long long)l->k.u.coll.bytes,
                  (int)l->k.u.coll.ranks, pred);
    if (xm >= 0) dc_buf_printf(out, "%.1f |", xm);
    else dc_buf_puts(out, "- |");
    for (int32_t i = 0; i < n; i++) {
      double w = J->wait_us[(size_t)k * n + i];
      if (w >= 0) dc_buf_printf(out, " %.1f |", w);
      else dc_buf_puts(out, " - |");
    }
    dc_buf_putc(out, '\n');
    k++;
  }
}

static void report_ranks_csv(const job *J, const dc_eval_result *res,
                             dc_buf *out) {
  bool cmp = J->have_k && J->gpu;
  bool al = J->have_k && J->first_shared >= 0;
  /* the first eight columns are fixed (spec/replay.md): scripts read them */
  dc_buf_puts(out, "rank,e2e_pred_ms,e2e_meas_ms,gpu_active_pred_ms,"
                   "gpu_active_meas_ms,comm_wait_meas_ms,ops_matched,ops,"
                   "comm_wait_pred_ms,comm_transfer_meas_ms,skew_ms,"
                   "comm_overlap_pred_pct,comm_overlap_meas_pct\n");
  for (int32_t i = 0; i < J->n; i++) {
    const replay *r = &J->r[i];
    const dc_eval_rank *pr = &res->ranks[i];
    const iter *it = &J->it[i];
    dc_buf_printf(out, "%d,%.4f,", (int)r->rank, pr->e2e_us / 1000.0);
    if (cmp) dc_buf_printf(out, "%.4f", it->e2e_us / 1000.0);
    dc_buf_printf(out, ",%.4f,", pr->gpu_active_us / 1000.0);
    if (cmp) dc_buf_printf(out, "%.4f", it->active_us / 1000.0);
    dc_buf_putc(out, ',');
    if (al) dc_buf_printf(out, "%.4f", coll_sum(J, J->wait_us, i) / 1000.0);
    if (r->have_k)
      dc_buf_printf(out, ",%d,%d,", r->n_matched, r->n_matchable);
    else
      dc_buf_printf(out, ",,%d,", r->g->n_ops);
    dc_buf_printf(out, "%.4f,", pr->comm_wait_us / 1000.0);
    if (al)
      dc_buf_printf(out, "%.4f,%.4f,", coll_sum(J, J->xfer_us, i) / 1000.0,
                    J->skew_us[i] / 1000.0);
    else
      dc_buf_puts(out, ",,");
    put_pct(out, overlap_pred_pct(pr), "");
    dc_buf_putc(out, ',');
    put_pct(out, cmp ? overlap_meas_pct(it) : NAN, "");
    dc_buf_putc(out, '\n');
  }
}

static bool ranks(const dc_replay_opts *o, dc_buf *out, dc_arena *a,
                  dc_diags *d) {
  job J = {0};
  J.o = o;
  J.a = a;
  J.d = d;
  if (!dc_device_lookup(o->gpu, &J.dev, a, d)) return false;
  J.km = dc_kmodels_for(&J.dev);
  if (!pair_files(&J)) return false;
  bool ok = false;
  for (int32_t i = 0; i < J.n; i++)
    if (!rp_rank_match(&J.r[i])) goto done;
  J.have_k = true;
  for (int32_t i = 0; i < J.n; i++) {
    J.have_k = J.have_k && J.r[i].have_k;
    for (size_t e = 0; J.r[i].have_k && e < J.r[i].t.n_ev && !J.gpu; e++)
      J.gpu = dc_trace_kind_is_gpu(J.r[i].t.ev[e].kind);
  }
  if (!merge(&J) || !job_profile(&J)) goto done;
  for (int32_t i = 0; i < J.n; i++) {
    replay *r = &J.r[i];
    for (int32_t j = 0; j < r->g->n_ops; j++)
      r->pred_us[j] = r->g->ops[j].n_launches
                          ? rp_ktime(r, &J.g->ops[J.g->rank_first[i] + j]
                                          .launches[0], i)
                          : -1;
  }
  dc_eval_opts eo = {&J.prof, job_ktime, &J, false};
  dc_eval_result res;
  if (!dc_eval_graph(J.g, &eo, a, &res, d)) goto done;
  J.it = dc_arena_array(a, (size_t)J.n, sizeof *J.it);
  align_alloc(&J);
  if (J.have_k) {
    for (int32_t i = 0; i < J.n; i++) {
      rp_measure(&J.r[i], &J.it[i]);
      measure_colls(&J.r[i], J.gpu);
    }
    align(&J);
    for (int32_t i = 0; i < J.n && J.first_shared >= 0; i++) {
      J.r[i].lo_override = J.start + J.off[i];
      rp_measure(&J.r[i], &J.it[i]);
    }
  }
  if (o->csv)
    report_ranks_csv(&J, &res, out);
  else
    report_ranks_md(&J, &res, out);
  ok = true;
done:
  for (int32_t i = 0; i < J.n; i++) {
    if (J.r[i].have_k) rp_rank_free(&J.r[i]);
    else if (J.r[i].k_path) dc_trace_free(&J.r[i].t);
  }
  return ok;
}

bool dc_replay(const dc_replay_opts *o, dc_buf *out, dc_arena *a,
               dc_diags *d) {
  /* one execution trace (and at most one Kineto trace): the one-rank
   * report; more: every rank together */
  int32_t n_et = 0;
  const char *et = NULL, *k = NULL;
  for (int32_t i = 0; i < o->n_paths; i++) {
    dc_trace_format f;
    if (!dc_trace_classify(o->paths[i], &f, a, d)) return false;
    if (f == DC_TRACE_FMT_EXECUTION_TRACE) {
      n_et++;
      et = o->paths[i];
    } else if (!k) {
      k = o->paths[i];
    } else {
      n_et = 2; /* two Kineto traces: pair them below */
    }
  }
  if (n_et == 1) return rp_single(o, et, k, out, a, d);
  return ranks(o, out, a, d);
}
