/*
 * stats.c — where an iteration's time goes, from a Kineto trace:
 * the per-batch breakdown of the paper's §III-A and Fig. 5.
 *
 *   steps:   per ProfilerStep#N window: wall time, GPU active time (the
 *            union of all GPU activity intervals clipped to the window),
 *            idle = wall − active, utilization = active / wall, the plain
 *            sum of kernel times and the number of GPU activities;
 *   kinds:   GPU time per kernel kind (the Fig. 5 breakdown);
 *   ops:     per top-level op name: count, CPU time, GPU time launched
 *            from its subtree;
 *   kernels: the top kernels by total time, with their kind.
 *
 * GPU activity belongs to the step of the runtime call that launched it
 * (or its own start when unlinked). Kinds come from ONE ordered table of
 * PCRE2 patterns (case-insensitive, first match wins), so a kernel has
 * exactly one kind and the kinds add up to the total.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "runtime/trace/trace.h"

/* The kernel-kind table. Order matters: conv before gemm (cuDNN's
 * implicit_convolve_sgemm), embedding before optimizer (FBGEMM's fused
 * rowwise_adagrad backward), collective first (NCCL names contain
 * "Reduce"). Memcpy/memset come from the event category. */
static const struct {
  const char *kind;
  const char *pattern;
} kind_table[] = {
    {"collective", "nccl|all_?reduce|all_?to_?all|all_?gather|"
                   "reduce_?scatter|sendrecv|broadcast"},
    {"embedding", "embedding|embbag|bounds_check_indices|linearize_(cache_)?"
                  "index|lxu_cache|fbgemm_gpu::|permute_pooled_embs|"
                  "index_?select|bucketize"},
    {"conv", "conv|cudnn|scudnn|winograd|fprop|dgrad|wgrad|implicit_gemm"},
    {"gemm", "gemm|gemv|cutlass|cublas|xmma|splitkreduce|s1688|s16816|s884"},
    {"optimizer", "multi_tensor_apply|adam|adagrad|sgd|lamb|fused_optim"},
    {"norm", "batch_?norm|bn_fw|bn_bw|layer_?norm|group_?norm|rms_?norm"},
    {"concat", "catarray|concat"},
    {"transpose", "transpose|permute"},
    {"index", "index|tril|gather|scatter"},
    {"reduce", "reduce|reduction|softmax|argmax|radixsort|cub::|scan|sum_|"
               "mean"},
    {"elementwise", "elementwise|vectorized|unrolled|pointwise|fill|copy|"
                    "relu|sigmoid|tanh|threshold|add|mul|div|clamp|where|"
                    "dropout|loss|nll"},
};

static pcre2_code *kind_re[DC_COUNTOF(kind_table)];
static pthread_once_t kind_once = PTHREAD_ONCE_INIT;

static void kind_init(void) {
  for (size_t i = 0; i < DC_COUNTOF(kind_table); i++) {
    int err;
    PCRE2_SIZE off;
    kind_re[i] =
        pcre2_compile((PCRE2_SPTR)kind_table[i].pattern, PCRE2_ZERO_TERMINATED,
                      PCRE2_CASELESS, &err, &off, NULL);
    DC_ASSERT(kind_re[i] != NULL); /* the table is ours */
  }
}

const char *dc_trace_kernel_kind(const char *name, uint8_t kind) {
  if (kind == DC_TRACE_MEMCPY) return "memcpy";
  if (kind == DC_TRACE_MEMSET) return "memset";
  pthread_once(&kind_once, kind_init);
  const char *found = "other";
  for (size_t i = 0; i < DC_COUNTOF(kind_table); i++) {
    pcre2_match_data *md =
        pcre2_match_data_create_from_pattern(kind_re[i], NULL);
    int rc = pcre2_match(kind_re[i], (PCRE2_SPTR)name, PCRE2_ZERO_TERMINATED, 0,
                         0, md, NULL);
    pcre2_match_data_free(md);
    if (rc >= 0) {
      found = kind_table[i].kind;
      break;
    }
  }
  return found;
}

/* ---- aggregation ------------------------------------------------------------
 */

typedef struct agg {
  const char *name;
  const char *kind;
  int64_t count;
  double a_us, b_us; /* ops: CPU, GPU; kernels: GPU */
  int64_t launches;
} agg;

static int cmp_agg(const void *pa, const void *pb) {
  const agg *a = pa, *b = pb;
  double x = a->b_us + (a->kind ? 0 : a->a_us);
  double y = b->b_us + (b->kind ? 0 : b->a_us);
  if (x != y) return x > y ? -1 : 1;
  return strcmp(a->name, b->name);
}

