/*
 * param_list.c — parameters as the optimizer sees them (gg_param,
 * graphgen_int.h): each registered in PyTorch's order by whoever creates it
 * (the MLPs and tables in forward.c, the cross network in crossnet.c), a
 * dense one with the state its optimizer keeps. Below every pass, which
 * all register or read them.
 */
#include <string.h>

#include "graphgen/graphgen_int.h"

int32_t gg_param_add(gg_ctx *c, int32_t t, int32_t table) {
  if (c->n_params == c->cap_params) {
    int32_t nc = c->cap_params ? c->cap_params * 2 : 64;
    gg_param *np = dc_arena_array(c->s, (size_t)nc, sizeof(gg_param));
    if (c->n_params) memcpy(np, c->params, (size_t)c->n_params * sizeof *np);
    c->params = np;
    c->cap_params = nc;
  }
  int32_t i = c->n_params++;
  gg_param *q = &c->params[i];
  q->t = t;
  q->grad = -1;
  q->bucket = -1;
  q->table = table;
  q->rows = 0;
  q->state[0] = q->state[1] = -1;
  q->g0 = -1;
  q->bucket_last = -1;
  q->bucket_elems = 0;
  q->dense = false;
  q->cross = false;
  return i;
}

int32_t gg_param_dense(gg_ctx *c, int32_t t) {
  dc_optimizer o = c->p->optimizer;
  bool adam = o == DC_OPTIMIZER_ADAM;
  bool one = adam || o == DC_OPTIMIZER_ADAGRAD ||
             o == DC_OPTIMIZER_ROWWISE_ADAGRAD;
  int32_t q = gg_param_add(c, t, -1);
  c->params[q].state[0] = one ? gg_like(c->b, t) : -1;
  c->params[q].state[1] = adam ? gg_like(c->b, t) : -1;
  return q;
}
