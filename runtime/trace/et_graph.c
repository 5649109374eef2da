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
 * Kernels. Each op is mapped by name (map_op) from its recorded
 * arguments; a composite op (aten::linear → aten::addmm, aten::to →
 * aten::copy_) launches only when no descendant does, so a kernel is
 * counted once whatever the trace's depth. An op on the device that
 * launches nothing and that no model prices (and whose descendants do
 * not) is marked unpriced. A trace with no tensor on a GPU (recorded on
 * the CPU) is priced as if every tensor were on the device.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/et_int.h"

#define ET_EVAL "autograd::engine::evaluate_function: "

/* ---- an int64 → int32 map (open addressing) --------------------------- */

typedef struct imap {
  int64_t *key;
  int32_t *val;
  size_t cap, n;
} imap;

static void imap_put(imap *m, int64_t k, int32_t v) {
  if ((m->n + 1) * 2 > m->cap) {
    imap old = *m;
    m->cap = old.cap ? old.cap * 2 : 1024;
    m->key = dc_xmalloc(m->cap * sizeof *m->key);
    m->val = dc_xmalloc(m->cap * sizeof *m->val);
    for (size_t i = 0; i < m->cap; i++)
      m->val[i] = -1;
    m->n = 0;
    for (size_t i = 0; i < old.cap; i++)
      if (old.val[i] >= 0) imap_put(m, old.key[i], old.val[i]);
    free(old.key);
    free(old.val);
  }
  size_t i = ((uint64_t)k * 11400714819323198485ull) & (m->cap - 1);
  while (m->val[i] >= 0 && m->key[i] != k)
    i = (i + 1) & (m->cap - 1);
  if (m->val[i] < 0) m->n++;
  m->key[i] = k;
  m->val[i] = v;
}

static int32_t imap_get(const imap *m, int64_t k) {
  if (!m->cap) return -1;
  size_t i = ((uint64_t)k * 11400714819323198485ull) & (m->cap - 1);
  while (m->val[i] >= 0) {
    if (m->key[i] == k) return m->val[i];
    i = (i + 1) & (m->cap - 1);
  }
  return -1;
}

static void imap_free(imap *m) {
  free(m->key);
  free(m->val);
}

/* ---- names ------------------------------------------------------------ */

static bool starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool in_list(const char *name, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(name, list[i]) == 0) return true;
  return false;
}

static bool is_thread_node(const et_node *n) {
  return strstr(n->name, "|thread]") != NULL && starts(n->name, "[pytorch|");
}

/* Ops that launch nothing: views, metadata, allocation, autograd
 * bookkeeping. */
static bool no_kernel(const char *name) {
  static const char *const names[] = {
      "aten::view",
      "aten::reshape",
      "aten::_reshape_alias",
      "aten::_unsafe_view",
      "aten::t",
      "aten::transpose",
      "aten::permute",
      "aten::numpy_T",
      "aten::expand",
      "aten::expand_as",
      "aten::as_strided",
      "aten::squeeze",
      "aten::unsqueeze",
      "aten::select",
      "aten::slice",
      "aten::narrow",
      "aten::split",
      "aten::split_with_sizes",
      "aten::chunk",
      "aten::unbind",
      "aten::detach",
      "aten::detach_",
      "aten::alias",
      "aten::lift_fresh",
      "aten::empty",
      "aten::empty_like",
      "aten::empty_strided",
      "aten::new_empty",
      "aten::new_empty_strided",
      "aten::resize_",
      "aten::flatten",
      "aten::unflatten",
      "aten::resolve_conj",
      "aten::resolve_neg",
      "aten::set_",
      "aten::record_stream",
      "aten::broadcast_tensors",
      "aten::size",
      "aten::stride",
      "aten::is_nonzero",
      "aten::result_type",
      "aten::can_cast",
      "aten::_has_compatible_shallow_copy_type",
      "aten::_nested_tensor_from_mask_left_aligned",
      "aten::requires_grad_",
      "aten::_to_dense",
      "aten::_coalesced_",
      "aten::_indices",
      "aten::_values",
      "aten::sparse_coo_tensor",
      "aten::_sparse_coo_tensor_unsafe",
      "aten::_sparse_coo_tensor_with_dims_and_tensors",
      "aten::values",
      "aten::indices",
      "aten::is_same_size",
      "aten::equal",
      "torch::autograd::AccumulateGrad",
      "detach",
      "detach_"};
  return in_list(name, names, DC_COUNTOF(names));
}