typedef struct interval {
  int64_t s, e;
} interval;

static int cmp_iv(const void *pa, const void *pb) {
  const interval *a = pa, *b = pb;
  if (a->s != b->s) return a->s < b->s ? -1 : 1;
  return a->e < b->e ? -1 : a->e > b->e;
}

/* Union length of sorted intervals clipped to [lo, hi). */
static int64_t union_ns(const interval *iv, size_t n, int64_t lo, int64_t hi) {
  int64_t total = 0, cur_s = 0, cur_e = INT64_MIN;
  for (size_t i = 0; i < n && iv[i].s < hi; i++) {
    int64_t s = iv[i].s > lo ? iv[i].s : lo;
    int64_t e = iv[i].e < hi ? iv[i].e : hi;
    if (e <= s) continue;
    if (s > cur_e) {
      if (cur_e > cur_s) total += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
    } else if (e > cur_e) {
      cur_e = e;
    }
  }
  if (cur_e > cur_s) total += cur_e - cur_s;
  return total;
}

/* ---- output helpers -------------------------------------------------------
 */

static void cell_sep(dc_buf *o, bool md, bool first) {
  if (md)
    dc_buf_puts(o, first ? "| " : " | ");
  else if (!first)
    dc_buf_putc(o, ',');
}

static void row_end(dc_buf *o, bool md) {
  dc_buf_puts(o, md ? " |\n" : "\n");
}

static void cell_str(dc_buf *o, bool md, bool first, const char *s,
                     size_t max) {
  cell_sep(o, md, first);
  size_t n = strlen(s);
  if (md) {
    bool cut = max && n > max;
    dc_buf_putc(o, '`');
    for (size_t i = 0; i < (cut ? max : n); i++)
      dc_buf_putc(o, s[i] == '|' ? '/' : s[i] == '`' ? '\'' : s[i]);
    if (cut) dc_buf_puts(o, "...");
    dc_buf_putc(o, '`');
    return;
  }
  dc_buf_put_csv_field(o, s);
}

static void cell_num(dc_buf *o, bool md, bool first, double v, int dec) {
  cell_sep(o, md, first);
  dc_buf_put_double(o, v, dec);
}

static void cell_int(dc_buf *o, bool md, bool first, int64_t v) {
  cell_sep(o, md, first);
  dc_buf_printf(o, "%lld", (long long)v);
}

static void header(dc_buf *o, bool md, const char *const *cols, size_t n) {
  for (size_t i = 0; i < n; i++) {
    cell_sep(o, md, i == 0);
    dc_buf_puts(o, cols[i]);
  }
  row_end(o, md);
  if (!md) return;
  for (size_t i = 0; i < n; i++)
    dc_buf_puts(o, "|---");
  dc_buf_puts(o, "|\n");
}

static void section(dc_buf *o, bool md, bool all, const char *title) {
  if (md)
    dc_buf_printf(o, "%s### %s\n\n", o->len ? "\n" : "", title);
  else if (all)
    dc_buf_printf(o, "%s# %s\n", o->len ? "\n" : "", title);
}

/* ---- the tables -------------------------------------------------------------
 */

