/*
 * bench_args.c — dlrmc-bench's command line and help texts.
 *
 *   dlrmc-bench KIND [options] [--DIM LIST]...
 *   dlrmc-bench help [KIND] | devices | --help | --version
 *
 * Parsing never prints: it fills dc_bench_opts or returns one message and,
 * for a misspelt option or kind, a "did you mean" hint. Options take their
 * value as the next argument or after '=' (--iters=30). Every dimension of
 * the kind is an option too (--m 32:4096:32), so what can be swept is
 * exactly what the kind's table lists; lists are checked here, before any
 * GPU work, by building the sweep once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/bench/bench.h"

static const char *const common_opts[] = {
    "--output", "--warmup", "--iters", "--device", "--samples",
    "--seed",   "--max-bytes", "--list", "--help"};

void dc_bench_help_overview(dc_buf *out) {
  dc_buf_puts(out,
              "dlrmc-bench " DC_BENCH_VERSION
              " — GPU microbenchmarks whose CSV `dlrmc fit` learns from\n"
              "\n"
              "usage: dlrmc-bench KIND [options] [--DIM LIST]...\n"
              "       dlrmc-bench help [KIND]\n"
              "       dlrmc-bench devices\n"
              "       dlrmc-bench --help | --version\n"
              "\nkinds:\n");
  for (int k = 0; k < DC_BENCH_KIND_COUNT_; k++) {
    const dc_bench_kind_info *i = dc_bench_kind_get((dc_bench_kind)k);
    dc_buf_printf(out, "  %-10s %s\n", i->name, i->summary);
  }
  dc_buf_puts(
      out,
      "\noptions:\n"
      "  -o, --output FILE  write the CSV to FILE (atomically); default "
      "stdout\n"
      "  --warmup N         untimed iterations per configuration (5)\n"
      "  --iters N          timed iterations per configuration (30)\n"
      "  --device N         CUDA device ordinal (0)\n"
      "  --samples N        configurations drawn from each shape set\n"
      "                     (0: the whole grid; default: the set's own)\n"
      "  --seed N           seed of the draw and of random indices (1)\n"
      "  --max-bytes SIZE   skip configurations needing more device memory\n"
      "                     (4Gi)\n"
      "  --list             print the sweep as CSV without running it (no "
      "GPU needed)\n"
      "  --DIM LIST         replace a dimension's values, e.g. --m "
      "64,128 or\n"
      "                     --k 32:4096:32 or --bytes 1Ki:1Gi:x2 (see "
      "`help KIND`)\n"
      "\n"
      "devices lists the visible GPUs and exits with 77 when there is none\n"
      "(ctest's skip code). Exit status: 0 ok, 1 failure, 2 usage error.\n");
}

void dc_bench_help_kind(const dc_bench_kind_info *info, dc_buf *out) {
  dc_buf_printf(out, "dlrmc-bench %s — %s\n\n%s\ndimensions (--DIM LIST):\n",
                info->name, info->summary, info->help);
  for (int d = 0; d < info->n_dims; d++) {
    const dc_bench_dim *dim = &info->dims[d];
    dc_buf_printf(out, "  --%-10s %s\n", dim->name, dim->help);
  }
  for (int s = 0; s < info->n_sets; s++) {
    const dc_bench_set *set = &info->sets[s];
    dc_buf_printf(out, "\ndefault set '%s'", set->name);
    if (set->samples)
      dc_buf_printf(out, " (%lld configurations drawn)",
                    (long long)set->samples);
    dc_buf_puts(out, ":\n");
    for (int d = 0; d < info->n_dims; d++)
      dc_buf_printf(out, "  --%-10s %s\n", info->dims[d].name,
                    set->lists[d]);
  }
  dc_buf_printf(out, "\nCSV columns: %s\n", info->columns);
}

/* A non-negative integer option value, with dc_parse_size's suffixes. */
static bool int_value(const char *opt, const char *text, int64_t lo,
                      int64_t hi, bool bytes, int64_t *out, dc_buf *err) {
  const char *why = NULL;
  int64_t v;
  if (!dc_parse_size(text, bytes, &v, &why)) {
    dc_buf_printf(err, "%s: '%s' is not a number (%s)", opt, text,
                  why ? why : "invalid");
    return false;
  }
  if (v < lo || v > hi) {
    dc_buf_printf(err, "%s: %lld is out of range [%lld, %lld]", opt,
                  (long long)v, (long long)lo, (long long)hi);
    return false;
  }
  *out = v;
  return true;
}

static void suggest_option(const dc_bench_kind_info *k, const char *arg,
                           dc_buf *hint) {
  const char *cands[DC_COUNTOF(common_opts) + DC_BENCH_MAX_DIMS];
  char names[DC_BENCH_MAX_DIMS][32];
  size_t n = 0;
  for (size_t i = 0; i < DC_COUNTOF(common_opts); i++)
    cands[n++] = common_opts[i];
  for (int d = 0; k && d < k->n_dims; d++) {
    snprintf(names[d], sizeof names[d], "--%s", k->dims[d].name);
    cands[n++] = names[d];
  }
  const char *s = dc_suggest(arg, cands, n);
  if (s)
    dc_buf_printf(hint, "did you mean '%s'?", s);
}

static void suggest_kind(const char *word, dc_buf *hint) {
  const char *names[DC_BENCH_KIND_COUNT_ + 2];
  size_t n = 0;
  for (int k = 0; k < DC_BENCH_KIND_COUNT_; k++)
    names[n++] = dc_bench_kind_get((dc_bench_kind)k)->name;
  names[n++] = "help";
  names[n++] = "devices";
  const char *s = dc_suggest(word, names, n);
  if (s)
    dc_buf_printf(hint, "did you mean '%s'?", s);
  else
    dc_buf_puts(hint, "run `dlrmc-bench --help` for the list of kinds");
}