static bool is_elementwise(const char *n) {
  static const char *const names[] = {"aten::add",
                                      "aten::add_",
                                      "aten::sub",
                                      "aten::sub_",
                                      "aten::mul",
                                      "aten::mul_",
                                      "aten::div",
                                      "aten::div_",
                                      "aten::relu",
                                      "aten::relu_",
                                      "aten::clamp_min",
                                      "aten::clamp_min_",
                                      "aten::clamp",
                                      "aten::clamp_",
                                      "aten::threshold_backward",
                                      "aten::sigmoid",
                                      "aten::sigmoid_",
                                      "aten::sigmoid_backward",
                                      "aten::tanh",
                                      "aten::tanh_",
                                      "aten::tanh_backward",
                                      "aten::exp",
                                      "aten::exp_",
                                      "aten::log",
                                      "aten::log_",
                                      "aten::neg",
                                      "aten::neg_",
                                      "aten::pow",
                                      "aten::pow_",
                                      "aten::sqrt",
                                      "aten::sqrt_",
                                      "aten::rsqrt",
                                      "aten::reciprocal",
                                      "aten::abs",
                                      "aten::sign",
                                      "aten::where",
                                      "aten::fill_",
                                      "aten::zero_",
                                      "aten::uniform_",
                                      "aten::normal_",
                                      "aten::bernoulli_",
                                      "aten::native_dropout",
                                      "aten::native_dropout_backward",
                                      "aten::gelu",
                                      "aten::gelu_backward",
                                      "aten::silu",
                                      "aten::silu_backward",
                                      "aten::addcmul_",
                                      "aten::addcdiv_",
                                      "aten::addcmul",
                                      "aten::addcdiv",
                                      "aten::lerp_",
                                      "aten::maximum",
                                      "aten::minimum",
                                      "aten::masked_fill_",
                                      "aten::mse_loss_backward",
                                      "aten::binary_cross_entropy_backward",
                                      "aten::hardtanh",
                                      "aten::hardtanh_",
                                      "aten::leaky_relu",
                                      "aten::softplus",
                                      "aten::eq",
                                      "aten::ne",
                                      "aten::lt",
                                      "aten::gt",
                                      "aten::le",
                                      "aten::ge",
                                      "aten::logical_and",
                                      "aten::logical_or",
                                      "aten::logical_not",
                                      "aten::floor",
                                      "aten::ceil",
                                      "aten::round",
                                      "aten::sin",
                                      "aten::cos",
                                      "aten::erf",
                                      "aten::nll_loss_backward",
                                      "aten::index",
                                      "aten::index_select",
                                      "aten::gather",
                                      "aten::scatter_add_",
                                      "aten::index_put_",
                                      "aten::_index_put_impl_",
                                      "aten::index_add_",
                                      "aten::arange",
                                      "aten::zeros",
                                      "aten::ones",
                                      "aten::full",
                                      "aten::rand",
                                      "aten::randn",
                                      "aten::tril",
                                      "aten::triu",
                                      "aten::zeros_like",
                                      "aten::ones_like",
                                      "aten::full_like",
                                      "aten::new_zeros",
                                      "aten::new_ones",
                                      "aten::masked_select",
                                      "aten::_foreach_add_",
                                      "aten::_foreach_mul_",
                                      "aten::_foreach_addcmul_",
                                      "aten::_foreach_addcdiv_",
                                      "aten::_foreach_sqrt",
                                      "aten::_foreach_div_",
                                      "aten::_foreach_lerp_",
                                      "aten::_foreach_add",
                                      "aten::_foreach_zero_",
                                      "aten::_fused_adam_",
                                      "aten::_fused_adamw_",
                                      "aten::_fused_sgd_",
                                      "fbgemm::asynchronous_complete_cumsum",
                                      "fbgemm::bounds_check_indices",
                                      "fbgemm::permute_2D_sparse_data"};
  return in_list(n, names, DC_COUNTOF(names));
}

static bool is_reduce(const char *n) {
  static const char *const names[] = {"aten::sum",
                                      "aten::mean",
                                      "aten::amax",
                                      "aten::amin",
                                      "aten::max",
                                      "aten::min",
                                      "aten::norm",
                                      "aten::linalg_vector_norm",
                                      "aten::var",
                                      "aten::std",
                                      "aten::cumsum",
                                      "aten::mse_loss",
                                      "aten::binary_cross_entropy",
                                      "aten::binary_cross_entropy_with_logits",
                                      "aten::nll_loss_forward",
                                      "aten::_log_softmax",
                                      "aten::_softmax",
                                      "aten::_log_softmax_backward_data",
                                      "aten::_softmax_backward_data",
                                      "aten::native_layer_norm",
                                      "aten::native_layer_norm_backward",
                                      "aten::native_batch_norm",
                                      "aten::native_batch_norm_backward",
                                      "aten::cudnn_batch_norm",
                                      "aten::cudnn_batch_norm_backward",
                                      "aten::argmax",
                                      "aten::topk",
                                      "aten::sort"};
  return in_list(n, names, DC_COUNTOF(names));
}

/* Ops that may be a sequence of other ops (aten::relu → clamp_min,
 * aten::to → copy_, every element-wise or reduce op): they launch their
 * kernel only when the trace records none beneath them (dlrmc's own
 * export, an older PyTorch), so a kernel is counted once. GEMMs, lookups,
 * collectives and copy_ launch whatever their children do (aten::addmm
 * on the CPU records the bias copy_ beside its GEMM). */
static bool is_composite(const char *n, dc_kernel_kind k) {
  static const char *const names[] = {"aten::linear",
                                      "aten::matmul",
                                      "aten::embedding_bag",
                                      "aten::embedding",
                                      "aten::_embedding_bag_backward",
                                      "aten::embedding_backward",
                                      "aten::to",
                                      "aten::_to_copy",
                                      "aten::clone",
                                      "aten::contiguous",
                                      "aten::item",
                                      "aten::stack"};
  return k == DC_KERNEL_ELEMENTWISE || k == DC_KERNEL_REDUCE ||
         in_list(n, names, DC_COUNTOF(names)) ||
         starts(n, "fbgemm::split_embedding_codegen_lookup_") ||
         (starts(n, "fbgemm::split_embedding") && strstr(n, "_wrapper"));
}

