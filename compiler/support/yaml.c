/*
 * yaml.c — the only file that includes <yaml.h>. It turns libyaml's event
 * stream into a dc_node tree in which every node carries a 1-based span
 * (libyaml's marks are 0-based and count characters; we convert them to
 * 1-based byte columns here and nowhere else).
 *
 * Hostile input is bounded here, once, for every caller: nesting depth,
 * node count, and the expanded size of the document. Aliases are shared
 * rather than copied (the tree is a DAG), and every alias adds the size of
 * what it stands for to the expanded count, so a "billion laughs" document
 * is refused after a million expanded nodes instead of exhausting memory
 * or the time of a later walk. Duplicate keys and non-scalar keys are
 * errors, because a study with two `batch_size:` lines is a mistake the
 * user wants to hear about.
 */
#include <string.h>
#include <yaml.h>

#include "compiler/support/support.h"

typedef struct frame {
  dc_node *node;
  size_t cap;
  int64_t weight;      /* expanded node count of the subtree so far */
  const char *anchor;  /* anchor to register when the node closes */
  dc_node *pending_key; /* maps: key waiting for its value */
  dc_map keys;         /* maps with many keys: duplicate detection */
} frame;

typedef struct anchor_rec {
  dc_node *node;
  int64_t weight;
} anchor_rec;

typedef struct builder {
  const dc_source *src;
  dc_arena *a;
  dc_diags *d;
  frame stack[DC_YAML_MAX_DEPTH + 1];
  int depth;
  int64_t nodes;
  int64_t expanded;
  dc_map anchors; /* name -> anchor_rec* (arena) */
  dc_node *root;
  bool failed;
  bool ascii;          /* no byte >= 0x80: columns are byte offsets */
  size_t last_line, last_column, last_offset; /* mark_offset's cursor */
} builder;

/* Byte offset of libyaml's (line, column-in-characters) mark. A pure
 * ASCII file (the common case) maps columns to bytes directly; otherwise
 * the walk resumes from the previous mark on the same line, so a long
 * line (a fitted model's weights) costs linear, not quadratic, time. */
static size_t mark_offset(builder *b, yaml_mark_t m) {
  const dc_source *s = b->src;
  if (m.line >= s->n_lines) return s->len;
  size_t line_start = s->line_starts[m.line];
  if (b->ascii) {
    size_t off = line_start + m.column;
    return off <= s->len ? off : s->len;
  }
  size_t off = line_start, chars = 0;
  if (b->last_line == m.line && b->last_column <= m.column) {
    off = b->last_offset;
    chars = b->last_column;
  }
  while (off < s->len && chars < m.column && s->text[off] != '\n') {
    unsigned char c = (unsigned char)s->text[off];
    off++;
    while (off < s->len && ((unsigned char)s->text[off] & 0xC0) == 0x80 &&
           c >= 0xC0)
      off++;
    chars++;
  }
  b->last_line = m.line;
  b->last_column = chars;
  b->last_offset = off;
  return off;
}

static dc_span mark_span(builder *b, yaml_mark_t start,
                         yaml_mark_t end) {
  size_t from = mark_offset(b, start);
  size_t to = mark_offset(b, end);
  if (end.line != start.line || to < from) {
    /* Multi-line node: underline to the end of its first line. */
    size_t len, line_end = b->src->len;
    /* libyaml also breaks lines at a lone '\r', the source only at '\n':
     * its line can lie past the source's last */
    if (start.line < b->src->n_lines) {
      dc_source_line(b->src, (int32_t)start.line + 1, &len);
      line_end = b->src->line_starts[start.line] + len;
    }
    to = line_end > from ? line_end : from + 1;
  }
  return dc_span_at(b->src, from, to - from);
}

static void fail_limit(builder *b, yaml_mark_t m, const char *what) {
  if (b->failed) return;
  dc_diag *g = dc_diag_error(b->d, DC_DIAG_YAML_LIMIT, mark_span(b, m, m),
                             "%s", what);
  dc_diag_set_help(g, "a study needs no more than a few hundred nodes; "
                      "this looks like a generated or hostile file");
  b->failed = true;
}

