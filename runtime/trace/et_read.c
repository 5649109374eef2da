/*
 * et_read.c — streams a PyTorch execution trace (ET JSON) into flat node
 * records (et_int.h). The text goes through jsonio.c (gzip or plain,
 * yajl's SAX parser, line:col diagnostics) as the Kineto loader's does.
 *
 * Memory stays bounded by a node, not by the file: the elements of
 * "nodes" are built one at a time into a small DOM in a scratch arena
 * (at most ET_NODE_MAX_VALUES JSON values), converted into a record and
 * the scratch reset. A node is small (a few arguments), so this keeps the
 * conversion readable (look up "inputs", then "values" beside "shapes")
 * without ever holding the file. Everything outside "schema" and "nodes"
 * streams past.
 *
 * The two layouts (et_int.h) reduce to one record: the attributes come
 * from the node's own keys (1.0.1) or from its "attrs" list (1.0.2+);
 * inputs and outputs from flat lists (1.0.1) or {values, shapes, types,
 * strides} (1.0.2+). A tensor value is [tensor id, storage id, offset,
 * numel, element size, device]; a GenericList argument's elements are
 * flattened into the record after it, each typed by its element of the
 * list's type string ("GenericList[Tensor(float),Int]").
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/et_int.h"
#include "runtime/trace/jsonio_int.h"

#define ET_NODE_MAX_VALUES (1 << 20)
#define ET_MAX_DEPTH       64

/* ---- the per-node DOM ------------------------------------------------ */

typedef struct jv {
  char t; /* 'o' 'a' 's' 'n' 't' 'f' 'z' */
  const char *s, *key;
  size_t n, key_n;
  struct jv *kid, *last, *next;
  int32_t n_kids;
  int64_t line, col; /* where the value starts, for diagnostics */
} jv;

typedef struct read_ctx {
  js_in in;
  dc_arena *a, scratch;
  et_file *f;
  int64_t cap_nodes;
  int depth;
  bool top_map, in_nodes, saw_nodes, saw_events;
  char top_key[32];
  jv *stack[ET_MAX_DEPTH];
  int sp;          /* DOM depth, 0: not building */
  const char *key; /* pending object key */
  size_t key_n;
  int64_t n_values; /* of the node being built */
  int32_t node_line;
} read_ctx;

static jv *dom_add(read_ctx *c, char t, const char *s, size_t n) {
  if (++c->n_values > ET_NODE_MAX_VALUES) {
    js_error_here(&c->in, "node #%lld has more than %d values",
                  (long long)c->f->n_nodes + 1, ET_NODE_MAX_VALUES);
    return NULL;
  }
  if ((t == 's' && memchr(s, '\0', n)) ||
      (c->sp > 0 && c->stack[c->sp - 1]->t == 'o' && c->key &&
       memchr(c->key, '\0', c->key_n))) {
    /* names are C strings from here on: a NUL would cut one short */
    js_error_here(&c->in,
                  "node #%lld: a string contains a NUL character "
                  "(\\u0000)",
                  (long long)c->f->n_nodes + 1);
    return NULL;
  }
  jv *v = dc_arena_alloc(&c->scratch, sizeof *v);
  v->t = t;
  js_pos_here(&c->in, &v->line, &v->col);
  if (s) {
    v->s = dc_arena_strndup(&c->scratch, s, n);
    v->n = n;
  }
  if (c->sp > 0) {
    jv *p = c->stack[c->sp - 1];
    if (p->t == 'o') {
      v->key = c->key;
      v->key_n = c->key_n;
    }
    if (p->last)
      p->last->next = v;
    else
      p->kid = v;
    p->last = v;
    p->n_kids++;
  }
  return v;
}

static jv *get(const jv *o, const char *key) {
  if (!o || o->t != 'o') return NULL;
  size_t n = strlen(key);
  for (jv *k = o->kid; k; k = k->next)
    if (k->key_n == n && memcmp(k->key, key, n) == 0) return k;
  return NULL;
}

static jv *at(const jv *a, int32_t i) {
  if (!a || a->t != 'a') return NULL;
  jv *k = a->kid;
  while (k && i-- > 0)
    k = k->next;
  return k;
}

static bool num_i64(const jv *v, int64_t *out) {
  if (!v) return false;
  if (v->t == 'n') return js_int(v->s, v->n, out);
  if (v->t == 't' || v->t == 'f') {
    *out = v->t == 't';
    return true;
  }
  return false;
}

