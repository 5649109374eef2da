/*
 * names.c — the spelling of every enum of point.h and kdesc.h as it
 * appears in studies, CSV columns and exports. One table per enum, so a
 * name is written in exactly one place.
 */
#include <string.h>

#include "compiler/support/kdesc.h"
#include "compiler/support/point.h"

const char *dc_precision_name(dc_precision p) {
  static const char *const n[] = {"fp32", "tf32", "fp16", "bf16"};
  return (size_t)p < DC_COUNTOF(n) ? n[p] : "?";
}

const char *dc_optimizer_name(dc_optimizer o) {
  static const char *const n[] = {"sgd", "adagrad", "rowwise_adagrad",
                                  "adam"};
  return (size_t)o < DC_COUNTOF(n) ? n[o] : "?";
}

const char *dc_sharding_name(dc_sharding s) {
  static const char *const n[] = {"auto",           "table_wise",
                                  "row_wise",       "column_wise",
                                  "table_row_wise", "data_parallel",
                                  "grid_shard",     "table_column_wise",
                                  "explicit"};
  return (size_t)s < DC_COUNTOF(n) ? n[s] : "?";
}

const char *dc_loss_name(dc_loss l) { return l == DC_LOSS_BCE ? "bce" : "mse"; }

const char *dc_interaction_name(dc_interaction i) {
  static const char *const n[] = {"dot", "cat", "dcn"};
  return (size_t)i < DC_COUNTOF(n) ? n[i] : "?";
}

const char *dc_storage_name(dc_storage s) {
  static const char *const n[] = {"fp32", "fp16", "bf16", "int8", "fp8"};
  return (size_t)s < DC_COUNTOF(n) ? n[s] : "?";
}

const char *dc_framework_name(dc_framework f) {
  static const char *const n[] = {"pytorch", "torchrec", "fused"};
  return (size_t)f < DC_COUNTOF(n) ? n[f] : "?";
}

const char *dc_table_memory_name(dc_table_memory m) {
  static const char *const n[] = {"hbm", "uvm", "uvm_caching", "auto"};
  return (size_t)m < DC_COUNTOF(n) ? n[m] : "?";
}

const char *dc_embedding_kernel_name(dc_embedding_kernel k) {
  return k == DC_EMBEDDING_BATCHED ? "batched" : "per_table";
}

const char *dc_dtype_name(dc_dtype t) {
  static const char *const n[] = {"fp32",  "tf32",  "fp16", "bf16",
                                  "int64", "int32", "bool", "int8",
                                  "fp8"};
  return (size_t)t < DC_COUNTOF(n) ? n[t] : "?";
}

static const char *const kind_names[] = {
#define DC_KK_NAME(sym, name) name,
    DC_KERNEL_KINDS(DC_KK_NAME)
#undef DC_KK_NAME
};

const char *dc_kernel_kind_name(dc_kernel_kind k) {
  return (size_t)k < DC_COUNTOF(kind_names) ? kind_names[k] : "?";
}

bool dc_kernel_kind_parse(const char *name, dc_kernel_kind *out) {
  for (size_t i = 0; i < DC_COUNTOF(kind_names); i++)
    if (strcmp(kind_names[i], name) == 0) {
      *out = (dc_kernel_kind)i;
      return true;
    }
  return false;
}
