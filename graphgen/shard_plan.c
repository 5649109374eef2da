/*
 * shard_plan.c — sharding plans: how each embedding table is cut into
 * shards and which rank holds each shard (graphgen.h).
 *
 * The seven sharding types are TorchRec's (torchrec/distributed/types.py,
 * ShardingType), restated in our terms:
 *
 *   table_wise      the whole table on one rank; it looks the table up for
 *                   the global batch and sends the pooled rows to the
 *                   ranks that own each sample (all-to-all);
 *   column_wise     the columns split in n blocks on n distinct ranks, each
 *                   block behaving like a narrower table-wise table;
 *   row_wise        the rows split evenly over every rank; each rank pools
 *                   the indices that fall in its rows for the global batch
 *                   and a reduce-scatter sums the partial pools into each
 *                   rank's local batch;
 *   table_row_wise  row-wise over the GPUs of one host (reduce-scatter on
 *                   NVLink), then the all-to-all across hosts;
 *   data_parallel   a replica on every rank, looked up for the local batch,
 *                   its gradient all-reduced;
 *   table_column_wise  column-wise on distinct GPUs of one host
 *                   (TorchRec's TABLE_COLUMN_WISE: its host planned as
 *                   table-row-wise's, its blocks exchanged as columns);
 *   grid_shard      the columns split in n blocks on n distinct hosts,
 *                   each block table-row-wise over its host's GPUs: a
 *                   hot table's lookups spread over n hosts' GPUs while
 *                   its partial pools are reduced on NVLink and only the
 *                   chunks cross the NICs (TorchRec's GRID_SHARD; the
 *                   shape of HugeCTR's hierarchical plans across nodes).
 *
 * Row blocks are even (the first rows % n shards get one row more) rather
 * than TorchRec's ceil-sized blocks, so no shard is empty; column blocks
 * likewise. The default column-wise shard count is min(ranks, D / 32), at
 * least 1 (32 columns is the narrowest block worth a kernel; TorchRec's
 * planner enumerates several counts, we take one).
 *
 * The default placement (no planner) is the greedy balance the reference
 * DLRM and TorchRec's planner start from: pinned and row-/data-parallel
 * tables first, then the table-wise and column-wise tables largest
 * (rows × dim) first, each shard on the rank holding the fewest table
 * elements so far (ties: lowest rank); table-row-wise tables go to the
 * host holding the fewest, a grid table's blocks to the hosts holding the
 * fewest, a table-column-wise table's blocks to the least-loaded ranks of
 * the host holding the fewest.
 */
#include <stdlib.h>
#include <string.h>

#include "graphgen/graphgen_int.h"

#define CW_MIN_COLS 32

static const dc_span no_span = {0};

static int32_t layout_gph(const dc_point *p) {
  int32_t gpus = p->gpus < 1 ? 1 : p->gpus;
  int32_t hosts = p->hosts < 1 ? 1 : p->hosts;
  int32_t s = p->gpus_per_host > 0 ? p->gpus_per_host : gpus / hosts;
  if (s < 1) s = 1;
  if (s > gpus) s = gpus;
  return s;
}

dc_shard_plan *dc_shard_plan_new(const dc_point *p, dc_arena *a) {
  dc_shard_plan *s = dc_arena_alloc(a, sizeof *s);
  memset(s, 0, sizeof *s);
  s->n_ranks = p->gpus < 1 ? 1 : p->gpus;
  s->gpus_per_host = layout_gph(p);
  s->hosts = (s->n_ranks + s->gpus_per_host - 1) / s->gpus_per_host;
  s->n_tables = p->n_tables;
  s->tables = dc_arena_array(a, (size_t)(p->n_tables > 0 ? p->n_tables : 1),
                             sizeof(dc_table_plan));
  for (int32_t t = 0; t < p->n_tables; t++) {
    s->tables[t].type = DC_SHARDING_AUTO;
    s->tables[t].host = -1;
  }
  return s;
}