static int64_t int_or(const jv *v, int64_t dflt) {
  int64_t x;
  return num_i64(v, &x) ? x : dflt;
}

/* ---- conversion ------------------------------------------------------ */

static dc_dtype dtype_of(const char *ty, size_t n, int esize) {
  static const struct {
    const char *name;
    dc_dtype t;
  } names[] = {{"float", DC_DTYPE_FP32},
               {"c10::Half", DC_DTYPE_FP16},
               {"c10::BFloat16", DC_DTYPE_BF16},
               {"long int", DC_DTYPE_INT64},
               {"int", DC_DTYPE_INT32},
               {"bool", DC_DTYPE_BOOL},
               {"signed char", DC_DTYPE_INT8},
               {"unsigned char", DC_DTYPE_INT8},
               {"c10::Float8_e4m3fn", DC_DTYPE_FP8}};
  for (size_t i = 0; i < DC_COUNTOF(names); i++)
    if (strlen(names[i].name) == n && memcmp(names[i].name, ty, n) == 0)
      return names[i].t;
  /* double, short, complex, ...: by size (the pricing reads bytes) */
  return esize >= 8   ? DC_DTYPE_INT64
         : esize == 2 ? DC_DTYPE_FP16
         : esize == 1 ? DC_DTYPE_INT8
                      : DC_DTYPE_FP32;
}

static bool ints_of(const jv *a, int64_t *v, int8_t *n) {
  if (!a || a->t != 'a' || a->n_kids > ET_MAX_DIMS) return false;
  int8_t k = 0;
  for (jv *x = a->kid; x; x = x->next)
    if (!num_i64(x, &v[k++])) return false;
  *n = k;
  return true;
}

/* The text of a number value, for messages (clipped). */
static const char *num_text(const jv *v) {
  static _Thread_local char buf[48];
  size_t n = v->n < sizeof buf - 4 ? v->n : sizeof buf - 4;
  memcpy(buf, v->s, n);
  strcpy(buf + n, v->n > n ? "..." : "");
  return buf;
}

/* A recorded size (a dimension, numel, in_msg_nelems): a whole number
 * from 0 to 2^63 − 1. Anything else is refused where it stands: a
 * negative or fractional dimension, or a count past 64 bits, would be
 * clamped, dropped or priced as something else downstream. */
static bool size_ok(read_ctx *c, const jv *v, const char *what) {
  int64_t x;
  if (v && v->t == 'n' && js_int(v->s, v->n, &x) && x >= 0) return true;
  if (!v || v->t != 'n') return true; /* not a number: not a size */
  js_error_pos(&c->in, v->line, v->col,
               "node #%lld: %s %s is not a whole number from 0 to "
               "2^63 - 1", (long long)c->f->n_nodes, what, num_text(v));
  return false;
}

/* Every number of a tensor's shape is a size (size_ok). */
static bool shape_ok(read_ctx *c, const jv *a) {
  if (!a || a->t != 'a') return true;
  for (const jv *x = a->kid; x; x = x->next)
    if (x->t == 'n' && !size_ok(c, x, "shape dimension")) return false;
  return true;
}

typedef struct vals {
  et_val *v;
  int32_t n, cap;
} vals;

static et_val *push(vals *vs, dc_arena *a) {
  if (vs->n == vs->cap) {
    int32_t cap = vs->cap ? vs->cap * 2 : 8;
    et_val *nv = dc_arena_array(a, (size_t)cap, sizeof *nv);
    if (vs->n) memcpy(nv, vs->v, (size_t)vs->n * sizeof *nv);
    vs->v = nv;
    vs->cap = cap;
  }
  et_val *x = &vs->v[vs->n++];
  memset(x, 0, sizeof *x);
  x->kind = ET_NONE;
  return x;
}

/* One value typed `ty` (ty_n bytes, not terminated); false after a
 * diagnostic. */
