/*
 * load.c — reads a PyTorch profiler (Kineto) Chrome-trace JSON file,
 * plain or gzip, into compact event records.
 *
 * The JSON goes through yajl's SAX parser in 256 KiB chunks, inflated
 * by zlib when the file is gzip (jsonio.c, shared with the
 * execution-trace reader), so memory never holds the text or a DOM: for each element of "traceEvents" we keep only ph, cat,
 * name, pid, tid, ts, dur and args.correlation, and store a 40-byte record
 * for complete events ("ph": "X") of a category we analyse. CPU ops also
 * keep the args that say what they computed (Input Dims, Input type,
 * Input Strides, External id, Record function id, Sequence number, Fwd
 * thread id): they stream into per-event scratch arrays (the keys of an
 * event may come in any order, "cat" after "args") and are copied into
 * the trace's side tables when the event turns out to be a CPU op.
 * Everything else (other args, call stacks, metadata, flow events) is
 * skipped as it streams past. Accepted shapes: {"traceEvents": [...],
 * ...} and the bare array form of the Chrome trace format.
 *
 * Categories, current and 2021 (Kineto before PyTorch 1.9):
 *   cpu_op | Operator          -> op          kernel     | Kernel -> kernel
 *   user_annotation            -> annotation  gpu_memcpy | Memcpy -> memcpy
 *   python_function            -> python      gpu_memset | Memset -> memset
 *   cuda_runtime | cuda_driver | Runtime -> runtime call
 * Anything else (ac2g, async flows, Trace spans, gpu_user_annotation,
 * instant and counter events) is skipped.
 *
 * Errors are reported as E0801 with the file's line:col where yajl or our
 * type checks stop, and the offending line echoed when it is short.
 *
 * One file: yajl's callbacks are one state machine over one load_ctx,
 * which the CPU ops' args stream through too, and the error reporting
 * reads that state.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/trace/jsonio_int.h"
#include "runtime/trace/trace.h"

/* The record stays 40 bytes: the args index fills padding. */
_Static_assert(sizeof(dc_trace_event) == 40, "dc_trace_event grew");

#define SCRATCH_MAX 4096 /* longer names are truncated (kernel templates) */

/* ---- interning ------------------------------------------------------------
 */

/* Interns s[0..n) into (strs, n_strs) with an open-addressing table of
 * indices + 1 (0 = empty). Returns the index. */
static uint32_t intern(const char ***strs, size_t *n_strs, size_t *cap_strs,
                       uint32_t **slots, size_t *slot_cap, const char *s,
                       size_t n, dc_arena *a) {
  if ((*n_strs + 1) * 2 > *slot_cap) {
    size_t cap = *slot_cap ? *slot_cap * 2 : 1024;
    uint32_t *ns = dc_xcalloc(cap, sizeof *ns);
    for (size_t i = 0; i < *n_strs; i++) {
      const char *x = (*strs)[i];
      size_t j = dc_fnv1a(DC_FNV1A_INIT, x, strlen(x)) & (cap - 1);
      while (ns[j])
        j = (j + 1) & (cap - 1);
      ns[j] = (uint32_t)i + 1;
    }
    free(*slots);
    *slots = ns;
    *slot_cap = cap;
  }
  size_t j = dc_fnv1a(DC_FNV1A_INIT, s, n) & (*slot_cap - 1);
  while ((*slots)[j]) {
    const char *x = (*strs)[(*slots)[j] - 1];
    if (strncmp(x, s, n) == 0 && x[n] == '\0') return (*slots)[j] - 1;
    j = (j + 1) & (*slot_cap - 1);
  }
  if (*n_strs == *cap_strs) {
    *cap_strs = *cap_strs ? *cap_strs * 2 : 256;
    *strs = dc_xrealloc(*strs, *cap_strs * sizeof **strs);
  }
  DC_ASSERT(*n_strs < UINT32_MAX);
  (*strs)[*n_strs] = dc_arena_strndup(a, s, n);
  (*slots)[j] = (uint32_t)*n_strs + 1;
  return (uint32_t)(*n_strs)++;
}

/* ---- the SAX state ----------------------------------------------------------
 */

enum field { F_NONE, F_PH, F_CAT, F_NAME, F_PID, F_TID, F_TS, F_DUR, F_ARGS };
/* The args we read (A_CORR for every event, the others for CPU ops). */
enum arg_key {
  A_NONE,
  A_CORR,
  A_EXT,
  A_RFID,
  A_SEQ,
  A_FWD,
  A_DIMS,
  A_STRIDES,
  A_TYPES
};
enum { NO_EVENTS = -100 };

static const char *field_name(enum field f) {
  static const char *const names[] = {"",    "ph", "cat", "name", "pid",
                                      "tid", "ts", "dur", "args"};
  return names[f];
}

typedef struct scratch_str {
  char s[SCRATCH_MAX];
  size_t n;
  bool set;
} scratch_str;

