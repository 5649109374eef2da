/*
 * optim.c — zero_grad and the optimizer step of one rank.
 *
 * zero_grad: from PyTorch 2.0 it sets gradients to None (no child op, no
 * kernel); the 1.13 behaviour (zero_grad_legacy) zeroes each dense
 * gradient with one fill kernel (`aten::zero_`) and clears the tables'
 * sparse gradients on the host.
 *
 * step: parameters in registration order (tables, bottom MLP, top MLP).
 * PyTorch ≥ 2.0 uses the multi-tensor (`_foreach_*`) path when no gradient
 * is sparse — the batched variant, whose tables are updated inside the
 * lookup's backward — and the per-parameter loop otherwise (per_table has
 * sparse table gradients) and always in 1.13. Each optimizer is a recipe
 * of element-wise updates, one op (and kernel) per step, with (flops,
 * accesses) per element in the style of owensgroup/ml_perf_model:
 *
 *   sgd              add_ (1, 3)                              p -= lr·g
 *   adagrad          addcmul_ (2, 3)  sqrt (1, 2)  add_ (1, 2)  addcdiv_ (3, 4)
 *   rowwise_adagrad  as adagrad; a table's state is one value per row, so
 *                    its state steps touch rows, not rows × dim
 *   adam             lerp_ (3, 3)  mul_ (1, 2)  addcmul_ (2, 3)  sqrt (1, 2)
 *                    div_ (1, 2)  add_ (1, 2)  addcdiv_ (3, 4)
 *
 * A table's update is sparse: it touches the B·L rows looked up this step
 * (duplicates are not merged: an upper bound), so its elements are
 * lookups × dim. Adagrad and Adam also bump a step counter on the host.
 * Adam has no sparse path in torch.optim; for per_table we model the lazy
 * (SparseAdam-style) row update, which is what a user must choose.
 */
#include "graphgen/graphgen_int.h"

#define F32 DC_DTYPE_FP32

typedef enum { TGT_PARAM, TGT_S0, TGT_S1, TGT_TMP } gg_target;

typedef struct gg_step {
  const char *name, *foreach_name;
  double flops, acc;
  gg_target target;
} gg_step;

static const gg_step sgd_steps[] = {
    {"aten::add_", "aten::_foreach_add_", 1, 3, TGT_PARAM},
};
static const gg_step adagrad_steps[] = {
    {"aten::addcmul_", "aten::_foreach_addcmul_", 2, 3, TGT_S0},
    {"aten::sqrt", "aten::_foreach_sqrt", 1, 2, TGT_TMP},
    {"aten::add_", "aten::_foreach_add_", 1, 2, TGT_TMP},
    {"aten::addcdiv_", "aten::_foreach_addcdiv_", 3, 4, TGT_PARAM},
};
static const gg_step adam_steps[] = {
    {"aten::lerp_", "aten::_foreach_lerp_", 3, 3, TGT_S0},
    {"aten::mul_", "aten::_foreach_mul_", 1, 2, TGT_S1},
    {"aten::addcmul_", "aten::_foreach_addcmul_", 2, 3, TGT_S1},
    {"aten::sqrt", "aten::_foreach_sqrt", 1, 2, TGT_TMP},
    {"aten::div_", "aten::_foreach_div_", 1, 2, TGT_TMP},
    {"aten::add_", "aten::_foreach_add_", 1, 2, TGT_TMP},
    {"aten::addcdiv_", "aten::_foreach_addcdiv_", 3, 4, TGT_PARAM},
};

static const char *zero_grad_name(dc_optimizer o) {
  switch (o) {
  case DC_OPTIMIZER_SGD: return "Optimizer.zero_grad#SGD.zero_grad";
  case DC_OPTIMIZER_ADAGRAD: return "Optimizer.zero_grad#Adagrad.zero_grad";
  case DC_OPTIMIZER_ROWWISE_ADAGRAD:
    return "Optimizer.zero_grad#RowWiseSparseAdagrad.zero_grad";
  case DC_OPTIMIZER_ADAM: return "Optimizer.zero_grad#Adam.zero_grad";
  }
  return "Optimizer.zero_grad#SGD.zero_grad";
}

