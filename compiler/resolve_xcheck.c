/*
 * resolve_xcheck.c — the constraints between keys of different sections
 * (GPU counts, batch divisibility, widths, ranks, fp8 and fused-kernel
 * support of the GPU, index bytes), checked on the small summary
 * (fe_xkeys) the sections fill rather than on the point.
 *
 * Working on a summary is what lets study.c check every combination of
 * the sweep values that touch these keys without resolving every point;
 * the same code reports at load time and refuses silently when called
 * without diagnostics.
 */
#include <string.h>

#include "compiler/resolve_int.h"

static bool has_pos(dc_span s) { return s.src && s.line > 0; }

/* a when it points into the user's own text (not a built-in preset). */
static dc_span user_span(dc_span a, dc_span b) {
  bool ua = a.src && !res_in_preset(a), ub = b.src && !res_in_preset(b);
  return ua || !ub ? a : b;
}

/* Derives (gpus, hosts, gpus_per_host) from what was written: any two
 * give the third; gpus alone is laid out in hosts of the GPU's catalog
 * host size (dc_host_layout); gpus_per_host alone means a single host,
 * hosts alone hosts of the catalog's size (two DGX H100s: 16 GPUs); none
 * means one GPU. */
void res_derive(const fe_xkeys *x, int64_t *g, int64_t *h, int64_t *q) {
  int64_t G = x->gpus, H = x->hosts, Q = x->gph;
  if (G && H && !Q) Q = G / H;
  else if (G && Q && !H) H = G / Q;
  else if (H && Q && !G) G = H * Q;
  else if (G && !H && !Q) dc_host_layout(G, x->host_size, &H, &Q);
  else if (H && !G && !Q) Q = x->host_size > 0 ? x->host_size : 1, G = H * Q;
  else if (Q && !G && !H) H = 1, G = Q;
  else if (!G && !H && !Q) G = H = Q = 1;
  *g = G > 0 ? G : 1;
  *h = H > 0 ? H : 1;
  *q = Q > 0 ? Q : 1;
}

/* A bare system.gpus over more GPUs than one host holds is laid out in
 * hosts of the catalog's size (dc_host_layout), as are bare system.hosts,
 * and a capacity search without gpus_per_host does the same: said once
 * per study, at the first
 * value that assumed it, since the layout changes every exchange's
 * price. */
void fe_layout_note(const fe_xkeys *x, bool *said, bool *said_cap,
                    dc_diags *d) {
  int64_t h, q;
  if (!*said && x->gpus > x->host_size && !x->hosts && !x->gph &&
      dc_host_layout(x->gpus, x->host_size, &h, &q)) {
    *said = true;
    dc_diag *w = dc_diag_warning(
        d, DC_DIAG_SEMANTIC, x->gpus_sp,
        "system.gpus %lld without system.hosts or system.gpus_per_host: "
        "assumed %lld hosts × %lld GPUs (%s's gpus_per_host in the GPU "
        "catalog)",
        (long long)x->gpus, (long long)h, (long long)q,
        x->gpu ? x->gpu : "the GPU");
    dc_diag_set_help(w, "set system.gpus_per_host to say how many GPUs "
                        "share a host (NVLink inside, the NIC between)");
  }
  if (!*said && x->hosts && !x->gpus && !x->gph) {
    *said = true;
    int64_t per = x->host_size > 0 ? x->host_size : 1;
    dc_diag *w = dc_diag_warning(
        d, DC_DIAG_SEMANTIC, x->hosts_sp,
        "system.hosts %lld without system.gpus or system.gpus_per_host: "
        "assumed %lld hosts × %lld GPUs (%s's gpus_per_host in the GPU "
        "catalog)",
        (long long)x->hosts, (long long)x->hosts, (long long)per,
        x->gpu ? x->gpu : "the GPU");
    dc_diag_set_help(w, "set system.gpus_per_host to say how many GPUs "
                        "share a host (NVLink inside, the NIC between)");
  }
  if (!*said_cap && x->capacity_assumed) {
    *said_cap = true;
    dc_diag *w = dc_diag_warning(
        d, DC_DIAG_SEMANTIC, (dc_span){0},
        "capacity without gpus_per_host: each GPU type's counts are laid "
        "out in hosts of its catalog gpus_per_host (%s: %lld)",
        x->gpu ? x->gpu : "the GPU", (long long)x->host_size);
    dc_diag_set_help(w, "set capacity.gpus_per_host to choose");
  }
}