int32_t dc_shard_plan_host(const dc_shard_plan *s, int32_t rank) {
  return s->gpus_per_host > 0 ? rank / s->gpus_per_host : 0;
}

static const char *tname(const dc_point *p, int32_t t) {
  return p->tables[t].name ? p->tables[t].name : "?";
}

/* Splits `total` in n even blocks; block i's offset and size. */
static void block(int64_t total, int32_t n, int32_t i, int64_t *off,
                  int64_t *len) {
  int64_t base = total / n, extra = total % n;
  *off = base * i + (i < extra ? i : extra);
  *len = base + (i < extra ? 1 : 0);
}

/* A row-wise cut of table t over n ranks with fewer rows than ranks:
 * E0502 at the table's span (false). */
static bool too_few_rows(const dc_point *p, int32_t t, int32_t n,
                         dc_diags *d) {
  dc_diag *g = dc_diag_error(
      d, DC_DIAG_SHARDING, dc_table_plan_span(&p->tables[t]),
      "table '%s' has %lld rows, fewer than the %d ranks it would be split "
      "over",
      tname(p, t), (long long)p->tables[t].rows, n);
  dc_diag_set_help(g, "use table_wise or data_parallel for small tables");
  return false;
}

/* The default number of grid blocks: one per 32 columns, at most one per
 * host, at least one. */
static int32_t grid_blocks(const dc_shard_plan *s, const dc_table *tb) {
  int32_t n = tb->dim / CW_MIN_COLS;
  if (n > s->hosts) n = s->hosts;
  return n < 1 ? 1 : n;
}

/* grid_shard: n column blocks (n_ranks: one rank naming each block's
 * host; none: hosts 0..n-1 with the default count), block j row-wise
 * over the ranks of its host, shards block by block in rank order. */
static bool set_grid(dc_shard_plan *s, const dc_point *p, int32_t t,
                     int32_t n_ranks, const int32_t *ranks, dc_arena *a,
                     dc_diags *d) {
  const dc_table *tb = &p->tables[t];
  dc_table_plan *tp = &s->tables[t];
  int32_t W = s->n_ranks, S = s->gpus_per_host;
  int32_t n = n_ranks ? n_ranks : grid_blocks(s, tb);
  if (n > s->hosts || n > tb->dim) {
    dc_diag *g = dc_diag_error(
        d, DC_DIAG_SHARDING, dc_table_plan_span(tb),
        "table '%s' cannot be cut in %d grid blocks: there are %d hosts "
        "and %d columns",
        tname(p, t), n, s->hosts, tb->dim);
    dc_diag_set_help(g, "a grid block takes a host of its own; name one "
                        "rank per block, on distinct hosts");
    return false;
  }
  int32_t *host = dc_arena_array(a, (size_t)n, sizeof(int32_t));
  int32_t total = 0;
  for (int32_t j = 0; j < n; j++) {
    host[j] = n_ranks ? dc_shard_plan_host(s, ranks[j]) : j;
    for (int32_t i = 0; i < j; i++)
      if (host[i] == host[j]) {
        dc_diag *g = dc_diag_error(
            d, DC_DIAG_SHARDING, dc_table_plan_span(tb),
            "table '%s' puts two grid blocks on host %d", tname(p, t),
            host[j]);
        dc_diag_set_help(g, "name one rank per block, on distinct hosts");
        return false;
      }
    int32_t m = W - host[j] * S < S ? W - host[j] * S : S;
    if (tb->rows < m) return too_few_rows(p, t, m, d);
    total += m;
  }
  tp->n_shards = total;
  tp->shards = dc_arena_array(a, (size_t)total, sizeof(dc_shard));
  for (int32_t j = 0, k = 0; j < n; j++) {
    int64_t coff, clen;
    block(tb->dim, n, j, &coff, &clen);
    int32_t first = host[j] * S, m = W - first < S ? W - first : S;
    for (int32_t i = 0; i < m; i++) {
      int64_t off, len;
      block(tb->rows, m, i, &off, &len);
      tp->shards[k++] = (dc_shard){first + i, off, len, (int32_t)coff,
                                   (int32_t)clen};
    }
  }
  return true;
}