/* Input Dims or Input Strides of the current event while it streams:
 * values, shapes over them, and per input its run of shapes. */
typedef struct arg_input {
  uint32_t shape, n; /* into shapes */
  bool list, bad;
} arg_input;

typedef struct arg_shapes {
  bool set;
  int64_t *vals;
  size_t n_vals, cap_vals;
  dc_trace_shape *shapes;
  size_t n_shapes, cap_shapes;
  arg_input *in;
  size_t n_in, cap_in;
} arg_shapes;

typedef struct load_ctx {
  js_in in; /* the stream, its position and diagnostics */
  dc_trace *t;
  dc_arena *a;
  int depth;
  int ev_d; /* depth of the traceEvents elements, or NO_EVENTS */
  bool top_map, saw_events, saw_nodes;
  char top_key[32];
  char dist_key[16]; /* the key just read inside "distributedInfo" */
  /* the current event */
  bool in_event, in_args;
  enum field field;
  enum arg_key arg;   /* the args key just read */
  uint32_t seen_fields, seen_args; /* bits: the keys read (duplicates) */
  enum arg_key arr;   /* the args array being read (A_DIMS, ...), or none */
  /* the CPU-op args of the current event */
  int64_t ext_id, rf_id, seq, fwd_tid;
  arg_shapes dims, strides;
  bool types_set;
  uint32_t *types;
  size_t n_types, cap_types;
  char ph;
  int kind; /* -1: skip */
  bool has_ts;
  int64_t ts_ns, dur_ns, corr;
  scratch_str name, pid, tid;
} load_ctx;

static const struct {
  const char *cat;
  dc_trace_kind kind;
} cat_table[] = {
    {"cpu_op", DC_TRACE_OP},
    {"Operator", DC_TRACE_OP},
    {"user_annotation", DC_TRACE_ANNOT},
    {"python_function", DC_TRACE_PYTHON},
    {"cuda_runtime", DC_TRACE_RUNTIME},
    {"cuda_driver", DC_TRACE_RUNTIME},
    {"Runtime", DC_TRACE_RUNTIME},
    {"kernel", DC_TRACE_KERNEL},
    {"Kernel", DC_TRACE_KERNEL},
    {"gpu_memcpy", DC_TRACE_MEMCPY},
    {"Memcpy", DC_TRACE_MEMCPY},
    {"gpu_memset", DC_TRACE_MEMSET},
    {"Memset", DC_TRACE_MEMSET},
};

static int cat_kind(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < DC_COUNTOF(cat_table); i++)
    if (strlen(cat_table[i].cat) == n && memcmp(cat_table[i].cat, s, n) == 0)
      return (int)cat_table[i].kind;
  return -1;
}

#define error_here(c, ...) js_error_here(&(c)->in, __VA_ARGS__)

/* The 1-based index of the current element of traceEvents. */
static long long ev_no(const load_ctx *c) {
  return (long long)c->t->n_json_events;
}

/* A number token (µs, as Kineto writes ts/dur) as int64 nanoseconds:
 * exact for up to three decimals; other forms go through strtod. */
static bool number_ns(const char *s, size_t n, int64_t *out) {
  size_t i = 0;
  bool neg = false;
  if (i < n && s[i] == '-') {
    neg = true;
    i++;
  }
  int64_t ip = 0;
  size_t digits = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9') {
    if (++digits > 16) return false;
    ip = ip * 10 + (s[i++] - '0');
  }
  if (ip > INT64_MAX / 1000 - 1) return false; /* ~292 years of µs */
  int64_t frac = 0;
  int fd = 0;
  bool round_up = false;
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      if (fd < 3) {
        frac = frac * 10 + (s[i] - '0');
        fd++;
      } else if (fd == 3) {
        round_up = s[i] >= '5';
        fd++;
      }
      i++;
    }
  }
  if (i < n) { /* exponent: rare, let strtod handle it */
    char buf[64];
    if (n >= sizeof buf) return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    double v = strtod(buf, NULL) * 1000.0;
    if (!isfinite(v) || fabs(v) > 9.0e18) return false;
    *out = (int64_t)llround(v);
    return true;
  }
  while (fd < 3) {
    frac *= 10;
    fd++;
  }
  int64_t ns = ip * 1000 + frac + (round_up ? 1 : 0);
  *out = neg ? -ns : ns;
  return true;
}

static void scratch_set(scratch_str *x, const unsigned char *s, size_t n) {
  if (n >= SCRATCH_MAX) n = SCRATCH_MAX - 1;
  memcpy(x->s, s, n);
  x->s[n] = '\0';
  x->n = n;
  x->set = true;
}

/* Makes room for one more element of an array of `size`-byte elements. */
static void *grow(void *p, size_t n, size_t *cap, size_t size) {
  if (n < *cap) return p;
  *cap = *cap ? *cap * 2 : 16;
  return dc_xrealloc(p, *cap * size);
}

