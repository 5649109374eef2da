/*
 * study_int.h — internals shared by the study front end's files (not a
 * contract: only the front end's .c files include it).
 *
 * The front end keeps the study as the YAML node tree it was written in
 * and resolves a point by reading that tree through a "substitution"
 * layer: the -D overrides and the current sweep point's values replace the
 * nodes at their paths, and a model preset fills what `model:` leaves out.
 * One resolver (resolve.c) does the reading, the checking and the lowering
 * to dc_point, so what `check` accepts is exactly what `run` lowers:
 *   - at load time it runs on the base point and on each sweep value once,
 *     with diagnostics (a value is checked in the context of the study,
 *     the other sweep keys at their first value);
 *   - a few constraints between keys (GPU counts, batch divisibility,
 *     widths) are then checked over every combination of the sweep values
 *     that touch them (study.c, from small per-value summaries);
 *   - dc_study_point runs it once more without diagnostics.
 *
 * Files: schema.c (the key table, structure walk, leaf parsers),
 * resolve.c and resolve_*.c (resolver and lowering, one file per part of
 * the study; resolve_int.h), sweep_axes.c (axes, ranges, point decoding,
 * baseline), override.c (-D), study.c (dc_study_load and the accessors).
 * Ownership: everything lives in the study's arena except the
 * per-point data, which the caller's arena holds.
 */
#ifndef DC_STUDY_INT_H
#define DC_STUDY_INT_H

#include "compiler/compiler.h"

/* ---- schema (schema.c) ------------------------------------------------- */

typedef enum fe_skind {
  FE_SK_MAP,     /* a section with the children listed in the table */
  FE_SK_STR,     /* free text */
  FE_SK_NAME,    /* catalog name or path (gpu, overheads, preset) */
  FE_SK_ENUM,    /* one of `enums` */
  FE_SK_INT,     /* count: whole number, SI/binary suffixes, [lo, hi] */
  FE_SK_BYTES,   /* byte size, [lo, hi] */
  FE_SK_NUM,     /* real number, [lo, hi] */
  FE_SK_BOOL,    /* true | false */
  FE_SK_TIME,    /* duration, stored in µs */
  FE_SK_GBPS,    /* bandwidth in GB/s */
  FE_SK_INTLIST, /* non-empty list of counts in [lo, hi] */
  FE_SK_STRLIST, /* list of strings */
  FE_SK_LIST,    /* list of mappings, item schema at "<path>[]" */
  FE_SK_PLAN     /* sharding.plan: an enum or a list ("<path>[]") */
} fe_skind;

#define FE_SF_SWEEP 1u /* may be swept and overridden with a list */
#define FE_SF_OVERRIDE 2u /* may be set with -D */

typedef struct fe_skey {
  const char *path;          /* "training.batch_size", "transforms[].scale" */
  fe_skind kind;
  const char *const *enums;  /* FE_SK_ENUM / FE_SK_PLAN, NULL-terminated */
  double lo, hi;             /* numeric bounds, inclusive */
  unsigned flags;
} fe_skey;

const fe_skey *fe_schema_find(const char *path);
const fe_skey *fe_schema_findn(const char *path, size_t len);
/* Every key of the table, in documentation order. */
const fe_skey *fe_schema_all(size_t *n);

/* Reports unknown keys (with did-you-mean) and section/list shape errors
 * in `node`, which stands at schema path `path`. */
void fe_schema_walk(const dc_node *node, const char *path, dc_diags *d);

/* "did you mean" for a key among `c`, also matching first words. */
const char *fe_schema_suggest_key(const char *word, const char *const *c,
                                  size_t n);

/* The suggestion for a misspelt dotted path among sweepable paths. */
const char *fe_schema_suggest_path(const char *path);

/* Splits a dotted path's text into a fresh, validated schema path:
 * returns NULL and reports when the path is not a key of the study. */
const fe_skey *fe_path_check(const char *path, dc_span at, bool sweep,
                             dc_diags *d);

/* ---- leaf parsers (schema.c); d may be NULL ------------------------------ */

bool fe_leaf_int(const dc_node *n, const char *what, const fe_skey *k,
                 int64_t *out, dc_diags *d);
bool fe_leaf_num(const dc_node *n, const char *what, const fe_skey *k,
                 double *out, dc_diags *d);
bool fe_leaf_enum(const dc_node *n, const char *what, const char *const *e,
                  int *out, dc_diags *d);
bool fe_leaf_bool(const dc_node *n, const char *what, bool *out,
                  dc_diags *d);
bool fe_leaf_time(const dc_node *n, const char *what, const fe_skey *k,
                  double *out_us, dc_diags *d);
