#!/usr/bin/env python3
"""Kernel microbenchmarks in stock PyTorch, for the families dlrmc prices
that dlrmc-bench does not run as PyTorch runs them.

Every figure is a GPU kernel time read from the profiler (Kineto/CUPTI),
not a host clock: each configuration runs WARMUP times, then REPS times
inside one profiler session; a row is the median over the REPS of the sum
of the kernels one repetition launched (`kernel_us`), with the number of
kernels per repetition and the names of the kernels (the longest first).

Families (one CSV each, the device line in a `#` header):

  embedding.csv  stock nn.EmbeddingBag, mode "sum", one table, fp32:
                 `fwd` (the forward lookup), `bwd` (forward excluded:
                 autograd's backward with sparse=True plus the sparse SGD
                 step, i.e. embedding_bag backward, coalesce, index_add_),
                 `fused_bwd` (the backward a fused optimizer runs: the
                 pooled gradient expanded to every lookup and
                 index_add_ into the table, static shapes).
                 rows 1e3-1e8, dim 32-512, pooling 1-100, batch 512-64k
                 (a seeded sample of the grid and its corners; tables above
                 --max-table-gib are skipped).
  elementwise.csv  relu (1 input), add (2), addcmul (3), in fp32 and bf16,
                 1e3-1e9 elements (out-of-place: 2-4 tensors move).
  copy.csv       host-to-device and device-to-host, pinned and pageable,
                 and device-to-device, 1 KiB-1 GiB.
  launch.csv     N empty-ish kernels (x.add_(1) on 1 element) launched
                 eagerly vs replayed from one captured CUDA graph: host
                 time per kernel (enqueue) and GPU time per kernel
                 (CUDA events around the whole sequence).

Usage: micro.py --out DIR [--device cuda] [--only FAMILY,...] [--quick]
(--quick: a few configurations per family, to check the script; on a CPU
device the kernel times are CPU op times and CUDA graphs are skipped.)
"""

import argparse
import csv
import os
import random
import statistics
import sys
import time

import torch
import torch.nn.functional as F

WARMUP, REPS = 3, 10


def device_line(dev):
    if dev.type == "cuda":
        p = torch.cuda.get_device_properties(0)
        return "%s (sm_%d%d, %d SMs, %d MiB), torch %s, CUDA %s" % (
            p.name, p.major, p.minor, p.multi_processor_count,
            p.total_memory >> 20, torch.__version__, torch.version.cuda)
    return "cpu, torch %s" % torch.__version__


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def kernel_times_many(cases, dev):
    """cases: [(key, fn, reps)]. Runs every case's warm-up, then all their
    repetitions inside ONE profiler session (a session costs tens of ms to
    start), each repetition marked and followed by a synchronize. Returns
    {key: (median kernel µs per repetition, median kernel count, the 3
    longest kernel names)}."""
    from torch.profiler import ProfilerActivity, profile, record_function
    for _, fn, _ in cases:
        for _ in range(WARMUP):
            fn()
    sync(dev)
    acts = [ProfilerActivity.CPU]
    if dev.type == "cuda":
        acts.append(ProfilerActivity.CUDA)
    with profile(activities=acts) as prof:
        for i, (_, fn, reps) in enumerate(cases):
            for r in range(reps):
                with record_function("rep#%d#%d" % (i, r)):
                    fn()
                sync(dev)
    evs = prof.events()
    marks = sorted((e.time_range.start, e.name) for e in evs
                   if e.name.startswith("rep#"))
    starts = [m[0] for m in marks]
    per = {m[1]: [0.0, 0] for m in marks}
    names = {}
    import bisect
    for e in evs:
        dt = str(e.device_type).lower()
        if dev.type == "cuda":
            # GPU kernels and copies; the GPU-side span of a rep's own
            # annotation is reported as a device event too: not a kernel
            if "cuda" not in dt or e.name.startswith("rep#"):
                continue
        elif e.name.startswith("rep#") or e.cpu_parent is None or \
                not e.cpu_parent.name.startswith("rep#"):
            continue  # CPU: the top-level ops inside a rep
        k = bisect.bisect_right(starts, e.time_range.start) - 1
        if k < 0:
            continue
        m = marks[k][1]
        us = e.time_range.elapsed_us()
        per[m][0] += us
        per[m][1] += 1
        i = int(m.split("#")[1])
        names.setdefault(i, {})
        names[i][e.name] = names[i].get(e.name, 0.0) + us
    out = {}
    for i, (key, _, reps) in enumerate(cases):
        got = [per.get("rep#%d#%d" % (i, r)) for r in range(reps)]
        got = [g for g in got if g is not None]
        if not got:
            continue
        top = sorted(names.get(i, {}).items(), key=lambda kv: -kv[1])
        out[key] = (statistics.median(g[0] for g in got),
                    statistics.median(g[1] for g in got),
                    "|".join(n[:60].replace(",", ";") for n, _ in top[:3]))
    return out


def kernel_times(fn, dev, reps=REPS):
    return kernel_times_many([(0, fn, reps)], dev).get(0)