/* The collective a name stands for (c10d op, record_param_comms'
 * collective_name, nccl:*, gloo:*); false when none. */
static bool coll_kind(const char *name, dc_kernel_kind *k) {
  if (strstr(name, "all_to_all") || strstr(name, "alltoall"))
    *k = DC_KERNEL_ALL_TO_ALL;
  else if (strstr(name, "allreduce") || strstr(name, "all_reduce"))
    *k = DC_KERNEL_ALL_REDUCE;
  else if (strstr(name, "reduce_scatter"))
    *k = DC_KERNEL_REDUCE_SCATTER;
  else if (strstr(name, "allgather") || strstr(name, "all_gather"))
    *k = DC_KERNEL_ALL_GATHER;
  else
    return false;
  return true;
}

/* ---- arguments --------------------------------------------------------- */

/* Index of argument `arg` in the op's schema string, -1 when absent:
 * "ns::op.overload(Type a, Type b=1, *, Type c) -> R" (the `*` is no
 * argument; defaults and nested brackets are skipped). */
static int arg_index(const char *schema, const char *arg) {
  const char *p = strchr(schema, '(');
  if (!p) return -1;
  size_t an = strlen(arg);
  int idx = 0;
  for (p++;;) {
    /* one argument: [p, q) up to a comma or the closing paren at depth 0 */
    const char *q = p, *eq = NULL;
    int depth = 0;
    while (*q && (depth > 0 || (*q != ',' && *q != ')'))) {
      if (*q == '(' || *q == '[') depth++;
      if (*q == ')' || *q == ']') depth--;
      if (*q == '=' && depth == 0 && !eq) eq = q;
      q++;
    }
    const char *e = eq ? eq : q;
    while (e > p && e[-1] == ' ')
      e--;
    const char *b = e;
    while (b > p &&
           (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') ||
            (b[-1] >= 'A' && b[-1] <= 'Z') || (b[-1] >= '0' && b[-1] <= '9')))
      b--;
    bool star = e > p && e[-1] == '*' && b == e;
    if (!star && b < e) {
      if ((size_t)(e - b) == an && memcmp(b, arg, an) == 0) return idx;
      idx++;
    }
    if (*q != ',') return -1;
    p = q + 1;
  }
}

/* The first value of argument k, NULL when none. */
static const et_val *arg_val(const et_node *n, int k) {
  for (int32_t i = 0; i < n->n_in; i++)
    if (n->in[i].arg == k) return &n->in[i];
  return NULL;
}

static const et_val *named(const et_node *n, const char *name) {
  int k = arg_index(n->schema, name);
  return k >= 0 ? arg_val(n, k) : NULL;
}

static const et_val *named_tensor(const et_node *n, const char *name) {
  const et_val *v = named(n, name);
  return v && v->kind == ET_TENSOR ? v : NULL;
}

static const et_val *tensor_in(const et_node *n, int32_t k) {
  int32_t seen = 0;
  for (int32_t i = 0; i < n->n_in; i++)
    if (n->in[i].kind == ET_TENSOR && seen++ == k) return &n->in[i];
  return NULL;
}

static const et_val *tensor_out(const et_node *n, int32_t k) {
  int32_t seen = 0;
  for (int32_t i = 0; i < n->n_out; i++)
    if (n->out[i].kind == ET_TENSOR && seen++ == k) return &n->out[i];
  return NULL;
}

static int64_t bytes_of(const et_val *v) {
  return dc_sat_mul_i64(v->numel, v->esize);
}

static int64_t rows_of(const et_val *v, int32_t from, int32_t to) {
  int64_t r = 1;
  for (int32_t d = from; d < to && d < v->ndim; d++)
    r = dc_sat_mul_i64(r, v->shape[d]);
  return r;
}

/* ---- the build context ------------------------------------------------- */

#define ET_MAX_TREE_DEPTH 512

typedef struct bctx {
  const et_file *f;
  dc_arena *a;
  dc_diags *d;
  imap byid;          /* node id -> node index */
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
  int32_t coll_next;
  bool failed;
} bctx;

static const et_node *node_at(const bctx *c, int32_t i) {
  return &c->f->nodes[i];
}

static bool on_dev(const bctx *c, const et_val *v) {
  return v && v->kind == ET_TENSOR && (v->cuda || c->cpu_only);
}

static bool transposed(const bctx *c, const et_val *v) {
  int32_t nd = v->ndim;
  if (nd < 2) return false;
  if (v->strided)
    return v->stride[nd - 1] != 1 && v->stride[nd - 2] == 1 &&
           v->shape[nd - 1] > 1;
  (void)c;
  return v->tposed;
}

/* Without strides (1.0.1), a transposed view is known by its history:
 * walking the nodes in id (start) order, aten::t / transpose / numpy_T
 * flip their input's state onto their output, any other op that is not
 * a view writes a plain tensor, and each input takes its id's state at
 * that moment (1.0.1 reuses ids as memory is reused). */