static bool one_value(read_ctx *c, vals *vs, int16_t arg, bool in_list,
                      const jv *v, const char *ty, size_t ty_n,
                      const jv *shape, const jv *stride) {
  et_val *x = push(vs, c->a);
  x->arg = arg;
  x->in_list = in_list;
  if (ty_n > 7 && memcmp(ty, "Tensor(", 7) == 0 && v && v->t == 'a' &&
      v->n_kids >= 5) {
    int64_t f[5];
    const jv *numel = at(v, 3);
    if (numel && numel->t == 'n' && numel->s[0] != '-' &&
        !size_ok(c, numel, "tensor numel"))
      return false;
    for (int i = 0; i < 5; i++)
      if (!num_i64(at(v, i), &f[i])) return true;
    const jv *dev = at(v, 5);
    if (f[3] < 0 || f[4] <= 0 || f[4] > 16) return true; /* undefined */
    if (!shape_ok(c, shape)) return false;
    x->kind = ET_TENSOR;
    x->tid = f[0];
    x->sid = f[1];
    x->offset = f[2];
    x->numel = f[3];
    x->esize = (uint8_t)f[4];
    x->cuda =
        dev && dev->t == 's' && dev->n >= 4 && memcmp(dev->s, "cuda", 4) == 0;
    x->dtype = dtype_of(ty + 7, ty_n - 8, x->esize);
    if (!ints_of(shape, x->shape, &x->ndim)) x->ndim = 0;
    int8_t sn = 0;
    x->strided = ints_of(stride, x->stride, &sn) && sn == x->ndim;
    if (x->cuda) c->f->any_cuda = true;
    return true;
  }
  if (ty_n == 3 && memcmp(ty, "Int", 3) == 0 && num_i64(v, &x->i)) {
    x->kind = ET_INT;
  } else if (ty_n == 4 && memcmp(ty, "Bool", 4) == 0 && num_i64(v, &x->i)) {
    x->kind = ET_BOOL;
  } else if (ty_n == 6 && memcmp(ty, "Double", 6) == 0 && v && v->t == 'n') {
    x->f = strtod(v->s, NULL);
    if (isfinite(x->f)) x->kind = ET_DOUBLE;
  } else if (ty_n == 6 && memcmp(ty, "String", 6) == 0 && v && v->t == 's') {
    x->kind = ET_STRING;
    x->s = dc_arena_strndup(c->a, v->s, v->n);
  }
  return true;
}

/* One side (inputs or outputs): values, shapes, types, strides (strides
 * may be NULL). -1 after a diagnostic. */
static int32_t side(read_ctx *c, const jv *values, const jv *shapes,
                    const jv *types, const jv *strides, et_val **out,
                    int32_t *n_out) {
  vals vs = {0};
  int16_t arg = 0;
  const jv *v = values && values->t == 'a' ? values->kid : NULL;
  const jv *sh = shapes && shapes->t == 'a' ? shapes->kid : NULL;
  const jv *ty = types && types->t == 'a' ? types->kid : NULL;
  const jv *st = strides && strides->t == 'a' ? strides->kid : NULL;
  for (; v && ty; v = v->next, ty = ty->next, arg++) {
    if (ty->t != 's') continue;
    if (ty->n > 12 && memcmp(ty->s, "GenericList[", 12) == 0 && v->t == 'a') {
      /* the element types, split at the list's top-level commas */
      const char *p = ty->s + 12, *end = ty->s + ty->n - 1;
      const jv *e = v->kid, *es = sh && sh->t == 'a' ? sh->kid : NULL;
      const jv *et = st && st->t == 'a' ? st->kid : NULL;
      while (p < end && e) {
        const char *q = p;
        int depth = 0;
        while (q < end && (depth > 0 || *q != ',')) {
          depth += *q == '(' || *q == '[';
          depth -= *q == ')' || *q == ']';
          q++;
        }
        if (!one_value(c, &vs, arg, true, e, p, (size_t)(q - p), es, et))
          return -1;
        p = q + 1;
        e = e->next;
        es = es ? es->next : NULL;
        et = et ? et->next : NULL;
      }
    } else {
      if (!one_value(c, &vs, arg, false, v, ty->s, ty->n, sh, st)) return -1;
    }
    if (sh) sh = sh->next;
    if (st) st = st->next;
  }
  *out = vs.v;
  *n_out = vs.n;
  return arg;
}

static const char *str_or(read_ctx *c, const jv *v, const char *dflt) {
  return v && v->t == 's' ? dc_arena_strndup(c->a, v->s, v->n) : dflt;
}

