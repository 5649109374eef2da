/*
 * cmd_gpus.c — `dlrmc gpus [NAME]`: the GPU catalog (spec/gpus/, embedded)
 * as a table, or one entry with every figure and where it comes from. The
 * entry is read through dc_device_lookup, so what is shown is exactly what
 * the kernel models use (achievable factors included).
 */
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "kernels/kernels.h"

static void gib(dc_buf *o, int64_t bytes) {
  double g = (double)bytes / (1024.0 * 1024.0 * 1024.0);
  dc_buf_printf(o, "%.0f", g);
}

static void show_one(const dc_device *v, const dc_kmodels *km, dc_buf *o) {
  dc_buf_printf(o, "%s\n", v->name);
  dc_buf_printf(o, "  vendor / arch / chip   %s / %s / %s (%d)\n", v->vendor,
                v->arch, v->chip, (int)v->year);
  dc_buf_printf(o, "  SMs                    %d at %.0f MHz boost",
                (int)v->sms, v->boost_mhz);
  if (v->sustained_mhz > 0)
    dc_buf_printf(o, " (%.0f MHz sustained)", v->sustained_mhz);
  dc_buf_printf(o, "\n  L2                     %.1f MiB\n",
                (double)v->l2_bytes / (1024.0 * 1024.0));
  if (v->llc_bytes)
    dc_buf_printf(o, "  last-level cache       %.0f MiB\n",
                  (double)v->llc_bytes / (1024.0 * 1024.0));
  dc_buf_puts(o, "  memory                 ");
  gib(o, v->hbm_bytes);
  dc_buf_printf(o, " GiB %s, %.1f GB/s (achievable %.3f = %.1f GB/s)\n",
                v->memory, v->dram_gbps, v->dram_eff,
                v->dram_gbps * v->dram_eff);
  dc_buf_printf(o, "  L2 bandwidth           %.0f GB/s (achievable)\n",
                v->l2_gbps);
  dc_buf_printf(o, "  FP32                   %.2f TFLOP/s (achievable %.2f)\n",
                v->fp32_tflops, v->fp32_eff);
  if (v->fp32_matrix_tflops > 0)
    dc_buf_printf(o, "  FP32 matrix            %.2f TFLOP/s\n",
                  v->fp32_matrix_tflops);
  dc_buf_printf(o, "  TF32 / FP16 / BF16     %.1f / %.1f / %.1f TFLOP/s "
                "(%s; achievable %.2f)\n", v->tf32_tflops, v->fp16_tflops,
                v->bf16_tflops,
                v->tensor_cores ? "tensor cores" : "no tensor cores",
                v->tensor_cores ? v->tensor_eff : v->fp32_eff);
  if (v->fp8_tflops > 0)
    dc_buf_printf(o, "  FP8                    %.1f TFLOP/s\n", v->fp8_tflops);
  if (v->pcie_gen > 0)
    dc_buf_printf(o, "  PCIe                   Gen%d, ", (int)v->pcie_gen);
  else
    dc_buf_puts(o, "  host link              ");
  dc_buf_printf(o, "%.2f GB/s per direction; pageable H2D %.2f GB/s\n",
                v->pcie_gbps, v->h2d_pageable_gbps);
  dc_buf_printf(o, "  NVLink / fabric        %.0f GB/s bidirectional; domain "
                "of %d GPU%s%s; in-switch reduction %s\n",
                v->nvlink_gbps, (int)v->nvlink_domain,
                v->nvlink_domain == 1 ? "" : "s",
                v->nvlink_domain == 1       ? ""
                : v->nvlink_across_hosts ? " across hosts"
                                         : " within a host",
                (const char *[]){"none", "NVLS", "IB SHARP",
                                 "NVLS and IB SHARP"}[v->sharp & 3]);
  dc_buf_printf(o, "  NIC                    %.2f GB/s per GPU\n", v->nic_gbps);
  dc_buf_printf(o, "  host                   %d GPUs (a bare system.gpus is laid "
                   "out in hosts of this size)\n",
                (int)v->gpus_per_host);
  dc_buf_printf(o, "  link efficiency        %.2f\n", v->link_eff);
  dc_buf_printf(o, "  latencies              kernel %.1f us, link step %.1f "
                "us, NIC step %.1f us\n", v->kernel_floor_us,
                v->link_latency_us, v->nic_latency_us);
  if (v->tdp_w > 0) dc_buf_printf(o, "  TDP                    %.0f W\n", v->tdp_w);
  dc_buf_puts(o, "  fitted models          ");
  static const dc_kernel_kind kinds[] = {DC_KERNEL_GEMM, DC_KERNEL_TRANSPOSE,
                                         DC_KERNEL_TRIL_FWD,
                                         DC_KERNEL_TRIL_BWD};
  bool any = false;
  for (size_t i = 0; i < DC_COUNTOF(kinds); i++)
    if (dc_kmodels_get(km, kinds[i])) {
      dc_buf_printf(o, "%s%s", any ? ", " : "", dc_kernel_kind_name(kinds[i]));
      any = true;
    }
  dc_buf_printf(o, "%s\n", any ? "" : "none (analytic models)");
  dc_buf_printf(o, "  source: %s\n", v->source);
  dc_buf_printf(o, "  achievable factors: %s\n", v->eff_source);
}

