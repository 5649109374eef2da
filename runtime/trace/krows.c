/*
 * krows.c — kernel rows out of a Kineto trace recorded with shapes
 * (`dlrmc trace kernels`): one CSV row per GEMM-like (or element-wise) op
 * with the parameters `dlrmc kernel --csv` and `dlrmc fit` read, and the
 * time the op's kernels measured (attrib.c: kernels by correlation id,
 * ops by containment), so a profiler trace of one's own job is benchmark
 * data for the kernel models.
 *
 * GEMMs. aten::mm, addmm, bmm, baddbmm, matmul, linear and
 * _addmm_activation; a GEMM-like op with a GEMM-like descendant
 * (aten::linear over aten::addmm, aten::matmul over aten::mm) is the
 * parent of the real call and gives no row of its own, so no GEMM is
 * counted twice. Shapes come from Input Dims: mm A[m,k]·B[k,n]; addmm and
 * _addmm_activation the same on inputs 1 and 2; bmm and baddbmm
 * [b,m,k]·[b,k,n]; matmul 2-D·2-D, N-D·2-D (the leading dims fold into
 * m) or 3-D·3-D with one batch; linear x[...,k]·W[n,k]ᵀ.
 * Transposes: from Input Strides where recorded (a matrix whose
 * second-to-last stride is 1 and last is not is a transposed view: it is
 * column-major); else from the layout suffix of the cuBLAS / CUTLASS
 * kernel the op launched (`_tn`: cuBLAS is column-major, so PyTorch
 * passes B first and the letters are transb, transa); else 0. The
 * `layout` column says which. dtype: from Input type (float, c10::Half,
 * c10::BFloat16); float whose kernel ran on TF32 tensor cores (a name
 * with "tf32" or "1688gemm") is tf32 — PyTorch's allow_tf32 switch is not
 * recorded, the kernel says what ran.
 *
 * Element-wise: ops in a fixed list of unary and binary maps (add, mul,
 * relu, sigmoid, their backward forms, ...) with all tensor inputs of
 * the output's size or broadcast: elements = the largest input,
 * bytes_per_elem = (full-size inputs + 1 output) × element size.
 *
 * Ops that cannot give a row are counted by reason (dc_trace_rows_report)
 * for the driver to say on stderr; none is dropped silently.
 */
#include <string.h>

#include "runtime/trace/trace.h"

static const char *const reasons[DC_TRACE_SKIP_COUNT_] = {
    [DC_TRACE_SKIP_NO_SHAPES] = "no Input Dims recorded (profile with "
                                "record_shapes=True)",
    [DC_TRACE_SKIP_SHAPES] = "Input Dims are not a product this reader "
                             "knows (ranks or inner sizes disagree)",
    [DC_TRACE_SKIP_EMPTY] = "a size is zero",
    [DC_TRACE_SKIP_DTYPE] = "Input type is not float, c10::Half or "
                            "c10::BFloat16",
    [DC_TRACE_SKIP_NO_KERNEL] = "launched no kernel",
    [DC_TRACE_SKIP_RANGE] = "sizes `kernel --csv` and `fit` refuse "
                            "(m*n*batch or k*batch past 64 bits)",
    [DC_TRACE_SKIP_TIME] = "kernel time rounds to 0.000 us or passes "
                           "10^9 us",
};

/* A row is written only when the readers of the rows — `dlrmc kernel
 * --csv` and `dlrmc fit` — take it: its kernel passes their own check
 * (dc_kernel_params_check), and its time, printed to 0.001 µs, is above
 * 0 and at most 10^9 µs (fit's range). */
static dc_trace_skip row_ok(const dc_kernel *k, double time_us) {
  dc_diags quiet = {0};
  bool ok = dc_kernel_params_check(k, (dc_span){0}, &quiet);
  dc_diags_free(&quiet);
  if (!ok) return DC_TRACE_SKIP_RANGE;
  if (!(time_us >= 0.0005 && time_us <= 1e9)) return DC_TRACE_SKIP_TIME;
  return DC_TRACE_SKIP_NONE_;
}

const char *dc_trace_skip_reason(dc_trace_skip r) { return reasons[r]; }