/* Constraints between keys (spec/design.md; reported once per combination of
 * sweep values that breaks them):
 *   gpus = hosts × gpus_per_host;
 *   batch_size is a multiple of gpus (the global batch is split evenly);
 *   dot interaction: last bottom_mlp width = embedding dim;
 *   explicit ranks < gpus;
 *   batch_size × lookups per sample × 8 bytes of indices fits 64 bits. */
/* The fused style follows NVIDIA's kernels (spec/frameworks.md): CUDA
 * only; its half-precision interaction runs on tensor cores; HugeCTR's
 * fused cross layer (the MLPerf DLRM-DCNv2 submissions) is built for
 * Ampere and later. Each refusal names the kernel and the GPU. */
static bool ampere_or_later(const char *arch) {
  static const char *const sm80[] = {"ampere", "ada", "hopper", "blackwell"};
  for (size_t i = 0; arch && i < DC_COUNTOF(sm80); i++)
    if (!strcmp(arch, sm80[i])) return true;
  return false;
}

static bool fused_runs(const fe_xkeys *x, dc_diags *d) {
  bool sm80 = ampere_or_later(x->gpu_arch);
  dc_span at = has_pos(x->gpu_sp) ? x->gpu_sp : x->fw_sp;
  const char *arch = x->gpu_arch ? x->gpu_arch : "an older architecture";
  bool ok = x->gpu_nvidia && !(x->dcn && !sm80) &&
            !(x->half && !x->gpu_tc);
  if (ok || !d) return ok;
  dc_diag *e;
  if (!x->gpu_nvidia) {
    e = dc_diag_error(d, DC_DIAG_CONFLICT, at,
                      "framework 'fused' runs NVIDIA's fused kernels "
                      "(HugeCTR, DeepLearningExamples) and CUDA graphs; %s "
                      "is not an NVIDIA GPU",
                      x->gpu);
    dc_diag_set_help(e, "use system.framework: pytorch or torchrec on this "
                        "GPU");
  } else if (x->dcn && !sm80) {
    e = dc_diag_error(d, DC_DIAG_CONFLICT, at,
                      "framework 'fused' with interaction 'dcn' needs "
                      "HugeCTR's fused cross layer, which ships for Ampere "
                      "and later; %s is %s",
                      x->gpu, arch);
    dc_diag_set_help(e, "use system.framework: torchrec for DCN on this "
                        "GPU, or an Ampere or later GPU (A100, H100, H200, "
                        "B200, L4, L40S)");
  } else {
    e = dc_diag_error(d, DC_DIAG_CONFLICT,
                      has_pos(x->half_sp) ? x->half_sp : at,
                      "framework 'fused' in fp16/bf16 runs the fused "
                      "interaction on tensor cores; %s (%s) has none",
                      x->gpu, arch);
    dc_diag_set_help(e, "use training.precision: fp32 with the fused style "
                        "on this GPU");
  }
  (void)e;
  return false;
}

static int64_t memory_budget = DC_MEMORY_BUDGET_DEFAULT;

void dc_study_set_memory_budget(int64_t bytes) { memory_budget = bytes; }
int64_t dc_study_memory_budget(void) { return memory_budget; }

