/*
 * resolve_int.h — the resolver's own internals, shared by its files
 * (resolve.c and resolve_*.c; nothing else includes it).
 *
 * The resolver reads one point of a study through the substitution layer
 * and lowers it to a dc_point (study_int.h tells how). It is split by what
 * it resolves: resolve.c holds the reading helpers below and the catalog
 * cache; resolve_point.c fe_resolve, which calls one function per section
 * in a fixed order; resolve_model.c the model and its tables;
 * resolve_system.c the system, framework, storage precisions and capacity
 * search; resolve_sharding.c the sharding plan and estimator;
 * resolve_transform.c the graph transforms; resolve_xcheck.c the
 * constraints between keys.
 * Each helper takes the resolver context: with c->d set it reports and
 * clears c->ok, without it it lowers a checked point and cannot fail.
 */
#ifndef DC_RESOLVE_INT_H
#define DC_RESOLVE_INT_H

#include "compiler/study_int.h"

/* ---- reading a point (resolve.c) ----------------------------------------- */

/* The node at dotted path `rest` below n, or NULL. */
const dc_node *res_descend(const dc_node *n, const char *rest);
/* The node for `path` in this point, or NULL when not written anywhere. */
const dc_node *res_get(const fe_rctx *c, const char *path);
/* Where to point when a key is missing: the key of its section. */
dc_span res_missing_span(const fe_rctx *c, const char *section);
void res_fail(fe_rctx *c);
/* Typed reads of a leaf by path through the schema; NULL / the default
 * when absent, and a reported failure when malformed. */
const dc_node *res_int(fe_rctx *c, const char *path, int64_t *out);
const dc_node *res_num(fe_rctx *c, const char *path, double *out);
int res_enum(fe_rctx *c, const char *path, int def);
void res_topology(fe_rctx *c, dc_point *p);
bool res_bool(fe_rctx *c, const char *path, bool def);
double res_gbps(fe_rctx *c, const char *path, double def);
/* A list of counts: `what` names it in messages, `min` entries at least. */
bool res_intlist(fe_rctx *c, const dc_node *n, const char *what,
                 const fe_skey *k, size_t min, int64_t **out,
                 int32_t *count);
/* A catalog-valued key: returns the canonical name, or def's. */
const fe_catref *res_catalog(fe_rctx *c, const char *path,
                             const char *dir, const char *def, bool fill);
/* True when `path` is swept or given as a -D list. */
bool res_varies(const fe_rctx *c, const char *path);
/* Whether a span points into a built-in preset (not the user's text). */
bool res_in_preset(dc_span s);

/* ---- the sections, in the order fe_resolve calls them -------------------- */

/* resolve_model.c */
void res_model(fe_rctx *c, dc_point *p, bool fill);
/* resolve_system.c */
void res_framework(fe_rctx *c, dc_point *p);
void res_storage(fe_rctx *c, dc_point *p);
void res_system(fe_rctx *c, dc_point *p, bool fill);
/* resolve_sharding.c */
void res_sharding(fe_rctx *c, dc_point *p);
void res_estimator(fe_rctx *c, dc_point *p);
void res_memory(fe_rctx *c, dc_point *p);
/* resolve_system.c */
void res_capacity(fe_rctx *c, dc_point *p, bool fill);
/* resolve_transform.c */
void res_transforms(fe_rctx *c, dc_point *p);

/* (gpus, hosts, gpus_per_host) from what was written (resolve_xcheck.c). */
void res_derive(const fe_xkeys *x, int64_t *g, int64_t *h, int64_t *q);

#endif /* DC_RESOLVE_INT_H */
