/*
 * resolve.c — reads one point of a study through the substitution layer
 * (sweep values, then -D overrides, then the file, then the model preset)
 * and lowers it to a dc_point, checking every value on the way.
 *
 * The same code checks and lowers (see study_int.h): with a diagnostics
 * list it reports every problem it meets and keeps going; without one it
 * is the lowering of a point that was already checked, and cannot fail.
 * Defaults are the ones documented in spec/study.md. This file holds the
 * reading helpers every section uses and the catalog cache; fe_resolve,
 * which calls the sections in order, is resolve_point.c (above them all,
 * so that no section file and this one depend on each other).
 */
#include <string.h>

#include "compiler/resolve_int.h"

static const dc_node *map_getn(const dc_node *m, const char *k, size_t n) {
  if (!m || m->kind != DC_NODE_MAP) return NULL;
  for (size_t i = 0; i < m->n; i++)
    if (m->keys[i]->text_len == n && memcmp(m->keys[i]->text, k, n) == 0)
      return m->items[i];
  return NULL;
}

const dc_node *res_descend(const dc_node *n, const char *rest) {
  while (n && *rest) {
    const char *dot = strchr(rest, '.');
    size_t len = dot ? (size_t)(dot - rest) : strlen(rest);
    n = map_getn(n, rest, len);
    rest += len + (dot ? 1 : 0);
  }
  return n;
}

static const dc_node *lookup_subs(const fe_sub *subs, size_t n,
                                  const char *path) {
  for (size_t i = n; i-- > 0;) {
    size_t l = strlen(subs[i].path);
    if (strncmp(path, subs[i].path, l) != 0) continue;
    if (path[l] == '\0') return subs[i].node;
    if (path[l] == '.') {
      const dc_node *r = res_descend(subs[i].node, path + l + 1);
      if (r) return r;
    }
  }
  return NULL;
}

/* The node for `path` in this point, or NULL when not written anywhere. */
const dc_node *res_get(const fe_rctx *c, const char *path) {
  const dc_node *n = lookup_subs(c->subs, c->n_subs, path);
  if (!n) n = lookup_subs(c->s->fixed, c->s->n_fixed, path);
  if (!n) n = res_descend(c->s->root, path);
  if (!n && c->preset && strncmp(path, "model.", 6) == 0)
    n = res_descend(c->preset, path + 6);
  return n;
}

/* Where to point when a key is missing: the key of its section. */
dc_span res_missing_span(const fe_rctx *c, const char *section) {
  const dc_node *k = dc_node_key(c->s->root, section);
  if (k) return k->span;
  dc_span sp = c->s->root->span;
  sp.len = 0;
  return sp;
}

void res_fail(fe_rctx *c) { c->ok = false; }

const dc_node *res_int(fe_rctx *c, const char *path, int64_t *out) {
  const dc_node *n = res_get(c, path);
  if (!n) return NULL;
  if (!fe_leaf_int(n, path, fe_schema_find(path), out, c->d)) {
    res_fail(c);
    return NULL;
  }
  return n;
}

const dc_node *res_num(fe_rctx *c, const char *path, double *out) {
  const dc_node *n = res_get(c, path);
  if (!n) return NULL;
  if (!fe_leaf_num(n, path, fe_schema_find(path), out, c->d)) {
    res_fail(c);
    return NULL;
  }
  return n;
}

int res_enum(fe_rctx *c, const char *path, int def) {
  const dc_node *n = res_get(c, path);
  int v = def;
  if (n && !fe_leaf_enum(n, path, fe_schema_find(path)->enums, &v, c->d))
    res_fail(c);
  return v;
}

bool res_bool(fe_rctx *c, const char *path, bool def) {
  const dc_node *n = res_get(c, path);
  bool v = def;
  if (n && !fe_leaf_bool(n, path, &v, c->d)) res_fail(c);
  return v;
}

double res_gbps(fe_rctx *c, const char *path, double def) {
  const dc_node *n = res_get(c, path);
  double v = def;
  if (n && !fe_leaf_gbps(n, path, fe_schema_find(path), &v, c->d))
    res_fail(c);
  return v;
}

/* A list of counts: `what` names it in messages, `min` entries at least. */
bool res_intlist(fe_rctx *c, const dc_node *n, const char *what,
                 const fe_skey *k, size_t min, int64_t **out,
                 int32_t *count) {
  if (!fe_expect_kind(n, DC_NODE_SEQ, what, c->d)) return false;
  if (n->n < min) {
    if (c->d) {
      if (n->n == 0)
        dc_diag_error(c->d, DC_DIAG_EMPTY_LIST, n->span, "'%s' is empty",
                      what);
      else
        dc_diag_error(c->d, DC_DIAG_OUT_OF_RANGE, n->span,
                      "'%s' needs at least %zu entries, found %zu", what, min,
                      n->n);
    }
    return false;
  }
  int64_t *v = dc_arena_array(c->a, n->n ? n->n : 1, sizeof *v);
  bool ok = true;
  for (size_t i = 0; i < n->n; i++) {
    char w[160] = "";
    if (c->d) snprintf(w, sizeof w, "%s[%zu]", what, i);
    if (!fe_leaf_int(n->items[i], w, k, &v[i], c->d)) ok = false;
  }
  *out = v;
  *count = (int32_t)n->n;
  return ok;
}

