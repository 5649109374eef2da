/*
 * support.h — the base every stage of dlrmc stands on: allocation that
 * aborts in one place, arenas, a string buffer, a string hash map, source
 * files with 1-based positions, diagnostics, the YAML node tree, units, the
 * catalogs embedded from spec/, and "did you mean" suggestions.
 *
 * Ownership, once for the whole header: every object allocated from a
 * dc_arena lives until that arena is freed, and nothing built from an arena
 * is freed on its own. Pointers returned by lookups (dc_node_get,
 * dc_catalog_find, dc_spec_files) are borrowed: they live as long as the
 * arena or, for the embedded catalogs, as long as the process. Functions
 * that can fail on user input return false (or NULL) and append to a
 * dc_diags; they never print, exit or longjmp. Only an allocation failure
 * or a broken internal invariant aborts the process.
 */
#ifndef DC_SUPPORT_H
#define DC_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- allocation, invariants, checked arithmetic (alloc.h) ------------ */

#include "compiler/support/alloc.h"

/* ---- arena -------------------------------------------------------------- */

typedef struct dc_arena_block dc_arena_block;
typedef struct dc_arena {
  dc_arena_block *head;
  size_t used_bytes; /* total handed out, for statistics and limits */
} dc_arena;

void dc_arena_init(dc_arena *a);
void dc_arena_free(dc_arena *a);
/* Drops everything but keeps the first block for reuse (per-point arenas). */
void dc_arena_reset(dc_arena *a);
void *dc_arena_alloc(dc_arena *a, size_t size); /* zeroed, 16-byte aligned */
void *dc_arena_array(dc_arena *a, size_t n, size_t size); /* checks n*size */
/* The same, not zeroed: for arrays every element of which is written
 * before it is read (graphgen's growing op, tensor and launch arrays). */
