/*
 * explain.c — `dlrmc explain`'s per-op table: for every top-level op of one
 * rank, the host time it took, the overheads T1–T5 it paid (T4 and T5
 * summed over its launches), how long the host waited on the GPU, its
 * kernels and their predicted time, and the GPU idle time right before its
 * kernels (the stream gap the op's host side caused). The totals row makes
 * the e2e arithmetic visible: the CPU column sums to cpu time, the kernel
 * column to the kernel sum, and the idle column to the stream's idle time.
 */
#include <string.h>

#include "runtime/runtime.h"

static void num(dc_buf *b, double v, int width) {
  char tmp[64];
  snprintf(tmp, sizeof tmp, "%.1f", v);
  if (strcmp(tmp, "-0.0") == 0) strcpy(tmp, "0.0");
  dc_buf_printf(b, "%*s", width, tmp);
}

void dc_explain_write(const dc_graph *g, const dc_eval_result *r,
                      const dc_profile *p, int32_t rank, dc_buf *out) {
  dc_buf_printf(out, "rank %d of %d, overheads '%s' (kernel gap ",
                (int)rank, (int)g->n_ranks, p->name ? p->name : "?");
  dc_buf_put_double(out, p->kernel_gap_us, 1);
  dc_buf_puts(out, " us); times in us\n\n");
  dc_buf_printf(out, "%5s %10s %9s %7s %7s %7s %7s %7s %8s %4s %10s %9s  %s\n",
                "#", "cpu_start", "cpu", "T1", "T2", "T3", "T4", "T5",
                "sync", "kern", "kernel_us", "gpu_idle", "op");
  double sum[10] = {0};
  int64_t kernels = 0, n = 0;
  for (size_t i = 0; i < r->n_ops; i++) {
    const dc_eval_op *e = &r->ops[i];
    if (g->ops[e->op].rank != rank) continue;
    double cpu = e->cpu_end_us - e->cpu_start_us;
    double v[] = {cpu,      e->t1_us,       e->t2_us,     e->t3_us,
                  e->t4_us, e->t5_us,       e->sync_wait_us,
                  e->kernel_us, e->gpu_idle_us};
    dc_buf_printf(out, "%5lld", (long long)n++);
    num(out, e->cpu_start_us, 11);
    num(out, v[0], 10);
    for (int k = 1; k < 6; k++) num(out, v[k], 8);
    num(out, v[6], 9);
    dc_buf_printf(out, " %4d", (int)e->n_kernels);
    num(out, v[7], 11);
    num(out, v[8], 10);
    dc_buf_printf(out, "  %s\n", g->ops[e->op].name);
    for (int k = 0; k < 9; k++) sum[k] += v[k];
    kernels += e->n_kernels;
  }
  dc_buf_printf(out, "%5s %10s", "total", "");
  num(out, sum[0], 10);
  for (int k = 1; k < 6; k++) num(out, sum[k], 8);
  num(out, sum[6], 9);
  dc_buf_printf(out, " %4lld", (long long)kernels);
  num(out, sum[7], 11);
  num(out, sum[8], 10);
  dc_buf_puts(out, "\n\n");
  const dc_eval_rank *x = &r->ranks[rank];
  dc_buf_puts(out, "rank e2e ");
  dc_buf_put_double(out, x->e2e_us, 1);
  dc_buf_puts(out, " us = max(cpu ");
  dc_buf_put_double(out, x->cpu_us, 1);
  dc_buf_puts(out, ", gpu streams); gpu active ");
  dc_buf_put_double(out, x->gpu_active_us, 1);
  dc_buf_puts(out, " us; kernel-only ");
  dc_buf_put_double(out, x->kernel_only_us, 1);
  dc_buf_printf(out, " us; iteration e2e ");
  dc_buf_put_double(out, r->e2e_us, 1);
  dc_buf_printf(out, " us (slowest rank %d)\n", (int)r->critical_rank);
}

static void mb(dc_buf *b, double bytes, int width) {
  char tmp[64];
  snprintf(tmp, sizeof tmp, "%.3f", bytes / 1e6);
  dc_buf_printf(b, "%*s", width, tmp);
}

void dc_explain_collectives(const dc_graph *g, const dc_eval_result *r,
                            const dc_device *dev, int32_t rank, dc_buf *out) {
  bool any = false;
  for (size_t i = 0; i < r->n_kernels; i++) {
    const dc_eval_kernel *e = &r->kernels[i];
    if (e->rank != rank) continue;
    const dc_launch *l = &g->ops[e->op].launches[e->launch];
    if (!dc_kernel_is_collective(l->k.kind)) continue;
    if (!any) {
      dc_buf_printf(out, "\ncollectives of rank %d on %s (NVLink domain %d, "
                         "sharp %s); MB per GPU and direction, times in us\n",
                    (int)rank, dev->name, (int)dev->nvlink_domain,
                    (const char *[]){"none", "nvls", "ib", "both"}
                        [dev->sharp & 3]);
      dc_buf_printf(out, "%-14s %10s %6s %10s %6s %8s %9s %8s %9s %8s %7s "
                         "%7s %9s  %s\n",
                    "collective", "MB", "ranks", "algorithm", "proto",
                    "domains", "intra_MB", "intra_us", "inter_MB",
                    "inter_us", "lat_us", "ramp_us", "kernel_us", "op");
      any = true;
    }
    dc_coll_plan c;
    dc_collective_plan(&l->k, dev, &c);
    dc_buf_printf(out, "%-14s", dc_kernel_kind_name(l->k.kind));
    mb(out, (double)l->k.u.coll.bytes, 11);
    dc_buf_printf(out, " %6d %10s %6s %4dx%-3d", (int)l->k.u.coll.ranks,
                  dc_coll_algo_name(c.algo), dc_coll_proto_name(c.proto),
                  (int)c.domains, (int)c.domain_ranks);
    mb(out, c.intra_bytes, 10);
    num(out, c.intra_us, 9);
    mb(out, c.inter_bytes, 10);
    num(out, c.inter_us, 9);
    num(out, c.latency_us, 8);
    num(out, c.ramp_us, 8);
    num(out, e->end_us - e->start_us, 10);
    dc_buf_printf(out, "  %s\n", g->ops[e->op].name);
  }
}
