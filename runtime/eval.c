/*
 * eval.c — the critical-path evaluator: the paper's Algorithm 1 (§III-D)
 * extended to several streams, data dependencies, host synchronisation and
 * ranks (spec/design.md).
 *
 * Algorithm 1, for one rank and one stream, exactly as spec/design.md states it:
 *
 *   for each top-level op:                   (T1..T5 looked up by op name)
 *     cpu += T1
 *     if the op (or a descendant) launches kernels:
 *       cpu += T2
 *       for each kernel k, in launch order:
 *         start  = max(stream + gap, cpu + T4/2)          (line 11)
 *         stream = start + T_k
 *         cpu   += T4                 (T4 of k's runtime call)
 *         cpu   += T5  unless k is the op's last kernel
 *       cpu += T3
 *     else:
 *       cpu += T5                     (the op's whole CPU time)
 *   T = max(cpu, stream)
 *
 * `gap` is the profile's kernel_gap (the paper's "+1": a minimum 1 µs gap
 * between kernels on a stream). Extensions the paper does not have:
 *
 * - streams: each stream has its own clock; a kernel also waits for the
 *   kernels that produced its op's input tensors (a CUDA event wait), so
 *   start = max(stream[s] + gap, cpu + T4/2, inputs_ready);
 * - host synchronisation (dc_op.host_sync: `.cpu()`, blocking copies): after
 *   the op's launches the host waits until every stream of its rank is idle,
 *   then pays T3;
 * - ranks: each rank has its own CPU and streams; a collective kernel (same
 *   coll_id on every rank that takes part) starts on all of them at the
 *   latest of their individual start times and lasts the longest of their
 *   predicted times. Ranks are walked as resumable state machines: a rank
 *   that reaches a collective whose group is incomplete waits until the
 *   others arrive. The iteration time is the slowest rank's.
 *
 * - record_function annotations (dc_op.annotation, TorchRec's "## forward
 *   ##"): cost nothing; the ops inside are the units Algorithm 1 walks;
 * - CUDA graphs (dc_op.captured, the fused style): a captured top-level op
 *   has no T1..T5 and its launches no T4; the host pays the T4 of one
 *   `cudaGraphLaunch` (the profile's runtime entry, else its default T4)
 *   when a run of captured ops begins, and every kernel of the run is
 *   ready to start from then on (the stream gap and data dependencies
 *   still apply).
 *
 * - a data loader thread (dc_op.loader, the fused style's prefetch of the
 *   next batch): such an op's host time runs on a second host clock, so
 *   the training thread's ops (the graph launch) do not wait for it; the
 *   rank's host time is the later of the two clocks.
 *
 * Alongside, the same schedule is replayed with no host at all (cpu = 0,
 * gap 0): that "kernel only" critical path is the paper's sum-of-kernels
 * baseline on one stream and stays ≤ e2e on any graph because every start
 * is a max of non-negative terms (monotone in the overheads).
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

static double dmax(double a, double b) { return a > b ? a : b; }


static bool is_embedding(dc_kernel_kind k) {
  return k == DC_KERNEL_EMBEDDING_FWD || k == DC_KERNEL_EMBEDDING_BWD;
}

/* A collective group: every launch of one coll_id across the ranks. */
typedef struct coll_group {
  int32_t id;
  int32_t expected, arrived;
  bool used, resolved;
  double start, shadow_start, ktime;
} coll_group;

typedef struct coll_table {
  coll_group *slots;
  size_t cap; /* power of two */
} coll_table;

static coll_group *coll_find(coll_table *t, int32_t id, bool insert) {
  size_t mask = t->cap - 1;
  size_t i = ((uint32_t)id * 2654435761u) & mask;
  while (t->slots[i].used) {
    if (t->slots[i].id == id) return &t->slots[i];
    i = (i + 1) & mask;
  }
  if (!insert) return NULL;
  t->slots[i].used = true;
  t->slots[i].id = id;
  return &t->slots[i];
}

