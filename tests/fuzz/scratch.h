/*
 * scratch.h — what the fuzz targets share: the scratch file those whose
 * readers take paths write their input to (one mkstemp'd file per
 * process, named from `prefix`, rewritten for each input), and the
 * rendering of an input's diagnostics (the renderer is fuzzed too).
 * Header-only so that the libFuzzer binaries, which do not link
 * corpus_replay.c, share it.
 */
#ifndef DC_TESTS_FUZZ_SCRATCH_H
#define DC_TESTS_FUZZ_SCRATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "compiler/support/support.h"

/* Writes data to the scratch file (created on first use into `path`,
 * which must hold at least 64 bytes and start empty). */
static inline bool fuzz_write_scratch(char *path, const char *prefix,
                                      const uint8_t *data, size_t size) {
  if (!path[0]) {
    snprintf(path, 64, "/tmp/%s-XXXXXX", prefix);
    int fd = mkstemp(path);
    if (fd < 0) return false;
    close(fd);
  }
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

/* Renders every diagnostic of d, as the command line would, and drops
 * the text. */
static inline void fuzz_render_diags(const dc_diags *d) {
  dc_buf out = {0};
  for (size_t i = 0; i < d->count; i++)
    dc_diag_render_one(&d->items[i], &out, false);
  dc_buf_free(&out);
}

#endif /* DC_TESTS_FUZZ_SCRATCH_H */