static void find_transposes(bctx *c, et_file *f, const int32_t *order) {
  imap st = {0};
  for (int64_t r = 0; r < f->n_nodes; r++) {
    et_node *n = &f->nodes[order[r]];
    for (int32_t i = 0; i < n->n_in; i++)
      if (n->in[i].kind == ET_TENSOR && !n->in[i].strided)
        n->in[i].tposed = imap_get(&st, n->in[i].tid) == 1;
    bool flip = strcmp(n->name, "aten::t") == 0 ||
                strcmp(n->name, "aten::transpose") == 0 ||
                strcmp(n->name, "aten::numpy_T") == 0;
    const et_val *in = tensor_in(n, 0), *out = tensor_out(n, 0);
    if (flip && in && out && out->tid != in->tid)
      imap_put(&st, out->tid, in->tposed ? 0 : 1);
    else if (!flip && !no_kernel(n->name))
      for (int32_t i = 0; i < n->n_out; i++)
        if (n->out[i].kind == ET_TENSOR) imap_put(&st, n->out[i].tid, 0);
  }
  imap_free(&st);
  (void)c;
}

/* ---- the op mapping (spec/replay.md) ----------------------------------- */

typedef struct mapped {
  int n;        /* kernels: 0, 1 */
  bool unknown; /* computes on the device; no model */
  bool sync;    /* blocks the host (a D2H copy, .item()) */
  dc_kernel k;
} mapped;

static dc_dtype gemm_dtype(const et_val *a) {
  return a->dtype == DC_DTYPE_FP16 || a->dtype == DC_DTYPE_BF16 ? a->dtype
                                                                : DC_DTYPE_FP32;
}

static void set_gemm(mapped *m, int64_t M, int64_t N, int64_t K, int64_t batch,
                     bool ta, bool tb, dc_dtype dt) {
  if (M <= 0 || N <= 0 || K <= 0 || batch <= 0) return; /* nothing to do */
  m->n = 1;
  m->k = dc_kernel_gemm(M, N, K, batch, ta, tb, dt);
}

/* C = op(A) op(B): A [.., m, k], B [.., k, n], batch from A's leading
 * dims when B has them too (bmm, batched matmul), else folded into m. */
static void gemm_ab(const bctx *c, mapped *m, const et_val *A,
                    const et_val *B) {
  if (!A || !B || A->ndim < 1 || B->ndim < 1) {
    m->unknown = true;
    return;
  }
  int32_t an = A->ndim, bn = B->ndim;
  int64_t K = A->shape[an - 1];
  int64_t N = bn >= 2 ? B->shape[bn - 1] : 1;
  if (bn >= 3 && an >= 3) {
    set_gemm(m, A->shape[an - 2], N, K, rows_of(A, 0, an - 2), transposed(c, A),
             transposed(c, B), gemm_dtype(A));
  } else {
    set_gemm(m, rows_of(A, 0, an - 1), N, K, 1, an >= 2 && transposed(c, A),
             bn >= 2 && transposed(c, B), gemm_dtype(A));
  }
}

static void set_ew(mapped *m, dc_kernel_kind kind, int64_t elems,
                   int64_t bytes) {
  if (elems <= 0) return;
  m->n = 1;
  m->k.kind = kind;
  m->k.u.ew.elements = elems;
  m->k.u.ew.flops_per_elem = 1.0;
  m->k.u.ew.bytes_per_elem = (double)bytes / (double)elems;
}

/* Element-wise or reduce over the op's tensors: elements of the largest
 * output (reduce: input; in-place and _foreach_ ops: the first
 * argument's tensors), bytes of every tensor read and written. */
static void ew_of(mapped *m, const et_node *n, dc_kernel_kind kind) {
  int64_t elems = 0, bytes = 0, first = 0;
  for (int32_t i = 0; i < n->n_out; i++)
    if (n->out[i].kind == ET_TENSOR) {
      if (n->out[i].numel > elems) elems = n->out[i].numel;
      bytes = dc_sat_add_i64(bytes, bytes_of(&n->out[i]));
    }
  for (int32_t i = 0; i < n->n_in; i++)
    if (n->in[i].kind == ET_TENSOR) {
      if (kind == DC_KERNEL_REDUCE && n->in[i].numel > elems)
        elems = n->in[i].numel;
      if (n->in[i].arg == 0) first = dc_sat_add_i64(first, n->in[i].numel);
      bytes = dc_sat_add_i64(bytes, bytes_of(&n->in[i]));
    }
  if (starts(n->name, "aten::_foreach_") || starts(n->name, "aten::_fused_"))
    elems = first;
  if (elems == 0) elems = first;
  set_ew(m, kind, elems, bytes);
}

/* A copy from `s` to `d` (their devices decide the kind). */
static void copy_of(const bctx *c, mapped *m, const et_val *s, const et_val *d,
                    bool non_blocking) {
  if (!s || !d) {
    m->unknown = true;
    return;
  }
  if (s->tid == d->tid) return; /* .to() that changes nothing */
  bool sd = on_dev(c, s), dd = on_dev(c, d);
  if (!sd && !dd) return;
  int64_t bytes = bytes_of(d);
  if (bytes <= 0) return;
  m->n = 1;
  m->k.u.copy.bytes = bytes;
  if (sd && dd) {
    if (s->dtype == d->dtype && s->esize == d->esize) {
      m->k.kind = DC_KERNEL_MEMCPY_D2D;
    } else { /* a cast: read one size, write the other */
      m->n = 0;
      set_ew(m, DC_KERNEL_ELEMENTWISE, d->numel,
             dc_sat_add_i64(bytes_of(s), bytes));
    }
  } else if (dd) {
    m->k.kind = DC_KERNEL_MEMCPY_H2D;
  } else {
    m->k.kind = DC_KERNEL_MEMCPY_D2H;
    m->sync = !non_blocking;
  }
}