static int cmd_gpus(int argc, char **argv) {
  if (cli_wants_help(&cli_cmd_gpus_def, argc, argv)) return CLI_EXIT_OK;
  static const cli_opt opts[] = {{0}};
  const char *name = NULL;
  cli_iter it = cli_args(argc, argv, 1);
  char *arg;
  for (int k; (k = cli_next(&cli_cmd_gpus_def, opts, &it, &arg)) !=
              CLI_END;) {
    if (k == CLI_FAIL) return CLI_EXIT_USAGE;
    if (name)
      return cli_usage_error(&cli_cmd_gpus_def, "expected at most one NAME");
    name = arg;
  }
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_buf o = {0};
  int rc = CLI_EXIT_OK;
  if (name) {
    dc_device v;
    if (!dc_device_lookup(name, &v, &a, &d)) {
      cli_report(&d);
      rc = CLI_EXIT_INPUT;
      goto done;
    }
    show_one(&v, dc_kmodels_for(&v), &o);
  } else {
    size_t n;
    const char *const *names = dc_catalog_names("gpus", &n);
    dc_buf_printf(&o, "%-16s %-10s %5s %6s %8s %8s %9s %9s %7s %s\n", "name",
                  "arch", "SMs", "HBM", "BW GB/s", "FP32 TF", "TF32 TF",
                  "FP16 TF", "L2 MiB", "aliases");
    for (size_t i = 0; i < n; i++) {
      dc_device v;
      if (!dc_device_lookup(names[i], &v, &a, &d)) {
        rc = CLI_EXIT_INPUT;
        continue;
      }
      dc_catalog_entry e;
      dc_buf al = {0};
      if (dc_catalog_find("gpus", names[i], &e, &a, &d)) {
        const dc_node *as = dc_node_get(e.root, "aliases");
        for (size_t j = 0; as && as->kind == DC_NODE_SEQ && j < as->n; j++)
          if (as->items[j]->kind == DC_NODE_SCALAR)
            dc_buf_printf(&al, "%s%s", j ? ", " : "", as->items[j]->text);
      }
      dc_buf_printf(&o, "%-16s %-10s %5d %4.0fGB %8.0f %8.1f %9.1f %9.1f "
                    "%7.0f %s\n", v.name, v.arch, (int)v.sms,
                    (double)v.hbm_bytes / (1024.0 * 1024.0 * 1024.0),
                    v.dram_gbps, v.fp32_tflops, v.tf32_tflops,
                    v.fp16_tflops,
                    (double)v.l2_bytes / (1024.0 * 1024.0),
                    al.data ? al.data : "");
      dc_buf_free(&al);
    }
    if (d.count) cli_report(&d);
  }
  if (!cli_write_file_atomic(NULL, o.data ? o.data : "", o.len))
    rc = CLI_EXIT_INPUT;
done:
  dc_buf_free(&o);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return rc;
}

const cli_command cli_cmd_gpus_def = {
    "gpus", cmd_gpus, "dlrmc gpus [NAME]",
    "List the GPU catalog or show one entry.",
    "Without NAME: one line per built-in GPU (spec/gpus/): name, "
    "architecture, SMs\n"
    "(CUs on AMD), memory, datasheet bandwidth, FP32 / TF32 / FP16 peaks "
    "(dense,\n"
    "TFLOP/s; FP16 and TF32 are tensor-core rates where the GPU has them), "
    "L2 size\n"
    "and aliases. With NAME (case-insensitive, aliases accepted, or a path "
    "to a GPU\n"
    "YAML file): every figure the kernel models use, the achievable factors,"
    "\n"
    "fitted models and the sources of all of them.\n\n"
    "  dlrmc gpus\n"
    "  dlrmc gpus v100\n"};
