/*
 * links.c — a point's device: the GPU catalog's entry with the study's
 * `system.links` overrides applied (spec/study.md, `system`).
 *
 * The catalog describes a GPU as its vendor ships it in a reference
 * system (a DGX's NVLink, the host's PCIe generation, one NIC per GPU);
 * `system.links` lets a study price the same GPU in another box. The
 * front end lowers each key to a field of dc_point (0, or a negative
 * latency, meaning "keep the catalog's figure") and knows nothing of
 * devices; the kernel models read only dc_device. This file is the one
 * place that joins the two, so every path that prices a point (the sweep
 * executor, explain and timelines through dc_eval_point, the auto
 * planner, the capacity search) sees the same links:
 *
 *   nvlink   → nvlink_gbps (per GPU, bidirectional total, as in the
 *              catalog): collectives inside a host;
 *   pcie     → pcie_gbps (per direction), and h2d_pageable_gbps scaled by
 *              the same ratio, so pageable copies stay the catalog's
 *              fraction of the link: host↔device copies;
 *   nic      → nic_gbps (per GPU): collectives across hosts;
 *   latency  → link_latency_us and nic_latency_us: each step of every
 *              collective;
 *   sharp    → sharp (in-switch reductions: NVLS, IB SHARP);
 * and system.nvlink_domain → nvlink_domain (GPUs on one NVLink fabric).
 */
#include "runtime/runtime.h"

void dc_device_apply_links(dc_device *dev, const dc_point *p) {
  if (p->nvlink_gbps > 0) dev->nvlink_gbps = p->nvlink_gbps;
  if (p->pcie_gbps > 0) {
    /* the catalog guarantees pcie_gbps > 0 (kernels/device.c) */
    dev->h2d_pageable_gbps *= p->pcie_gbps / dev->pcie_gbps;
    dev->pcie_gbps = p->pcie_gbps;
  }
  if (p->nic_gbps > 0) dev->nic_gbps = p->nic_gbps;
  if (p->nvlink_domain > 0) {
    /* the study says how many GPUs share a fabric: it may span hosts */
    dev->nvlink_domain = p->nvlink_domain;
    dev->nvlink_across_hosts = true;
  }
  if (p->sharp >= 0) dev->sharp = p->sharp;
  if (p->link_latency_us >= 0) {
    dev->link_latency_us = p->link_latency_us;
    dev->nic_latency_us = p->link_latency_us;
  }
}

bool dc_device_of_point(const dc_point *p, dc_device *out, dc_arena *a,
                        dc_diags *d) {
  if (!dc_device_lookup(p->gpu, out, a, d)) return false;
  dc_device_apply_links(out, p);
  if (p->kernel_models) out->models_name = p->kernel_models;
  return true;
}
