/*
 * report.h — the HTML report of a study's results, the
 * component in runtime/report/ (library dc_report): a reader of the
 * tables `dlrmc run` writes (CSV and JSON lines, report_read.c) into one
 * in-memory model, and one renderer of that model into a self-contained
 * HTML page with inline SVG charts (report_html.c, report_chart.c,
 * report_svg.c). `dlrmc run --format html` writes its rows as JSON lines
 * into memory and hands them to the same reader, so a saved .jsonl
 * reports exactly as the run that wrote it; spec/report.md says what each
 * chart shows and what a CSV-only report lacks.
 *
 * The model is the table (columns as the file names them; a column whose
 * name is not a metric is a swept parameter) plus, from JSON lines, each
 * row's "detail": the time breakdown, memory against HBM, the baseline
 * ratio and the per-rank figures. Every number in it is finite: the reader
 * rejects anything else with a diagnostic at file:line:col.
 *
 * Ownership: everything a dc_report points to lives in the arena given to
 * the reader; the renderer appends to a caller's dc_buf.
 */
#ifndef DC_RUNTIME_REPORT_REPORT_H
#define DC_RUNTIME_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/support/support.h"

/* The figures a chart may need besides the table's columns, by name as
 * they appear in a column header or in a JSON-lines row's "detail". */
#define DC_REPORT_FIGS(X)                                                   \
  X(E2E, "e2e_ms")                                                          \
  X(GPU_ACTIVE, "gpu_active_ms")                                            \
  X(GPU_IDLE, "gpu_idle_ms")                                                \
  X(KERNEL_ONLY, "kernel_only_ms")                                          \
  X(COMPUTE, "compute_ms")                                                  \
  X(EXPOSED_COMM, "exposed_comm_ms")                                        \
  X(EXPOSED_HOST, "exposed_host_ms")                                        \
  X(OTHER_IDLE, "other_idle_ms")                                            \
  X(MEM, "mem_gib")                                                         \
  X(HBM, "hbm_gib")                                                         \
  X(FITS, "fits")                                                           \
  X(SPEEDUP, "speedup")

typedef enum dc_report_fig {
#define DC_REPORT_FIG_ENUM(sym, name) DC_REPORT_FIG_##sym,
  DC_REPORT_FIGS(DC_REPORT_FIG_ENUM)
#undef DC_REPORT_FIG_ENUM
  DC_REPORT_FIG_COUNT_
} dc_report_fig;

const char *dc_report_fig_name(dc_report_fig f);

/* One rank of a point run on several GPUs (JSON lines' detail.ranks). */
typedef struct dc_report_rank {
  double e2e_ms, emb_ms, comm_ms, mem_gib;
  bool fits;
} dc_report_rank;

typedef struct dc_report_row {
  const char **cells; /* [n_cols]: the table's texts */
  double *num;        /* [n_cols]: each cell's number; NAN for text or "" */
  double fig[DC_REPORT_FIG_COUNT_]; /* NAN when neither column nor detail */
  int32_t line;          /* 1-based line in the file */
  int32_t critical_rank; /* -1 when unknown */
  int32_t n_ranks;       /* 0: no per-rank figures */
  dc_report_rank *ranks;
} dc_report_row;

typedef struct dc_report {
  const char *source;  /* the file read (or "dlrmc run") */
  int32_t n_cols;
  const char **cols;   /* header names, in order */
  bool *is_param;      /* [n_cols]: a swept parameter, not a metric */
  bool *is_attr;       /* [n_cols]: a parameter that follows from others
                          (a capacity row's hosts): listed, never charted */
  bool mode_table;     /* a --per-rank or capacity table */
  int64_t n_rows;
  dc_report_row *rows;
  bool has_detail;     /* rows came with JSON lines' "detail" */
} dc_report;

/* Reads a results table: JSON lines when the text's first non-blank byte
 * is '{', else CSV (compiler/support/csv.c's reader): the point table, a --per-rank
 * table or a capacity table. Errors (a column that is neither a metric,
 * a dotted swept path nor one of those tables' columns, a per-shard
 * table, a non-finite number, rows that disagree with the header, no
 * rows) are reported at file:line:col; false then. */
bool dc_report_parse(const dc_source *src, dc_report *out, dc_arena *a,
                     dc_diags *d);
/* A results file's text as a source for dc_report_parse (no size limit
 * but memory: a study file's 16 MB cap would refuse a big sweep's table);
 * NULL with a diagnostic when it cannot be read or holds a NUL byte. */
const dc_source *dc_report_source_load(const char *path, dc_arena *a,
                                       dc_diags *d);

/* What the page says about where it came from. */
typedef struct dc_report_meta {
  const char *title;   /* the study's name, or the file's */
  const char *command; /* the command line that made it */
  const char *version; /* dlrmc's */
  const char *metric;  /* the charted metric (NULL: e2e_ms) */
} dc_report_meta;

/* Checks that `metric` is a column or a detail figure of every row (an
 * error naming the source and the column otherwise). */
bool dc_report_check_metric(const dc_report *r, const char *metric,
                            dc_diags *d);
/* Appends the whole page. False (and a diagnostic) only when a computed
 * coordinate is not finite, which a model of finite numbers never
 * produces: the caller then writes nothing. */
bool dc_report_render(const dc_report *r, const dc_report_meta *meta,
                      dc_buf *out, dc_diags *d);

/* HTML escaping of text and attribute values (& < > " '): the one
 * function every text of the page goes through. */
void dc_html_escape(dc_buf *b, const char *s);

#endif /* DC_RUNTIME_REPORT_REPORT_H */