typedef struct rank_state {
  int32_t rank, first, last;
  int32_t top;        /* current top-level op */
  int32_t sub, li;    /* next launch: op index and launch index */
  int32_t launched;   /* launches of `top` done */
  int32_t n_launch;   /* launches of `top` and its descendants */
  bool in_op, done;
  bool blocked;       /* waiting at a collective */
  coll_group *wait;   /* the group it waits on */
  dc_op_cost cost;    /* of `top` */
  int32_t dep_sub;    /* op whose input readiness is cached below */
  double dep, dep_shadow;
  double cpu;
  double other_cpu;   /* the idle host clock: the loader thread's while the
                         training thread runs, and the other way round */
  bool on_loader;     /* `top` runs on the loader thread's clock */
  bool in_graph;      /* the previous top-level op was captured */
  double *stream, *shadow; /* [n_streams] */
  dc_eval_op *rec;    /* record of `top` (when recording) */
  dc_eval_rank *out;
} rank_state;

typedef struct interval {
  double a, b;
  int32_t rank;
  bool comm; /* a collective's */
} interval;

/* Overheads by op name, per evaluation: graphs name their ops with a few
 * dozen string literals, so a name is looked up (binary search, strcmp)
 * once per pointer instead of once per op. Keyed by the pointer; a
 * different pointer to the same text just costs one more lookup. */
enum { NAME_CACHE = 128 }; /* slots, a power of two */

typedef struct name_slot {
  const char *name;
  dc_op_cost cost;
} name_slot;

typedef struct evaluator {
  dc_eval_names *cache; /* optional, across evaluations */
  const char *t4_call; /* the last runtime call priced, and its T4 */
  double t4;
  const dc_graph *g;
  const dc_eval_opts *o;
  double gap;
  double *done, *done_shadow; /* [n_ops]: end of each op's kernels */
  coll_table colls;
  dc_eval_result *res;
  size_t cap_ops, cap_kernels;
  dc_diags *d;
  interval *iv; /* every kernel's interval (several streams only) */
  size_t n_iv;
  /* Last, and zeroed only when there is no cross-evaluation cache: a sweep
   * evaluates a graph per point, and this is most of the struct. */
  name_slot names[NAME_CACHE];
} evaluator;

/* Input readiness of op j: the latest end of the kernels that produced its
 * inputs on the same rank, ignoring j's own ancestors (the enclosing op
 * "produces" what its children compute). */
static void input_ready(const evaluator *ev, int32_t j, double *ready,
                        double *ready_shadow) {
  const dc_graph *g = ev->g;
  const dc_op *op = &g->ops[j];
  double r = 0.0, rs = 0.0;
  for (int32_t i = 0; i < op->n_inputs; i++) {
    int32_t t = op->inputs[i];
    if (t < 0 || t >= g->n_tensors) continue;
    int32_t p = g->tensors[t].producer;
    if (p < 0 || p >= g->n_ops || p == j) continue;
    if (p < j && j < g->ops[p].end) continue; /* an ancestor */
    if (g->ops[p].rank != op->rank) continue;
    r = dmax(r, ev->done[p]);
    rs = dmax(rs, ev->done_shadow[p]);
  }
  *ready = r;
  *ready_shadow = rs;
}

/* An op that launches no kernel of its own (a view, a concat the fused
 * graph folds away, a host-side step) still produces its outputs only once
 * its inputs exist: its end is its inputs' readiness, carried up to its
 * ancestors as a kernel's end is. Without it a consumer of such an op's
 * output would find it ready at time 0. */
static void mark_kernelless(evaluator *ev, int32_t j) {
  double r, rs;
  input_ready(ev, j, &r, &rs);
  for (int32_t p = j; p >= 0; p = ev->g->ops[p].parent) {
    ev->done[p] = dmax(ev->done[p], r);
    ev->done_shadow[p] = dmax(ev->done_shadow[p], rs);
  }
}

/* The cross-evaluation cache: keyed by the name's pointer too, and a hit
 * also compares the text kept at insertion, so a pointer that now holds
 * another name (an arena reused by the next graph) is never mistaken. */
enum { NAMES_TEXT = 96 };

typedef struct names_slot {
  const char *name;
  dc_op_cost cost;
  char text[NAMES_TEXT];
} names_slot;

struct dc_eval_names {
  const dc_profile *profile;
  names_slot slots[NAME_CACHE];
};

dc_eval_names *dc_eval_names_new(void) {
  return dc_xcalloc(1, sizeof(dc_eval_names));
}

