/*
 * objective.c — the planner's objective of a whole assignment, summed
 * table by table (planner.c's header says what it weighs): what
 * dc_plan_cost_of and the planner's reported cost give. The search keeps
 * the same sums incrementally (planner.c); this is the plain sum.
 */
#include <string.h>

#include "runtime/plan/plan_int.h"

/* The objective of the current (possibly partial) assignment, summed
 * table by table (the reported cost of a plan). */
void pl_eval_full(pctx *c, dc_plan_cost *out) {
  const dc_point *p = c->p;
  int32_t W = c->W;
  double Bg = (double)p->batch_size, B = Bg / W;
  for (int32_t r = 0; r < W; r++) {
    c->rf[r] = c->rb[r] = c->send[r] = 0;
    c->rm[r] = c->base_mem;
  }
  for (int32_t h = 0; h < c->H; h++) c->twrw[h] = 0;
  double d_a2a = 0, d_rw = 0, dp = 0;
  for (int32_t t = 0; t < c->T; t++) {
    if (c->cur[t] < 0) continue;
    int32_t rot;
    const tmpl *x = cand_of(c, t, c->cur[t], &rot);
    double dim = p->tables[t].dim;
    for (int32_t i = 0; i < x->tp.n_shards; i++) {
      int32_t r = rank_of(c, x, i, rot), v = vix(x, i);
      c->rf[r] += x->fwd_us[v];
      c->rb[r] += x->bwd_us[v];
      c->rm[r] += x->mem[v];
      if (x->tp.type == DC_SHARDING_TABLE_WISE ||
          x->tp.type == DC_SHARDING_COLUMN_WISE ||
          x->tp.type == DC_SHARDING_TABLE_COLUMN_WISE)
        c->send[r] += Bg * x->tp.shards[i].cols * c->wire_bytes;
      else if (x->tp.type == DC_SHARDING_TABLE_ROW_WISE ||
               x->tp.type == DC_SHARDING_GRID_SHARD)
        c->send[r] += Bg / c->S * x->tp.shards[i].cols * c->wire_bytes;
      /* a grid block's columns, once on each host it is on */
      if (x->tp.type == DC_SHARDING_GRID_SHARD &&
          (i == 0 || rank_of(c, x, i - 1, rot) / c->S != r / c->S))
        c->twrw[r / c->S] += x->tp.shards[i].cols;
    }
    switch (x->tp.type) {
    case DC_SHARDING_TABLE_WISE:
    case DC_SHARDING_COLUMN_WISE:
    case DC_SHARDING_TABLE_COLUMN_WISE: d_a2a += dim; break;
    case DC_SHARDING_TABLE_ROW_WISE:
      d_a2a += dim;
      c->twrw[rank_of(c, x, 0, rot) / c->S] += dim;
      break;
    case DC_SHARDING_GRID_SHARD: d_a2a += dim; break;
    case DC_SHARDING_ROW_WISE: d_rw += dim; break;
    case DC_SHARDING_DATA_PARALLEL: dp += x->dp_us; break;
    default: break;
    }
  }
  memset(out, 0, sizeof *out);
  double comm = 0;
  if (W > 1) {
    if (d_a2a > 0) {
      double mx = 0;
      for (int32_t r = 0; r < W; r++)
        if (c->send[r] > mx) mx = c->send[r];
      comm += pl_coll_price(c, DC_KERNEL_ALL_TO_ALL, mx, W, c->H);
      comm += pl_coll_price(c, DC_KERNEL_ALL_TO_ALL,
                            B * d_a2a * c->wire_bytes, W, c->H);
    }
    double tw = 0;
    for (int32_t h = 0; h < c->H; h++)
      if (c->twrw[h] > 0) {
        double x =
            pl_coll_price(c, DC_KERNEL_REDUCE_SCATTER,
                          Bg * c->twrw[h] * c->reduce_bytes, c->S, 1) +
            pl_coll_price(c, DC_KERNEL_ALL_GATHER,
                          Bg * c->twrw[h] * c->reduce_bytes, c->S, 1);
        if (x > tw) tw = x;
      }
    comm += tw;
    if (d_rw > 0)
      comm += pl_coll_price(c, DC_KERNEL_REDUCE_SCATTER,
                            Bg * d_rw * c->reduce_bytes, W, c->H) +
              pl_coll_price(c, DC_KERNEL_ALL_GATHER,
                            Bg * d_rw * c->reduce_bytes, W, c->H);
  }
  int32_t slow = 0;
  for (int32_t r = 0; r < W; r++) {
    if (c->rf[r] > out->max_fwd_us) out->max_fwd_us = c->rf[r];
    if (c->rb[r] > out->max_bwd_us) out->max_bwd_us = c->rb[r];
    if (c->rf[r] + c->rb[r] > c->rf[slow] + c->rb[slow]) slow = r;
    if (c->rm[r] > out->max_mem_bytes) out->max_mem_bytes = c->rm[r];
  }
  out->max_bwd_us += dp;
  out->comm_us = comm;
  out->slowest_rank = slow;
  out->total_us = out->max_fwd_us + out->max_bwd_us + comm;
  out->fits = (double)out->max_mem_bytes <= c->cap;
}

