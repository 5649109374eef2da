/*
 * trec_opts.c — the options of the torchrec objective's planner
 * (planner_torchrec.c, where the options are described with the search):
 * each table's cuts within its types, pinned ranks and the machine,
 * every shard priced by dc_torchrec_price_shard.
 */
#include <string.h>

#include "runtime/plan/trec_int.h"

/* TorchRec's column-wise block: the smallest divisor of D from 128 up
 * that is a multiple of 4, else D (sharding_option enumerator,
 * _find_base_dim). */
static int32_t trec_cw_count(int32_t dim) {
  for (int32_t b = 128; b < dim; b++)
    if (dim % b == 0 && b % 4 == 0) return dim / b;
  return 1;
}

static int cmp_heavy_ms(const void *a, const void *b, const double *ms) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  if (ms[x] != ms[y]) return ms[x] > ms[y] ? -1 : 1;
  return x < y ? -1 : x > y;
}

/* Shard order by decreasing ms: insertion sort (n is small, and qsort
 * has no context argument). */
static void order_heavy(topt *x) {
  int32_t n = x->tp.n_shards;
  for (int32_t i = 0; i < n; i++)
    x->heavy[i] = i;
  for (int32_t i = 1; i < n; i++) {
    int32_t v = x->heavy[i], j = i;
    while (j > 0 && cmp_heavy_ms(&v, &x->heavy[j - 1], x->ms) < 0) {
      x->heavy[j] = x->heavy[j - 1];
      j--;
    }
    x->heavy[j] = v;
  }
}

static void add_opt(tctx *c, dc_shard_plan *sp, int32_t t, dc_sharding type,
                    int32_t n, const int32_t *ranks, bool placed, topt *out,
                    int32_t *k) {
  dc_diags quiet = {0};
  bool ok = dc_shard_plan_set(sp, c->p, t, type, n, ranks, c->a, &quiet);
  dc_diags_free(&quiet);
  if (!ok) return;
  topt *x = &out[*k];
  x->tp = sp->tables[t];
  x->placed = placed;
  int32_t m = x->tp.n_shards;
  x->ms = dc_arena_array(c->a, (size_t)m, sizeof(double));
  x->hbm = dc_arena_array(c->a, (size_t)m, sizeof(double));
  x->heavy = dc_arena_array(c->a, (size_t)m, sizeof(int32_t));
  x->total_ms = 0;
  for (int32_t i = 0; i < m; i++) {
    dc_torchrec_shard s = dc_torchrec_price_shard(c->p, sp, t, i, &c->tc);
    x->ms[i] = s.total_ms;
    x->hbm[i] = s.hbm_bytes;
    x->total_ms += s.total_ms;
  }
  order_heavy(x);
  if (m > c->max_n) c->max_n = m;
  (*k)++;
}

/* grid_shard (only a table's own: plan_opts.c): pinned, on the hosts its
 * ranks name; else TorchRec's block count and, as for column-wise, n ≤
 * D/32 a power of two, on each aligned run of n consecutive hosts (as
 * TorchRec's partitioner places grid). */
static void grid_opts(tctx *c, dc_shard_plan *sp, int32_t t, topt *x,
                      int32_t *k) {
  const dc_table *tb = &c->p->tables[t];
  if (tb->n_ranks > 0) {
    add_opt(c, sp, t, DC_SHARDING_GRID_SHARD, tb->n_ranks, tb->ranks, false,
            x, k);
    return;
  }
  int32_t tr = trec_cw_count(tb->dim), top = tb->dim / 32;
  int32_t *rk = dc_arena_array(c->a, (size_t)c->H, sizeof(int32_t));
  for (int32_t n = 1; n <= c->H && n <= tb->dim; n++) {
    bool pow2 = (n & (n - 1)) == 0;
    if (n != tr && !(pow2 && n <= top)) continue;
    for (int32_t h = 0; h + n <= c->H; h += n) {
      for (int32_t j = 0; j < n; j++)
        rk[j] = (h + j) * c->S;
      add_opt(c, sp, t, DC_SHARDING_GRID_SHARD, n, rk, false, x, k);
    }
  }
}

/* table_column_wise (offered where it is the table's one type:
 * candidates.c says why): pinned, its ranks; else, on each host, TorchRec's
 * block count and the powers of two n ≤ D/32, capped at the host's GPUs
 * (dlrmc puts one block on a GPU, TorchRec may stack them), on each
 * aligned run of n of the host's GPUs — TorchRec's partitioner puts the
 * blocks on the least-loaded GPUs of one host, which the runs cover where
 * the loads are even. */
