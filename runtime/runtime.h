/*
 * runtime.h — from a graph to the numbers a user came for: host-overhead
 * profiles, the critical-path evaluator (the paper's Algorithm 1 extended
 * to streams and ranks), metrics, the sweep executor and the emitters.
 *
 * Ownership: profiles are loaded into the arena the caller passes (or, for
 * built-ins, once per process); metrics are plain values.
 */
#ifndef DC_RUNTIME_H
#define DC_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/support/support.h"

/* ---- host-overhead profiles (DESIGN.md §5) ---------------------------- */

/* Mean, standard deviation and sample count of one overhead, in µs.
 * n == 0 and mean < 0 mark "not given" (fall back to defaults). */
typedef struct dc_stat {
  double mean;
  double std;
  int64_t n;
} dc_stat;

/* The five overhead types of the paper's Fig. 6. */
typedef struct dc_op_overheads {
  const char *op; /* PyTorch op name as in the trace */
  dc_stat t1, t2, t3, t5;
} dc_op_overheads;

typedef struct dc_runtime_overheads {
  const char *call; /* "cudaLaunchKernel", "cudaMemcpyAsync", ... */
  dc_stat t4;
} dc_runtime_overheads;

/*
 * The YAML form (spec/overheads/, written by `dlrmc overheads extract`):
 *
 *   name: paper-v100
 *   units: us
 *   source: "..."
 *   defaults: {t1: 7.7, t2: 20, t3: 10, t4: 10, t5: 8, kernel_gap: 1}
 *   ops:
 *     "aten::linear": {t2: 33, t3: 10.5, t5: 29, n: 120}
 *   runtime:
 *     cudaLaunchKernel: {t4: 5.0, n: 141}
 *
 * Per-op entries may also carry std: {t2_std: 3.1, ...} and per-type
 * counts (t2_n: 40); `n` alone is the count for all of them.
 */
typedef struct dc_profile {
  const char *name;
  const char *source;
  double t1_us, t2_us, t3_us, t4_us, t5_us; /* defaults (pooled means) */
  double kernel_gap_us;                     /* minimum gap on a stream */
  size_t n_ops;
  dc_op_overheads *ops;     /* sorted by op name */
  size_t n_runtime;
  dc_runtime_overheads *runtime; /* sorted by call name */
} dc_profile;

/* Loads a profile by catalog name (spec/overheads/) or path. */
bool dc_profile_load(const char *name, dc_profile *out, dc_arena *a,
                     dc_diags *d);
/* Writes the YAML form above (deterministic: sorted, fixed precision). */
void dc_profile_write(const dc_profile *p, dc_buf *out);

#endif /* DC_RUNTIME_H */
