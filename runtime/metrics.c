/*
 * metrics.c — what a point's evaluation is reported as (spec/design.md): the
 * timing metrics, the memory footprint per GPU, the per-rank embedding and
 * communication figures, and each metric's fixed output precision.
 *
 * Timing (from dc_eval_result; the iteration is the slowest rank's):
 *   e2e_ms         max over ranks of max(cpu, every stream)
 *   gpu_active_ms  union of the critical rank's kernel intervals
 *   gpu_idle_ms    e2e_ms − gpu_active_ms
 *   gpu_util       gpu_active_ms / e2e_ms
 *   cpu_ms         the critical rank's host time
 *   kernel_only_ms max over ranks of the host-free critical path (one
 *                  stream: the sum of kernel times, the paper's baseline)
 *   samples_per_s  global batch / e2e
 *   emb_ms         max over ranks of embedding fwd+bwd kernel time;
 *   emb_imbalance  that max over the mean (1 when no rank has any)
 *   comm_ms, comm_bytes  max over ranks of collective kernel time / payload
 *
 * Where e2e_ms goes on the critical rank (the paper's
 * breakdown; the four add up to e2e_ms):
 *   compute_ms      union of its non-collective kernel intervals
 *   exposed_comm_ms gpu_active − compute: collectives with no compute
 *                   kernel beside them (overlapped communication is
 *                   hidden, so not counted)
 *   exposed_host_ms the GPU idle time the host overheads add: e2e minus
 *                   the rank's host-free critical path (kernel_only),
 *                   clamped to [0, gpu_idle]
 *   other_idle_ms   the rest of the idle time: waiting for other ranks at
 *                   collectives, for another stream's results
 *
 * Memory per GPU (the largest rank's), an estimate from the graph:
 *   params      embedding rows this rank holds (from its lookup kernels:
 *               tables·rows·dim·dtype bytes) + dense MLP weights and biases
 *               (fp32, replicated on every rank)
 *   optimizer   sgd: none; adagrad: one fp32 state per parameter;
 *               rowwise_adagrad: one fp32 per embedding row + one per dense
 *               parameter; adam: two per parameter
 *   activations device tensors written by input, forward and loss ops (kept
 *               for the backward), each once: an op and its children list
 *               the same output
 *   workspace   dense gradients + twice the largest tensor a backward op
 *               creates (the gradient being produced and the one consumed)
 *               + twice the largest collective buffer; outputs that alias
 *               an input (in-place updates) take no new memory
 *   fits        params + optimizer + activations + workspace ≤ HBM, and
 *               the fullest host's tables ≤ its memory
 *   host_gib    tables kept in host memory (uvm, uvm_caching: weights and
 *               optimizer state), the fullest host's (dc_memory_host)
 *   cache_hit_rate  lookups of tables beyond HBM served from the HBM
 *               cache, lookup-weighted (kernels/uvm.c); 1 when every
 *               table is in HBM
 * It leaves out the CUDA context, allocator fragmentation and library
 * workspaces (cuBLAS), which a capacity plan should keep as headroom.
 *
 * On more than one GPU the memory columns come instead from
 * graphgen's per-rank formula, dc_shard_plan_memory (graphgen/memory.c),
 * the very function the `plan: auto` planner checks HBM with, so a plan
 * the planner accepts never reports fits = false and the two cannot
 * disagree. Its fields map to the columns as
 *   params      emb_weights + dense_weights
 *   optimizer   emb_optimizer + dense_optimizer
 *   activations activations + inputs (the batch on the device)
 *   workspace   emb_grad + dense_grad + workspace (gradients, DDP
 *               buckets, the backward's transient buffers)
 * and the row reports the fullest rank. On one GPU the graph walk above
 * stays (the single-GPU goldens keep their figures). The two agree on
 * params and optimizer; the formula's workspace adds the embedding
 * gradients, which the walk does not count; the walk's activations are
 * larger because it counts the outputs of views (view, transpose, slice
 * of the interaction) as new tensors, which the formula does not
 * (tests/unit/test_runtime_memory.c holds the first two).
 *
 * Sharding metrics (dc_metrics_sharding): the imbalance statistics of the
 * ranks' embedding time (TorchRec's definitions, runtime/plan/plan.h:
 * total variation, total distance, chi divergence, KL) and TorchRec's
 * estimate of the graph's plan with the point's constants:
 *   torchrec_ms            the plan's cost: the slowest rank's sum of its
 *                          shards' fwd/bwd compute and comms
 *   torchrec_{fwd,bwd}_{compute,comms}_ms  that rank's four terms (they
 *                          add up to torchrec_ms)
 *   torchrec_hbm_gib       the fullest rank's storage, TorchRec's way
 *   torchrec_imbalance     max/mean of the ranks' TorchRec cost
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "runtime/plan/plan.h"

static const char *const metric_names[] = {
#define DC_METRIC_STR(sym, name) name,
    DC_METRIC_NAMES(DC_METRIC_STR)
#undef DC_METRIC_STR
};

const char *dc_metric_name(dc_metric_id m) {
  DC_ASSERT((unsigned)m < DC_METRIC_COUNT_);
  return metric_names[m];
}

bool dc_metric_parse(const char *name, dc_metric_id *out) {
  for (int i = 0; i < DC_METRIC_COUNT_; i++)
    if (strcmp(name, metric_names[i]) == 0) {
      *out = (dc_metric_id)i;
      return true;
    }
  return false;
}


static int64_t tensor_bytes(const dc_tensor *t) {
  int64_t n = dc_dtype_bytes(t->dtype);
  for (int32_t i = 0; i < t->ndim; i++) n = dc_sat_mul_i64(n, t->shape[i]);
  return n;
}

/* An in-place update (the optimizer's add_, a fused embedding backward)
 * writes a new version of a parameter or optimizer state: graphgen gives it
 * a new tensor id with the parameter's dtype and shape. Such an output, or
 * one that is literally an input, takes no new memory; the weight
 * gradients it also matches are counted with the dense gradients. */
