/*
 * corpus_replay.c — runs the fuzz target over files and directories given
 * on the command line (the checked-in corpus, tests/bad/), so that ctest
 * replays every input under gcc and the sanitizers without libFuzzer.
 * Exits 0 when every input ran; a crash or sanitizer report fails the
 * test.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  size_t r;
  while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf) return 1;
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

static int run_path(const char *path, int *count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: no such file %s\n", path);
    return 1;
  }
  if (!S_ISDIR(st.st_mode)) {
    (*count)++;
    return run_file(path);
  }
  struct dirent **list;
  int n = scandir(path, &list, NULL, alphasort);
  if (n < 0) return 1;
  int bad = 0;
  for (int i = 0; i < n; i++) {
    if (list[i]->d_name[0] != '.') {
      char *p = malloc(strlen(path) + strlen(list[i]->d_name) + 2);
      sprintf(p, "%s/%s", path, list[i]->d_name);
      bad |= run_path(p, count);
      free(p);
    }
    free(list[i]);
  }
  free(list);
  return bad;
}

int main(int argc, char **argv) {
  int bad = 0, count = 0;
  for (int i = 1; i < argc; i++) bad |= run_path(argv[i], &count);
  printf("replayed %d inputs\n", count);
  return bad;
}
