#!/usr/bin/env python3
"""Time real DLRM training steps on a GPU and record one step's traces.

The ground truth that dlrmc's predictions are compared with:
each config is one of dlrmc's model presets (read from spec/models/, so the
network trained here is the one dlrmc prices), built in plain PyTorch in the
style of facebookresearch/dlrm (dlrm_s_pytorch.py) — what dlrmc calls the
`pytorch` framework with `embedding_kernel: per_table`:

  * one nn.EmbeddingBag(rows, dim, mode="sum", sparse=True) per table, fed
    with its own indices and one row of a [tables, batch] offsets tensor;
    fixed pooling L per table (round(pooling) lookups per sample, uniform
    random rows); a config may cap its tables' rows (the cap is in the
    CSV and in the study that compare.py writes);
  * bottom MLP Linear + ReLU after every layer;
  * `dot`: T = cat([x] + pooled).view(B, F, D), Z = bmm(T, Tᵀ), the strict
    lower triangle gathered with index vectors built on the host each step
    (as dlrm_s_pytorch does), R = cat([x, Zflat]);
    `dcn`: x0 = cat([x] + pooled), low-rank cross layers
    x_{l+1} = x0 * (W_l(V_l x_l) + b_l) + x_l (TorchRec's LowRankCrossNet);
  * top MLP Linear + ReLU, last layer Linear + Sigmoid; loss MSE or BCE
    (fp32, outside autocast); SGD over all parameters (sparse embedding
    gradients); zero_grad(set_to_none=True);
  * the batch lives in pageable host memory and is copied with .to(device)
    inside the step (dense, offsets, each table's indices, labels), so the
    step's host-to-device copies are part of its time, as dlrmc models them.
  * precision bf16/fp16: torch.autocast around the forward pass.

Per config: 5 warm-up steps; then `iso_ms` = median over 15 isolated steps
(torch.cuda.synchronize() before and after each, host clock) — the
iteration dlrmc predicts — and `pipe_ms` = CUDA-event time of 20
back-to-back steps / 20; then one step recorded with the Kineto profiler
(record_shapes) and an ExecutionTraceObserver attached to it, written as
<config>.kineto.json.gz and <config>.et.json.gz.

With --plain-traces it records, of the traced configs only, a Kineto
trace without shapes or execution trace (3 steps, after 5 + 2 warm-up):
<config>.plain.kineto.json.gz, the input of `dlrmc overheads extract`
(the observer and record_shapes make the host 3-4 times slower).

Usage: dlrm_step.py --out DIR [--device cuda] [--only NAME,...] [--tiny]
                    [--plain-traces]
(--tiny shrinks every config to a few rows and a batch of 64, to check the
script on a CPU.)  Writes DIR/steps.csv and the traces.
"""

import argparse
import csv
import gzip
import os
import shutil
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from presets import capped, load_preset

# The MLP and the low-rank cross network of the recorded DCN fixtures
# (TorchRec's LowRankCrossNet restated in plain torch): one definition.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "fixtures", "traces"))
from record_dcn import PlainLowRankCross as LowRankCross, mlp  # noqa: E402

# name, preset, batch, precision, rows cap (0: none), traced
CONFIGS = [
    ("default_b2048_fp32", "dlrm_default", 2048, "fp32", 0, True),
    ("default_b16384_fp32", "dlrm_default", 16384, "fp32", 0, True),
    ("default_b16384_bf16", "dlrm_default", 16384, "bf16", 0, False),
    ("ddp_b2048_fp32", "dlrm_ddp", 2048, "fp32", 0, True),
    ("ddp_b16384_fp32", "dlrm_ddp", 16384, "fp32", 0, False),
    ("kaggle_b2048_fp32", "dlrm_mlperf_kaggle", 2048, "fp32", 0, True),
    ("kaggle_b16384_fp32", "dlrm_mlperf_kaggle", 16384, "fp32", 0, False),
    ("kaggle_b16384_bf16", "dlrm_mlperf_kaggle", 16384, "bf16", 0, False),
    ("dcnv2_b8192_fp32", "dlrm_dcnv2", 8192, "fp32", 2000000, True),
    ("dcnv2_b8192_bf16", "dlrm_dcnv2", 8192, "bf16", 2000000, True),
    ("dcnv2_b65536_fp32", "dlrm_dcnv2", 65536, "fp32", 2000000, False),
    ("dcnv2_b65536_bf16", "dlrm_dcnv2", 65536, "bf16", 2000000, False),
]