static void shapes_reset(arg_shapes *x) {
  x->set = true;
  x->n_vals = x->n_shapes = x->n_in = 0;
}

static void shapes_free(arg_shapes *x) {
  free(x->vals);
  free(x->shapes);
  free(x->in);
}

static void shapes_push_shape(arg_shapes *x) {
  x->shapes = grow(x->shapes, x->n_shapes, &x->cap_shapes, sizeof *x->shapes);
  x->shapes[x->n_shapes++] = (dc_trace_shape){(uint32_t)x->n_vals, 0};
}

/* An array opening at `rel` levels below the args value array: a new
 * input (rel 0) or an element of a list of tensors (rel 1). */
static void shapes_open(arg_shapes *x, int rel) {
  if (rel == 0) {
    x->in = grow(x->in, x->n_in, &x->cap_in, sizeof *x->in);
    x->in[x->n_in++] = (arg_input){(uint32_t)x->n_shapes, 0, false, false};
    return;
  }
  arg_input *in = &x->in[x->n_in - 1];
  if (rel > 1 || (in->n > 0 && !in->list) || in->bad) {
    in->bad = true;
    return;
  }
  in->list = true;
  in->n++;
  shapes_push_shape(x);
}

/* An input's array closes: an empty one is a rank-0 shape. */
static void shapes_close_input(arg_shapes *x) {
  arg_input *in = &x->in[x->n_in - 1];
  if (!in->bad && in->n == 0 && !in->list) {
    in->n = 1;
    shapes_push_shape(x);
  }
}

/* A scalar `rel` levels below the args value array (1: in an input, 2:
 * in a list element); anything but an integer spoils its input. */
static void shapes_value(arg_shapes *x, int rel, bool is_num,
                         const unsigned char *s, size_t n) {
  if (rel == 0) { /* a bare scalar where an input's array belongs */
    x->in = grow(x->in, x->n_in, &x->cap_in, sizeof *x->in);
    x->in[x->n_in++] = (arg_input){(uint32_t)x->n_shapes, 0, false, true};
    return;
  }
  arg_input *in = &x->in[x->n_in - 1];
  int64_t v;
  if (in->bad || rel > 2 || (rel == 1 && in->list) ||
      !is_num || !js_int((const char *)s, n, &v)) {
    in->bad = true;
    return;
  }
  if (rel == 1 && in->n == 0) {
    in->n = 1;
    shapes_push_shape(x);
  }
  x->vals = grow(x->vals, x->n_vals, &x->cap_vals, sizeof *x->vals);
  x->vals[x->n_vals++] = v;
  x->shapes[x->n_shapes - 1].rank++;
}

const int64_t *dc_trace_input_dims(const dc_trace *t, const dc_trace_input *in,
                                   uint32_t *rank) {
  *rank = 0;
  if (!in || in->list || in->n_shapes != 1) return NULL;
  const dc_trace_shape *sh = &t->shapes[in->shape];
  *rank = sh->rank;
  return t->dims + sh->first;
}

const int64_t *dc_trace_input_strides(const dc_trace *t,
                                      const dc_trace_input *in,
                                      uint32_t *rank) {
  *rank = 0;
  if (!in || in->list || in->n_strides != 1) return NULL;
  const dc_trace_shape *sh = &t->shapes[in->strides];
  *rank = sh->rank;
  return t->dims + sh->first;
}

const char *dc_trace_input_type(const dc_trace *t, const dc_trace_input *in) {
  return in && in->type != DC_TRACE_NONE ? t->types[in->type] : "";
}

/* Copies one of Input Dims / Input Strides into the trace's pools:
 * input i's run of shapes goes to *first / *count. */
static void keep_shapes(dc_trace *t, const arg_shapes *x, size_t i,
                        uint32_t *first, uint32_t *count) {
  *first = DC_TRACE_NONE;
  *count = 0;
  if (!x->set || i >= x->n_in || x->in[i].bad) return;
  const arg_input *in = &x->in[i];
  *first = (uint32_t)t->n_shapes;
  *count = in->n;
  for (uint32_t j = 0; j < in->n; j++) {
    const dc_trace_shape *sh = &x->shapes[in->shape + j];
    t->shapes = grow(t->shapes, t->n_shapes, &t->cap_shapes, sizeof *t->shapes);
    t->shapes[t->n_shapes++] = (dc_trace_shape){(uint32_t)t->n_dims, sh->rank};
    for (uint32_t r = 0; r < sh->rank; r++) {
      t->dims = grow(t->dims, t->n_dims, &t->cap_dims, sizeof *t->dims);
      t->dims[t->n_dims++] = x->vals[sh->first + r];
    }
  }
}

