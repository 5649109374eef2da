/*
 * plan_graph.c — dc_plan_build_graph, the driver's entry to the planners
 * (plan.h): a point's graph with the planner in the loop. It sits above
 * the planner (planner.c) and the placement of tables beyond HBM
 * (placement.c), which itself runs the planner for each placement it
 * tries; keeping it apart keeps those two files from calling each other.
 * Under sharding.memory: auto it hands the placement the evaluator's step
 * time (eval.c, with the point's overhead profile), so the placement
 * chosen is the one whose row is fastest.
 */
#include "runtime/plan/plan.h"
#include "runtime/runtime.h"

/* The evaluator's step time of a point under a plan, as the sweep prices
 * it (the priced graph, the device's kernel times, the point's overhead
 * profile, loaded once per placement), and whether its row would say
 * fits (dc_metrics_compute's rule, with the host capacity `host_cap`). */
typedef struct step_pricer {
  const dc_device *dev;
  const dc_kmodels *km;
  const dc_profile *prof;
  int64_t host_cap;
  dc_memo *memo; /* kernel prices across the candidates; may be NULL */
} step_pricer;

static double kernel_us(void *ctx, const dc_launch *l, int32_t rank) {
  (void)rank;
  const step_pricer *sp = ctx;
  if (sp->memo) return dc_memo_time(sp->memo, &l->k, 0, sp->dev, sp->km);
  return dc_kernel_time(&l->k, sp->dev, sp->km);
}

static bool eval_step_us(void *ctx, const dc_point *p, const dc_shard_plan *s,
                         double *step_us, bool *fits) {
  step_pricer *sp = ctx;
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  bool ok = false;
  dc_graph *g = dc_graph_build_detail(p, s, DC_GRAPH_PRICED, &a, &d);
  dc_eval_opts o = {sp->prof, kernel_us, sp, false};
  dc_eval_result r;
  if (g && dc_eval_graph(g, &o, &a, &r, &d)) {
    dc_memory mem;
    dc_metrics m;
    dc_memory_estimate(g, sp->dev->hbm_bytes, &mem);
    dc_memory_host(g, sp->host_cap, &mem);
    dc_metrics_compute(g, &r, &mem, &m);
    *step_us = r.e2e_us;
    *fits = m.v[DC_METRIC_FITS] != 0;
    ok = true;
  }
  dc_diags_free(&d);
  dc_arena_free(&a);
  return ok;
}

/* The evaluator's pricer for point p on `dev` (sp and pr filled, the
 * profile in `prof`, loaded in `a`); false when the point's overhead
 * profile does not load (the planners then rank by their own cost). */
static bool make_pricer(const dc_point *p, const dc_device *dev,
                        const dc_kmodels *km, dc_profile *prof,
                        step_pricer *sp, dc_plan_pricer *pr, dc_arena *a) {
  int64_t cap =
      p->host_memory_bytes > 0 ? p->host_memory_bytes : dev->host_memory_bytes;
  *sp = (step_pricer){dev, km, prof, cap, NULL};
  *pr = (dc_plan_pricer){eval_step_us, sp};
  dc_diags pd = {0};
  bool ok = dc_profile_load(p->overheads ? p->overheads : "paper-v100", prof,
                            a, &pd);
  dc_diags_free(&pd);
  return ok;
}

static bool any_auto_memory(const dc_point *p) {
  if (!p->memory_auto) return false;
  for (int32_t t = 0; t < p->n_tables; t++)
    if (p->tables[t].memory == DC_MEMORY_AUTO) return true;
  return false;
}

dc_graph *dc_plan_build_graph(const dc_point *p, dc_graph_detail detail,
                              dc_arena *a, dc_diags *d) {
  if (any_auto_memory(p)) {
    /* sharding.memory: auto: placement and plan together (placement.c) */
    dc_device dev;
    if (!dc_device_of_point(p, &dev, a, d)) return NULL;
    dc_plan_opts o = {.dev = &dev, .models = dc_kmodels_for(&dev)};
    dc_shard_plan *s = NULL;
    /* candidates ranked by the step time the row will report */
    dc_profile prof;
    step_pricer sp;
    dc_plan_pricer pr;
    bool have_prof = make_pricer(p, &dev, o.models, &prof, &sp, &pr, a);
    if (have_prof) sp.memo = dc_memo_new();
    const dc_point *q =
        dc_plan_place(p, &o, sp.host_cap, have_prof ? &pr : NULL, a, d, &s);
    dc_memo_free(sp.memo);
    if (!q) return NULL;
    return dc_graph_build_detail(q, s, detail, a, d);
  }
  if (p->gpus <= 1 || p->sharding != DC_SHARDING_AUTO)
    return dc_graph_build_detail(p, NULL, detail, a, d);
  dc_device dev;
  if (!dc_device_of_point(p, &dev, a, d)) return NULL;
  dc_plan_opts o = {.dev = &dev, .models = dc_kmodels_for(&dev)};
  /* The planner's final choice among its candidate plans is the one the
   * evaluator prices fastest (spec/planner.md) */
  dc_profile prof;
  step_pricer sp;
  dc_plan_pricer pr;
  if (make_pricer(p, &dev, o.models, &prof, &sp, &pr, a)) {
    o.pricer = &pr;
    sp.memo = dc_memo_new();
  }
  /* When no placement fits, the point still gets a row (fits = false):
   * the greedy default plan, as the capacity question needs. Constraint
   * errors (E0502) are real errors. */
  /* The search's state (templates, per-shard prices: O(T·W) at most)
   * lives in an arena of its own, dropped before the graph is built, so
   * the peak is the larger of the two, not their sum. */
  dc_diags pd = {0};
  dc_arena pa;
  dc_arena_init(&pa);
  dc_shard_plan *s = dc_plan_auto(p, &o, &pa, &pd, NULL);
  dc_memo_free(sp.memo);
  if (s) s = dc_shard_plan_copy(s, a);
  dc_arena_free(&pa);
  bool no_fit = !s && pd.count > 0 && pd.items[0].code == DC_DIAG_NO_PLAN;
  if (!s && !no_fit) {
    for (size_t i = 0; i < pd.count; i++) {
      dc_diag *g = dc_diag_error(d, pd.items[i].code, pd.items[i].span, "%s",
                                 pd.items[i].message);
      if (pd.items[i].help) dc_diag_set_help(g, "%s", pd.items[i].help);
    }
    dc_diags_free(&pd);
    return NULL;
  }
  if (no_fit && p->objective == DC_OBJECTIVE_TORCHREC) {
    /* TorchRec's planner raises here (no plan within its storage
     * budget); the row still comes, fits = false, and says why */
    dc_diag *g = dc_diag_warning(d, DC_DIAG_NO_PLAN, pd.items[0].span, "%s",
                                 pd.items[0].message);
    dc_diag_set_help(g, "TorchRec's planner finds no plan here; this row "
                        "prices dlrmc's default plan (fits = false)");
  }
  dc_diags_free(&pd);
  return dc_graph_build_detail(p, s, detail, a, d);
}
