/*
 * sweep_exec.c — the sweep executor (spec/design.md): evaluates every point of a
 * shard on N worker threads and streams the table out in index order.
 *
 * Shape, and why:
 * - Each worker owns a point arena (reset per point), a kernel-price memo
 *   cache, and small caches of the devices and overhead profiles it has
 *   met, so the per-point path allocates nothing from the heap and prices a
 *   repeated kernel once.
 * - Workers claim points in shard order and format each row into its own
 *   buffer in a ring of W slots; the calling thread writes the slots in
 *   index order. A worker never runs more than W points ahead of the
 *   writer, so memory is bounded by W rows whatever the sweep's size, and
 *   the bytes written cannot depend on the number of threads.
 * - Speedups need the baseline point's time; rather than keeping every
 *   baseline in memory, a worker evaluates the baseline itself when needed
 *   (pure, so the same bytes) and remembers recent ones in a small
 *   direct-mapped cache.
 * - Output goes to a sink callback: the driver decides where (stdout, or a
 *   temporary file renamed when complete).
 *
 * One file: the workers, their caches, the row modes they fill, the ring
 * of slots and the writer share one run state and one locking
 * discipline, which read best in one place.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/emit_int.h"
#include "runtime/plan/plan.h"
#include "runtime/runtime.h"

enum {
  MAX_DEVICES = 32,
  MAX_PROFILES = 16,
  BASE_CACHE = 256,
  WINDOW_PER_JOB = 256,
  CLAIM_CHUNK = 16, /* points a worker claims per lock (≤ WINDOW_PER_JOB) */
  FLUSH_BYTES = 1 << 16
};

/* A device as a point sees it: the catalog entry `name` with the point's
 * link overrides applied (runtime/links.c). The overrides are part of the
 * key, so points that differ only in system.links get different entries,
 * hence different memo device ids: no price is reused across links. */
typedef struct dev_entry {
  char *name;
  double nvlink_gbps, pcie_gbps, nic_gbps, link_latency_us; /* as dc_point */
  int32_t nvlink_domain, sharp;
  const char *kernel_models;                                /* as dc_point */
  dc_device dev;
  const dc_kmodels *km;
} dev_entry;

typedef struct prof_entry {
  char *name;
  dc_profile prof;
} prof_entry;

/* Prices kernels of one point: its device, through an optional memo. */
typedef struct pricer {
  const dc_device *dev;
  const dc_kmodels *km;
  int32_t dev_id;
  dc_memo *memo;
} pricer;

static double price(void *ctx, const dc_launch *l, int32_t rank) {
  (void)rank;
  pricer *p = ctx;
  if (p->memo) return dc_memo_time(p->memo, &l->k, p->dev_id, p->dev, p->km);
  return dc_kernel_time(&l->k, p->dev, p->km);
}

typedef struct worker {
  dc_arena arena;     /* per point, reset */
  dc_arena keep;      /* devices and profiles, for the whole run */
  dc_memo *memo;
  dc_eval_names *names; /* op costs, for the profiles of `profs` */
  dev_entry devs[MAX_DEVICES];
  int n_devs;
  prof_entry profs[MAX_PROFILES];
  int n_profs;
  struct {
    int64_t index;
    double e2e_us;
  } base[BASE_CACHE];
  dc_diags diags;
  dc_buf row, scratch, timeline;
  rt_cells cells; /* a row of the per-rank/per-shard/capacity modes */
  int64_t failed_index;
  int64_t n_unfit; /* points that do not fit in GPU memory */
} worker;

static void worker_init(worker *w) {
  memset(w, 0, sizeof *w);
  dc_arena_init(&w->arena);
  dc_arena_init(&w->keep);
  w->memo = dc_memo_new();
  w->names = dc_eval_names_new();
  for (int i = 0; i < BASE_CACHE; i++) w->base[i].index = -1;
  w->failed_index = -1;
}

static void worker_free(worker *w) {
  dc_arena_free(&w->arena);
  dc_arena_free(&w->keep);
  dc_memo_free(w->memo);
  dc_eval_names_free(w->names);
  for (int i = 0; i < w->n_devs; i++) free(w->devs[i].name);
  for (int i = 0; i < w->n_profs; i++) free(w->profs[i].name);
  dc_diags_free(&w->diags);
  dc_buf_free(&w->row);
  dc_buf_free(&w->scratch);
  dc_buf_free(&w->timeline);
  rt_cells_free(&w->cells);
}

static bool same_links(const dev_entry *e, const dc_point *p) {
  return e->nvlink_gbps == p->nvlink_gbps && e->pcie_gbps == p->pcie_gbps &&
         e->nic_gbps == p->nic_gbps &&
         e->link_latency_us == p->link_latency_us &&
         e->nvlink_domain == p->nvlink_domain && e->sharp == p->sharp &&
         e->kernel_models == p->kernel_models; /* one string per folder */
}

