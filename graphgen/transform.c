/*
 * transform.c — the study's what-if transforms (spec/design.md), applied in
 * study order to a built graph:
 *
 *   scale  {match, factor}  kernel.scale *= factor for every kernel whose
 *                           kind name ("gemm", "embedding_fwd", ...) or
 *                           op name matches
 *   remove {match}          drops every matching op with its subtree
 *   stream {match, stream}  moves the kernels of matching ops to a stream
 *
 * An op "matches" when the PCRE2 pattern matches its name or the name of
 * one of its ancestors (so "AddmmBackward0" reaches the aten::mm kernels it
 * contains). Patterns are unanchored, as grep's are. The fifth what-if,
 * fusing the per-table lookups, is embedding_kernel: batched, which the
 * builder lays out directly.
 *
 * Removing ops keeps the graph valid: the survivors are renumbered, each
 * tensor's producer is recomputed (the innermost surviving op listing it
 * as an output), and a tensor nobody produces any more becomes an input of
 * the iteration (producer −1), like a parameter.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <string.h>

#include "graphgen/graphgen_int.h"

static bool re_match(pcre2_code *re, pcre2_match_data *md, const char *s) {
  return pcre2_match(re, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, md,
                     NULL) >= 0;
}

static void remove_ops(dc_graph *g, const bool *drop, dc_arena *a) {
  int32_t n = g->n_ops;
  int32_t *map = dc_arena_array(a, (size_t)n, sizeof(int32_t));
  int32_t kept = 0;
  for (int32_t i = 0; i < n; i++) map[i] = drop[i] ? -1 : kept++;
  dc_op *ops = dc_arena_array(a, (size_t)(kept ? kept : 1), sizeof(dc_op));
  for (int32_t i = 0; i < n; i++) {
    if (drop[i]) continue;
    dc_op *o = &ops[map[i]];
    *o = g->ops[i];
    o->parent = o->parent >= 0 ? map[o->parent] : -1;
    o->end = map[i] + 1;
  }
  /* ends: every op extends its ancestors */
  for (int32_t j = 0; j < kept; j++)
    for (int32_t q = ops[j].parent; q >= 0; q = ops[q].parent)
      ops[q].end = j + 1;
  for (int32_t t = 0; t < g->n_tensors; t++) g->tensors[t].producer = -1;
  for (int32_t j = 0; j < kept; j++)
    for (int32_t k = 0; k < ops[j].n_outputs; k++)
      g->tensors[ops[j].outputs[k]].producer = j;
  for (int32_t r = 0; r <= g->n_ranks; r++) g->rank_first[r] = 0;
  for (int32_t j = 0; j < kept; j++) g->rank_first[ops[j].rank + 1]++;
  for (int32_t r = 0; r < g->n_ranks; r++)
    g->rank_first[r + 1] += g->rank_first[r];
  g->ops = ops;
  g->n_ops = kept;
}

bool gg_apply_transforms(dc_graph *g, const dc_point *p, dc_arena *a,
                         dc_diags *d) {
  bool ok = true;
  for (int32_t ti = 0; ti < p->n_transforms && ok; ti++) {
    const dc_transform *tr = &p->transforms[ti];
    int err = 0;
    PCRE2_SIZE off = 0;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)tr->match,
                                   PCRE2_ZERO_TERMINATED, 0, &err, &off, NULL);
    if (!re) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      dc_diag_error(d, DC_DIAG_BAD_REGEX, tr->span,
                    "invalid pattern '%s' at offset %zu: %s", tr->match,
                    (size_t)off, (const char *)msg);
      ok = false;
      break;
    }
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    bool *hit = dc_arena_array(a, (size_t)g->n_ops + 1, sizeof(bool));
    for (int32_t i = 0; i < g->n_ops; i++) {
      const dc_op *o = &g->ops[i];
      hit[i] = (o->parent >= 0 && hit[o->parent]) ||
               re_match(re, md, o->name);
    }
    switch (tr->kind) {
    case DC_TRANSFORM_SCALE: {
      bool kind_hit[DC_KERNEL_KIND_COUNT_];
      for (int k = 0; k < DC_KERNEL_KIND_COUNT_; k++)
        kind_hit[k] = re_match(re, md, dc_kernel_kind_name((dc_kernel_kind)k));
      for (int32_t i = 0; i < g->n_ops; i++)
        for (int32_t l = 0; l < g->ops[i].n_launches; l++) {
          dc_launch *x = &g->ops[i].launches[l];
          if (hit[i] || kind_hit[x->k.kind]) x->k.scale *= tr->factor;
        }
      break;
    }
    case DC_TRANSFORM_STREAM:
      for (int32_t i = 0; i < g->n_ops; i++) {
        if (!hit[i]) continue;
        for (int32_t l = 0; l < g->ops[i].n_launches; l++)
          g->ops[i].launches[l].stream = tr->stream;
        if (g->ops[i].n_launches && tr->stream >= g->n_streams)
          g->n_streams = tr->stream + 1;
      }
      break;
    case DC_TRANSFORM_REMOVE:
      remove_ops(g, hit, a);
      break;
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re);
  }
  return ok;
}