/* ---- names ----------------------------------------------------------- */

typedef enum gemm_form {
  G_NONE,
  G_MM,
  G_ADDMM,
  G_BMM,
  G_BADDBMM,
  G_MATMUL,
  G_LINEAR
} gemm_form;

static gemm_form gemm_form_of(const char *name) {
  static const struct {
    const char *n;
    gemm_form f;
  } t[] = {{"aten::mm", G_MM},           {"aten::addmm", G_ADDMM},
           {"aten::_addmm_activation", G_ADDMM},
           {"aten::bmm", G_BMM},         {"aten::baddbmm", G_BADDBMM},
           {"aten::matmul", G_MATMUL},   {"aten::linear", G_LINEAR}};
  for (size_t i = 0; i < DC_COUNTOF(t); i++)
    if (strcmp(name, t[i].n) == 0) return t[i].f;
  return G_NONE;
}

/* Element-wise maps whose kernel streams its inputs once. */
static bool is_elementwise(const char *name) {
  static const char *const ops[] = {
      "aten::add",          "aten::add_",          "aten::sub",
      "aten::sub_",         "aten::mul",           "aten::mul_",
      "aten::div",          "aten::div_",          "aten::relu",
      "aten::relu_",        "aten::sigmoid",       "aten::tanh",
      "aten::neg",          "aten::exp",           "aten::clamp",
      "aten::clamp_min",    "aten::threshold_backward",
      "aten::sigmoid_backward", "aten::tanh_backward", "aten::where",
      "aten::nan_to_num",   "aten::fill_",         "aten::zero_"};
  for (size_t i = 0; i < DC_COUNTOF(ops); i++)
    if (strcmp(name, ops[i]) == 0) return true;
  return false;
}

/* ---- dtypes ---------------------------------------------------------- */

/* Element bytes of a recorded Input type, 0 when not priced. */
static int type_bytes(const char *ty, dc_dtype *dt) {
  if (strcmp(ty, "float") == 0) {
    *dt = DC_DTYPE_FP32;
    return 4;
  }
  if (strcmp(ty, "c10::Half") == 0) {
    *dt = DC_DTYPE_FP16;
    return 2;
  }
  if (strcmp(ty, "c10::BFloat16") == 0) {
    *dt = DC_DTYPE_BF16;
    return 2;
  }
  return 0;
}

/* ---- GEMM shapes ---------------------------------------------------- */

typedef struct gemm_row {
  int64_t m, n, k, batch;
  int transa, transb; /* -1: not known from strides */
  dc_dtype dtype;
} gemm_row;

/* Whether a matrix operand is a transposed view by its strides: 1 yes,
 * 0 no, -1 unknown (no strides, or neither of the last two is unit). */
static int transposed(const dc_trace *t, const dc_trace_input *in) {
  uint32_t rd, rs;
  const int64_t *d = dc_trace_input_dims(t, in, &rd);
  const int64_t *s = dc_trace_input_strides(t, in, &rs);
  if (!d || !s || rs != rd || rd < 2) return -1;
  int64_t rows = d[rd - 2], cols = d[rd - 1];
  int64_t sr = s[rd - 2], sc = s[rd - 1];
  if (sc == 1 && (sr >= cols || rows == 1)) return 0;
  if (sr == 1 && (sc >= rows || cols == 1)) return 1;
  return -1;
}

/* Product of dims[0 .. n), false on overflow. */
static bool prod(const int64_t *dims, uint32_t n, int64_t *out) {
  int64_t p = 1;
  for (uint32_t i = 0; i < n; i++)
    if (dims[i] < 0 || !dc_mul_i64(p, dims[i], &p)) return false;
  *out = p;
  return true;
}

/* Whether the op recorded Input Dims at all. */
static bool has_dims(const dc_trace *t, const dc_trace_args *a) {
  for (uint32_t i = 0; a && i < a->n_inputs; i++)
    if (dc_trace_input_at(t, a, i)->n_shapes) return true;
  return false;
}

