/*
 * emit.h — internal to runtime/: the row emitters shared by the sweep
 * executor and the tests. A column is either a swept parameter (by its
 * position in the point's params) or a metric.
 */
#ifndef DC_RUNTIME_EMIT_H
#define DC_RUNTIME_EMIT_H

#include "runtime/runtime.h"

typedef struct dc_emit_col {
  const char *name;
  bool is_param;
  int param;          /* index into dc_point.params */
  dc_metric_id metric;
} dc_emit_col;

/* Resolves the output columns (caller frees *cols with free()). */
bool dc_emit_columns(const dc_sweep_source *src, bool has_baseline,
                     dc_emit_col **cols, size_t *n, dc_diags *d);
void dc_emit_header(dc_format f, const dc_emit_col *cols, size_t n,
                    dc_buf *b);
/* digits > 0: every metric but fits and comm_bytes printed with that many
 * significant digits (dc_emit_put_sig) instead of its fixed decimals;
 * else decimals >= 0 (output.precision): with that many decimals. */
void dc_emit_row(dc_format f, const dc_emit_col *cols, size_t n,
                 const dc_point *p, const dc_metrics *m, int digits,
                 int decimals, dc_buf *b, dc_buf *scratch);

/* ---- the row modes (--per-rank, --per-shard, capacity) -----------------
 * A mode's table is the study's swept parameters, then a fixed list of
 * columns (emit.c: rank_cols, shard_cols, capacity_cols, plus TorchRec's
 * when the study asks for its estimate). Rows are lists of texts. */
typedef enum dc_cell_kind {
  DC_CELL_TEXT, /* a string (a parameter: a JSON number when it is one) */
  DC_CELL_NUM,  /* a number; "" is JSON null */
  DC_CELL_BOOL  /* true / false */
} dc_cell_kind;

typedef struct dc_cell_col {
  const char *name;
  dc_cell_kind kind;
} dc_cell_col;

/* The columns of a row mode (caller frees *cols with free()). */
void dc_emit_mode_columns(const dc_sweep_source *src, dc_rows rows,
                          dc_cell_col **cols, size_t *n);

/* One row's texts, appended in column order. */
typedef struct dc_cells {
  dc_buf buf;  /* the texts, each NUL-terminated */
  size_t *off; /* start of each text in buf */
  size_t n, cap;
  int digits;  /* > 0: dc_cells_num prints significant digits instead */
  bool fixed_decimals; /* output.precision: `decimals` for every number */
  int decimals;
} dc_cells;

void dc_cells_clear(dc_cells *c);
void dc_cells_free(dc_cells *c);
void dc_cells_text(dc_cells *c, const char *s);
void dc_cells_num(dc_cells *c, double v, int decimals);
void dc_cells_int(dc_cells *c, int64_t v);
void dc_cells_bool(dc_cells *c, bool v);
/* The point's swept parameters' values, in order. */
void dc_cells_params(dc_cells *c, const dc_sweep_source *src,
                     const dc_point *p);

void dc_emit_cells_header(dc_format f, const dc_cell_col *cols, size_t n,
                          dc_buf *b);
/* One row; c->n must equal n. */
void dc_emit_cells_row(dc_format f, const dc_cell_col *cols, size_t n,
                       const dc_cells *c, dc_buf *b);

/* The same bytes as dc_buf_put_double (nan/inf words, a value that rounds
 * to zero printed as zero, else printf "%.*f"), without printf for the
 * common case: |v| < 1e9 and 0..9 decimals (see emit.c). */
void dc_emit_put_double(dc_buf *b, double v, int decimals);
/* printf "%.*g" with `digits` significant digits (1..17; 17 round-trips
 * every double), the nan/inf words, and -0 printed as 0. */
void dc_emit_put_sig(dc_buf *b, double v, int digits);
/* The same bytes as printf "%lld". */
void dc_emit_put_int(dc_buf *b, int64_t v);

#endif /* DC_RUNTIME_EMIT_H */