bool dc_shard_plan_set(dc_shard_plan *s, const dc_point *p, int32_t t,
                       dc_sharding type, int32_t n_ranks,
                       const int32_t *ranks, dc_arena *a, dc_diags *d) {
  const dc_table *tb = &p->tables[t];
  dc_table_plan *tp = &s->tables[t];
  int32_t W = s->n_ranks;
  for (int32_t i = 0; i < n_ranks; i++)
    if (ranks[i] < 0 || ranks[i] >= W) {
      dc_diag_error(d, DC_DIAG_SHARDING, dc_table_plan_span(tb),
                    "table '%s' is placed on rank %d, but there are %d GPUs "
                    "(ranks 0..%d)",
                    tname(p, t), ranks[i], W, W - 1);
      return false;
    }
  tp->type = type;
  tp->host = -1;
  switch (type) {
  case DC_SHARDING_TABLE_WISE: {
    if (n_ranks > 1) {
      dc_diag *g = dc_diag_error(
          d, DC_DIAG_SHARDING, dc_table_plan_span(tb),
          "table '%s' is table-wise but names %d ranks", tname(p, t),
          n_ranks);
      dc_diag_set_help(g, "a table-wise table lives on one rank; use "
                          "column_wise or row_wise to spread it");
      return false;
    }
    tp->n_shards = 1;
    tp->shards = dc_arena_alloc(a, sizeof(dc_shard));
    tp->shards[0] = (dc_shard){n_ranks ? ranks[0] : 0, 0, tb->rows, 0,
                               tb->dim};
    return true;
  }
  case DC_SHARDING_COLUMN_WISE:
  case DC_SHARDING_TABLE_COLUMN_WISE: {
    /* table_column_wise: the same column blocks, on ranks of one host
     * (none named: host 0's first ranks) */
    bool one_host = type == DC_SHARDING_TABLE_COLUMN_WISE;
    int32_t host = n_ranks && one_host ? dc_shard_plan_host(s, ranks[0]) : 0;
    int32_t first = host * s->gpus_per_host;
    int32_t room = one_host ? (W - first < s->gpus_per_host
                                   ? W - first
                                   : s->gpus_per_host)
                            : W;
    int32_t n = n_ranks;
    if (n == 0) {
      n = tb->dim / CW_MIN_COLS;
      if (n > room) n = room;
      if (n < 1) n = 1;
    }
    if (one_host) {
      tp->host = host;
      for (int32_t i = 0; i < n_ranks; i++)
        if (dc_shard_plan_host(s, ranks[i]) != host) {
          dc_diag *g = dc_diag_error(
              d, DC_DIAG_SHARDING, dc_table_plan_span(tb),
              "table '%s' is table_column_wise but names ranks %d and %d "
              "on different hosts",
              tname(p, t), ranks[0], ranks[i]);
          dc_diag_set_help(g, "name ranks of one host (%d GPUs a host), "
                              "or use column_wise to spread the blocks "
                              "over hosts",
                           s->gpus_per_host);
          return false;
        }
    }
    if (n > tb->dim) {
      dc_diag_error(d, DC_DIAG_SHARDING, dc_table_plan_span(tb),
                    "table '%s' has %d columns and cannot be cut in %d "
                    "column shards",
                    tname(p, t), tb->dim, n);
      return false;
    }
    for (int32_t i = 0; i < n_ranks; i++)
      for (int32_t j = 0; j < i; j++)
        if (ranks[i] == ranks[j]) {
          dc_diag_error(d, DC_DIAG_SHARDING, dc_table_plan_span(tb),
                        "table '%s' names rank %d twice; column shards go "
                        "to distinct ranks",
                        tname(p, t), ranks[i]);
          return false;
        }
    tp->n_shards = n;
    tp->shards = dc_arena_array(a, (size_t)n, sizeof(dc_shard));
    for (int32_t i = 0; i < n; i++) {
      int64_t off, len;
      block(tb->dim, n, i, &off, &len);
      tp->shards[i] = (dc_shard){n_ranks ? ranks[i] : first + i, 0,
                                 tb->rows, (int32_t)off, (int32_t)len};
    }
    return true;
  }
  case DC_SHARDING_ROW_WISE:
  case DC_SHARDING_TABLE_ROW_WISE: {
    int32_t first = 0, n = W;
    if (type == DC_SHARDING_TABLE_ROW_WISE) {
      int32_t h = n_ranks ? dc_shard_plan_host(s, ranks[0]) : 0;
      tp->host = h;
      first = h * s->gpus_per_host;
      n = s->gpus_per_host;
      if (first + n > W) n = W - first;
    }
    if (tb->rows < n) return too_few_rows(p, t, n, d);
    tp->n_shards = n;
    tp->shards = dc_arena_array(a, (size_t)n, sizeof(dc_shard));
    for (int32_t i = 0; i < n; i++) {
      int64_t off, len;
      block(tb->rows, n, i, &off, &len);
      tp->shards[i] = (dc_shard){first + i, off, len, 0, tb->dim};
    }
    return true;
  }
  case DC_SHARDING_DATA_PARALLEL:
    tp->n_shards = W;
    tp->shards = dc_arena_array(a, (size_t)W, sizeof(dc_shard));
    for (int32_t i = 0; i < W; i++)
      tp->shards[i] = (dc_shard){i, 0, tb->rows, 0, tb->dim};
    return true;
  case DC_SHARDING_GRID_SHARD:
    return set_grid(s, p, t, n_ranks, ranks, a, d);
  case DC_SHARDING_AUTO:
  case DC_SHARDING_EXPLICIT:
    break;
  }
  dc_diag_error(d, DC_DIAG_SHARDING, dc_table_plan_span(tb),
                "table '%s': sharding type '%s' is not a placement",
                tname(p, t), dc_sharding_name(type));
  return false;
}

