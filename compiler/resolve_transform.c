/*
 * resolve_transform.c — the graph transforms of a point (transforms:):
 * fuse the per-table lookups, scale the time of kernels matching a
 * pattern, remove ops matching a pattern, move ops to another stream.
 *
 * Patterns are PCRE2 and compiled here once, with diagnostics, only to be
 * checked (graphgen compiles them again to apply them): an invalid
 * pattern is a study error with a caret, never a failure at build time.
 */
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "compiler/resolve_int.h"

static bool regex_ok(fe_rctx *c, const dc_node *n, const char *pat) {
  if (!c->d) return true;
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF, &err, &off, NULL);
  if (re) {
    pcre2_code_free(re);
    return true;
  }
  PCRE2_UCHAR msg[256];
  pcre2_get_error_message(err, msg, sizeof msg);
  dc_diag_error(c->d, DC_DIAG_BAD_REGEX, n->span,
                "invalid regular expression '%s': %s at offset %zu", pat,
                (const char *)msg, (size_t)off);
  return false;
}

static const char *match_of(fe_rctx *c, const dc_node *body, const char *w) {
  const dc_node *m = dc_node_get(body, "match");
  const char *pat = NULL;
  if (!m) {
    if (c->d)
      dc_diag_error(c->d, DC_DIAG_MISSING_KEY, body->span,
                    "%s has no 'match' pattern", w);
    res_fail(c);
    return NULL;
  }
  if (!fe_leaf_str(m, w, &pat, c->d) || !regex_ok(c, m, pat)) {
    res_fail(c);
    return NULL;
  }
  return pat;
}

/* schema: transforms: list of {scale: {match, factor}} | {remove: {match}}
 * | {stream: {match, stream}} | {fuse: true}. */
void res_transforms(fe_rctx *c, dc_point *p) {
  const dc_node *n = res_get(c, "transforms");
  if (!n) return;
  if (!fe_expect_kind(n, DC_NODE_SEQ, "transforms", c->d)) {
    res_fail(c);
    return;
  }
  dc_transform *t = dc_arena_array(c->a, n->n ? n->n : 1, sizeof *t);
  int32_t k = 0;
  for (size_t i = 0; i < n->n; i++) {
    const dc_node *it = n->items[i];
    if (it->kind != DC_NODE_MAP || it->n == 0) {
      if (it->kind != DC_NODE_MAP)
        fe_expect_kind(it, DC_NODE_MAP, "transforms[]", c->d);
      res_fail(c);
      continue;
    }
    const char *kind = it->keys[0]->text;
    const dc_node *body = it->items[0];
    char w[64];
    snprintf(w, sizeof w, "transforms[%zu].%s", i, kind);
    if (!strcmp(kind, "fuse")) {
      bool on = false;
      if (!fe_leaf_bool(body, w, &on, c->d)) res_fail(c);
      if (on) p->embedding_kernel = DC_EMBEDDING_BATCHED;
      continue;
    }
    if (strcmp(kind, "scale") && strcmp(kind, "remove") &&
        strcmp(kind, "stream"))
      continue; /* unknown key: reported by the walk */
    if (!fe_expect_kind(body, DC_NODE_MAP, w, c->d)) {
      res_fail(c);
      continue;
    }
    dc_transform *x = &t[k];
    x->span = it->span;
    x->match = match_of(c, body, w);
    if (!strcmp(kind, "scale")) {
      x->kind = DC_TRANSFORM_SCALE;
      const dc_node *f = dc_node_get(body, "factor");
      if (!f) {
        if (c->d)
          dc_diag_error(c->d, DC_DIAG_MISSING_KEY, body->span,
                        "%s has no 'factor'", w);
        res_fail(c);
      } else if (!fe_leaf_num(f, "transforms[].scale.factor",
                              fe_schema_find("transforms[].scale.factor"),
                              &x->factor, c->d)) {
        res_fail(c);
      }
    } else if (!strcmp(kind, "remove")) {
      x->kind = DC_TRANSFORM_REMOVE;
    } else {
      x->kind = DC_TRANSFORM_STREAM;
      const dc_node *s = dc_node_get(body, "stream");
      int64_t sv = 1;
      if (!s) {
        if (c->d)
          dc_diag_error(c->d, DC_DIAG_MISSING_KEY, body->span,
                        "%s has no 'stream'", w);
        res_fail(c);
      } else if (!fe_leaf_int(s, "transforms[].stream.stream",
                              fe_schema_find("transforms[].stream.stream"),
                              &sv, c->d)) {
        res_fail(c);
      }
      x->stream = (int32_t)sv;
    }
    k++;
  }
  p->transforms = t;
  p->n_transforms = k;
}