int64_t dc_point_memory_estimate(int64_t gpus, int64_t tables) {
  return dc_sat_add_i64(
      dc_sat_add_i64(DC_MEMORY_BASE, dc_sat_mul_i64(DC_MEMORY_PER_GPU, gpus)),
      dc_sat_mul_i64(DC_MEMORY_PER_CELL, dc_sat_mul_i64(tables, gpus)));
}

/* The point's memory estimate is within the budget (compiler.h). */
static bool memory_ok(const fe_xkeys *x, int64_t g, dc_diags *d) {
  int64_t est = dc_point_memory_estimate(g, x->n_tables);
  if (est <= memory_budget) return true;
  if (d) {
    dc_span sp = has_pos(x->gpus_sp)    ? x->gpus_sp
                 : has_pos(x->hosts_sp) ? x->hosts_sp
                                        : x->lookups_sp;
    dc_diag *e = dc_diag_error(
        d, DC_DIAG_MEMORY_BUDGET, sp,
        "%lld GPUs and %lld tables need an estimated %.1f GiB, over the "
        "memory budget of %.1f GiB",
        (long long)g, (long long)x->n_tables, (double)est / (1 << 30),
        (double)memory_budget / (1 << 30));
    dc_diag_set_help(e, "the estimate is 32 MiB + 40 KiB per GPU + 12 bytes "
                        "per table per GPU (spec/numbers.md); raise the "
                        "budget with --memory-budget SIZE (e.g. 8GiB) if "
                        "the machine has the memory");
  }
  return false;
}

