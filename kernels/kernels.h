/*
 * kernels.h — kernel performance models (DESIGN.md §4, the paper §III-B):
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
  double nvlink_gbps;   /* per GPU, bidirectional total; 0 when absent */
  double nic_gbps;      /* per GPU, across hosts */
  double link_latency_us;   /* per collective step */
  double kernel_floor_us;   /* smallest kernel time */
} dc_device;

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

#endif /* DC_KERNELS_H */