bool fe_leaf_gbps(const dc_node *n, const char *what, const fe_skey *k,
                  double *out, dc_diags *d);
bool fe_leaf_str(const dc_node *n, const char *what, const char **out,
                 dc_diags *d);
/* Reports E0103 "expected KIND for WHAT, found ..." and returns false when
 * n is not of kind k. */
bool fe_expect_kind(const dc_node *n, dc_node_kind k, const char *what,
                    dc_diags *d);
/* A short description of a node for messages: "'abc'", "a list". */
const char *fe_node_describe(const dc_node *n, char *buf, size_t cap);

/* The enum tables (NULL-terminated), in the order of point.h's enums. */
extern const char *const fe_enum_interaction[];
extern const char *const fe_enum_loss[];
extern const char *const fe_enum_embedding_kernel[];
extern const char *const fe_enum_framework[];
extern const char *const fe_enum_sharp[];
extern const char *const fe_enum_precision[];
extern const char *const fe_enum_optimizer[];
extern const char *const fe_enum_storage[];
extern const char *const fe_enum_comm_storage[];
extern const char *const fe_enum_zero_grad[];
extern const char *const fe_enum_plan[];
extern const char *const fe_enum_table_sharding[];
extern const char *const fe_enum_embedding_model[];
extern const char *const fe_enum_format[];
extern const char *const fe_enum_estimator[];
extern const char *const fe_enum_objective[];
extern const char *const fe_enum_table_memory[];
extern const char *const fe_enum_memory[];

/* The metric columns the runtime computes (output.columns may name them
 * and the swept paths). */
extern const char *const fe_metric_columns[];
extern const size_t fe_n_metric_columns;

/* One value as one line of flow-style text, e.g. "[512, 256, 64]". */
const char *fe_node_flow(const dc_node *n, dc_arena *a);

/* ---- sweeps (sweep_axes.c) ----------------------------------------------- */

typedef enum fe_axis_kind { FE_AXIS_LIST, FE_AXIS_IRANGE, FE_AXIS_FRANGE }
    fe_axis_kind;

typedef struct fe_axis {
  const char *path;        /* schema path, e.g. "training.batch_size" */
  dc_span key_span;        /* where the sweep key (or -D) was written */
  fe_axis_kind kind;
  int64_t n;               /* number of values */
  const dc_node *const *values; /* LIST */
  const char *const *texts;     /* LIST: each value as one line of text */
  int64_t i_from, i_step, i_times; /* IRANGE: from*times^i or from+i*step */
  double f_from, f_step, f_times;  /* FRANGE: from + i*step, from*times^i */
  dc_span range_span;
  int group;               /* index of its group (product digit) */
  bool from_cli;           /* a -D comma list, not the study's sweep */
} fe_axis;

typedef struct fe_group {
  int64_t n;       /* values per axis in the group */
  int64_t stride;  /* mixed-radix weight; the last group varies fastest */
} fe_group;

/* The value of axis `ax` at position i, as a scalar or tree node (ranges
 * make a scalar in `a`), and its text for the output's columns. */
const dc_node *fe_axis_value(const fe_axis *ax, int64_t i, dc_arena *a,
                             const char **text);

/* ---- the study ----------------------------------------------------------- */

typedef struct fe_sub {
  const char *path;
  const dc_node *node;
} fe_sub;

/* A cached catalog lookup (text as written -> canonical entry). */
typedef struct fe_catref {
  const char *name;        /* canonical name or resolved path */
  const dc_node *root;
} fe_catref;

struct dc_study {
  dc_arena arena;
  const char *name;
  const char *path;        /* the study file as named */
  const char *dir;         /* its directory, for relative catalog paths */
  const dc_source *src;
  const dc_source *cmdline; /* "<command line>" */
  const dc_node *root;

  fe_sub *fixed;           /* -D single values, applied to every point */
  size_t n_fixed;

  fe_axis *axes;
  size_t n_axes;
  fe_group *groups;
  size_t n_groups;
  int64_t n_points;
  const char **param_paths;

  int64_t *baseline_digit; /* per group: -1 or the baseline's index */
  bool has_baseline;

  const char **columns;
  size_t n_columns;
  int format;              /* index in fe_enum_format */
  bool format_set;         /* output.format was written */
  int precision;           /* decimals, output.precision */

  dc_map catalog;          /* "gpus\x1fname" -> fe_catref* */
  struct fe_fastpoint *fast; /* dc_study_point's templates (study.c) */
};

/* ---- resolver (resolve.c, resolve_*.c) ---------------------------------- */

/* Summary of the values that cross-key constraints read, for checking
 * every combination of sweep values cheaply (see study.c). */