static void emb_group(bctx *c, mapped *m, dc_kernel_kind kind, int64_t B,
                      int32_t tables, int64_t rows, int64_t D, double L,
                      dc_dtype dt, dc_optimizer opt, bool fused) {
  if (B <= 0 || tables <= 0 || rows <= 0 || D <= 0 || D > INT32_MAX ||
      !(L > 0)) {
    m->unknown = true;
    return;
  }
  dc_emb_group *g = dc_arena_alloc(c->a, sizeof *g);
  g->tables = tables;
  g->rows = rows;
  g->dim = (int32_t)D;
  g->pooling = L;
  m->n = 1;
  m->k.kind = kind;
  m->k.u.emb.batch = B;
  m->k.u.emb.n_groups = 1;
  m->k.u.emb.groups = g;
  m->k.u.emb.dtype = dt;
  m->k.u.emb.optimizer = opt;
  m->k.u.emb.fused_optimizer = fused;
  m->k.u.emb.model = DC_EMBMODEL_ENHANCED;
}

/* aten::embedding_bag and friends: weight [E, D], indices [N], offsets
 * [B] (+1 with include_last_offset); backward: grad [B, D], num_weights. */
static void emb_aten(bctx *c, mapped *m, const et_node *n, bool bwd) {
  const et_val *idx = named_tensor(n, "indices");
  if (!idx) idx = tensor_in(n, 1);
  if (!bwd) {
    const et_val *w = named_tensor(n, "weight");
    if (!w) w = tensor_in(n, 0);
    const et_val *off = named_tensor(n, "offsets");
    const et_val *last = named(n, "include_last_offset");
    bool bag = off != NULL;
    int64_t B = bag   ? off->numel - (last && last->kind == ET_BOOL && last->i)
                : idx ? idx->numel
                      : 0;
    if (!w || !idx || w->ndim != 2 || B <= 0) {
      m->unknown = true;
      return;
    }
    emb_group(c, m, DC_KERNEL_EMBEDDING_FWD, B, 1, w->shape[0], w->shape[1],
              bag ? (double)idx->numel / (double)B : 1.0, w->dtype,
              DC_OPTIMIZER_SGD, false);
    return;
  }
  const et_val *g = named_tensor(n, "grad");
  if (!g) g = tensor_in(n, 0);
  const et_val *nw = named(n, "num_weights");
  if (!g || !idx || g->ndim != 2 || g->shape[0] <= 0) {
    m->unknown = true;
    return;
  }
  int64_t rows = nw && nw->kind == ET_INT && nw->i > 0 ? nw->i : idx->numel;
  emb_group(c, m, DC_KERNEL_EMBEDDING_BWD, g->shape[0], 1, rows, g->shape[1],
            (double)idx->numel / (double)g->shape[0], g->dtype,
            DC_OPTIMIZER_SGD, false);
}

static dc_optimizer tbe_optimizer(const char *name) {
  if (strstr(name, "rowwise_adagrad")) return DC_OPTIMIZER_ROWWISE_ADAGRAD;
  if (strstr(name, "adagrad")) return DC_OPTIMIZER_ADAGRAD;
  if (strstr(name, "adam")) return DC_OPTIMIZER_ADAM;
  return DC_OPTIMIZER_SGD;
}

/* FBGEMM's table-batched lookups: T tables from D_offsets [T+1], B from
 * offsets [T·B+1], N indices, total_D (or the gradient's width); rows and
 * D are the tables' averages (the trace has the sizes, not the values
 * of hash_size_cumsum and D_offsets). */
static void emb_tbe(bctx *c, mapped *m, const et_node *n, bool bwd) {
  const et_val *doff = named_tensor(n, "D_offsets");
  const et_val *off = named_tensor(n, "offsets");
  const et_val *idx = named_tensor(n, "indices");
  const et_val *w = NULL;
  static const char *const wn[] = {"dev_weights", "host_weights", "weights",
                                   "uvm_weights"};
  for (size_t i = 0; i < DC_COUNTOF(wn) && !w; i++) {
    const et_val *x = named_tensor(n, wn[i]);
    if (x && x->numel > 0) w = x;
  }
  int64_t total_d = 0;
  const et_val *td = named(n, "total_D");
  const et_val *go = named_tensor(n, "grad_output");
  if (td && td->kind == ET_INT) total_d = td->i;
  if (total_d <= 0 && go && go->ndim == 2) total_d = go->shape[1];
  if (!doff || !off || !idx || !w || doff->numel < 2 || total_d <= 0) {
    m->unknown = true;
    return;
  }
  int64_t T = doff->numel - 1;
  int64_t B = (off->numel - 1) / T;
  if (T > INT32_MAX || B <= 0) {
    m->unknown = true;
    return;
  }
  int64_t D = (total_d + T / 2) / T;
  int64_t rows = w->numel / total_d;
  emb_group(c, m, bwd ? DC_KERNEL_EMBEDDING_BWD : DC_KERNEL_EMBEDDING_FWD, B,
            (int32_t)T, rows > 0 ? rows : 1, D,
            (double)idx->numel / ((double)B * (double)T), w->dtype,
            tbe_optimizer(n->name), bwd);
}