static const char *step_name(dc_optimizer o) {
  switch (o) {
  case DC_OPTIMIZER_SGD: return "Optimizer.step#SGD.step";
  case DC_OPTIMIZER_ADAGRAD: return "Optimizer.step#Adagrad.step";
  case DC_OPTIMIZER_ROWWISE_ADAGRAD:
    return "Optimizer.step#RowWiseSparseAdagrad.step";
  case DC_OPTIMIZER_ADAM: return "Optimizer.step#Adam.step";
  }
  return "Optimizer.step#SGD.step";
}

void gg_build_zero_grad(gg_ctx *c) {
  gg_b *b = c->b;
  b->phase = DC_PHASE_OPTIMIZER;
  b->thread = 0;
  gg_leaf(b, "aten::zeros");
  gg_begin(b, zero_grad_name(c->p->optimizer));
  if (c->legacy) {
    for (int32_t q = 0; q < c->n_params; q++) {
      gg_param *pq = &c->params[q];
      if (pq->table >= 0 && !pq->dense) {
        /* the sparse gradient is cleared on the host
         * (sparse_resize_and_clear_); its values start empty */
        pq->g0 = gg_t2(b, F32, pq->rows, b->ts[pq->t].shape[1]);
        gg_begin(b, "aten::zero_");
        gg_out(b, pq->g0);
        gg_end(b);
      } else {
        pq->g0 = gg_like(b, pq->t);
        gg_begin(b, "aten::zero_");
        gg_out(b, pq->g0);
        gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, pq->t), 0, 2.0 * 4);
        gg_end(b);
      }
    }
  }
  gg_end(b);
}

static void recipe(dc_optimizer o, const gg_step **s, int32_t *n) {
  switch (o) {
  case DC_OPTIMIZER_SGD:
    *s = sgd_steps;
    *n = (int32_t)DC_COUNTOF(sgd_steps);
    return;
  case DC_OPTIMIZER_ADAGRAD:
  case DC_OPTIMIZER_ROWWISE_ADAGRAD:
    *s = adagrad_steps;
    *n = (int32_t)DC_COUNTOF(adagrad_steps);
    return;
  case DC_OPTIMIZER_ADAM:
    *s = adam_steps;
    *n = (int32_t)DC_COUNTOF(adam_steps);
    return;
  }
  *s = sgd_steps;
  *n = 1;
}

void dc_optimizer_cost(dc_optimizer o, double *flops, double *bytes) {
  const gg_step *s;
  int32_t n;
  recipe(o, &s, &n);
  *flops = *bytes = 0;
  for (int32_t i = 0; i < n; i++) {
    *flops += s[i].flops;
    *bytes += s[i].acc * 4;
  }
}

dc_optimizer dc_dp_table_optimizer(const dc_point *p) {
  return p->framework == DC_FRAMEWORK_PYTORCH ? p->sparse_optimizer
                                              : p->optimizer;
}

/* Current versions of one parameter's tensors during the step. */
typedef struct gg_cur {
  int32_t p, s0, s1, tmp;
} gg_cur;

static int32_t grad_of(const gg_param *q) {
  return q->bucket >= 0 ? q->bucket : q->grad;
}

static void step_inputs(gg_b *b, const gg_param *q, const gg_cur *u) {
  gg_in(b, u->p);
  if (grad_of(q) >= 0) gg_in(b, grad_of(q));
  if (u->s0 >= 0) gg_in(b, u->s0);
  if (u->s1 >= 0) gg_in(b, u->s1);
  if (u->tmp >= 0) gg_in(b, u->tmp);
}

/* Makes the new version of the step's target; returns it. */
static int32_t step_target(gg_ctx *c, const gg_param *q, gg_cur *u,
                           gg_target t, bool rowwise_state) {
  gg_b *b = c->b;
  switch (t) {
  case TGT_PARAM: return u->p = gg_like(b, u->p);
  case TGT_S0: return u->s0 = gg_like(b, u->s0 >= 0 ? u->s0 : q->t);
  case TGT_S1: return u->s1 = gg_like(b, u->s1 >= 0 ? u->s1 : q->t);
  case TGT_TMP:
    if (u->tmp >= 0) return u->tmp = gg_like(b, u->tmp);
    if (rowwise_state) return u->tmp = gg_t1(b, F32, q->rows);
    if (q->table >= 0)
      return u->tmp = gg_t2(b, F32, q->rows,
                            b->ts[q->t].shape[1]);
    return u->tmp = gg_like(b, q->t);
  }
  return -1;
}