/* The device a point names, with its links, looked up once per worker.
 * With more distinct devices than the cache holds, the lookup goes to an
 * arena per point and its kernels are priced without the memo. */
static bool worker_device(worker *w, const dc_point *p, pricer *out,
                          dc_diags *d) {
  for (int i = 0; i < w->n_devs; i++)
    if (strcmp(w->devs[i].name, p->gpu) == 0 && same_links(&w->devs[i], p)) {
      *out = (pricer){&w->devs[i].dev, w->devs[i].km, i, w->memo};
      return true;
    }
  if (w->n_devs == MAX_DEVICES) {
    dc_device *dev = dc_arena_alloc(&w->arena, sizeof *dev);
    if (!dc_device_of_point(p, dev, &w->arena, d)) return false;
    *out = (pricer){dev, dc_kmodels_for(dev), 0, NULL};
    return true;
  }
  dev_entry *e = &w->devs[w->n_devs];
  if (!dc_device_of_point(p, &e->dev, &w->keep, d)) return false;
  e->km = dc_kmodels_for(&e->dev);
  e->name = dc_xstrdup(p->gpu);
  e->nvlink_gbps = p->nvlink_gbps;
  e->pcie_gbps = p->pcie_gbps;
  e->nic_gbps = p->nic_gbps;
  e->link_latency_us = p->link_latency_us;
  e->nvlink_domain = p->nvlink_domain;
  e->sharp = p->sharp;
  e->kernel_models = p->kernel_models;
  *out = (pricer){&e->dev, e->km, w->n_devs, w->memo};
  w->n_devs++;
  return true;
}

/* *kept: the profile lives for the whole run (not one point's arena). */
static const dc_profile *worker_profile(worker *w, const char *name,
                                        bool *kept, dc_diags *d) {
  *kept = true;
  for (int i = 0; i < w->n_profs; i++)
    if (strcmp(w->profs[i].name, name) == 0) return &w->profs[i].prof;
  if (w->n_profs == MAX_PROFILES) {
    *kept = false;
    dc_profile *p = dc_arena_alloc(&w->arena, sizeof *p);
    return dc_profile_load(name, p, &w->arena, d) ? p : NULL;
  }
  prof_entry *e = &w->profs[w->n_profs];
  if (!dc_profile_load(name, &e->prof, &w->keep, d)) return NULL;
  e->name = dc_xstrdup(name);
  w->n_profs++;
  return &e->prof;
}

/* Evaluates a built graph with its point's device and profile. */
/* `sharding`: also the imbalance statistics and TorchRec's estimate
 * (dc_metrics_sharding), which only some columns and row modes read. */
/* Each host's memory for tables kept there: system.host_memory, else the
 * GPU catalog's typical host. */
static int64_t host_capacity(const dc_point *p, const dc_device *dev) {
  return p && p->host_memory_bytes > 0 ? p->host_memory_bytes
                                       : dev->host_memory_bytes;
}

static bool evaluate(worker *w, const dc_graph *g, bool record,
                     bool sharding, dc_eval_result *r, dc_metrics *m,
                     pricer *pr_out, dc_diags *d) {
  const dc_point *p = g->point;
  DC_ASSERT(p != NULL);
  pricer pr;
  if (!worker_device(w, p, &pr, d)) return false;
  if (pr_out) *pr_out = pr;
  bool kept;
  const dc_profile *prof = worker_profile(
      w, p->overheads ? p->overheads : "paper-v100", &kept, d);
  if (!prof) return false;
  /* The op-cost cache only for a profile of the worker's table (it lives
   * for the whole run); one past the table's size is loaded per point. */
  dc_eval_opts o = {prof, price, &pr, record};
  if (!dc_eval_graph_names(g, &o, kept ? w->names : NULL, &w->arena, r, d))
    return false;
  if (m) {
    dc_memory mem;
    dc_memory_estimate(g, pr.dev->hbm_bytes, &mem);
    dc_memory_host(g, host_capacity(g->point, pr.dev), &mem);
    dc_metrics_compute(g, r, &mem, m);
    if (sharding) dc_metrics_sharding(g, r, &w->arena, m);
  }
  return true;
}

bool dc_eval_point(const dc_graph *g, bool record, dc_arena *a,
                   dc_eval_result *out, dc_metrics *m, dc_profile *prof_out,
                   dc_diags *d) {
  const dc_point *p = g->point;
  DC_ASSERT(p != NULL);
  dc_device *dev = dc_arena_alloc(a, sizeof *dev);
  if (!dc_device_of_point(p, dev, a, d)) return false;
  if (!dc_profile_load(p->overheads ? p->overheads : "paper-v100", prof_out,
                       a, d))
    return false;
  pricer pr = {dev, dc_kmodels_for(dev), 0, NULL};
  dc_eval_opts o = {prof_out, price, &pr, record};
  if (!dc_eval_graph(g, &o, a, out, d)) return false;
  if (m) {
    dc_memory mem;
    dc_memory_estimate(g, dev->hbm_bytes, &mem);
    dc_memory_host(g, host_capacity(p, dev), &mem);
    dc_metrics_compute(g, out, &mem, m);
    dc_metrics_sharding(g, out, a, m);
  }
  return true;
}