static bool node_done(read_ctx *c, jv *o) {
  et_file *f = c->f;
  if (f->n_nodes == c->cap_nodes) {
    c->cap_nodes = c->cap_nodes ? c->cap_nodes * 2 : 256;
    et_node *nn = dc_arena_array(c->a, (size_t)c->cap_nodes, sizeof *nn);
    if (f->n_nodes) memcpy(nn, f->nodes, (size_t)f->n_nodes * sizeof *nn);
    f->nodes = nn;
  }
  et_node *n = &f->nodes[f->n_nodes++];
  memset(n, 0, sizeof *n);
  n->line = c->node_line;
  const jv *id = get(o, "id"), *name = get(o, "name");
  if (!num_i64(id, &n->id) || !name || name->t != 's') {
    js_error_here(&c->in,
                  "node #%lld has no integer 'id' or string 'name'",
                  (long long)f->n_nodes);
    return false;
  }
  /* A device node of a trace linked with its Kineto twin
   * (chakra_trace_link, `dlrmc graph --with-device`): a GPU kernel under
   * the op that launched it, with a Kineto category. The op prices its
   * kernels itself; a measured kernel time is replay's, from Kineto. */
  if (get(o, "cat")) {
    f->n_nodes--;
    f->n_device++;
    return true;
  }
  if (dc_printable(name->s, name->n)) {
    n->name = str_or(c, name, "");
  } else { /* control bytes or invalid UTF-8: kept escaped (support.h) */
    dc_buf esc = {0};
    dc_buf_put_printable(&esc, name->s, name->n);
    n->name = dc_arena_strndup(c->a, esc.data, esc.len);
    dc_buf_free(&esc);
  }
  const jv *attrs = get(o, "attrs");
  const jv *parent = get(o, "ctrl_deps");
  if (!parent) parent = get(o, "parent");
  n->parent = int_or(parent, -1);
  /* attributes: the node's own keys (1.0.1) or its attrs list */
  n->rf_id = int_or(get(o, "rf_id"), 0);
  n->tid = int_or(get(o, "tid"), 0);
  n->seq_id = int_or(get(o, "seq_id"), -1);
  n->scope = (int32_t)int_or(get(o, "scope"), 0);
  n->schema = str_or(c, get(o, "op_schema"), "");
  for (const jv *x = attrs && attrs->t == 'a' ? attrs->kid : NULL; x;
       x = x->next) {
    const jv *an = get(x, "name"), *av = get(x, "value");
    if (!an || an->t != 's' || !av) continue;
#define IS(k) (an->n == strlen(k) && memcmp(an->s, k, an->n) == 0)
    if (IS("rf_id"))
      n->rf_id = int_or(av, 0);
    else if (IS("tid"))
      n->tid = int_or(av, 0);
    else if (IS("seq_id"))
      n->seq_id = int_or(av, -1);
    else if (IS("scope"))
      n->scope = (int32_t)int_or(av, 0);
    else if (IS("op_schema"))
      n->schema = str_or(c, av, "");
    else if (IS("collective_name"))
      n->coll_name = str_or(c, av, NULL);
    else if (IS("in_msg_nelems")) {
      if (!size_ok(c, av, "in_msg_nelems")) return false;
      n->in_msg_nelems = int_or(av, 0);
    } else if (IS("pg_size")) {
      n->pg_size = int_or(av, -1);
      if (av->t == 'n' && !(n->pg_size >= 1 && n->pg_size <= ET_MAX_RANKS)) {
        js_error_pos(&c->in, av->line, av->col,
                     "node #%lld: pg_size %s is not a whole number "
                     "from 1 to %d", (long long)f->n_nodes,
                     num_text(av), ET_MAX_RANKS);
        return false;
      }
      if (n->pg_size < 0) n->pg_size = 0;
    }
    else if ((IS("in_split_size") || IS("out_split_size")) && av->t == 'a' &&
             av->n_kids > n->split_n)
      n->split_n = av->n_kids; /* one split per rank of the group */
#undef IS
  }
  const jv *in = get(o, "inputs"), *out = get(o, "outputs");
  int32_t n_out_args;
  if (in && in->t == 'o') { /* 1.0.2+ */
    n->n_in_args = side(c, get(in, "values"), get(in, "shapes"),
                        get(in, "types"), get(in, "strides"), &n->in, &n->n_in);
    n_out_args = n->n_in_args < 0 ? -1
                 : side(c, get(out, "values"), get(out, "shapes"),
                        get(out, "types"), get(out, "strides"), &n->out,
                        &n->n_out);
  } else {
    n->n_in_args = side(c, in, get(o, "input_shapes"), get(o, "input_types"),
                        get(o, "input_strides"), &n->in, &n->n_in);
    n_out_args = n->n_in_args < 0 ? -1
                 : side(c, out, get(o, "output_shapes"),
                        get(o, "output_types"), get(o, "output_strides"),
                        &n->out, &n->n_out);
  }
  return n->n_in_args >= 0 && n_out_args >= 0;
}

