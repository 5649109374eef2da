/*
 * catalog.c — the built-in catalogs (GPUs, overhead profiles, model
 * presets, fitted kernel models) embedded from spec/ at build time, and
 * name lookup over them. Names match case-insensitively with '-', '_' and
 * ' ' treated alike, against each entry's `name:` and `aliases:`; a name
 * that looks like a path is read from disk instead, so a user's own file
 * overrides a built-in of the same name.
 *
 * Each catalog folder is parsed once per process, on first use, under a
 * mutex: lookups are cheap and safe from the sweep executor's threads.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/support/support.h"

extern const dc_spec_file dc_spec_embedded[];
extern const size_t dc_spec_embedded_count;

const dc_spec_file *dc_spec_files(size_t *n) {
  *n = dc_spec_embedded_count;
  return dc_spec_embedded;
}

const dc_spec_file *dc_spec_file_find(const char *path) {
  for (size_t i = 0; i < dc_spec_embedded_count; i++)
    if (strcmp(dc_spec_embedded[i].path, path) == 0)
      return &dc_spec_embedded[i];
  return NULL;
}

typedef struct cat_entry {
  dc_catalog_entry e;
  const char **aliases;
  size_t n_aliases;
} cat_entry;

typedef struct cat_dir {
  char *dir;
  cat_entry *entries;
  size_t n;
  const char **names;   /* canonical names, sorted */
  const char **all;     /* names and aliases, for suggestions */
  size_t n_all;
  dc_diags diags;       /* problems in built-in files (a build bug) */
  struct cat_dir *next;
} cat_dir;

static pthread_mutex_t cat_lock = PTHREAD_MUTEX_INITIALIZER;
static cat_dir *cat_dirs;
static dc_arena cat_arena; /* process lifetime */

static int name_char(int c) {
  if (c == '_' || c == ' ') return '-';
  if (c >= 'A' && c <= 'Z') return c - 'A' + 'a';
  return c;
}

static bool name_eq(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (name_char((unsigned char)*a) != name_char((unsigned char)*b))
      return false;
  return *a == *b;
}

static int cmp_str(const void *x, const void *y) {
  return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static const char *file_stem(const char *path, dc_arena *a) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  size_t n = dot ? (size_t)(dot - base) : strlen(base);
  return dc_arena_strndup(a, base, n);
}

/* Fills name and aliases from a parsed document. */
static void read_entry(cat_entry *ce, const dc_node *root, const char *path,
                       dc_arena *a) {
  const dc_node *name = dc_node_get(root, "name");
  ce->e.name = name && name->kind == DC_NODE_SCALAR ? name->text
                                                    : file_stem(path, a);
  const dc_node *al = dc_node_get(root, "aliases");
  if (al && al->kind == DC_NODE_SEQ) {
    ce->aliases = dc_arena_array(a, al->n ? al->n : 1, sizeof(char *));
    for (size_t i = 0; i < al->n; i++)
      if (al->items[i]->kind == DC_NODE_SCALAR)
        ce->aliases[ce->n_aliases++] = al->items[i]->text;
  }
}

