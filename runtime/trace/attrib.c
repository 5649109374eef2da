/*
 * attrib.c — which GPU activity each CPU op of a Kineto trace launched
 * (trace.h has the contract). Two links make the attribution: a kernel,
 * copy or memset names the runtime call that launched it by correlation
 * id (tree.c's `launcher`; "External id" is not used, see tree.c), and a
 * runtime call belongs to every op that contains it in time on its host
 * thread (tree.c's `parent`). Because the model's cpu[] order is a
 * depth-first order of each thread's tree, the subtree of position p is
 * the range [p, end[p]); grouping the GPU events by the position of their
 * launching call makes the activity of a subtree one range of `gpu`, and
 * prefix sums of durations (integer nanoseconds: exact, whatever the
 * order of summation) price any op in constant time.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/trace.h"

typedef struct gpu_key {
  int64_t ts_ns;
  uint32_t ev;
} gpu_key;

static int cmp_key(const void *pa, const void *pb) {
  const gpu_key *a = pa, *b = pb;
  if (a->ts_ns != b->ts_ns) return a->ts_ns < b->ts_ns ? -1 : 1;
  return a->ev < b->ev ? -1 : a->ev > b->ev;
}

void dc_trace_attrib_build(const dc_trace_model *m, dc_trace_attrib *a) {
  const dc_trace *t = m->t;
  size_t n = t->n_ev, n_cpu = m->n_cpu;
  memset(a, 0, sizeof *a);
  a->m = m;
  a->pos = dc_xmalloc((n ? n : 1) * sizeof *a->pos);
  for (size_t i = 0; i < n; i++) a->pos[i] = DC_TRACE_NONE;
  for (size_t p = 0; p < n_cpu; p++) a->pos[m->cpu[p]] = (uint32_t)p;

  /* Subtree ends: children follow their parent, so one backward pass. */
  a->end = dc_xmalloc((n_cpu ? n_cpu : 1) * sizeof *a->end);
  for (size_t p = 0; p < n_cpu; p++) a->end[p] = (uint32_t)p + 1;
  for (size_t p = n_cpu; p-- > 0;)
    if (m->parent[p] >= 0 && a->end[m->parent[p]] < a->end[p])
      a->end[m->parent[p]] = a->end[p];

  /* GPU events grouped by the position of their launching call. */
  a->first = dc_xcalloc(n_cpu + 1, sizeof *a->first);
  for (size_t i = 0; i < n; i++)
    if (dc_trace_kind_is_gpu(t->ev[i].kind) && m->launcher[i] >= 0)
      a->first[a->pos[m->launcher[i]] + 1]++;
  for (size_t p = 0; p < n_cpu; p++) a->first[p + 1] += a->first[p];
  a->n_gpu = a->first[n_cpu];
  gpu_key *keys = dc_xmalloc((a->n_gpu ? a->n_gpu : 1) * sizeof *keys);
  uint32_t *fill = dc_xmalloc((n_cpu ? n_cpu : 1) * sizeof *fill);
  if (n_cpu) memcpy(fill, a->first, n_cpu * sizeof *fill);
  for (size_t i = 0; i < n; i++)
    if (dc_trace_kind_is_gpu(t->ev[i].kind) && m->launcher[i] >= 0)
      keys[fill[a->pos[m->launcher[i]]]++] =
          (gpu_key){t->ev[i].ts_ns, (uint32_t)i};
  free(fill);
  for (size_t p = 0; p < n_cpu; p++)
    if (a->first[p + 1] - a->first[p] > 1)
      qsort(keys + a->first[p], a->first[p + 1] - a->first[p], sizeof *keys,
            cmp_key);

  a->gpu = dc_xmalloc((a->n_gpu ? a->n_gpu : 1) * sizeof *a->gpu);
  a->ns_before = dc_xmalloc((a->n_gpu + 1) * sizeof *a->ns_before);
  a->kernel_ns_before =
      dc_xmalloc((a->n_gpu + 1) * sizeof *a->kernel_ns_before);
  a->kernels_before = dc_xmalloc((a->n_gpu + 1) * sizeof *a->kernels_before);
  a->ns_before[0] = a->kernel_ns_before[0] = 0;
  a->kernels_before[0] = 0;
  for (size_t j = 0; j < a->n_gpu; j++) {
    const dc_trace_event *e = &t->ev[keys[j].ev];
    bool kernel = e->kind == DC_TRACE_KERNEL;
    /* durations are checked non-negative by the loader and below 2^63 ns
     * each; saturate rather than overflow on absurd sums */
    int64_t d = e->dur_ns;
    a->gpu[j] = keys[j].ev;
    a->ns_before[j + 1] = a->ns_before[j] > INT64_MAX - d
                              ? INT64_MAX
                              : a->ns_before[j] + d;
    int64_t kd = kernel ? d : 0;
    a->kernel_ns_before[j + 1] = a->kernel_ns_before[j] > INT64_MAX - kd
                                     ? INT64_MAX
                                     : a->kernel_ns_before[j] + kd;
    a->kernels_before[j + 1] = a->kernels_before[j] + kernel;
  }
  free(keys);
}

void dc_trace_attrib_free(dc_trace_attrib *a) {
  free(a->pos);
  free(a->end);
  free(a->first);
  free(a->gpu);
  free(a->ns_before);
  free(a->kernel_ns_before);
  free(a->kernels_before);
  memset(a, 0, sizeof *a);
}

dc_trace_launched dc_trace_attrib_of(const dc_trace_attrib *a, size_t ev) {
  dc_trace_launched r = {0};
  if (ev >= a->m->t->n_ev || a->pos[ev] == DC_TRACE_NONE) return r;
  uint32_t p = a->pos[ev];
  uint32_t j0 = a->first[p], j1 = a->first[a->end[p]];
  r.gpu = a->gpu + j0;
  r.n = j1 - j0;
  r.n_kernels = a->kernels_before[j1] - a->kernels_before[j0];
  /* prefix sums saturate: a difference from a saturated end is a bound */
  r.us = (double)(a->ns_before[j1] - a->ns_before[j0]) / 1000.0;
  r.kernel_us =
      (double)(a->kernel_ns_before[j1] - a->kernel_ns_before[j0]) / 1000.0;
  return r;
}