static bool aliases_input(const dc_graph *g, const dc_op *op, int32_t t) {
  const dc_tensor *o = &g->tensors[t];
  for (int32_t i = 0; i < op->n_inputs; i++) {
    int32_t in = op->inputs[i];
    if (in == t) return true;
    if (in < 0 || in >= g->n_tensors) continue;
    const dc_tensor *x = &g->tensors[in];
    if (x->producer >= 0 || x->on_host || x->dtype != o->dtype ||
        x->ndim != o->ndim)
      continue;
    /* an inline loop: shapes have a handful of dimensions, and this runs
     * for every output of every op of every point (memcmp's call and
     * dispatch cost more than the compare) */
    int32_t d = 0;
    while (d < o->ndim && x->shape[d] == o->shape[d]) d++;
    if (d == o->ndim) return true;
  }
  return false;
}

int64_t dc_memory_total(const dc_memory *m) {
  return dc_sat_add_i64(dc_sat_add_i64(m->params_bytes, m->optimizer_bytes),
                        dc_sat_add_i64(m->activations_bytes,
                                       m->workspace_bytes));
}

/* The graph walk for one rank (see the header comment). */
static void walk_rank(const dc_graph *g, int32_t r, dc_memory *out) {
  const dc_point *p = g->point;
  int64_t dense = p ? dc_point_dense_params(p) : 0;
  int64_t dense_bytes = dc_sat_mul_i64(dense, 4);
  dc_optimizer opt = p ? p->optimizer : DC_OPTIMIZER_SGD;
  dc_optimizer sopt = p ? p->sparse_optimizer : DC_OPTIMIZER_SGD;
  {
    int64_t emb = 0, emb_rows = 0, emb_elems = 0, act = 0, big_bwd = 0,
            big_coll = 0;
    for (int32_t j = g->rank_first[r]; j < g->rank_first[r + 1]; j++) {
      const dc_op *op = &g->ops[j];
      for (int32_t k = 0; k < op->n_launches; k++) {
        const dc_kernel *kk = &op->launches[k].k;
        if (kk->kind == DC_KERNEL_EMBEDDING_FWD) {
          dc_dtype et = kk->u.emb.dtype;
          for (int32_t i = 0; i < kk->u.emb.n_groups; i++) {
            const dc_emb_group *gr = &kk->u.emb.groups[i];
            int64_t rows = dc_sat_mul_i64(gr->tables, gr->rows);
            if (gr->memory == DC_MEMORY_UVM) continue; /* in host memory */
            if (gr->memory == DC_MEMORY_UVM_CACHING) {
              /* the cache alone: slots of a row and 16 bytes of state
               * (graphgen/memory.c); the tables' own state is in host
               * memory */
              int64_t slots = dc_sat_mul_i64(gr->tables, gr->cache_rows);
              emb = dc_sat_add_i64(
                  emb, dc_sat_mul_i64(slots,
                                      dc_emb_row_bytes(et, gr->dim) + 16));
              continue;
            }
            emb_rows = dc_sat_add_i64(emb_rows, rows);
            int64_t elems = dc_sat_mul_i64(rows, gr->dim);
            emb_elems = dc_sat_add_i64(emb_elems, elems);
            emb = dc_sat_add_i64(
                emb, dc_sat_mul_i64(rows, dc_emb_row_bytes(et, gr->dim)));
          }
        } else if (dc_kernel_is_collective(kk->kind)) {
          if (kk->u.coll.bytes > big_coll) big_coll = kk->u.coll.bytes;
        }
      }
      /* Outputs count only before the loss (activations) and in the
       * backward (its largest buffer): the optimizer's outputs are not
       * looked at, nor is the alias test made for a backward output that
       * could not raise the maximum anyway. */
      bool fwd = op->phase <= DC_PHASE_LOSS;
      if (!fwd && op->phase != DC_PHASE_BACKWARD) continue;
      for (int32_t i = 0; i < op->n_outputs; i++) {
        int32_t t = op->outputs[i];
        if (t < 0 || t >= g->n_tensors || g->tensors[t].on_host) continue;
        /* An op and its children list the same output (aten::linear and
         * its aten::addmm): the tensor counts once, at its producer. */
        if (fwd && g->tensors[t].producer != j) continue;
        int64_t b = tensor_bytes(&g->tensors[t]);
        if (!fwd && b <= big_bwd) continue;
        if (aliases_input(g, op, t)) continue; /* in place: no new memory */
        if (fwd)
          act = dc_sat_add_i64(act, b);
        else
          big_bwd = b;
      }
    }
    int64_t params = dc_sat_add_i64(emb, dense_bytes);
    /* the tables' state follows the sparse optimizer (one per row for
     * row-wise Adagrad), the MLPs' the dense one (row-wise: per value) */
    dc_optimizer dopt = opt == DC_OPTIMIZER_ROWWISE_ADAGRAD
                            ? DC_OPTIMIZER_ADAGRAD
                            : opt;
    int64_t state =
        dc_sat_add_i64(dc_optimizer_state_bytes(sopt, emb_rows, emb_elems),
                       dc_optimizer_state_bytes(dopt, dense, dense));
    int64_t bufs = dc_sat_add_i64(dc_sat_mul_i64(big_bwd, 2),
                                  dc_sat_mul_i64(big_coll, 2));
    int64_t ws = dc_sat_add_i64(dense_bytes, bufs);
    out->params_bytes = params;
    out->optimizer_bytes = state;
    out->activations_bytes = act;
    out->workspace_bytes = ws;
  }
}