dc_shard_work dc_shard_plan_work(const dc_point *p, const dc_shard_plan *s,
                                 int32_t table, int32_t shard) {
  const dc_table *tb = &p->tables[table];
  const dc_table_plan *tp = &s->tables[table];
  const dc_shard *sh = &tp->shards[shard];
  dc_shard_work w;
  w.rows = sh->rows;
  w.cols = sh->cols;
  w.batch = p->batch_size;
  w.pooling = tb->pooling;
  if (s->n_ranks <= 1) return w;
  switch (tp->type) {
  case DC_SHARDING_ROW_WISE:
  case DC_SHARDING_TABLE_ROW_WISE:
  case DC_SHARDING_GRID_SHARD:
    w.pooling = tb->pooling * (double)sh->rows / (double)tb->rows;
    break;
  case DC_SHARDING_DATA_PARALLEL:
    w.batch = p->batch_size / s->n_ranks;
    break;
  default: break;
  }
  return w;
}

/* The type table t gets without a planner. */
/* A table's type: its own, else the study's global plan (auto: table-
 * wise). A global row_wise / table_row_wise does not apply to a table
 * with fewer rows than the ranks it would cut it over (the MLPerf model
 * has tables of 3 and 4 rows): such a table stays table-wise, as TorchRec
 * users shard them. A table that asks for it itself is an error. */
