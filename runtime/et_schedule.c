/*
 * et_schedule.c — one rank of an evaluated point as the schedule the
 * execution trace with device nodes carries (dc_et_schedule_of;
 * spec/astra-sim.md). The evaluator's records give every kernel's start
 * and end and every top-level op's host interval; this file finds, for
 * each op, the kernel of another stream its kernels wait for (the one
 * dependency Chakra's converter keeps: cross_stream_deps), and names the
 * kernels as a profiler would see them, so that tools reading linked
 * traces (Chakra's PyTorch converter) find their kind:
 *
 *   collectives  NCCL's device kernels: ncclDevKernel_AllReduce_Sum_f32_
 *                RING_LL, ..._ReduceScatter_Sum_<type>_<algo>_<proto>,
 *                ..._AllGather_<algo>_<proto> with the algorithm and
 *                protocol the collective model picks (kernels/coll.c), and
 *                ncclDevKernel_SendRecv for an all-to-all (NCCL runs it as
 *                grouped sends and receives)
 *   copies       Kineto's memcpy names, category gpu_memcpy
 *   the rest     the kernel's kind ("gemm", "embedding_fwd", ...), as the
 *                timeline names it, category kernel
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

/* NCCL's short name of a reduction's element type. */
static const char *nccl_type(dc_dtype t) {
  switch (t) {
  case DC_DTYPE_FP32:
  case DC_DTYPE_TF32: return "f32";
  case DC_DTYPE_FP16: return "f16";
  case DC_DTYPE_BF16: return "bf16";
  case DC_DTYPE_INT64: return "i64";
  case DC_DTYPE_INT32: return "i32";
  case DC_DTYPE_INT8: return "i8";
  case DC_DTYPE_BOOL: return "u8";
  case DC_DTYPE_FP8: return "f8e4m3";
  }
  return "f32";
}

/* The collective's element type: its op's first tensor's. */
static dc_dtype coll_dtype(const dc_graph *g, const dc_op *o) {
  if (o->n_inputs > 0) return g->tensors[o->inputs[0]].dtype;
  if (o->n_outputs > 0) return g->tensors[o->outputs[0]].dtype;
  return DC_DTYPE_FP32;
}

static void upper(char *s) {
  for (; *s; s++) *s = (char)toupper((unsigned char)*s);
}

static const char *kernel_name(const dc_graph *g, const dc_op *o,
                               const dc_launch *l, const dc_device *dev,
                               dc_arena *a, const char **cat) {
  *cat = "kernel";
  const dc_kernel *k = &l->k;
  switch (k->kind) {
  case DC_KERNEL_MEMCPY_H2D:
    *cat = "gpu_memcpy";
    return k->u.copy.pinned ? "Memcpy HtoD (Pinned -> Device)"
                            : "Memcpy HtoD (Pageable -> Device)";
  case DC_KERNEL_MEMCPY_D2H:
    *cat = "gpu_memcpy";
    return k->u.copy.pinned ? "Memcpy DtoH (Device -> Pinned)"
                            : "Memcpy DtoH (Device -> Pageable)";
  case DC_KERNEL_MEMCPY_D2D:
    *cat = "gpu_memcpy";
    return "Memcpy DtoD (Device -> Device)";
  case DC_KERNEL_ALL_TO_ALL: return "ncclDevKernel_SendRecv";
  case DC_KERNEL_ALL_REDUCE:
  case DC_KERNEL_REDUCE_SCATTER:
  case DC_KERNEL_ALL_GATHER: {
    dc_coll_plan plan;
    dc_collective_plan(k, dev, &plan);
    char algo[24], proto[16], name[128];
    snprintf(algo, sizeof algo, "%s",
             dc_coll_algo_name(plan.algo == DC_COLL_NONE ? DC_COLL_RING
                                                         : plan.algo));
    snprintf(proto, sizeof proto, "%s", dc_coll_proto_name(plan.proto));
    upper(algo);
    upper(proto);
    if (k->kind == DC_KERNEL_ALL_GATHER)
      snprintf(name, sizeof name, "ncclDevKernel_AllGather_%s_%s", algo,
               proto);
    else
      snprintf(name, sizeof name, "ncclDevKernel_%s_Sum_%s_%s_%s",
               k->kind == DC_KERNEL_ALL_REDUCE ? "AllReduce" : "ReduceScatter",
               nccl_type(coll_dtype(g, o)), algo, proto);
    return dc_arena_strdup(a, name);
  }
  default: return dc_kernel_kind_name(k->kind);
  }
}

static double end_of(const dc_et_kernel *ks, int32_t k) {
  return k < 0 ? -1.0 : ks[k].ts_us + ks[k].dur_us;
}

