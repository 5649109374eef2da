/*
 * study_output.c — the study's output: section (format, precision,
 * columns), checked against the metrics and the swept keys once per load;
 * the sweep executor reads only the resolved column list.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/study_int.h"

/* A key swept with -D is always a column: output.columns was written
 * before the command line chose to sweep it (a comma list of two or more
 * values), and rows that differ only in
 * a column left out could not be told apart. Such keys the list leaves
 * out come first, in the command line's order. */
static void cli_sweeps_first(dc_study *s) {
  size_t add = 0;
  for (size_t i = 0; i < s->n_axes; i++) {
    bool listed = false;
    for (size_t j = 0; j < s->n_columns && !listed; j++)
      listed = !strcmp(s->columns[j], s->axes[i].path);
    add += s->axes[i].from_cli && s->axes[i].n > 1 && !listed;
  }
  if (!add) return;
  const char **c = dc_arena_array(&s->arena, s->n_columns + add, sizeof *c);
  size_t k = 0;
  for (size_t i = 0; i < s->n_axes; i++) {
    bool listed = false;
    for (size_t j = 0; j < s->n_columns && !listed; j++)
      listed = !strcmp(s->columns[j], s->axes[i].path);
    if (s->axes[i].from_cli && s->axes[i].n > 1 && !listed)
      c[k++] = s->axes[i].path;
  }
  for (size_t j = 0; j < s->n_columns; j++) c[k++] = s->columns[j];
  s->columns = c;
  s->n_columns = k;
}

/* schema: output: {columns: [swept path | metric], format: csv | md |
 * jsonl | html, precision: 0..12}. */
void fe_study_output(dc_study *s, dc_diags *d) {
  const dc_node *o = NULL;
  for (size_t i = s->n_fixed; i-- > 0 && !o;)
    if (!strcmp(s->fixed[i].path, "output.format")) o = s->fixed[i].node;
  if (!o) o = dc_node_get(dc_node_get(s->root, "output"), "format");
  int f = 0;
  if (o) fe_leaf_enum(o, "output.format", fe_enum_format, &f, d);
  s->format = f;
  s->format_set = o != NULL;

  o = NULL;
  for (size_t i = s->n_fixed; i-- > 0 && !o;)
    if (!strcmp(s->fixed[i].path, "output.precision")) o = s->fixed[i].node;
  if (!o) o = dc_node_get(dc_node_get(s->root, "output"), "precision");
  int64_t prec = -1; /* not written: each metric's own decimals */
  if (o) fe_leaf_int(o, "output.precision", fe_schema_find("output.precision"),
                     &prec, d);
  s->precision = (int)prec;

  o = NULL;
  for (size_t i = s->n_fixed; i-- > 0 && !o;)
    if (!strcmp(s->fixed[i].path, "output.columns")) o = s->fixed[i].node;
  if (!o) o = dc_node_get(dc_node_get(s->root, "output"), "columns");
  if (!o) return;
  if (!fe_expect_kind(o, DC_NODE_SEQ, "output.columns", d)) return;
  if (o->n == 0) {
    dc_diag_error(d, DC_DIAG_EMPTY_LIST, o->span,
                  "'output.columns' is empty; leave it out for the default "
                  "columns");
    return;
  }
  size_t nc = fe_n_metric_columns + s->n_axes;
  const char **cands = dc_xcalloc(nc, sizeof *cands);
  for (size_t i = 0; i < fe_n_metric_columns; i++)
    cands[i] = fe_metric_columns[i];
  for (size_t i = 0; i < s->n_axes; i++)
    cands[fe_n_metric_columns + i] = s->axes[i].path;
  s->columns = dc_arena_array(&s->arena, o->n, sizeof(char *));
  for (size_t i = 0; i < o->n; i++) {
    const char *c = NULL;
    if (!fe_leaf_str(o->items[i], "output.columns[]", &c, d)) continue;
    bool known = false;
    for (size_t j = 0; j < nc && !known; j++) known = !strcmp(cands[j], c);
    if (!known) {
      const fe_skey *k = fe_schema_find(c);
      dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_COLUMN, o->items[i]->span,
                                 "unknown output column '%s'", c);
      const char *sug = dc_suggest(c, cands, nc);
      if (k && (k->flags & FE_SF_SWEEP))
        dc_diag_set_help(g, "'%s' is not swept; only swept keys and "
                            "metrics can be columns", c);
      else if (sug)
        dc_diag_set_help(g, "did you mean '%s'?", sug);
      else
        dc_diag_set_help(g, "columns are swept keys or metrics (see "
                            "spec/study.md)");
      continue;
    }
    if (!strcmp(c, "speedup") && !s->has_baseline) {
      dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_COLUMN, o->items[i]->span,
                                 "column 'speedup' needs a baseline");
      dc_diag_set_help(g, "add e.g. baseline: {system.gpu: V100-SXM2-16GB}");
      continue;
    }
    s->columns[s->n_columns++] = c;
  }
  free(cands);
  cli_sweeps_first(s);
}