static bool is_null_scalar(const char *t, size_t n, bool quoted) {
  if (quoted) return false;
  return n == 0 || (n == 1 && t[0] == '~') ||
         (n == 4 && (!memcmp(t, "null", 4) || !memcmp(t, "Null", 4) ||
                     !memcmp(t, "NULL", 4)));
}

/* `self` nodes are added to the document's expanded size; `w` to the
 * subtree weight of the enclosing collection (for anchors over it). */
static void add_weight(builder *b, int64_t self, int64_t w, yaml_mark_t m) {
  b->expanded += self;
  if (b->expanded > DC_YAML_MAX_EXPANDED) {
    fail_limit(b, m, "the document expands to more than 1000000 nodes "
                     "(aliases count as the nodes they stand for)");
    return;
  }
  if (b->depth > 0) b->stack[b->depth - 1].weight += w;
}

static void append_child(builder *b, frame *f, dc_node *child,
                         yaml_mark_t m) {
  dc_node *p = f->node;
  if (p->kind == DC_NODE_SEQ) {
    if (p->n == f->cap) {
      size_t cap = f->cap ? f->cap * 2 : 4;
      dc_node **items = dc_arena_array(b->a, cap, sizeof *items);
      if (p->n) memcpy(items, p->items, p->n * sizeof *items);
      p->items = items;
      f->cap = cap;
    }
    p->items[p->n++] = child;
    return;
  }
  /* Mapping: alternate key, value. */
  if (!f->pending_key) {
    if (child->kind != DC_NODE_SCALAR) {
      dc_diag *g = dc_diag_error(b->d, DC_DIAG_YAML_KEY_KIND, child->span,
                                 "a mapping key must be a plain name, not "
                                 "%s", dc_node_kind_name(child->kind));
      dc_diag_set_help(g, "write the key as a name followed by ':'");
      b->failed = true;
    }
    f->pending_key = child;
    return;
  }
  dc_node *key = f->pending_key;
  f->pending_key = NULL;
  if (key->kind == DC_NODE_SCALAR) {
    const dc_node *first = NULL;
    if (p->n < 16) {
      for (size_t i = 0; i < p->n; i++)
        if (p->keys[i]->kind == DC_NODE_SCALAR &&
            strcmp(p->keys[i]->text, key->text) == 0) {
          first = p->keys[i];
          break;
        }
    } else {
      /* Big mappings switch to a hash so fuzzed input stays linear. */
      if (f->keys.count == 0)
        for (size_t i = 0; i < p->n; i++)
          if (p->keys[i]->kind == DC_NODE_SCALAR)
            dc_map_put(&f->keys, p->keys[i]->text, p->keys[i]);
      first = dc_map_get(&f->keys, key->text);
      if (!first) dc_map_put(&f->keys, key->text, key);
    }
    if (first) {
      dc_diag *g = dc_diag_error(b->d, DC_DIAG_YAML_DUP_KEY, key->span,
                                 "duplicate key '%s'", key->text);
      dc_diag_set_help(g, "'%s' was already given on line %d; keep one",
                       key->text, first->span.line);
      b->failed = true;
      return;
    }
  }
  if (p->n == f->cap) {
    size_t cap = f->cap ? f->cap * 2 : 4;
    dc_node **keys = dc_arena_array(b->a, cap, sizeof *keys);
    dc_node **vals = dc_arena_array(b->a, cap, sizeof *vals);
    if (p->n) {
      memcpy(keys, p->keys, p->n * sizeof *keys);
      memcpy(vals, p->items, p->n * sizeof *vals);
    }
    p->keys = keys;
    p->items = vals;
    f->cap = cap;
  }
  p->keys[p->n] = key;
  p->items[p->n] = child;
  p->n++;
  (void)m;
}

/* A finished node goes to its parent (or becomes the root). */
static void attach(builder *b, dc_node *n, yaml_mark_t m) {
  if (b->depth == 0) {
    if (!b->root) b->root = n;
    return;
  }
  append_child(b, &b->stack[b->depth - 1], n, m);
}

