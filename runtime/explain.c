/*
 * explain.c — `dlrmc explain`'s per-op table: for every top-level op of one
 * rank, the host time it took, the overheads T1–T5 it paid (T4 and T5
 * summed over its launches), how long the host waited on the GPU, its
 * kernels and their predicted time, and the GPU idle time right before its
 * kernels (the stream gap the op's host side caused). The totals row makes
 * the e2e arithmetic visible: the CPU column sums to cpu time, the kernel
 * column to the kernel sum, and the idle column to the stream's idle time.
 */
#include <stdlib.h>
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

/* Appends the sorted, distinct values v[0..n) as ranges ("0-3,8,10-11");
 * sorts v in place. */
static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static void put_ranges(int32_t *v, int32_t n, dc_buf *out) {
  qsort(v, (size_t)n, sizeof *v, cmp_i32);
  for (int32_t i = 0; i < n;) {
    int32_t j = i;
    while (j + 1 < n && v[j + 1] <= v[j] + 1) j++;
    dc_buf_printf(out, "%s%d", i ? "," : "", (int)v[i]);
    if (v[j] != v[i]) dc_buf_printf(out, "-%d", (int)v[j]);
    i = j + 1;
  }
}

void dc_explain_plan(const dc_point *p, const dc_shard_plan *s,
                     dc_buf *out) {
  if (!s || s->n_ranks < 2) return;
  dc_buf_printf(out, "\nplan of %d tables on %d GPUs (%d hosts x %d): "
                     "table, sharding, shards, where\n",
                (int)s->n_tables, (int)s->n_ranks, (int)s->hosts,
                (int)s->gpus_per_host);
  int32_t *v = dc_xmalloc((size_t)s->n_ranks * sizeof *v);
  for (int32_t t = 0; t < s->n_tables; t++) {
    const dc_table_plan *tp = &s->tables[t];
    dc_buf_printf(out, "%-12s %-17s %6d  ",
                  p->tables[t].name ? p->tables[t].name : "?",
                  dc_sharding_name(tp->type), (int)tp->n_shards);
    int32_t n = 0;
    switch (tp->type) {
    case DC_SHARDING_DATA_PARALLEL: dc_buf_puts(out, "every rank"); break;
    case DC_SHARDING_ROW_WISE: dc_buf_puts(out, "every rank, rows"); break;
    case DC_SHARDING_TABLE_ROW_WISE:
    case DC_SHARDING_GRID_SHARD: {
      /* the hosts, then the blocks' widths */
      for (int32_t i = 0; i < tp->n_shards; i++) {
        int32_t h = dc_shard_plan_host(s, tp->shards[i].rank);
        if (i == 0 || h != dc_shard_plan_host(s, tp->shards[i - 1].rank))
          v[n++] = h;
      }
      dc_buf_puts(out, n > 1 ? "hosts " : "host ");
      put_ranges(v, n, out);
      if (tp->type == DC_SHARDING_GRID_SHARD)
        dc_buf_printf(out, ", %d column blocks of %d, rows over each host",
                      (int)n, (int)tp->shards[0].cols);
      else
        dc_buf_puts(out, ", rows over its GPUs");
      break;
    }
    default: /* table-wise, column-wise, table-column-wise */
      for (int32_t i = 0; i < tp->n_shards; i++) v[n++] = tp->shards[i].rank;
      dc_buf_puts(out, n > 1 ? "ranks " : "rank ");
      put_ranges(v, n, out);
      if (tp->type == DC_SHARDING_COLUMN_WISE ||
          tp->type == DC_SHARDING_TABLE_COLUMN_WISE)
        dc_buf_printf(out, ", %d columns each", (int)tp->shards[0].cols);
      break;
    }
    dc_buf_putc(out, '\n');
  }
  free(v);
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
