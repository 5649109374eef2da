/*
 * graphgen_int.h — what the files of graphgen/ share and nobody else sees: the
 * per-rank model context the DLRM builder threads through forward,
 * backward and optimizer, and the functions each file offers the others
 * (declarations; the little inline code here calls no file of graphgen/,
 * else this header would depend on the files that include it). The graph
 * builder itself is core_int.h.
 *
 * The builder's files, lowest first (each calls only files before it):
 * core.c (the builder), param_list.c, launch.c, exchange.c, kjt.c,
 * linear.c, crossnet.c, forward.c, backward.c, optim.c, fused.c,
 * torchrec_graph.c, then build.c (dc_graph_build), which calls them all.
 */
#ifndef DC_GRAPHGEN_GRAPHGEN_INT_H
#define DC_GRAPHGEN_GRAPHGEN_INT_H

#include "graphgen/graphgen.h"

#include "graphgen/core_int.h"

/* ---- the DLRM model context (one rank) -------------------------------- */

typedef struct gg_lin {
  int64_t in, out;
  int32_t w, bias;    /* fp32 parameters [out, in], [out] */
  int32_t pw, pb;     /* their entries in ctx->params */
  int32_t x;          /* input as passed to aten::linear */
  bool x_cast;        /* autocast casts the input to the GEMM dtype */
  bool x_grad;        /* the input needs a gradient */
  int32_t xg;         /* cast input (or x) */
  int32_t wg;         /* cast weight (or w) */
  int32_t y;          /* linear output */
  int32_t act;        /* relu / sigmoid output, -1 when none */
  bool sigmoid;
  bool no_bias;       /* a bias-free linear (bias, pb = -1): matmul → mm */
} gg_lin;

/* One cross layer of the DCNv2 interaction (crossnet.c): low rank, V then
 * W (lin[0], lin[1]); full rank, one [N, N] kernel (lin[0]). */
typedef struct gg_cross {
  gg_lin lin[2];
  int32_t n_lin;
  int32_t bias, pb;   /* b_l [N] and its param entry */
  int32_t x;          /* x_l, the layer's input (fp32 [B, N]) */
  int32_t s;          /* x_l·W + b (fp32: the bias add promotes) */
  int32_t m;          /* x0 ⊙ s */
  int32_t out;        /* m + x_l */
} gg_cross;

/* One parameter as the optimizer sees it. */
typedef struct gg_param {
  int32_t t;       /* the parameter tensor */
  int32_t grad;    /* its gradient (after AccumulateGrad), -1 if none */
  int32_t bucket;  /* all-reduced bucket it belongs to, -1 if none */
  int32_t table;   /* table index, -1 for a dense parameter */
  int64_t rows;    /* tables: rows touched per step (sparse update) */
  int32_t state[2];/* optimizer state tensors, -1 when absent */
  int32_t g0;      /* legacy: the zeroed gradient zero_grad leaves */
  int32_t bucket_last; /* DDP: this param completes bucket n (else -1) */
  int64_t bucket_elems; /* elements of that bucket */
  bool dense;      /* a data-parallel table: dense gradient, all-reduced */
  bool cross;      /* a parameter of the DCN cross network */
} gg_param;

/* How a rank's local shards are looked up and exchanged (one batched op
 * per class): TW/CW shards go through the all-to-all, TWRW shards through
 * a host reduce-scatter then the all-to-all, RW shards through a world
 * reduce-scatter, DP replicas straight to the interaction. The torchrec
 * style keeps column-wise, table-column-wise and grid shards in classes
 * of their own (GG_CLS_CW, GG_CLS_TWCW, GG_CLS_GRID): TorchRec has one
 * lookup and one output distribution per sharding type, so there each
 * class is one sharding type; the other styles leave them empty, a
 * table_column_wise shard there being a column shard (A2A) and a
 * grid_shard shard a TWRW shard of its column block on its own host. */
enum {
  GG_CLS_A2A,
  GG_CLS_CW,
  GG_CLS_TWCW,
  GG_CLS_TWRW,
  GG_CLS_GRID,
  GG_CLS_RW,
  GG_CLS_DP,
  GG_N_CLS
};

/* The class of a shard of sharding type `type` (`trec`: the torchrec
 * style's, one per sharding type). */
static inline int32_t gg_class_of(dc_sharding type, bool trec) {
  switch (type) {
  case DC_SHARDING_COLUMN_WISE: return trec ? GG_CLS_CW : GG_CLS_A2A;
  case DC_SHARDING_TABLE_COLUMN_WISE: return trec ? GG_CLS_TWCW : GG_CLS_A2A;
  case DC_SHARDING_TABLE_ROW_WISE: return GG_CLS_TWRW;
  case DC_SHARDING_GRID_SHARD: return trec ? GG_CLS_GRID : GG_CLS_TWRW;
  case DC_SHARDING_ROW_WISE: return GG_CLS_RW;
  case DC_SHARDING_DATA_PARALLEL: return GG_CLS_DP;
  default: return GG_CLS_A2A;
  }
}

