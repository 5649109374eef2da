/*
 * kernels.h — kernel performance models (spec/design.md, the paper §III-B):
 * one pricing function for every kernel kind, the GPU catalog's device
 * parameters, and the MLP regressor used for GEMM, transpose and tril when
 * a fitted model exists for the device.
 *
 * Every price is a pure, deterministic function of (kernel, device,
 * models), in microseconds. Ownership: dc_device values are plain structs
 * whose strings are borrowed from the catalog (process lifetime) or the
 * arena they were loaded into; dc_kmodels returned by dc_kmodels_for are
 * loaded once per process and never freed.
 */
#ifndef DC_KERNELS_H
#define DC_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/support/kdesc.h"
#include "compiler/support/support.h"

/* A GPU as the models see it: datasheet figures plus achievable factors. */
typedef struct dc_device {
  const char *name;     /* canonical catalog name, "V100-SXM2-16GB" */
  const char *vendor;   /* "nvidia", "amd" */
  const char *arch;     /* "volta", ... */
  int32_t sms;          /* SMs or CUs */
  double boost_mhz;
  int64_t l2_bytes;
  int64_t hbm_bytes;
  double dram_gbps;     /* datasheet */
  double dram_eff;      /* achievable fraction of dram_gbps */
  double l2_gbps;       /* achievable L2 bandwidth */
  double fp32_tflops;   /* SIMT */
  double tf32_tflops;   /* tensor cores; 0 when absent */
  double fp16_tflops;
  double bf16_tflops;
  double fp32_eff;      /* achievable fraction of the fp32 peak */
  double pcie_gbps;     /* per direction, after encoding */
  double h2d_pageable_gbps; /* achievable pageable host→device */
  int64_t h2d_pageable_direct; /* bytes of a pageable copy that go at the
                                * pinned rate (the first staging buffer);
                                * 0: none */
  double nvlink_gbps;   /* per GPU, bidirectional total; 0 when absent */
  double nic_gbps;      /* per GPU, across hosts */
  int32_t gpus_per_host; /* one host's GPUs (a bare system.gpus' layout) */
  double link_latency_us;   /* per collective step */
  double kernel_floor_us;   /* smallest kernel time */
  /* Descriptive fields, all optional in the catalog. */
  const char *chip;         /* "GV100" */
  const char *memory;       /* "HBM2" */
  const char *source;       /* where the datasheet figures come from */
  const char *eff_source;   /* where the achievable factors come from */
  const char *models_name;  /* fitted models' folder (spec/kernels/<it>/) */
  const char *families_name; /* a built-in folder whose families.yaml
                                prices the memory-bound families where
                                models_name's has none (catalog
                                kernel_families: a GPU without data of
                                its own borrows a sibling's); NULL */
  int32_t year;
  int32_t pcie_gen;
  double tdp_w;
  int64_t llc_bytes;        /* last-level cache beyond L2 (Infinity Cache) */
  double sustained_mhz;     /* power-capped clock under load; 0: boost */
  double fp32_matrix_tflops; /* fp32 on matrix cores (AMD); 0 when absent */
  double fp8_tflops;
  bool tensor_cores;        /* tf32/fp16/bf16 peaks are tensor-core rates */
  double tensor_eff;        /* achievable fraction of the tensor peaks */
  double link_eff;          /* achievable fraction of link bandwidth */
  double nic_latency_us;    /* per collective step across hosts */
  /* Tables beyond HBM (kernels/uvm.c): the link between the GPU and its
   * host's memory (PCIe, or NVLink-C2C on Grace parts), per direction,
   * its achievable fraction for scattered row accesses, and the memory
   * of the typical host the GPU ships in (bytes per host). */
  double host_link_gbps;
  double host_link_eff;
  int64_t host_memory_bytes;
  int32_t nvlink_domain;    /* GPUs sharing one NVLink fabric (1: none) */
  bool nvlink_across_hosts; /* the fabric joins several hosts (NVL racks:
                               a catalog domain larger than its host, or a
                               study's system.nvlink_domain); else it
                               ends at the host */
  int32_t sharp;            /* DC_SHARP_* bits: in-switch reductions */
} dc_device;