void *dc_arena_alloc_raw(dc_arena *a, size_t size);
void *dc_arena_array_raw(dc_arena *a, size_t n, size_t size);
char *dc_arena_strdup(dc_arena *a, const char *s);
char *dc_arena_strndup(dc_arena *a, const char *s, size_t n);
char *dc_arena_printf(dc_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- string buffer ------------------------------------------------------ */

typedef struct dc_buf {
  char *data; /* always NUL-terminated once anything was appended */
  size_t len;
  size_t cap;
} dc_buf;

void dc_buf_free(dc_buf *b);
void dc_buf_clear(dc_buf *b);
void dc_buf_append(dc_buf *b, const char *s, size_t n);
void dc_buf_puts(dc_buf *b, const char *s);
void dc_buf_putc(dc_buf *b, char c);
void dc_buf_printf(dc_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void dc_buf_vprintf(dc_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Appends a double in the C locale with a fixed precision ("%.*f"),
 * trimming nothing: output is byte-stable across platforms and locales. */
void dc_buf_put_double(dc_buf *b, double v, int decimals);
/* Names read from traces go to terminals, Markdown, CSV and DOT: a
 * control byte (a newline in an op name) or invalid UTF-8 there would
 * break a row or the terminal. dc_printable says whether s[0..n) is
 * free of both; dc_buf_put_printable appends it with each such byte
 * written as \n, \r, \t or \xHH (valid UTF-8 is kept). */
bool dc_printable(const char *s, size_t n);
void dc_buf_put_printable(dc_buf *b, const char *s, size_t n);

/* A CSV field (RFC 4180): quoted, with "" for ", when it holds a comma, a
 * quote or a line break; as is otherwise. */
void dc_buf_put_csv_field(dc_buf *b, const char *s);
/* A JSON string literal with its quotes; control bytes escaped. */
void dc_buf_put_json_string(dc_buf *b, const char *s);

/* ---- string hash map (keys copied, values borrowed) -------------------- */

typedef struct dc_map_entry dc_map_entry;
typedef struct dc_map {
  dc_map_entry *slots;
  size_t cap;
  size_t count;
} dc_map;

void dc_map_free(dc_map *m);
/* Returns the previous value or NULL. */
void *dc_map_put(dc_map *m, const char *key, void *value);
void *dc_map_get(const dc_map *m, const char *key);
/* Calls fn for every entry, in no particular order. */
void dc_map_each(const dc_map *m,
                 void (*fn)(const char *key, void *value, void *ctx),
                 void *ctx);

/* ---- sources and spans -------------------------------------------------- */

typedef struct dc_source {
  const char *path;  /* as the user named it */
  const char *text;  /* NUL-terminated copy of the bytes */
  size_t len;
  size_t *line_starts; /* offsets of each line's first byte */
  size_t n_lines;
  /* A window of a long line (readers that stream their input keep only
   * a piece of it): the echoed text starts at 0-based column echo_col0
   * of its line, and echo_cut says the line goes on past it. 0 / false:
   * the text holds whole lines. */
  size_t echo_col0;
  bool echo_cut;
} dc_source;

/* A 1-based position and a length in bytes (len 0: a point). line == 0
 * means "no position" (command-line input, internal defaults). */
typedef struct dc_span {
  const dc_source *src;
  int32_t line;
  int32_t col;
  int32_t len;
} dc_span;

#define DC_SOURCE_MAX_BYTES (16u << 20) /* larger study files are refused */

/* Both copy what they read into the arena. */
struct dc_diags;
const dc_source *dc_source_load(const char *path, dc_arena *a,
                                struct dc_diags *d);
const dc_source *dc_source_from_memory(const char *name, const char *data,
                                       size_t len, dc_arena *a);
/* The text of line `line` (1-based), without its newline. */
const char *dc_source_line(const dc_source *s, int32_t line, size_t *len);
dc_span dc_span_at(const dc_source *s, size_t offset, size_t len);

/* ---- diagnostics -------------------------------------------------------- */

/* Every diagnostic code with its stable identifier and a title; one table
 * for the whole program, listed in spec/diagnostics.md. */
#include "compiler/support/diag_codes.h"

typedef enum dc_diag_code {
#define DC_DIAG_ENUM(sym, id, title) DC_DIAG_##sym,
  DC_DIAG_CODES(DC_DIAG_ENUM)
#undef DC_DIAG_ENUM
  DC_DIAG_COUNT_
} dc_diag_code;

typedef enum dc_severity { DC_SEV_ERROR, DC_SEV_WARNING, DC_SEV_NOTE } dc_severity;

typedef struct dc_diag {
  dc_diag_code code;
  dc_severity severity;
  dc_span span;
  char *message;
  char *help; /* "did you mean 'x'?" and other hints; may be NULL */
} dc_diag;

typedef struct dc_diags {
  dc_diag *items;
  size_t count;
  size_t cap;
  size_t errors;
  size_t max_errors; /* 0: unlimited; else later errors are counted only */
} dc_diags;

const char *dc_diag_code_id(dc_diag_code c);    /* "E0101" */
const char *dc_diag_code_title(dc_diag_code c); /* "unknown key" */

void dc_diags_free(dc_diags *d);
/* Appends and returns the new diagnostic (owned by d). */
dc_diag *dc_diag_error(dc_diags *d, dc_diag_code code, dc_span span,
                       const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
dc_diag *dc_diag_warning(dc_diags *d, dc_diag_code code, dc_span span,
                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void dc_diag_set_help(dc_diag *g, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends copies of every diagnostic of `from` (errors and warnings). */
void dc_diags_append(dc_diags *d, const dc_diags *from);
/* The largest n' <= n at which s[n'] does not continue a UTF-8 sequence:
 * where text of at least n bytes can be cut. Messages are clipped at 512
 * bytes and long source lines echoed as a window round the caret. */
size_t dc_utf8_floor(const char *s, size_t n);
/* The length of the valid UTF-8 sequence at s (at most n bytes; 1 for
 * ASCII), or 0 when s does not start one (a stray continuation byte, an
 * overlong or cut sequence). Text dlrmc echoes or writes into a page is
 * checked with it. */
size_t dc_utf8_len(const unsigned char *s, size_t n);
/* Renders like a compiler:
 *   file:12:3: error: unknown key 'bacth' in 'training' [E0101]
 *      12 |   bacth: 2048
 *         |   ^~~~~
 *         = help: did you mean 'batch_size'?
 * `color` adds ANSI colours (the driver sets it for terminals only). */
void dc_diags_render(const dc_diags *d, FILE *out, bool color);
void dc_diag_render_one(const dc_diag *g, dc_buf *out, bool color);

/* ---- "did you mean" ----------------------------------------------------- */

/* The candidate closest to `word` by case-insensitive edit distance, or
 * NULL when none is close enough to be a plausible misspelling. */
const char *dc_suggest(const char *word, const char *const *candidates,
                       size_t n);

/* ---- YAML node tree ------------------------------------------------------ */

typedef enum dc_node_kind {
  DC_NODE_SCALAR,
  DC_NODE_SEQ,
  DC_NODE_MAP
} dc_node_kind;

typedef struct dc_node dc_node;
struct dc_node {
  dc_node_kind kind;
  dc_span span;        /* of the whole node (start position, first line) */
  const char *text;    /* scalars: the value, NUL-terminated */
  size_t text_len;
  bool quoted;         /* scalar was quoted ('x' or "x"): never a number */
  bool is_null;        /* plain scalar ~, null, Null, NULL or empty */
  size_t n;            /* seq: items; map: pairs */
  dc_node **items;     /* seq items, or map values */
  dc_node **keys;      /* map keys (scalars), same order as in the file */
};

/* Limits the reader enforces so that no input can exhaust memory or time:
 * aliases are shared, not copied, and the expanded size of the document
 * (every alias counted as the nodes it stands for) is bounded. */
#define DC_YAML_MAX_DEPTH 64
#define DC_YAML_MAX_NODES 1000000
#define DC_YAML_MAX_EXPANDED 1000000

/* Parses one YAML document (an empty stream gives an empty map). Reports
 * every syntax error with its position, duplicate keys, non-scalar keys,
 * bad aliases and limit violations. Returns NULL when anything failed. */
dc_node *dc_yaml_parse(const dc_source *src, dc_arena *a, dc_diags *d);

/* Map lookup by exact key; NULL when absent or `map` is not a map. */
const dc_node *dc_node_get(const dc_node *map, const char *key);
/* The key node of `key` in `map` (for positions), or NULL. */
const dc_node *dc_node_key(const dc_node *map, const char *key);
const char *dc_node_kind_name(dc_node_kind k); /* "a mapping", ... */

/* ---- units --------------------------------------------------------------- */

/* A count or a byte size: "4096", "1M", "14e6", "40Mi", "80GB", "80GiB",
 * "1_000_000". SI suffixes k/K, M, G, T, P are powers of 1000; Ki, Mi, Gi,
 * Ti, Pi powers of 1024; a trailing B (bytes) is allowed when `bytes`.
 * Must be a whole number. On failure returns false and a reason in *why
 * (a static string). */
bool dc_parse_size(const char *text, bool bytes, int64_t *out,
                   const char **why);
/* A duration: "5us", "1.5 ms", "2s", "800ns"; a bare number is µs. */
bool dc_parse_time_us(const char *text, double *out_us, const char **why);
/* A finite double in the C locale ("1e-3", "0.8"); no suffix. */
bool dc_parse_double(const char *text, double *out, const char **why);
/* Bandwidth: "900GB/s", "31.5 GB/s", "12.5GBps"; a bare number is GB/s. */
bool dc_parse_gbps(const char *text, double *out_gbps, const char **why);

/* ---- output files ---------------------------------------------------------- */

/* A file written atomically: to a temporary sibling renamed over the path
 * when complete (a killed run leaves no partial file). NULL or "-" is
 * standard output; an existing device or FIFO is written in place; a
 * symbolic link's target is written (the link stays). The temporary is
 * `.NAME.tmp-PID-XXXXXX` beside NAME: removed by the SIGINT, SIGTERM and
 * SIGHUP handler dc_outfile_open installs, and, left by a SIGKILLed run,
 * by the next open of NAME once PID is dead. A replaced file keeps its
 * mode and, where permitted, its owner. Errors come back as text in `err`
 * (compiler/support/outfile.c). */
typedef struct dc_outfile {
  const char *path; /* as given (borrowed) */
  char *target;     /* what is replaced: path, or a link's target (owned) */
  char *tmp;        /* the temporary's name while it exists */
  int fd;
  int slot;         /* in the signal handler's table; -1: none */
  bool to_stdout;
  bool in_place;
  bool replaces;    /* target exists: keep its mode and owner */
  unsigned mode;
  unsigned uid, gid;
} dc_outfile;

bool dc_outfile_open(dc_outfile *f, const char *path, dc_buf *err);
bool dc_outfile_write(dc_outfile *f, const char *data, size_t len,
                      dc_buf *err);
/* fsync, the replaced file's mode and owner (or the usual mode for a new
 * file), rename; on failure the temporary is removed. */
bool dc_outfile_commit(dc_outfile *f, dc_buf *err);
/* Closes and removes the temporary (nothing is written under path). */
void dc_outfile_abort(dc_outfile *f);
/* open + write + commit. */
bool dc_file_write_atomic(const char *path, const char *data, size_t len,
                          dc_buf *err);
/* Flushes and closes standard output; false (with the reason in `err`) if
 * any write to it failed (a full disk, /dev/full, a closed pipe). The
 * driver calls it before exiting, so a lost table is exit 1. */
bool dc_stdout_close(dc_buf *err);

/* ---- embedded spec/ files and the catalogs ------------------------------- */

typedef struct dc_spec_file {
  const char *path; /* relative to spec/, e.g. "gpus/v100-sxm2-16gb.yaml" */
  const char *data; /* NUL-terminated */
  size_t len;
} dc_spec_file;

/* Every file under spec/ that ends in .yaml, embedded at build time,
 * sorted by path. */
const dc_spec_file *dc_spec_files(size_t *n);
const dc_spec_file *dc_spec_file_find(const char *path);

/* A catalog entry: a YAML document with a top-level `name:` and optional
 * `aliases:` list, found in spec/<dir>/ or given by a path. */
typedef struct dc_catalog_entry {
  const char *name;      /* canonical name from the file */
  const char *origin;    /* "builtin:gpus/t4.yaml" or the user's path */
  const dc_node *root;   /* parsed document (process-lifetime or arena) */
  const dc_source *src;
} dc_catalog_entry;

/* Looks `name` up in catalog `dir` ("gpus", "overheads", "models",
 * "kernels/<gpu>") case-insensitively against names and aliases. A name
 * that contains '/' or ends in ".yaml" is read as a file instead (parsed
 * into `a`, diagnostics into `d`). Built-ins are parsed once per process
 * (thread-safe). Returns false when not found; the caller reports the
 * error, usually with dc_catalog_suggest. */
bool dc_catalog_find(const char *dir, const char *name, dc_catalog_entry *out,
                     dc_arena *a, dc_diags *d);
/* Every canonical name in `dir`, sorted; borrowed, process lifetime. */
const char *const *dc_catalog_names(const char *dir, size_t *n);
/* "did you mean" over names and aliases of `dir`. */
const char *dc_catalog_suggest(const char *dir, const char *name);
/* Whether a catalog-valued name is a file path (has a '/' or ends in
 * .yaml / .yml) rather than a catalog name. */
bool dc_catalog_is_path(const char *name);

#endif /* DC_SUPPORT_H */
