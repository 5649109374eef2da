/* toy_device.h — the hand-sized GPU of the kernel-model unit tests: round
 * figures, so a test can work a price out by hand (80 SMs at 1 GHz, 1 TB/s
 * DRAM at 0.8, 10 TFLOP/s fp32, 80 fp16 on tensor cores, 16 GB/s PCIe and
 * 8 pageable, NVLink 300, NIC 10, a 20 GB/s host link at 0.5 for tables
 * kept in host memory, 2 µs a kernel). */
#ifndef DC_TESTS_UNIT_TOY_DEVICE_H
#define DC_TESTS_UNIT_TOY_DEVICE_H

#include "kernels/kernels.h"

static inline dc_device toy(void) {
  dc_device v = {0};
  v.name = "toy";
  v.sms = 80;
  v.boost_mhz = 1000;
  v.l2_bytes = 6 << 20;
  v.hbm_bytes = (int64_t)16 << 30;
  v.dram_gbps = 1000;
  v.dram_eff = 0.8;
  v.l2_gbps = 2000;
  v.fp32_tflops = 10;
  v.fp32_eff = 1.0;
  v.fp16_tflops = 80;
  v.tensor_cores = true;
  v.tensor_eff = 1.0;
  v.pcie_gbps = 16;
  v.h2d_pageable_gbps = 8;
  v.nvlink_gbps = 300;
  v.nic_gbps = 10;
  v.link_eff = 1.0;
  v.link_latency_us = 3;
  v.nic_latency_us = 8;
  v.host_link_gbps = 20;
  v.host_link_eff = 0.5;
  v.kernel_floor_us = 2;
  return v;
}

#endif /* DC_TESTS_UNIT_TOY_DEVICE_H */
