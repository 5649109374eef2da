/*
 * plan_int.h — what planner.c (the search) and candidates.c (each table's
 * candidates and their prices) share inside runtime/plan/: the fixed-point
 * type of the search's sums, a template (one way of cutting a table,
 * priced once), the search's context and the candidates' entry points
 * (prefix pl_). Not part of the folder's contract (plan.h).
 *
 * Ownership: everything a pctx points at lives in its arena `a`, except
 * the wide templates candidates.c cuts in `scratch` while it prices them.
 */
#ifndef DC_RUNTIME_PLAN_INT_H
#define DC_RUNTIME_PLAN_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/plan/plan.h"

/* Fixed point for the per-rank sums the search updates: 2^-60 µs (or
 * byte) units in 128 bits, so adding and removing a candidate is exact and
 * a sum does not depend on the order of placements. */
__extension__ typedef __int128 fx;
__extension__ typedef unsigned __int128 ufx;

/* One way of cutting a table, priced once: a candidate is a template and a
 * rotation (its shards' ranks + rot, mod W), since a shard's work and
 * memory do not depend on its rank. */
typedef struct tmpl {
  dc_table_plan tp;
  double *fwd_us, *bwd_us; /* per shard */
  int64_t *mem;            /* per shard, bytes over the empty plan */
  fx *ffwd, *fbwd, *fmem, *fsend;
  double dp_us;            /* data-parallel: all-reduce + fill + update */
  fx fdp;
  int32_t n_rot, rot_step; /* rotations j·rot_step, j < n_rot ... */
  const int32_t *rots;     /* ... or these */
  bool quick;              /* shards on distinct ranks: try_cost
                            * prices it without touching the state */
  bool in_scratch;         /* tp.shards in the scratch arena (add_tmpl) */
  /* Compact (row-wise, data-parallel: shard i on rank i): the per-shard
   * arrays hold the distinct values of consecutive shards and vi[i] is
   * shard i's; tp.shards is NULL (cand_plan cuts the table again). At
   * 5,000 tables × 256 GPUs this is 315 MB of the search's 331. */
  int32_t *vi;
  bool ident;
} tmpl;

/* Shard i's index into a template's value arrays. */
static inline int32_t vix(const tmpl *x, int32_t i) {
  return x->vi ? x->vi[i] : i;
}

/* A direct-mapped cache of collective prices by byte count. */
#define CMEMO 256
typedef struct cmemo {
  int64_t key[CMEMO];
  double val[CMEMO];
} cmemo;

/* A max-tree over n leaves (P a power of two >= n; node 1 the root):
 * mtree holds doubles; xtree holds fixed-point sums: of_fx and the int128
 * -> double cast are monotone, so the converted maximum is the maximum of
 * the converted leaves (the doubles a tree of doubles would hold), with
 * one conversion per use instead of one per update. planner.c keeps
 * them (NAME_init, NAME_set, NAME_max). */
typedef struct mtree {
  int32_t P;
  double *v;
} mtree;
typedef struct xtree {
  int32_t P;
  fx *v;
} xtree;

typedef struct pctx {
  const dc_point *p;
  const dc_plan_opts *o;
  dc_arena *a;
  int32_t W, H, S, T;
  double wire_bytes;   /* pooled all-to-all payload per element
                          (dc_pooled_wire_bytes) */
  double reduce_bytes; /* pooled reduce-scatter / all-gather per element
                          (dc_pooled_reduce_bytes) */
  tmpl **tm;       /* per table: its templates, in candidate order */
  int32_t *n_tm;
  int32_t *n_cands;
  int32_t *cur;    /* chosen candidate per table, -1: not yet placed */
  dc_shard_plan *s;
  int64_t base_mem;
  double cap;
  double *rf, *rb, *send, *twrw;
  int64_t *rm;
  /* incremental state of the current assignment */
  fx *sf, *sb, *sm, *ss, sdp;
  double *tw_dims;
  double d_a2a, d_rw;
  xtree tf, tb, tmem, tsend;
  mtree thost;
  cmemo a2a, twp, rwp;
  int32_t *mark, stamp; /* per rank, for pl_price_tmpl's distinct-rank test */
  dc_arena scratch;     /* a table's wide templates while they are priced */
  bool memo_ok;         /* cost_from's last inputs and result */
  double memo_key[7];
  fx memo_sdp;
  dc_plan_cost memo_out;
} pctx;

/* Candidate k of table t: its template and rotation. */
static inline const tmpl *cand_of(const pctx *c, int32_t t, int32_t k,
                                  int32_t *rot) {
  for (int32_t j = 0; j < c->n_tm[t]; j++) {
    const tmpl *x = &c->tm[t][j];
    if (k < x->n_rot) {
      *rot = x->rots ? x->rots[k] : k * x->rot_step;
      return x;
    }
    k -= x->n_rot;
  }
  *rot = 0;
  return NULL;
}

static inline int32_t rank_of(const pctx *c, const tmpl *x, int32_t i,
                              int32_t rot) {
  int32_t r = (x->ident ? i : x->tp.shards[i].rank) + rot;
  return r >= c->W ? r - c->W : r;
}

/* Price of collective `kind` of `bytes` over `ranks` GPUs on `hosts`
 * hosts (0 on one rank). */
double pl_coll_price(const pctx *c, dc_kernel_kind kind, double bytes,
                     int32_t ranks, int32_t hosts);
/* Prices template x of table t (its shards set in x->tp). */
void pl_price_tmpl(pctx *c, int32_t t, tmpl *x);
/* Sets table t's templates (c->tm[t], c->n_tm[t], c->n_cands[t]): every
 * candidate its constraints and the allowed types permit, in the order
 * the search tries them. */
void pl_make_cands(pctx *c, int32_t t);
/* The objective of the current (possibly partial) assignment, summed
 * table by table (objective.c). */
void pl_eval_full(pctx *c, dc_plan_cost *out);
/* Appends table t's grid_shard templates (candidates.c, add_grid) where
 * its type is not fixed; dc_plan_auto asks for them on the tables heavy
 * enough to gain from them. */
void pl_add_grid(pctx *c, int32_t t);
/* Queries of a table's templates (candidates.c): the first candidate of
 * its unpinned template of `type` whose rotations are every start rank;
 * of its grid template with the most blocks (*n_rot its rotations); and
 * whether its current candidate is of type a or b. -1 / false: none. */
int32_t pl_rot_base(const pctx *c, int32_t t, dc_sharding type);
int32_t pl_widest_grid(const pctx *c, int32_t t, int32_t *n_rot);
bool pl_cur_is(const pctx *c, int32_t t, dc_sharding a, dc_sharding b);
/* Whether candidate k of table t is the table plan y (candidates.c). */
bool pl_cand_is(const pctx *c, int32_t t, int32_t k,
                const dc_table_plan *y);
/* The lookup time of table t whole (forward + backward, µs, the global
 * batch): what a table-wise shard of it costs. */
double pl_table_work(pctx *c, int32_t t);
/* Candidate k of table t as a table plan of its own (arena-allocated). */
dc_table_plan pl_cand_plan(const pctx *c, int32_t t, int32_t k);

#endif /* DC_RUNTIME_PLAN_INT_H */
