/*
 * replay_int.h — what the parts of `dlrmc replay` share (internal to
 * runtime/trace/): replay.c prices and reports one rank, replay_match.c
 * matches a rank's ET ops to its Kineto events, replay_ranks.c replays
 * every rank of a distributed run together and holds dc_replay, which
 * sends one rank to rp_single (spec/replay.md).
 */
#ifndef DC_RUNTIME_TRACE_REPLAY_INT_H
#define DC_RUNTIME_TRACE_REPLAY_INT_H

#include "runtime/trace/trace.h"

#define REPLAY_WINDOW 256
#define REPLAY_WORST  20
/* the alignment table's cells per thread (bytes); past it, greedy */
#define REPLAY_LCS_CELLS (UINT64_C(1) << 26)
/* starts tried without steps, and the work they may cost (comparisons) */
#define REPLAY_STARTS 64
#define REPLAY_WORK   (UINT64_C(1) << 28)

typedef struct replay {
  const dc_replay_opts *o;
  const char *et_path, *k_path; /* this rank's pair (k_path NULL: none) */
  int32_t rank;                 /* in the job (multi-rank replays) */
  int64_t pid;                  /* the Kineto trace's process, -1 */
  /* the measured window (rank-local ns) and its collectives' GPU (or
   * gloo) activity, per collective op in launch order: start, end, -1 */
  int64_t win_lo, win_hi;
  int64_t lo_override; /* a later window start (alignment), 0: none */
  int32_t n_coll;
  int64_t *coll_arr, *coll_end;
  dc_et_graph e;
  dc_graph *g;
  dc_arena *a;
  dc_diags *d;
  /* Kineto */
  bool have_k;
  dc_trace t;
  dc_trace_model m;
  dc_trace_attrib at;
  int32_t *match; /* per op: Kineto event, -1 */
  int32_t n_matched, n_matchable;
  bool by_rf;
  int32_t step; /* the step compared, -1: none */
  /* pricing */
  dc_device dev;
  const dc_kmodels *km;
  double *pred_us; /* per op: its kernel's predicted time, -1 */
  double *meas_us; /* per op: the GPU time it launched itself, -1 */
  int32_t n_measured_unpriced;
  int32_t n_fp32_gemm; /* matched float GEMM ops with a recorded kernel */
  int32_t n_tf32;      /* those priced as TF32 from their kernels */
  dc_launch *mlaunch;  /* the unpriced ops' launches, priced as measured */
  double *mtime_us;    /* [n_measured_unpriced] */
  dc_profile prof;
  const char *prof_name;
} replay;

/* The measured iteration of one rank. */
typedef struct iter {
  double e2e_us, active_us, idle_us, cpu_us;
  /* HTA's communication kernels' time and the part of it computation
   * kernels overlap (its get_comm_comp_overlap), in the window */
  double comm_us, overlap_us;
  bool gpu; /* the window holds GPU activity */
} iter;

/* replay_match.c: fills r->match (per op: its Kineto event, -1),
 * n_matched, by_rf and the step compared. */
void rp_match_ops(replay *r);
/* The Kineto CPU events (ops and annotations) in time order. */
uint32_t *rp_kineto_ops(const dc_trace *t, size_t *n);

/* replay.c */
/* The price of a launch: an unpriced op's measured time, else the model. */
double rp_ktime(void *ctx, const dc_launch *l, int32_t rank);
/* After the import (r->e, r->g) and, with r->k_path, the trace's load
 * (r->t): the arrays, the model, the matching, the measured times. */
bool rp_rank_match(replay *r);
void rp_rank_free(replay *r);
/* The measured window (r->win_lo, win_hi) and the iteration in it. */
void rp_measure(replay *r, iter *it);
void rp_put_err(dc_buf *out, double pred, double meas);

/* One rank: the ET at `et`, its Kineto trace at `k` (NULL: none). */
bool rp_single(const dc_replay_opts *o, const char *et, const char *k,
               dc_buf *out, dc_arena *a, dc_diags *d);

#endif /* DC_RUNTIME_TRACE_REPLAY_INT_H */