/* The name of an autograd node's op in a trace. */
#define EV(x) "autograd::engine::evaluate_function: " x

/* DDP's first gradient bucket (torch.distributed's
 * _DEFAULT_FIRST_BUCKET_BYTES): the torchrec style's one DDP */
#define GG_DDP_FIRST_BUCKET ((int64_t)1 << 20)

typedef struct gg_ctx {
  gg_b *b;
  /* What only this rank's builder reads (the per-table index arrays
   * below, parameter lists, layer records): allocated here, not in b->a,
   * and dropped when the rank is built, so a graph of W ranks over T
   * tables does not keep W arrays of T entries. Whatever an op points to
   * (an embedding kernel's groups) goes in b->a. */
  dc_arena *s;
  const dc_point *p;
  int32_t rank, n_ranks;
  int64_t batch;       /* local batch: MLPs, interaction, loss */
  int64_t emb_batch;   /* samples looked up by this rank's tables */
  bool autocast;       /* fp16 / bf16 */
  dc_dtype adt;        /* activation dtype inside autocast regions */
  dc_dtype gdt;        /* GEMM math dtype */
  bool batched;        /* embedding_kernel: batched */
  bool legacy;         /* PyTorch 1.13 zero_grad / AccumulateGrad / loops */
  bool trec;           /* the torchrec style (torchrec_graph.c) */
  bool sharded;        /* embeddings exchanged by all-to-all */

  int32_t n_local;
  int32_t *local;      /* table indices held by this rank, by class */
  const dc_shard_plan *plan;
  int32_t host, gph;   /* this rank's host, GPUs per host */
  int32_t cls_first[GG_N_CLS + 1]; /* class k: local[cls_first[k] ..
                                      cls_first[k+1]) */
  int64_t cls_batch[GG_N_CLS];     /* samples each class looks up */
  bool plan_cls[GG_N_CLS];         /* the plan has tables of the class */
  int64_t plan_dims[GG_N_CLS];     /* Σ dims of the plan's tables of each
                                      class (gg_class_of), all ranks */
  int64_t *sh_rows;    /* [n_tables] this rank's shard of each table */
  int32_t *sh_cols;
  double *sh_pool;
  int32_t idx_cls[GG_N_CLS], offs_cls[GG_N_CLS]; /* batched inputs */
  int32_t out_cls[GG_N_CLS];       /* batched lookup outputs */
  /* torchrec: the KJT's values and lengths, local batch and received */
  int32_t kjt_val, kjt_len, kjt_rval, kjt_rlen;
  /* torchrec: each class's received lengths and values regrouped by
   * feature (its recat; -1: the class reads kjt_rlen, kjt_rval) */
  int32_t rlen_cls[GG_N_CLS], rval_cls[GG_N_CLS];
  int32_t *feat_cls;   /* class of each feat[] entry */
  int32_t chunk[GG_N_CLS]; /* TWRW, GRID: the host reduce-scatter's
                              output, -1 */
  int32_t *eg;         /* backward: gradient of each lookup output
                          (per_table: by local index; batched: by class) */

  int32_t k, m;
  gg_lin *bot, *top;
  int32_t n_cross;     /* dcn: cross layers */
  gg_cross *cross;

  /* forward tensors kept for the backward */
  int32_t dense_h, dense;
  int32_t *idx;        /* device indices per local table (batched: [0]) */
  int32_t n_emb_out;
  int32_t *emb_out;    /* pooled outputs (per table, or one for batched) */
  int32_t n_feat;
  int32_t *feat;       /* the interaction's embedding inputs (all tables) */
  int32_t x_bot;       /* bottom MLP output */
  int32_t x_cat;       /* x as it enters the first cat (maybe cast) */
  bool x_cat_cast;
  int32_t cat1, view1, tr, bmm_a, bmm_b, bmm_out, sl, li, lj, idx_out;
  bool bmm_cast;
  int32_t top_in;
  int64_t F, NI, D;
  int32_t z;           /* model output (sigmoid) */
  int32_t z_loss;      /* loss input (maybe cast to fp32) */
  bool z_cast;
  int32_t target, loss;

  gg_param *params;
  int32_t n_params, cap_params;
  int32_t *w_tab;      /* [n_tables] weight tensor of each local table */
  int32_t *st_tab[2];  /* batched: optimizer state of each local table */
  int32_t *p_tab;      /* [n_tables] param entry of each local table */
  int32_t *offs_t;     /* per_table: the [B] offsets view of each table */
  int64_t *n_idx;      /* [n_tables] lookups per step of each table */
  int32_t *gfeat;      /* backward: gradients of feat[] */
  int32_t *bno;        /* DDP bucket number of each param, -1: none */
} gg_ctx;

