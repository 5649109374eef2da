#!/usr/bin/env python3
"""Every kernel of an nn.Linear step in stock PyTorch, one row per kernel:
which kernels cuBLAS(Lt) launches for a fully connected layer's forward
(addmm with its bias) and backward (the data and weight gradients and the
bias gradient), by dtype and shape, and how long each takes.

It answers what dlrmc-bench's bare GEMMs cannot: whether the bias is a
separate epilogue kernel or fused, whether a shape runs split-K with a
reduction kernel, and what those extra kernels cost.

Each configuration runs WARMUP times, then REPS times inside one profiler
session, each repetition marked (`fwd#i#r`, `bwd#i#r`) and followed by a
synchronize; a kernel's figure is the median over the repetitions of the
kernel at that position in the repetition's launch order (Kineto/CUPTI
GPU time). Output: linear.csv with the device line in a `#` header:

  dtype,batch,in_features,out_features,phase,index,kernels,name,us

dtype fp32 (TF32 off), tf32 (TF32 on), bf16, fp16 (parameters and inputs
in that dtype); phase fwd or bwd; kernels: how many the phase launched.

Usage: linear.py --out DIR [--device cuda] [--quick]
"""

import argparse
import bisect
import csv
import os
import statistics

import torch
import torch.nn.functional as F

from micro import device_line, sync

WARMUP, REPS = 2, 5
BATCHES = [512, 2048, 8192, 32768]
SHAPES = [(13, 512), (512, 256), (256, 64), (1024, 1024), (512, 1),
          (3456, 1024), (1024, 512), (479, 1024)]
DTYPES = ["fp32", "tf32", "bf16", "fp16"]


def tensor_dtype(d):
    return {"fp32": torch.float32, "tf32": torch.float32,
            "bf16": torch.bfloat16, "fp16": torch.float16}[d]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    os.makedirs(a.out, exist_ok=True)
    from torch.profiler import ProfilerActivity, profile, record_function
    batches = BATCHES[:2] if a.quick else BATCHES
    shapes = SHAPES[:3] if a.quick else SHAPES
    cases = []
    for d in DTYPES:
        for b in batches:
            for fi, fo in shapes:
                cases.append((d, b, fi, fo))
    acts = [ProfilerActivity.CPU]
    if dev.type == "cuda":
        acts.append(ProfilerActivity.CUDA)
    rows = []
    for d in DTYPES:
        torch.backends.cuda.matmul.allow_tf32 = d == "tf32"
        mine = [c for c in cases if c[0] == d]
        made = []
        for (_, b, fi, fo) in mine:
            t = tensor_dtype(d)
            x = torch.randn(b, fi, device=dev, dtype=t, requires_grad=True)
            w = torch.randn(fo, fi, device=dev, dtype=t, requires_grad=True)
            bias = torch.randn(fo, device=dev, dtype=t, requires_grad=True)
            g = torch.randn(b, fo, device=dev, dtype=t)
            made.append((x, w, bias, g))
        for (x, w, bias, g) in made:
            for _ in range(WARMUP):
                y = F.linear(x, w, bias)
                y.backward(g)
        sync(dev)
        with profile(activities=acts) as prof:
            for i, (x, w, bias, g) in enumerate(made):
                for r in range(REPS):
                    with record_function("fwd#%d#%d" % (i, r)):
                        y = F.linear(x, w, bias)
                    sync(dev)
                    with record_function("bwd#%d#%d" % (i, r)):
                        y.backward(g)
                    sync(dev)
        evs = prof.events()
        marks = sorted((e.time_range.start, e.name) for e in evs
                       if e.name.startswith(("fwd#", "bwd#")))
        starts = [m[0] for m in marks]
        seq = {m[1]: [] for m in marks}
        for e in evs:
            if "cuda" not in str(e.device_type).lower() or \
                    e.name.startswith(("fwd#", "bwd#")):
                continue
            k = bisect.bisect_right(starts, e.time_range.start) - 1
            if k < 0:
                continue
            seq[marks[k][1]].append((e.time_range.start, e.name,
                                     e.time_range.elapsed_us()))
        for i, (_, b, fi, fo) in enumerate(mine):
            for ph in ("fwd", "bwd"):
                reps = [sorted(seq.get("%s#%d#%d" % (ph, i, r), []))
                        for r in range(REPS)]
                reps = [s for s in reps if s]
                if not reps:
                    continue
                n = statistics.median(len(s) for s in reps)
                same = [s for s in reps if len(s) == n]
                for j in range(int(n)):
                    rows.append([d, b, fi, fo, ph, j, int(n),
                                 same[0][j][1][:90].replace(",", ";"),
                                 "%.3f" % statistics.median(
                                     s[j][2] for s in same)])
        print("linear: %s done" % d, flush=True)
    path = os.path.join(a.out, "linear.csv")
    with open(path, "w", newline="") as f:
        f.write("# linear.py: %s\n" % device_line(dev))
        w = csv.writer(f)
        w.writerow(["dtype", "batch", "in_features", "out_features", "phase",
                    "index", "kernels", "name", "us"])
        w.writerows(rows)
    print("linear: %d rows -> %s" % (len(rows), path), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