/* ---- the run ----------------------------------------------------------- */

typedef struct slot {
  dc_buf buf;
  bool ready;
} slot;

typedef struct run {
  const dc_sweep_source *src;
  dc_sweep_opts *o;
  const rt_emit_col *cols;
  size_t n_cols;
  rt_cell_col *mcols; /* the columns of a row mode (rows != POINT) */
  size_t n_mcols;
  int64_t first, n_local; /* this shard's points: first, first + 1, ... */
  int64_t window;
  slot *slots;
  pthread_mutex_t mu;
  pthread_cond_t space;
  int64_t next_claim, emitted;
  bool failed;
  bool writing;         /* a worker is emitting rows (see emit_ready) */
  dc_buf *out;          /* output buffer: only the writer touches it */
  struct progress *prog;
  bool sharding_metrics; /* some output reads dc_metrics_sharding's values */
} run;

/* Shard K of N holds a contiguous block of points, so that `cat` of the
 * shards 1..N is the single run byte for byte: the first P mod N shards
 * hold ceil(P / N) points, the others floor(P / N) (no product that can
 * overflow, whatever P and N). */
static int64_t shard_first(int64_t points, int64_t k, int64_t n) {
  int64_t q = points / n, r = points % n;
  return (k - 1) * q + (k - 1 < r ? k - 1 : r);
}

static int64_t global_index(const run *R, int64_t j) {
  return R->first + j;
}

static bool baseline_e2e(worker *w, const run *R, int64_t b, double *out) {
  int slot_i = (int)(b % BASE_CACHE);
  if (w->base[slot_i].index == b) {
    *out = w->base[slot_i].e2e_us;
    return true;
  }
  dc_arena_reset(&w->arena);
  const dc_graph *g = R->src->build(R->src->ctx, b, DC_GRAPH_PRICED, &w->arena,
                                     &w->diags);
  dc_eval_result r;
  if (!g || !evaluate(w, g, false, false, &r, NULL, NULL, &w->diags)) {
    w->failed_index = b;
    return false;
  }
  w->base[slot_i].index = b;
  w->base[slot_i].e2e_us = r.e2e_us;
  *out = r.e2e_us;
  return true;
}

static double ms(double us) { return us / 1000.0; }
static double gib(double b) { return b / (1024.0 * 1024.0 * 1024.0); }

/* TorchRec's estimate of the point's plan, when the study asks for it. */
static void torchrec_estimate(worker *w, const run *R, const dc_point *p,
                              const dc_shard_plan *plan,
                              dc_torchrec_estimate *e) {
  if (!R->src->torchrec) return;
  dc_torchrec_consts c;
  dc_torchrec_consts_of(p, &c);
  dc_torchrec_estimate_plan(p, plan, &c, &w->arena, e);
}

/* The six torchrec_* cells of a rank or shard row. */
static void torchrec_cells(rt_cells *c, double total_ms, double fwd_compute,
                           double fwd_comms, double bwd_compute,
                           double bwd_comms, double hbm_bytes) {
  rt_cells_num(c, total_ms, 4);
  rt_cells_num(c, fwd_compute, 4);
  rt_cells_num(c, fwd_comms, 4);
  rt_cells_num(c, bwd_compute, 4);
  rt_cells_num(c, bwd_comms, 4);
  rt_cells_num(c, gib(hbm_bytes), 4);
}

/* --per-rank: one row per rank of an evaluated point. */
static void rank_rows(worker *w, const run *R, const dc_graph *g,
                      const dc_eval_result *r, const pricer *pr) {
  const dc_point *p = g->point;
  dc_torchrec_estimate e;
  torchrec_estimate(w, R, p, g->plan, &e);
  dc_memory *mem = dc_xmalloc((size_t)g->n_ranks * sizeof *mem);
  dc_memory_ranks(g, pr->dev->hbm_bytes, mem);
  for (int32_t i = 0; i < r->n_ranks; i++) {
    const dc_eval_rank *x = &r->ranks[i];
    rt_cells *c = &w->cells;
    rt_cells_clear(c);
    rt_cells_params(c, R->src, p);
    rt_cells_int(c, i);
    rt_cells_num(c, ms(x->e2e_us), 4);
    rt_cells_num(c, ms(x->cpu_us), 4);
    rt_cells_num(c, ms(x->gpu_active_us), 4);
    rt_cells_num(c, ms(x->kernel_only_us), 4);
    rt_cells_num(c, ms(x->emb_us), 4);
    rt_cells_num(c, ms(x->comm_us), 4);
    rt_cells_int(c, x->comm_bytes);
    const dc_memory m = mem[i];
    int64_t total = dc_memory_total(&m);
    rt_cells_num(c, gib((double)m.params_bytes), 4);
    rt_cells_num(c, gib((double)m.optimizer_bytes), 4);
    rt_cells_num(c, gib((double)m.activations_bytes), 4);
    rt_cells_num(c, gib((double)m.workspace_bytes), 4);
    rt_cells_num(c, gib((double)total), 4);
    rt_cells_bool(c, total <= m.hbm_bytes);
    if (R->src->torchrec) {
      const dc_torchrec_rank *t = &e.ranks[i];
      torchrec_cells(c, t->total_ms, t->fwd_compute_ms, t->fwd_comms_ms,
                     t->bwd_compute_ms, t->bwd_comms_ms, t->hbm_bytes);
    }
    rt_emit_cells_row(R->o->format, R->mcols, R->n_mcols, c, &w->row);
  }
  free(mem);
}

