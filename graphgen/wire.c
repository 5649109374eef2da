/*
 * wire.c — what the pooled embeddings and the replicas' gradients weigh
 * on the wire, one definition for the graph (exchange.c, linear.c,
 * fused.c) and the planner (runtime/plan/): fp32 pooled outputs, except
 * in the fused style, which keeps its embeddings and their gradients in
 * the model's half precision end to end (spec/frameworks.md);
 * training.comm_precision quantizes the all-to-all's payload.
 */
#include "graphgen/graphgen_int.h"

#define F32 DC_DTYPE_FP32

dc_dtype gg_wire_dtype(const dc_point *p) {
  if (p->framework != DC_FRAMEWORK_FUSED) return F32;
  if (p->precision == DC_PRECISION_FP16) return DC_DTYPE_FP16;
  if (p->precision == DC_PRECISION_BF16) return DC_DTYPE_BF16;
  return F32;
}

int dc_pooled_wire_bytes(const dc_point *p) {
  dc_dtype q = dc_storage_dtype(p->comm_precision);
  return gg_es(q != F32 ? q : gg_wire_dtype(p));
}

int dc_pooled_reduce_bytes(const dc_point *p) {
  return gg_es(gg_wire_dtype(p));
}

bool dc_pooled_a2a_hier(const dc_point *p) {
  return p->framework == DC_FRAMEWORK_FUSED && p->hosts > 1;
}

/* A data-parallel replica's gradient: the fused style sends it in the
 * model's precision with the dense gradients (fused.c's all-reduce). */
bool dc_dp_grad_grouped(const dc_point *p) {
  return p->framework == DC_FRAMEWORK_FUSED;
}

int dc_dp_grad_bytes(const dc_point *p) {
  return dc_dp_grad_grouped(p) ? gg_es(gg_wire_dtype(p)) : 4;
}