static void register_anchor(builder *b, const char *anchor, dc_node *n,
                            int64_t weight) {
  if (!anchor) return;
  anchor_rec *r = dc_arena_alloc(b->a, sizeof *r);
  r->node = n;
  r->weight = weight;
  dc_map_put(&b->anchors, anchor, r);
}

static dc_node *new_node(builder *b, dc_node_kind kind, dc_span span,
                         yaml_mark_t m) {
  if (++b->nodes > DC_YAML_MAX_NODES) {
    fail_limit(b, m, "the document has more than 1000000 nodes");
    return NULL;
  }
  dc_node *n = dc_arena_alloc(b->a, sizeof *n);
  n->kind = kind;
  n->span = span;
  return n;
}

static void on_event(builder *b, const yaml_event_t *ev) {
  yaml_mark_t sm = ev->start_mark, em = ev->end_mark;
  switch (ev->type) {
  case YAML_SCALAR_EVENT: {
    dc_node *n = new_node(b, DC_NODE_SCALAR, mark_span(b, sm, em), sm);
    if (!n) return;
    n->text = dc_arena_strndup(b->a, (const char *)ev->data.scalar.value,
                               ev->data.scalar.length);
    n->text_len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
                (tag && strcmp(tag, YAML_STR_TAG) == 0);
    n->is_null = is_null_scalar(n->text, n->text_len, n->quoted);
    add_weight(b, 1, 1, sm);
    register_anchor(b, (const char *)ev->data.scalar.anchor, n, 1);
    attach(b, n, sm);
    return;
  }
  case YAML_SEQUENCE_START_EVENT:
  case YAML_MAPPING_START_EVENT: {
    if (b->depth >= DC_YAML_MAX_DEPTH) {
      fail_limit(b, sm, "the document is nested more than 64 levels deep");
      return;
    }
    bool seq = ev->type == YAML_SEQUENCE_START_EVENT;
    dc_span sp = mark_span(b, sm, sm);
    sp.len = 1;
    dc_node *n = new_node(b, seq ? DC_NODE_SEQ : DC_NODE_MAP, sp, sm);
    if (!n) return;
    frame *f = &b->stack[b->depth++];
    memset(f, 0, sizeof *f);
    f->node = n;
    f->weight = 0;
    const yaml_char_t *anchor = seq ? ev->data.sequence_start.anchor
                                    : ev->data.mapping_start.anchor;
    f->anchor = anchor ? dc_arena_strdup(b->a, (const char *)anchor) : NULL;
    return;
  }
  case YAML_SEQUENCE_END_EVENT:
  case YAML_MAPPING_END_EVENT: {
    DC_ASSERT(b->depth > 0);
    frame *f = &b->stack[--b->depth];
    dc_node *n = f->node;
    int64_t w = f->weight + 1;
    dc_map_free(&f->keys);
    add_weight(b, 1, w, sm); /* children were counted as they arrived */
    register_anchor(b, f->anchor, n, w);
    attach(b, n, sm);
    return;
  }
  case YAML_ALIAS_EVENT: {
    const char *name = (const char *)ev->data.alias.anchor;
    anchor_rec *r = dc_map_get(&b->anchors, name);
    if (!r) {
      dc_diag *g = dc_diag_error(b->d, DC_DIAG_YAML_ALIAS,
                                 mark_span(b, sm, em),
                                 "alias '*%s' refers to no anchor", name);
      dc_diag_set_help(g, "define '&%s' before using '*%s'", name, name);
      b->failed = true;
      return;
    }
    add_weight(b, r->weight, r->weight, sm);
    if (b->failed) return;
    attach(b, r->node, sm);
    return;
  }
  default:
    return;
  }
}