/* Stores the current event's CPU-op args and returns their index. */
static uint32_t keep_args(load_ctx *c) {
  dc_trace *t = c->t;
  size_t n_in = c->dims.set ? c->dims.n_in : 0;
  if (c->strides.set && c->strides.n_in > n_in) n_in = c->strides.n_in;
  if (c->types_set && c->n_types > n_in) n_in = c->n_types;
  if (n_in == 0 && c->ext_id < 0 && c->rf_id < 0 && c->seq < 0 &&
      c->fwd_tid < 0)
    return DC_TRACE_NONE;
  /* Every index stays below DC_TRACE_NONE. */
  const size_t lim = (size_t)UINT32_MAX - 1;
  size_t more_shapes = c->dims.n_shapes + c->strides.n_shapes;
  size_t more_dims = c->dims.n_vals + c->strides.n_vals;
  if (t->n_args >= lim || n_in > lim - t->n_inputs ||
      more_shapes > lim - t->n_shapes || more_dims > lim - t->n_dims) {
    t->n_args_dropped++;
    return DC_TRACE_NONE;
  }
  t->args = grow(t->args, t->n_args, &t->cap_args, sizeof *t->args);
  dc_trace_args *a = &t->args[t->n_args];
  *a = (dc_trace_args){c->ext_id, c->rf_id, c->seq, c->fwd_tid,
                       (uint32_t)t->n_inputs, (uint32_t)n_in};
  for (size_t i = 0; i < n_in; i++) {
    dc_trace_input in = {0};
    keep_shapes(t, &c->dims, i, &in.shape, &in.n_shapes);
    keep_shapes(t, &c->strides, i, &in.strides, &in.n_strides);
    in.list = c->dims.set && i < c->dims.n_in && c->dims.in[i].list &&
              !c->dims.in[i].bad;
    in.type = c->types_set && i < c->n_types ? c->types[i] : DC_TRACE_NONE;
    t->inputs = grow(t->inputs, t->n_inputs, &t->cap_inputs, sizeof *t->inputs);
    t->inputs[t->n_inputs++] = in;
  }
  return (uint32_t)t->n_args++;
}

static void event_begin(load_ctx *c) {
  c->in_event = true;
  c->in_args = false;
  c->field = F_NONE;
  c->seen_fields = c->seen_args = 0;
  c->ph = 0;
  c->kind = -1;
  c->has_ts = false;
  c->ts_ns = c->dur_ns = 0;
  c->corr = -1;
  c->name.set = c->pid.set = c->tid.set = false;
  c->name.n = c->pid.n = c->tid.n = 0;
  c->arg = c->arr = A_NONE;
  c->ext_id = c->rf_id = c->seq = c->fwd_tid = -1;
  c->dims.set = c->strides.set = c->types_set = false;
  c->t->n_json_events++;
}

static bool event_end(load_ctx *c) {
  c->in_event = false;
  if (c->ph != 'X' || c->kind < 0) return true;
  dc_trace *t = c->t;
  if (!c->has_ts) {
    error_here(c, "event #%lld has no 'ts'", ev_no(c));
    return false;
  }
  if (c->dur_ns < 0) {
    error_here(c, "event #%lld has a negative 'dur'", ev_no(c));
    return false;
  }
  if (t->n_ev == t->cap_ev) {
    t->cap_ev = t->cap_ev ? t->cap_ev * 2 : 4096;
    t->ev = dc_xrealloc(t->ev, t->cap_ev * sizeof *t->ev);
  }
  dc_trace_event *e = &t->ev[t->n_ev++];
  e->ts_ns = c->ts_ns;
  e->dur_ns = c->dur_ns;
  e->corr = c->corr;
  e->kind = (uint8_t)c->kind;
  e->args = c->kind == DC_TRACE_OP || c->kind == DC_TRACE_ANNOT
                ? keep_args(c)
                : DC_TRACE_NONE;
  if (dc_printable(c->name.s, c->name.n)) {
    e->name = intern(&t->names, &t->n_names, &t->cap_names, &t->name_slots,
                     &t->name_cap, c->name.s, c->name.n, c->a);
  } else { /* control bytes or invalid UTF-8: kept escaped (support.h) */
    dc_buf esc = {0};
    dc_buf_put_printable(&esc, c->name.s, c->name.n);
    e->name = intern(&t->names, &t->n_names, &t->cap_names, &t->name_slots,
                     &t->name_cap, esc.data, esc.len, c->a);
    dc_buf_free(&esc);
  }
  char key[2 * SCRATCH_MAX / 4 + 2];
  size_t pn = c->pid.n < SCRATCH_MAX / 4 ? c->pid.n : SCRATCH_MAX / 4;
  size_t tn = c->tid.n < SCRATCH_MAX / 4 ? c->tid.n : SCRATCH_MAX / 4;
  memcpy(key, c->pid.s, pn);
  key[pn] = '/';
  memcpy(key + pn + 1, c->tid.s, tn);
  e->thread = intern(&t->threads, &t->n_threads, &t->cap_threads,
                     &t->thread_slots, &t->thread_cap, key, pn + 1 + tn, c->a);
  if (t->n_ev == 1 || c->ts_ns < t->t0_ns) t->t0_ns = c->ts_ns;
  return true;
}