/* Which parameters one optimizer step updates: all of them, or, when the
 * tables have an optimizer of their own (training.sparse_optimizer), the
 * dense ones and the tables in two steps, dense first. */
typedef enum { GRP_ALL, GRP_DENSE, GRP_TABLES } gg_group;

static bool in_group(const gg_param *q, gg_group g) {
  return g == GRP_ALL || (g == GRP_TABLES) == (q->table >= 0);
}

static void build_step(gg_ctx *c, dc_optimizer opt, gg_group grp) {
  gg_b *b = c->b;
  const gg_step *steps;
  int32_t n_steps;
  recipe(opt, &steps, &n_steps);
  bool counter = opt != DC_OPTIMIZER_SGD;
  bool sparse = false, any = false;
  for (int32_t q = 0; q < c->n_params; q++) {
    if (!in_group(&c->params[q], grp)) continue;
    any = true;
    if (c->params[q].table >= 0 && !c->params[q].dense) sparse = true;
  }
  if (!any && grp != GRP_ALL) return;
  bool foreach = !c->legacy && !sparse;

  gg_cur *cur = dc_arena_array(c->s, (size_t)c->n_params + 1, sizeof *cur);
  for (int32_t q = 0; q < c->n_params; q++) {
    cur[q].p = c->params[q].t;
    cur[q].s0 = c->params[q].state[0];
    cur[q].s1 = c->params[q].state[1];
    cur[q].tmp = -1;
  }

  gg_leaf(b, "aten::zeros");
  gg_begin(b, step_name(opt));
  if (foreach) {
    if (counter) gg_leaf(b, "aten::_foreach_add_"); /* host step counters */
    for (int32_t s = 0; s < n_steps; s++) {
      int64_t elems = 0;
      gg_begin(b, steps[s].foreach_name);
      for (int32_t q = 0; q < c->n_params; q++) {
        if (!in_group(&c->params[q], grp)) continue;
        step_inputs(b, &c->params[q], &cur[q]);
        elems += gg_numel(b, c->params[q].t);
      }
      for (int32_t q = 0; q < c->n_params; q++)
        if (in_group(&c->params[q], grp))
          gg_out(b, step_target(c, &c->params[q], &cur[q], steps[s].target,
                                false));
      if (elems > 0)
        gg_ew(b, DC_KERNEL_ELEMENTWISE, elems, steps[s].flops,
              steps[s].acc * 4);
      gg_end(b);
    }
  } else {
    bool rowwise = opt == DC_OPTIMIZER_ROWWISE_ADAGRAD;
    for (int32_t q = 0; q < c->n_params; q++) {
      const gg_param *pq = &c->params[q];
      if (!in_group(pq, grp)) continue;
      if (counter) gg_leaf(b, "aten::add_"); /* host step counter */
      for (int32_t s = 0; s < n_steps; s++) {
        bool row_state = rowwise && pq->table >= 0 &&
                         steps[s].target != TGT_PARAM;
        int64_t elems;
        if (pq->table < 0 || (pq->dense && !row_state))
          elems = gg_numel(b, pq->t);
        else if (row_state)
          elems = pq->rows;
        else
          elems = gg_mul(b, pq->rows, b->ts[pq->t].shape[1]);
        gg_begin(b, steps[s].name);
        step_inputs(b, pq, &cur[q]);
        gg_out(b, step_target(c, pq, &cur[q], steps[s].target, row_state));
        dc_launch *l = gg_ew(b, DC_KERNEL_ELEMENTWISE, elems,
                             steps[s].flops, steps[s].acc * 4);
        /* a sparse table's update scatters into the looked-up rows
         * (PyTorch's index_add_) */
        l->k.u.ew.indexed = pq->table >= 0 && !pq->dense;
        gg_end(b);
      }
    }
  }
  gg_end(b);
}

void gg_build_step(gg_ctx *c) {
  const dc_point *p = c->p;
  c->b->phase = DC_PHASE_OPTIMIZER;
  c->b->thread = 0;
  if (p->sparse_optimizer == p->optimizer) {
    build_step(c, p->optimizer, GRP_ALL);
    return;
  }
  build_step(c, p->optimizer, GRP_DENSE);
  build_step(c, p->sparse_optimizer, GRP_TABLES);
}