void dc_eval_names_free(dc_eval_names *n) { free(n); }

static bool names_cost(dc_eval_names *c, const dc_profile *prof,
                       const char *name, bool literal, dc_op_cost *out) {
  size_t i = ((uintptr_t)name >> 3) & (NAME_CACHE - 1);
  for (size_t probe = 0; probe < 8; probe++) {
    names_slot *sl = &c->slots[(i + probe) & (NAME_CACHE - 1)];
    /* A literal's address never held another text (nor can a heap name
     * share it), so for a graph of literal names the pointer is enough. */
    if (sl->name == name && (literal || strcmp(sl->text, name) == 0)) {
      *out = sl->cost;
      return true;
    }
    if (!sl->name) {
      size_t len = strlen(name);
      if (len >= NAMES_TEXT) return false;
      sl->name = name;
      memcpy(sl->text, name, len + 1);
      sl->cost = dc_profile_op(prof, name);
      *out = sl->cost;
      return true;
    }
  }
  return false;
}

static dc_op_cost op_cost(evaluator *ev, const char *name) {
  if (!name) return dc_profile_op(ev->o->profile, name);
  dc_op_cost c;
  if (ev->cache) {
    if (names_cost(ev->cache, ev->o->profile, name, ev->g->literal_names, &c))
      return c;
    return dc_profile_op(ev->o->profile, name); /* a name it cannot keep */
  }
  size_t i = ((uintptr_t)name >> 3) & (NAME_CACHE - 1);
  for (size_t probe = 0; probe < 8; probe++) {
    name_slot *sl = &ev->names[(i + probe) & (NAME_CACHE - 1)];
    if (sl->name == name) return sl->cost;
    if (!sl->name) {
      sl->name = name;
      sl->cost = dc_profile_op(ev->o->profile, name);
      return sl->cost;
    }
  }
  return dc_profile_op(ev->o->profile, name);
}

static double call_t4(evaluator *ev, const char *call) {
  if (call != ev->t4_call || !call) {
    ev->t4 = dc_profile_t4(ev->o->profile, call);
    ev->t4_call = call;
  }
  return ev->t4;
}

static double streams_end(const rank_state *rs, int32_t n) {
  double m = 0.0;
  for (int32_t s = 0; s < n; s++) m = dmax(m, rs->stream[s]);
  return m;
}

static bool subtree_syncs(const dc_graph *g, int32_t top) {
  for (int32_t j = top; j < g->ops[top].end; j++)
    if (g->ops[j].host_sync) return true;
  return false;
}

static int32_t subtree_launches(const dc_graph *g, int32_t top) {
  int32_t n = 0;
  for (int32_t j = top; j < g->ops[top].end; j++) n += g->ops[j].n_launches;
  return n;
}

/* The one check on what the evaluator computes: every kernel
 * time, every clock it moves and every byte count must be finite and
 * non-negative, or the point fails with an error naming the point and the
 * op; an inf or NaN never reaches a metric, a cell or a timeline. The
 * inputs are range-checked where they are read (spec/numbers.md), but a
 * product of in-range values (stacked scale transforms, a fitted model's
 * extreme weights) can still leave the doubles. `kernel` is NULL for a
 * host clock. */
/* "point 3 (training.batch_size=512, system.gpu=A100)" for messages. */
static void point_name(const dc_point *p, dc_buf *b) {
  dc_buf_printf(b, "point %lld", (long long)(p ? p->index : 0));
  for (int32_t i = 0; p && i < p->n_params; i++)
    dc_buf_printf(b, "%s%s=%s", i ? ", " : " (", p->params[i].path,
                  p->params[i].value);
  if (p && p->n_params) dc_buf_putc(b, ')');
}

static __attribute__((noinline, cold)) bool
time_bad(evaluator *ev, const rank_state *rs, int32_t op, const char *what,
         const dc_kernel *kernel, double us) {
  const char *name = ev->g->ops[op].name;
  dc_buf at = {0};
  point_name(ev->g->point, &at);
  dc_diag *e = dc_diag_error(
      ev->d, DC_DIAG_NON_FINITE, (dc_span){0},
      "%s: op '%s' on rank %d: %s%s%s %g us, not a finite time", at.data,
      name ? name : "?", (int)rs->rank, kernel ? "its " : "",
      kernel ? dc_kernel_kind_name(kernel->kind) : "", what, us);
  dc_diag_set_help(e, "a scale transform, a GPU or overhead file, or a "
                      "fitted kernel model makes a time too large to "
                      "represent");
  dc_buf_free(&at);
  return false;
}