/* --per-shard: one row per table shard of the point's plan. */
static void shard_rows(worker *w, const run *R, const dc_graph *g,
                       const pricer *pr) {
  const dc_point *p = g->point;
  const dc_shard_plan *s = g->plan;
  dc_torchrec_estimate e;
  torchrec_estimate(w, R, p, s, &e);
  int32_t k = 0;
  for (int32_t t = 0; t < s->n_tables; t++) {
    const dc_table_plan *tp = &s->tables[t];
    for (int32_t i = 0; i < tp->n_shards; i++, k++) {
      const dc_shard *sh = &tp->shards[i];
      rt_cells *c = &w->cells;
      rt_cells_clear(c);
      rt_cells_params(c, R->src, p);
      rt_cells_text(c, p->tables[t].name);
      rt_cells_int(c, i);
      rt_cells_int(c, sh->rank);
      rt_cells_text(c, dc_sharding_name(tp->type));
      rt_cells_int(c, sh->rows);
      rt_cells_int(c, sh->cols);
      double f, b;
      dc_plan_shard_times(p, s, t, i, pr->dev, pr->km, &f, &b);
      rt_cells_num(c, ms(f), 4);
      rt_cells_num(c, ms(b), 4);
      rt_cells_num(c, gib((double)sh->rows * sh->cols * 4), 4);
      if (R->src->torchrec) {
        const dc_torchrec_shard *x = &e.shards[k];
        torchrec_cells(c, x->total_ms, x->fwd_compute_ms, x->fwd_comms_ms,
                       x->bwd_compute_ms, x->bwd_comms_ms, x->hbm_bytes);
      }
      rt_emit_cells_row(R->o->format, R->mcols, R->n_mcols, c, &w->row);
    }
  }
}

/* The capacity search of one point (spec/study.md, "Capacity"): per GPU
 * type, every candidate count in ascending order, one row each (the
 * curve: a step time need not fall as GPUs are added, since crossing
 * hosts slows the exchange); a count is skipped when the global batch
 * does not split evenly over it, it is not a whole number of hosts
 * (dc_host_layout), or the point cannot be built on it. The answer is the
 * first count that fits (every rank) and meets the target: its row has
 * `answer` true. A type with no count evaluated gets one row with empty
 * figures. */
static void capacity_row(worker *w, const run *R, const dc_point *p,
                         const char *gpu, const dc_point *q,
                         const dc_metrics *m, const dc_memory *mem,
                         bool meets, bool answer) {
  rt_cells *c = &w->cells;
  rt_cells_clear(c);
  rt_cells_params(c, R->src, p);
  rt_cells_text(c, gpu);
  if (!m) {
    for (int i = 0; i < 7; i++) rt_cells_text(c, "");
    for (int i = 0; i < 3; i++) rt_cells_bool(c, false);
    if (R->src->torchrec) rt_cells_text(c, "");
  } else {
    rt_cells_int(c, q->gpus);
    rt_cells_int(c, q->hosts);
    rt_cells_int(c, q->gpus_per_host);
    rt_cells_num(c, m->v[DC_METRIC_E2E_MS], 4);
    rt_cells_num(c, m->v[DC_METRIC_SAMPLES_PER_S], 1);
    rt_cells_num(c, gib((double)dc_memory_total(mem)), 4);
    rt_cells_num(c, gib((double)mem->hbm_bytes), 4);
    rt_cells_bool(c, m->v[DC_METRIC_FITS] != 0.0);
    rt_cells_bool(c, meets);
    rt_cells_bool(c, answer);
    if (R->src->torchrec) rt_cells_num(c, m->v[DC_METRIC_TORCHREC_MS], 4);
  }
  rt_emit_cells_row(R->o->format, R->mcols, R->n_mcols, c, &w->row);
}