/* How a collective runs (kernels/coll.c, spec/collectives.md): NCCL's
 * algorithm and protocol the model picks as cheapest, the group cut into
 * NVLink domains, and per GPU and direction the bytes and achievable rate
 * inside the domain (NVLink, or PCIe) and across it (the GPU's NIC), the
 * time each level takes and the latency. total = latency + the slower
 * level (NCCL pipelines both). */
typedef enum dc_coll_algo {
  DC_COLL_NONE, DC_COLL_RING, DC_COLL_TREE, DC_COLL_NVLS, DC_COLL_NVLS_TREE,
  DC_COLL_COLLNET, DC_COLL_P2P, DC_COLL_HIER
} dc_coll_algo;
typedef enum dc_coll_proto {
  DC_PROTO_LL, DC_PROTO_LL128, DC_PROTO_SIMPLE
} dc_coll_proto;
typedef struct dc_coll_plan {
  dc_coll_algo algo;
  dc_coll_proto proto;
  int32_t domain_ranks, domains;
  double intra_bytes, inter_bytes;       /* per GPU, per direction */
  double intra_gbps, inter_gbps;         /* achievable, protocol included */
  double intra_raw_gbps, inter_raw_gbps; /* the links' datasheet figures */
  double intra_us, inter_us, latency_us, ramp_us, total_us;
  bool phased; /* the levels run one after the other (hier), not
                  pipelined: total = latency + intra + inter */
} dc_coll_plan;
void dc_collective_plan(const dc_kernel *k, const dc_device *dev,
                        dc_coll_plan *out);
const char *dc_coll_algo_name(dc_coll_algo a);
/* The algorithm of a name dc_coll_algo_name gives ("ring", "nvls"). */
bool dc_coll_algo_parse(const char *name, dc_coll_algo *out);
const char *dc_coll_proto_name(dc_coll_proto p);

/* Looks `name` up in spec/gpus/ (case-insensitive, aliases) or reads it as
 * a path. Reports unknown names with a suggestion. */
bool dc_device_lookup(const char *name, dc_device *out, dc_arena *a,
                      dc_diags *d);

/* Fitted MLP models of one device (any subset of kinds may be present). */
typedef struct dc_kmodels dc_kmodels;

/* The fitted models in spec/kernels/<device name>/, loaded once per
 * process (thread-safe); NULL when there are none for that device. */
const dc_kmodels *dc_kmodels_for(const dc_device *dev);

/* The price of one kernel in µs, including the kernel's `scale`. */
double dc_kernel_time(const dc_kernel *k, const dc_device *dev,
                      const dc_kmodels *models);

/* ---- the models, the MLP regressor and the fitted-model set ------------ */

/* The models behind dc_kernel_time, exposed for tests, `dlrmc kernel` and
 * the validation programs. All return µs and ignore k->scale. */
double dc_kernel_gemm_analytic_us(const dc_kernel *k, const dc_device *dev);
double dc_kernel_embedding_us(const dc_kernel *k, const dc_device *dev);
/* The paper's L2 hit-rate estimate for one group of a lookup kernel. */
double dc_kernel_emb_hit_rate(const dc_device *dev, int64_t batch,
                              const dc_emb_group *g, int row_bytes);
/* Tables beyond HBM (kernels/uvm.c). The share of a group's lookups
 * served from HBM: 1 for HBM groups, 0 for uvm, and for uvm_caching the
 * measured hit_rate or, without one, the share of accesses that fall on
 * the cache_rows hottest of `rows` rows under Zipf(zipf) (uniform: the
 * cached share of rows). */
double dc_kernel_cache_hit_rate(const dc_emb_group *g);
/* Generalised harmonic number H(n, s) = Σ_{k=1..n} k^-s (n ≥ 0). */
double dc_kernel_harmonic(double n, double s);
/* An embedding kernel with groups beyond HBM: the HBM model
 * (dc_kernel_embedding_us) for the hits plus the host link's traffic
 * (spec/study.md, "Tables beyond HBM"). Equal to dc_kernel_embedding_us
 * when every group is in HBM. */