/* Called with cat_lock held. */
static cat_dir *load_dir(const char *dir) {
  for (cat_dir *c = cat_dirs; c; c = c->next)
    if (strcmp(c->dir, dir) == 0) return c;
  cat_dir *c = dc_arena_alloc(&cat_arena, sizeof *c);
  c->dir = dc_arena_strdup(&cat_arena, dir);
  size_t dl = strlen(dir);
  c->entries = dc_arena_array(&cat_arena, dc_spec_embedded_count + 1,
                              sizeof *c->entries);
  for (size_t i = 0; i < dc_spec_embedded_count; i++) {
    const dc_spec_file *f = &dc_spec_embedded[i];
    if (strncmp(f->path, dir, dl) != 0 || f->path[dl] != '/' ||
        strchr(f->path + dl + 1, '/'))
      continue;
    char *origin = dc_arena_printf(&cat_arena, "builtin:%s", f->path);
    const dc_source *src =
        dc_source_from_memory(origin, f->data, f->len, &cat_arena);
    dc_node *root = dc_yaml_parse(src, &cat_arena, &c->diags);
    if (!root || root->kind != DC_NODE_MAP) continue;
    cat_entry *ce = &c->entries[c->n++];
    ce->e.origin = origin;
    ce->e.root = root;
    ce->e.src = src;
    read_entry(ce, root, f->path, &cat_arena);
  }
  c->names = dc_arena_array(&cat_arena, c->n + 1, sizeof(char *));
  size_t n_all = c->n;
  for (size_t i = 0; i < c->n; i++) n_all += c->entries[i].n_aliases;
  c->all = dc_arena_array(&cat_arena, n_all + 1, sizeof(char *));
  for (size_t i = 0; i < c->n; i++) {
    c->names[i] = c->entries[i].e.name;
    c->all[c->n_all++] = c->entries[i].e.name;
  }
  for (size_t i = 0; i < c->n; i++)
    for (size_t j = 0; j < c->entries[i].n_aliases; j++)
      c->all[c->n_all++] = c->entries[i].aliases[j];
  qsort(c->names, c->n, sizeof(char *), cmp_str);
  c->next = cat_dirs;
  cat_dirs = c;
  return c;
}

static cat_dir *get_dir(const char *dir) {
  pthread_mutex_lock(&cat_lock);
  cat_dir *c = load_dir(dir);
  pthread_mutex_unlock(&cat_lock);
  return c;
}

bool dc_catalog_is_path(const char *name) {
  size_t n = strlen(name);
  return strchr(name, '/') != NULL ||
         (n > 5 && strcmp(name + n - 5, ".yaml") == 0) ||
         (n > 4 && strcmp(name + n - 4, ".yml") == 0);
}

bool dc_catalog_find(const char *dir, const char *name, dc_catalog_entry *out,
                     dc_arena *a, dc_diags *d) {
  memset(out, 0, sizeof *out);
  if (!name) return false;
  if (dc_catalog_is_path(name)) {
    const dc_source *src = dc_source_load(name, a, d);
    if (!src) return false;
    dc_node *root = dc_yaml_parse(src, a, d);
    if (!root) return false;
    if (root->kind != DC_NODE_MAP) {
      dc_diag_error(d, DC_DIAG_BAD_CATALOG, root->span,
                    "a %s file must be a mapping with a 'name:' key", dir);
      return false;
    }
    cat_entry ce = {0};
    read_entry(&ce, root, name, a);
    *out = ce.e;
    out->origin = dc_arena_strdup(a, name);
    out->root = root;
    out->src = src;
    return true;
  }
  cat_dir *c = get_dir(dir);
  for (size_t i = 0; i < c->diags.count; i++) {
    /* A built-in that does not parse is a packaging bug: say so. */
    const dc_diag *g = &c->diags.items[i];
    dc_diag_error(d, DC_DIAG_BAD_CATALOG, g->span, "built-in catalog: %s",
                  g->message);
  }
  for (size_t i = 0; i < c->n; i++) {
    const cat_entry *ce = &c->entries[i];
    bool hit = name_eq(name, ce->e.name);
    for (size_t j = 0; !hit && j < ce->n_aliases; j++)
      hit = name_eq(name, ce->aliases[j]);
    if (hit) {
      *out = ce->e;
      return true;
    }
  }
  return false;
}

const char *const *dc_catalog_names(const char *dir, size_t *n) {
  cat_dir *c = get_dir(dir);
  *n = c->n;
  return c->names;
}

const char *dc_catalog_suggest(const char *dir, const char *name) {
  cat_dir *c = get_dir(dir);
  const char *s = dc_suggest(name, c->all, c->n_all);
  if (!s) return NULL;
  /* Suggest the canonical name of the entry the match belongs to. */
  for (size_t i = 0; i < c->n; i++) {
    if (c->entries[i].e.name == s) return s;
    for (size_t j = 0; j < c->entries[i].n_aliases; j++)
      if (c->entries[i].aliases[j] == s) return c->entries[i].e.name;
  }
  return s;
}
