/*
 * test_graphgen_export.c — the three exporters. The ET export is parsed by
 * Python's json module (no hand-rolled parser), and its top-level ops —
 * the children of the thread roots, by id — must be the graph's top-level
 * sequence (an evaluate_function's tensors read from the autograd node
 * under it); the root nodes and node fields must be those of a real
 * 1.1.1-chakra.0.0.4 trace, and leaf ops list their arguments as PyTorch
 * records them; with a schedule, each kernel is a device node under the
 * op that launched it (test_et_device). The DOT export must render with Graphviz when `dot`
 * is installed. Tests needing python3 or dot skip that part (saying so)
 * when the tool is missing.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graphgen/graphgen.h"
#include "tests/golden/graph/points.h"
#include "tests/unit/graph_fixture.h"

static bool have(const char *tool) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
  return system(cmd) == 0;
}

static void write_file(const char *path, const dc_buf *b) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b->data, 1, b->len, f), b->len);
  fclose(f);
}

static void test_text(void **state) {
  (void)state;
  tp_cfg c;
  static const int64_t bot[] = {4, 3};
  static const int64_t top[] = {5, 1};
  tp_init(&c, bot, 2, top, 2, 2, 10, 3, 2, 8);
  const dc_graph *g = build(&c);
  dc_buf b = {0};
  dc_graph_write(g, DC_GRAPH_TEXT, &b);
  assert_non_null(strstr(b.data, "aten::linear [forward, thread 0] "
                                 "(fp32[8,4], fp32[3,4], fp32[3]) -> "
                                 "fp32[8,3]"));
  assert_non_null(strstr(b.data, "> gemm m=8 n=3 k=4 batch=1 ta=0 tb=1 "
                                 "fp32 stream=0"));
  assert_non_null(strstr(b.data, "aten::to [loss, thread 0, sync]"));
  assert_non_null(strstr(b.data, "> memcpy_h2d bytes=128 pageable"));
  assert_non_null(strstr(b.data, "embedding_fwd batch=8 fp32 opt=sgd "
                                 "fused=0 groups=1x(E=10,D=3,L=2.00)"));
  /* deterministic */
  dc_buf b2 = {0};
  dc_graph_write(g, DC_GRAPH_TEXT, &b2);
  assert_int_equal(b.len, b2.len);
  assert_memory_equal(b.data, b2.data, b.len);
  dc_buf_free(&b);
  dc_buf_free(&b2);
}