double dc_kernel_embedding_host_us(const dc_kernel *k, const dc_device *dev);
/* Bytes a lookup kernel moves over the host link, each direction. */
void dc_kernel_emb_host_bytes(const dc_kernel *k, double *in_bytes,
                              double *out_bytes);
/* Why that model priced `k`, one sentence appended to out: the fitted
 * model's gate (the distance to its nearest fitted row against the
 * radius), the dtype it lacks, the fitted family's constants, or that
 * the GPU has no fitted model of the kind. */
void dc_kernel_model_why(const dc_kernel *k, const dc_kmodels *models,
                         dc_buf *out);
/* Which model priced `k`: "mlp" or "analytic"/"heuristic". */
const char *dc_kernel_model_used(const dc_kernel *k, const dc_kmodels *models);

/* ---- physical bounds (kernels/bounds.c) ---------------------
 * No kernel beats its floor: the largest of its flops over the datasheet
 * peak of its dtype's math units, its compulsory DRAM bytes over the
 * datasheet bandwidth, its link bytes (collectives, host copies) over the
 * link's datasheet bandwidth, and the device's launch floor. dc_kernel_time
 * raises a model's answer below the floor to it, before the `scale`. */
typedef enum dc_kbound {
  DC_KBOUND_NONE,
  DC_KBOUND_FLOP,
  DC_KBOUND_DRAM,
  DC_KBOUND_LINK,
  DC_KBOUND_LAUNCH
} dc_kbound;

const char *dc_kbound_name(dc_kbound b); /* "FLOP", "DRAM", "link", ... */

typedef struct dc_kfloor {
  double flops, dram_bytes, link_bytes;      /* the compulsory work */
  double flop_us, dram_us, link_us, launch_us; /* each bound; 0: none */
  double us;                                  /* the largest */
  dc_kbound binding;                          /* which one it is */
} dc_kfloor;

void dc_kernel_floor(const dc_kernel *k, const dc_device *dev,
                     dc_kfloor *out);

/* dc_kernel_time with its provenance, for --explain and tests. */
typedef struct dc_kprice {
  double us;         /* = dc_kernel_time */
  double model_us;   /* the model's own answer, before clamp and scale */
  const char *model; /* = dc_kernel_model_used */
  dc_kbound clamped; /* the bound model_us was raised to, or NONE */
  dc_kfloor floor;
} dc_kprice;

void dc_kernel_price(const dc_kernel *k, const dc_device *dev,
                     const dc_kmodels *models, dc_kprice *out);

/* ---- the MLP regressor (kernels/mlp.c, kernels/fit.c) -------------------
 * A fitted model predicts ln(µs) from features of a kernel: natural logs of
 * its sizes and 0/1 flags (spec/design.md, the paper §III-B2). Feature names:
 * ln_batch, ln_m, ln_n, ln_k, transa, transb, half (fp16/bf16), tf32,
 * diag. Layers: [Linear, ReLU] x hidden, then Linear(h, 1). */

#define DC_MLP_MAX_WIDTH 1024
#define DC_MLP_MAX_LAYERS 9
#define DC_MLP_MAX_FEATURES 9