const fe_catref *fe_study_catalog(dc_study *s, const char *dir,
                                  const char *name, const dc_node *at,
                                  dc_diags *d, bool fill) {
  char key[512];
  snprintf(key, sizeof key, "%s\x1f%s", dir, name);
  fe_catref *r = dc_map_get(&s->catalog, key);
  if (r || !fill) return r && r->name ? r : NULL;
  r = dc_arena_alloc(&s->arena, sizeof *r);
  dc_map_put(&s->catalog, key, r);
  const char *look = name;
  bool is_path = dc_catalog_is_path(name);
  if (is_path && name[0] != '/' && s->dir && *s->dir)
    look = dc_arena_printf(&s->arena, "%s/%s", s->dir, name);
  dc_catalog_entry e;
  dc_diags tmp = {0};
  if (dc_catalog_find(dir, look, &e, &s->arena, &tmp)) {
    r->name = is_path ? look : e.name;
    r->root = e.root;
  }
  if (r->name) {
    dc_diags_free(&tmp);
    return r;
  }
  if (d) {
    dc_diag_code code = !strcmp(dir, "gpus")     ? DC_DIAG_UNKNOWN_GPU
                        : !strcmp(dir, "models") ? DC_DIAG_UNKNOWN_PRESET
                                                 : DC_DIAG_UNKNOWN_PROFILE;
    const char *what = !strcmp(dir, "gpus")     ? "GPU"
                       : !strcmp(dir, "models") ? "model preset"
                                                : "overhead profile";
    dc_span sp = at ? at->span : (dc_span){0};
    dc_diag *g;
    if (is_path && tmp.count) {
      /* The file's own errors (YAML syntax, duplicate keys, aliases) at
       * its own lines, after the line of the study that names it; one
       * with no line (the file cannot be read) is the help. */
      g = dc_diag_error(d, code, sp, "cannot load %s file '%s'", what, look);
      bool placed = tmp.items[0].span.src && tmp.items[0].span.line > 0;
      dc_diag_set_help(g, "%s", placed ? "its errors follow"
                                       : tmp.items[0].message);
      if (placed) dc_diags_append(d, &tmp);
      dc_diags_free(&tmp);
      return NULL;
    } else if (is_path)
      g = dc_diag_error(d, code, sp, "cannot load %s file '%s'", what, look);
    else
      g = dc_diag_error(d, code, sp, "unknown %s '%s'", what, name);
    const char *sug = is_path ? NULL : dc_catalog_suggest(dir, name);
    if (sug) {
      dc_diag_set_help(g, "did you mean '%s'?", sug);
    } else if (!is_path) {
      size_t n = 0;
      const char *const *names = dc_catalog_names(dir, &n);
      dc_buf b = {0};
      for (size_t i = 0; i < n && i < 12; i++) {
        if (i) dc_buf_puts(&b, ", ");
        dc_buf_puts(&b, names[i]);
      }
      if (n)
        dc_diag_set_help(g, "known: %s (or give a path to a YAML file)",
                         b.data);
      else
        dc_diag_set_help(g, "the built-in catalog spec/%s/ is empty; give a "
                            "path to a YAML file", dir);
      dc_buf_free(&b);
    }
  }
  dc_diags_free(&tmp);
  return NULL;
}

/* A catalog-valued key: returns the canonical name, or def's. */
const fe_catref *res_catalog(fe_rctx *c, const char *path,
                                  const char *dir, const char *def,
                                  bool fill) {
  const dc_node *n = res_get(c, path);
  const char *name = def;
  if (n) {
    if (!fe_leaf_str(n, path, &name, c->d)) {
      res_fail(c);
      return NULL;
    }
  }
  if (!name) return NULL;
  const fe_catref *r =
      fe_study_catalog((dc_study *)c->s, dir, name, n, c->d, fill);
  if (!r) res_fail(c);
  return r;
}

dc_span dc_study_catalog_span(const dc_study *s, const char *dir,
                              const char *name) {
  char key[4200];
  snprintf(key, sizeof key, "%s\x1f%s", dir, name);
  const fe_catref *r = dc_map_get((dc_map *)&s->catalog, key);
  return r && r->root ? r->root->span : (dc_span){0};
}

/* True when `path` is swept or given as a -D list: its value varies from
 * point to point, so keys that apply to only some of its values are
 * legitimately present at the others. */
bool res_varies(const fe_rctx *c, const char *path) {
  for (size_t i = 0; i < c->s->n_axes; i++)
    if (!strcmp(c->s->axes[i].path, path)) return true;
  return false;
}

/* Whether a span points into a built-in preset (not the user's text). */
bool res_in_preset(dc_span s) {
  return s.src && !strncmp(s.src->path, "builtin:", 8);
}