/* A scalar value: `type` names it for messages; s/n is its text for
 * strings and numbers. */
static int on_scalar(load_ctx *c, const char *type, bool is_str, bool is_num,
                     const unsigned char *s, size_t n) {
  c->in.tok_len = is_str ? n + 2 : is_num ? n : 0;
  if (c->depth == 1 && c->top_map) {
    if (strcmp(c->top_key, "traceEvents") == 0) {
      error_here(c, "'traceEvents' must be an array, not %s", type);
      return 0;
    }
    return 1;
  }
  if (c->depth == 2 && c->top_map &&
      strcmp(c->top_key, "distributedInfo") == 0) {
    /* the recording rank and the job's size (torch.distributed) */
    int64_t v;
    if (is_num && js_int((const char *)s, n, &v) && v >= 0 &&
        v < INT32_MAX) {
      if (strcmp(c->dist_key, "rank") == 0) c->t->dist_rank = (int32_t)v;
      if (strcmp(c->dist_key, "world_size") == 0)
        c->t->dist_world = (int32_t)v;
    }
    c->dist_key[0] = '\0';
    return 1;
  }
  if (c->depth == c->ev_d) {
    error_here(c, "element #%lld of 'traceEvents' is %s, not an object",
               ev_no(c) + 1, type);
    return 0;
  }
  if (c->in_args && c->arr != A_NONE && c->depth >= c->ev_d + 3) {
    int rel = c->depth - (c->ev_d + 3);
    if (c->arr == A_TYPES) {
      if (rel != 0) return 1; /* nested: not a type name */
      uint32_t ty = DC_TRACE_NONE;
      if (is_str) {
        dc_trace *t = c->t;
        ty = intern(&t->types, &t->n_types, &t->cap_types, &t->type_slots,
                    &t->type_cap, (const char *)s,
                    n < SCRATCH_MAX ? n : SCRATCH_MAX - 1, c->a);
      }
      c->types = grow(c->types, c->n_types, &c->cap_types, sizeof *c->types);
      c->types[c->n_types++] = ty;
    } else {
      shapes_value(c->arr == A_DIMS ? &c->dims : &c->strides, rel, is_num, s,
                   n);
    }
    return 1;
  }
  if (c->in_args && c->depth == c->ev_d + 2) {
    enum arg_key k = c->arg;
    c->arg = A_NONE;
    if (k == A_EXT || k == A_RFID || k == A_SEQ || k == A_FWD) {
      int64_t v;
      if (is_num && js_int((const char *)s, n, &v) && v >= 0)
        *(k == A_EXT ? &c->ext_id : k == A_RFID ? &c->rf_id
          : k == A_SEQ ? &c->seq : &c->fwd_tid) = v;
      return 1;
    }
    if (k != A_CORR) return 1;
    if (!is_num || !js_int((const char *)s, n, &c->corr)) {
      if (!is_num && !is_str) return 1; /* null: no correlation */
      error_here(c, "'args.correlation' of event #%lld is not an integer",
                 ev_no(c));
      return 0;
    }
    return 1;
  }
  if (!c->in_event || c->depth != c->ev_d + 1) return 1;
  enum field f = c->field;
  c->field = F_NONE;
  switch (f) {
  case F_PH:
  case F_CAT:
  case F_NAME:
    if (!is_str) {
      static const char *const names[] = {
          [F_PH] = "ph", [F_CAT] = "cat", [F_NAME] = "name"};
      error_here(c, "'%s' of event #%lld must be a string, not %s", names[f],
                 ev_no(c), type);
      return 0;
    }
    /* A \u0000 inside a name would cut it short wherever it is used as a
     * C string: refused rather than truncated silently. */
    if (f == F_NAME && memchr(s, '\0', n)) {
      error_here(c, "'name' of event #%lld contains a NUL character "
                    "(\\u0000)", ev_no(c));
      return 0;
    }
    if (f == F_PH) c->ph = n == 1 ? (char)s[0] : '?';
    if (f == F_CAT) c->kind = cat_kind(s, n);
    if (f == F_NAME) scratch_set(&c->name, s, n);
    return 1;
  case F_PID:
  case F_TID:
    if (!is_str && !is_num) {
      error_here(c,
                 "'%s' of event #%lld must be a number or a string, "
                 "not %s",
                 f == F_PID ? "pid" : "tid", ev_no(c), type);
      return 0;
    }
    scratch_set(f == F_PID ? &c->pid : &c->tid, s, n);
    return 1;
  case F_TS:
  case F_DUR: {
    int64_t v;
    if (!is_num) {
      error_here(c, "'%s' of event #%lld must be a number, not %s",
                 f == F_TS ? "ts" : "dur", ev_no(c), type);
      return 0;
    }
    /* ts and dur below 2^62 ns each: every end (ts + dur) and every
     * difference of starts and ends the readers take fits in 64 bits. */
    if (!number_ns((const char *)s, n, &v) ||
        (f == F_TS && v < 0) || v >= DC_TRACE_MAX_NS) {
      error_here(c, "'%s' of event #%lld is out of range (0 to %lld µs)",
                 f == F_TS ? "ts" : "dur", ev_no(c),
                 (long long)(DC_TRACE_MAX_NS / 1000));
      return 0;
    }
    if (f == F_TS) {
      c->ts_ns = v;
      c->has_ts = true;
    } else {
      c->dur_ns = v;
    }
    return 1;
  }
  default:
    return 1;
  }
}