/* ---- SAX --------------------------------------------------------------- */

/* A value event: DOM building inside a node, else the top level. */
static int on_value(read_ctx *c, char t, const char *s, size_t n, bool opens) {
  if (c->sp > 0 || (c->in_nodes && c->depth == 2)) {
    if (c->sp == 0) {
      if (t != 'o') {
        js_error_here(&c->in, "element #%lld of 'nodes' is not an object",
                      (long long)c->f->n_nodes + 1);
        return 0;
      }
      dc_arena_reset(&c->scratch);
      c->n_values = 0;
      int64_t line, col;
      js_pos_here(&c->in, &line, &col);
      c->node_line = (int32_t)(line < INT32_MAX ? line : INT32_MAX);
    }
    jv *v = dom_add(c, t, s, n);
    if (!v) return 0;
    if (opens) {
      if (c->sp == ET_MAX_DEPTH) {
        js_error_here(&c->in, "node #%lld nests deeper than %d",
                      (long long)c->f->n_nodes + 1, ET_MAX_DEPTH);
        return 0;
      }
      c->stack[c->sp++] = v;
    }
    c->key = NULL;
    c->key_n = 0;
  } else if (c->depth == 1 && c->top_map && strcmp(c->top_key, "schema") == 0) {
    if (t != 's') {
      js_error_here(&c->in, "'schema' must be a string");
      return 0;
    }
    c->f->schema = dc_arena_strndup(c->a, s, n);
  } else if (c->depth == 1 && c->top_map && strcmp(c->top_key, "pid") == 0) {
    int64_t v;
    if (t == 'n' && js_int(s, n, &v) && v >= 0) c->f->pid = v;
  } else if (c->depth == 1 && c->top_map && strcmp(c->top_key, "nodes") == 0 &&
             t != 'a') {
    js_error_here(&c->in, "'nodes' must be an array");
    return 0;
  }
  if (opens) c->depth++;
  return 1;
}

static int cb_null(void *ctx) {
  ((read_ctx *)ctx)->in.tok_len = 4;
  return on_value(ctx, 'z', NULL, 0, false);
}
static int cb_bool(void *ctx, int b) {
  ((read_ctx *)ctx)->in.tok_len = b ? 4 : 5;
  return on_value(ctx, b ? 't' : 'f', NULL, 0, false);
}
static int cb_number(void *ctx, const char *s, size_t n) {
  ((read_ctx *)ctx)->in.tok_len = n;
  return on_value(ctx, 'n', s, n, false);
}
static int cb_string(void *ctx, const unsigned char *s, size_t n) {
  ((read_ctx *)ctx)->in.tok_len = n + 2;
  return on_value(ctx, 's', (const char *)s, n, false);
}

static int cb_start_map(void *ctx) {
  read_ctx *c = ctx;
  c->in.tok_len = 1;
  if (c->depth == 0 && c->sp == 0) {
    c->top_map = true;
    c->depth++;
    return 1;
  }
  return on_value(c, 'o', NULL, 0, true);
}

static int cb_start_array(void *ctx) {
  read_ctx *c = ctx;
  c->in.tok_len = 1;
  if (c->sp == 0 && c->depth == 1 && c->top_map) {
    if (strcmp(c->top_key, "nodes") == 0) {
      c->in_nodes = c->saw_nodes = true;
      c->depth++;
      return 1;
    }
    if (strcmp(c->top_key, "traceEvents") == 0) {
      c->saw_events = true;
      return 0; /* a Kineto trace: stop reading */
    }
  }
  if (c->depth == 0 && c->sp == 0) {
    c->saw_events = true; /* a bare array: the Chrome trace form */
    return 0;
  }
  return on_value(c, 'a', NULL, 0, true);
}

static int cmp_key(const void *pa, const void *pb) {
  const jv *a = *(const jv *const *)pa, *b = *(const jv *const *)pb;
  size_t n = a->key_n < b->key_n ? a->key_n : b->key_n;
  int r = memcmp(a->key, b->key, n);
  return r ? r : (a->key_n > b->key_n) - (a->key_n < b->key_n);
}