typedef struct dc_mlp {
  dc_kernel_kind kind;
  int32_t n_features;
  int32_t features[DC_MLP_MAX_FEATURES]; /* dc_mlp_feature values */
  double feat_mean[DC_MLP_MAX_FEATURES], feat_std[DC_MLP_MAX_FEATURES];
  double y_mean, y_std; /* of ln µs */
  uint32_t dtypes;      /* bit (1 << dc_dtype) for each dtype trained on */
  int32_t n_layers;     /* linear layers, hidden + 1 */
  int32_t width[DC_MLP_MAX_LAYERS + 1]; /* width[0] = n_features, last 1 */
  double *w[DC_MLP_MAX_LAYERS]; /* row-major [width[i+1]][width[i]] */
  double *b[DC_MLP_MAX_LAYERS];
  /* [width[i]][width[i+1]] copies of w for fast inference, made by
   * dc_mlp_from_node and dc_mlp_train; NULL: w is used directly. */
  double *wt[DC_MLP_MAX_LAYERS];
  /* The domain: each feature's range over the rows the model was trained
   * on (feature units), and the same as sizes and flags (raw_*, with a
   * margin for rounding) for dc_mlp_covers. A model file without one
   * (has_domain false) is used everywhere. */
  bool has_domain;
  double feat_min[DC_MLP_MAX_FEATURES], feat_max[DC_MLP_MAX_FEATURES];
  double raw_min[DC_MLP_MAX_FEATURES], raw_max[DC_MLP_MAX_FEATURES];
  /* The distance-to-data gate (spec/kernels/README.md): the feature rows
   * the model was fitted on ([n_support][n_features], feature units) and
   * a radius in ln units. With a gate, a kernel is covered when a fitted
   * row with the same flags (half, tf32, diag) lies within the radius in
   * the ln-size features (Euclidean); the box domain is then not used. */
  int32_t n_support;
  const double *support; /* sorted by feature gate_key (ascending) */
  int32_t gate_key;      /* the ln feature of widest spread */
  double gate_radius;
} dc_mlp;

typedef enum dc_mlp_feature {
  DC_MLPF_LN_BATCH,
  DC_MLPF_LN_M,
  DC_MLPF_LN_N,
  DC_MLPF_LN_K,
  DC_MLPF_TRANSA,
  DC_MLPF_TRANSB,
  DC_MLPF_HALF,
  DC_MLPF_TF32,
  DC_MLPF_DIAG,
  DC_MLPF_COUNT_
} dc_mlp_feature;

const char *dc_mlp_feature_name(dc_mlp_feature f);
/* Raw (unnormalised) feature vector of a kernel for a model's features. */
void dc_mlp_features(const dc_mlp *m, const dc_kernel *k, double *x);
/* Forward pass on a raw feature vector; returns predicted µs. No
 * allocation; thread-safe on a shared model. */
double dc_mlp_predict_raw(const dc_mlp *m, const double *x);
double dc_mlp_predict_us(const dc_mlp *m, const dc_kernel *k);
/* Sets m's domain to the range of n raw feature rows x (row-major). */
void dc_mlp_set_domain(dc_mlp *m, const double *x, int32_t n);
/* Whether every feature of k lies in the range m was trained on (true for
 * a model without a domain): outside it a network extrapolates, and its
 * answer is not evidence of anything. */
bool dc_mlp_covers(const dc_mlp *m, const dc_kernel *k);
/* The distance from k to the nearest fitted row with its flags (ln
 * units; INFINITY when none, 0 for a model without a gate). */
double dc_mlp_gate_distance(const dc_mlp *m, const dc_kernel *k);
/* Sets the gate from the fitted rows x (n rows) and the held-out rows xt
 * (nt rows): the radius is the 95th percentile of the held-out rows'
 * distances to the fitted ones, so that the model keeps the shapes like
 * those it was judged on. Copies x into `a`. */
void dc_mlp_set_gate(dc_mlp *m, const double *x, int32_t n, const double *xt,
                     int32_t nt, dc_arena *a);
/* Builds m->wt (the transposed weights) in `a`. */
void dc_mlp_prepare(dc_mlp *m, dc_arena *a);
/* Serialises / parses the model YAML (spec/kernels/<gpu>/<kind>.yaml). */
void dc_mlp_write_yaml(const dc_mlp *m, const char *header_comment,
                       dc_buf *out);
bool dc_mlp_from_node(const dc_node *root, dc_mlp *out, dc_arena *a,
                      dc_diags *d);
/* The fitted model of `kind` in `models`, or NULL. */
const dc_mlp *dc_kmodels_get(const dc_kmodels *models, dc_kernel_kind kind);

/* Monotonicity of a fitted GEMM model for dtype t (kernels/bounds.c):
 * over a geometric grid (steps of 2^(1/4) in m, n and k) inside its
 * domain, each shape against the one a step larger along each axis; a
 * violation is a larger shape more than `tol` faster (ratio < 1 − tol).
 * `worst` is the smallest ratio, at (m, n, k) stepping `axis` (0 m, 1 n,
 * 2 k). DC_MLP_MONO_TOL: what the shipped models meet (spec/kernels/). */