/* The check inline, its report (time_bad) out of line: it runs three
 * times per kernel. */
static inline bool time_ok(evaluator *ev, const rank_state *rs, int32_t op,
                           const char *what, const dc_kernel *kernel,
                           double us) {
  if (isfinite(us) && us >= 0.0) return true;
  return time_bad(ev, rs, op, what, kernel, us);
}

static inline __attribute__((always_inline)) bool finish_op(evaluator *ev,
                                                          rank_state *rs) {
  bool ok = time_ok(ev, rs, rs->top, "the host clock reaches", NULL, rs->cpu);
  if (rs->rec) rs->rec->cpu_end_us = rs->cpu;
  if (rs->on_loader) {
    double t = rs->cpu;
    rs->cpu = rs->other_cpu;
    rs->other_cpu = t;
    rs->on_loader = false;
  }
  rs->in_op = false;
  rs->top = ev->g->ops[rs->top].end;
  return ok;
}

static void host_sync(evaluator *ev, rank_state *rs) {
  double idle = streams_end(rs, ev->g->n_streams);
  if (idle > rs->cpu) {
    if (rs->rec) rs->rec->sync_wait_us += idle - rs->cpu;
    rs->cpu = idle;
  }
}

/* Advances one rank until it finishes or blocks at an unresolved
 * collective. Returns true when it made progress. */
