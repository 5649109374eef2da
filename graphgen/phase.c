/*
 * phase.c — names of the training phases as they appear in exports and in
 * `dlrmc explain` (input, forward, loss, backward, optimizer).
 */
#include "graphgen/graphgen.h"

const char *dc_phase_name(dc_phase p) {
  static const char *const n[] = {"input", "forward", "loss", "backward",
                                  "optimizer"};
  return (size_t)p < DC_COUNTOF(n) ? n[p] : "?";
}