static dc_trace_skip gemm_shape(const dc_trace *t, const dc_trace_args *a,
                                gemm_form f, gemm_row *r) {
  uint32_t ia = f == G_ADDMM || f == G_BADDBMM ? 1 : 0;
  const dc_trace_input *ina = dc_trace_input_at(t, a, ia),
                       *inb = dc_trace_input_at(t, a, ia + 1);
  uint32_t ra, rb;
  const int64_t *da = dc_trace_input_dims(t, ina, &ra),
                *db = dc_trace_input_dims(t, inb, &rb);
  if (!has_dims(t, a)) return DC_TRACE_SKIP_NO_SHAPES;
  if (!da || !db) return DC_TRACE_SKIP_SHAPES;
  r->batch = 1;
  r->transa = transposed(t, ina);
  r->transb = transposed(t, inb);
  switch (f) {
  case G_MM:
  case G_ADDMM:
    if (ra != 2 || rb != 2 || da[1] != db[0]) return DC_TRACE_SKIP_SHAPES;
    r->m = da[0], r->k = da[1], r->n = db[1];
    break;
  case G_BMM:
  case G_BADDBMM:
    if (ra != 3 || rb != 3 || da[0] != db[0] || da[2] != db[1])
      return DC_TRACE_SKIP_SHAPES;
    r->batch = da[0], r->m = da[1], r->k = da[2], r->n = db[2];
    break;
  case G_MATMUL:
    if (ra >= 2 && rb == 2 && da[ra - 1] == db[0]) {
      if (!prod(da, ra - 1, &r->m)) return DC_TRACE_SKIP_SHAPES;
      r->k = db[0], r->n = db[1];
      if (ra > 2) r->transa = -1; /* folded: strides say nothing simple */
    } else if (ra == 3 && rb == 3 && da[0] == db[0] && da[2] == db[1]) {
      r->batch = da[0], r->m = da[1], r->k = da[2], r->n = db[2];
    } else {
      return DC_TRACE_SKIP_SHAPES;
    }
    break;
  case G_LINEAR:
    /* y = x·Wᵀ: W[n,k] is read transposed whatever its strides */
    if (ra < 2 || rb != 2 || da[ra - 1] != db[1] ||
        !prod(da, ra - 1, &r->m))
      return DC_TRACE_SKIP_SHAPES;
    r->k = db[1], r->n = db[0];
    r->transa = 0;
    r->transb = 1;
    break;
  default:
    return DC_TRACE_SKIP_SHAPES;
  }
  if (r->m < 0 || r->n < 0 || r->k < 0 || r->batch < 0)
    return DC_TRACE_SKIP_SHAPES;
  if (r->m == 0 || r->n == 0 || r->k == 0 || r->batch == 0)
    return DC_TRACE_SKIP_EMPTY;
  const char *ty = dc_trace_input_type(t, ina);
  if (!type_bytes(ty, &r->dtype)) return DC_TRACE_SKIP_DTYPE;
  return DC_TRACE_SKIP_NONE_;
}

/* The cuBLAS / CUTLASS layout suffix of a GEMM kernel name ("_tn" then
 * '_', '>', ':', '(' or the end): transb, transa. False when absent. */
static bool kernel_layout(const char *name, int *transa, int *transb) {
  for (const char *p = strchr(name, '_'); p; p = strchr(p + 1, '_')) {
    char x = p[1], y = x ? p[2] : 0, z = y ? p[3] : 0;
    if ((x == 'n' || x == 't') && (y == 'n' || y == 't') &&
        (z == '_' || z == '>' || z == ':' || z == '(' || z == '\0')) {
      *transb = x == 't';
      *transa = y == 't';
      return true;
    }
  }
  return false;
}

static bool is_gemm_kernel(const char *name) {
  return strstr(name, "gemm") || strstr(name, "GEMM");
}

const char *dc_trace_gemm_kernel(const dc_trace *t,
                                 const dc_trace_launched *l) {
  for (uint32_t j = 0; j < l->n; j++) {
    const dc_trace_event *g = &t->ev[l->gpu[j]];
    if (g->kind == DC_TRACE_KERNEL && is_gemm_kernel(t->names[g->name]))
      return t->names[g->name];
  }
  return NULL;
}

bool dc_trace_kernel_is_tf32(const char *name) {
  return name && (strstr(name, "tf32") || strstr(name, "1688gemm"));
}