static void check_et(const dc_graph *g, int32_t rank) {
  if (!have("python3")) {
    printf("skipped: python3 not found, ET JSON not parsed\n");
    return;
  }
  char dir[] = "/tmp/dc_et_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char json[64], want[64], got[64], cmd[4096];
  snprintf(json, sizeof json, "%s/et.json", dir);
  snprintf(want, sizeof want, "%s/want.txt", dir);
  snprintf(got, sizeof got, "%s/got.txt", dir);
  dc_buf b = {0};
  dc_graph_write_rank(g, DC_GRAPH_ET, rank, &b);
  /* leaf ops as PyTorch records them: addmm with its real schema, mat2
   * the weight's transposed view, its scalars; cat's TensorList nested */
  assert_non_null(strstr(b.data, "\"aten::addmm(Tensor self, Tensor mat1, "
                                 "Tensor mat2, *, Scalar beta=1, Scalar "
                                 "alpha=1) -> Tensor\""));
  assert_non_null(strstr(b.data, "\"types\": [\"GenericList[Tensor("));
  assert_non_null(strstr(b.data, "\"Int\", \"Int\"], \"strides\""));
  if (g->n_ranks > 1) {
    assert_non_null(strstr(b.data, "\"name\": \"## process_group:init "
                                   "##\""));
    assert_non_null(strstr(b.data, "\"name\": \"record_param_comms\""));
    assert_non_null(strstr(b.data, "\"name\": \"nccl:all_to_all\""));
  }
  write_file(json, &b);
  dc_buf_clear(&b);
  int32_t n = dc_graph_top_level(g, rank, NULL, 0);
  int32_t *top = calloc((size_t)n, sizeof *top);
  dc_graph_top_level(g, rank, top, n);
  for (int32_t i = 0; i < n; i++) {
    const dc_op *o = &g->ops[top[i]];
    dc_buf_printf(&b, "%s|", o->name);
    for (int32_t k = 0; k < o->n_inputs; k++) {
      const dc_tensor *t = &g->tensors[o->inputs[k]];
      dc_buf_putc(&b, '[');
      for (int32_t d = 0; d < t->ndim; d++)
        dc_buf_printf(&b, "%s%lld", d ? "," : "", (long long)t->shape[d]);
      dc_buf_putc(&b, ']');
    }
    dc_buf_putc(&b, '\n');
  }
  free(top);
  write_file(want, &b);
  dc_buf_free(&b);
  /* top-level = children of the thread roots (the process-group header
   * left out), an evaluate_function's tensors on its autograd node; every
   * node has the 1.1.1-chakra.0.0.4 fields; ids unique; parents exist */
  snprintf(cmd, sizeof cmd,
           "python3 -c '\n"
           "import json, sys\n"
           "d = json.load(open(sys.argv[1]))\n"
           "assert d[\"schema\"] == \"1.1.1-chakra.0.0.4\"\n"
           "nodes = d[\"nodes\"]\n"
           "ids = {n[\"id\"] for n in nodes}\n"
           "assert len(ids) == len(nodes)\n"
           "need = {\"rf_id\", \"fw_parent\", \"seq_id\", \"scope\", \"tid\","
           " \"fw_tid\", \"op_schema\"}\n"
           "kids = {}\n"
           "for n in nodes:\n"
           "    assert n[\"ctrl_deps\"] in ids\n"
           "    assert need <= {a[\"name\"] for a in n[\"attrs\"]}, n\n"
           "    for k in (\"inputs\", \"outputs\"):\n"
           "        assert len({len(n[k][f]) for f in (\"values\", \"shapes\","
           " \"types\", \"strides\")}) == 1, n\n"
           "    kids.setdefault(n[\"ctrl_deps\"], []).append(n)\n"
           "procs = [n for n in nodes if n[\"name\"].endswith(\"|process]\")]\n"
           "assert len(procs) == 1 and procs[0][\"id\"] == "
           "procs[0][\"ctrl_deps\"]\n"
           "threads = {n[\"id\"] for n in nodes"
           " if n[\"name\"].endswith(\"|thread]\")}\n"
           "top = sorted((n for n in nodes if n[\"ctrl_deps\"] in threads"
           " and n[\"id\"] not in threads and n[\"name\"] !="
           " \"## process_group:init ##\"), key=lambda n: n[\"id\"])\n"
           "def shapes(n):\n"
           "    if n[\"name\"].startswith(\"autograd::engine::\"):\n"
           "        n = kids[n[\"id\"]][0]\n"
           "    out = []\n"
           "    i = n[\"inputs\"]\n"
           "    for t, s in zip(i[\"types\"], i[\"shapes\"]):\n"
           "        if t.startswith(\"Tensor(\"):\n"
           "            out.append(s)\n"
           "        elif t.startswith(\"GenericList[\"):\n"
           "            ts = t[12:-1].split(\",\")\n"
           "            out += [x for y, x in zip(ts, s)"
           " if y.startswith(\"Tensor(\") and \"nullptr\" not in y]\n"
           "    return out\n"
           "out = open(sys.argv[2], \"w\")\n"
           "for n in top:\n"
           "    out.write(n[\"name\"] + \"|\" + \"\".join(\"[\" + \",\".join("
           "str(x) for x in s) + \"]\" for s in shapes(n)) + \"\\n\")\n"
           "' %s %s && cmp -s %s %s",
           json, got, want, got);
  int rc = system(cmd);
  if (rc != 0) {
    snprintf(cmd, sizeof cmd, "diff %s %s | head -20", want, got);
    (void)system(cmd);
  }
  assert_int_equal(rc, 0);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  (void)system(cmd);
}

