/*
 * fuzz_et.c — libFuzzer target over the execution-trace reader
 * (runtime/trace/et_read.c, et_graph.c): the input is written to a
 * scratch file (the reader takes paths, through zlib, plain or gzip) and
 * imported; when it imports, the graph is written in every format, the
 * unpriced ops listed, and the graph priced and evaluated on a catalog
 * GPU with a built-in profile (`dlrmc replay` without a Kineto trace),
 * as one rank and as two (the multi-rank path).
 * Any crash, hang, sanitizer report or non-finite time is a bug; a
 * rejected input (with its diagnostic) is fine. Built with clang
 * -fsanitize=fuzzer when DC_FUZZ=ON; corpus_replay.c drives the same function
 * over the corpus under any compiler.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/trace/trace.h"
#include "tests/fuzz/scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20) ||
      !fuzz_write_scratch(scratch, "dlrmc-fuzz-et", data, size))
    return 0;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  d.max_errors = 50;
  dc_et_graph e;
  if (dc_et_import(scratch, &e, &a, &d)) {
    dc_buf out = {0};
    for (int f = DC_GRAPH_TEXT; f <= DC_GRAPH_ET; f++)
      dc_graph_write_rank(e.g, (dc_graph_format)f, f == DC_GRAPH_ET ? 0 : -1,
                          &out);
    dc_et_unpriced_write(&e, &out);
    dc_buf_free(&out);
    /* one rank, then the input as two ranks (the multi-rank path: pairing,
     * the merged graph, the collectives of both evaluated together) in
     * CSV and Markdown */
    const char *paths[2] = {scratch, scratch};
    for (int run = 0; run < 3; run++) {
      dc_replay_opts o = {paths, run ? 2 : 1, "A100-SXM4-80GB", "paper-v100",
                          run < 2};
      dc_buf rep = {0};
      if (dc_replay(&o, &rep, &a, &d) && o.csv) {
        /* every number of the CSV is finite */
        for (char *p = rep.data; p && *p; p++)
          if ((p[0] == 'n' && p[1] == 'a' && p[2] == 'n') ||
              (p[0] == 'i' && p[1] == 'n' && p[2] == 'f'))
            abort();
      }
      dc_buf_free(&rep);
    }
  }
  dc_diags_free(&d);
  dc_arena_free(&a);
  return 0;
}
