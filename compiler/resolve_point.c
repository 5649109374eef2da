/*
 * resolve_point.c — fe_resolve: one point, section by section, through
 * the resolver's files (resolve_*.c, listed in resolve_int.h) in a fixed
 * order: the model first (the preset fills what later keys read), the
 * training keys, system, sharding, kernels and transforms, and the
 * cross-key checks (fe_xcheck) and derived GPU counts last. It calls every
 * section and the reading helpers of resolve.c, and none of them calls it.
 */
#include <string.h>

#include "compiler/resolve_int.h"

#define DEFAULT_BATCH 2048
#define DEFAULT_BUCKET_BYTES (25 * 1024 * 1024) /* DDP bucket_cap_mb=25 */

bool fe_resolve(fe_rctx *c, bool fill) {
  dc_point *p = c->p;
  c->ok = true;
  c->preset = NULL;
  memset(&c->x, 0, sizeof c->x);
  c->x.max_rank = -1;
  c->x.batch = DEFAULT_BATCH;
  p->study = c->s->name;

  res_model(c, p, fill);

  const dc_node *n;
  if ((n = res_int(c, "training.batch_size", &c->x.batch)))
    c->x.batch_sp = n->span;
  p->precision = (dc_precision)res_enum(c, "training.precision", 0);
  c->x.half = p->precision == DC_PRECISION_FP16 ||
              p->precision == DC_PRECISION_BF16;
  if ((n = res_get(c, "training.precision"))) c->x.half_sp = n->span;
  p->optimizer = (dc_optimizer)res_enum(c, "training.optimizer", 0);
  res_framework(c, p);
  res_storage(c, p);
  p->zero_grad_legacy = res_enum(c, "training.zero_grad", 0) == 1;
  p->ddp_bucket_bytes = DEFAULT_BUCKET_BYTES;
  res_int(c, "training.ddp_bucket", &p->ddp_bucket_bytes);

  res_system(c, p, fill);
  res_sharding(c, p);
  /* schema: sharding.objective: dlrmc | torchrec */
  p->objective = (dc_objective)res_enum(c, "sharding.objective", 0);
  res_estimator(c, p);
  res_memory(c, p);
  res_capacity(c, p, fill);
  p->embedding_model =
      (dc_embedding_model)res_enum(c, "kernels.embedding_model", 0);
  res_transforms(c, p);

  if (c->ok && !fe_xcheck(&c->x, c->d)) c->ok = false;
  int64_t g, h, q;
  res_derive(&c->x, &g, &h, &q);
  p->batch_size = c->x.batch;
  p->gpus = (int32_t)g;
  p->hosts = (int32_t)h;
  p->gpus_per_host = (int32_t)q;
  return c->ok;
}
