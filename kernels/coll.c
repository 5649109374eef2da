/*
 * coll.c — collectives as NCCL runs them (spec/collectives.md).
 *
 * A collective's group of n ranks is cut into NVLink domains: L ranks share
 * one NVLink/NVSwitch fabric (dc_device.nvlink_domain, or the host when the
 * fabric is smaller than the host's share of the group: PCIe joins its
 * parts), N = n / L domains talk over the NICs, one per GPU ("rails").
 * For each algorithm NCCL has for the collective and each of its protocols
 * (LL, LL128, Simple) the model prices
 *
 *   t = latency + max(intra bytes / intra rate, inter bytes / inter rate)
 *
 * (NCCL pipelines chunks through both levels, so the slower level bounds
 * the time) and keeps the cheapest, as NCCL's tuner does (its cost is
 * latency + bytes / bandwidth per algorithm and protocol). The structure
 * and the latency table follow NCCL's tuning model (src/graph/tuning.cc);
 * the bandwidths are the links' own, derated by the catalog's achievable
 * factor and the protocol's payload share. Per rank and direction:
 *
 *   ring AR      intra 2(n-1)/n·b over NVLink, inter 2(n-1)/n·b / L per NIC
 *                (each of the domain's rings crosses its boundary once, and
 *                the rings are spread over all L NICs);
 *   ring RS/AG   the same with (n-1)/n;
 *   tree AR      2b over the chain inside, 2b / L per NIC across (double
 *                binary tree: a domain sends and receives the buffer once
 *                per phase; b / L with two domains), × 0.9 (NCCL: busBw
 *                × 0.9);
 *   NVLS AR      b at NVLS's rate inside one domain (NVLink SHARP reduces in
 *                the switch);
 *   NVLS-tree AR NVLS inside, a tree across (2b / L per NIC, b / L with
 *                two domains);
 *   CollNet AR   NVLS (or a ring reduce-scatter + all-gather) inside, b / L
 *                per NIC across: the IB switches reduce (SHARP);
 *   all-to-all   pairwise sends: (L-1)/n·b over NVLink, (n-L)/n·b over the
 *                rank's own NIC (an all-to-all cannot spread one GPU's
 *                traffic over the other GPUs' NICs).
 */
#include <math.h>
#include <string.h>

#include "kernels/kernels_int.h"

/* Protocols: LL sends 8-byte words carrying 4 bytes of data and a flag;
 * NCCL's tuner takes a quarter of the link for a ring's LL across nodes or
 * in an all-reduce and a third otherwise, 1/3.8 for a tree's LL; LL128
 * sends 120 data bytes per 128-byte line (0.92 in the tuner) and is on by
 * default only over NVLink; Simple carries full chunks (tuning.cc). */
#define LL_RING_MULTI (1.0 / 4.0)
#define LL_RING_ONE (1.0 / 3.0)
#define LL_TREE (1.0 / 3.8)
#define LL128_SHARE 0.92
/* LL's ceiling: NCCL's tuner caps the bus bandwidth of a ring's or a
 * tree's LL at llMaxBws (tuning.cc, GB/s), whatever the links: inside one
 * node by the GPU generation (Volta and older 39, Ampere and Ada 87.7,
 * Hopper 141, Blackwell 2 x 141), across nodes by the host CPU (Intel
 * and others: 39 on two nodes, 20.4 on more; AMD: 22.5 and 19.0). dlrmc
 * does not know the host CPU: Ampere parts take the AMD row (DGX A100
 * and HGX A100 hosts such as Azure's ND A100 v4 carry AMD EPYC CPUs),
 * the others the Intel row (DGX H100/H200/B200 carry Xeons; Grace counts
 * as "other"). AMD GPUs are not capped (RCCL's tables differ). */
#define LL_MAX_VOLTA 39.0
#define LL_MAX_AMPERE 87.7
#define LL_MAX_HOPPER 141.0
#define LL_MAX_BLACKWELL (2 * 141.0)
#define LL_MAX_INTEL_2 39.0
#define LL_MAX_INTEL_MORE 20.4
#define LL_MAX_AMD_2 22.5
#define LL_MAX_AMD_MORE 19.0
#define TREE_SHARE 0.9    /* tuning.cc: tree busBw × 0.9 */
#define COLLNET_SHARE 0.9 /* tuning.cc: CollNet busBw × 0.9 */
/* A 400 Gb/s ConnectX-7 reaches 48-49 GB/s of its 50 (NCCL maintainers,
 * nccl-tests issue 267), a DGX A100's 8 × 200 Gb/s HDR 192 GB/s of 200 in
 * an all-reduce (nccl issue 1576): 0.96 of the NIC's line rate. */
