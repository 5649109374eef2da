/*
 * crossnet.c — the DCNv2 interaction (model.interaction: dcn): TorchRec's
 * InteractionDCNArch over LowRankCrossNet (torchrec/models/dlrm.py,
 * torchrec/modules/crossnet.py), run as stock PyTorch runs it.
 *
 * x0 = cat(bottom output, pooled embeddings) is one flat fp32 row of width
 * N = D + Σ dims (forward.c's first cat). Each of the L layers computes
 *
 *   x_{l+1} = x0 ⊙ (W_l (V_l x_l) + b_l) + x_l          low rank R
 *   x_{l+1} = x0 ⊙ (K_l x_l + b_l) + x_l                full rank
 *
 * with V_l [R, N], W_l [N, R] (K_l [N, N]) bias-free linears: F.linear
 * records aten::linear > aten::t, aten::matmul > aten::mm. TorchRec's
 * full-rank CrossNet writes torch.matmul(K_l, x_l.unsqueeze(2)), which
 * PyTorch folds into the same [B, N]·[N, N] mm; we spell it as the linear.
 * The bias add, the product with x0 and the residual add are aten::add,
 * aten::mul, aten::add over [B, N] (fp32 even under autocast: a half GEMM
 * output plus the fp32 bias promotes).
 *
 * Backward, layer by layer from the last (the engine runs the node created
 * last first): AddBackward0 (residual: the gradient passes to both
 * operands, no kernel), MulBackward0 (g ⊙ x0 for the bracket, g ⊙ bracket
 * for x0: two aten::mul), AddBackward0 (the bias: aten::sum over the batch;
 * under autocast the gradient is cast back to the GEMM's half dtype), then
 * the linears' MmBackward0s (gg_linear_backward: grad input [B, in] =
 * g·W, grad weight [out, in] = gᵀ·x). x_l's two gradients (residual and
 * GEMM) and x0's one per layer are summed with aten::add where the second
 * arrives, as the engine's input buffer does.
 *
 * Parameters are registered as LowRankCrossNet does — every W_l, then
 * every V_l, then every b_l (CrossNet: kernels, then biases) — after the
 * bottom MLP and before the top MLP (DLRM_DCN: dense, interaction, over
 * arch), which fixes the optimizer's and DDP's order.
 */
#include <string.h>

#include "graphgen/graphgen_int.h"

#define F32 DC_DTYPE_FP32

/* A cross-net parameter: dense, with the dense optimizer's state. */
static int32_t cross_param(gg_ctx *c, int32_t t) {
  int32_t q = gg_param_dense(c, t);
  c->params[q].cross = true;
  return q;
}

static void lin_param(gg_ctx *c, gg_lin *L, int64_t in, int64_t out) {
  memset(L, 0, sizeof *L);
  L->in = in;
  L->out = out;
  L->no_bias = true;
  L->bias = L->pb = -1;
  L->act = -1;
  L->w = gg_t2(c->b, F32, out, in);
  L->pw = cross_param(c, L->w);
}

void gg_cross_declare(gg_ctx *c) {
  const dc_point *p = c->p;
  gg_b *b = c->b;
  c->n_cross = p->interaction == DC_INTERACTION_DCN ? p->dcn_layers : 0;
  if (c->n_cross <= 0) return;
  int64_t N = dc_point_x0_width(p), R = p->dcn_low_rank;
  c->cross = dc_arena_array(c->s, (size_t)c->n_cross, sizeof(gg_cross));
  /* W (or the full-rank kernel) of every layer, then V, then the biases */
  for (int32_t l = 0; l < c->n_cross; l++) {
    gg_cross *x = &c->cross[l];
    x->n_lin = R > 0 ? 2 : 1;
    if (R > 0)
      lin_param(c, &x->lin[1], R, N); /* W_l: [N, R] */
    else
      lin_param(c, &x->lin[0], N, N); /* K_l: [N, N] */
  }
  if (R > 0)
    for (int32_t l = 0; l < c->n_cross; l++)
      lin_param(c, &c->cross[l].lin[0], N, R); /* V_l: [R, N] */
  for (int32_t l = 0; l < c->n_cross; l++) {
    gg_cross *x = &c->cross[l];
    x->bias = gg_t1(b, F32, N);
    x->pb = cross_param(c, x->bias);
  }
}