/* ---- the rows ------------------------------------------------------- */

static void put_names(dc_buf *out, const dc_trace *t,
                      const dc_trace_launched *l) {
  dc_buf names = {0};
  for (uint32_t j = 0; j < l->n; j++) {
    const dc_trace_event *e = &t->ev[l->gpu[j]];
    if (e->kind != DC_TRACE_KERNEL) continue;
    if (names.len) dc_buf_puts(&names, "; ");
    dc_buf_puts(&names, t->names[e->name]);
  }
  dc_buf_put_csv_field(out, names.data ? names.data : "");
  dc_buf_free(&names);
}

static bool is_gemm(const char *name) { return gemm_form_of(name) != G_NONE; }

/* A row's fields up to kernel_names, or why the op gives none. */
typedef dc_trace_skip (*row_fn)(const dc_trace *t, size_t ev,
                                const dc_trace_launched *l, dc_buf *out,
                                dc_trace_rows_report *rep);

static dc_trace_skip gemm_row_of(const dc_trace *t, size_t ev,
                                 const dc_trace_launched *l, dc_buf *out,
                                 dc_trace_rows_report *rep) {
  const char *name = t->names[t->ev[ev].name];
  gemm_form f = gemm_form_of(name);
  gemm_row r = {0};
  dc_trace_skip why = gemm_shape(t, dc_trace_args_of(t, ev), f, &r);
  if (why != DC_TRACE_SKIP_NONE_) return why;
  if (l->n_kernels == 0) return DC_TRACE_SKIP_NO_KERNEL;
  const char *gk = dc_trace_gemm_kernel(t, l);
  const char *layout = "strides";
  if (f == G_LINEAR) {
    layout = "semantics";
  } else if (r.transa < 0 || r.transb < 0) {
    int ka, kb;
    if (gk && kernel_layout(gk, &ka, &kb)) {
      layout = "kernel";
      r.transa = ka, r.transb = kb;
    } else {
      layout = "unknown";
      r.transa = r.transa > 0, r.transb = r.transb > 0;
    }
  }
  dc_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = DC_KERNEL_GEMM, k.scale = 1;
  k.u.gemm.m = r.m, k.u.gemm.n = r.n, k.u.gemm.k = r.k;
  k.u.gemm.batch = r.batch, k.u.gemm.dtype = r.dtype;
  why = row_ok(&k, l->kernel_us);
  if (why != DC_TRACE_SKIP_NONE_) return why;
  if (r.dtype == DC_DTYPE_FP32 && dc_trace_kernel_is_tf32(gk)) {
    r.dtype = DC_DTYPE_TF32;
    rep->tf32++;
  }
  dc_buf_printf(out, "%s,%lld,%lld,%lld,%lld,%d,%d,%s,%.3f,%u,%s,", name,
                (long long)r.batch, (long long)r.m, (long long)r.n,
                (long long)r.k, r.transa, r.transb, dc_dtype_name(r.dtype),
                l->kernel_us, l->n_kernels, layout);
  return DC_TRACE_SKIP_NONE_;
}

static dc_trace_skip ew_shape(const dc_trace *t, const dc_trace_args *a,
                              int64_t *elements, int *bytes) {
  if (!has_dims(t, a)) return DC_TRACE_SKIP_NO_SHAPES;
  int64_t big = -1;
  int size = 0;
  for (uint32_t i = 0; i < a->n_inputs; i++) {
    const dc_trace_input *in = dc_trace_input_at(t, a, i);
    uint32_t r;
    const int64_t *d = dc_trace_input_dims(t, in, &r);
    dc_dtype dt;
    int b = type_bytes(dc_trace_input_type(t, in), &dt);
    int64_t n;
    if (!d || r == 0 || !b) continue; /* scalars, None, other types */
    if (!prod(d, r, &n)) return DC_TRACE_SKIP_SHAPES;
    if (n > big) big = n, size = b;
  }
  if (big < 0) {
    /* no tensor of a priced type: say why */
    for (uint32_t i = 0; i < a->n_inputs; i++) {
      uint32_t r;
      if (dc_trace_input_dims(t, dc_trace_input_at(t, a, i), &r) && r > 0)
        return DC_TRACE_SKIP_DTYPE;
    }
    return DC_TRACE_SKIP_NO_SHAPES;
  }
  if (big == 0) return DC_TRACE_SKIP_EMPTY;
  int full = 0;
  for (uint32_t i = 0; i < a->n_inputs; i++) {
    const dc_trace_input *in = dc_trace_input_at(t, a, i);
    uint32_t r;
    const int64_t *d = dc_trace_input_dims(t, in, &r);
    dc_dtype dt;
    int64_t n;
    if (d && r > 0 && type_bytes(dc_trace_input_type(t, in), &dt) &&
        prod(d, r, &n) && n == big)
      full++;
  }
  *elements = big;
  *bytes = (full + 1) * size;
  return DC_TRACE_SKIP_NONE_;
}