static void test_et(void **state) {
  (void)state;
  tp_cfg c;
  assert_true(tp_paper(&c, "DLRM_default", 512));
  check_et(build(&c), 0);
  c.p.precision = DC_PRECISION_FP16;
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c.p.gpus = 2;
  check_et(build(&c), 1);
}

/* The ET with device nodes (dc_graph_write_et): a hand-made schedule of
 * every launch of rank 1, kernel j at ts 10 j for 2.5 us, top-level ops
 * timed, the first collective waiting for kernel 0. Its host nodes must be
 * the host-only export's (their added times and wait aside), the wait the
 * first device node's id; each kernel a device node, ids after every host node's,
 * under the node of the op that launched it (a collective's
 * record_param_comms, an evaluate_function's autograd node), a
 * collective's with its group's pg_name; the times as given. */
static void test_et_device(void **state) {
  (void)state;
  tp_cfg c;
  assert_true(tp_paper(&c, "DLRM_default", 512));
  c.p.precision = DC_PRECISION_FP16;
  c.p.embedding_kernel = DC_EMBEDDING_BATCHED;
  c.p.gpus = 2;
  const dc_graph *g = build(&c);
  int32_t rank = 1, lo = g->rank_first[rank], hi = g->rank_first[rank + 1];
  size_t n = 0;
  for (int32_t i = lo; i < hi; i++) n += (size_t)g->ops[i].n_launches;
  dc_et_kernel *ks = calloc(n + 1, sizeof *ks);
  double *ts = calloc((size_t)g->n_ops, sizeof *ts);
  double *dur = calloc((size_t)g->n_ops, sizeof *dur);
  size_t j = 0, n_coll = 0;
  for (int32_t i = 0; i < g->n_ops; i++) {
    dur[i] = g->ops[i].parent < 0 ? 1.25 : -1;
    ts[i] = i;
  }
  for (int32_t i = lo; i < hi; i++)
    for (int32_t k = 0; k < g->ops[i].n_launches; k++, j++) {
      bool coll = dc_kernel_is_collective(g->ops[i].launches[k].k.kind);
      n_coll += coll;
      ks[j] = (dc_et_kernel){i, k, g->ops[i].launches[k].stream,
                             coll ? "ncclDevKernel_SendRecv" : "k",
                             "kernel", 10.0 * (double)j, 2.5};
    }
  assert_true(n > 0 && n_coll > 0);
  /* the first collective op waits for kernel 0 (another stream's) */
  int32_t *dep = calloc((size_t)g->n_ops, sizeof *dep);
  int32_t waiter = -1;
  for (int32_t i = 0; i < g->n_ops; i++) {
    dep[i] = -1;
    if (waiter < 0 && i >= lo && i < hi &&
        strncmp(g->ops[i].name, "c10d::", 6) == 0)
      waiter = i;
  }
  assert_true(waiter >= 0);
  dep[waiter] = 0;
  dc_et_schedule s = {ks, n, ts, dur, dep};
  dc_buf dev = {0}, host = {0};
  dc_graph_write_et(g, rank, &s, &dev);
  dc_graph_write_rank(g, DC_GRAPH_ET, rank, &host);
  assert_non_null(strstr(dev.data, "\"cat\": \"kernel\", \"ph\": \"X\", "
                                   "\"ts\": 0.000, \"inclusive_dur\": "
                                   "2.500, \"exclusive_dur\": 2.500"));
  assert_non_null(strstr(dev.data, "\"pg_name\": \"0\""));
  free(ks);
  free(ts);
  free(dur);
  free(dep);
  if (!have("python3")) {
    printf("skipped: python3 not found, ET JSON not parsed\n");
    dc_buf_free(&dev);
    dc_buf_free(&host);
    return;
  }
  char dir[] = "/tmp/dc_etd_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char a[64], b[64], cmd[4096];
  snprintf(a, sizeof a, "%s/dev.json", dir);
  snprintf(b, sizeof b, "%s/host.json", dir);
  write_file(a, &dev);
  write_file(b, &host);
  snprintf(cmd, sizeof cmd,
           "python3 -c '\n"
           "import json, sys\n"
           "d = json.load(open(sys.argv[1]))[\"nodes\"]\n"
           "h = json.load(open(sys.argv[2]))[\"nodes\"]\n"
           "devs = [n for n in d if \"cat\" in n]\n"
           "hosts = [n for n in d if \"cat\" not in n]\n"
           "t = (\"ts\", \"inclusive_dur\", \"exclusive_dur\","
           " \"inter_thread_dep\")\n"
           "assert [{k: v for k, v in n.items() if k not in t}"
           " for n in hosts] == h\n"
           "assert any(\"ts\" in n for n in hosts)\n"
           "by = {n[\"id\"]: n for n in hosts}\n"
           "assert min(n[\"id\"] for n in devs) > max(by)\n"
           "w = [n for n in hosts if \"inter_thread_dep\" in n]\n"
           "assert len(w) == 1 and w[0][\"name\"].startswith(\"c10d::\")\n"
           "assert w[0][\"inter_thread_dep\"] == min(n[\"id\"] for n in"
           " devs)\n"
           "assert len(devs) == %zu\n"
           "assert [n[\"ts\"] for n in devs] == [10.0 * j for j in"
           " range(len(devs))]\n"
           "coll = 0\n"
           "for n in devs:\n"
           "    p = by[n[\"ctrl_deps\"]]\n"
           "    assert not p[\"name\"].startswith(\"c10d::\"), p\n"
           "    assert not p[\"name\"].startswith(\"autograd::engine\"), p\n"
           "    if n[\"name\"].startswith(\"nccl\"):\n"
           "        coll += 1\n"
           "        a = {x[\"name\"]: x[\"value\"] for x in p[\"attrs\"]}\n"
           "        assert p[\"name\"] == \"record_param_comms\", p\n"
           "        assert n[\"pg_name\"] == a[\"pg_name\"] == \"0\"\n"
           "        assert a[\"pg_size\"] == 2\n"
           "    else:\n"
           "        assert \"pg_name\" not in n\n"
           "assert coll == %zu\n"
           "' %s %s",
           n, n_coll, a, b);
  int rc = system(cmd);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  (void)system(cmd);
  assert_int_equal(rc, 0);
  dc_buf_free(&dev);
  dc_buf_free(&host);
}

