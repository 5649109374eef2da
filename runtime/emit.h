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
void dc_emit_row(dc_format f, const dc_emit_col *cols, size_t n,
                 const dc_point *p, const dc_metrics *m, dc_buf *b,
                 dc_buf *scratch);

#endif /* DC_RUNTIME_EMIT_H */