static bool capacity_rows(worker *w, const run *R, const dc_point *p) {
  for (int32_t j = 0; j < p->n_capacity_types; j++) {
    dc_point *q = dc_arena_alloc(&w->arena, sizeof *q);
    *q = *p;
    q->gpu = p->capacity_types[j];
    bool found = false, any = false;
    for (int32_t k = 0; k < p->n_capacity_gpus; k++) {
      int32_t n = p->capacity_gpus[k];
      int64_t hosts, per_host;
      if (!dc_host_layout(n, p->capacity_gpus_per_host[j], &hosts,
                          &per_host))
        continue;
      if (p->batch_size % n != 0) continue;
      q->gpus = n;
      q->hosts = (int32_t)hosts;
      q->gpus_per_host = (int32_t)per_host;
      dc_diags quiet = {0};
      const dc_graph *g =
          dc_plan_build_graph(q, DC_GRAPH_PRICED, &w->arena, &quiet);
      dc_diags_free(&quiet);
      if (!g) continue; /* e.g. explicit ranks beyond this count */
      dc_eval_result r;
      dc_metrics m;
      pricer pr;
      if (!evaluate(w, g, false, R->sharding_metrics, &r, &m, &pr,
                    &w->diags)) return false;
      any = true;
      dc_memory mem;
      dc_memory_estimate(g, pr.dev->hbm_bytes, &mem);
      bool meets = m.v[DC_METRIC_FITS] != 0.0 &&
                   m.v[DC_METRIC_E2E_MS] <= p->capacity_target_ms;
      capacity_row(w, R, p, q->gpu, q, &m, &mem, meets, meets && !found);
      found |= meets;
    }
    if (!any) capacity_row(w, R, p, q->gpu, q, NULL, NULL, false, false);
  }
  return true;
}

/* JSON lines only: the figures the HTML report draws besides the row's
 * columns (spec/report.md), as `"detail":{...}` closing the row's object:
 * the time breakdown, the fullest rank's memory against the device's HBM,
 * the baseline ratio, and on several ranks each rank's embedding time and
 * memory with the critical rank. */
static void detail_num(dc_buf *b, const char *key, double v, int decimals,
                       int digits) {
  dc_buf_putc(b, ',');
  dc_buf_put_json_string(b, key);
  dc_buf_putc(b, ':');
  if (digits > 0)
    rt_emit_put_sig(b, v, digits);
  else
    rt_emit_put_double(b, v, decimals);
}

static const dc_metric_id detail_metrics[] = {
    DC_METRIC_E2E_MS,          DC_METRIC_GPU_ACTIVE_MS,
    DC_METRIC_GPU_IDLE_MS,     DC_METRIC_KERNEL_ONLY_MS,
    DC_METRIC_COMPUTE_MS,      DC_METRIC_EXPOSED_COMM_MS,
    DC_METRIC_EXPOSED_HOST_MS, DC_METRIC_OTHER_IDLE_MS};

static void detail_json(const run *R, const dc_graph *g,
                        const dc_eval_result *r, const dc_metrics *m,
                        const pricer *pr, dc_buf *b) {
  int digits = R->o->digits;
  DC_ASSERT(b->len >= 2 && b->data[b->len - 2] == '}');
  b->len -= 2; /* reopen the row's object */
  dc_buf_puts(b, ",\"detail\":{\"critical_rank\":");
  rt_emit_put_int(b, r->critical_rank);
  for (size_t i = 0; i < DC_COUNTOF(detail_metrics); i++)
    detail_num(b, dc_metric_name(detail_metrics[i]), m->v[detail_metrics[i]],
               4, digits);
  double mem = m->v[DC_METRIC_PARAMS_GIB] + m->v[DC_METRIC_OPTIMIZER_GIB] +
               m->v[DC_METRIC_ACTIVATIONS_GIB] +
               m->v[DC_METRIC_WORKSPACE_GIB];
  detail_num(b, "mem_gib", mem, 4, digits);
  detail_num(b, "hbm_gib", gib((double)pr->dev->hbm_bytes), 4, digits);
  dc_buf_puts(b, m->v[DC_METRIC_FITS] != 0.0 ? ",\"fits\":true"
                                             : ",\"fits\":false");
  if (m->has_speedup)
    detail_num(b, "speedup", m->v[DC_METRIC_SPEEDUP], 4, digits);
  if (r->n_ranks > 1) {
    dc_buf_puts(b, ",\"ranks\":[");
    dc_memory *rmem = dc_xmalloc((size_t)g->n_ranks * sizeof *rmem);
    dc_memory_ranks(g, pr->dev->hbm_bytes, rmem);
    for (int32_t i = 0; i < r->n_ranks; i++) {
      const dc_eval_rank *x = &r->ranks[i];
      const dc_memory rm = rmem[i];
      int64_t total = dc_memory_total(&rm);
      dc_buf_puts(b, i ? ",{\"rank\":" : "{\"rank\":");
      rt_emit_put_int(b, i);
      detail_num(b, "e2e_ms", ms(x->e2e_us), 4, digits);
      detail_num(b, "emb_ms", ms(x->emb_us), 4, digits);
      detail_num(b, "comm_ms", ms(x->comm_us), 4, digits);
      detail_num(b, "mem_gib", gib((double)total), 4, digits);
      dc_buf_puts(b, total <= rm.hbm_bytes ? ",\"fits\":true}"
                                           : ",\"fits\":false}");
    }
    dc_buf_putc(b, ']');
    free(rmem);
  }
  dc_buf_puts(b, "}}\n");
}