static int cb_null(void *ctx) {
  return on_scalar(ctx, "null", false, false, NULL, 0);
}
static int cb_bool(void *ctx, int v) {
  (void)v;
  return on_scalar(ctx, "a boolean", false, false, NULL, 0);
}
static int cb_number(void *ctx, const char *s, size_t n) {
  return on_scalar(ctx, "a number", false, true, (const unsigned char *)s, n);
}
static int cb_string(void *ctx, const unsigned char *s, size_t n) {
  return on_scalar(ctx, "a string", true, false, s, n);
}

static int cb_start_map(void *ctx) {
  load_ctx *c = ctx;
  c->in.tok_len = 1;
  if (c->depth == 0) {
    c->top_map = true;
  } else if (c->depth == c->ev_d) {
    event_begin(c);
  } else if (c->in_event && c->depth == c->ev_d + 1) {
    if (c->field == F_ARGS) {
      c->in_args = true;
      c->arg = A_NONE;
    } else if (c->field != F_NONE) {
      error_here(c, "'%s' of event #%lld cannot be an object",
                 field_name(c->field), ev_no(c));
      return 0;
    }
    c->field = F_NONE;
  } else if (c->depth == 1 && c->top_map &&
             strcmp(c->top_key, "traceEvents") == 0) {
    error_here(c, "'traceEvents' must be an array, not an object");
    return 0;
  } else if (c->in_args && c->depth == c->ev_d + 2) {
    c->arg = A_NONE;
  } else if (c->in_args && c->depth >= c->ev_d + 3 &&
             (c->arr == A_DIMS || c->arr == A_STRIDES)) {
    /* an object inside Input Dims: that input is not a shape */
    arg_shapes *x = c->arr == A_DIMS ? &c->dims : &c->strides;
    int rel = c->depth - (c->ev_d + 3);
    if (rel == 0) shapes_value(x, 0, false, NULL, 0);
    else x->in[x->n_in - 1].bad = true;
  } else if (c->in_args && c->depth == c->ev_d + 3 && c->arr == A_TYPES) {
    c->types = grow(c->types, c->n_types, &c->cap_types, sizeof *c->types);
    c->types[c->n_types++] = DC_TRACE_NONE; /* not a type name */
  }
  c->depth++;
  return 1;
}

static int cb_end_map(void *ctx) {
  load_ctx *c = ctx;
  c->in.tok_len = 1;
  c->depth--;
  if (c->in_args && c->depth == c->ev_d + 1) {
    c->in_args = false;
  } else if (c->in_event && c->depth == c->ev_d) {
    return event_end(c) ? 1 : 0;
  }
  return 1;
}

static int cb_start_array(void *ctx) {
  load_ctx *c = ctx;
  c->in.tok_len = 1;
  if (c->depth == 0) { /* the bare-array form */
    c->ev_d = 1;
    c->saw_events = true;
  } else if (c->depth == 1 && c->top_map) {
    if (strcmp(c->top_key, "traceEvents") == 0) {
      c->ev_d = 2;
      c->saw_events = true;
    } else if (strcmp(c->top_key, "nodes") == 0 && !c->saw_events) {
      c->saw_nodes = true; /* an execution trace: stop reading */
      return 0;
    }
  } else if (c->depth == c->ev_d) {
    error_here(c,
               "element #%lld of 'traceEvents' is an array, not an "
               "object",
               ev_no(c) + 1);
    return 0;
  } else if (c->in_event && c->depth == c->ev_d + 1) {
    if (c->field != F_NONE && c->field != F_ARGS) {
      error_here(c, "'%s' of event #%lld cannot be an array",
                 field_name(c->field), ev_no(c));
      return 0;
    }
    c->field = F_NONE;
  } else if (c->in_args && c->depth == c->ev_d + 2) {
    if (c->arg == A_CORR) {
      error_here(c, "'args.correlation' of event #%lld is not an integer",
                 ev_no(c));
      return 0;
    }
    c->arr = c->arg == A_DIMS || c->arg == A_STRIDES || c->arg == A_TYPES
                 ? c->arg
                 : A_NONE;
    c->arg = A_NONE;
    if (c->arr == A_DIMS) shapes_reset(&c->dims);
    if (c->arr == A_STRIDES) shapes_reset(&c->strides);
    if (c->arr == A_TYPES) {
      c->types_set = true;
      c->n_types = 0;
    }
  } else if (c->in_args && c->depth >= c->ev_d + 3 &&
             (c->arr == A_DIMS || c->arr == A_STRIDES)) {
    shapes_open(c->arr == A_DIMS ? &c->dims : &c->strides,
                c->depth - (c->ev_d + 3));
  } else if (c->in_args && c->depth == c->ev_d + 3 && c->arr == A_TYPES) {
    c->types = grow(c->types, c->n_types, &c->cap_types, sizeof *c->types);
    c->types[c->n_types++] = DC_TRACE_NONE; /* not a type name */
  }
  c->depth++;
  return 1;
}