/* An object of a node has each key once: JSON leaves a repeated key's
 * meaning open, and the reader must not pick the first or the last in
 * silence. Sorted, so a node of many keys costs n log n. */
static bool keys_unique(read_ctx *c, const jv *o) {
  if (o->t != 'o' || o->n_kids < 2) return true;
  const jv **k = dc_arena_alloc_raw(&c->scratch, (size_t)o->n_kids * sizeof *k);
  int32_t n = 0;
  for (const jv *x = o->kid; x; x = x->next)
    k[n++] = x;
  qsort(k, (size_t)n, sizeof *k, cmp_key);
  for (int32_t i = 1; i < n; i++)
    if (cmp_key(&k[i - 1], &k[i]) == 0) {
      const jv *dup = k[i - 1]->line > k[i]->line ||
                              (k[i - 1]->line == k[i]->line &&
                               k[i - 1]->col > k[i]->col)
                          ? k[i - 1]
                          : k[i];
      js_error_pos(&c->in, dup->line, dup->col,
                   "node #%lld: key '%.*s' appears twice in an object",
                   (long long)c->f->n_nodes + 1,
                   (int)(dup->key_n < 64 ? dup->key_n : 64), dup->key);
      return false;
    }
  return true;
}

static int cb_end(void *ctx) {
  read_ctx *c = ctx;
  c->in.tok_len = 1;
  c->depth--;
  if (c->sp > 0) {
    jv *v = c->stack[--c->sp];
    if (!keys_unique(c, v)) return 0;
    if (c->sp == 0) return node_done(c, v) ? 1 : 0;
    return 1;
  }
  if (c->in_nodes && c->depth == 1) c->in_nodes = false;
  return 1;
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t n) {
  read_ctx *c = ctx;
  if (c->sp > 0) {
    c->key = dc_arena_strndup(&c->scratch, (const char *)s, n);
    c->key_n = n;
  } else if (c->depth == 1 && c->top_map) {
    size_t k = n < sizeof c->top_key - 1 ? n : sizeof c->top_key - 1;
    memcpy(c->top_key, s, k);
    c->top_key[k] = '\0';
    if (n != k) c->top_key[0] = '\0';
  }
  return 1;
}

static const yajl_callbacks callbacks = {
    cb_null,      cb_bool,    NULL,   NULL,           cb_number, cb_string,
    cb_start_map, cb_map_key, cb_end, cb_start_array, cb_end};

bool et_read_file(const char *path, et_file *f, dc_arena *a, dc_diags *d) {
  memset(f, 0, sizeof *f);
  f->pid = -1;
  read_ctx c = {0};
  c.a = a;
  c.f = f;
  dc_arena_init(&c.scratch);
  js_status st = js_stream(&c.in, path, &callbacks, &c, a, d);
  f->path = c.in.path;
  bool ok = false;
  if (st == JS_FAILED) goto done;
  if (c.saw_events && !c.saw_nodes) {
    js_error_file(&c.in,
                  "pass the execution trace (the JSON that "
                  "ExecutionTraceObserver writes, with 'nodes'); the "
                  "Kineto trace of the same run goes second: "
                  "`dlrmc replay RUN.et.json KINETO.json`",
                  "this is a profiler (Kineto) trace, not an "
                  "execution trace");
    goto done;
  }
  if (!c.saw_nodes) {
    js_error_file(&c.in,
                  "expected the JSON of torch.profiler's "
                  "ExecutionTraceObserver",
                  "no 'nodes' array: not a PyTorch execution trace");
    goto done;
  }
  if (!f->schema) {
    js_error_file(&c.in, "every ExecutionTraceObserver trace names it",
                  "no 'schema': not a PyTorch execution trace");
    goto done;
  }
  if (strncmp(f->schema, "1.0.", 4) != 0 &&
      strncmp(f->schema, "1.1.", 4) != 0) {
    js_error_file(&c.in,
                  "dlrmc reads schemas 1.0.1 to 1.1.x (with or "
                  "without the -chakra.0.0.4 suffix)",
                  "unsupported execution-trace schema '%s'", f->schema);
    goto done;
  }
  ok = true;
done:
  dc_arena_free(&c.scratch);
  return ok;
}