#define NIC_EFF 0.96
/* NVLS all-reduce on 8 H100s: algorithm bandwidth ~275 GB/s of the
 * 450 GB/s per-direction NVLink (NCCL maintainers, nccl-tests issue 212;
 * bus bandwidth ~480 GB/s): 0.61 of the per-direction link. */
#define NVLS_ALGBW 0.61
/* Pairwise sends in flight at once: NCCL spreads a group of sends over its
 * p2p channels, a few channels per peer; 8 peers per round (?). */
#define P2P_PEERS_PER_ROUND 8.0
/* The ramp of mid-size collectives: published nccl-tests curves of one
 * HGX host (tests/data/nccl-tests/: Azure's ND H200 v5 with NVLS and ND
 * A100 v4 with the ring, 2 MiB to 1 GiB) sit above latency + bytes /
 * bandwidth by up to 3/4 of the bandwidth term at mid sizes, and by a
 * fixed ~14 MB's worth of it at large sizes: NCCL's pipeline (a few
 * buffer slots per channel) runs below its rate until the message fills
 * it. The bandwidth term is stretched by min(RAMP_SHARE, RAMP_BYTES / b).
 * Read off those two curves; the H100 curve checks it. */
#define RAMP_SHARE 0.75
#define RAMP_BYTES 14e6
/* NCCL's tree correction (tuning.cc, treeCorrectionFactor): its tuner
 * multiplies a tree all-reduce's bandwidth by a factor per protocol and
 * power-of-two size, 64 B << i for i = 0..22 (64 B to 256 MiB), because
 * trees do not follow its latency + bytes / bandwidth model at medium
 * sizes; 1 from 512 MiB on. [proto][i], proto LL, LL128, Simple. */