WARMUP, ISO, PIPE = 5, 15, 20


class DLRM(nn.Module):
    def __init__(self, m, tables, dev):
        super().__init__()
        self.interaction = m.get("interaction", "dot")
        dim = tables[0][1]
        self.emb_l = nn.ModuleList(
            nn.EmbeddingBag(r, d, mode="sum", sparse=True, device=dev)
            for r, d, _ in tables)  # initialised where they live: fast
        bot = m["bottom_mlp"]
        self.bot_l = mlp(bot, sigmoid_last=False)
        nfeat = len(tables) + 1
        if self.interaction == "dot":
            width = bot[-1] + nfeat * (nfeat - 1) // 2
            self.cross = None
        else:
            width = bot[-1] + sum(d for _, d, _ in tables)
            dcn = m.get("dcn", {})
            self.cross = LowRankCross(width, dcn.get("layers", 3),
                                      dcn.get("low_rank", 512))
        self.top_l = mlp([width] + m["top_mlp"], sigmoid_last=True)
        self.dim = dim

    def forward(self, dense, offsets, indices):
        x = self.bot_l(dense)
        ly = [self.emb_l[k](indices[k], offsets[k])
              for k in range(len(self.emb_l))]
        if self.cross is not None:
            return self.top_l(self.cross(torch.cat([x] + ly, dim=1)))
        B, D = x.shape
        T = torch.cat([x] + ly, dim=1).view((B, -1, D))
        Z = torch.bmm(T, torch.transpose(T, 1, 2))
        _, ni, nj = Z.shape
        li = torch.tensor([i for i in range(ni) for j in range(i)])
        lj = torch.tensor([j for i in range(nj) for j in range(i)])
        Zflat = Z[:, li, lj]
        return self.top_l(torch.cat([x] + [Zflat], dim=1))