static void coll_of(bctx *c, mapped *m, const et_node *n, const et_node *comm,
                    dc_kernel_kind kind) {
  int64_t bytes = 0;
  const et_val *t0 = comm ? tensor_in(comm, 0) : NULL;
  if (!t0) t0 = tensor_in(n, 0);
  if (comm && comm->in_msg_nelems > 0 && t0)
    bytes = dc_sat_mul_i64(comm->in_msg_nelems, t0->esize);
  static const char *const in_names[] = {"input", "input_tensor", "tensors",
                                         "input_tensors"};
  for (size_t i = 0; i < DC_COUNTOF(in_names) && bytes == 0; i++) {
    int k = arg_index(n->schema, in_names[i]);
    for (int32_t j = 0; k >= 0 && j < n->n_in; j++)
      if (n->in[j].arg == k && n->in[j].kind == ET_TENSOR)
        bytes = dc_sat_add_i64(bytes, bytes_of(&n->in[j]));
  }
  for (int32_t j = 0; bytes == 0 && j < n->n_in; j++)
    if (n->in[j].kind == ET_TENSOR)
      bytes = dc_sat_add_i64(bytes, bytes_of(&n->in[j]));
  if (bytes <= 0) return;
  int64_t ranks = comm && comm->pg_size > 0 ? comm->pg_size : c->pg_size;
  m->n = 1;
  m->k.kind = kind;
  m->k.u.coll.bytes = bytes;
  m->k.u.coll.ranks = (int32_t)(ranks > 0 && ranks < INT32_MAX ? ranks : 1);
  m->k.u.coll.hosts = 1;
  m->k.u.coll.coll_id = c->coll_next++;
}

static bool any_dev(const bctx *c, const et_node *n) {
  for (int32_t i = 0; i < n->n_in; i++)
    if (on_dev(c, &n->in[i])) return true;
  for (int32_t i = 0; i < n->n_out; i++)
    if (on_dev(c, &n->out[i])) return true;
  return false;
}

static bool non_blocking(const et_node *n) {
  const et_val *v = named(n, "non_blocking");
  return v && v->kind == ET_BOOL && v->i;
}

/* What op j launches (before the composite rule). */
static mapped map_op(bctx *c, int32_t j) {
  mapped m = {0};
  m.k.scale = 1.0;
  const char *name = c->ops[j].name;
  const et_node *n = c->src[j];
  if (c->ops[j].annotation || !any_dev(c, n)) return m;
  dc_kernel_kind ck;
  if (starts(name, "c10d::") || starts(name, "nccl:") ||
      strcmp(name, "record_param_comms") == 0) {
    const et_node *comm = c->comm[j];
    const char *what = comm && comm->coll_name ? comm->coll_name : name;
    if (coll_kind(what, &ck) || coll_kind(name, &ck))
      coll_of(c, &m, n, comm, ck);
    else
      m.unknown = true;
  } else if (strcmp(name, "aten::mm") == 0 || strcmp(name, "aten::bmm") == 0 ||
             strcmp(name, "aten::matmul") == 0) {
    gemm_ab(c, &m, tensor_in(n, 0), tensor_in(n, 1));
  } else if (strcmp(name, "aten::addmm") == 0 ||
             strcmp(name, "aten::baddbmm") == 0) {
    gemm_ab(c, &m, tensor_in(n, 1), tensor_in(n, 2));
  } else if (strcmp(name, "aten::linear") == 0) {
    const et_val *x = tensor_in(n, 0), *w = tensor_in(n, 1);
    if (!x || !w || x->ndim < 1 || w->ndim != 2)
      m.unknown = true;
    else
      set_gemm(&m, rows_of(x, 0, x->ndim - 1), w->shape[0],
               x->shape[x->ndim - 1], 1, false, !transposed(c, w),
               gemm_dtype(x));
  } else if (strcmp(name, "aten::embedding_bag") == 0 ||
             strcmp(name, "aten::_embedding_bag") == 0 ||
             strcmp(name, "aten::_embedding_bag_forward_only") == 0 ||
             strcmp(name, "aten::embedding") == 0) {
    emb_aten(c, &m, n, false);
  } else if (strcmp(name, "aten::_embedding_bag_backward") == 0 ||
             strcmp(name, "aten::_embedding_bag_dense_backward") == 0 ||
             strcmp(name, "aten::_embedding_bag_sparse_backward") == 0 ||
             strcmp(name, "aten::embedding_dense_backward") == 0 ||
             strcmp(name, "aten::embedding_backward") == 0) {
    emb_aten(c, &m, n, true);
  } else if (starts(name, "fbgemm::split_embedding_codegen_forward") ||
             starts(name, "fbgemm::split_embedding_codegen_lookup_")) {
    emb_tbe(c, &m, n, false);
  } else if (starts(name, "fbgemm::split_embedding_backward_codegen_")) {
    emb_tbe(c, &m, n, true);
  } else if (strcmp(name, "aten::copy_") == 0) {
    copy_of(c, &m, tensor_in(n, 1), tensor_in(n, 0), non_blocking(n));
  } else if (strcmp(name, "aten::to") == 0 ||
             strcmp(name, "aten::_to_copy") == 0 ||
             strcmp(name, "aten::clone") == 0 ||
             strcmp(name, "aten::contiguous") == 0) {
    copy_of(c, &m, tensor_in(n, 0), tensor_out(n, 0), non_blocking(n));
  } else if (strcmp(name, "aten::_local_scalar_dense") == 0 ||
             strcmp(name, "aten::item") == 0) {
    const et_val *s = tensor_in(n, 0);
    m.n = s != NULL;
    m.k.kind = DC_KERNEL_MEMCPY_D2H;
    m.k.u.copy.bytes = s ? s->esize : 0;
    m.sync = true;
  } else if (strcmp(name, "aten::cat") == 0 ||
             strcmp(name, "aten::_cat") == 0 ||
             strcmp(name, "aten::stack") == 0) {
    const et_val *o = tensor_out(n, 0);
    if (o && bytes_of(o) > 0) {
      m.n = 1;
      m.k.kind = DC_KERNEL_CONCAT;
      m.k.u.copy.bytes = bytes_of(o);
    }
  } else if (is_elementwise(name)) {
    ew_of(&m, n, DC_KERNEL_ELEMENTWISE);
  } else if (is_reduce(name)) {
    ew_of(&m, n, DC_KERNEL_REDUCE);
  } else if (!no_kernel(name) && strstr(name, "::") &&
             !starts(name, "autograd::") && !starts(name, "torch::autograd") &&
             !starts(name, "Optimizer.")) {
    m.unknown = true;
  }
  m.k.scale = 1.0;
  return m;
}