bool fe_xcheck(const fe_xkeys *x, dc_diags *d) {
  bool ok = true;
  int64_t G = x->gpus, H = x->hosts, Q = x->gph, prod;
  if (G && H && Q) {
    if (!dc_mul_i64(H, Q, &prod) || prod != G) {
      if (d)
        dc_diag_error(d, DC_DIAG_SEMANTIC, x->gpus_sp,
                      "system.gpus is %lld but system.hosts × "
                      "system.gpus_per_host is %lld × %lld",
                      (long long)G, (long long)H, (long long)Q);
      ok = false;
    }
  } else if (G && H && G % H) {
    if (d)
      dc_diag_error(d, DC_DIAG_SEMANTIC, x->hosts_sp,
                    "system.gpus (%lld) is not a multiple of system.hosts "
                    "(%lld)",
                    (long long)G, (long long)H);
    ok = false;
  } else if (G && Q && G % Q) {
    if (d)
      dc_diag_error(d, DC_DIAG_SEMANTIC, x->gph_sp,
                    "system.gpus (%lld) is not a multiple of "
                    "system.gpus_per_host (%lld)",
                    (long long)G, (long long)Q);
    ok = false;
  } else if (G && !H && !Q && !dc_host_layout(G, x->host_size, &prod,
                                                &prod)) {
    if (d) {
      dc_diag *e = dc_diag_error(
          d, DC_DIAG_SEMANTIC, x->gpus_sp,
          "system.gpus (%lld) is not a whole number of %s hosts of %lld "
          "GPUs (the GPU catalog's gpus_per_host)",
          (long long)G, x->gpu ? x->gpu : "this GPU's",
          (long long)x->host_size);
      dc_diag_set_help(e, "set system.gpus_per_host (or system.hosts) to "
                          "say how the GPUs are spread over hosts");
    }
    ok = false;
  } else if (!G && H && Q && H * Q > 65536) {
    if (d)
      dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, x->hosts_sp,
                    "system.hosts × system.gpus_per_host is %lld; at most "
                    "65536 GPUs are supported",
                    (long long)(H * Q));
    ok = false;
  }
  if (!ok) return false;
  int64_t g, h, q;
  res_derive(x, &g, &h, &q);
  if (!memory_ok(x, g, d)) ok = false;
  if (x->batch % g) {
    if (d) {
      dc_span sp = has_pos(x->batch_sp) ? x->batch_sp
                   : has_pos(x->gpus_sp) ? x->gpus_sp
                   : has_pos(x->hosts_sp) ? x->hosts_sp
                                          : x->gph_sp;
      dc_diag *e = dc_diag_error(
          d, DC_DIAG_SEMANTIC, sp,
          "training.batch_size (%lld) is not a multiple of the number of "
          "GPUs (%lld)",
          (long long)x->batch, (long long)g);
      dc_diag_set_help(e, "the global batch is split evenly across the "
                          "data-parallel GPUs");
    }
    ok = false;
  }
  if (x->dot && x->emb_dim < 0) {
    if (d)
      dc_diag_error(d, DC_DIAG_SEMANTIC, x->dim_sp,
                    "with interaction 'dot', every table must have the same "
                    "dim as the last bottom_mlp width (%lld)",
                    (long long)x->bottom_last);
    ok = false;
  } else if (x->dot && x->emb_dim > 0 && x->bottom_last > 0 &&
             x->emb_dim != x->bottom_last) {
    if (d) {
      dc_diag *e = dc_diag_error(
          d, DC_DIAG_SEMANTIC, user_span(x->dim_sp, x->bottom_sp),
          "with interaction 'dot', the last bottom_mlp width (%lld) must "
          "equal the embedding dim (%lld)",
          (long long)x->bottom_last, (long long)x->emb_dim);
      dc_diag_set_help(e, "make them equal (sweep them together with "
                          "mode: zip), or use interaction: cat");
    }
    ok = false;
  }
  if (x->max_rank >= g) {
    if (d)
      dc_diag_error(d, DC_DIAG_OUT_OF_RANGE, x->rank_sp,
                    "rank %lld does not exist with %lld GPUs (ranks are 0 "
                    "to %lld)",
                    (long long)x->max_rank, (long long)g, (long long)(g - 1));
    ok = false;
  }
  if (x->dcn && x->dcn_rank > 0 && x->bottom_last > 0) {
    int64_t dims = x->sum_dims, w;
    if (x->emb_dim > 0 && !dc_mul_i64(x->n_tables, x->emb_dim, &dims))
      dims = INT64_MAX;
    if (!dc_add_i64(x->bottom_last, dims, &w)) w = INT64_MAX;
    if (x->dcn_rank >= w) {
      if (d) {
        dc_diag *e = dc_diag_error(
            d, DC_DIAG_SEMANTIC, x->dcn_rank_sp,
            "model.dcn.low_rank (%lld) must be smaller than the cross "
            "width (%lld: the last bottom_mlp width plus every table's dim)",
            (long long)x->dcn_rank, (long long)w);
        dc_diag_set_help(e, "a rank at or above the width costs more than a "
                            "full-rank layer; omit low_rank for full rank");
      }
      ok = false;
    }
  }
  if (x->fp8_key && x->gpu && !x->gpu_fp8) {
    if (d) {
      dc_diag *e = dc_diag_error(
          d, DC_DIAG_NO_PRECISION,
          has_pos(x->fp8_sp) ? x->fp8_sp : x->gpu_sp,
          "%s fp8 needs a GPU with fp8 support; %s has none", x->fp8_key,
          x->gpu);
      dc_diag_set_help(e, "use fp16 or bf16 on this GPU, or a GPU with fp8 "
                          "(H100, H200, B200, L4, L40S, MI300X)");
    }
    ok = false;
  }
  if (x->fused && x->gpu && !fused_runs(x, d)) ok = false;
  int64_t idx;
  if (!dc_mul_i64(x->batch, x->lookups, &idx) ||
      !dc_mul_i64(idx, 8, &idx)) {
    if (d)
      dc_diag_error(d, DC_DIAG_OVERFLOW,
                    has_pos(x->batch_sp) ? x->batch_sp : x->lookups_sp,
                    "the index bytes of one batch (batch_size %lld × %lld "
                    "lookups per sample × 8 bytes) overflow 64 bits",
                    (long long)x->batch, (long long)x->lookups);
    ok = false;
  }
  return ok;
}