int32_t gg_param_add(gg_ctx *c, int32_t t, int32_t table);
/* A dense parameter (MLP, cross net) with the dense optimizer's state:
 * Adagrad one tensor like it, Adam two. */
int32_t gg_param_dense(gg_ctx *c, int32_t t);

/* An embedding kernel over local tables `tabs` (this rank's shards),
 * identical shards grouped. */
void gg_emb_kernel(gg_ctx *c, dc_kernel_kind kind, const int32_t *tabs,
                   int32_t n, int64_t batch, bool fused);
/* Hosts a world collective spans (the point's, at least 1). */
static inline int32_t gg_world_hosts(const gg_ctx *c) {
  return c->p->hosts < 1 ? 1 : c->p->hosts;
}
/* One collective launch on NCCL's stream for the open op (returned). */
dc_launch *gg_coll(gg_ctx *c, dc_kernel_kind kind, int64_t bytes,
                   int32_t ranks, int32_t hosts, int32_t id);
/* exchange.c: the collectives of the pooled embeddings (multi-GPU). */
void gg_exchange_forward(gg_ctx *c);
void gg_exchange_backward(gg_ctx *c);

/* linear.c: aten::linear (+ autocast casts) → addmm, or t + matmul → mm
 * for a bias-free one; its AddmmBackward0 / MmBackward0 and the
 * AccumulateGrads, returning the input's gradient (-1: none). */
void gg_linear(gg_ctx *c, gg_lin *L, int32_t x, bool x_grad);
int32_t gg_linear_backward(gg_ctx *c, gg_lin *L, int32_t g, int32_t acc);
/* acc += g (aten::add_) in the open op; returns the new version of acc.
 * gg_linear_backward adds its input gradient into acc (>= 0) where the
 * engine would: inside the evaluate_function that produced it. */
int32_t gg_accumulate_into(gg_b *b, int32_t acc, int32_t g);
/* AccumulateGrad of param q with gradient g (DDP's bucket all-reduce when
 * g completes one; the 1.13 add into the zeroed gradient). */
void gg_accumulate(gg_ctx *c, int32_t q, int32_t g);
/* A cast child: `aten::to` from t to dtype `to` (autocast's casts). */
int32_t gg_cast_child(gg_b *b, int32_t t, dc_dtype to);
/* ToCopyBackward0: the gradient of a cast, cast back to `to`. */
int32_t gg_to_copy_backward(gg_b *b, int32_t g, dc_dtype to);
/* The first cat of the interaction, x = [bottom output] + features, flat
 * [B, width] fp32; and its backward handing each input its slice. */
int32_t gg_cat_features(gg_ctx *c, int64_t width);
int32_t gg_cat_backward(gg_ctx *c, int32_t gcat, int32_t gxa);
/* crossnet.c: the DCNv2 cross network's parameters (in registration
 * order, after the bottom MLP), forward from c->cat1, backward to it. */
void gg_cross_declare(gg_ctx *c);
int32_t gg_cross_forward(gg_ctx *c, int32_t x0);
int32_t gg_cross_backward(gg_ctx *c, int32_t g);

/* The table-batched lookups (and, multi-GPU, the exchange) of the
 * forward; the lookups' backward (backward.c). */
void gg_embeddings(gg_ctx *c);
void gg_embedding_backward(gg_ctx *c);
/* Part of it: the data-parallel replicas' (GG_EMB_DP, which need no
 * exchange) or the other shards' (GG_EMB_SHARDED), each in the order
 * gg_embedding_backward runs them. */
typedef enum { GG_EMB_ALL, GG_EMB_DP, GG_EMB_SHARDED } gg_emb_part;
void gg_embedding_backward_part(gg_ctx *c, gg_emb_part part);
/* The iteration in the fused style (fused.c). */
void gg_build_fused(gg_ctx *c);

/* The dot interaction's lower-triangle gather (TRIL_FWD, in aten::index)
 * or its scatter (TRIL_BWD, in IndexBackward0): with `copy_idx` the
 * host-built li and lj index lists ([NI] int64 each) are copied to the
 * device first (stock DLRM; TorchRec keeps them in a device buffer), then
 * the kernel runs over batch × [F, F] in dtype `t` (forward.c). */
void gg_tril(gg_b *b, dc_kernel_kind kind, int64_t batch, int64_t F,
             int64_t NI, bool diag, dc_dtype t, bool copy_idx);