/* ---- structure ------------------------------------------------------------
 */

static bool is_eval_name(const char *name) {
  return starts(name, ET_EVAL);
}

/* "group_size": N in the init node's description of the default group. */
static int32_t group_size(const et_node *n) {
  for (int32_t i = 0; i < n->n_in; i++) {
    if (n->in[i].kind != ET_STRING) continue;
    const char *p = strstr(n->in[i].s, "\"group_size\":");
    if (!p) continue;
    long v = strtol(p + 13, NULL, 10);
    if (v > 0 && v < INT32_MAX) return (int32_t)v;
  }
  return 0;
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
  c->info[j] = (dc_et_op){n->id, n->rf_id, false};
  return j;
}

/* The phase of a new op from where it sits. */
static dc_phase phase_of(const bctx *c, int32_t j) {
  const dc_op *o = &c->ops[j];
  for (int32_t p = j; p >= 0; p = c->ops[p].parent) {
    if (is_eval_name(c->ops[p].name)) return DC_PHASE_BACKWARD;
    if (starts(c->ops[p].name, "Optimizer.")) return DC_PHASE_OPTIMIZER;
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
         starts(n->name, "gloo:");
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

static const et_node *sort_nodes; /* qsort has no context argument */

static int cmp_id(const void *pa, const void *pb) {
  int64_t a = sort_nodes[*(const int32_t *)pa].id;
  int64_t b = sort_nodes[*(const int32_t *)pb].id;
  return a < b ? -1 : a > b;
}

/* Emits ni's children (but `skip`) in id order: across threads and
 * transparent scopes, start order is execution order. */
static void emit_kids(bctx *c, int32_t ni, int32_t parent, int depth,
                      int32_t skip) {
  nlist l = {0};
  gather(c, ni, skip, &l, depth);
  sort_nodes = c->f->nodes;
  if (l.n > 1) qsort(l.v, (size_t)l.n, sizeof *l.v, cmp_id);
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
  } else if (starts(n->name, "c10d::")) { /* absorb record_param_comms */
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
      if (!starts(node_at(c, l.v[i])->name, "nccl:"))
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
  uint64_t h = 1469598103934665603ull;
  uint64_t x[2 + ET_MAX_DIMS] = {(uint64_t)v->tid,
                                 (uint64_t)v->ndim << 8 | v->esize};
  for (int32_t d = 0; d < v->ndim; d++)
    x[2 + d] = (uint64_t)v->shape[d];
  for (int32_t i = 0; i < 2 + v->ndim; i++) {
    h ^= x[i];
    h *= 1099511628211ull;
  }
  return (int64_t)(h >> 1);
}

typedef struct tctx {
  imap produced; /* tensor ids some op outputs */
  imap by_tid;   /* tensor id -> its first value (index into vals) */
  imap by_key;   /* tkey -> its first value */
  imap by_store; /* skey (storage, shape, size) -> its first value */
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
  if (out) imap_put(&t->produced, v->tid, 1);
  int64_t k = tkey(v);
  if (imap_get(&t->by_key, k) >= 0) return;
  if (t->n_vals == t->cap_vals) {
    t->cap_vals = t->cap_vals ? t->cap_vals * 2 : 1024;
    t->vals = dc_xrealloc(t->vals, (size_t)t->cap_vals * sizeof *t->vals);
  }
  imap_put(&t->by_key, k, t->n_vals);
  if (imap_get(&t->by_tid, v->tid) < 0) imap_put(&t->by_tid, v->tid, t->n_vals);
  int64_t sk = skey(v->sid, v->shape, v->ndim, v->esize);
  if (imap_get(&t->by_store, sk) < 0) imap_put(&t->by_store, sk, t->n_vals);
  t->vals[t->n_vals++] = v;
}

/* The base of a transposed view that no op produces: a tensor on the
 * same storage with the last two dims and strides swapped (an export's
 * view); NULL for anything else. */
static const et_val *view_base(const tctx *t, const et_val *v) {
  int32_t nd = v->ndim;
  if (nd < 2 || !v->strided || v->tid == v->sid ||
      imap_get(&t->produced, v->tid) >= 0)
    return NULL;
  int64_t sh[ET_MAX_DIMS];
  memcpy(sh, v->shape, sizeof sh);
  sh[nd - 1] = v->shape[nd - 2];
  sh[nd - 2] = v->shape[nd - 1];
  int32_t b = imap_get(&t->by_store, skey(v->sid, sh, nd, v->esize));
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
  x->shape[0] = rows_of(v, 0, lead);
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
  imap idx = {0}, ids = {0};
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
    if (imap_get(&ids, v->tid) >= 0) unique = false;
    imap_put(&ids, v->tid, 1);
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
    imap_put(&idx, tkey(v), k);
    fill_tensor(c, &g->tensors[k], k, v);
  }
  for (int32_t i = 0; i < t.n_vals; i++) { /* the views' bases */
    const et_val *v = t.vals[i];
    const et_val *w = view_base(&t, v);
    int32_t k = imap_get(&idx, tkey(v)), b = w ? imap_get(&idx, tkey(w)) : -1;
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
        ins[o->n_inputs++] = imap_get(&idx, tkey(resolve(&t, &n->in[a++])));
        ins[o->n_inputs++] = imap_get(&idx, tkey(resolve(&t, &n->in[b++])));
      }
    } else {
      for (int32_t i = 0; i < n->n_in; i++)
        if (n->in[i].kind == ET_TENSOR)
          ins[o->n_inputs++] = imap_get(&idx, tkey(resolve(&t, &n->in[i])));
    }
    for (int32_t i = 0; i < n->n_out; i++)
      if (n->out[i].kind == ET_TENSOR)
        outs[o->n_outputs++] = imap_get(&idx, tkey(resolve(&t, &n->out[i])));
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
  imap_free(&idx);
  imap_free(&ids);
  imap_free(&t.produced);
  imap_free(&t.by_tid);
  imap_free(&t.by_key);
  imap_free(&t.by_store);
  free(t.vals);
}