/* Evaluates point `i` and formats its row into w->row. */
static bool point_row(worker *w, const run *R, int64_t i) {
  double base = 0.0;
  int64_t b = R->src->baseline_of && R->o->rows == DC_ROWS_POINT
                  ? R->src->baseline_of(R->src->ctx, i)
                  : -1;
  if (b >= 0 && b != i && !baseline_e2e(w, R, b, &base)) return false;
  dc_arena_reset(&w->arena);
  bool record = R->o->timeline_sink != NULL;
  const dc_graph *g =
      R->src->build(R->src->ctx, i, record ? DC_GRAPH_FULL : DC_GRAPH_PRICED,
                    &w->arena, &w->diags);
  if (g && R->o->rows == DC_ROWS_CAPACITY) {
    dc_buf_clear(&w->row);
    if (capacity_rows(w, R, g->point)) return true;
    w->failed_index = i;
    return false;
  }
  dc_eval_result r;
  dc_metrics m;
  pricer pr;
  if (!g || !evaluate(w, g, record, R->sharding_metrics, &r, &m, &pr,
                      &w->diags)) {
    w->failed_index = i;
    return false;
  }
  w->n_unfit += m.v[DC_METRIC_FITS] == 0.0;
  if (b >= 0) {
    if (b == i) base = r.e2e_us;
    m.has_speedup = true;
    m.v[DC_METRIC_SPEEDUP] = r.e2e_us > 0 ? base / r.e2e_us : 0.0;
  }
  dc_buf_clear(&w->row);
  if (R->o->rows == DC_ROWS_RANK)
    rank_rows(w, R, g, &r, &pr);
  else if (R->o->rows == DC_ROWS_SHARD)
    shard_rows(w, R, g, &pr);
  else {
    rt_emit_row(R->o->format, R->cols, R->n_cols, g->point, &m, R->o->digits,
                R->o->has_precision ? R->o->precision : -1,
                &w->row, &w->scratch);
    if (R->o->format == DC_FORMAT_JSONL) detail_json(R, g, &r, &m, &pr, &w->row);
  }
  if (record) {
    dc_buf_clear(&w->timeline);
    dc_timeline_write(g, &r, &w->timeline);
    if (!R->o->timeline_sink(R->o->timeline_ctx, i, w->timeline.data,
                             w->timeline.len)) {
      dc_diag_error(&w->diags, DC_DIAG_IO, (dc_span){0},
                    "cannot write the timeline of point %lld",
                    (long long)i);
      w->failed_index = i;
      return false;
    }
  }
  return true;
}

static void progress_show(struct progress *p, int64_t done, bool final);
static bool flush_out(run *R, dc_buf *out, bool force);

/* Called with the lock held, by a worker that has just published rows. If
 * no one is writing and the next row in order is ready, this worker becomes
 * the writer: it moves every ready row, in order, into the output buffer,
 * then writes the buffer out without the lock, and repeats until the next
 * row is not ready. One writer at a time keeps the order; the writer
 * re-checks under the lock before it stops, so a row published while it
 * was writing is never left behind. No thread exists only to write: on a
 * machine with as many cores as jobs, nobody is descheduled to wake it. */
static void emit_ready(run *R) {
  if (R->writing) return;
  R->writing = true;
  while (!R->failed) {
    int64_t before = R->emitted;
    while (R->emitted < R->n_local) {
      slot *s = &R->slots[R->emitted % R->window];
      if (!s->ready) break;
      dc_buf_append(R->out, s->buf.data, s->buf.len);
      s->ready = false;
      R->emitted++;
    }
    if (R->emitted == before) break;
    int64_t emitted = R->emitted;
    pthread_cond_broadcast(&R->space);
    pthread_mutex_unlock(&R->mu);
    bool wrote = flush_out(R, R->out, false);
    progress_show(R->prog, emitted, false);
    pthread_mutex_lock(&R->mu);
    if (!wrote) {
      R->failed = true;
      pthread_cond_broadcast(&R->space);
    }
  }
  R->writing = false;
}

/* Workers claim CLAIM_CHUNK consecutive points per trip through the lock
 * and publish them together: one lock round trip per chunk, not per point.
 * A claimed slot belongs to its worker until it is marked ready (the
 * writer never touches a slot that is not ready, and a slot is claimed
 * again only after it has been emitted), so rows are formatted straight
 * into their slots without holding the lock. A worker waits only when the
 * window is full, that is when the row to emit next is still being
 * computed by another worker, which will emit it. */