typedef struct fe_xkeys {
  int64_t batch;
  dc_span batch_sp;
  int64_t gpus, hosts, gph; /* 0 when not written */
  dc_span gpus_sp, hosts_sp, gph_sp;
  int64_t bottom_last;      /* last bottom_mlp width */
  dc_span bottom_sp;
  int64_t emb_dim;          /* dim of every table, -1 mixed, 0 unknown */
  dc_span dim_sp;
  bool dot;                 /* interaction is dot */
  int64_t lookups;          /* sum over tables of ceil(pooling) */
  dc_span lookups_sp;
  int64_t max_rank;         /* highest explicit rank, -1 none */
  dc_span rank_sp;
  /* dcn: the low rank against the cross width (bottom_last + Σ dims,
   * or + n_tables × emb_dim when a dim sweep moves every table) */
  bool dcn;
  int64_t dcn_rank;         /* 0: full rank */
  dc_span dcn_rank_sp;
  int64_t n_tables, sum_dims;
  /* fp8 storage asked for (fp8_key names the key) on a GPU without it */
  const char *gpu;          /* canonical name */
  int64_t host_size;        /* its catalog gpus_per_host (dc_host_layout) */
  bool capacity_assumed;    /* capacity: without gpus_per_host */
  bool gpu_fp8;
  dc_span gpu_sp;
  const char *fp8_key;      /* NULL: no fp8 */
  dc_span fp8_sp;
  /* framework: fused on a GPU its kernels do not ship for */
  bool fused;
  dc_span fw_sp;
  bool gpu_nvidia, gpu_tc;
  const char *gpu_arch;     /* catalog arch ("volta"), NULL unknown */
  bool half;                /* training.precision fp16 or bf16 */
  dc_span half_sp;
} fe_xkeys;

/* The warning that a host layout was assumed, once per study (*said,
 * *said_cap), at the first summary that assumed it (resolve_xcheck.c). */
void fe_layout_note(const fe_xkeys *x, bool *said, bool *said_cap,
                    dc_diags *d);

typedef struct fe_rctx {
  const dc_study *s;
  const fe_sub *subs;       /* this point's sweep values */
  size_t n_subs;
  dc_arena *a;              /* point allocations */
  dc_diags *d;              /* NULL when lowering a checked point */
  const dc_node *preset;    /* the preset's root, when model.preset */
  dc_point *p;
  fe_xkeys x;
  bool ok;
} fe_rctx;

/* Fills c->p; returns false when a diagnostic was reported. With
 * `catalog_fill`, unknown catalog names are looked up and cached in the
 * study (load time only: the study is mutable then). */
bool fe_resolve(fe_rctx *c, bool catalog_fill);
/* The cross-key constraints (resolve_xcheck.c); reports to d (may be
 * NULL). */
bool fe_xcheck(const fe_xkeys *x, dc_diags *d);

/* dc_study_point without its templates: every point resolved in full
 * (study.c; tests compare both). */
void fe_study_point_full(const dc_study *s, int64_t index, dc_arena *a,
                         dc_point *out);

/* Catalog lookups through the study's cache (resolve.c). */
const fe_catref *fe_study_catalog(dc_study *s, const char *dir,
                                  const char *name, const dc_node *at,
                                  dc_diags *d, bool fill);

/* ---- overrides and sweeps (override.c, sweep_axes.c) --------------------- */

/* Parses the -D list: single values into s->fixed, comma lists as axes
 * appended to `axes` (product groups). Returns false on errors. */
bool fe_overrides_parse(dc_study *s, const dc_override *ov, size_t n,
                        fe_axis **axes, size_t *n_axes, size_t *cap,
                        dc_diags *d);
/* Reads `sweep:` into axes (before the -D ones), groups them, counts the
 * points. Axes named by -D are dropped from the sweep (-D wins). */
/* The output: section, after the sweep (study_output.c). */
void fe_study_output(dc_study *s, dc_diags *d);
bool fe_sweep_parse(dc_study *s, const dc_override *ov, size_t n_ov,
                    dc_diags *d);
bool fe_baseline_parse(dc_study *s, dc_diags *d);
/* Digits of point `index`, one per group. */
void fe_sweep_digits(const dc_study *s, int64_t index, int64_t *digits);
/* Builds the substitutions of the point with `digits` into subs (n_axes
 * entries) and the param texts into params (may be NULL). */
void fe_sweep_subs(const dc_study *s, const int64_t *digits, dc_arena *a,
                   fe_sub *subs, dc_param *params);

/* Case-insensitive equality of two scalars written for the same key (for
 * baseline values): numbers compare by value. */
bool fe_scalar_equal(const char *a, const char *b);

#endif /* DC_STUDY_INT_H */