static int cb_end_array(void *ctx) {
  load_ctx *c = ctx;
  c->depth--;
  if (c->depth == c->ev_d - 1) c->ev_d = NO_EVENTS;
  if (c->in_args && c->arr != A_NONE) {
    if (c->depth == c->ev_d + 2)
      c->arr = A_NONE;
    else if (c->depth == c->ev_d + 3 && c->arr != A_TYPES)
      shapes_close_input(c->arr == A_DIMS ? &c->dims : &c->strides);
  }
  return 1;
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t n) {
  load_ctx *c = ctx;
  if (c->depth == 1 && c->top_map) {
    size_t k = n < sizeof c->top_key - 1 ? n : sizeof c->top_key - 1;
    memcpy(c->top_key, s, k);
    c->top_key[k] = '\0';
    if (n != k) c->top_key[0] = '\0';
  } else if (c->depth == 2 && c->top_map &&
             strcmp(c->top_key, "distributedInfo") == 0) {
    size_t k = n < sizeof c->dist_key - 1 ? n : sizeof c->dist_key - 1;
    memcpy(c->dist_key, s, k);
    c->dist_key[k] = '\0';
    if (n != k) c->dist_key[0] = '\0';
  } else if (c->in_event && c->depth == c->ev_d + 1) {
    static const struct {
      const char *k;
      enum field f;
    } keys[] = {{"ph", F_PH},   {"cat", F_CAT},  {"name", F_NAME},
                {"pid", F_PID}, {"tid", F_TID},  {"ts", F_TS},
                {"dur", F_DUR}, {"args", F_ARGS}};
    c->field = F_NONE;
    for (size_t i = 0; i < DC_COUNTOF(keys); i++)
      if (strlen(keys[i].k) == n && memcmp(keys[i].k, s, n) == 0) {
        c->field = keys[i].f;
        /* JSON leaves a repeated key's meaning open: refused, not
         * resolved to the first or the last */
        if (c->seen_fields & (1u << c->field)) {
          c->in.tok_len = n + 2;
          error_here(c, "event #%lld has two '%s' keys", ev_no(c),
                     keys[i].k);
          return 0;
        }
        c->seen_fields |= 1u << c->field;
        break;
      }
  } else if (c->in_args && c->depth == c->ev_d + 2) {
    static const struct {
      const char *k;
      enum arg_key a;
    } keys[] = {{"correlation", A_CORR},
                {"External id", A_EXT},
                {"Record function id", A_RFID},
                {"Sequence number", A_SEQ},
                {"Fwd thread id", A_FWD},
                {"Input Dims", A_DIMS},
                {"Input Strides", A_STRIDES},
                {"Input type", A_TYPES}};
    c->arg = A_NONE;
    for (size_t i = 0; i < DC_COUNTOF(keys); i++)
      if (strlen(keys[i].k) == n && memcmp(keys[i].k, s, n) == 0) {
        c->arg = keys[i].a;
        if (c->seen_args & (1u << c->arg)) {
          c->in.tok_len = n + 2;
          error_here(c, "'args' of event #%lld has two '%s' keys", ev_no(c),
                     keys[i].k);
          return 0;
        }
        c->seen_args |= 1u << c->arg;
        break;
      }
  }
  return 1;
}

static const yajl_callbacks callbacks = {
    cb_null,    cb_bool,        NULL,         NULL,
    cb_number,  cb_string,      cb_start_map, cb_map_key,
    cb_end_map, cb_start_array, cb_end_array};