def make_batches(tables, batch, dense_n, n, seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        dense = torch.rand(batch, dense_n, generator=g)
        pools = [max(1, int(round(p))) for _, _, p in tables]
        offsets = torch.stack([torch.arange(0, batch * L, L, dtype=torch.int64)
                               for L in pools])
        indices = [torch.randint(0, r, (batch * L,), generator=g,
                                 dtype=torch.int64)
                   for (r, _, _), L in zip(tables, pools)]
        labels = torch.randint(0, 2, (batch, 1), generator=g).float()
        out.append((dense, offsets, indices, labels))
    return out


def step(model, opt, loss_fn, b, dev, amp):
    dense, offsets, indices, labels = b
    dense = dense.to(dev)
    offsets = offsets.to(dev)
    indices = [i.to(dev) for i in indices]
    labels = labels.to(dev)
    if amp is not None:
        with torch.autocast(device_type=dev.type, dtype=amp):
            out = model(dense, offsets, indices)
        out = out.float()
    else:
        out = model(dense, offsets, indices)
    loss = loss_fn(out, labels)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def time_steps(fn, dev):
    """ISO isolated steps (synchronised before and after, host clock, ms)
    and the mean of PIPE back-to-back ones (CUDA events; NaN on a CPU)."""
    iso = []
    for _ in range(ISO):
        sync(dev)
        t0 = time.perf_counter()
        fn()
        sync(dev)
        iso.append((time.perf_counter() - t0) * 1e3)
    pipe = float("nan")
    if dev.type == "cuda":
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(PIPE):
            fn()
        e1.record()
        torch.cuda.synchronize()
        pipe = e0.elapsed_time(e1) / PIPE
    return iso, pipe


def gzip_move(src, dst):
    with open(src, "rb") as fi, gzip.open(dst, "wb", compresslevel=9) as fo:
        shutil.copyfileobj(fi, fo)
    os.remove(src)


def record_plain(name, model, opt, loss_fn, batches, dev, amp, out_dir):
    """Kineto only (no shapes, no execution-trace observer): the lightest
    profile PyTorch records, for `dlrmc overheads extract`; 2 steps of
    warm-up inside the profiler, then 3 recorded as ProfilerStep#2..#4."""
    from torch.profiler import ProfilerActivity, profile, schedule
    acts = [ProfilerActivity.CPU]
    if dev.type == "cuda":
        acts.append(ProfilerActivity.CUDA)
    raw = os.path.join(out_dir, name + ".plain.kineto.json")
    sync(dev)
    with profile(activities=acts,
                 schedule=schedule(wait=0, warmup=2, active=3, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
        for k in range(5):
            step(model, opt, loss_fn, batches[k % 3], dev, amp)
            sync(dev)
            prof.step()
    gzip_move(raw, raw + ".gz")


def build(cfg, dev, tiny, cls):
    """The config's preset as network `cls` on dev, with its SGD, loss and
    autocast dtype: (model mapping, tables, batch, model, opt, loss, amp)."""
    _, preset, batch, prec, cap, _ = cfg
    m, tables = load_preset(preset)
    tables = capped(tables, cap)
    if tiny:
        tables = [(min(r, 1000), d, p) for r, d, p in tables]
        batch = 64
    torch.manual_seed(1234)
    model = cls(m, tables, dev).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.MSELoss() if m.get("loss", "mse") == "mse" else nn.BCELoss()
    amp = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[prec]
    return m, tables, batch, model, opt, loss_fn, amp


def run_config(cfg, dev, out_dir, tiny, plain_only=False):
    name, preset, batch, prec, cap, traced = cfg
    m, tables, batch, model, opt, loss_fn, amp = build(cfg, dev, tiny, DLRM)
    batches = make_batches(tables, batch, m["bottom_mlp"][0], 3, 99)
    k = 0
    for _ in range(WARMUP):
        step(model, opt, loss_fn, batches[k % 3], dev, amp); k += 1
    sync(dev)
    if plain_only:
        record_plain(name, model, opt, loss_fn, batches, dev, amp, out_dir)
        return None
    counter = [k]

    def one():
        step(model, opt, loss_fn, batches[counter[0] % 3], dev, amp)
        counter[0] += 1

    iso, pipe = time_steps(one, dev)
    k = counter[0]
    if traced:
        from torch.profiler import (ExecutionTraceObserver, ProfilerActivity,
                                    profile)
        acts = [ProfilerActivity.CPU]
        if dev.type == "cuda":
            acts.append(ProfilerActivity.CUDA)
        et_raw = os.path.join(out_dir, name + ".et.json")
        kt_raw = os.path.join(out_dir, name + ".kineto.json")
        et = ExecutionTraceObserver().register_callback(et_raw)
        sync(dev)
        with profile(activities=acts, record_shapes=True,
                     execution_trace_observer=et) as prof:
            step(model, opt, loss_fn, batches[k % 3], dev, amp); k += 1
            sync(dev)
        prof.export_chrome_trace(kt_raw)
        gzip_move(et_raw, et_raw + ".gz")
        gzip_move(kt_raw, kt_raw + ".gz")
    return {
        "config": name, "preset": preset, "batch": batch, "precision": prec,
        "rows_cap": cap, "tables": len(tables),
        "iso_ms": "%.4f" % statistics.median(iso),
        "iso_min_ms": "%.4f" % min(iso),
        "iso_max_ms": "%.4f" % max(iso),
        "pipe_ms": "%.4f" % pipe,
        "traced": int(traced),
    }


class FusedDLRM(DLRM):
    """The same network with the embedding update a fused optimizer runs
    (FBGEMM's TBE with fused SGD, the `fused` style's premise): the tables
    are plain tensors, the pooled outputs are leaves whose gradients are
    expanded to every lookup and index_add_-ed into the table after the
    backward. Static shapes and no host synchronisation, so the whole step
    can be captured into one CUDA graph."""

    def __init__(self, m, tables, dev):
        super().__init__(m, tables, dev)
        self.tabs = [e.weight.detach() for e in self.emb_l]
        self.emb_l = nn.ModuleList()  # not parameters of the dense optimizer
        self.pools = [max(1, int(round(p))) for _, _, p in tables]
        nf = len(tables) + 1
        self.li = torch.tensor([i for i in range(nf) for j in range(i)],
                               device=dev)
        self.lj = torch.tensor([j for i in range(nf) for j in range(i)],
                               device=dev)
        self.leaves = []

    def forward(self, dense, offsets, indices):
        x = self.bot_l(dense)
        self.leaves = [F.embedding_bag(indices[k], self.tabs[k], offsets[k],
                                       mode="sum").detach().requires_grad_()
                       for k in range(len(self.tabs))]
        ly = self.leaves
        if self.cross is not None:
            return self.top_l(self.cross(torch.cat([x] + ly, dim=1)))
        B, D = x.shape
        T = torch.cat([x] + ly, dim=1).view((B, -1, D))
        Z = torch.bmm(T, torch.transpose(T, 1, 2))
        return self.top_l(torch.cat([x, Z[:, self.li, self.lj]], dim=1))

    def update_tables(self, indices, lr):
        with torch.no_grad():
            for k, leaf in enumerate(self.leaves):
                g = leaf.grad.to(self.tabs[k].dtype)
                L = self.pools[k]
                rows = g.unsqueeze(1).expand(g.shape[0], L, g.shape[1])
                self.tabs[k].index_add_(
                    0, indices[k], rows.reshape(-1, g.shape[1]), alpha=-lr)


def run_graph_config(cfg, dev, tiny):
    """The fused step eagerly and replayed from one captured CUDA graph, on
    the same static device inputs (refreshed from pinned host memory by
    asynchronous copies before each step, outside the graph): iso (median
    of 15 synchronised steps, host clock) and pipe (20 back-to-back steps,
    CUDA events) for both."""
    name, preset, batch, prec, cap, _ = cfg
    m, tables, batch, model, opt, loss_fn, amp = build(cfg, dev, tiny,
                                                       FusedDLRM)
    hb = make_batches(tables, batch, m["bottom_mlp"][0], 1, 99)[0]
    pin = dev.type == "cuda"
    hdense, hoffs = hb[0].pin_memory() if pin else hb[0], hb[1]
    hidx = [i.pin_memory() if pin else i for i in hb[2]]
    hlab = hb[3].pin_memory() if pin else hb[3]
    sdense = hdense.to(dev)
    soffs = hoffs.to(dev)
    sidx = [i.to(dev) for i in hidx]
    slab = hlab.to(dev)

    def load():
        sdense.copy_(hdense, non_blocking=True)
        for s_, h_ in zip(sidx, hidx):
            s_.copy_(h_, non_blocking=True)
        slab.copy_(hlab, non_blocking=True)

    def compute():
        opt.zero_grad(set_to_none=True)
        if amp is not None:
            # no autocast weight cache: a captured graph must recompute casts
            with torch.autocast(device_type=dev.type, dtype=amp,
                                cache_enabled=False):
                out = model(sdense, soffs, sidx)
            out = out.float()
        else:
            out = model(sdense, soffs, sidx)
        loss = loss_fn(out, slab)
        loss.backward()
        opt.step()
        model.update_tables(sidx, 0.01)
        return loss

    def eager():
        load()
        compute()

    def timed(fn):
        for _ in range(WARMUP):
            fn()
        sync(dev)
        iso, pipe = time_steps(fn, dev)
        return statistics.median(iso), pipe

    e_iso, e_pipe = timed(eager)
    g_iso = g_pipe = float("nan")
    if dev.type == "cuda":
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                eager()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(g):
            compute()

        def replay():
            load()
            g.replay()

        g_iso, g_pipe = timed(replay)
    return {"config": name, "preset": preset, "batch": batch,
            "precision": prec, "rows_cap": cap, "tables": len(tables),
            "eager_iso_ms": "%.4f" % e_iso, "eager_pipe_ms": "%.4f" % e_pipe,
            "graph_iso_ms": "%.4f" % g_iso, "graph_pipe_ms": "%.4f" % g_pipe}


def csv_writer(f, tag, a, dev, fields):
    """The device line (`# TAG: torch V, device D (NAME)`) and the header
    of one of this script's CSVs; returns its DictWriter."""
    f.write("# %s: torch %s, device %s%s\n" % (
        tag, torch.__version__, a.device,
        (" (%s)" % torch.cuda.get_device_name(0)) if dev.type == "cuda" else ""))
    w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    return w


def main_graph(a, dev, only):
    path = os.path.join(a.out, "graph_steps.csv")
    fields = ["config", "preset", "batch", "precision", "rows_cap", "tables",
              "eager_iso_ms", "eager_pipe_ms", "graph_iso_ms",
              "graph_pipe_ms"]
    rows = 0
    with open(path, "w", newline="") as f:
        w = csv_writer(f, "dlrm_step.py --graph", a, dev, fields)
        for cfg in CONFIGS:
            if only and cfg[0] not in only:
                continue
            t0 = time.time()
            try:
                r = run_graph_config(cfg, dev, a.tiny)
            except Exception as e:
                print("%s: graph FAILED: %r" % (cfg[0], e), file=sys.stderr,
                      flush=True)
                continue
            finally:
                if dev.type == "cuda":
                    torch.cuda.empty_cache()
            w.writerow(r)
            f.flush()
            rows += 1
            print("%-22s eager %8s / %8s ms  graph %8s / %8s ms (%.1f s)" % (
                r["config"], r["eager_iso_ms"], r["eager_pipe_ms"],
                r["graph_iso_ms"], r["graph_pipe_ms"], time.time() - t0),
                flush=True)
    return 0 if rows else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", default="")
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--plain-traces", action="store_true",
                    help="only record <config>.plain.kineto.json.gz of the "
                         "traced configs (Kineto, no shapes, no ET), for "
                         "`dlrmc overheads extract`; no steps.csv")
    ap.add_argument("--graph", action="store_true",
                    help="the fused-update step eagerly and from a captured "
                         "CUDA graph; writes graph_steps.csv only")
    a = ap.parse_args()
    dev = torch.device(a.device)
    os.makedirs(a.out, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    if a.graph:
        return main_graph(a, dev, only)
    rows = []
    if a.plain_traces:
        for cfg in CONFIGS:
            if cfg[5] and (not only or cfg[0] in only):
                run_config(cfg, dev, a.out, a.tiny, plain_only=True)
                print("%s: plain trace recorded" % cfg[0], flush=True)
        return 0
    path = os.path.join(a.out, "steps.csv")
    fields = ["config", "preset", "batch", "precision", "rows_cap", "tables",
              "iso_ms", "iso_min_ms", "iso_max_ms", "pipe_ms", "traced"]
    with open(path, "w", newline="") as f:
        w = csv_writer(f, "dlrm_step.py", a, dev, fields)
        for cfg in CONFIGS:
            if only and cfg[0] not in only:
                continue
            t0 = time.time()
            try:
                r = run_config(cfg, dev, a.out, a.tiny)
            except Exception as e:  # one config failing keeps the others
                print("%s: FAILED: %r" % (cfg[0], e), file=sys.stderr)
                continue
            finally:
                if dev.type == "cuda":
                    torch.cuda.empty_cache()
            w.writerow(r)
            f.flush()
            rows.append(r)
            print("%-22s iso %8s ms  pipe %8s ms  (%.1f s)" % (
                r["config"], r["iso_ms"], r["pipe_ms"], time.time() - t0),
                flush=True)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