static void *worker_main(void *arg) {
  void **pair = arg;
  run *R = pair[0];
  worker *w = pair[1];
  pthread_mutex_lock(&R->mu);
  for (;;) {
    if (R->failed || R->next_claim >= R->n_local) break;
    int64_t j0 = R->next_claim;
    int64_t n = R->emitted + R->window - j0;
    if (n <= 0) {
      pthread_cond_wait(&R->space, &R->mu);
      continue;
    }
    if (n > CLAIM_CHUNK) n = CLAIM_CHUNK;
    if (n > R->n_local - j0) n = R->n_local - j0;
    R->next_claim = j0 + n;
    pthread_mutex_unlock(&R->mu);
    bool ok = true;
    int64_t done = 0;
    for (; done < n && ok; done++) {
      ok = point_row(w, R, global_index(R, j0 + done));
      if (!ok) break;
      slot *s = &R->slots[(j0 + done) % R->window];
      dc_buf t = s->buf;
      s->buf = w->row;
      w->row = t;
    }
    pthread_mutex_lock(&R->mu);
    for (int64_t k = 0; k < done; k++)
      R->slots[(j0 + k) % R->window].ready = true;
    if (!ok) {
      R->failed = true;
      pthread_cond_broadcast(&R->space);
      break;
    }
    emit_ready(R);
  }
  pthread_mutex_unlock(&R->mu);
  return NULL;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The progress bar on stderr: the share done, the rate, and the time
 * left at that rate. It never shares a line with the table: before the
 * table is written (stdout may be the same terminal) a drawn bar is
 * erased, and the next update draws it again below what was written. */
typedef struct progress {
  bool on, shown; /* shown: a bar is on the terminal's current line */
  double start, last;
  int64_t total;
} progress;

static void progress_clear(progress *p) {
  if (!p || !p->shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  p->shown = false;
}

/* "1h02m", "3m05s", "12s": a duration to the second. */
static void put_duration(char *buf, size_t cap, double s) {
  long t = s < 0 ? 0 : s > 3.6e7 ? 36000000L : (long)(s + 0.5);
  if (t >= 3600)
    snprintf(buf, cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
  else if (t >= 60)
    snprintf(buf, cap, "%ldm%02lds", t / 60, t % 60);
  else
    snprintf(buf, cap, "%lds", t);
}

static void progress_show(progress *p, int64_t done, bool final) {
  if (!p || !p->on) return;
  double t = now_s();
  if (!final && p->last > 0 && t - p->last < 0.1) return;
  p->last = t;
  int width = 30, fill = p->total ? (int)(done * width / p->total) : width;
  char bar[64];
  for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : ' ';
  bar[width] = '\0';
  double el = t - p->start, rate = el > 0 ? (double)done / el : 0;
  char when[32] = "";
  if (final) {
    put_duration(when + 5, sizeof when - 5, el);
    memcpy(when, "  in ", 5);
  } else if (rate > 0 && done > 0) {
    put_duration(when + 6, sizeof when - 6, (double)(p->total - done) / rate);
    memcpy(when, "  ETA ", 6);
  }
  fprintf(stderr, "\r\033[K[%s] %3d%% %lld/%lld points  %.3g points/s%s",
          bar, p->total ? (int)(done * 100 / p->total) : 100,
          (long long)done, (long long)p->total, rate, when);
  if (final) fputc('\n', stderr);
  p->shown = !final;
  fflush(stderr);
}

static bool flush_out(run *R, dc_buf *out, bool force) {
  if (out->len == 0 || (!force && out->len < FLUSH_BYTES)) return true;
  progress_clear(R->prog);
  bool ok = R->o->sink(R->o->sink_ctx, out->data, out->len);
  dc_buf_clear(out);
  return ok;
}

bool dc_sweep_run(const dc_sweep_source *src, dc_sweep_opts *o, dc_diags *d) {
  DC_ASSERT(o->shard_n >= 1 && o->shard_k >= 1 && o->shard_k <= o->shard_n);
  run R;
  memset(&R, 0, sizeof R);
  R.src = src;
  R.o = o;
  R.first = shard_first(src->n_points, o->shard_k, o->shard_n);
  R.n_local = shard_first(src->n_points, o->shard_k + 1, o->shard_n) -
              R.first;
  bool has_baseline = src->baseline_of && src->n_points > 0 &&
                      src->baseline_of(src->ctx, 0) >= 0;
  rt_emit_col *cols = NULL;
  if (!rt_emit_columns(src, has_baseline, &cols, &R.n_cols, d)) {
    free(cols);
    return false;
  }
  R.cols = cols;
  /* The statistics of dc_metrics_sharding are metrics from
   * DC_METRIC_FIRST_EXTRA on: skipped (they cost a TorchRec estimate per
   * point) when no column names one; the row modes always get them. */
  R.sharding_metrics = o->rows != DC_ROWS_POINT;
  for (size_t i = 0; i < R.n_cols; i++)
    if (!cols[i].is_param && cols[i].metric >= DC_METRIC_FIRST_EXTRA &&
        cols[i].metric < DC_METRIC_FIRST_DETAIL)
      R.sharding_metrics = true;
  int jobs = o->jobs < 1 ? 1 : o->jobs;
  if (jobs > 256) jobs = 256;
  if ((int64_t)jobs > R.n_local && R.n_local > 0) jobs = (int)R.n_local;

  dc_buf out = {0};
  bool ok = true;
  /* The header: the first shard carries it, so shards concatenate into
   * the single run's output, a Markdown table included. */
  if (o->rows != DC_ROWS_POINT)
    rt_emit_mode_columns(src, o->rows, &R.mcols, &R.n_mcols);
  if (o->shard_k == 1) {
    if (o->rows != DC_ROWS_POINT)
      rt_emit_cells_header(o->format, R.mcols, R.n_mcols, &out);
    else
      rt_emit_header(o->format, cols, R.n_cols, &out);
  }
  progress prog = {o->progress && R.n_local > 0, false, now_s(), 0.0,
                   R.n_local};
  R.prog = &prog;
  worker *ws = dc_xcalloc((size_t)jobs, sizeof *ws);
  for (int i = 0; i < jobs; i++) {
    worker_init(&ws[i]);
    ws[i].cells.digits = o->digits;
    ws[i].cells.fixed_decimals = o->has_precision;
    ws[i].cells.decimals = o->precision;
  }

  if (jobs == 1) {
    for (int64_t j = 0; j < R.n_local && ok; j++) {
      if (!point_row(&ws[0], &R, global_index(&R, j))) {
        ok = false;
        break;
      }
      dc_buf_append(&out, ws[0].row.data, ws[0].row.len);
      ok = flush_out(&R, &out, false);
      progress_show(&prog, j + 1, false);
    }
  } else {
    /* The calling thread is worker 0; jobs − 1 more are started. */
    R.window = (int64_t)jobs * WINDOW_PER_JOB;
    R.slots = dc_xcalloc((size_t)R.window, sizeof *R.slots);
    R.out = &out;
    pthread_mutex_init(&R.mu, NULL);
    pthread_cond_init(&R.space, NULL);
    pthread_t *th = dc_xcalloc((size_t)jobs, sizeof *th);
    void *(*pairs)[2] = dc_xcalloc((size_t)jobs, sizeof *pairs);
    for (int i = 0; i < jobs; i++) {
      pairs[i][0] = &R;
      pairs[i][1] = &ws[i];
      if (i > 0 && pthread_create(&th[i], NULL, worker_main, pairs[i]) != 0)
        dc_fatal(__FILE__, __LINE__, "cannot start a worker thread");
    }
    worker_main(pairs[0]);
    for (int i = 1; i < jobs; i++) pthread_join(th[i], NULL);
    /* Every published row was emitted by its last writer (emit_ready
     * re-checks before it stops); a failure stops the run early. */
    DC_ASSERT(R.failed || R.emitted == R.n_local);
    if (R.failed) ok = false;
    for (int64_t i = 0; i < R.window; i++) dc_buf_free(&R.slots[i].buf);
    free(R.slots);
    free(th);
    free(pairs);
    pthread_mutex_destroy(&R.mu);
    pthread_cond_destroy(&R.space);
  }
  if (ok) ok = flush_out(&R, &out, true);
  if (ok) progress_show(&prog, R.n_local, true);
  else progress_clear(&prog);

  /* Diagnostics of the failing worker with the smallest point index; the
   * warnings of the others (points that still got their rows). */
  int first = -1;
  for (int i = 0; i < jobs; i++) {
    bool failed = ws[i].diags.errors > 0 || ws[i].failed_index >= 0;
    if (failed &&
        (first < 0 || ws[i].failed_index < ws[first].failed_index))
      first = i;
  }
  for (int i = 0; i < jobs; i++) {
    bool failed = ws[i].diags.errors > 0 || ws[i].failed_index >= 0;
    if (i != first && !failed && ws[i].diags.count)
      dc_diags_append(d, &ws[i].diags);
  }
  if (first >= 0) {
    dc_diags_append(d, &ws[first].diags);
    ok = false;
  }
  o->memo_hits = o->memo_misses = 0;
  o->n_unfit = 0;
  o->n_points = R.n_local;
  for (int i = 0; i < jobs; i++) {
    o->n_unfit += ws[i].n_unfit;
    int64_t h, m;
    dc_memo_stats(ws[i].memo, &h, &m);
    o->memo_hits += h;
    o->memo_misses += m;
    worker_free(&ws[i]);
  }
  free(ws);
  dc_buf_free(&out);
  free(cols);
  free(R.mcols);
  return ok;
}