static bool run_rank(evaluator *ev, rank_state *rs) {
  const dc_graph *g = ev->g;
  bool progress = false;
  while (rs->top < rs->last) {
    const dc_op *top = &g->ops[rs->top];
    if (!rs->in_op && top->annotation) {
      rs->top++; /* its children (pre-order) are the units */
      progress = true;
      continue;
    }
    if (!rs->in_op) {
      if (top->loader) { /* switch to the loader thread's clock */
        double t = rs->cpu;
        rs->cpu = rs->other_cpu;
        rs->other_cpu = t;
        rs->on_loader = true;
      }
      rs->cost = op_cost(ev, top->name);
      if (top->captured) {
        memset(&rs->cost, 0, sizeof rs->cost);
        if (!rs->in_graph) rs->cpu += call_t4(ev, "cudaGraphLaunch");
      }
      rs->in_graph = top->captured;
      rs->rec = NULL;
      if (ev->o->record) {
        DC_ASSERT(ev->res->n_ops < ev->cap_ops);
        rs->rec = &ev->res->ops[ev->res->n_ops++];
        rs->rec->op = rs->top;
        rs->rec->cpu_start_us = rs->cpu;
        rs->rec->t1_us = rs->cost.t1_us;
      }
      rs->cpu += rs->cost.t1_us;
      rs->n_launch = subtree_launches(g, rs->top);
      if (rs->n_launch == 0) {
        for (int32_t j = rs->top; j < top->end; j++) mark_kernelless(ev, j);
        if (subtree_syncs(g, rs->top)) host_sync(ev, rs);
        rs->cpu += rs->cost.t5_us;
        if (rs->rec) rs->rec->t5_us = rs->cost.t5_us;
        progress = true;
        if (!finish_op(ev, rs)) return progress;
        continue;
      }
      rs->cpu += rs->cost.t2_us;
      if (rs->rec) rs->rec->t2_us = rs->cost.t2_us;
      rs->in_op = true;
      rs->sub = rs->top;
      rs->li = 0;
      rs->launched = 0;
      rs->dep_sub = -1;
      progress = true;
    }
    while (rs->sub < top->end && rs->li >= g->ops[rs->sub].n_launches) {
      if (g->ops[rs->sub].n_launches == 0) mark_kernelless(ev, rs->sub);
      rs->sub++;
      rs->li = 0;
    }
    if (rs->sub >= top->end) {
      if (subtree_syncs(g, rs->top)) host_sync(ev, rs);
      rs->cpu += rs->cost.t3_us;
      if (rs->rec) rs->rec->t3_us = rs->cost.t3_us;
      progress = true;
      if (!finish_op(ev, rs)) return progress;
      continue;
    }
    const dc_op *op = &g->ops[rs->sub];
    const dc_launch *l = &op->launches[rs->li];
    int32_t s = l->stream;
    DC_ASSERT(s >= 0 && s < g->n_streams);
    if (rs->dep_sub != rs->sub) {
      input_ready(ev, rs->sub, &rs->dep, &rs->dep_shadow);
      rs->dep_sub = rs->sub;
    }
    double t4 = top->captured ? 0.0 : call_t4(ev, l->runtime);
    /* Line 11 of Algorithm 1, with the stream's data dependencies. */
    double start = dmax(dmax(rs->stream[s] + ev->gap, rs->cpu + t4 / 2.0),
                        rs->dep);
    double shadow_start = dmax(rs->shadow[s], rs->dep_shadow);
    double kt;
    if (dc_kernel_is_collective(l->k.kind)) {
      coll_group *cg = coll_find(&ev->colls, l->k.u.coll.coll_id, false);
      DC_ASSERT(cg != NULL);
      if (!rs->blocked) {
        /* Arrive at the group with this rank's own start and price. */
        double own = ev->o->ktime(ev->o->ktime_ctx, l, rs->rank);
        cg->start = cg->arrived ? dmax(cg->start, start) : start;
        cg->shadow_start =
            cg->arrived ? dmax(cg->shadow_start, shadow_start) : shadow_start;
        cg->ktime = cg->arrived ? dmax(cg->ktime, own) : own;
        cg->arrived++;
        if (cg->arrived > cg->expected) {
          dc_diag_error(ev->d, DC_DIAG_GRAPH, (dc_span){0},
                        "collective %d is launched more than once on rank %d",
                        (int)cg->id, (int)rs->rank);
          return false;
        }
        if (cg->arrived == cg->expected) cg->resolved = true;
        rs->blocked = true;
        rs->wait = cg;
        progress = true;
      }
      if (!cg->resolved) return progress;
      rs->blocked = false;
      rs->wait = NULL;
      /* what this rank waited for the group's latest arrival */
      rs->out->comm_wait_us += cg->start - start;
      start = cg->start;
      shadow_start = cg->shadow_start;
      kt = cg->ktime;
    } else {
      kt = ev->o->ktime(ev->o->ktime_ctx, l, rs->rank);
    }
    double end = start + kt;
    if (!time_ok(ev, rs, rs->sub, " kernel takes", &l->k, kt) ||
        !time_ok(ev, rs, rs->sub, " kernel ends at", &l->k, end) ||
        !time_ok(ev, rs, rs->sub, " kernels sum to", &l->k,
                 rs->out->kernel_sum_us + kt))
      return progress;
    double idle = start - rs->stream[s];
    rs->stream[s] = end;
    rs->shadow[s] = shadow_start + kt;
    for (int32_t p = rs->sub; p >= 0; p = g->ops[p].parent) {
      ev->done[p] = dmax(ev->done[p], end);
      ev->done_shadow[p] = dmax(ev->done_shadow[p], rs->shadow[s]);
    }
    dc_eval_rank *out = rs->out;
    out->kernel_sum_us += kt;
    if (is_embedding(l->k.kind)) out->emb_us += kt;
    if (dc_kernel_is_collective(l->k.kind)) {
      out->comm_us += kt;
      if (!dc_add_i64(out->comm_bytes, l->k.u.coll.bytes, &out->comm_bytes)) {
        dc_buf at = {0};
        point_name(g->point, &at);
        dc_diag_error(ev->d, DC_DIAG_NON_FINITE, (dc_span){0},
                      "%s: op '%s' on rank %d: the collective bytes of the "
                      "iteration overflow 64 bits",
                      at.data, g->ops[rs->sub].name, (int)rs->rank);
        dc_buf_free(&at);
        return progress;
      }
    }
    if (ev->iv)
      ev->iv[ev->n_iv++] = (interval){start, end, rs->rank,
                                      dc_kernel_is_collective(l->k.kind)};
    if (ev->o->record) {
      DC_ASSERT(ev->res->n_kernels < ev->cap_kernels);
      dc_eval_kernel *kr = &ev->res->kernels[ev->res->n_kernels++];
      kr->op = rs->sub;
      kr->top = rs->top;
      kr->launch = rs->li;
      kr->rank = rs->rank;
      kr->stream = s;
      kr->call_us = rs->cpu;
      kr->t4_us = t4;
      kr->start_us = start;
      kr->end_us = end;
      rs->rec->n_kernels++;
      rs->rec->kernel_us += kt;
      rs->rec->gpu_idle_us += idle > 0 ? idle : 0;
      rs->rec->t4_us += t4;
    }
    rs->cpu += t4;
    if (l->k.kind == DC_KERNEL_MEMCPY_H2D && !l->k.u.copy.pinned &&
        !top->captured && end > rs->cpu) {
      /* A copy from pageable host memory returns to the host only once
       * its bytes are staged for the DMA: the host waits for the copy
       * (spec/design.md, "Host synchronisation"). */
      if (rs->rec) rs->rec->sync_wait_us += end - rs->cpu;
      rs->cpu = end;
    }
    rs->launched++;
    if (rs->launched < rs->n_launch) {
      rs->cpu += rs->cost.t5_us;
      if (rs->rec) rs->rec->t5_us += rs->cost.t5_us;
    }
    rs->li++;
    progress = true;
  }
  rs->done = true;
  return progress;
}

