/*
 * bench.h — the CPU-side core of dlrmc-bench (the microbenchmarks of the
 * paper §III-B): the benchmark kinds and their shape dimensions, argument
 * parsing, sweep generation, statistics and CSV writing. None of it needs
 * CUDA, so all of it is unit-tested on machines without a GPU; the GPU
 * side (bench_gpu_int.h) only runs what this core decided.
 *
 * A benchmark kind (gemm, embedding, ...) has a fixed list of dimensions
 * (batch, m, n, ...). Each dimension takes a list of values; the sweep is
 * the cartesian product of those lists, filtered (configurations that
 * make no sense or whose device memory exceeds --max-bytes are dropped)
 * and optionally sampled. A kind has one or two default shape sets (the
 * paper's: GEMM sizes from {32, 64, ..., 4096} ∪ {40, 72, ..., 4104},
 * batch 1 for addmm and 512...4096 for bmm); lists given on the command
 * line replace the same dimension in every set.
 *
 * Ownership: dc_bench_kind_info tables are static; a dc_bench_sweep owns
 * its value array (dc_bench_sweep_free); dc_bench_opts borrows argv.
 * Functions that can fail on user input return false and write one
 * message (no trailing newline) into an error buffer; they never print.
 */
#ifndef DC_BENCH_H
#define DC_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/support/support.h"

#define DC_BENCH_VERSION "0.1.0"
#define DC_BENCH_MAX_DIMS 8
#define DC_BENCH_MAX_SETS 2
/* Refuse to enumerate a full grid larger than this; use --samples. */
#define DC_BENCH_MAX_GRID 4000000

/* Exit codes of dlrmc-bench. 77 is ctest's "skipped". */
#define DC_BENCH_EXIT_OK 0
#define DC_BENCH_EXIT_FAIL 1
#define DC_BENCH_EXIT_USAGE 2
#define DC_BENCH_EXIT_NO_GPU 77

typedef enum dc_bench_kind {
  DC_BENCH_GEMM,
  DC_BENCH_EMBEDDING,
  DC_BENCH_CONCAT,
  DC_BENCH_MEMCPY,
  DC_BENCH_TRANSPOSE,
  DC_BENCH_TRIL,
  DC_BENCH_KIND_COUNT_
} dc_bench_kind;

/* One dimension of a kind's sweep: an integer or a word from a list.
 * Word values are stored as their index into `words`. */
typedef struct dc_bench_dim {
  const char *name;          /* option (--NAME) and CSV column */
  const char *const *words;  /* NULL-terminated; NULL for integer dims */
  int64_t min, max;          /* integer dims: accepted range */
  const char *help;          /* one line for `help KIND` */
} dc_bench_dim;

/* A default shape set: a value list per dimension, in the command-line
 * list syntax, and how many configurations to draw (0: the full grid). */
typedef struct dc_bench_set {
  const char *name;
  const char *lists[DC_BENCH_MAX_DIMS];
  int64_t samples;
} dc_bench_set;

typedef struct dc_bench_kind_info {
  dc_bench_kind kind;
  const char *name;    /* "gemm" */
  const char *summary; /* one line for --help */
  const char *help;    /* paragraphs for `help KIND` */
  int n_dims;
  dc_bench_dim dims[DC_BENCH_MAX_DIMS];
  int n_sets;
  dc_bench_set sets[DC_BENCH_MAX_SETS];
  const char *columns; /* the CSV header row, without newline */
} dc_bench_kind_info;

const dc_bench_kind_info *dc_bench_kind_get(dc_bench_kind k);
/* NULL when unknown. */
const dc_bench_kind_info *dc_bench_kind_find(const char *name);
/* Index of dimension `name` in `info`, or -1. */
int dc_bench_dim_index(const dc_bench_kind_info *info, const char *name);

/* Word values used by the GPU side (indices into the dims' word lists). */
enum { DC_BENCH_OP_N = 0, DC_BENCH_OP_T = 1 };
enum {
  DC_BENCH_DT_FP32 = 0,
  DC_BENCH_DT_TF32 = 1,
  DC_BENCH_DT_FP16 = 2,
  DC_BENCH_DT_BF16 = 3
};
enum { DC_BENCH_DIR_FWD = 0, DC_BENCH_DIR_BWD = 1 };
enum { DC_BENCH_H2D = 0, DC_BENCH_D2H = 1, DC_BENCH_D2D = 2 };
enum { DC_BENCH_TRIL_FWD = 0, DC_BENCH_TRIL_BWD = 1 };

/* Dimension indices per kind (the order of dims[] in bench_kinds.c, which
 * is also the order of the CSV columns). */
enum { DC_GEMM_BATCH, DC_GEMM_M, DC_GEMM_N, DC_GEMM_K, DC_GEMM_TRANSA,
       DC_GEMM_TRANSB, DC_GEMM_DTYPE };
enum { DC_EMB_DIRECTION, DC_EMB_BATCH, DC_EMB_ROWS, DC_EMB_TABLES,
       DC_EMB_POOLING, DC_EMB_DIM };
enum { DC_CONCAT_BATCH, DC_CONCAT_INPUTS, DC_CONCAT_DIM };
enum { DC_MEMCPY_DIRECTION, DC_MEMCPY_PINNED, DC_MEMCPY_BYTES };
enum { DC_TRANSPOSE_BATCH, DC_TRANSPOSE_M, DC_TRANSPOSE_N,
       DC_TRANSPOSE_DTYPE };