#define DC_MLP_MONO_TOL 0.45
typedef struct dc_mlp_mono {
  int64_t pairs, violations;
  double worst;
  int64_t m, n, k;
  int axis;
  double max_step; /* 2^(1/4), or more on an axis wider than 2^24 */
} dc_mlp_mono;

void dc_mlp_check_monotone(const dc_mlp *m, dc_dtype t, double tol,
                           dc_mlp_mono *out);

/* ---- fitted bandwidth models of kernel families (kernels/family.c) ------
 * A memory-bound family's analytic model with the device's DRAM factor
 * and small-kernel latency replaced by what a GPU reached on it
 * (spec/calibrate.md). Loaded from spec/kernels/<gpu>/families.yaml or a
 * calibration folder (dlrmc calibrate) beside the GEMM models. */
typedef enum dc_kfam_id {
  DC_KFAM_ELEMENTWISE,
  DC_KFAM_REDUCE,
  DC_KFAM_INDEXED,     /* gather / scatter through an index */
  DC_KFAM_CONCAT,
  DC_KFAM_MEMCPY_D2D,
  DC_KFAM_EMB_FWD,     /* FBGEMM's table-batched lookup */
  DC_KFAM_EMB_BWD,
  DC_KFAM_EMB_FWD_STOCK, /* PyTorch's nn.EmbeddingBag */
  DC_KFAM_EMB_BWD_STOCK,
  DC_KFAM_COUNT_
} dc_kfam_id;

typedef struct dc_kfam {
  bool set;
  double fraction;     /* of the datasheet DRAM bandwidth, (0, 1] */
  double latency_us;   /* a small kernel's fixed cost */
  double row_ns;       /* lookups: issue time per looked-up row, 0: none */
  double bag_ns;       /* lookups: issue time per pooled bag (B·T), 0 */
  int32_t rows;        /* measured kernels it was fitted on */
  double heldout_gmae; /* k-fold held-out GMAE of the fit */
  double heldout_mlae; /* and mean |ln(pred / real)| (not in the file) */
} dc_kfam;

typedef struct dc_kfams {
  dc_kfam f[DC_KFAM_COUNT_];
  const char *source;
} dc_kfams;

const char *dc_kfam_name(dc_kfam_id f);
/* The family of a kernel, or -1 (GEMMs, collectives, host copies, lookups
 * of tables beyond HBM, ...). */
int dc_kfam_of(const dc_kernel *k);
/* The family model's time, µs, without the scale or the floor. */
double dc_kfam_us(const dc_kernel *k, const dc_device *dev, const dc_kfam *f);
bool dc_kfams_from_node(const dc_node *root, dc_kfams *out, dc_diags *d);
/* Whether spec/kernels/<name>/ (built in) holds a families.yaml: what a
 * catalog entry's kernel_families must name. */
bool dc_kfams_builtin(const char *name);
void dc_kfams_write_yaml(const dc_kfams *f, const char *gpu,
                         const char *header, dc_buf *out);
/* The family fitted of samples s[0..n) of one family on dev, with the
 * error of `folds`-fold cross-validation; false with fewer than 2 rows. */
struct dc_fit_sample;
bool dc_kfam_fit(const struct dc_fit_sample *s, int32_t n,
                 const dc_device *dev, int32_t folds, dc_kfam *out);
/* Checks a fitted-model folder (dlrmc calibrate's output) a study names
 * at `at`: it must hold gemm.yaml, transpose.yaml, tril_fwd.yaml,
 * tril_bwd.yaml or families.yaml, and each it holds must load (their
 * errors at their own lines). */
bool dc_kmodels_check_dir(const char *dir, dc_span at, dc_arena *a,
                          dc_diags *d);
/* The fitted families of a device's models, or NULL. */
const dc_kfams *dc_kmodels_families(const dc_kmodels *models);

/* ---- kernel parameters as key=value (dlrmc kernel, --csv) -------------- */