bool dc_trace_load(const char *path, dc_trace *t, dc_arena *a, dc_diags *d) {
  memset(t, 0, sizeof *t);
  t->dist_rank = t->dist_world = -1;
  t->path = dc_arena_strdup(a, path);
  dc_source *src = dc_arena_alloc(a, sizeof *src);
  src->path = t->path;
  src->text = "";
  t->src = src;
  load_ctx c = {0};
  c.t = t;
  c.a = a;
  c.ev_d = NO_EVENTS;
  js_status st = js_stream(&c.in, path, &callbacks, &c, a, d);
  bool ok = false;
  if (st == JS_FAILED) goto done;
  if (c.saw_nodes) {
    js_error_file(&c.in,
                  "pass the Kineto trace of the same run (the JSON "
                  "that torch.profiler writes with 'traceEvents'); "
                  "an execution trace describes the graph: "
                  "`dlrmc graph --from-et` and `dlrmc replay` read it",
                  "this is a PyTorch execution trace (a graph of "
                  "'nodes'), not a profiler trace: it has no timings");
    goto done;
  }
  if (!c.saw_events) {
    js_error_file(&c.in,
                  "expected the JSON written by torch.profiler "
                  "(export_chrome_trace or tensorboard_trace_handler)",
                  "no 'traceEvents' array: not a Chrome/Kineto trace");
    goto done;
  }
  ok = true;
done:
  shapes_free(&c.dims);
  shapes_free(&c.strides);
  free(c.types);
  if (!ok) dc_trace_free(t);
  return ok;
}

void dc_trace_free(dc_trace *t) {
  free(t->ev);
  free(t->names);
  free(t->threads);
  free(t->name_slots);
  free(t->thread_slots);
  free(t->type_slots);
  free(t->args);
  free(t->inputs);
  free(t->shapes);
  free(t->dims);
  free(t->types);
  const char *path = t->path;
  const dc_source *src = t->src;
  memset(t, 0, sizeof *t);
  t->path = path;
  t->src = src;
  t->dist_rank = t->dist_world = -1;
}

/* ---- which kind of trace a file is -------------------------------------
 * The first top-level key that only one format has decides; the stream
 * stops there, so classifying a 200 MB trace reads a few bytes. */
typedef struct sniff_ctx {
  js_in in;
  int depth;
  dc_trace_format fmt;
} sniff_ctx;

static int sn_scalar(void *ctx) {
  (void)ctx;
  return 1;
}
static int sn_bool(void *ctx, int b) {
  (void)b;
  return sn_scalar(ctx);
}
static int sn_number(void *ctx, const char *s, size_t n) {
  (void)s;
  (void)n;
  return sn_scalar(ctx);
}
static int sn_string(void *ctx, const unsigned char *s, size_t n) {
  (void)s;
  (void)n;
  return sn_scalar(ctx);
}
static int sn_open(void *ctx) {
  sniff_ctx *c = ctx;
  c->depth++;
  return 1;
}
static int sn_open_array(void *ctx) {
  sniff_ctx *c = ctx;
  if (c->depth == 0) { /* the bare-array form of a Chrome trace */
    c->fmt = DC_TRACE_FMT_KINETO;
    return 0;
  }
  c->depth++;
  return 1;
}
static int sn_close(void *ctx) {
  ((sniff_ctx *)ctx)->depth--;
  return 1;
}
static int sn_key(void *ctx, const unsigned char *s, size_t n) {
  sniff_ctx *c = ctx;
  if (c->depth != 1) return 1;
  static const struct {
    const char *k;
    dc_trace_format f;
  } keys[] = {{"nodes", DC_TRACE_FMT_EXECUTION_TRACE},
              {"schema", DC_TRACE_FMT_EXECUTION_TRACE},
              {"traceEvents", DC_TRACE_FMT_KINETO},
              {"schemaVersion", DC_TRACE_FMT_KINETO},
              {"distributedInfo", DC_TRACE_FMT_KINETO},
              {"deviceProperties", DC_TRACE_FMT_KINETO}};
  for (size_t i = 0; i < DC_COUNTOF(keys); i++)
    if (strlen(keys[i].k) == n && memcmp(keys[i].k, s, n) == 0) {
      c->fmt = keys[i].f;
      return 0;
    }
  return 1;
}

static const yajl_callbacks sniff_callbacks = {
    sn_scalar, sn_bool,  NULL,   NULL,          sn_number, sn_string,
    sn_open,   sn_key,   sn_close, sn_open_array, sn_close};

bool dc_trace_classify(const char *path, dc_trace_format *fmt, dc_arena *a,
                       dc_diags *d) {
  sniff_ctx c = {0};
  c.fmt = DC_TRACE_FMT_UNKNOWN;
  js_status st = js_stream(&c.in, path, &sniff_callbacks, &c, a, d);
  *fmt = c.fmt;
  if (st == JS_FAILED) return false;
  if (c.fmt != DC_TRACE_FMT_UNKNOWN) return true;
  js_error_file(&c.in,
                "give the execution traces (ExecutionTraceObserver "
                "JSON) and the Kineto traces (torch.profiler) of the "
                "run",
                "neither an execution trace ('nodes') nor a Kineto "
                "trace ('traceEvents')");
  return false;
}