/* The columns of graphgen's per-rank formula (the mapping above). */
static void of_rank_memory(const dc_rank_memory *m, int64_t hbm_bytes,
                           dc_memory *out) {
  memset(out, 0, sizeof *out);
  out->hbm_bytes = hbm_bytes;
  out->params_bytes = dc_sat_add_i64(m->emb_weights, m->dense_weights);
  out->optimizer_bytes = dc_sat_add_i64(m->emb_optimizer, m->dense_optimizer);
  out->activations_bytes = dc_sat_add_i64(m->activations, m->inputs);
  out->workspace_bytes =
      dc_sat_add_i64(dc_sat_add_i64(m->emb_grad, m->dense_grad), m->workspace);
}

static bool by_formula(const dc_graph *g) {
  return g->n_ranks > 1 && g->plan && g->point;
}

void dc_memory_rank(const dc_graph *g, int32_t rank, int64_t hbm_bytes,
                    dc_memory *out) {
  if (by_formula(g)) {
    dc_rank_memory m;
    dc_shard_plan_memory(g->point, g->plan, rank, &m);
    of_rank_memory(&m, hbm_bytes, out);
    return;
  }
  memset(out, 0, sizeof *out);
  out->hbm_bytes = hbm_bytes;
  walk_rank(g, rank, out);
}

void dc_memory_ranks(const dc_graph *g, int64_t hbm_bytes, dc_memory *out) {
  if (!by_formula(g)) {
    for (int32_t r = 0; r < g->n_ranks; r++)
      dc_memory_rank(g, r, hbm_bytes, &out[r]);
    return;
  }
  /* every rank's formula in one pass over the plan (rank by rank, each
   * walked every table's shards: O(ranks × shards)) */
  dc_rank_memory *all = dc_xmalloc((size_t)g->n_ranks * sizeof *all);
  dc_shard_plan_memory_all(g->point, g->plan, all);
  for (int32_t r = 0; r < g->n_ranks; r++)
    of_rank_memory(&all[r], hbm_bytes, &out[r]);
  free(all);
}