def embedding_grid(quick, max_gib, seed=7, only_rows=None):
    rows = only_rows or [10**3, 10**5, 10**6, 10**7, 10**8]
    dims = [32, 64, 128, 256, 512]
    pools = [1, 10, 30, 100]
    batches = [512, 4096, 16384, 65536]
    grid = [(r, d, p, b) for r in rows for d in dims for p in pools
            for b in batches if r * d * 4 <= max_gib * (1 << 30)]
    corners = [c for c in grid if c[0] in (rows[0], rows[-1]) or
               (c[1] in (dims[0], dims[-1]) and c[2] in (1, 100)
                and c[3] in (512, 65536))]
    rnd = random.Random(seed)
    rest = [c for c in grid if c not in corners]
    rnd.shuffle(rest)
    pick = corners[:40] + rest[:100] if not only_rows else grid
    if quick:
        pick = [(1000, 32, 1, 512), (1000, 64, 10, 512)]
    # one table allocation per (rows, dim)
    return sorted(set(pick))


def bench_embedding(dev, out, quick, max_gib, only_rows=None):
    path = os.path.join(out, "embedding%s.csv" % (
        "_rows" if only_rows else ""))
    fields = ["op", "rows", "dim", "pooling", "batch", "dtype",
              "kernel_us", "kernels", "names"]
    grid = embedding_grid(quick, max_gib, only_rows=only_rows)
    with open(path, "w", newline="") as f:
        f.write("# micro.py embedding: %s\n" % device_line(dev))
        f.write("# op: fwd = forward lookup; train = forward + sparse "
                "backward + SGD step (the backward is train - fwd); "
                "fused_bwd = pooled gradient expanded to every lookup and "
                "index_add_ into the table\n")
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        tables = sorted(set((r, d) for r, d, _, _ in grid))
        for rows, dim in tables:
            if dev.type == "cuda":
                torch.cuda.empty_cache()
            weight = torch.nn.Parameter(
                torch.empty(rows, dim, device=dev).uniform_(-0.01, 0.01))
            opt = torch.optim.SGD([weight], lr=0.01)
            cases = []
            for _, _, pool, batch in [c for c in grid if c[:2] == (rows, dim)]:
                idx = torch.randint(0, rows, (batch * pool,), device=dev)
                offs = torch.arange(0, batch * pool, pool, device=dev)
                grad = torch.ones(batch, dim, device=dev)

                def fwd(idx=idx, offs=offs):
                    with torch.no_grad():
                        F.embedding_bag(idx, weight, offs, mode="sum")

                def train(idx=idx, offs=offs, grad=grad):
                    o = F.embedding_bag(idx, weight, offs, mode="sum",
                                        sparse=True)
                    o.backward(grad)
                    opt.step()
                    opt.zero_grad(set_to_none=True)

                def fused_bwd(idx=idx, grad=grad, pool=pool):
                    with torch.no_grad():
                        g = grad.repeat_interleave(pool, dim=0)
                        weight.index_add_(0, idx, g, alpha=-0.01)

                for op, fn in (("fwd", fwd), ("train", train),
                               ("fused_bwd", fused_bwd)):
                    cases.append(((op, pool, batch), fn, REPS))
            res = kernel_times_many(cases, dev)
            for (op, pool, batch), r in sorted(res.items()):
                w.writerow(dict(op=op, rows=rows, dim=dim, pooling=pool,
                                batch=batch, dtype="fp32",
                                kernel_us="%.3f" % r[0], kernels=r[1],
                                names=r[2]))
            f.flush()
            weight = opt = None
            print("embedding: %d x %d done" % (rows, dim), flush=True)
    print("embedding: done -> %s" % path, flush=True)


def bench_elementwise(dev, out, quick):
    path = os.path.join(out, "elementwise.csv")
    sizes = [10**3, 10**4, 10**5, 10**6, 10**7, 10**8, 3 * 10**8, 10**9]
    if quick:
        sizes = [10**3, 10**5]
    fields = ["op", "inputs", "elements", "dtype", "bytes_moved",
              "kernel_us", "kernels", "names"]
    with open(path, "w", newline="") as f:
        f.write("# micro.py elementwise: %s\n" % device_line(dev))
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for dt, dname in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
            for n in sizes:
                if dev.type == "cuda":
                    torch.cuda.empty_cache()
                a = torch.rand(n, device=dev).to(dt)
                b = torch.rand(n, device=dev).to(dt)
                c = torch.rand(n, device=dev).to(dt)
                ops = (("relu", 1, lambda: torch.relu(a)),
                       ("add", 2, lambda: torch.add(a, b)),
                       ("addcmul", 3, lambda: torch.addcmul(a, b, c)))
                res = kernel_times_many([(nm, fn, REPS) for nm, _, fn in ops],
                                        dev)
                for name, k, fn in ops:
                    r = res.get(name)
                    if r:
                        w.writerow(dict(op=name, inputs=k, elements=n,
                                        dtype=dname,
                                        bytes_moved=(k + 1) * n * a.element_size(),
                                        kernel_us="%.3f" % r[0],
                                        kernels=r[1], names=r[2]))
                a = b = c = None
                f.flush()
    print("elementwise: done -> %s" % path, flush=True)


