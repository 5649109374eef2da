/*
 * et_graph.c — execution-trace node records (et_read.c) → the dc_graph
 * graphgen builds, one rank, and the kernel each op launches
 * (spec/replay.md, "Op mapping").
 *
 * Structure. Nodes form a tree by parent id; ids grow in start order, so
 * the ops are laid out in pre-order with children sorted by id, which is
 * execution order across threads. The process and thread nodes, gloo's
 * worker scopes (`gloo:*`, filed under the wrong parent by the observer)
 * and an autograd node X inside `autograd::engine::evaluate_function: X`
 * are transparent: their children move up, and X's tensors go to the
 * evaluate_function op, as graphgen builds it. `record_param_comms` under
 * a `c10d::` op and `nccl:*` under either are absorbed into the
 * collective op (their sizes price it); `## process_group:init ##` gives
 * the group size. Threads: the smallest recorded tid is the main thread
 * (0), any other is 1.
 *
 * Tensors. One dc_tensor per recorded tensor id, index = id − 1 when the
 * ids are dense (as dlrmc's own export writes them), else in id order. A
 * transposed view that no op produces and whose storage id is a tensor of
 * swapped shape (the export's `.t()` of a weight) is that tensor.
 *
 * Kernels. Each op is mapped by name (et_map.c) from its recorded
 * arguments; a composite op (aten::linear → aten::addmm, aten::to →
 * aten::copy_) launches only when no descendant does, so a kernel is
 * counted once whatever the trace's depth. An op on the device that
 * launches nothing and that no model prices (and whose descendants do
 * not) is marked unpriced. A trace with no tensor on a GPU (recorded on
 * the CPU) is priced as if every tensor were on the device.
 *
 * One file: the structure walk, the tensor table and the kernel mapping
 * all fill one build context (bctx) in one pass; the id map at the top is
 * the piece to move out if it grows.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/et_int.h"

#define ET_EVAL "autograd::engine::evaluate_function: "

/* ---- names ------------------------------------------------------------ */

static bool is_thread_node(const et_node *n) {
  return strstr(n->name, "|thread]") != NULL && et_starts(n->name, "[pytorch|");
}

/* ---- the build context ------------------------------------------------- */

#define ET_MAX_TREE_DEPTH 512

typedef struct bctx {
  const et_file *f;
  dc_arena *a;
  dc_diags *d;
  dc_imap byid;       /* node id -> node index */
  int32_t *kid, *sib; /* children lists by node index, in id order */
  int64_t main_tid;
  bool cpu_only;
  int32_t pg_size;
  /* the ops, pre-order */
  dc_op *ops;
  const et_node **src;  /* per op: the node whose arguments it has */
  const et_node **comm; /* per op: its record_param_comms, if any */
  dc_et_op *info;
  int32_t n_ops, cap_ops;
  bool failed;
} bctx;

static const et_node *node_at(const bctx *c, int32_t i) {
  return &c->f->nodes[i];
}

/* Without strides (1.0.1), a transposed view is known by its history:
 * walking the nodes in id (start) order, aten::t / transpose / numpy_T
 * flip their input's state onto their output, any other op that is not
 * a view writes a plain tensor, and each input takes its id's state at
 * that moment (1.0.1 reuses ids as memory is reused). */
static void find_transposes(bctx *c, et_file *f, const int32_t *order) {
  dc_imap st = {0};
  for (int64_t r = 0; r < f->n_nodes; r++) {
    et_node *n = &f->nodes[order[r]];
    for (int32_t i = 0; i < n->n_in; i++)
      if (n->in[i].kind == ET_TENSOR && !n->in[i].strided)
        n->in[i].tposed = dc_imap_get(&st, n->in[i].tid) == 1;
    bool flip = strcmp(n->name, "aten::t") == 0 ||
                strcmp(n->name, "aten::transpose") == 0 ||
                strcmp(n->name, "aten::numpy_T") == 0;
    const et_val *in = et_tensor_in(n, 0), *out = et_tensor_out(n, 0);
    if (flip && in && out && out->tid != in->tid)
      dc_imap_put(&st, out->tid, in->tposed ? 0 : 1);
    else if (!flip && !et_no_kernel(n->name))
      for (int32_t i = 0; i < n->n_out; i++)
        if (n->out[i].kind == ET_TENSOR) dc_imap_put(&st, n->out[i].tid, 0);
  }
  dc_imap_free(&st);
  (void)c;
}

/* ---- structure ------------------------------------------------------------
 */

static bool is_eval_name(const char *name) {
  return et_starts(name, ET_EVAL);
}

/* "group_size": N in the init node's description of the default group. */
static int32_t group_size(const et_node *n) {
  for (int32_t i = 0; i < n->n_in; i++) {
    if (n->in[i].kind != ET_STRING) continue;
    const char *p = strstr(n->in[i].s, "\"group_size\":");
    if (!p) continue;
    long v = strtol(p + 13, NULL, 10);
    if (v > 0 && v <= ET_MAX_RANKS) return (int32_t)v;
  }
  return 0;
}

