/*
 * scratch.h — the scratch file the trace fuzz targets write their input
 * to (the readers take paths, through zlib): one mkstemp'd file per
 * process, named from `prefix`, rewritten for each input. Header-only so
 * that the libFuzzer binaries, which do not link corpus_replay.c, share it.
 */
#ifndef DC_TESTS_FUZZ_SCRATCH_H
#define DC_TESTS_FUZZ_SCRATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

#endif /* DC_TESTS_FUZZ_SCRATCH_H */