/* An element-wise binary op over [B, N] fp32 (1 flop, 3 accesses). */
static int32_t binary(gg_b *b, const char *name, int32_t x, int32_t y,
                      int32_t out) {
  gg_begin(b, name);
  gg_in(b, x);
  gg_in(b, y);
  gg_out(b, out);
  gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, out), 1,
        2.0 * gg_es(b->ts[x].dtype) + gg_es(b->ts[out].dtype));
  gg_end(b);
  return out;
}

int32_t gg_cross_forward(gg_ctx *c, int32_t x0) {
  gg_b *b = c->b;
  int32_t x = x0;
  for (int32_t l = 0; l < c->n_cross; l++) {
    gg_cross *cr = &c->cross[l];
    cr->x = x;
    int32_t h = x;
    for (int32_t i = 0; i < cr->n_lin; i++) {
      gg_linear(c, &cr->lin[i], h, true);
      h = cr->lin[i].y;
    }
    cr->s = binary(b, "aten::add", h, cr->bias, gg_like_dtype(b, x0, F32));
    cr->m = binary(b, "aten::mul", x0, cr->s, gg_like(b, x0));
    cr->out = binary(b, "aten::add", cr->m, x, gg_like(b, x0));
    x = cr->out;
  }
  return x;
}

/* acc += g in the open op, or g itself when acc has no value yet. */
static int32_t sum_into(gg_b *b, int32_t acc, int32_t g) {
  return acc < 0 ? g : gg_accumulate_into(b, acc, g);
}

int32_t gg_cross_backward(gg_ctx *c, int32_t g) {
  gg_b *b = c->b;
  int32_t gx0 = -1; /* x0's gradient summed over the layers so far */
  for (int32_t l = c->n_cross - 1; l >= 0; l--) {
    gg_cross *cr = &c->cross[l];
    /* residual: g reaches m and x_l unchanged; the first layer's x_l is
     * x0, whose gradient it joins */
    gg_begin(b, EV("AddBackward0"));
    gg_in(b, g);
    if (l == 0) gx0 = sum_into(b, gx0, g);
    gg_end(b);
    int32_t gs = gg_like(b, cr->s), gm0 = gg_like(b, cr->m);
    gg_begin(b, EV("MulBackward0"));
    gg_in(b, g);
    gg_out(b, gs);
    gg_out(b, gm0);
    binary(b, "aten::mul", g, c->cat1, gs);
    binary(b, "aten::mul", g, cr->s, gm0);
    gx0 = sum_into(b, gx0, gm0);
    gg_end(b);
    /* the bias add: its gradient summed over the batch; the GEMM side's
     * cast back to the half dtype the GEMM produced */
    gg_lin *last = &cr->lin[cr->n_lin - 1];
    dc_dtype yt = b->ts[last->y].dtype;
    int32_t gy = yt == F32 ? gs : gg_like_dtype(b, gs, yt);
    int32_t gb = gg_like(b, cr->bias);
    gg_begin(b, EV("AddBackward0"));
    gg_in(b, gs);
    if (gy != gs) gg_out(b, gy);
    gg_out(b, gb);
    gg_begin(b, "aten::sum");
    gg_in(b, gs);
    gg_out(b, gb);
    gg_ew(b, DC_KERNEL_REDUCE, gg_numel(b, gs), 1, 4.0);
    gg_end(b);
    if (gy != gs) {
      gg_begin(b, "aten::to");
      gg_in(b, gs);
      gg_out(b, gy);
      gg_ew(b, DC_KERNEL_ELEMENTWISE, gg_numel(b, gs), 0, 4.0 + gg_es(yt));
      gg_end(b);
    }
    gg_end(b);
    gg_accumulate(c, cr->pb, gb);
    /* the GEMMs; the first one's input gradient is x_l's second (the
     * residual's g was the first), or x0's last */
    int32_t h = gy;
    for (int32_t i = cr->n_lin - 1; i >= 0; i--)
      h = gg_linear_backward(c, &cr->lin[i], h, i == 0 ? (l ? g : gx0) : -1);
    g = h;
  }
  return g;
}
