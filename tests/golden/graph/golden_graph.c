/*
 * golden_graph.c — writes the graph of one of the paper's configurations,
 * built from a hand-made dc_point (points.h), so the golden text graphs
 * test graphgen alone, whatever state the study front end is in.
 *
 *   golden_graph NAME [GPUS [et]]    NAME: DLRM_default | DLRM_MLPerf |
 *                                    DLRM_DDP | tiny (2 tables of 10 rows,
 *                                    batch 8)
 *
 * Batch 2048, fp32, SGD, per_table embeddings (the reference DLRM); with
 * GPUS > 1 the hybrid-parallel graph of every rank. Output: text format,
 * or with `et` the execution trace of rank 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphgen/graphgen.h"
#include "tests/golden/graph/points.h"

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4 || (argc == 4 && strcmp(argv[3], "et") != 0)) {
    fprintf(stderr, "usage: golden_graph NAME [GPUS [et]]\n");
    return 2;
  }
  tp_cfg c;
  static const int64_t bot[] = {4, 3}, top[] = {5, 1};
  if (strcmp(argv[1], "tiny") == 0) { /* for the ET golden: 2 tables */
    tp_init(&c, bot, 2, top, 2, 2, 10, 3, 2, 8);
    c.p.model_name = "tiny";
  } else if (!tp_paper(&c, argv[1], 2048)) {
    fprintf(stderr, "golden_graph: unknown configuration '%s'\n", argv[1]);
    return 2;
  }
  c.p.study = "golden";
  if (argc >= 3) {
    c.p.gpus = atoi(argv[2]);
    c.p.gpus_per_host = c.p.gpus;
  }
  dc_arena a;
  dc_arena_init(&a);
  dc_diags d = {0};
  dc_graph *g = dc_graph_build(&c.p, &a, &d);
  int rc = 1;
  if (g && dc_graph_verify(g, &d)) {
    dc_buf out = {0};
    dc_graph_write(g, argc == 4 ? DC_GRAPH_ET : DC_GRAPH_TEXT, &out);
    fwrite(out.data, 1, out.len, stdout);
    dc_buf_free(&out);
    rc = 0;
  }
  dc_diags_render(&d, stderr, false);
  dc_diags_free(&d);
  dc_arena_free(&a);
  return rc;
}
