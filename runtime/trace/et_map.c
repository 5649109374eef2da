/*
 * et_map.c — the op mapping of the execution-trace import: what kernel an
 * ET op launches, from its name and recorded arguments (found by name in
 * its op_schema where one is recorded). spec/replay.md has the table;
 * et_graph.c applies the composite rule (et_is_composite) and marks the
 * unpriced ops. The op-name tables, one name per line as clang-format
 * lays them out, are kept beside the rules that read them.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/et_int.h"

/* ---- names ------------------------------------------------------------ */

static bool in_list(const char *name, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(name, list[i]) == 0) return true;
  return false;
}

/* Ops that launch nothing: views, metadata, allocation, autograd
 * bookkeeping. */
bool et_no_kernel(const char *name) {
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
      /* the sparse gradient of a lookup: the looked-up indices and the
       * gathered rows (its parent's gather) become a COO tensor; no kernel
       * beneath it in the H200 traces (tests/validation/h200/steps).
       * With a padding_idx its masking ops are recorded beneath it. */
      "aten::embedding_sparse_backward",
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
                                      "aten::index_select",
                                      "aten::gather",
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
bool et_is_composite(const char *n, dc_kernel_kind k) {
  /* the kernels of their own that PyTorch launches beside the small ones
   * (an empty, a 1-element fill_) their children record */
  if (strcmp(n, "aten::index") == 0 || strcmp(n, "aten::_index_put_impl_") == 0)
    return false;
  static const char *const names[] = {"aten::linear",
                                      "aten::matmul",
                                      "aten::embedding_bag",
                                      "aten::embedding",
                                      "aten::_embedding_bag_backward",
                                      "aten::_embedding_bag_sparse_backward",
                                      "aten::_embedding_bag_dense_backward",
                                      "aten::embedding_dense_backward",
                                      "aten::embedding_backward",
                                      "aten::to",
                                      "aten::_to_copy",
                                      "aten::clone",
                                      "aten::contiguous",
                                      "aten::item",
                                      "aten::stack"};
  return k == DC_KERNEL_ELEMENTWISE || k == DC_KERNEL_REDUCE ||
         in_list(n, names, DC_COUNTOF(names)) ||
         et_starts(n, "fbgemm::split_embedding_codegen_lookup_") ||
         (et_starts(n, "fbgemm::split_embedding") && strstr(n, "_wrapper"));
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

const et_val *et_tensor_in(const et_node *n, int32_t k) {
  int32_t seen = 0;
  for (int32_t i = 0; i < n->n_in; i++)
    if (n->in[i].kind == ET_TENSOR && seen++ == k) return &n->in[i];
  return NULL;
}

const et_val *et_tensor_out(const et_node *n, int32_t k) {
  int32_t seen = 0;
  for (int32_t i = 0; i < n->n_out; i++)
    if (n->out[i].kind == ET_TENSOR && seen++ == k) return &n->out[i];
  return NULL;
}

static int64_t bytes_of(const et_val *v) {
  return dc_sat_mul_i64(v->numel, v->esize);
}

int64_t et_rows_of(const et_val *v, int32_t from, int32_t to) {
  int64_t r = 1;
  for (int32_t d = from; d < to && d < v->ndim; d++)
    r = dc_sat_mul_i64(r, v->shape[d]);
  return r;
}

static bool on_dev(const et_map_ctx *c, const et_val *v) {
  return v && v->kind == ET_TENSOR && (v->cuda || c->cpu_only);
}

static bool transposed(const et_map_ctx *c, const et_val *v) {
  int32_t nd = v->ndim;
  if (nd < 2) return false;
  if (v->strided)
    return v->stride[nd - 1] != 1 && v->stride[nd - 2] == 1 &&
           v->shape[nd - 1] > 1;
  (void)c;
  return v->tposed;
}

/* ---- the op mapping (spec/replay.md) ----------------------------------- */

static dc_dtype gemm_dtype(const et_val *a) {
  return a->dtype == DC_DTYPE_FP16 || a->dtype == DC_DTYPE_BF16 ? a->dtype
                                                                : DC_DTYPE_FP32;
}

static void set_gemm(et_mapped *m, int64_t M, int64_t N, int64_t K,
                     int64_t batch, bool ta, bool tb, dc_dtype dt) {
  if (M <= 0 || N <= 0 || K <= 0 || batch <= 0) return; /* nothing to do */
  m->n = 1;
  m->k = dc_kernel_gemm(M, N, K, batch, ta, tb, dt);
}

/* C = op(A) op(B): A [.., m, k], B [.., k, n], batch from A's leading
 * dims when B has them too (bmm, batched matmul), else folded into m. */
static void gemm_ab(const et_map_ctx *c, et_mapped *m, const et_val *A,
                    const et_val *B) {
  if (!A || !B || A->ndim < 1 || B->ndim < 1) {
    m->unknown = true;
    return;
  }
  int32_t an = A->ndim, bn = B->ndim;
  int64_t K = A->shape[an - 1];
  int64_t N = bn >= 2 ? B->shape[bn - 1] : 1;
  if (bn >= 3 && an >= 3) {
    set_gemm(m, A->shape[an - 2], N, K, et_rows_of(A, 0, an - 2),
             transposed(c, A), transposed(c, B), gemm_dtype(A));
  } else {
    set_gemm(m, et_rows_of(A, 0, an - 1), N, K, 1, an >= 2 && transposed(c, A),
             bn >= 2 && transposed(c, B), gemm_dtype(A));
  }
}

static void set_ew(et_mapped *m, dc_kernel_kind kind, int64_t elems,
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
static void ew_of(et_mapped *m, const et_node *n, dc_kernel_kind kind) {
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
  if (et_starts(n->name, "aten::_foreach_") ||
      et_starts(n->name, "aten::_fused_"))
    elems = first;
  if (elems == 0) elems = first;
  set_ew(m, kind, elems, bytes);
  /* reads through an index: irregular rows (kernels' `indexed` family) */
  m->k.u.ew.indexed = strcmp(n->name, "aten::gather") == 0 ||
                      strcmp(n->name, "aten::index_select") == 0 ||
                      strcmp(n->name, "aten::index") == 0;
}

/* In-place scatters into `self` (argument 0): index_add_, index_put_,
 * scatter_add_. The kernel touches only the rows its source (values)
 * tensor names, not the whole of `self` — PyTorch's sparse SGD update is
 * an index_add_ of the looked-up rows into a table of millions — so the
 * elements are the largest other input's, and the bytes are every other
 * input read plus those elements of `self` read and written. */
static bool is_scatter(const char *n) {
  static const char *const names[] = {"aten::scatter_add_", "aten::index_put_",
                                      "aten::_index_put_impl_",
                                      "aten::index_add_"};
  return in_list(n, names, DC_COUNTOF(names));
}

static void scatter_of(et_mapped *m, const et_node *n) {
  int64_t elems = 0, bytes = 0, esize = 0;
  for (int32_t i = 0; i < n->n_in; i++) {
    const et_val *v = &n->in[i];
    if (v->kind != ET_TENSOR) continue;
    if (v->arg == 0) {
      esize = v->esize;
      continue;
    }
    if (v->numel > elems) elems = v->numel;
    bytes = dc_sat_add_i64(bytes, bytes_of(v));
  }
  bytes = dc_sat_add_i64(bytes, dc_sat_mul_i64(dc_sat_mul_i64(elems, esize), 2));
  set_ew(m, DC_KERNEL_ELEMENTWISE, elems, bytes);
  m->k.u.ew.indexed = true;
}

/* aten::index (a gather of rows of `self`, argument 0): the kernel reads
 * the rows the output holds, not the whole of `self`: elements of the
 * output, bytes the output written and read from `self` plus the index
 * tensors. */
static void gather_of(et_mapped *m, const et_node *n) {
  const et_val *o = et_tensor_out(n, 0);
  if (!o || o->numel <= 0) {
    m->unknown = true;
    return;
  }
  int64_t bytes = dc_sat_mul_i64(bytes_of(o), 2);
  for (int32_t i = 0; i < n->n_in; i++)
    if (n->in[i].kind == ET_TENSOR && n->in[i].arg != 0)
      bytes = dc_sat_add_i64(bytes, bytes_of(&n->in[i]));
  set_ew(m, DC_KERNEL_ELEMENTWISE, o->numel, bytes);
}

/* A copy from `s` to `d` (their devices decide the kind). */
static void copy_of(const et_map_ctx *c, et_mapped *m, const et_val *s,
                    const et_val *d, bool non_blocking) {
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
    m->sync = !non_blocking; /* staged from pageable memory */
    /* non_blocking is asked of pinned sources: a pageable one is priced at
     * the host's staging rate and blocks the host for the copy */
    m->k.u.copy.pinned = non_blocking;
  } else {
    m->k.kind = DC_KERNEL_MEMCPY_D2H;
    m->sync = !non_blocking;
  }
}

static void emb_group(const et_map_ctx *c, et_mapped *m, dc_kernel_kind kind,
                      int64_t B, int32_t tables, int64_t rows, int64_t D,
                      double L, dc_dtype dt, dc_optimizer opt, bool fused) {
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
static void emb_aten(const et_map_ctx *c, et_mapped *m, const et_node *n,
                     bool bwd) {
  const et_val *idx = named_tensor(n, "indices");
  if (!idx) idx = et_tensor_in(n, 1);
  if (!bwd) {
    const et_val *w = named_tensor(n, "weight");
    if (!w) w = et_tensor_in(n, 0);
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
    m->k.u.emb.stock = true;
    return;
  }
  const et_val *g = named_tensor(n, "grad");
  if (!g) g = et_tensor_in(n, 0);
  const et_val *nw = named(n, "num_weights");
  if (!g || !idx || g->ndim != 2 || g->shape[0] <= 0) {
    m->unknown = true;
    return;
  }
  int64_t rows = nw && nw->kind == ET_INT && nw->i > 0 ? nw->i : idx->numel;
  emb_group(c, m, DC_KERNEL_EMBEDDING_BWD, g->shape[0], 1, rows, g->shape[1],
            (double)idx->numel / (double)g->shape[0], g->dtype,
            DC_OPTIMIZER_SGD, false);
  m->k.u.emb.stock = true;
}

dc_optimizer et_tbe_optimizer(const char *name) {
  if (strstr(name, "rowwise_adagrad")) return DC_OPTIMIZER_ROWWISE_ADAGRAD;
  if (strstr(name, "adagrad")) return DC_OPTIMIZER_ADAGRAD;
  if (strstr(name, "adam")) return DC_OPTIMIZER_ADAM;
  return DC_OPTIMIZER_SGD;
}

/* FBGEMM's table-batched lookups: T tables from D_offsets [T+1], B from
 * offsets [T·B+1], N indices, total_D (or the gradient's width); rows and
 * D are the tables' averages (the trace has the sizes, not the values
 * of hash_size_cumsum and D_offsets). */
static void emb_tbe(const et_map_ctx *c, et_mapped *m, const et_node *n,
                    bool bwd) {
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
            et_tbe_optimizer(n->name), bwd);
}

static void coll_of(const et_map_ctx *c, et_mapped *m, const et_node *n,
                    const et_node *comm, dc_kernel_kind kind) {
  int64_t bytes = 0;
  const et_val *t0 = comm ? et_tensor_in(comm, 0) : NULL;
  if (!t0) t0 = et_tensor_in(n, 0);
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
  /* the group: its pg_size, else the process group's, else the split
   * lists' length (an all-to-all's), else one rank (a multi-rank replay
   * then takes the job's size) */
  int64_t ranks = comm && comm->pg_size > 0 ? comm->pg_size
                  : c->pg_size > 1          ? c->pg_size
                  : comm && comm->split_n > 1 ? comm->split_n
                                              : c->pg_size;
  m->n = 1;
  m->k.kind = kind;
  m->k.u.coll.bytes = bytes;
  /* pg_size is 1 to ET_MAX_RANKS (et_read.c), the group's size too */
  m->k.u.coll.ranks = (int32_t)(ranks > 0 && ranks <= ET_MAX_RANKS ? ranks : 1);
  m->k.u.coll.hosts = 1;
  m->k.u.coll.coll_id = 0; /* numbered by et_graph.c */
}

static bool any_dev(const et_map_ctx *c, const et_node *n) {
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

et_mapped et_map_op(const et_map_ctx *c, const char *name, bool annotation,
                    const et_node *n, const et_node *comm) {
  et_mapped m = {0};
  m.k.scale = 1.0;
  if (annotation || !any_dev(c, n)) return m;
  dc_kernel_kind ck;
  if (et_starts(name, "c10d::") || et_starts(name, "nccl:") ||
      strcmp(name, "record_param_comms") == 0) {
    const char *what = comm && comm->coll_name ? comm->coll_name : name;
    if (coll_kind(what, &ck) || coll_kind(name, &ck))
      coll_of(c, &m, n, comm, ck);
    else
      m.unknown = true;
  } else if (strcmp(name, "aten::mm") == 0 || strcmp(name, "aten::bmm") == 0 ||
             strcmp(name, "aten::matmul") == 0) {
    gemm_ab(c, &m, et_tensor_in(n, 0), et_tensor_in(n, 1));
  } else if (strcmp(name, "aten::addmm") == 0 ||
             strcmp(name, "aten::baddbmm") == 0) {
    gemm_ab(c, &m, et_tensor_in(n, 1), et_tensor_in(n, 2));
  } else if (strcmp(name, "aten::linear") == 0) {
    const et_val *x = et_tensor_in(n, 0), *w = et_tensor_in(n, 1);
    if (!x || !w || x->ndim < 1 || w->ndim != 2)
      m.unknown = true;
    else
      set_gemm(&m, et_rows_of(x, 0, x->ndim - 1), w->shape[0],
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
  } else if (et_starts(name, "fbgemm::split_embedding_codegen_forward") ||
             et_starts(name, "fbgemm::split_embedding_codegen_lookup_")) {
    emb_tbe(c, &m, n, false);
  } else if (et_starts(name, "fbgemm::split_embedding_backward_codegen_")) {
    emb_tbe(c, &m, n, true);
  } else if (strcmp(name, "aten::copy_") == 0) {
    copy_of(c, &m, et_tensor_in(n, 1), et_tensor_in(n, 0), non_blocking(n));
  } else if (strcmp(name, "aten::to") == 0 ||
             strcmp(name, "aten::_to_copy") == 0 ||
             strcmp(name, "aten::clone") == 0 ||
             strcmp(name, "aten::contiguous") == 0) {
    copy_of(c, &m, et_tensor_in(n, 0), et_tensor_out(n, 0), non_blocking(n));
  } else if (strcmp(name, "aten::_local_scalar_dense") == 0 ||
             strcmp(name, "aten::item") == 0) {
    const et_val *s = et_tensor_in(n, 0);
    m.n = s != NULL;
    m.k.kind = DC_KERNEL_MEMCPY_D2H;
    m.k.u.copy.bytes = s ? s->esize : 0;
    m.sync = true;
  } else if (strcmp(name, "aten::cat") == 0 ||
             strcmp(name, "aten::_cat") == 0 ||
             strcmp(name, "aten::stack") == 0) {
    const et_val *o = et_tensor_out(n, 0);
    if (o && bytes_of(o) > 0) {
      m.n = 1;
      m.k.kind = DC_KERNEL_CONCAT;
      m.k.u.copy.bytes = bytes_of(o);
    }
  } else if (is_scatter(name)) {
    scatter_of(&m, n);
  } else if (strcmp(name, "aten::index") == 0) {
    gather_of(&m, n);
  } else if (is_elementwise(name)) {
    ew_of(&m, n, DC_KERNEL_ELEMENTWISE);
  } else if (is_reduce(name)) {
    ew_of(&m, n, DC_KERNEL_REDUCE);
  } else if (!et_no_kernel(name) && strstr(name, "::") &&
             !et_starts(name, "autograd::") &&
             !et_starts(name, "torch::autograd") &&
             !et_starts(name, "Optimizer.")) {
    m.unknown = true;
  }
  m.k.scale = 1.0;
  return m;
}