static void twcw_opts(tctx *c, dc_shard_plan *sp, int32_t t, topt *x,
                      int32_t *k) {
  const dc_table *tb = &c->p->tables[t];
  if (tb->n_ranks > 0) {
    add_opt(c, sp, t, DC_SHARDING_TABLE_COLUMN_WISE, tb->n_ranks, tb->ranks,
            false, x, k);
    return;
  }
  int32_t tr = trec_cw_count(tb->dim), top = tb->dim / 32;
  if (tr > c->S) tr = c->S;
  int32_t *rk = dc_arena_array(c->a, (size_t)c->S, sizeof(int32_t));
  for (int32_t n = 1; n <= c->S && n <= tb->dim; n++) {
    bool pow2 = (n & (n - 1)) == 0;
    if (n != tr && !(pow2 && n <= top)) continue;
    for (int32_t h = 0; h < c->H; h++)
      for (int32_t j = 0; j + n <= c->S && h * c->S + j + n <= c->W; j += n) {
        for (int32_t i = 0; i < n; i++) rk[i] = h * c->S + j + i;
        add_opt(c, sp, t, DC_SHARDING_TABLE_COLUMN_WISE, n, rk, false, x, k);
      }
  }
}

void trec_make_opts(tctx *c, dc_shard_plan *sp, uint32_t m, int32_t t) {
  const dc_table *tb = &c->p->tables[t];
  bool grid = (m & DC_PLAN_TYPE(DC_SHARDING_GRID_SHARD)) && c->W > 1;
  /* grid: ≤ 2H aligned runs of power-of-two sizes, H more of TorchRec's */
  bool twcw = m == DC_PLAN_TYPE(DC_SHARDING_TABLE_COLUMN_WISE) && c->W > 1;
  /* twcw: ≤ 2W aligned runs of power-of-two sizes, W more of TorchRec's */
  int32_t W = c->W, cap = c->H + 48 + (grid ? 3 * c->H + 1 : 0) +
                          (twcw ? 3 * c->W + 1 : 0);
  topt *x = dc_arena_array(c->a, (size_t)cap, sizeof(topt));
  int32_t k = 0;
  int32_t *rk = dc_arena_array(c->a, (size_t)W, sizeof(int32_t));
  bool pinned = tb->n_ranks > 0;
  for (int32_t i = 0; i < W; i++)
    rk[i] = i;
  if ((m & DC_PLAN_TYPE(DC_SHARDING_TABLE_WISE)) || W == 1)
    for (int32_t r = 0; r < W; r++)
      if (allowed_rank(tb, r)) { /* one option: the search picks the rank */
        add_opt(c, sp, t, DC_SHARDING_TABLE_WISE, 1, &r, true, x, &k);
        break;
      }
  if ((m & DC_PLAN_TYPE(DC_SHARDING_COLUMN_WISE)) && W > 1) {
    if (pinned) {
      add_opt(c, sp, t, DC_SHARDING_COLUMN_WISE, tb->n_ranks, tb->ranks, false,
              x, &k);
    } else {
      int32_t top = tb->dim / 32 < W ? tb->dim / 32 : W;
      int32_t tr = trec_cw_count(tb->dim);
      for (int32_t n = 2; n <= W && n <= tb->dim; n++) {
        bool pow2 = (n & (n - 1)) == 0;
        if ((n <= top && (n <= 8 || pow2)) || n == tr)
          add_opt(c, sp, t, DC_SHARDING_COLUMN_WISE, n, rk, true, x, &k);
        if (n > top && n > tr) break;
      }
    }
  }
  if ((m & DC_PLAN_TYPE(DC_SHARDING_ROW_WISE)) && W > 1 &&
      (!pinned || tb->n_ranks == W))
    add_opt(c, sp, t, DC_SHARDING_ROW_WISE, 0, NULL, false, x, &k);
  /* on one host table_row_wise is row_wise at the same price; on one GPU
   * per host it is one shard that, unlike table_wise, pays no small-dim
   * penalty */
  if ((m & DC_PLAN_TYPE(DC_SHARDING_TABLE_ROW_WISE)) && c->H > 1)
    for (int32_t h = 0; h < c->H; h++) {
      /* pinned: only a host whose every GPU is pinned */
      int32_t r0 = h * c->S;
      bool ok = true;
      for (int32_t r = r0; r < r0 + c->S && r < W; r++)
        ok = ok && allowed_rank(tb, r);
      if (ok)
        add_opt(c, sp, t, DC_SHARDING_TABLE_ROW_WISE, 1, &r0, false, x, &k);
    }
  if ((m & DC_PLAN_TYPE(DC_SHARDING_DATA_PARALLEL)) && W > 1 &&
      (!pinned || tb->n_ranks == W))
    add_opt(c, sp, t, DC_SHARDING_DATA_PARALLEL, 0, NULL, false, x, &k);
  if (grid) grid_opts(c, sp, t, x, &k);
  if (twcw) twcw_opts(c, sp, t, x, &k);
  DC_ASSERT(k <= cap);
  c->opt[t] = x;
  c->n_opt[t] = k;
}