static dc_sharding default_type(const dc_point *p, int32_t t) {
  dc_sharding ty = p->tables[t].sharding;
  bool own = ty != DC_SHARDING_AUTO && ty != DC_SHARDING_EXPLICIT;
  if (!own) ty = p->sharding;
  if (ty == DC_SHARDING_AUTO || ty == DC_SHARDING_EXPLICIT)
    ty = DC_SHARDING_TABLE_WISE;
  if (!own) {
    int64_t over = ty == DC_SHARDING_ROW_WISE ? p->gpus
                   : ty == DC_SHARDING_TABLE_ROW_WISE ||
                           ty == DC_SHARDING_GRID_SHARD
                       ? p->gpus_per_host
                       : 0;
    if (over > 1 && p->tables[t].rows < over) ty = DC_SHARDING_TABLE_WISE;
  }
  return ty;
}

static double tsize(const dc_point *p, int32_t t) {
  return (double)p->tables[t].rows * (double)p->tables[t].dim;
}

typedef struct by_size {
  double size;
  int32_t t;
} by_size;

static int cmp_by_size(const void *a, const void *b) {
  const by_size *x = a, *y = b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  return (x->t > y->t) - (x->t < y->t);
}

static void add_load(const dc_table_plan *tp, double *load) {
  for (int32_t i = 0; i < tp->n_shards; i++)
    load[tp->shards[i].rank] +=
        (double)tp->shards[i].rows * (double)tp->shards[i].cols;
}

/* The host holding the fewest table elements (ties: the lowest). */
static int32_t least_loaded_host(const dc_shard_plan *s, const double *load) {
  int32_t best = 0;
  double bl = -1;
  for (int32_t h = 0; h < s->hosts; h++) {
    double l = 0;
    for (int32_t r = h * s->gpus_per_host;
         r < (h + 1) * s->gpus_per_host && r < s->n_ranks; r++)
      l += load[r];
    if (bl < 0 || l < bl) {
      bl = l;
      best = h;
    }
  }
  return best;
}

/* nr column blocks of table t on the nr least-loaded of the m ranks whose
 * loads are load[0..m): their indices in rk (used: m scratch flags). */
static void spread_blocks(const dc_point *p, int32_t t, double *load,
                          int32_t m, int32_t nr, bool *used, int32_t *rk) {
  memset(used, 0, (size_t)m * sizeof(bool));
  for (int32_t k = 0; k < nr; k++) {
    int32_t best = -1;
    for (int32_t r = 0; r < m; r++)
      if (!used[r] && (best < 0 || load[r] < load[best])) best = r;
    used[best] = true;
    rk[k] = best;
    /* the shard's share, so the next one avoids this rank */
    load[best] += tsize(p, t) / nr;
  }
  for (int32_t k = 0; k < nr; k++) load[rk[k]] -= tsize(p, t) / nr;
}