void dc_trace_stats_write(const dc_trace_model *m, bool md,
                          dc_trace_table which, int top_kernels, dc_buf *out) {
  const dc_trace *t = m->t;
  bool all = which == DC_TRACE_TABLE_ALL;
  size_t n_steps = m->n_steps ? m->n_steps : 1;

  /* GPU activities of the selected steps: step, interval, kind. */
  size_t n_gpu = 0;
  uint32_t *gpu = dc_xmalloc((t->n_ev ? t->n_ev : 1) * sizeof *gpu);
  int32_t *gstep = dc_xmalloc((t->n_ev ? t->n_ev : 1) * sizeof *gstep);
  int64_t lo_ns = INT64_MAX, hi_ns = INT64_MIN;
  for (size_t i = 0; i < t->n_ev; i++) {
    const dc_trace_event *e = &t->ev[i];
    if (e->ts_ns < lo_ns) lo_ns = e->ts_ns;
    if (e->ts_ns + e->dur_ns > hi_ns) hi_ns = e->ts_ns + e->dur_ns;
    if (!dc_trace_kind_is_gpu(e->kind)) continue;
    int32_t r = m->launcher[i];
    int32_t s = dc_trace_model_step_of(m, r >= 0 ? t->ev[r].ts_ns : e->ts_ns);
    if (s < 0) continue;
    gstep[n_gpu] = s;
    gpu[n_gpu++] = (uint32_t)i;
  }
  if (t->n_ev == 0) lo_ns = hi_ns = 0;

  if (all || which == DC_TRACE_TABLE_STEPS) {
    /* Every GPU interval (any step: a kernel of step N may still run in
     * step N+1's window, and the window is what a step costs). */
    size_t n_iv = 0;
    interval *iv = dc_xmalloc((t->n_ev ? t->n_ev : 1) * sizeof *iv);
    for (size_t i = 0; i < t->n_ev; i++)
      if (dc_trace_kind_is_gpu(t->ev[i].kind))
        iv[n_iv++] =
            (interval){t->ev[i].ts_ns, t->ev[i].ts_ns + t->ev[i].dur_ns};
    qsort(iv, n_iv, sizeof *iv, cmp_iv);
    double *ksum = dc_xcalloc(n_steps, sizeof *ksum);
    int64_t *kcount = dc_xcalloc(n_steps, sizeof *kcount);
    for (size_t k = 0; k < n_gpu; k++) {
      ksum[gstep[k]] += (double)t->ev[gpu[k]].dur_ns / 1000.0;
      kcount[gstep[k]]++;
    }
    section(out, md, all, "steps");
    static const char *const cols[] = {
        "step",     "wall_ms",       "gpu_active_ms", "gpu_idle_ms",
        "gpu_util", "kernel_sum_ms", "gpu_events"};
    header(out, md, cols, DC_COUNTOF(cols));
    double sw = 0, sa = 0, sk = 0;
    int64_t sc = 0, ns = 0;
    for (size_t s = 0; s < n_steps; s++) {
      if (m->n_steps && !m->step_selected[s]) continue;
      int64_t lo = m->n_steps ? m->steps[s].ts_ns : lo_ns;
      int64_t hi = m->n_steps ? m->steps[s].end_ns : hi_ns;
      double wall = (double)(hi - lo) / 1e6;
      double act = (double)union_ns(iv, n_iv, lo, hi) / 1e6;
      if (m->n_steps) {
        cell_sep(out, md, true);
        dc_buf_printf(out, "%lld", (long long)m->steps[s].number);
      } else {
        cell_sep(out, md, true);
        dc_buf_puts(out, "all");
      }
      cell_num(out, md, false, wall, 3);
      cell_num(out, md, false, act, 3);
      cell_num(out, md, false, wall - act, 3);
      cell_num(out, md, false, wall > 0 ? act / wall : 0, 3);
      cell_num(out, md, false, ksum[s] / 1000.0, 3);
      cell_int(out, md, false, kcount[s]);
      row_end(out, md);
      sw += wall;
      sa += act;
      sk += ksum[s] / 1000.0;
      sc += kcount[s];
      ns++;
    }
    if (ns > 1) {
      double k = (double)ns;
      cell_sep(out, md, true);
      dc_buf_puts(out, "mean");
      cell_num(out, md, false, sw / k, 3);
      cell_num(out, md, false, sa / k, 3);
      cell_num(out, md, false, (sw - sa) / k, 3);
      cell_num(out, md, false, sw > 0 ? sa / sw : 0, 3);
      cell_num(out, md, false, sk / k, 3);
      cell_num(out, md, false, (double)sc / k, 1);
      row_end(out, md);
    }
    free(iv);
    free(ksum);
    free(kcount);
  }

  /* Kernels by name (kinds and top kernels). */
  dc_map kidx = {0};
  agg *ka = dc_xmalloc((n_gpu ? n_gpu : 1) * sizeof *ka);
  size_t n_ka = 0;
  double gpu_total = 0;
  for (size_t k = 0; k < n_gpu; k++) {
    const dc_trace_event *e = &t->ev[gpu[k]];
    const char *name = t->names[e->name];
    agg *a = dc_map_get(&kidx, name);
    if (!a) {
      a = &ka[n_ka++];
      memset(a, 0, sizeof *a);
      a->name = name;
      a->kind = dc_trace_kernel_kind(name, e->kind);
      dc_map_put(&kidx, name, a);
    }
    a->count++;
    a->b_us += (double)e->dur_ns / 1000.0;
    gpu_total += (double)e->dur_ns / 1000.0;
  }
  dc_map_free(&kidx);
  qsort(ka, n_ka, sizeof *ka, cmp_agg);
  double per_step = m->n_steps ? 0 : 1;
  for (size_t s = 0; s < m->n_steps; s++)
    per_step += m->step_selected[s];

  if (all || which == DC_TRACE_TABLE_KINDS) {
    dc_map kk = {0};
    agg *kinds = dc_xmalloc((n_ka ? n_ka : 1) * sizeof *kinds);
    size_t n_kinds = 0;
    for (size_t i = 0; i < n_ka; i++) {
      agg *a = dc_map_get(&kk, ka[i].kind);
      if (!a) {
        a = &kinds[n_kinds++];
        memset(a, 0, sizeof *a);
        a->name = ka[i].kind;
        a->kind = ka[i].kind;
        dc_map_put(&kk, ka[i].kind, a);
      }
      a->count += ka[i].count;
      a->b_us += ka[i].b_us;
    }
    dc_map_free(&kk);
    qsort(kinds, n_kinds, sizeof *kinds, cmp_agg);
    section(out, md, all, "kinds");
    static const char *const cols[] = {"kind", "gpu_events", "time_ms",
                                       "ms_per_step", "share"};
    header(out, md, cols, DC_COUNTOF(cols));
    for (size_t i = 0; i < n_kinds; i++) {
      cell_sep(out, md, true);
      dc_buf_puts(out, kinds[i].name);
      cell_int(out, md, false, kinds[i].count);
      cell_num(out, md, false, kinds[i].b_us / 1000.0, 3);
      cell_num(out, md, false, kinds[i].b_us / 1000.0 / per_step, 3);
      cell_num(out, md, false, gpu_total > 0 ? kinds[i].b_us / gpu_total : 0,
               3);
      row_end(out, md);
    }
    free(kinds);
  }

  if (all || which == DC_TRACE_TABLE_OPS) {
    dc_map oidx = {0};
    agg *oa = dc_xmalloc((m->n_tops ? m->n_tops : 1) * sizeof *oa);
    size_t n_oa = 0;
    for (size_t i = 0; i < m->n_tops; i++) {
      const dc_trace_top *tp = &m->tops[i];
      const dc_trace_event *e = &t->ev[tp->ev];
      const char *name = t->names[e->name];
      agg *a = dc_map_get(&oidx, name);
      if (!a) {
        a = &oa[n_oa++];
        memset(a, 0, sizeof *a);
        a->name = name;
        dc_map_put(&oidx, name, a);
      }
      a->count++;
      a->a_us += (double)e->dur_ns / 1000.0;
      a->b_us += tp->kernel_us;
      a->launches += tp->n_gpu;
    }
    dc_map_free(&oidx);
    qsort(oa, n_oa, sizeof *oa, cmp_agg);
    section(out, md, all, "ops");
    static const char *const cols[] = {"op",          "count",  "cpu_ms",
                                       "cpu_mean_us", "gpu_ms", "gpu_events"};
    header(out, md, cols, DC_COUNTOF(cols));
    for (size_t i = 0; i < n_oa; i++) {
      cell_str(out, md, true, oa[i].name, 80);
      cell_int(out, md, false, oa[i].count);
      cell_num(out, md, false, oa[i].a_us / 1000.0, 3);
      cell_num(out, md, false, oa[i].a_us / (double)oa[i].count, 1);
      cell_num(out, md, false, oa[i].b_us / 1000.0, 3);
      cell_int(out, md, false, oa[i].launches);
      row_end(out, md);
    }
    free(oa);
  }

  if (all || which == DC_TRACE_TABLE_KERNELS) {
    section(out, md, all, "kernels");
    static const char *const cols[] = {"kernel",  "kind",    "count",
                                       "time_ms", "mean_us", "share"};
    header(out, md, cols, DC_COUNTOF(cols));
    size_t lim = top_kernels > 0 && (size_t)top_kernels < n_ka
                     ? (size_t)top_kernels
                     : n_ka;
    for (size_t i = 0; i < lim; i++) {
      cell_str(out, md, true, ka[i].name, 80);
      cell_sep(out, md, false);
      dc_buf_puts(out, ka[i].kind);
      cell_int(out, md, false, ka[i].count);
      cell_num(out, md, false, ka[i].b_us / 1000.0, 3);
      cell_num(out, md, false, ka[i].b_us / (double)ka[i].count, 1);
      cell_num(out, md, false, gpu_total > 0 ? ka[i].b_us / gpu_total : 0, 3);
      row_end(out, md);
    }
  }
  free(ka);
  free(gpu);
  free(gstep);
}