static void set_defaults(dc_bench_opts *o) {
  memset(o, 0, sizeof *o);
  o->action = DC_BENCH_ACT_RUN;
  o->warmup = 5;
  o->iters = 30;
  o->samples = -1;
  o->seed = 1;
  o->max_bytes = INT64_C(4) << 30;
}

bool dc_bench_args_parse(int argc, char **argv, dc_bench_opts *o,
                         dc_buf *err, dc_buf *hint) {
  set_defaults(o);
  if (argc < 2) {
    dc_buf_puts(err, "missing KIND");
    dc_buf_puts(hint, "run `dlrmc-bench --help` for usage");
    return false;
  }
  const char *first = argv[1];
  if (strcmp(first, "-h") == 0 || strcmp(first, "--help") == 0) {
    o->action = DC_BENCH_ACT_HELP;
    return true;
  }
  if (strcmp(first, "--version") == 0) {
    o->action = DC_BENCH_ACT_VERSION;
    return true;
  }
  if (strcmp(first, "help") == 0) {
    o->action = DC_BENCH_ACT_HELP;
    if (argc > 3) {
      dc_buf_printf(err, "help takes at most one KIND, got '%s'", argv[3]);
      return false;
    }
    if (argc == 3 && !(o->kind = dc_bench_kind_find(argv[2]))) {
      dc_buf_printf(err, "unknown kind '%s'", argv[2]);
      suggest_kind(argv[2], hint);
      return false;
    }
    return true;
  }
  if (strcmp(first, "devices") == 0) {
    o->action = DC_BENCH_ACT_DEVICES;
    if (argc > 2) {
      dc_buf_printf(err, "devices takes no argument, got '%s'", argv[2]);
      return false;
    }
    return true;
  }
  if (!(o->kind = dc_bench_kind_find(first))) {
    dc_buf_printf(err, "unknown kind '%s'", first);
    suggest_kind(first, hint);
    return false;
  }
  const dc_bench_kind_info *k = o->kind;
  for (int i = 2; i < argc; i++) {
    const char *arg = argv[i];
    char name[64];
    const char *val = NULL;
    const char *eq = strchr(arg, '=');
    if (strncmp(arg, "--", 2) == 0 && eq) {
      size_t len = (size_t)(eq - arg);
      if (len >= sizeof name)
        len = sizeof name - 1;
      memcpy(name, arg, len);
      name[len] = '\0';
      val = eq + 1;
    } else {
      snprintf(name, sizeof name, "%s", arg);
    }
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
      o->action = DC_BENCH_ACT_HELP;
      return true;
    }
    if (strcmp(name, "--list") == 0) {
      if (val) {
        dc_buf_puts(err, "--list takes no value");
        return false;
      }
      o->list = true;
      continue;
    }
    if (strncmp(name, "-", 1) != 0) {
      dc_buf_printf(err, "unexpected argument '%s'", arg);
      dc_buf_puts(hint, "options start with '--'; see `dlrmc-bench help "
                        "KIND`");
      return false;
    }
    int dim = strncmp(name, "--", 2) == 0 ? dc_bench_dim_index(k, name + 2)
                                          : -1;
    bool known = dim >= 0 || strcmp(name, "-o") == 0;
    for (size_t j = 0; j < DC_COUNTOF(common_opts) && !known; j++)
      known = strcmp(name, common_opts[j]) == 0;
    if (!known) {
      dc_buf_printf(err, "unknown option '%s' for %s", name, k->name);
      suggest_option(k, name, hint);
      return false;
    }
    if (!val) {
      if (i + 1 >= argc) {
        dc_buf_printf(err, "%s needs a value", name);
        return false;
      }
      val = argv[++i];
    }
    int64_t v;
    if (dim >= 0) {
      o->lists[dim] = val;
    } else if (strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0) {
      if (*val == '\0') {
        dc_buf_printf(err, "%s needs a file name", name);
        return false;
      }
      o->out_path = val;
    } else if (strcmp(name, "--warmup") == 0) {
      if (!int_value(name, val, 0, 100000, false, &v, err))
        return false;
      o->warmup = (int32_t)v;
    } else if (strcmp(name, "--iters") == 0) {
      if (!int_value(name, val, 1, 100000, false, &v, err))
        return false;
      o->iters = (int32_t)v;
    } else if (strcmp(name, "--device") == 0) {
      if (!int_value(name, val, 0, 1023, false, &v, err))
        return false;
      o->device = (int32_t)v;
    } else if (strcmp(name, "--samples") == 0) {
      if (!int_value(name, val, 0, DC_BENCH_MAX_GRID, false, &o->samples,
                     err))
        return false;
    } else if (strcmp(name, "--seed") == 0) {
      if (!int_value(name, val, 0, INT64_MAX, false, &v, err))
        return false;
      o->seed = (uint64_t)v;
    } else if (strcmp(name, "--max-bytes") == 0) {
      if (!int_value(name, val, 1, INT64_MAX, true, &o->max_bytes, err))
        return false;
    }
  }
  /* Check every list now, so that a typo fails before any GPU work. */
  for (int d = 0; d < k->n_dims; d++) {
    int64_t *vals = NULL;
    size_t n = 0;
    if (o->lists[d] && !dc_bench_list_parse(&k->dims[d], o->lists[d], &vals,
                                            &n, err))
      return false;
    free(vals);
  }
  return true;
}