dc_shard_plan *dc_shard_plan_default(const dc_point *p, dc_arena *a,
                                     dc_diags *d) {
  dc_shard_plan *s = dc_shard_plan_new(p, a);
  int32_t T = p->n_tables, W = s->n_ranks;
  bool ok = true;
  if (W == 1) {
    for (int32_t t = 0; t < T; t++)
      ok &= dc_shard_plan_set(s, p, t, DC_SHARDING_TABLE_WISE, 0, NULL, a,
                              d);
    return ok ? s : NULL;
  }
  double *load = dc_arena_array(a, (size_t)W, sizeof(double));
  int32_t *order = dc_arena_array(a, (size_t)T + 1, sizeof(int32_t));
  int32_t n = 0;
  for (int32_t t = 0; t < T; t++) {
    const dc_table *tb = &p->tables[t];
    dc_sharding ty = default_type(p, t);
    bool greedy = tb->n_ranks == 0 && (ty == DC_SHARDING_TABLE_WISE ||
                                       ty == DC_SHARDING_COLUMN_WISE ||
                                       ty == DC_SHARDING_TABLE_ROW_WISE ||
                                       ty == DC_SHARDING_GRID_SHARD ||
                                       ty == DC_SHARDING_TABLE_COLUMN_WISE);
    if (greedy) {
      order[n++] = t;
      continue;
    }
    if (!dc_shard_plan_set(s, p, t, ty, tb->n_ranks, tb->ranks, a, d)) {
      ok = false;
      continue;
    }
    add_load(&s->tables[t], load);
  }
  if (!ok) return NULL;
  /* by size, descending; equal sizes in table order (a stable sort:
   * qsort with the index as the last key, O(T log T) for the thousands
   * of tables of a production model) */
  by_size *bs = dc_arena_array(a, (size_t)n + 1, sizeof *bs);
  for (int32_t i = 0; i < n; i++) bs[i] = (by_size){tsize(p, order[i]), order[i]};
  qsort(bs, (size_t)n, sizeof *bs, cmp_by_size);
  for (int32_t i = 0; i < n; i++) order[i] = bs[i].t;
  int32_t *rk = dc_arena_array(a, (size_t)W, sizeof(int32_t));
  bool *used = dc_arena_array(a, (size_t)W, sizeof(bool));
  for (int32_t i = 0; i < n; i++) {
    int32_t t = order[i];
    dc_sharding ty = default_type(p, t);
    int32_t nr = 1;
    if (ty == DC_SHARDING_TABLE_ROW_WISE) {
      rk[0] = least_loaded_host(s, load) * s->gpus_per_host;
    } else if (ty == DC_SHARDING_TABLE_COLUMN_WISE) {
      /* the host holding the fewest elements, its least-loaded ranks */
      int32_t first = least_loaded_host(s, load) * s->gpus_per_host;
      int32_t m = W - first < s->gpus_per_host ? W - first : s->gpus_per_host;
      nr = p->tables[t].dim / CW_MIN_COLS;
      if (nr > m) nr = m;
      if (nr < 1) nr = 1;
      spread_blocks(p, t, load + first, m, nr, used, rk);
      for (int32_t k = 0; k < nr; k++) rk[k] += first;
    } else if (ty == DC_SHARDING_GRID_SHARD) {
      /* one block per host, on the hosts holding the fewest elements */
      nr = grid_blocks(s, &p->tables[t]);
      bool *taken = dc_arena_array(a, (size_t)s->hosts, sizeof(bool));
      for (int32_t k = 0; k < nr; k++) {
        int32_t best = -1;
        double bl = 0;
        for (int32_t h = 0; h < s->hosts; h++) {
          if (taken[h]) continue;
          double l = 0;
          for (int32_t r = h * s->gpus_per_host;
               r < (h + 1) * s->gpus_per_host && r < W; r++)
            l += load[r];
          if (best < 0 || l < bl) {
            bl = l;
            best = h;
          }
        }
        taken[best] = true;
        rk[k] = best * s->gpus_per_host;
      }
    } else {
      if (ty == DC_SHARDING_COLUMN_WISE) {
        nr = p->tables[t].dim / CW_MIN_COLS;
        if (nr > W) nr = W;
        if (nr < 1) nr = 1;
      }
      spread_blocks(p, t, load, W, nr, used, rk);
    }
    if (!dc_shard_plan_set(s, p, t, ty, nr, rk, a, d)) {
      ok = false;
      continue;
    }
    add_load(&s->tables[t], load);
  }
  return ok ? s : NULL;
}