/* The rank that recorded the trace: record_param_comms lists (tensors,
 * seq, process group, rank, collective name, ...), so the Int argument
 * right before its first String; -1 when no collective says. */
static int32_t recording_rank(const et_file *f, int32_t world) {
  for (int64_t i = 0; i < f->n_nodes; i++) {
    const et_node *n = &f->nodes[i];
    if (strcmp(n->name, "record_param_comms") != 0) continue;
    for (int32_t k = 1; k < n->n_in; k++)
      if (n->in[k].kind == ET_STRING && !n->in[k].in_list) {
        const et_val *r = &n->in[k - 1];
        if (r->kind == ET_INT && !r->in_list && r->i >= 0 && r->i < world)
          return (int32_t)r->i;
        break;
      }
  }
  return -1;
}

static int32_t new_op(bctx *c, const et_node *n, int32_t parent) {
  if (c->n_ops == c->cap_ops) {
    int32_t cap = c->cap_ops ? c->cap_ops * 2 : 256;
    c->ops = dc_xrealloc(c->ops, (size_t)cap * sizeof *c->ops);
    c->src = dc_xrealloc(c->src, (size_t)cap * sizeof *c->src);
    c->comm = dc_xrealloc(c->comm, (size_t)cap * sizeof *c->comm);
    c->info = dc_xrealloc(c->info, (size_t)cap * sizeof *c->info);
    c->cap_ops = cap;
  }
  int32_t j = c->n_ops++;
  memset(&c->ops[j], 0, sizeof c->ops[j]);
  c->ops[j].name = n->name;
  c->ops[j].parent = parent;
  c->ops[j].thread = n->tid == c->main_tid ? 0 : 1;
  c->ops[j].annotation = dc_trace_is_container(n->name);
  c->src[j] = n;
  c->comm[j] = NULL;
  c->info[j] = (dc_et_op){.node_id = n->id, .rf_id = n->rf_id};
  return j;
}

/* The phase of a new op from where it sits. */
static dc_phase phase_of(const bctx *c, int32_t j) {
  const dc_op *o = &c->ops[j];
  for (int32_t p = j; p >= 0; p = c->ops[p].parent) {
    if (is_eval_name(c->ops[p].name)) return DC_PHASE_BACKWARD;
    if (et_starts(c->ops[p].name, "Optimizer.")) return DC_PHASE_OPTIMIZER;
  }
  if (o->thread != 0) return DC_PHASE_BACKWARD;
  if (c->src[j]->seq_id < 0) return DC_PHASE_INPUT;
  return strstr(o->name, "loss") || strstr(o->name, "cross_entropy")
             ? DC_PHASE_LOSS
             : DC_PHASE_FORWARD;
}

static void emit(bctx *c, int32_t ni, int32_t parent, int depth);

/* Transparent nodes: their children take their place. */
static bool transparent(const et_node *n) {
  return is_thread_node(n) || strstr(n->name, "execution_trace|process]") ||
         strstr(n->name, "execution_graph|process]") ||
         et_starts(n->name, "gloo:");
}

typedef struct nlist {
  int32_t *v;
  int32_t n, cap;
} nlist;

/* The children of ni, transparent ones replaced by theirs, recursively. */
static void gather(const bctx *c, int32_t ni, int32_t skip, nlist *l,
                   int depth) {
  for (int32_t k = c->kid[ni]; k >= 0; k = c->sib[k]) {
    if (k == skip) continue;
    if (transparent(node_at(c, k)) && depth < ET_MAX_TREE_DEPTH) {
      gather(c, k, -1, l, depth + 1);
      continue;
    }
    if (l->n == l->cap) {
      l->cap = l->cap ? l->cap * 2 : 16;
      l->v = dc_xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n++] = k;
  }
}

/* A node index with its sort key: qsort's comparator sees only the two
 * elements, so the key travels with the index (no global, so two threads
 * may import at once). Equal ids keep their order (pos). */
typedef struct id_ix {
  int64_t id;
  int32_t ix, pos;
} id_ix;