/* Sets defaults for `kind` (batch 1, fp32, one table group, ...). The
 * embedding group lives in `a`. */
void dc_kernel_params_init(dc_kernel *k, dc_kernel_kind kind, dc_arena *a);
/* Applies one parameter; unknown keys and bad values are reported at
 * `span` with a suggestion. `known` is set false for an unknown key (the
 * CSV reader skips unknown columns instead of failing). */
bool dc_kernel_param_set(dc_kernel *k, const char *key, const char *value,
                         dc_span span, bool *known, dc_diags *d);
/* Checks the assembled kernel (positive sizes, no overflow). */
bool dc_kernel_params_check(const dc_kernel *k, dc_span span, dc_diags *d);
/* Parses "memcpy" with direction, "memcpy_h2d", ...; false if unknown. */
bool dc_kernel_kind_parse_cli(const char *name, dc_kernel_kind *out);

/* ---- fitting (dlrmc fit) ------------------------------------------------ */

typedef struct dc_fit_opts {
  dc_kernel_kind kind;  /* GEMM, TRANSPOSE, TRIL_FWD, TRIL_BWD */
  const char *grid;     /* "small" (default) or "full" (Table II) */
  int32_t epochs;       /* 0: default */
  uint64_t seed;        /* split and initialisation */
  int32_t layers;       /* >0: fix the hidden-layer count (no grid) */
  int32_t neurons;      /* >0: fix the width */
  bool verbose;         /* grid progress to `log` */
} dc_fit_opts;

/* One labelled sample: the kernel and its measured time. */
typedef struct dc_fit_sample {
  dc_kernel k;
  double time_us;
  const char *group; /* "V100 fp32": for the per-group report */
} dc_fit_sample;

/* Reads a benchmark CSV (our columns or DeepBench's) into samples. */
bool dc_fit_load_csv(dc_kernel_kind kind, const char *path,
                     dc_fit_sample **samples, int32_t *n, dc_arena *a,
                     dc_diags *d);
/* micro.py's tables of stock-PyTorch kernels (kernels/micro.c,
 * spec/calibrate.md): elementwise.csv, copy.csv or embedding.csv, told by
 * its columns. Rows of one real kernel with a fitted family are appended
 * to *samples; the others (host copies, several-kernel rows) are counted
 * in *skipped. The _dir form reads whichever of the four files DIR has,
 * counting them in *files. */
bool dc_micro_load_csv(const char *path, dc_fit_sample **samples, int32_t *n,
                       int32_t *skipped, dc_arena *a, dc_diags *d);
bool dc_micro_load_dir(const char *dir, dc_fit_sample **samples, int32_t *n,
                       int32_t *files, int32_t *skipped, dc_arena *a,
                       dc_diags *d);
/* The deterministic 80/20 split: is_test[i] for each of n samples. */
void dc_fit_split(int32_t n, uint64_t seed, bool *is_test);
/* Grid search, refit on the 80 %, report on the 20 %. The model's arrays
 * live in `a`. `report` gets a human-readable summary. */
bool dc_fit_run(const dc_fit_opts *o, const dc_fit_sample *s, int32_t n,
                dc_mlp *out, dc_buf *report, dc_arena *a, dc_diags *d);
/* Adds the gate to a model fitted before gates existed: the rows of s
 * that `dlrmc fit` with `seed` (0: its default) trained on, and the radius
 * from those it held out. False with fewer than 10 rows. */
bool dc_fit_gate(dc_mlp *m, const dc_fit_sample *s, int32_t n, uint64_t seed,
                 dc_arena *a);
/* Trains one configuration (exposed for tests). */
void dc_mlp_train(dc_mlp *m, const double *x, const double *y, int32_t n,
                  int32_t hidden, int32_t width, bool adam, double lr,
                  int32_t epochs, uint64_t seed, dc_arena *a);
/* exp(mean(ln|pred/real - 1|)) and mean/std of (pred/real - 1). */
void dc_fit_errors(const double *pred, const double *real, int32_t n,
                   double *gmae, double *mean, double *std);

#endif /* DC_KERNELS_H */
