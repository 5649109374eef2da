/*
 * jsonio_int.h — the streaming JSON input both trace readers share (internal
 * to runtime/trace/): a file, plain or gzip (inflated by zlib, nothing
 * allowed after the last gzip member), in 256 KiB chunks pushed through
 * yajl's SAX parser with the reader's callbacks, and diagnostics (E0801)
 * that point at the file's line:col, echoing the offending line or a
 * window of it. load.c (Kineto) and et_read.c (execution traces) keep their own SAX state; each embeds a
 * js_in and passes itself as the callbacks' context.
 *
 * A callback that returns 0 stops the parse: after js_error_* (the
 * input is bad) the stream reports JS_FAILED; without one, the reader
 * chose to stop early (JS_STOPPED, e.g. load.c on an execution
 * trace), and the rest of the file is not read.
 */
#ifndef DC_RUNTIME_TRACE_JSONIO_INT_H
#define DC_RUNTIME_TRACE_JSONIO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>

#include "compiler/support/support.h"

typedef struct js_in {
  const char *path; /* the arena's copy */
  dc_arena *a;
  dc_diags *d;
  yajl_handle h;
  /* position tracking: the chunk being parsed, its absolute offset, the
   * newlines before it and the offset just after the last of them */
  const unsigned char *chunk;
  size_t chunk_len;
  int64_t chunk_off, line_before, last_nl_before;
  size_t scan_off;    /* js_pos_here's cursor in the chunk, ... */
  int64_t scan_lines; /* the newlines of the chunk before it, and ... */
  size_t scan_bol;    /* ... the offset after the last of them (0: none) */
  int64_t total;  /* bytes decompressed so far */
  bool failed;    /* a diagnostic has been emitted */
  size_t tok_len; /* bytes of the scalar token being handled (callbacks
                     set it so that errors point at its first byte) */
} js_in;

typedef enum js_status {
  JS_DONE,    /* the whole text parsed */
  JS_STOPPED, /* a callback stopped the parse without an error */
  JS_FAILED   /* reported: I/O, gzip, empty, syntax, a callback's */
} js_status;

/* Streams `path` through yajl with `cb` and `ctx` (the callbacks' context,
 * from which they reach `in` for their diagnostics). `in` is initialised
 * here; in->path is the arena's copy of path. */
js_status js_stream(js_in *in, const char *path,
                    const yajl_callbacks *cb, void *ctx, dc_arena *a,
                    dc_diags *d);

/* Reports an error at byte `off` of the current chunk. */
void js_error_at(js_in *in, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reports an error at the token yajl has just read (in->tok_len long). */
void js_error_here(js_in *in, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* An error about the whole file (no position). */
void js_error_file(js_in *in, const char *help, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The 1-based line and column of the token yajl has just read (the
 * newlines before it are counted from the previous call's place: calls
 * in file order cost the chunk's length in all). */
void js_pos_here(js_in *in, int64_t *line, int64_t *col);
/* Reports an error at a line and column found earlier by
 * js_pos_here (the text is gone: no line is echoed). */
void js_error_pos(js_in *in, int64_t line, int64_t col,
                  const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A JSON number token as an int64: integers, or a float with no fraction
 * ("7.0"); false otherwise. */
bool js_int(const char *s, size_t n, int64_t *out);

#endif /* DC_RUNTIME_TRACE_JSONIO_INT_H */