static void test_dot(void **state) {
  (void)state;
  tp_cfg c;
  assert_true(tp_paper(&c, "DLRM_DDP", 512));
  c.p.gpus = 2;
  const dc_graph *g = build(&c);
  dc_buf b = {0};
  dc_graph_write(g, DC_GRAPH_DOT, &b);
  assert_non_null(strstr(b.data, "digraph dlrm {"));
  assert_non_null(strstr(b.data, "subgraph cluster_rank1"));
  assert_non_null(strstr(b.data, "->"));
  if (!have("dot")) {
    printf("skipped: graphviz 'dot' not found, DOT not rendered\n");
    dc_buf_free(&b);
    return;
  }
  char path[] = "/tmp/dc_dot_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  write_file(path, &b);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "dot -Tsvg %s -o /dev/null", path);
  int rc = system(cmd);
  remove(path);
  assert_int_equal(rc, 0);
  dc_buf_free(&b);
}

static void test_format_parse(void **state) {
  (void)state;
  dc_graph_format f;
  assert_true(dc_graph_format_parse("et", &f));
  assert_int_equal(f, DC_GRAPH_ET);
  assert_true(dc_graph_format_parse("dot", &f));
  assert_int_equal(f, DC_GRAPH_DOT);
  assert_true(dc_graph_format_parse("text", &f));
  assert_int_equal(f, DC_GRAPH_TEXT);
  assert_false(dc_graph_format_parse("json", &f));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_text, setup, teardown),
      cmocka_unit_test_setup_teardown(test_et, setup, teardown),
      cmocka_unit_test_setup_teardown(test_et_device, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_format_parse, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