static dc_trace_skip ew_row_of(const dc_trace *t, size_t ev,
                               const dc_trace_launched *l, dc_buf *out,
                               dc_trace_rows_report *rep) {
  (void)rep;
  int64_t elements = 0;
  int bytes = 0;
  dc_trace_skip why = ew_shape(t, dc_trace_args_of(t, ev), &elements, &bytes);
  if (why != DC_TRACE_SKIP_NONE_) return why;
  if (l->n_kernels == 0) return DC_TRACE_SKIP_NO_KERNEL;
  dc_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = DC_KERNEL_ELEMENTWISE, k.scale = 1;
  k.u.ew.elements = elements, k.u.ew.flops_per_elem = 1;
  k.u.ew.bytes_per_elem = bytes;
  why = row_ok(&k, l->kernel_us);
  if (why != DC_TRACE_SKIP_NONE_) return why;
  dc_buf_printf(out, "%s,%lld,1,%d,%.3f,%u,", t->names[t->ev[ev].name],
                (long long)elements, bytes, l->kernel_us, l->n_kernels);
  return DC_TRACE_SKIP_NONE_;
}

/* The rows of the ops `is_kind` accepts, in the selected steps. An op of
 * the kind with one of the kind below it (aten::linear over aten::addmm,
 * aten::add over aten::add_) leaves the row to the innermost. */
static void rows(const dc_trace_attrib *at, const char *header,
                 bool (*is_kind)(const char *), row_fn row, dc_buf *out,
                 dc_trace_rows_report *rep) {
  const dc_trace_model *m = at->m;
  const dc_trace *t = m->t;
  dc_buf_puts(out, header);
  for (size_t p = 0; p < m->n_cpu; p++) {
    size_t ev = m->cpu[p];
    const dc_trace_event *e = &t->ev[ev];
    if (e->kind != DC_TRACE_OP || !is_kind(t->names[e->name]) ||
        dc_trace_model_step_of(m, e->ts_ns) < 0)
      continue;
    bool nested = false;
    for (size_t q = p + 1; q < at->end[p] && !nested; q++)
      nested = t->ev[m->cpu[q]].kind == DC_TRACE_OP &&
               is_kind(t->names[t->ev[m->cpu[q]].name]);
    if (nested) {
      rep->nested++;
      continue;
    }
    dc_trace_launched l = dc_trace_attrib_of(at, ev);
    dc_trace_skip why = row(t, ev, &l, out, rep);
    if (why != DC_TRACE_SKIP_NONE_) {
      rep->skipped[why]++;
      continue;
    }
    rep->rows++;
    put_names(out, t, &l);
    dc_buf_putc(out, '\n');
  }
}

void dc_trace_rows_write(const dc_trace_attrib *at, dc_trace_rows_kind kind,
                         dc_buf *out, dc_trace_rows_report *rep) {
  memset(rep, 0, sizeof *rep);
  if (kind == DC_TRACE_ROWS_GEMM)
    rows(at,
         "op,batch,m,n,k,transa,transb,dtype,time_us,kernels,layout,"
         "kernel_names\n",
         is_gemm, gemm_row_of, out, rep);
  else
    rows(at,
         "op,elements,flops_per_elem,bytes_per_elem,time_us,kernels,"
         "kernel_names\n",
         is_elementwise, ew_row_of, out, rep);
}
