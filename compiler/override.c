/*
 * override.c — `-D path=value` from the command line, as Hydra does it:
 * the value replaces the key at `path` in every point (it wins over the
 * file and over a sweep of the same path), and a comma-separated list
 * becomes a sweep of its own (a product digit after those of `sweep:`).
 *
 * A value is YAML (`-D model.bottom_mlp=[13,512,256,128]` works); commas
 * inside brackets, braces or quotes do not split. Nodes parsed here carry
 * the "<command line>" source and line 0, so their diagnostics say where
 * they came from instead of pointing into the study file.
 */
#include <string.h>

#include "compiler/study_int.h"

static void relocate(dc_node *n, dc_span sp, int depth) {
  if (!n || depth > DC_YAML_MAX_DEPTH) return;
  n->span = sp;
  if (n->kind == DC_NODE_SCALAR) return;
  for (size_t i = 0; i < n->n; i++) {
    relocate(n->items[i], sp, depth + 1);
    if (n->keys) relocate(n->keys[i], sp, depth + 1);
  }
}

/* Parses one value; NULL (reported) when it is not valid YAML. */
static const dc_node *parse_value(dc_study *s, const char *path,
                                  const char *text, size_t len,
                                  dc_diags *d) {
  dc_span sp = {s->cmdline, 0, 0, 0};
  while (len && (*text == ' ')) text++, len--;
  while (len && text[len - 1] == ' ') len--;
  if (len == 0) {
    dc_diag_error(d, DC_DIAG_BAD_OVERRIDE, sp,
                  "-D %s: empty value", path);
    return NULL;
  }
  const dc_source *src =
      dc_source_from_memory("<command line>", text, len, &s->arena);
  dc_diags tmp = {0};
  dc_node *n = dc_yaml_parse(src, &s->arena, &tmp);
  if (!n || tmp.errors) {
    dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_OVERRIDE, sp,
                               "-D %s: cannot read the value '%.*s'", path,
                               (int)(len > 80 ? 80 : len), text);
    if (tmp.count) dc_diag_set_help(g, "%s", tmp.items[0].message);
    dc_diags_free(&tmp);
    return NULL;
  }
  dc_diags_free(&tmp);
  relocate(n, sp, 0);
  return n;
}

/* Splits at commas outside [], {} and quotes. Returns the part count. */
static size_t split(const char *v, const char **starts, size_t *lens,
                    size_t cap) {
  size_t n = 0, depth = 0;
  char quote = 0;
  const char *start = v;
  for (const char *p = v;; p++) {
    char c = *p;
    if (quote) {
      if (c == quote) quote = 0;
      if (c) continue;
    }
    if (c == '"' || c == '\'') quote = c;
    else if (c == '[' || c == '{') depth++;
    else if ((c == ']' || c == '}') && depth) depth--;
    if ((c == ',' && depth == 0) || c == '\0') {
      if (n < cap) {
        starts[n] = start;
        lens[n] = (size_t)(p - start);
      }
      n++;
      start = p + 1;
    }
    if (!c) break;
  }
  return n;
}

#define MAX_LIST 100000

bool fe_overrides_parse(dc_study *s, const dc_override *ov, size_t n,
                        fe_axis **axes, size_t *n_axes, size_t *cap,
                        dc_diags *d) {
  size_t before = d->errors;
  dc_span sp = {s->cmdline, 0, 0, 0};
  s->fixed = dc_arena_array(&s->arena, n ? n : 1, sizeof *s->fixed);
  s->n_fixed = 0;
  for (size_t i = 0; i < n; i++) {
    const char *path = ov[i].path ? ov[i].path : "";
    const char *val = ov[i].value ? ov[i].value : "";
    if (!*path) {
      dc_diag_error(d, DC_DIAG_BAD_OVERRIDE, sp,
                    "-D needs path=value, found '=%s'", val);
      continue;
    }
    const fe_skey *k = fe_path_check(path, sp, false, d);
    if (!k) continue;
    size_t cnt = split(val, NULL, NULL, 0);
    if (cnt > MAX_LIST) {
      dc_diag_error(d, DC_DIAG_BAD_OVERRIDE, sp,
                    "-D %s: more than %d values", path, MAX_LIST);
      continue;
    }
    const char **starts = dc_arena_array(&s->arena, cnt, sizeof *starts);
    size_t *lens = dc_arena_array(&s->arena, cnt, sizeof *lens);
    split(val, starts, lens, cnt);
    /* A single value for a key the file sweeps stays a (one-value) sweep
     * key, so that its column and baseline still exist. */
    const dc_node *sw = dc_node_get(s->root, "sweep");
    bool swept = sw && dc_node_get(sw, path);
    if (cnt == 1 && !swept) {
      const dc_node *node = parse_value(s, path, starts[0], lens[0], d);
      if (!node) continue;
      if (node->kind != DC_NODE_SCALAR) fe_schema_walk(node, path, d);
      s->fixed[s->n_fixed].path = path;
      s->fixed[s->n_fixed].node = node;
      s->n_fixed++;
      continue;
    }
    if (cnt > 1 && !(k->flags & FE_SF_SWEEP)) {
      dc_diag *g = dc_diag_error(d, DC_DIAG_BAD_OVERRIDE, sp,
                                 "-D %s: a comma list makes a sweep, and "
                                 "'%s' cannot be swept",
                                 path, path);
      dc_diag_set_help(g, "give one value");
      continue;
    }
    const dc_node **vals = dc_arena_array(&s->arena, cnt, sizeof *vals);
    const char **texts = dc_arena_array(&s->arena, cnt, sizeof *texts);
    bool ok = true;
    for (size_t j = 0; j < cnt && ok; j++) {
      vals[j] = parse_value(s, path, starts[j], lens[j], d);
      if (!vals[j]) {
        ok = false;
        break;
      }
      if (vals[j]->kind != DC_NODE_SCALAR) fe_schema_walk(vals[j], path, d);
      size_t l = lens[j];
      const char *t = starts[j];
      while (l && *t == ' ') t++, l--;
      while (l && t[l - 1] == ' ') l--;
      texts[j] = dc_arena_strndup(&s->arena, t, l);
    }
    if (!ok) continue;
    if (*n_axes == *cap) {
      *cap *= 2;
      *axes = dc_xrealloc(*axes, *cap * sizeof **axes);
    }
    fe_axis *ax = &(*axes)[(*n_axes)++];
    memset(ax, 0, sizeof *ax);
    ax->path = path;
    ax->key_span = sp;
    ax->from_cli = true;
    ax->kind = FE_AXIS_LIST;
    ax->values = (const dc_node *const *)vals;
    ax->texts = (const char *const *)texts;
    ax->n = (int64_t)cnt;
  }
  return d->errors == before;
}