static void later(const dc_et_kernel *ks, int32_t *into, int32_t k) {
  if (end_of(ks, k) > end_of(ks, *into)) *into = k;
}

/* The kernel each op's kernels wait for, as the evaluator decides it
 * (runtime/eval.c, input_ready and mark_kernelless): an op is done when
 * its own and its descendants' kernels are, a kernel-less op when its
 * inputs are; an op's kernels wait for the latest-done producer of its
 * inputs (ancestors and other ranks' ops aside). Kept where that kernel
 * runs on a stream none of the op's own kernels run on: on one stream the
 * order of launch already keeps it. */
static int32_t *cross_stream_deps(const dc_graph *g, int32_t rank,
                                  const dc_et_kernel *ks, size_t n,
                                  dc_arena *a) {
  int32_t lo = g->rank_first[rank], hi = g->rank_first[rank + 1];
  int32_t *done = dc_arena_array(a, (size_t)g->n_ops + 1, sizeof *done);
  int32_t *dep = dc_arena_array(a, (size_t)g->n_ops + 1, sizeof *dep);
  int32_t *first = dc_arena_array(a, (size_t)g->n_ops + 1, sizeof *first);
  for (int32_t i = 0; i < g->n_ops; i++) done[i] = dep[i] = first[i] = -1;
  /* each op's kernels, in schedule order: chained through `next` */
  int32_t *next = dc_arena_array(a, n + 1, sizeof *next);
  for (size_t k = n; k-- > 0;) {
    next[k] = first[ks[k].op];
    first[ks[k].op] = (int32_t)k;
  }
  for (int32_t j = lo; j < hi; j++) {
    const dc_op *o = &g->ops[j];
    int32_t in = -1;
    for (int32_t i = 0; i < o->n_inputs; i++) {
      int32_t p = g->tensors[o->inputs[i]].producer;
      if (p < 0 || p == j || (p < j && j < g->ops[p].end) ||
          g->ops[p].rank != o->rank)
        continue;
      later(ks, &in, done[p]);
    }
    int32_t own = -1;
    bool same_stream = false;
    for (int32_t k = first[j]; k >= 0; k = next[k]) {
      later(ks, &own, k);
      same_stream |= in >= 0 && ks[k].stream == ks[in].stream;
    }
    if (first[j] >= 0 && in >= 0 && !same_stream) dep[j] = in;
    int32_t d = first[j] >= 0 ? own : in; /* a kernel-less op: its inputs */
    for (int32_t p = j; p >= 0; p = g->ops[p].parent) later(ks, &done[p], d);
  }
  return dep;
}

static int by_start(const void *x, const void *y) {
  const dc_et_kernel *a = x, *b = y;
  if (a->ts_us != b->ts_us) return a->ts_us < b->ts_us ? -1 : 1;
  if (a->op != b->op) return a->op < b->op ? -1 : 1;
  return (a->launch > b->launch) - (a->launch < b->launch);
}

void dc_et_schedule_of(const dc_graph *g, const dc_eval_result *r,
                       const dc_device *dev, int32_t rank, dc_arena *a,
                       dc_et_schedule *out) {
  size_t n = 0;
  for (size_t k = 0; k < r->n_kernels; k++) n += r->kernels[k].rank == rank;
  dc_et_kernel *ks = dc_arena_array(a, n + 1, sizeof *ks);
  double *ts = dc_arena_array(a, (size_t)g->n_ops + 1, sizeof *ts);
  double *dur = dc_arena_array(a, (size_t)g->n_ops + 1, sizeof *dur);
  n = 0;
  for (size_t k = 0; k < r->n_kernels; k++) {
    const dc_eval_kernel *e = &r->kernels[k];
    if (e->rank != rank) continue;
    const dc_op *o = &g->ops[e->op];
    dc_et_kernel *x = &ks[n++];
    x->op = e->op;
    x->launch = e->launch;
    x->stream = e->stream;
    x->name = kernel_name(g, o, &o->launches[e->launch], dev, a, &x->cat);
    x->ts_us = e->start_us;
    x->dur_us = e->end_us - e->start_us;
  }
  qsort(ks, n, sizeof *ks, by_start);
  for (int32_t i = 0; i < g->n_ops; i++) dur[i] = -1; /* not timed */
  for (size_t i = 0; i < r->n_ops; i++) {
    const dc_eval_op *e = &r->ops[i];
    ts[e->op] = e->cpu_start_us;
    dur[e->op] = e->cpu_end_us - e->cpu_start_us;
  }
  *out = (dc_et_schedule){ks, n, ts, dur, cross_stream_deps(g, rank, ks, n, a)};
}