void dc_memory_estimate(const dc_graph *g, int64_t hbm_bytes,
                        dc_memory *out) {
  memset(out, 0, sizeof *out);
  out->hbm_bytes = hbm_bytes;
  dc_memory one, *m = &one;
  if (g->n_ranks > 1) m = dc_xmalloc((size_t)g->n_ranks * sizeof *m);
  dc_memory_ranks(g, hbm_bytes, m);
  int64_t best_total = -1;
  for (int32_t r = 0; r < g->n_ranks; r++) {
    int64_t total = dc_memory_total(&m[r]);
    if (total > best_total) {
      best_total = total;
      *out = m[r];
    }
  }
  if (m != &one) free(m);
}

void dc_memory_host(const dc_graph *g, int64_t host_capacity,
                    dc_memory *out) {
  out->host_capacity = host_capacity;
  out->host_bytes = 0;
  out->cache_hit_rate = 1;
  const dc_point *p = g->point;
  if (!p || !g->plan) return;
  int32_t W = g->plan->n_ranks < 1 ? 1 : g->plan->n_ranks;
  int32_t H = g->plan->hosts < 1 ? 1 : g->plan->hosts;
  dc_rank_memory *all = dc_xmalloc((size_t)W * sizeof *all);
  int64_t *host = dc_xcalloc((size_t)H, sizeof *host);
  dc_shard_plan_memory_all(p, g->plan, all);
  for (int32_t r = 0; r < W; r++) {
    int32_t h = dc_shard_plan_host(g->plan, r);
    if (h < 0 || h >= H) h = 0;
    host[h] = dc_sat_add_i64(host[h], all[r].host_bytes);
  }
  for (int32_t h = 0; h < H; h++)
    if (host[h] > out->host_bytes) out->host_bytes = host[h];
  free(host);
  free(all);
  /* the hit rate, lookup-weighted over the groups beyond HBM of every
   * rank's forward lookups */
  double hit = 0, n = 0;
  for (int32_t j = 0; j < g->n_ops; j++) {
    const dc_op *op = &g->ops[j];
    for (int32_t k = 0; k < op->n_launches; k++) {
      const dc_kernel *kk = &op->launches[k].k;
      if (kk->kind != DC_KERNEL_EMBEDDING_FWD) continue;
      for (int32_t i = 0; i < kk->u.emb.n_groups; i++) {
        const dc_emb_group *gr = &kk->u.emb.groups[i];
        if (gr->memory != DC_MEMORY_UVM && gr->memory != DC_MEMORY_UVM_CACHING)
          continue;
        double x = (double)kk->u.emb.batch * gr->tables * gr->pooling;
        n += x;
        hit += x * dc_kernel_cache_hit_rate(gr);
      }
    }
  }
  if (n > 0) out->cache_hit_rate = hit / n;
}

static double gib(int64_t b) { return (double)b / (1024.0 * 1024.0 * 1024.0); }