static int cmp_id(const void *pa, const void *pb) {
  const id_ix *a = pa, *b = pb;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Sorts node indices v[0..n) by their nodes' ids. */
static void sort_by_id(const et_node *nodes, int32_t *v, int32_t n) {
  if (n < 2) return;
  id_ix *k = dc_xmalloc((size_t)n * sizeof *k);
  for (int32_t i = 0; i < n; i++) k[i] = (id_ix){nodes[v[i]].id, v[i], i};
  qsort(k, (size_t)n, sizeof *k, cmp_id);
  for (int32_t i = 0; i < n; i++) v[i] = k[i].ix;
  free(k);
}

/* Emits ni's children (but `skip`) in id order: across threads and
 * transparent scopes, start order is execution order. */
static void emit_kids(bctx *c, int32_t ni, int32_t parent, int depth,
                      int32_t skip) {
  nlist l = {0};
  gather(c, ni, skip, &l, depth);
  sort_by_id(c->f->nodes, l.v, l.n);
  for (int32_t i = 0; i < l.n; i++)
    emit(c, l.v[i], parent, depth + 1);
  free(l.v);
}

static void emit(bctx *c, int32_t ni, int32_t parent, int depth) {
  const et_node *n = node_at(c, ni);
  if (c->failed) return;
  if (depth > ET_MAX_TREE_DEPTH) {
    dc_source *src = dc_arena_alloc(c->a, sizeof *src);
    src->path = c->f->path;
    src->text = "";
    dc_diag_error(c->d, DC_DIAG_BAD_TRACE, (dc_span){src, 0, 0, 0},
                  "node %lld: the ops nest deeper than %d", (long long)n->id,
                  ET_MAX_TREE_DEPTH);
    c->failed = true;
    return;
  }
  if (strcmp(n->name, "## process_group:init ##") == 0) {
    int32_t gs = group_size(n);
    if (gs > 0) c->pg_size = gs;
    return;
  }
  if (transparent(n)) {
    emit_kids(c, ni, parent, depth, -1);
    return;
  }
  int32_t j = new_op(c, n, parent);
  int32_t skip = -1;
  if (is_eval_name(n->name)) { /* fold the autograd node X */
    const char *x = n->name + strlen(ET_EVAL);
    for (int32_t k = c->kid[ni]; k >= 0; k = c->sib[k])
      if (strcmp(node_at(c, k)->name, x) == 0) {
        skip = k;
        c->src[j] = node_at(c, k);
        break;
      }
  } else if (et_starts(n->name, "c10d::")) { /* absorb record_param_comms */
    for (int32_t k = c->kid[ni]; k >= 0; k = c->sib[k])
      if (strcmp(node_at(c, k)->name, "record_param_comms") == 0) {
        skip = k;
        c->comm[j] = node_at(c, k);
        break;
      }
  } else if (strcmp(n->name, "record_param_comms") == 0) {
    c->comm[j] = n;
  }
  c->ops[j].phase = phase_of(c, j);
  if (skip >= 0 && is_eval_name(n->name)) {
    /* X's children, then the evaluate_function's others */
    emit_kids(c, skip, j, depth, -1);
    emit_kids(c, ni, j, depth, skip);
  } else if (c->comm[j]) {
    /* the nccl: kernel node(s) are the collective's own */
    nlist l = {0};
    gather(c, ni, skip, &l, depth);
    for (int32_t i = 0; i < l.n; i++)
      if (!et_starts(node_at(c, l.v[i])->name, "nccl:"))
        emit(c, l.v[i], j, depth + 1);
    free(l.v);
  } else {
    emit_kids(c, ni, j, depth, skip);
  }
  c->ops[j].end = c->n_ops;
}

/* ---- tensors ------------------------------------------------------------- */

/* A recorded tensor id can name several tensors over a trace (1.0.1
 * reuses ids with the memory); a dc_tensor is one (id, shape, element
 * size), keyed by their hash. */
static int64_t tkey(const et_val *v) {
  uint64_t h = DC_FNV1A_INIT;
  uint64_t x[2 + ET_MAX_DIMS] = {(uint64_t)v->tid,
                                 (uint64_t)v->ndim << 8 | v->esize};
  for (int32_t d = 0; d < v->ndim; d++)
    x[2 + d] = (uint64_t)v->shape[d];
  for (int32_t i = 0; i < 2 + v->ndim; i++)
    h = dc_fnv1a_word(h, x[i]);
  return (int64_t)(h >> 1);
}

typedef struct tctx {
  dc_imap produced; /* tensor ids some op outputs */
  dc_imap by_tid;   /* tensor id -> its first value (index into vals) */
  dc_imap by_key;   /* tkey -> its first value */
  dc_imap by_store; /* skey (storage, shape, size) -> its first value */
  const et_val **vals;
  int32_t n_vals, cap_vals;
  int64_t max_plain; /* the largest id of a tensor that is no view */
} tctx;

/* A tensor by its storage and shape (the base of a view). */
static int64_t skey(int64_t sid, const int64_t *shape, int32_t nd, int esize) {
  et_val x = {.tid = sid, .ndim = (int8_t)nd, .esize = (uint8_t)esize};
  memcpy(x.shape, shape, (size_t)nd * sizeof *shape);
  return tkey(&x) ^ 0x5bd1e995;
}

static void see(tctx *t, const et_val *v, bool out) {
  if (v->kind != ET_TENSOR) return;
  if (out) dc_imap_put(&t->produced, v->tid, 1);
  int64_t k = tkey(v);
  if (dc_imap_get(&t->by_key, k) >= 0) return;
  if (t->n_vals == t->cap_vals) {
    t->cap_vals = t->cap_vals ? t->cap_vals * 2 : 1024;
    t->vals = dc_xrealloc(t->vals, (size_t)t->cap_vals * sizeof *t->vals);
  }
  dc_imap_put(&t->by_key, k, t->n_vals);
  if (dc_imap_get(&t->by_tid, v->tid) < 0)
    dc_imap_put(&t->by_tid, v->tid, t->n_vals);
  int64_t sk = skey(v->sid, v->shape, v->ndim, v->esize);
  if (dc_imap_get(&t->by_store, sk) < 0)
    dc_imap_put(&t->by_store, sk, t->n_vals);
  t->vals[t->n_vals++] = v;
}

/* The base of a transposed view that no op produces: a tensor on the
 * same storage with the last two dims and strides swapped (an export's
 * view); NULL for anything else. */
static const et_val *view_base(const tctx *t, const et_val *v) {
  int32_t nd = v->ndim;
  if (nd < 2 || !v->strided || v->tid == v->sid ||
      dc_imap_get(&t->produced, v->tid) >= 0)
    return NULL;
  int64_t sh[ET_MAX_DIMS];
  memcpy(sh, v->shape, sizeof sh);
  sh[nd - 1] = v->shape[nd - 2];
  sh[nd - 2] = v->shape[nd - 1];
  int32_t b = dc_imap_get(&t->by_store, skey(v->sid, sh, nd, v->esize));
  if (b < 0) return NULL;
  const et_val *w = t->vals[b];
  if (w == v || !w->strided || w->stride[nd - 1] != v->stride[nd - 2] ||
      w->stride[nd - 2] != v->stride[nd - 1] || w->offset != v->offset)
    return NULL;
  for (int32_t d = 0; d < nd - 2; d++)
    if (w->stride[d] != v->stride[d]) return NULL;
  return w;
}

/* The value a value stands for: the base of an operand's `.t()` (ids
 * above every other tensor's, made by the export), else itself. */
static const et_val *resolve(const tctx *t, const et_val *v) {
  const et_val *w = view_base(t, v);
  return w && (t->max_plain == 0 || v->tid > t->max_plain) ? w : v;
}

static void fill_tensor(bctx *c, dc_tensor *x, int32_t idx, const et_val *v) {
  x->id = idx;
  x->dtype = v->dtype;
  x->producer = -1;
  x->on_host = !v->cuda && !c->cpu_only;
  int32_t nd = v->ndim,
          lead = nd > DC_TENSOR_MAX_DIMS ? nd - DC_TENSOR_MAX_DIMS + 1 : 1;
  /* more than 4 dims: the leading ones fold into the first */
  x->ndim = nd < DC_TENSOR_MAX_DIMS ? nd : DC_TENSOR_MAX_DIMS;
  if (nd == 0) return;
  x->shape[0] = et_rows_of(v, 0, lead);
  for (int32_t d = 1; d < x->ndim; d++)
    x->shape[d] = v->shape[lead + d - 1];
}

/* Assigns tensor indices and fills g's tensors and the ops' lists:
 * index = id - 1 when every id names one tensor and the ids are dense
 * (dlrmc's export), else in order of first appearance. */
static void build_tensors(bctx *c, dc_graph *g) {
  tctx t = {0};
  for (int32_t j = 0; j < c->n_ops; j++) {
    const et_node *n = c->src[j];
    for (int32_t i = 0; i < n->n_out; i++)
      see(&t, &n->out[i], true);
    for (int32_t i = 0; i < n->n_in; i++)
      see(&t, &n->in[i], false);
  }
  dc_imap idx = {0}, ids = {0};
  /* A transposed view no op produces is the export's: its `.t()` of an
   * operand (ids above every tensor's: the same tensor) or a tensor of the
   * graph (gg_t_view: a tensor of its own, view_of its base). */
  int64_t max_plain = 0;
  for (int32_t i = 0; i < t.n_vals; i++)
    if (resolve(&t, t.vals[i]) == t.vals[i] && t.vals[i]->tid > max_plain)
      max_plain = t.vals[i]->tid;
  t.max_plain = max_plain;
  int64_t max_id = 0, min_id = INT64_MAX, n_keys = 0;
  bool unique = true;
  for (int32_t i = 0; i < t.n_vals; i++) {
    const et_val *v = t.vals[i];
    if (resolve(&t, v) != v) continue;
    n_keys++;
    if (dc_imap_get(&ids, v->tid) >= 0) unique = false;
    dc_imap_put(&ids, v->tid, 1);
    if (v->tid > max_id) max_id = v->tid;
    if (v->tid < min_id) min_id = v->tid;
  }
  bool dense =
      unique && n_keys > 0 && min_id >= 1 && max_id <= 4 * n_keys + 4096;
  int32_t n_t = dense ? (int32_t)max_id : (int32_t)n_keys;
  g->n_tensors = n_t;
  g->tensors = dc_arena_array(c->a, (size_t)n_t + 1, sizeof *g->tensors);
  for (int32_t i = 0; i < n_t; i++) {
    g->tensors[i].id = i;
    g->tensors[i].producer = -1;
  }
  int32_t next = 0;
  for (int32_t i = 0; i < t.n_vals; i++) {
    const et_val *v = t.vals[i];
    if (resolve(&t, v) != v) continue;
    int32_t k = dense ? (int32_t)(v->tid - 1) : next++;
    dc_imap_put(&idx, tkey(v), k);
    fill_tensor(c, &g->tensors[k], k, v);
  }
  for (int32_t i = 0; i < t.n_vals; i++) { /* the views' bases */
    const et_val *v = t.vals[i];
    const et_val *w = view_base(&t, v);
    int32_t k = dc_imap_get(&idx, tkey(v));
    int32_t b = w ? dc_imap_get(&idx, tkey(w)) : -1;
    if (w && k >= 0 && b >= 0) g->tensors[k].view_of = b + 1;
  }
  for (int32_t j = 0; j < c->n_ops; j++) {
    const et_node *n = c->src[j];
    dc_op *o = &c->ops[j];
    int32_t *ins = dc_arena_array(c->a, (size_t)n->n_in + 1, sizeof *ins);
    int32_t *outs = dc_arena_array(c->a, (size_t)n->n_out + 1, sizeof *outs);
    int32_t l0 = -1, l1 = -1, n0 = 0, n1 = 0, plain = 0;
    for (int32_t i = 0; i < n->n_in; i++) {
      const et_val *v = &n->in[i];
      if (v->kind != ET_TENSOR) continue;
      if (!v->in_list)
        plain++;
      else if (l0 < 0 || v->arg == l0)
        l0 = v->arg, n0++;
      else if (l1 < 0 || v->arg == l1)
        l1 = v->arg, n1++;
      else
        plain++;
    }
    if (plain == 0 && l1 >= 0 && n0 == n1) {
      /* two lists of one length (_foreach_add_(params, grads)): pairs, as
       * graphgen lists them */
      int32_t a = 0, b = 0;
      for (int32_t k = 0; k < n0; k++) {
        while (n->in[a].kind != ET_TENSOR || n->in[a].arg != l0)
          a++;
        while (n->in[b].kind != ET_TENSOR || n->in[b].arg != l1)
          b++;
        ins[o->n_inputs++] = dc_imap_get(&idx, tkey(resolve(&t, &n->in[a++])));
        ins[o->n_inputs++] = dc_imap_get(&idx, tkey(resolve(&t, &n->in[b++])));
      }
    } else {
      for (int32_t i = 0; i < n->n_in; i++)
        if (n->in[i].kind == ET_TENSOR)
          ins[o->n_inputs++] = dc_imap_get(&idx, tkey(resolve(&t, &n->in[i])));
    }
    for (int32_t i = 0; i < n->n_out; i++)
      if (n->out[i].kind == ET_TENSOR)
        outs[o->n_outputs++] = dc_imap_get(&idx, tkey(resolve(&t, &n->out[i])));
    o->inputs = ins;
    o->outputs = outs;
  }
  /* producers: the first op that outputs a tensor, or its descendant that
   * lists it too (the innermost one computes it) */
  for (int32_t j = 0; j < c->n_ops; j++)
    for (int32_t i = 0; i < c->ops[j].n_outputs; i++) {
      int32_t x = c->ops[j].outputs[i];
      if (x < 0) continue;
      int32_t p = g->tensors[x].producer;
      if (p < 0 || (p < j && j < c->ops[p].end)) g->tensors[x].producer = j;
    }
  dc_imap_free(&idx);
  dc_imap_free(&ids);
  dc_imap_free(&t.produced);
  dc_imap_free(&t.by_tid);
  dc_imap_free(&t.by_key);
  dc_imap_free(&t.by_store);
  free(t.vals);
}

/* ---- kernels ------------------------------------------------------------- */

/* Adds a tensor's bytes to *sum, and checks its shape's elements; false
 * past ET_MAX_OP_BYTES. */
static bool tensor_bytes(const et_val *v, int64_t *sum) {
  if (v->kind != ET_TENSOR) return true;
  int64_t b, elems = 1;
  for (int32_t d = 0; d < v->ndim; d++)
    if (!dc_mul_i64(elems, v->shape[d], &elems) || elems > ET_MAX_OP_BYTES)
      return false;
  return dc_mul_i64(v->numel, v->esize, &b) && dc_add_i64(*sum, b, sum) &&
         *sum <= ET_MAX_OP_BYTES;
}

/* The sizes of op j's node (and the comms node absorbed into it) stay
 * within ET_MAX_OP_BYTES; else E0703 at the node. */
static bool op_sizes_ok(bctx *c, int32_t j) {
  int64_t sum = 0;
  bool ok = true;
  for (int k = 0; k < 2 && ok; k++) {
    const et_node *n = k == 0 ? c->src[j] : c->comm[j];
    if (!n) continue;
    for (int32_t i = 0; i < n->n_in && ok; i++)
      ok = tensor_bytes(&n->in[i], &sum);
    for (int32_t i = 0; i < n->n_out && ok; i++)
      ok = tensor_bytes(&n->out[i], &sum);
    if (ok && n->in_msg_nelems > 0) {
      const et_val *t0 = et_tensor_in(n, 0);
      int64_t b;
      ok = dc_mul_i64(n->in_msg_nelems, t0 ? t0->esize : 1, &b) &&
           dc_add_i64(sum, b, &sum) && sum <= ET_MAX_OP_BYTES;
    }
  }
  if (ok) return true;
  dc_source *src = dc_arena_alloc(c->a, sizeof *src);
  src->path = c->f->path;
  src->text = "";
  dc_diag *g = dc_diag_error(
      c->d, DC_DIAG_NON_FINITE, (dc_span){src, c->src[j]->line, 1, 0},
      "op '%s' (node %lld): its tensors' bytes (numel x element size, "
      "inputs and outputs) or a shape's elements pass 2^62",
      c->ops[j].name, (long long)c->src[j]->id);
  dc_diag_set_help(g, "no GPU holds such a tensor; is the trace's numel or "
                      "shape corrupt?");
  return false;
}

/* The embedding backward as newer PyTorch records it: the autograd node
 * `CppNode<SplitLookupFunction_<optimizer>_Op...>` (folded into its
 * evaluate_function op) with no FBGEMM backward op beneath it. Its
 * kernel is the backward of the lookup it differentiates — the forward
 * FBGEMM lookup with its sequence number — with the fused optimizer of
 * its name. */
static void tbe_backward(bctx *c, et_mapped *m) {
  dc_imap fwd = {0}; /* sequence number -> its forward lookup op */
  for (int32_t j = 0; j < c->n_ops; j++) {
    const et_node *x = c->src[j];
    if (m[j].n > 0 && m[j].k.kind == DC_KERNEL_EMBEDDING_FWD &&
        et_is_tbe_composite(c->ops[j].name) && x->seq_id >= 0)
      dc_imap_put(&fwd, x->seq_id, j);
    int32_t p = c->ops[j].parent;
    if (m[j].n > 0 || x->seq_id < 0 ||
        !strstr(c->ops[j].name, "CppNode<SplitLookupFunction_") ||
        (p >= 0 && strstr(c->ops[p].name, "CppNode<SplitLookupFunction_")))
      continue;
    int64_t f = dc_imap_get(&fwd, x->seq_id);
    if (f < 0) continue;
    m[j] = m[f];
    m[j].k.kind = DC_KERNEL_EMBEDDING_BWD;
    m[j].k.u.emb.optimizer = et_tbe_optimizer(c->ops[j].name);
    m[j].k.u.emb.fused_optimizer = true;
  }
  dc_imap_free(&fwd);
}

/* Maps every op, then keeps a composite op's launch only when no
 * descendant launches (is_composite), and marks an op unpriced only when
 * nothing beneath it launches or is unpriced. False after E0703 (an op's
 * sizes past ET_MAX_OP_BYTES). */
static bool build_kernels(bctx *c, dc_et_graph *out) {
  int32_t n = c->n_ops;
  et_mapped *m = dc_xcalloc((size_t)n + 1, sizeof *m);
  et_map_ctx mc = {c->a, c->cpu_only, c->pg_size};
  bool *below = dc_xcalloc((size_t)n + 1, sizeof *below); /* launch/unpriced
                                                             beneath */
  for (int32_t j = 0; j < n; j++) {
    if (!op_sizes_ok(c, j)) {
      free(m);
      free(below);
      return false;
    }
    m[j] = et_map_op(&mc, c->ops[j].name, c->ops[j].annotation, c->src[j],
                     c->comm[j]);
  }
  tbe_backward(c, m);
  bool *below_emb = dc_xcalloc((size_t)n + 1, sizeof *below_emb);
  bool comm = false;
  for (int32_t j = n - 1; j >= 0; j--) {
    dc_op *o = &c->ops[j];
    /* an FBGEMM lookup counts only an embedding kernel beneath it: a
     * 1-element zero_ or fill_ its children launch is not its kernel */
    bool under = et_is_tbe_composite(o->name) ? below_emb[j] : below[j];
    bool here = (m[j].n > 0 && !et_is_composite(o->name, m[j].k.kind)) ||
                (!under && (m[j].n > 0 || m[j].unknown));
    if (here && m[j].n > 0) {
      o->n_launches = 1;
      o->launches = dc_arena_alloc(c->a, sizeof *o->launches);
      o->launches[0].k = m[j].k;
      bool coll = dc_kernel_is_collective(m[j].k.kind);
      comm = comm || coll;
      o->launches[0].stream = coll ? 1 : 0;
      dc_kernel_kind k = m[j].k.kind;
      o->launches[0].runtime = k == DC_KERNEL_MEMCPY_H2D ||
                                       k == DC_KERNEL_MEMCPY_D2H ||
                                       k == DC_KERNEL_MEMCPY_D2D
                                   ? "cudaMemcpyAsync"
                                   : "cudaLaunchKernel";
      o->host_sync = m[j].sync;
    } else if (here) {
      c->info[j].unpriced = true;
      out->n_unpriced++;
    } else if (m[j].n > 0) {
      c->info[j].has_whole = true;
      c->info[j].whole = m[j].k;
    }
    if (o->parent >= 0 && (below[j] || here)) below[o->parent] = true;
    if (o->parent >= 0 &&
        (below_emb[j] ||
         (here && m[j].n > 0 &&
          (m[j].k.kind == DC_KERNEL_EMBEDDING_FWD ||
           m[j].k.kind == DC_KERNEL_EMBEDDING_BWD))))
      below_emb[o->parent] = true;
  }
  free(below_emb);
  /* the collectives' ids in launch order */
  int32_t id = 0;
  for (int32_t j = 0; j < n; j++)
    if (c->ops[j].n_launches &&
        dc_kernel_is_collective(c->ops[j].launches[0].k.kind))
      c->ops[j].launches[0].k.u.coll.coll_id = id++;
  out->g->n_streams = comm ? 2 : 1;
  free(m);
  free(below);
  return true;
}

/* ---- the graph ------------------------------------------------------------
 */

/* Every node must hang below a root (a node with no known parent or its
 * own): a node whose parent chain loops (a ↔ b, a process node whose
 * parent is its own thread) would never be emitted, and its ops would
 * vanish without a word. The nodes reached from the roots are marked;
 * the first unmarked one in id order leads, by its parents, into the
 * loop, which the diagnostic spells out. */
static bool check_cycles(bctx *c, const int32_t *roots, int32_t n_roots,
                         const int32_t *order) {
  size_t nn = (size_t)c->f->n_nodes;
  uint8_t *seen = dc_xcalloc(nn + 1, 1);
  int32_t *stack = dc_xmalloc((nn + 1) * sizeof *stack);
  size_t sp = 0, reached = 0;
  for (int32_t r = 0; r < n_roots; r++) {
    stack[sp++] = roots[r];
    seen[roots[r]] = 1;
  }
  while (sp > 0) {
    int32_t i = stack[--sp];
    reached++;
    for (int32_t k = c->kid[i]; k >= 0; k = c->sib[k])
      if (!seen[k]) seen[k] = 1, stack[sp++] = k;
  }
  bool ok = reached == nn;
  if (!ok) {
    int32_t i = -1;
    for (size_t r = 0; r < nn && i < 0; r++)
      if (!seen[order[r]]) i = order[r];
    /* walk up until a node repeats (2: on this walk): the loop's start */
    while (seen[i] != 2) {
      seen[i] = 2;
      i = dc_imap_get(&c->byid, c->f->nodes[i].parent);
    }
    dc_buf loop = {0};
    int32_t j = i, len = 0;
    do {
      if (len < 6)
        dc_buf_printf(&loop, "%lld (line %d) -> ",
                      (long long)c->f->nodes[j].id, (int)c->f->nodes[j].line);
      len++;
      j = dc_imap_get(&c->byid, c->f->nodes[j].parent);
    } while (j != i);
    dc_buf_printf(&loop, len > 6 ? "... -> %lld" : "%lld",
                  (long long)c->f->nodes[i].id);
    dc_source *src = dc_arena_alloc(c->a, sizeof *src);
    src->path = c->f->path;
    src->text = "";
    dc_diag_error(c->d, DC_DIAG_BAD_TRACE, (dc_span){src, 0, 0, 0},
                  "%zu nodes are not below a root: parent ids loop: %s",
                  nn - reached, loop.data);
    dc_buf_free(&loop);
  }
  free(seen);
  free(stack);
  return ok;
}

bool et_build_graph(et_file *f, dc_et_graph *out, dc_arena *a, dc_diags *d) {
  memset(out, 0, sizeof *out);
  bctx c = {.f = f, .a = a, .d = d, .cpu_only = !f->any_cuda, .pg_size = 0};
  size_t nn = (size_t)f->n_nodes;
  c.kid = dc_xmalloc((nn + 1) * sizeof *c.kid);
  c.sib = dc_xmalloc((nn + 1) * sizeof *c.sib);
  int32_t *order = dc_xmalloc((nn + 1) * sizeof *order);
  int32_t *last = dc_xmalloc((nn + 1) * sizeof *last);
  bool ok = false;
  for (size_t i = 0; i < nn; i++) {
    c.kid[i] = c.sib[i] = last[i] = -1;
    order[i] = (int32_t)i;
    if (dc_imap_get(&c.byid, f->nodes[i].id) >= 0) {
      dc_source *src = dc_arena_alloc(a, sizeof *src);
      src->path = f->path;
      src->text = "";
      dc_diag_error(d, DC_DIAG_BAD_TRACE, (dc_span){src, 0, 0, 0},
                    "two nodes have id %lld", (long long)f->nodes[i].id);
      goto done;
    }
    dc_imap_put(&c.byid, f->nodes[i].id, (int32_t)i);
  }
  sort_by_id(f->nodes, order, (int32_t)nn); /* nodes in id order */
  c.main_tid = INT64_MAX;
  for (size_t i = 0; i < nn; i++) {
    const et_node *n = &f->nodes[i];
    if (is_thread_node(n) && n->tid < c.main_tid) c.main_tid = n->tid;
  }
  for (size_t i = 0; c.main_tid == INT64_MAX && i < nn; i++)
    if (f->nodes[i].tid < c.main_tid) c.main_tid = f->nodes[i].tid;
  /* children lists in id order; roots: no known parent or their own */
  int32_t *roots = dc_xmalloc((nn + 1) * sizeof *roots);
  int32_t n_roots = 0;
  for (size_t r = 0; r < nn; r++) {
    int32_t i = order[r];
    const et_node *n = &f->nodes[i];
    int32_t p = n->parent == n->id ? -1 : dc_imap_get(&c.byid, n->parent);
    if (p < 0) {
      roots[n_roots++] = i;
      continue;
    }
    if (last[p] < 0)
      c.kid[p] = i;
    else
      c.sib[last[p]] = i;
    last[p] = i;
  }
  if (!check_cycles(&c, roots, n_roots, order)) {
    free(roots);
    goto done;
  }
  find_transposes(&c, f, order);
  { /* the roots' ops (through the process and thread nodes) by id */
    nlist l = {0};
    for (int32_t r = 0; r < n_roots; r++) {
      if (transparent(&f->nodes[roots[r]])) {
        gather(&c, roots[r], -1, &l, 0);
        continue;
      }
      if (l.n == l.cap) {
        l.cap = l.cap ? l.cap * 2 : 16;
        l.v = dc_xrealloc(l.v, (size_t)l.cap * sizeof *l.v);
      }
      l.v[l.n++] = roots[r];
    }
    sort_by_id(f->nodes, l.v, l.n);
    for (int32_t i = 0; i < l.n; i++)
      emit(&c, l.v[i], -1, 0);
    free(l.v);
  }
  free(roots);
  if (c.failed) goto done;
  if (c.pg_size <= 0) c.pg_size = 1;

  dc_graph *g = dc_arena_alloc(a, sizeof *g);
  out->g = g;
  g->n_ranks = 1;
  if (c.pg_size > 1) {
    g->world_ranks = c.pg_size;
    int32_t rank = recording_rank(f, c.pg_size);
    g->rank_base = rank >= 0 ? rank : 0;
    out->rank = rank;
  }
  g->n_ops = c.n_ops;
  g->ops = dc_arena_array(a, (size_t)c.n_ops + 1, sizeof *g->ops);
  if (c.n_ops) memcpy(g->ops, c.ops, (size_t)c.n_ops * sizeof *g->ops);
  g->rank_first = dc_arena_array(a, 2, sizeof *g->rank_first);
  g->rank_first[1] = c.n_ops;
  out->ops = dc_arena_array(a, (size_t)c.n_ops + 1, sizeof *out->ops);
  out->schema = f->schema;
  out->cpu_only = c.cpu_only;
  out->pg_size = c.pg_size;
  out->n_nodes = f->n_nodes;
  out->n_device = f->n_device;
  out->pid = f->pid;
  if (c.pg_size <= 1) out->rank = -1;
  free(c.ops); /* the build works on the graph's copy from here */
  c.ops = g->ops;
  build_tensors(&c, g);
  if (!build_kernels(&c, out)) {
    c.ops = NULL; /* the graph's, in the arena */
    goto done;
  }
  if (c.n_ops) memcpy(out->ops, c.info, (size_t)c.n_ops * sizeof *out->ops);
  c.ops = NULL;
  ok = true;
done:
  free(c.ops);
  free(c.src);
  free(c.comm);
  free(c.info);
  free(c.kid);
  free(c.sib);
  free(order);
  free(last);
  dc_imap_free(&c.byid);
  return ok;
}

bool dc_et_import(const char *path, dc_et_graph *out, dc_arena *a,
                  dc_diags *d) {
  et_file f;
  memset(out, 0, sizeof *out);
  if (!et_read_file(path, &f, a, d)) return false;
  return et_build_graph(&f, out, a, d);
}

static int cmp_count(const void *pa, const void *pb) {
  const dc_op *const *a = pa, *const *b = pb;
  return strcmp((*a)->name, (*b)->name);
}

void dc_et_unpriced_write(const dc_et_graph *e, dc_buf *out) {
  const dc_graph *g = e->g;
  const dc_op **u = dc_xmalloc(((size_t)e->n_unpriced + 1) * sizeof *u);
  int32_t n = 0;
  for (int32_t j = 0; j < g->n_ops; j++)
    if (e->ops[j].unpriced) u[n++] = &g->ops[j];
  qsort(u, (size_t)n, sizeof *u, cmp_count);
  for (int32_t i = 0; i < n;) {
    int32_t k = i;
    while (k < n && strcmp(u[k]->name, u[i]->name) == 0)
      k++;
    dc_buf_printf(out, "%6d  %s\n", k - i, u[i]->name);
    i = k;
  }
  free(u);
}
