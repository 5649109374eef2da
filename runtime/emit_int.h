/*
 * emit_int.h — internal to runtime/: the row emitters shared by the sweep
 * executor and the tests. A column is either a swept parameter (by its
 * position in the point's params) or a metric.
 */
#ifndef DC_RUNTIME_EMIT_INT_H
#define DC_RUNTIME_EMIT_INT_H

#include "runtime/runtime.h"

typedef struct rt_emit_col {
  const char *name;
  bool is_param;
  int param;          /* index into dc_point.params */
  dc_metric_id metric;
} rt_emit_col;

/* Resolves the output columns (caller frees *cols with free()). */
bool rt_emit_columns(const dc_sweep_source *src, bool has_baseline,
                     rt_emit_col **cols, size_t *n, dc_diags *d);
void rt_emit_header(dc_format f, const rt_emit_col *cols, size_t n,
                    dc_buf *b);
/* digits > 0: every metric but fits and comm_bytes printed with that many
 * significant digits (rt_emit_put_sig) instead of its fixed decimals;
 * else decimals >= 0 (output.precision): with that many decimals. */
void rt_emit_row(dc_format f, const rt_emit_col *cols, size_t n,
                 const dc_point *p, const dc_metrics *m, int digits,
                 int decimals, dc_buf *b, dc_buf *scratch);

/* ---- the row modes (--per-rank, --per-shard, capacity) -----------------
 * A mode's table is the study's swept parameters, then a fixed list of
 * columns (emit.c: rank_cols, shard_cols, capacity_cols, plus TorchRec's
 * when the study asks for its estimate). Rows are lists of texts. */
typedef enum rt_cell_kind {
  RT_CELL_TEXT, /* a string (a parameter: a JSON number when it is one) */
  RT_CELL_NUM,  /* a number; "" is JSON null */
  RT_CELL_BOOL  /* true / false */
} rt_cell_kind;

typedef struct rt_cell_col {
  const char *name;
  rt_cell_kind kind;
} rt_cell_col;

/* The columns of a row mode (caller frees *cols with free()). */
void rt_emit_mode_columns(const dc_sweep_source *src, dc_rows rows,
                          rt_cell_col **cols, size_t *n);

/* One row's texts, appended in column order. */
typedef struct rt_cells {
  dc_buf buf;  /* the texts, each NUL-terminated */
  size_t *off; /* start of each text in buf */
  size_t n, cap;
  int digits;  /* > 0: rt_cells_num prints significant digits instead */
  bool fixed_decimals; /* output.precision: `decimals` for every number */
  int decimals;
} rt_cells;

void rt_cells_clear(rt_cells *c);
void rt_cells_free(rt_cells *c);
void rt_cells_text(rt_cells *c, const char *s);
void rt_cells_num(rt_cells *c, double v, int decimals);
void rt_cells_int(rt_cells *c, int64_t v);
void rt_cells_bool(rt_cells *c, bool v);
/* The point's swept parameters' values, in order. */
void rt_cells_params(rt_cells *c, const dc_sweep_source *src,
                     const dc_point *p);

void rt_emit_cells_header(dc_format f, const rt_cell_col *cols, size_t n,
                          dc_buf *b);
/* One row; c->n must equal n. */
void rt_emit_cells_row(dc_format f, const rt_cell_col *cols, size_t n,
                       const rt_cells *c, dc_buf *b);

/* The same bytes as dc_buf_put_double (nan/inf words, a value that rounds
 * to zero printed as zero, else printf "%.*f"), without printf for the
 * common case: |v| < 1e9 and 0..9 decimals (see emit.c). */
void rt_emit_put_double(dc_buf *b, double v, int decimals);
/* printf "%.*g" with `digits` significant digits (1..17; 17 round-trips
 * every double), the nan/inf words, and -0 printed as 0. */
void rt_emit_put_sig(dc_buf *b, double v, int digits);
/* The same bytes as printf "%lld". */
void rt_emit_put_int(dc_buf *b, int64_t v);

#endif /* DC_RUNTIME_EMIT_INT_H */
