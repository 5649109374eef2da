/*
 * compiler.h — the study front end: a YAML study file (plus -D overrides)
 * in, a checked dc_study out, from which every sweep point is lowered to a
 * dc_point on demand. Points are generated lazily by index (mixed-radix
 * decoding of the sweep), so a million-point sweep needs constant memory
 * and any subset (--shard, --jobs) can be produced independently.
 *
 * Ownership: dc_study_load returns a study that owns its arena; free it
 * with dc_study_free. dc_study_point allocates the point in the caller's
 * arena (one per point, reset between points).
 */
#ifndef DC_COMPILER_H
#define DC_COMPILER_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/support/point.h"
#include "compiler/support/support.h"

typedef struct dc_study dc_study;

/* One -D path=value from the command line; a comma list is a sweep. */
typedef struct dc_override {
  const char *path;
  const char *value;
} dc_override;

/* Reads, parses and checks the study. Returns NULL when any error was
 * reported to `d` (all errors of the file are reported). The diagnostics
 * of a study that failed point into its text, which stays alive until the
 * next dc_study_load on the same thread or dc_study_release_failed(). */
dc_study *dc_study_load(const char *path, const dc_override *overrides,
                        size_t n_overrides, dc_diags *d);
void dc_study_free(dc_study *s);
void dc_study_release_failed(void);

/* Predictable memory (spec/numbers.md, "Memory"): before anything is
 * built, each point's memory is estimated from its GPUs and tables,
 *   DC_MEMORY_BASE + DC_MEMORY_PER_GPU·gpus + DC_MEMORY_PER_CELL·tables·gpus
 * bytes (the graphs, plans and per-rank state grow so; measured with
 * margin), and a point over the budget is refused (E0208) by every
 * command that loads the study, `check` included. The budget is
 * process-wide, DC_MEMORY_BUDGET_DEFAULT unless --memory-budget sets it
 * before the study is loaded. */
#define DC_MEMORY_BASE           ((int64_t)32 << 20)
#define DC_MEMORY_PER_GPU        ((int64_t)40 << 10)
#define DC_MEMORY_PER_CELL       ((int64_t)12)
#define DC_MEMORY_BUDGET_DEFAULT ((int64_t)1 << 30)
int64_t dc_point_memory_estimate(int64_t gpus, int64_t tables);
void dc_study_set_memory_budget(int64_t bytes);
int64_t dc_study_memory_budget(void);

const char *dc_study_name(const dc_study *s);
int64_t dc_study_point_count(const dc_study *s);

/* Lowers point `index` (0 ≤ index < count). Cannot fail for a study that
 * loaded: every point was checked by dc_study_load. */
void dc_study_point(const dc_study *s, int64_t index, dc_arena *a,
                    dc_point *out);

/* The swept parameter paths, in order (the output's first columns). */
size_t dc_study_params(const dc_study *s, const char *const **paths);

/* baseline: the point index each point is compared against, or -1 when the
 * study has no baseline. */
int64_t dc_study_baseline_of(const dc_study *s, int64_t index);

/* output.columns, or NULL (n = 0) for the default set. */
size_t dc_study_columns(const dc_study *s, const char *const **columns);

/* Like dc_study_load, from a buffer (tests, the fuzzer); `name` names the
 * source in diagnostics and relative catalog paths resolve against its
 * directory part. */
dc_study *dc_study_load_memory(const char *name, const char *data,
                               size_t len, const dc_override *overrides,
                               size_t n_overrides, dc_diags *d);

/* output.format as the study wrote it ("csv", "md", "jsonl" or "html"),
 * NULL when it wrote none (`run` then takes -o's extension, else csv), and
 * output.precision (decimals of the metric columns; -1 when the study does
 * not set it: each metric keeps its own, spec/study.md). */
const char *dc_study_format(const dc_study *s);
int dc_study_precision(const dc_study *s);

/* sharding.estimator and capacity are study-level (not sweepable), so
 * every point, point 0 included, says whether the study asks for
 * TorchRec's estimate (torchrec) and for a capacity search (a positive
 * capacity target); both false for a study of no points. */
bool dc_study_torchrec(const dc_study *s);
bool dc_study_capacity(const dc_study *s);

/* True when the study has a baseline (speedup columns are defined). */
bool dc_study_has_baseline(const dc_study *s);

/* Every catalog entry of `dir` ("gpus", "overheads", "models") that some
 * point of the study uses: canonical names, or resolved paths for files,
 * sorted and distinct. The array is allocated in `a`; the strings live as
 * long as the study. Lets the driver check the contents of those entries
 * (a GPU file with a missing field, a malformed profile) before any point
 * is evaluated. */
size_t dc_study_catalog_names(const dc_study *s, const char *dir,
                              dc_arena *a, const char ***names);
/* Where the study names catalog entry `name` of `dir` (the key's span, or
 * an empty span). */
dc_span dc_study_catalog_span(const dc_study *s, const char *dir,
                              const char *name);

#endif /* DC_COMPILER_H */