def bench_copy(dev, out, quick):
    path = os.path.join(out, "copy.csv")
    sizes = [1 << s for s in range(10, 31, 2)]  # 1 KiB .. 1 GiB
    if quick:
        sizes = [1 << 10, 1 << 16]
    fields = ["kind", "host", "bytes", "kernel_us", "host_us", "kernels",
              "names"]
    with open(path, "w", newline="") as f:
        f.write("# micro.py copy: %s\n" % device_line(dev))
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for nbytes in sizes:
            n = nbytes // 4
            d = torch.empty(n, device=dev)
            d2 = torch.empty(n, device=dev)
            cases = []
            for pinned in (True, False):
                pin = pinned and dev.type == "cuda"
                h = torch.empty(n, pin_memory=pin)
                h.fill_(1.0)
                cases.append(("h2d", "pinned" if pinned else "pageable",
                              lambda h=h: d.copy_(h, non_blocking=False)))
                cases.append(("d2h", "pinned" if pinned else "pageable",
                              lambda h=h: h.copy_(d, non_blocking=False)))
            cases.append(("d2d", "-", lambda: d2.copy_(d)))
            reps = REPS if nbytes < (1 << 28) else 4
            res = kernel_times_many([((kd, ho), fn, reps)
                                     for kd, ho, fn in cases], dev)
            for kind, host, fn in cases:
                r = res.get((kind, host))
                sync(dev)
                t0 = time.perf_counter()
                for _ in range(reps):
                    fn()
                    sync(dev)
                host_us = (time.perf_counter() - t0) * 1e6 / reps
                if r:
                    w.writerow(dict(kind=kind, host=host, bytes=nbytes,
                                    kernel_us="%.3f" % r[0],
                                    host_us="%.3f" % host_us,
                                    kernels=r[1], names=r[2]))
            f.flush()
            d = d2 = None
    print("copy: done -> %s" % path, flush=True)


def bench_launch(dev, out, quick):
    path = os.path.join(out, "launch.csv")
    counts = [1, 10, 100, 1000]
    if quick:
        counts = [1, 10]
    fields = ["mode", "kernels", "host_us_per_kernel", "gpu_us_per_kernel",
              "wall_us_per_kernel"]
    with open(path, "w", newline="") as f:
        f.write("# micro.py launch: %s\n" % device_line(dev))
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        x = torch.zeros(1, device=dev)

        def seq(k):
            for _ in range(k):
                x.add_(1.0)

        for k in counts:
            modes = [("eager", lambda k=k: seq(k))]
            if dev.type == "cuda":
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    seq(3)
                torch.cuda.current_stream().wait_stream(s)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    seq(k)
                modes.append(("graph", g.replay))
            for mode, fn in modes:
                for _ in range(3):
                    fn()
                sync(dev)
                host, gpu, wall = [], [], []
                for _ in range(20):
                    if dev.type == "cuda":
                        e0 = torch.cuda.Event(enable_timing=True)
                        e1 = torch.cuda.Event(enable_timing=True)
                        e0.record()
                    t0 = time.perf_counter()
                    fn()
                    t1 = time.perf_counter()
                    if dev.type == "cuda":
                        e1.record()
                    sync(dev)
                    t2 = time.perf_counter()
                    host.append((t1 - t0) * 1e6 / k)
                    wall.append((t2 - t0) * 1e6 / k)
                    if dev.type == "cuda":
                        gpu.append(e0.elapsed_time(e1) * 1e3 / k)
                w.writerow(dict(
                    mode=mode, kernels=k,
                    host_us_per_kernel="%.3f" % statistics.median(host),
                    gpu_us_per_kernel=("%.3f" % statistics.median(gpu))
                    if gpu else "",
                    wall_us_per_kernel="%.3f" % statistics.median(wall)))
            f.flush()
    print("launch: done -> %s" % path, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--max-table-gib", type=float, default=24.0)
    ap.add_argument("--rows", default="",
                    help="embedding: every (dim, pooling, batch) of the grid "
                         "at these row counts (comma list) instead of the "
                         "sample; writes embedding_rows.csv")
    a = ap.parse_args()
    dev = torch.device(a.device)
    os.makedirs(a.out, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    fams = [("launch", lambda: bench_launch(dev, a.out, a.quick)),
            ("elementwise", lambda: bench_elementwise(dev, a.out, a.quick)),
            ("copy", lambda: bench_copy(dev, a.out, a.quick)),
            ("embedding", lambda: bench_embedding(dev, a.out, a.quick,
                                                  a.max_table_gib,
                                                  [int(float(r)) for r in
                                                   a.rows.split(",") if r]
                                                  or None))]
    rc = 0
    for name, fn in fams:
        if only and name not in only:
            continue
        t0 = time.time()
        try:
            fn()
        except Exception as e:  # one family failing keeps the others
            print("%s: FAILED: %r" % (name, e), file=sys.stderr, flush=True)
            rc = 1
        print("%s: %.1f s" % (name, time.time() - t0), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