static void report_parser_error(builder *b, const yaml_parser_t *p) {
  yaml_mark_t m = p->problem_mark;
  const char *problem = p->problem ? p->problem : "syntax error";
  dc_span sp = mark_span(b, m, m);
  sp.len = 1;
  size_t off = mark_offset(b, m);
  dc_diag *g;
  if (p->error == YAML_READER_ERROR) {
    /* libyaml reports encoding problems with an offset, not a line. */
    sp = dc_span_at(b->src, p->problem_offset, 1);
    g = dc_diag_error(b->d, DC_DIAG_YAML_ENCODING, sp,
                      "the file is not valid UTF-8 text (%s)", problem);
    dc_diag_set_help(g, "study files must be UTF-8; is this a binary file?");
    return;
  }
  if (off < b->src->len && b->src->text[off] == '\t') {
    g = dc_diag_error(b->d, DC_DIAG_YAML_TAB, sp,
                      "tab character where YAML expects indentation");
    dc_diag_set_help(g, "YAML indents with spaces only; replace the tab "
                        "with spaces");
    return;
  }
  if (p->context)
    g = dc_diag_error(b->d, DC_DIAG_YAML_SYNTAX, sp, "%s %s", problem,
                      p->context);
  else
    g = dc_diag_error(b->d, DC_DIAG_YAML_SYNTAX, sp, "%s", problem);
  if (strstr(problem, "mapping values are not allowed"))
    dc_diag_set_help(g, "a value that contains ': ' must be quoted, or a "
                        "key is indented wrongly");
  else if (strstr(problem, "did not find expected key"))
    dc_diag_set_help(g, "check the indentation of this line against the "
                        "keys above it");
}

dc_node *dc_yaml_parse(const dc_source *src, dc_arena *a, dc_diags *d) {
  builder b;
  memset(&b, 0, sizeof b);
  b.src = src;
  b.a = a;
  b.d = d;
  b.ascii = true;
  for (size_t i = 0; i < src->len && b.ascii; i++)
    if ((unsigned char)src->text[i] >= 0x80) b.ascii = false;
  b.last_line = (size_t)-1;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    dc_fatal(__FILE__, __LINE__, "cannot initialise libyaml");
  yaml_parser_set_input_string(&parser, (const unsigned char *)src->text,
                               src->len);
  yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
  int documents = 0;
  bool done = false;
  while (!done && !b.failed) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      report_parser_error(&b, &parser);
      b.failed = true;
      break;
    }
    if (ev.type == YAML_DOCUMENT_START_EVENT && ++documents > 1) {
      dc_span sp = mark_span(&b, ev.start_mark, ev.start_mark);
      dc_diag *g = dc_diag_error(d, DC_DIAG_YAML_MULTI_DOC, sp,
                                 "a study file holds one YAML document");
      dc_diag_set_help(g, "remove the '---' line or split the file");
      b.failed = true;
    } else if (ev.type == YAML_STREAM_END_EVENT) {
      done = true;
    } else {
      on_event(&b, &ev);
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&parser);
  for (int i = 0; i < b.depth; i++) dc_map_free(&b.stack[i].keys);
  dc_map_free(&b.anchors);
  if (b.failed) return NULL;
  if (!b.root) {
    /* An empty file is an empty mapping: the checker reports what is
     * missing. */
    dc_node *n = dc_arena_alloc(a, sizeof *n);
    n->kind = DC_NODE_MAP;
    n->span = dc_span_at(src, 0, 0);
    return n;
  }
  return b.root;
}

const dc_node *dc_node_get(const dc_node *map, const char *key) {
  if (!map || map->kind != DC_NODE_MAP) return NULL;
  for (size_t i = 0; i < map->n; i++)
    if (map->keys[i]->kind == DC_NODE_SCALAR &&
        strcmp(map->keys[i]->text, key) == 0)
      return map->items[i];
  return NULL;
}

const dc_node *dc_node_key(const dc_node *map, const char *key) {
  if (!map || map->kind != DC_NODE_MAP) return NULL;
  for (size_t i = 0; i < map->n; i++)
    if (map->keys[i]->kind == DC_NODE_SCALAR &&
        strcmp(map->keys[i]->text, key) == 0)
      return map->keys[i];
  return NULL;
}

const char *dc_node_kind_name(dc_node_kind k) {
  switch (k) {
  case DC_NODE_SCALAR: return "a scalar";
  case DC_NODE_SEQ: return "a list";
  case DC_NODE_MAP: return "a mapping";
  }
  return "a node";
}