/* A host tensor (a loader's batch) and its host-to-device copy: aten::to
 * with one pageable memcpy (forward.c). */
int32_t gg_host_t1(gg_b *b, dc_dtype t, int64_t d0);
int32_t gg_host_t2(gg_b *b, dc_dtype t, int64_t d0, int64_t d1);
int32_t gg_h2d(gg_b *b, int32_t host);
/* Parameters in registration order (forward.c; gg_build_input calls it). */
void gg_declare_params(gg_ctx *c);
/* FBGEMM's table-batched lookup op for the tables' optimizer, forward
 * (fbgemm::split_embedding_codegen_lookup_<opt>_function) or its
 * backward's autograd node (kjt.c). */
const char *gg_tbe_name(dc_optimizer o, bool backward);
/* The iteration in the torchrec style (torchrec_graph.c). */
void gg_build_torchrec(gg_ctx *c);
/* torchrec, tables cached in HBM (uvm_graph.c): FBGEMM's cache prefetch
 * for class k before its lookup, returning the cache slots the lookup
 * reads (-1: the class has no cache, no op; the lookup's kernel is then
 * whole, else its LOOKUP part). */
int32_t gg_tbe_prefetch(gg_ctx *c, int32_t k);
/* torchrec: in the forward, before the lookups (gg_embeddings; kjt.c) */
void gg_tbe_dist(gg_ctx *c);
void gg_tbe_inputs(gg_ctx *c, int32_t k);
/* The plan's sharding types in TorchRec's order (that of their first
 * table) into `types`; returns how many (kjt.c). */
int32_t gg_plan_types(const gg_ctx *c, dc_sharding types[8]);
/* torchrec, sharded: per sharding type its lookup and output
 * distribution (forward), their backward with the lookups' (exchange.c) */
void gg_trec_embeddings(gg_ctx *c);
void gg_trec_dist_backward(gg_ctx *c);
/* One class's lookup and its backward (lookup.c). */
void gg_lookup_class(gg_ctx *c, int32_t k);
void gg_lookup_class_backward(gg_ctx *c, int32_t k);
/* kjt.c, for the pipelined step: a record_function scope (an annotation
 * op, left open); Σ over all tables of the pooled lookups of `batch`
 * samples; the distribution's first half (the splits all-to-all, returned)
 * and second half (lengths and values into fresh *recv_l, *recv_v); the
 * sizes of what this rank receives. */
void gg_annotation(gg_b *b, const char *name);
int64_t gg_all_lookups(gg_ctx *c, int64_t batch);
int32_t gg_kjt_splits(gg_ctx *c, int32_t *send_l, int32_t *send_v);
void gg_kjt_tensors(gg_ctx *c, int32_t splits, int32_t send_l,
                    int32_t send_v, int32_t *recv_l, int32_t *recv_v);
void gg_kjt_received(gg_ctx *c, int64_t *n_len, int64_t *n_val);
/* The backward's seed (aten::ones_like of the loss) and the rest. */
int32_t gg_backward_seed(gg_ctx *c);
void gg_build_backward_from(gg_ctx *c, int32_t seed);

void gg_build_input(gg_ctx *c);
void gg_build_forward(gg_ctx *c);
void gg_build_loss(gg_ctx *c);
void gg_build_zero_grad(gg_ctx *c);
void gg_build_backward(gg_ctx *c);
void gg_build_step(gg_ctx *c);

/* Element size of an activation dtype. */
static inline int gg_es(dc_dtype t) { return dc_dtype_bytes(t); }
/* The unquantized pooled payload's dtype on the wire (wire.c). */
dc_dtype gg_wire_dtype(const dc_point *p);

/* Transforms (transform.c): applies the point's transforms in order.
 * False (with a diagnostic) when a pattern does not compile. */
bool gg_apply_transforms(dc_graph *g, const dc_point *p, dc_arena *a,
                         dc_diags *d);

/* Exporters. */
void gg_write_text(const dc_graph *g, int32_t rank, dc_buf *out);
void gg_write_dot(const dc_graph *g, int32_t rank, dc_buf *out);
void gg_write_et(const dc_graph *g, int32_t rank, const dc_et_schedule *s,
                 dc_buf *out);

/* What an ET records for an aten op: its schema and how its arguments
 * line up with the op's tensors (grammar in et_schema.c). */
typedef struct gg_et_sig {
  const char *name, *schema, *args;
} gg_et_sig;
const gg_et_sig *gg_et_sig_find(const char *name); /* NULL: not known */
void gg_put_kernel(const dc_kernel *k, dc_buf *out);

#endif /* DC_GRAPHGEN_GRAPHGEN_INT_H */