void dc_metrics_compute(const dc_graph *g, const dc_eval_result *r,
                        const dc_memory *mem, dc_metrics *out) {
  memset(out, 0, sizeof *out);
  const dc_eval_rank *c = &r->ranks[r->critical_rank];
  double e2e = r->e2e_us;
  double kernel_only = 0.0, emb_max = 0.0, emb_sum = 0.0, comm = 0.0;
  int64_t bytes = 0;
  for (int32_t i = 0; i < r->n_ranks; i++) {
    const dc_eval_rank *x = &r->ranks[i];
    if (x->kernel_only_us > kernel_only) kernel_only = x->kernel_only_us;
    if (x->emb_us > emb_max) emb_max = x->emb_us;
    emb_sum += x->emb_us;
    if (x->comm_us > comm) comm = x->comm_us;
    if (x->comm_bytes > bytes) bytes = x->comm_bytes;
  }
  double *v = out->v;
  v[DC_METRIC_E2E_MS] = e2e / 1000.0;
  v[DC_METRIC_GPU_ACTIVE_MS] = c->gpu_active_us / 1000.0;
  v[DC_METRIC_GPU_IDLE_MS] = (e2e - c->gpu_active_us) / 1000.0;
  v[DC_METRIC_GPU_UTIL] = e2e > 0 ? c->gpu_active_us / e2e : 0.0;
  v[DC_METRIC_CPU_MS] = c->cpu_us / 1000.0;
  v[DC_METRIC_KERNEL_ONLY_MS] = kernel_only / 1000.0;
  int64_t batch = g->point ? g->point->batch_size : 0;
  v[DC_METRIC_SAMPLES_PER_S] = e2e > 0 ? (double)batch / (e2e * 1e-6) : 0.0;
  v[DC_METRIC_PARAMS_GIB] = gib(mem->params_bytes);
  v[DC_METRIC_OPTIMIZER_GIB] = gib(mem->optimizer_bytes);
  v[DC_METRIC_ACTIVATIONS_GIB] = gib(mem->activations_bytes);
  v[DC_METRIC_WORKSPACE_GIB] = gib(mem->workspace_bytes);
  int64_t total = dc_memory_total(mem);
  v[DC_METRIC_FITS] = total <= mem->hbm_bytes && mem->host_bytes <=
                                                      mem->host_capacity
                          ? 1.0
                          : 0.0;
  v[DC_METRIC_HOST_GIB] = gib(mem->host_bytes);
  v[DC_METRIC_CACHE_HIT_RATE] = mem->cache_hit_rate;
  v[DC_METRIC_EMB_MS] = emb_max / 1000.0;
  double mean = r->n_ranks ? emb_sum / r->n_ranks : 0.0;
  v[DC_METRIC_EMB_IMBALANCE] = mean > 0 ? emb_max / mean : 1.0;
  v[DC_METRIC_COMM_MS] = comm / 1000.0;
  v[DC_METRIC_COMM_BYTES] = (double)bytes;
  v[DC_METRIC_SPEEDUP] = 0.0;
  out->has_speedup = false;
  double idle = e2e > c->gpu_active_us ? e2e - c->gpu_active_us : 0.0;
  double compute = c->compute_us < c->gpu_active_us ? c->compute_us
                                                     : c->gpu_active_us;
  double host = e2e - c->kernel_only_us;
  host = host < 0.0 ? 0.0 : host > idle ? idle : host;
  v[DC_METRIC_COMPUTE_MS] = compute / 1000.0;
  v[DC_METRIC_EXPOSED_COMM_MS] = (c->gpu_active_us - compute) / 1000.0;
  v[DC_METRIC_EXPOSED_HOST_MS] = host / 1000.0;
  v[DC_METRIC_OTHER_IDLE_MS] = (idle - host) / 1000.0;
}

void dc_metrics_sharding(const dc_graph *g, const dc_eval_result *r,
                         dc_arena *a, dc_metrics *out) {
  double *v = out->v;
  int32_t k = r->n_ranks;
  double *emb = dc_arena_array(a, (size_t)(k > 0 ? k : 1), sizeof(double));
  for (int32_t i = 0; i < k; i++) emb[i] = r->ranks[i].emb_us;
  dc_imbalance im;
  dc_imbalance_of(emb, k, &im);
  v[DC_METRIC_EMB_TOTAL_VARIATION] = im.total_variation;
  v[DC_METRIC_EMB_TOTAL_DISTANCE] = im.total_distance;
  v[DC_METRIC_EMB_CHI_DIVERGENCE] = im.chi_divergence;
  v[DC_METRIC_EMB_KL_DIVERGENCE] = im.kl_divergence;
  if (!g->point || !g->plan) return;
  dc_torchrec_consts c;
  dc_torchrec_consts_of(g->point, &c);
  dc_torchrec_estimate e;
  dc_torchrec_estimate_plan(g->point, g->plan, &c, a, &e);
  const dc_torchrec_rank *s = &e.ranks[e.max_rank];
  v[DC_METRIC_TORCHREC_MS] = e.max_ms;
  v[DC_METRIC_TORCHREC_FWD_COMPUTE_MS] = s->fwd_compute_ms;
  v[DC_METRIC_TORCHREC_FWD_COMMS_MS] = s->fwd_comms_ms;
  v[DC_METRIC_TORCHREC_BWD_COMPUTE_MS] = s->bwd_compute_ms;
  v[DC_METRIC_TORCHREC_BWD_COMMS_MS] = s->bwd_comms_ms;
  v[DC_METRIC_TORCHREC_HBM_GIB] = e.max_hbm_bytes / (1024.0 * 1024 * 1024);
  v[DC_METRIC_TORCHREC_IMBALANCE] = e.perf.max_over_mean;
}