bool dc_shard_plan_check(const dc_point *p, const dc_shard_plan *s,
                         dc_diags *d) {
  int32_t W = p->gpus < 1 ? 1 : p->gpus;
  if (!s || s->n_tables != p->n_tables || s->n_ranks != W) {
    dc_diag_error(d, DC_DIAG_SHARDING, no_span,
                  "the sharding plan was made for another configuration");
    return false;
  }
  bool ok = true;
  for (int32_t t = 0; t < p->n_tables; t++) {
    const dc_table *tb = &p->tables[t];
    const dc_table_plan *tp = &s->tables[t];
    bool bad = tp->n_shards < 1 || !tp->shards ||
               tp->type == DC_SHARDING_AUTO ||
               tp->type == DC_SHARDING_EXPLICIT;
    int64_t cells = 0;
    for (int32_t i = 0; !bad && i < tp->n_shards; i++) {
      const dc_shard *sh = &tp->shards[i];
      /* A plan can come from anywhere (the user, a test): every sum and
       * product is checked, an overflow makes the shard invalid. */
      int64_t row_end, shard_cells;
      if (sh->rank < 0 || sh->rank >= W || sh->rows < 1 || sh->cols < 1 ||
          sh->row_off < 0 || sh->col_off < 0 ||
          !dc_add_i64(sh->row_off, sh->rows, &row_end) ||
          row_end > tb->rows ||
          (int64_t)sh->col_off + sh->cols > tb->dim ||
          !dc_mul_i64(sh->rows, sh->cols, &shard_cells) ||
          !dc_add_i64(cells, shard_cells, &cells))
        bad = true;
      for (int32_t j = 0; j < i; j++)
        if (tp->shards[j].rank == sh->rank) bad = true;
    }
    if (!bad) {
      int64_t want, want_all;
      if (!dc_mul_i64(tb->rows, tb->dim, &want))
        bad = true;
      else if (tp->type == DC_SHARDING_DATA_PARALLEL)
        bad = tp->n_shards != W || !dc_mul_i64(want, W, &want_all) ||
              cells != want_all;
      else
        bad = cells != want;
      if (tp->type == DC_SHARDING_TABLE_WISE) bad |= tp->n_shards != 1;
      if (tp->type == DC_SHARDING_ROW_WISE) bad |= tp->n_shards != W;
      for (int32_t i = 1; tp->type == DC_SHARDING_TABLE_COLUMN_WISE &&
                          i < tp->n_shards; i++)
        bad |= dc_shard_plan_host(s, tp->shards[i].rank) !=
               dc_shard_plan_host(s, tp->shards[0].rank);
    }
    if (bad) {
      dc_diag_error(d, DC_DIAG_SHARDING, dc_table_plan_span(tb),
                    "the sharding plan of table '%s' does not cover it "
                    "exactly with shards on distinct ranks",
                    tname(p, t));
      ok = false;
    }
  }
  return ok;
}

dc_shard_plan *dc_shard_plan_copy(const dc_shard_plan *s, dc_arena *a) {
  dc_shard_plan *c = dc_arena_alloc(a, sizeof *c);
  *c = *s;
  c->tables = dc_arena_array(a, (size_t)(s->n_tables > 0 ? s->n_tables : 1),
                             sizeof(dc_table_plan));
  for (int32_t t = 0; t < s->n_tables; t++) {
    c->tables[t] = s->tables[t];
    int32_t n = s->tables[t].n_shards;
    if (n > 0) {
      c->tables[t].shards = dc_arena_array(a, (size_t)n, sizeof(dc_shard));
      memcpy(c->tables[t].shards, s->tables[t].shards,
             (size_t)n * sizeof(dc_shard));
    }
  }
  return c;
}

void dc_shard_plan_write(const dc_point *p, const dc_shard_plan *s,
                         dc_buf *out) {
  for (int32_t t = 0; t < s->n_tables; t++) {
    const dc_table_plan *tp = &s->tables[t];
    dc_buf_printf(out, "%s %s", tname(p, t), dc_sharding_name(tp->type));
    for (int32_t i = 0; i < tp->n_shards; i++) {
      const dc_shard *sh = &tp->shards[i];
      dc_buf_printf(out, " %d:[%lld,%lld)x[%d,%d)", sh->rank,
                    (long long)sh->row_off,
                    (long long)(sh->row_off + sh->rows), sh->col_off,
                    sh->col_off + sh->cols);
    }
    dc_buf_puts(out, "\n");
  }
}