static const double tree_corr[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5,
     .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6,
     .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
/* NCCL's ring "plateau" (tuning.cc): a Simple ring all-reduce across
 * nodes costs 1.4 x its latency on Ampere and later, 1.9 x before, once
 * each channel carries at least 64 bytes per rank; with at most 64
 * channels that holds at every size where a Simple ring is the cheapest
 * plan, so dlrmc (which has no channel count) applies it throughout. */
#define RING_PLATEAU 1.4
#define RING_PLATEAU_VOLTA 1.9

/* NCCL's latency model (tuning.cc, µs): a base per algorithm and protocol
 * plus a per-step hardware latency over NVLink, PCIe and the network.
 * [algo][proto] with algo ring, tree, collnet, nvls, nvls-tree. */
enum { A_RING, A_TREE, A_COLLNET, A_NVLS, A_NVLS_TREE, A_N };
enum { HW_NVL, HW_PCI, HW_NET };
static const double base_lat[A_N][3] = {
    {6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
static const double hw_lat[3][A_N][3] = {
    /* NVLink */
    {{.6, 1.9, 3.4}, {.6, 1.25, 4.0}, {0, 0, 3.7}, {0, 0, 25}, {0, 0, 25}},
    /* PCIe */
    {{1.0, 2.5, 5.7}, {1.0, 1.9, 4.0}, {0, 0, 3.7}, {0, 0, 0}, {0, 0, 0}},
    /* network */
    {{2.7, 4.0, 14.0}, {5.0, 8.5, 14.0}, {0, 0, 31}, {0, 0, 18}, {0, 0, 14}},
};
/* The catalog's latency.link_us / nic_us are the Simple ring's step over
 * NVLink / the network; the table scales with them (system.links.latency
 * sets both). */
#define REF_LINK_US 3.4
#define REF_NIC_US 14.0

const char *dc_coll_algo_name(dc_coll_algo a) {
  static const char *const n[] = {"none", "ring",    "tree", "nvls",
                                  "nvls_tree", "collnet", "p2p", "hier"};
  return (unsigned)a < DC_COUNTOF(n) ? n[a] : "?";
}

bool dc_coll_algo_parse(const char *name, dc_coll_algo *out) {
  for (int a = DC_COLL_NONE; a <= DC_COLL_HIER; a++)
    if (strcmp(name, dc_coll_algo_name((dc_coll_algo)a)) == 0) {
      *out = (dc_coll_algo)a;
      return true;
    }
  return false;
}

const char *dc_coll_proto_name(dc_coll_proto p) {
  static const char *const n[] = {"LL", "LL128", "Simple"};
  return (unsigned)p < DC_COUNTOF(n) ? n[p] : "?";
}

typedef struct topo {
  double n, L, N;          /* ranks, ranks per domain, domains */
  double intra, inter;     /* achievable GB/s per GPU per direction */
  double intra_raw, inter_raw;
  int hw_intra;            /* HW_NVL or HW_PCI */
  double s_intra, s_net;   /* latency scales */
  double ll_max;           /* LL's bus-bandwidth ceiling, GB/s; 0: none */
  bool nvlink, nvls, ib;
  bool nccl_tuned;         /* NVIDIA: NCCL's tree correction and plateau */
  bool pre_ampere;         /* NCCL: compute capability below 8.0 */
} topo;

/* NCCL's LL ceiling for a group of N domains (LL_MAX_* above). */
static double ll_max_of(const dc_device *dev, double N) {
  const char *a = dev->arch ? dev->arch : "";
  if (dev->vendor && strcmp(dev->vendor, "nvidia") != 0) return 0;
  bool ampere = strcmp(a, "ampere") == 0 || strcmp(a, "ada") == 0;
  if (N > 1) {
    if (ampere) return N > 2 ? LL_MAX_AMD_MORE : LL_MAX_AMD_2;
    return N > 2 ? LL_MAX_INTEL_MORE : LL_MAX_INTEL_2;
  }
  if (ampere) return LL_MAX_AMPERE;
  if (strcmp(a, "hopper") == 0) return LL_MAX_HOPPER;
  if (strcmp(a, "blackwell") == 0) return LL_MAX_BLACKWELL;
  return LL_MAX_VOLTA; /* Volta and older (NCCL: compute capability < 8) */
}

static void topo_of(const dc_kernel *k, const dc_device *dev, topo *t) {
  int64_t n = k->u.coll.ranks, h = k->u.coll.hosts > 0 ? k->u.coll.hosts : 1;
  if (h > n) h = n;
  int64_t q = n / h; /* the group's ranks per host */
  if (q < 1) q = 1;
  int64_t D = dev->nvlink_domain > 0 ? dev->nvlink_domain : 1;
  bool nvlink = dev->nvlink_gbps > 0;
  int64_t L;
  if (!nvlink || D < q) {
    L = q; /* the host's GPUs, joined by PCIe (bridged pairs at most) */
    nvlink = nvlink && D >= q;
  } else if (!dev->nvlink_across_hosts) {
    L = q; /* a board's fabric ends at its host (4-GPU HGX hosts too) */
  } else {
    L = D / q * q; /* whole hosts per fabric (NVL72: 18 trays of 4) */
    if (L > n) L = n;
  }
  /* A group of no more GPUs than one bridge joins (2 H100 PCIe) is on
   * NVLink even when the host holds more, when they share a host or a
   * fabric that spans hosts. */
  if (dev->nvlink_gbps > 0 && n <= D &&
      (h == 1 || dev->nvlink_across_hosts)) {
    L = n;
    nvlink = true;
  }
  while (L > 1 && n % L) L--; /* an even split of the group */
  t->n = (double)n;
  t->L = (double)L;
  t->N = (double)(n / L);
  t->nvlink = nvlink;
  t->intra_raw = nvlink ? dev->nvlink_gbps / 2 : dev->pcie_gbps;
  t->intra = t->intra_raw * dev->link_eff;
  t->inter_raw = dev->nic_gbps;
  t->inter = dev->nic_gbps * NIC_EFF;
  t->hw_intra = nvlink ? HW_NVL : HW_PCI;
  t->s_intra = dev->link_latency_us / REF_LINK_US;
  t->s_net = dev->nic_latency_us / REF_NIC_US;
  /* NVLS needs the NVSwitch's multicast (Hopper and later): only over a
   * fabric of more than a bridged pair */
  t->nvls = nvlink && (dev->sharp & DC_SHARP_NVLS) && L > 2;
  t->ib = (dev->sharp & DC_SHARP_IB) && t->N > 1;
  t->ll_max = ll_max_of(dev, t->N);
  const char *arch = dev->arch ? dev->arch : "";
  /* RCCL's corrections differ (its own tables): AMD parts take neither */
  t->nccl_tuned = !dev->vendor || strcmp(dev->vendor, "nvidia") == 0;
  t->pre_ampere = strcmp(arch, "volta") == 0 || strcmp(arch, "pascal") == 0 ||
                  strcmp(arch, "turing") == 0;
}

static double lat_intra(const topo *t, int a, int p) {
  double v = hw_lat[t->hw_intra][a][p] * t->s_intra;
  return t->N > 1 && p == DC_PROTO_LL ? v * 1.8 : v; /* tuning.cc */
}

static double lat_net(const topo *t, int a, int p) {
  return hw_lat[HW_NET][a][p] * t->s_net;
}

static double log2ceil(double x) { return x > 1 ? ceil(log2(x)) : 0; }

/* tree_corr's factor for a protocol and a buffer of b bytes (NCCL's index:
 * floor(log2(b / 64))). */
static double tree_corr_of(int p, double b) {
  if (b < 64) return 1.0;
  int i = (int)floor(log2(b / 64));
  return i < (int)DC_COUNTOF(tree_corr[0]) ? tree_corr[p][i] : 1.0;
}

/* Bytes per NIC and direction of a double binary tree across N domains
 * of L GPUs: a domain interior to one tree and a leaf of the other sends
 * (and receives) the whole buffer twice, split over its L NICs; with two
 * domains each is the root of one tree and a leaf of the other and sends
 * it once (NCCL's tuner doubles the tree's network bandwidth at two
 * nodes: tuning.cc, nNodes <= 2). */
static double tree_net_bytes(double b, double L, double N) {
  return N > 2 ? 2 * b / L : N > 1 ? b / L : 0;
}

/* The cheapest plan of all, and the cheapest of the algorithm the kernel
 * forces (algo=, as NCCL_ALGO does; NONE: NCCL's own choice). */
typedef struct chooser {
  dc_coll_algo want;
  double ramp_bytes; /* the buffer, when the ramp applies; else 0 */
  dc_coll_plan any, forced;
} chooser;

/* Fills c's level times from its bytes and rates and keeps it where it is
 * the cheapest. */
static void consider(chooser *ch, dc_coll_plan *c) {
  c->intra_us = c->intra_bytes > 0 && c->intra_gbps > 0
                    ? c->intra_bytes / (c->intra_gbps * 1e3)
                    : 0;
  c->inter_us = c->inter_bytes > 0 && c->inter_gbps > 0
                    ? c->inter_bytes / (c->inter_gbps * 1e3)
                    : 0;
  double bw_us = c->phased ? c->intra_us + c->inter_us
                           : fmax(c->intra_us, c->inter_us);
  c->ramp_us = ch->ramp_bytes > 0
                   ? bw_us * fmin(RAMP_SHARE, RAMP_BYTES / ch->ramp_bytes)
                   : 0;
  c->total_us = c->latency_us + bw_us + c->ramp_us;
  if (ch->any.algo == DC_COLL_NONE || c->total_us < ch->any.total_us)
    ch->any = *c;
  if (c->algo == ch->want &&
      (ch->forced.algo == DC_COLL_NONE || c->total_us < ch->forced.total_us))
    ch->forced = *c;
}

/* Caps a plan's rates so that neither level moves its bus bytes (what
 * NCCL's tuner divides by the bus bandwidth: 2(n-1)/n b for a ring
 * all-reduce, (n-1)/n b for a ring reduce-scatter or all-gather, 2b for a
 * tree) faster than cap GB/s. */
static void cap_bus(dc_coll_plan *c, double bus_bytes, double cap) {
  if (cap <= 0 || bus_bytes <= 0) return;
  if (c->intra_bytes > 0)
    c->intra_gbps = fmin(c->intra_gbps, cap * c->intra_bytes / bus_bytes);
  if (c->inter_bytes > 0)
    c->inter_gbps = fmin(c->inter_gbps, cap * c->inter_bytes / bus_bytes);
}

static double proto_share(int a, int p, const topo *t, bool ar) {
  if (p == DC_PROTO_SIMPLE) return 1.0;
  if (p == DC_PROTO_LL128) return LL128_SHARE;
  if (a == A_TREE) return LL_TREE;
  return t->N > 1 || ar ? LL_RING_MULTI : LL_RING_ONE;
}

static void reduce_family(const dc_kernel *k, const topo *t, chooser *best,
                          dc_coll_plan *c) {
  double b = (double)k->u.coll.bytes, n = t->n, L = t->L, N = t->N;
  bool ar = k->kind == DC_KERNEL_ALL_REDUCE;
  double frac = ar ? 2 * (n - 1) / n : (n - 1) / n;
  double steps = ar ? 2 * (n - 1) : n - 1;
  double isteps = ar ? 2 * (N - 1) : N - 1;
  for (int p = 0; p < 3; p++) {
    if (p == DC_PROTO_LL128 && !t->nvlink) continue; /* NCCL: NVLink only */
    /* ring */
    double s = proto_share(A_RING, p, t, ar);
    c->algo = DC_COLL_RING;
    c->proto = (dc_coll_proto)p;
    c->intra_bytes = L > 1 ? frac * b : 0;
    c->intra_gbps = t->intra * s;
    c->inter_bytes = N > 1 ? frac * b / L : 0;
    c->inter_gbps = t->inter * s;
    c->latency_us = base_lat[A_RING][p] +
                    (steps - isteps) * lat_intra(t, A_RING, p) +
                    isteps * lat_net(t, A_RING, p);
    if (ar && p == DC_PROTO_SIMPLE && N > 1 && t->nccl_tuned)
      c->latency_us *= t->pre_ampere ? RING_PLATEAU_VOLTA : RING_PLATEAU;
    if (p == DC_PROTO_LL) cap_bus(c, frac * b, t->ll_max);
    consider(best, c);
    if (!ar) continue;
    /* tree: a chain inside each domain, a double binary tree across */
    s = proto_share(A_TREE, p, t, ar) * TREE_SHARE;
    c->algo = DC_COLL_TREE;
    c->intra_bytes = L > 1 ? 2 * b : 0;
    c->intra_gbps = t->intra * s;
    c->inter_bytes = tree_net_bytes(b, L, N);
    c->inter_gbps = t->inter * s;
    c->latency_us = base_lat[A_TREE][p] +
                    2 * ((L - 1) * lat_intra(t, A_TREE, p) +
                         log2ceil(N) * lat_net(t, A_TREE, p));
    if (p == DC_PROTO_LL) cap_bus(c, 2 * b, t->ll_max);
    double corr = t->nccl_tuned ? tree_corr_of(p, b) : 1.0;
    c->intra_gbps *= corr;
    c->inter_gbps *= corr;
    consider(best, c);
  }
  if (!ar) return;
  c->proto = DC_PROTO_SIMPLE;
  double nvls_gbps = t->intra_raw * NVLS_ALGBW;
  if (t->nvls) {
    c->algo = N > 1 ? DC_COLL_NVLS_TREE : DC_COLL_NVLS;
    c->intra_bytes = b;
    c->intra_gbps = nvls_gbps;
    c->inter_bytes = tree_net_bytes(b, L, N);
    c->inter_gbps = t->inter * TREE_SHARE;
    c->latency_us = hw_lat[HW_NVL][A_NVLS][2] * t->s_intra +
                    (N > 1 ? 2 * log2ceil(N) * lat_net(t, A_NVLS_TREE, 2) : 0);
    consider(best, c);
  }
  if (t->ib) {
    c->algo = DC_COLL_COLLNET;
    if (t->nvls) {
      c->intra_bytes = b;
      c->intra_gbps = nvls_gbps;
      c->latency_us = hw_lat[HW_NVL][A_NVLS][2] * t->s_intra;
    } else {
      c->intra_bytes = L > 1 ? 2 * (L - 1) / L * b : 0;
      c->intra_gbps = t->intra;
      c->latency_us = 2 * (L - 1) * lat_intra(t, A_COLLNET, 2);
    }
    c->inter_bytes = b / L;
    c->inter_gbps = t->inter * COLLNET_SHARE;
    c->latency_us += lat_net(t, A_COLLNET, 2);
    consider(best, c);
  }
}

/* NCCL's all-to-all: pairwise sends to every peer, those inside the
 * NVLink domain over NVLink, the others over the NIC, all in flight
 * together (the levels pipelined), P2P_PEERS_PER_ROUND peers a round.
 *
 * Hierarchical (k->u.coll.hier or algo=hier, across domains): HugeCTR's
 * exchange — each GPU first writes, over NVLink, the part of its buffer
 * bound for each rail to that rail's GPU in its own domain ((L-1)/L of
 * it), the domain synchronises, then each rail's N GPUs (one per domain)
 * run an all-to-all among themselves through their NICs ((N-1)/N of the
 * buffer, as many bytes as the flat exchange sends across, to N-1 peers
 * instead of n-L). The two phases run one after the other. Bytes the
 * graph marks `railed` (a table-row-wise chunk a host reduce-scatter
 * already left on its rail's GPU, or the gradients a host all-gather
 * takes from there) skip the NVLink phase. A framework that can run it
 * (k->u.coll.hier) runs whichever of the two is faster, as HugeCTR's
 * user sets the strategy its plan is built for; algo=hier forces it. */
static void all_to_all(const dc_kernel *k, const topo *t, chooser *ch,
                       dc_coll_plan *c) {
  double b = (double)k->u.coll.bytes, n = t->n, L = t->L, N = t->N;
  c->proto = DC_PROTO_SIMPLE;
  c->intra_gbps = t->intra;
  c->inter_gbps = t->inter;
  c->inter_bytes = (n - L) / n * b;
  c->algo = DC_COLL_P2P;
  c->intra_bytes = (L - 1) / n * b;
  c->latency_us =
      base_lat[A_RING][2] +
      ceil((L - 1) / P2P_PEERS_PER_ROUND) * lat_intra(t, A_RING, 2) +
      ceil((n - L) / P2P_PEERS_PER_ROUND) * lat_net(t, A_RING, 2);
  consider(ch, c);
  if ((k->u.coll.hier || ch->want == DC_COLL_HIER) && N > 1 && L > 1) {
    c->algo = DC_COLL_HIER;
    c->phased = true;
    double railed = (double)k->u.coll.railed;
    c->intra_bytes = (L - 1) / L * (railed < b ? b - railed : 0);
    c->latency_us = base_lat[A_RING][2] + lat_intra(t, A_RING, 2) +
                    ceil((N - 1) / P2P_PEERS_PER_ROUND) *
                        lat_net(t, A_RING, 2);
    consider(ch, c);
  }
}

void dc_collective_plan(const dc_kernel *k, const dc_device *dev,
                        dc_coll_plan *out) {
  memset(out, 0, sizeof *out);
  out->algo = DC_COLL_NONE;
  out->domain_ranks = out->domains = 1;
  if (k->u.coll.ranks <= 1 || k->u.coll.bytes <= 0) return;
  topo t;
  topo_of(k, dev, &t);
  dc_coll_plan c = {0};
  c.domain_ranks = (int32_t)t.L;
  c.domains = (int32_t)t.N;
  c.intra_raw_gbps = t.intra_raw;
  c.inter_raw_gbps = t.inter_raw;
  /* The ramp is measured inside one NVLink domain for the reducing
   * collectives; no per-size curve across hosts or of an all-to-all is
   * published (spec/collectives.md). */
  chooser ch = {.want = (dc_coll_algo)k->u.coll.algo,
                .ramp_bytes = t.N == 1 && k->kind != DC_KERNEL_ALL_TO_ALL
                                  ? (double)k->u.coll.bytes
                                  : 0};
  ch.any.algo = ch.forced.algo = DC_COLL_NONE;
  if (k->kind == DC_KERNEL_ALL_TO_ALL) {
    all_to_all(k, &t, &ch, &c);
  } else {
    reduce_family(k, &t, &ch, &c);
  }
  /* A forced algorithm the topology cannot run (NVLS without NVSwitch
   * multicast) leaves NCCL's own choice. */
  *out = ch.forced.algo != DC_COLL_NONE ? ch.forced : ch.any;
}