enum { DC_TRIL_KIND, DC_TRIL_BATCH, DC_TRIL_N, DC_TRIL_DIAG,
       DC_TRIL_DTYPE };

/* Bytes per element of a dtype word index (tf32 is stored as fp32). */
int dc_bench_dtype_bytes(int64_t dtype);

/* Device memory one configuration allocates, in bytes; false when the
 * product overflows 64 bits. */
bool dc_bench_footprint(dc_bench_kind k, const int64_t *v, int64_t *bytes);
/* Whether a configuration is meaningful (a device-to-device copy has no
 * pinned variant; a bmm with batch > 1 has no transpose-free shortcut...).
 * Configurations that are not are silently left out of every sweep. */
bool dc_bench_config_valid(dc_bench_kind k, const int64_t *v);

/* ---- value lists ---------------------------------------------------------
 * LIST := ITEM (',' ITEM)*
 * ITEM := VALUE | VALUE ':' VALUE [':' STEP]     (inclusive range)
 * STEP := VALUE (arithmetic, default 1) | 'x' FACTOR (geometric)
 * VALUE is a size as dc_parse_size reads it ("4096", "1Ki", "1M");
 * word dimensions take WORD (',' WORD)*. Duplicates are dropped, first
 * occurrence kept, so the order of the list is the order of the sweep. */
bool dc_bench_list_parse(const dc_bench_dim *dim, const char *text,
                         int64_t **values, size_t *n, dc_buf *err);

/* ---- options ------------------------------------------------------------- */

typedef enum dc_bench_action {
  DC_BENCH_ACT_RUN,     /* run (or with --list, print) a sweep */
  DC_BENCH_ACT_HELP,    /* print help (kind NULL: the overview) */
  DC_BENCH_ACT_VERSION,
  DC_BENCH_ACT_DEVICES  /* list the GPUs; exit 77 without one */
} dc_bench_action;

typedef struct dc_bench_opts {
  dc_bench_action action;
  const dc_bench_kind_info *kind; /* RUN, and HELP of one kind */
  const char *out_path;           /* -o; NULL: stdout */
  int32_t warmup, iters, device;
  int64_t samples;                /* -1: each set's default */
  uint64_t seed;
  int64_t max_bytes;              /* device memory cap per configuration */
  bool list;                      /* print the sweep, do not run it */
  const char *lists[DC_BENCH_MAX_DIMS]; /* user lists; NULL: defaults */
} dc_bench_opts;

/* Parses argv (argv[0] is the program). On a usage error returns false
 * with a message, and a hint ("did you mean ...") in *hint when there is
 * one (a static or argv string, or NULL). */
bool dc_bench_args_parse(int argc, char **argv, dc_bench_opts *o,
                         dc_buf *err, dc_buf *hint);

/* The overview (--help) and one kind's help, into `out`. */
void dc_bench_help_overview(dc_buf *out);
void dc_bench_help_kind(const dc_bench_kind_info *info, dc_buf *out);

/* ---- sweeps --------------------------------------------------------------- */

typedef struct dc_bench_sweep {
  int n_dims;
  size_t n;    /* configurations */
  int64_t *v;  /* n × n_dims values, row-major */
} dc_bench_sweep;

/* The configurations `o` asks for: every set of the kind, with the user's
 * lists replacing the defaults, filtered, sampled (a fixed-seed draw,
 * kept in grid order) and concatenated without duplicates. */
bool dc_bench_sweep_build(const dc_bench_opts *o, dc_bench_sweep *out,
                          dc_buf *err);
void dc_bench_sweep_free(dc_bench_sweep *s);
static inline const int64_t *dc_bench_sweep_at(const dc_bench_sweep *s,
                                               size_t i) {
  return s->v + i * (size_t)s->n_dims;
}

/* Sampling and random indices draw from dc_splitmix64 (support.h). */

/* ---- statistics ------------------------------------------------------------ */

/* Median (mean of the two middle values for an even count) and mean of
 * n > 0 samples; `x` is reordered. */
double dc_bench_median(double *x, size_t n);
double dc_bench_mean(const double *x, size_t n);

/* ---- CSV ---------------------------------------------------------------------- */

/* What the header comment records about the run. Strings may be NULL
 * (written as "unknown"). */
typedef struct dc_bench_meta {
  const char *device;     /* "NVIDIA H200" */
  int32_t cc_major, cc_minor, sms; /* sms 0: none queried (--list) */
  int64_t memory_bytes;
  int32_t sm_clock_mhz, mem_clock_mhz; /* peak clocks CUDA reports */
  int32_t driver_version, runtime_version, cublas_version; /* CUDA ints */
  int32_t warmup, iters;
  const char *command;    /* the command line, for the record */
} dc_bench_meta;

/* The `# ...` comment lines and the header row. */
void dc_bench_csv_header(dc_buf *out, const dc_bench_kind_info *info,
                         const dc_bench_meta *meta);
/* One row: the configuration's values, then median and mean in µs with
 * three decimals (a negative time writes empty fields: --list). */
void dc_bench_csv_row(dc_buf *out, const dc_bench_kind_info *info,
                      const int64_t *v, double median_us, double mean_us);

#endif /* DC_BENCH_H */
