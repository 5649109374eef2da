/*
 * timeline.c — a point's predicted iteration as Chrome trace JSON (the
 * "Trace Event Format" that chrome://tracing and Perfetto open): one
 * process per rank, thread 0 the host with every top-level op and its
 * T1–T5 overheads as nested slices, thread 1+s GPU stream s with its
 * kernels named by kind. Times are µs, as the format wants.
 *
 * Built from the evaluator's records (dc_eval_opts.record): the op record
 * gives T1, T2, T3 and the sync wait; each kernel record gives the instant
 * its runtime call (T4) began, so T5 is the gap between one call's end and
 * the next call. Output is deterministic (fixed precision, record order).
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

static void slice(dc_buf *b, bool *first, int32_t pid, int32_t tid,
                  const char *name, const char *cat, double ts, double dur) {
  if (dur <= 0) return;
  dc_buf_puts(b, *first ? "\n" : ",\n");
  *first = false;
  dc_buf_puts(b, "{\"name\":");
  dc_buf_put_json_string(b, name);
  dc_buf_printf(b, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":",
                cat, (int)pid, (int)tid);
  dc_buf_put_double(b, ts, 3);
  dc_buf_puts(b, ",\"dur\":");
  dc_buf_put_double(b, dur, 3);
  dc_buf_putc(b, '}');
}

static void meta(dc_buf *b, bool *first, const char *what, int32_t pid,
                 int32_t tid, const char *name) {
  dc_buf_puts(b, *first ? "\n" : ",\n");
  *first = false;
  dc_buf_printf(b, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                   "\"args\":{\"name\":",
                what, (int)pid, (int)tid);
  dc_buf_put_json_string(b, name);
  dc_buf_puts(b, "}}");
}

void dc_timeline_write(const dc_graph *g, const dc_eval_result *r,
                       dc_buf *out) {
  DC_ASSERT(g->detail == DC_GRAPH_FULL); /* a timeline shows every op */
  bool first = true;
  dc_buf_puts(out, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
  char name[64];
  for (int32_t rk = 0; rk < g->n_ranks; rk++) {
    snprintf(name, sizeof name, "rank %d", (int)rk);
    meta(out, &first, "process_name", rk, 0, name);
    meta(out, &first, "thread_name", rk, 0, "CPU (host)");
    for (int32_t s = 0; s < g->n_streams; s++) {
      snprintf(name, sizeof name, "GPU stream %d", (int)s);
      meta(out, &first, "thread_name", rk, 1 + s, name);
    }
  }
  /* Kernels grouped by their top-level op (records of different ranks may
   * interleave where a rank waited at a collective). */
  int32_t *head = malloc(((size_t)g->n_ops + 1) * sizeof *head);
  int32_t *next = malloc((r->n_kernels + 1) * sizeof *next);
  int32_t *tail = malloc(((size_t)g->n_ops + 1) * sizeof *tail);
  if (!head || !next || !tail) dc_fatal(__FILE__, __LINE__, "out of memory");
  for (int32_t i = 0; i < g->n_ops; i++) head[i] = tail[i] = -1;
  for (size_t k = 0; k < r->n_kernels; k++) {
    int32_t t = r->kernels[k].top;
    next[k] = -1;
    if (tail[t] < 0)
      head[t] = (int32_t)k;
    else
      next[tail[t]] = (int32_t)k;
    tail[t] = (int32_t)k;
  }
  for (size_t i = 0; i < r->n_ops; i++) {
    const dc_eval_op *e = &r->ops[i];
    const dc_op *op = &g->ops[e->op];
    int32_t pid = op->rank;
    double t = e->cpu_start_us;
    slice(out, &first, pid, 0, "T1", "T1", t, e->t1_us);
    t += e->t1_us;
    slice(out, &first, pid, 0, op->name, "op", t, e->cpu_end_us - t);
    if (e->n_kernels == 0) {
      slice(out, &first, pid, 0, "sync", "sync", t, e->sync_wait_us);
      slice(out, &first, pid, 0, "T5", "T5", t + e->sync_wait_us, e->t5_us);
      continue;
    }
    slice(out, &first, pid, 0, "T2", "T2", t, e->t2_us);
    double prev_end = -1.0;
    for (int32_t k = head[e->op]; k >= 0; k = next[k]) {
      const dc_eval_kernel *kr = &r->kernels[k];
      const dc_launch *l = &g->ops[kr->op].launches[kr->launch];
      if (prev_end >= 0)
        slice(out, &first, pid, 0, "T5", "T5", prev_end,
              kr->call_us - prev_end);
      slice(out, &first, pid, 0, l->runtime ? l->runtime : "cudaLaunchKernel",
            "T4", kr->call_us, kr->t4_us);
      prev_end = kr->call_us + kr->t4_us;
      /* The kernel on its stream, named by kind, with its op. */
      dc_buf_puts(out, ",\n{\"name\":");
      dc_buf_put_json_string(out, dc_kernel_kind_name(l->k.kind));
      dc_buf_printf(out, ",\"cat\":\"kernel\",\"ph\":\"X\",\"pid\":%d,"
                         "\"tid\":%d,\"ts\":",
                    (int)pid, (int)(1 + kr->stream));
      dc_buf_put_double(out, kr->start_us, 3);
      dc_buf_puts(out, ",\"dur\":");
      dc_buf_put_double(out, kr->end_us - kr->start_us, 3);
      dc_buf_puts(out, ",\"args\":{\"op\":");
      dc_buf_put_json_string(out, g->ops[kr->op].name);
      dc_buf_puts(out, "}}");
    }
    double t3_start = e->cpu_end_us - e->t3_us;
    slice(out, &first, pid, 0, "sync", "sync", t3_start - e->sync_wait_us,
          e->sync_wait_us);
    slice(out, &first, pid, 0, "T3", "T3", t3_start, e->t3_us);
  }
  free(head);
  free(next);
  free(tail);
  dc_buf_puts(out, "\n]}\n");
}