/* ---- kernels ------------------------------------------------------------- */

/* Maps every op, then keeps a composite op's launch only when no
 * descendant launches (is_composite), and marks an op unpriced only when
 * nothing beneath it launches or is unpriced. */
static void build_kernels(bctx *c, dc_et_graph *out) {
  int32_t n = c->n_ops;
  mapped *m = dc_xcalloc((size_t)n + 1, sizeof *m);
  bool *below = dc_xcalloc((size_t)n + 1, sizeof *below); /* launch/unpriced
                                                             beneath */
  for (int32_t j = 0; j < n; j++)
    m[j] = map_op(c, j);
  bool comm = false;
  for (int32_t j = n - 1; j >= 0; j--) {
    dc_op *o = &c->ops[j];
    bool here = (m[j].n > 0 && !is_composite(o->name, m[j].k.kind)) ||
                (!below[j] && (m[j].n > 0 || m[j].unknown));
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
    }
    if (o->parent >= 0 && (below[j] || here)) below[o->parent] = true;
  }
  /* the collectives' ids in launch order */
  int32_t id = 0;
  for (int32_t j = 0; j < n; j++)
    if (c->ops[j].n_launches &&
        dc_kernel_is_collective(c->ops[j].launches[0].k.kind))
      c->ops[j].launches[0].k.u.coll.coll_id = id++;
  out->g->n_streams = comm ? 2 : 1;
  free(m);
  free(below);
}

/* ---- the graph ------------------------------------------------------------
 */

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
    if (imap_get(&c.byid, f->nodes[i].id) >= 0) {
      dc_source *src = dc_arena_alloc(a, sizeof *src);
      src->path = f->path;
      src->text = "";
      dc_diag_error(d, DC_DIAG_BAD_TRACE, (dc_span){src, 0, 0, 0},
                    "two nodes have id %lld", (long long)f->nodes[i].id);
      goto done;
    }
    imap_put(&c.byid, f->nodes[i].id, (int32_t)i);
  }
  /* nodes in id order (a counting sort would need dense ids) */
  for (size_t i = 1; i < nn; i++) { /* insertion sort, nearly sorted input */
    int32_t x = order[i];
    size_t k = i;
    while (k > 0 && f->nodes[order[k - 1]].id > f->nodes[x].id) {
      order[k] = order[k - 1];
      k--;
    }
    order[k] = x;
  }
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
    int32_t p = n->parent == n->id ? -1 : imap_get(&c.byid, n->parent);
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
    sort_nodes = f->nodes;
    if (l.n > 1) qsort(l.v, (size_t)l.n, sizeof *l.v, cmp_id);
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
  free(c.ops); /* the build works on the graph's copy from here */
  c.ops = g->ops;
  build_tensors(&c, g);
  build_kernels(&c, out);
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
  imap_free(&c.byid);
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