static int cmp_interval(const void *x, const void *y) {
  const interval *p = x, *q = y;
  if (p->rank != q->rank) return p->rank < q->rank ? -1 : 1;
  return p->a < q->a ? -1 : p->a > q->a ? 1 : 0;
}

/* The length of the union of n intervals of one rank, sorted by start;
 * without the collectives' when `compute_only`. */
static double union_length(const interval *v, size_t n, bool compute_only) {
  size_t i = 0;
  while (i < n && compute_only && v[i].comm) i++;
  if (i == n) return 0.0;
  double total = 0.0, a = v[i].a, b = v[i].b;
  for (i++; i < n; i++) {
    if (compute_only && v[i].comm) continue;
    if (v[i].a > b) {
      total += b - a;
      a = v[i].a;
      b = v[i].b;
    } else if (v[i].b > b) {
      b = v[i].b;
    }
  }
  return total + (b - a);
}

bool dc_eval_graph(const dc_graph *g, const dc_eval_opts *o, dc_arena *a,
                   dc_eval_result *out, dc_diags *d) {
  return dc_eval_graph_names(g, o, NULL, a, out, d);
}

bool dc_eval_graph_names(const dc_graph *g, const dc_eval_opts *o,
                         dc_eval_names *names, dc_arena *a,
                         dc_eval_result *out, dc_diags *d) {
  memset(out, 0, sizeof *out);
  DC_ASSERT(g->n_ranks >= 1 && g->n_streams >= 1);
  evaluator ev;
  memset(&ev, 0, offsetof(evaluator, names));
  if (!names) memset(ev.names, 0, sizeof ev.names);
  ev.g = g;
  ev.o = o;
  ev.cache = names;
  if (names && names->profile != o->profile) {
    memset(names->slots, 0, sizeof names->slots);
    names->profile = o->profile;
  }
  ev.gap = o->profile->kernel_gap_us;
  ev.res = out;
  ev.d = d;
  ev.done = dc_arena_array(a, (size_t)g->n_ops + 1, sizeof(double));
  ev.done_shadow = dc_arena_array(a, (size_t)g->n_ops + 1, sizeof(double));

  /* Count launches and collective participants. */
  size_t n_launches = 0, n_top = 0, n_coll = 0;
  for (int32_t j = 0; j < g->n_ops; j++) {
    if (dc_op_is_unit(g, j)) n_top++;
    n_launches += (size_t)g->ops[j].n_launches;
    for (int32_t k = 0; k < g->ops[j].n_launches; k++)
      if (dc_kernel_is_collective(g->ops[j].launches[k].k.kind)) n_coll++;
  }
  ev.colls.cap = 16;
  while (ev.colls.cap < 2 * n_coll) ev.colls.cap *= 2;
  ev.colls.slots = dc_arena_array(a, ev.colls.cap, sizeof(coll_group));
  for (int32_t j = 0; j < g->n_ops; j++)
    for (int32_t k = 0; k < g->ops[j].n_launches; k++) {
      const dc_kernel *kk = &g->ops[j].launches[k].k;
      if (dc_kernel_is_collective(kk->kind))
        coll_find(&ev.colls, kk->u.coll.coll_id, true)->expected++;
    }
  if (o->record) {
    ev.cap_ops = n_top;
    ev.cap_kernels = n_launches;
    out->ops = dc_arena_array(a, n_top + 1, sizeof *out->ops);
    out->kernels = dc_arena_array(a, n_launches + 1, sizeof *out->kernels);
  }

  if (g->n_streams > 1)
    ev.iv = dc_arena_array(a, n_launches + 1, sizeof *ev.iv);
  out->n_ranks = g->n_ranks;
  out->ranks = dc_arena_array(a, (size_t)g->n_ranks, sizeof *out->ranks);
  rank_state *rs = dc_arena_array(a, (size_t)g->n_ranks, sizeof *rs);
  for (int32_t r = 0; r < g->n_ranks; r++) {
    rs[r].rank = r;
    rs[r].first = g->rank_first[r];
    rs[r].last = g->rank_first[r + 1];
    rs[r].top = rs[r].first;
    rs[r].stream = dc_arena_array(a, (size_t)g->n_streams, sizeof(double));
    rs[r].shadow = dc_arena_array(a, (size_t)g->n_streams, sizeof(double));
    rs[r].out = &out->ranks[r];
  }

  /* Round-robin over the ranks until all are done; a full round without
   * progress means collectives that can never match. */
  for (;;) {
    bool all_done = true, progress = false;
    for (int32_t r = 0; r < g->n_ranks; r++) {
      if (rs[r].done) continue;
      if (!rs[r].blocked || rs[r].wait->resolved) {
        size_t errs = d->errors;
        if (run_rank(&ev, &rs[r])) progress = true;
        if (d->errors != errs) return false;
      }
      if (!rs[r].done) all_done = false;
    }
    if (all_done) break;
    if (!progress) {
      for (int32_t r = 0; r < g->n_ranks; r++)
        if (rs[r].blocked) {
          dc_diag_error(d, DC_DIAG_GRAPH, (dc_span){0},
                        "collective %d on rank %d never matches: the ranks "
                        "launch their collectives in different orders",
                        (int)rs[r].wait->id, (int)r);
          return false;
        }
      DC_ASSERT(!"evaluator made no progress");
    }
  }

  /* Per-rank totals. A stream's kernels never overlap one another, so on
   * one stream the union of kernel intervals is their sum; with several
   * streams the intervals kept during the walk are merged. */
  if (g->n_streams > 1)
    qsort(ev.iv, ev.n_iv, sizeof *ev.iv, cmp_interval);
  size_t k = 0;
  for (int32_t r = 0; r < g->n_ranks; r++) {
    dc_eval_rank *x = &out->ranks[r];
    double gpu = 0.0, sh = 0.0;
    for (int32_t s = 0; s < g->n_streams; s++) {
      gpu = dmax(gpu, rs[r].stream[s]);
      sh = dmax(sh, rs[r].shadow[s]);
    }
    x->cpu_us = dmax(rs[r].cpu, rs[r].other_cpu);
    x->e2e_us = dmax(x->cpu_us, gpu);
    x->kernel_only_us = sh;
    x->gpu_active_us = x->kernel_sum_us;
    /* one stream: kernels never overlap, so compute is the rest */
    x->compute_us = dmax(x->kernel_sum_us - x->comm_us, 0.0);
    if (g->n_streams > 1) {
      size_t k0 = k;
      while (k < ev.n_iv && ev.iv[k].rank == r) k++;
      x->gpu_active_us = union_length(ev.iv + k0, k - k0, false);
      x->compute_us = union_length(ev.iv + k0, k - k0, true);
    }
  }
  double worst = -1.0;
  for (int32_t r = 0; r < g->n_ranks; r++)
    if (out->ranks[r].e2e_us > worst) {
      worst = out->ranks[r].e2e_us;
      out->critical_rank = r;
    }
  out->e2e_us = worst;
  return true;
}
