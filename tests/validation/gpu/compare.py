#!/usr/bin/env python3
"""compare.py — dlrmc's predictions against the training steps measured on
a real GPU, recomputed from the committed data alone.

Usage: compare.py DLRMC DATA_DIR GPU [--check DOC.md | --update DOC.md]

(the H200's document is spec/accuracy.md)

DATA_DIR holds what tests/validation/gpu/run_device.sh brought back:
steps/steps.csv (one row per config: median isolated step `iso_ms`, the
back-to-back step `pipe_ms`), steps/<config>.{et,kineto}.json.gz for the
traced configs, bench/*.csv (dlrmc-bench). For every config the script
writes the dlrmc study of the same network (the preset, its tables capped
as the run capped them, stock PyTorch per-table lookups, SGD, 1 GPU) and
runs `dlrmc run` with two host-overhead profiles: the built-in
`paper-v100`, and one extracted (`dlrmc overheads extract`) from the
recorded traces of this GPU. For the traced configs it adds `dlrmc
replay` of the recorded execution trace against its Kineto trace (one
profiled step: its E2E includes the profiler's own cost, hence the
unprofiled `iso_ms` is the E2E reference), and the kernel-family errors
of that replay. Then the kernels: the analytic GEMM model and the fitted
one (`spec/kernels/<gpu>/gemm.yaml`, judged on the 20 % of rows `dlrmc
fit` held out) per shape set and dtype, and the analytic models of the
other kinds on all their rows.

Prints Markdown. With --check, exits 1 unless DOC.md holds exactly
this text between `<!-- GPU-accuracy:begin -->` and `<!-- GPU-accuracy:end
-->` (GPU lowercased); --update rewrites that block. Standard library and
PyYAML only; no GPU needed.
"""

import csv
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
from presets import capped, load_preset  # noqa: E402
from trace_gemm_report import gmae  # noqa: E402


def read_csv_text(text):
    """Rows of a CSV text whose '#' lines are comments (dlrmc-bench's
    headers, dlrmc's outputs)."""
    return list(csv.DictReader(l for l in text.splitlines()
                               if not l.startswith("#")))


def read_csv(path):
    with open(path) as f:
        return read_csv_text(f.read())


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.stderr.write("compare.py: %s failed (%d):\n%s" %
                         (" ".join(cmd), p.returncode, p.stderr))
        sys.exit(1)
    return p.stdout


def pct(x):
    return ("%+.1f %%" % (100 * x)).replace("-", "−")


def study_yaml(row, gpu, overheads):
    m, tables = load_preset(row["preset"])
    tables = capped(tables, int(row["rows_cap"]))
    lines = [
        "study: %s-step-%s" % (gpu.lower(), row["config"]),
        "model:",
        "  preset: %s" % row["preset"],
        "  embedding_kernel: per_table",
        "  embedding:",
        "    tables:",
    ]
    for i, (r, d, p) in enumerate(tables):
        lines.append("      - {name: t%d, rows: %d, dim: %d, pooling: %d}"
                     % (i, r, d, max(1, int(round(p)))))
    lines += [
        "training:",
        "  batch_size: %s" % row["batch"],
        "  precision: %s" % row["precision"],
        "  optimizer: sgd",
        "system:",
        "  gpu: %s" % gpu,
        "  gpus: 1",
        "  framework: pytorch",
        "  overheads: %s" % overheads,
        "output:",
        "  columns: [e2e_ms, gpu_active_ms, kernel_only_ms]",
    ]
    return "\n".join(lines) + "\n"


def predict(dlrmc, row, gpu, overheads, tmp):
    path = os.path.join(tmp, row["config"] + ".yaml")
    with open(path, "w") as f:
        f.write(study_yaml(row, gpu, overheads))
    out = list(csv.DictReader(run([dlrmc, "run", path]).splitlines()))
    return {k: float(v) for k, v in out[0].items()}


def steps_section(dlrmc, data, gpu, tmp):
    rows = read_csv(os.path.join(data, "steps", "steps.csv"))
    traces = sorted(glob.glob(os.path.join(data, "steps",
                                           "*.plain.kineto.json.gz")))
    prof = os.path.join(tmp, "self.yaml")
    run([dlrmc, "overheads", "extract"] + traces +
        ["-o", prof, "--name", "%s-recorded" % gpu.lower()])
    out = ["### Training steps: E2E", "",
           "| config | batch | precision | measured ms | paper-v100 overheads | error | "
           "%s overheads | error | kernels only | GPU active (trace) | predicted | error |"
           % gpu, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    err_v, err_s, err_a = [], [], []
    for r in rows:
        meas = float(r["iso_ms"])
        pv = predict(dlrmc, r, gpu, "paper-v100", tmp)
        ps = predict(dlrmc, r, gpu, prof, tmp)
        ev, es = pv["e2e_ms"] / meas - 1, ps["e2e_ms"] / meas - 1
        err_v.append(ev)
        err_s.append(es)
        act = act_p = act_e = "-"
        kt = os.path.join(data, "steps", r["config"] + ".plain.kineto.json.gz")
        if os.path.exists(kt):
            st = read_csv_text(run([dlrmc, "trace", "stats", kt, "--table",
                                    "steps", "--format", "csv"]))
            a = float([x for x in st if x["step"] == "mean"][0]["gpu_active_ms"])
            act, act_p = "%.3f" % a, "%.3f" % pv["gpu_active_ms"]
            act_e = pct(pv["gpu_active_ms"] / a - 1)
            err_a.append(pv["gpu_active_ms"] / a - 1)
        out.append("| %s | %s | %s | %.3f | %.3f | %s | %.3f | %s | %.3f | %s | %s | %s |" % (
            r["config"], r["batch"], r["precision"], meas, pv["e2e_ms"], pct(ev),
            ps["e2e_ms"], pct(es), pv["kernel_only_ms"], act, act_p, act_e))
    mae = lambda v: sum(abs(x) for x in v) / len(v)
    out += ["", "Mean absolute error over the %d configs: E2E %.1f %% with "
            "paper-v100 overheads, %.1f %% with the %s profile; GPU active "
            "%.1f %% over the %d traced ones." % (
                len(rows), 100 * mae(err_v), 100 * mae(err_s), gpu,
                100 * mae(err_a), len(err_a)), ""]
    return out




def replay_section(dlrmc, data, gpu):
    out = ["### Recorded steps replayed (`dlrmc replay`, self overheads)", "",
           "| config | E2E pred. / meas. | GPU active pred. / meas. | GEMM GMAE (mean, kernels) | embedding | element-wise | copies |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for et in sorted(glob.glob(os.path.join(data, "steps", "*.et.json.gz"))):
        cfg = os.path.basename(et)[:-len(".et.json.gz")]
        kt = os.path.join(data, "steps", cfg + ".kineto.json.gz")
        rows = read_csv_text(run([dlrmc, "replay", et, kt, "--gpu", gpu, "--csv"]))
        by = {r["row"]: r for r in rows}

        def e(name):
            r = by.get(name)
            if not r or not r.get("mean_error"):
                return "-"
            return "%.2f / %.2f ms (%s)" % (float(r["predicted_us"]) / 1e3,
                                            float(r["measured_us"]) / 1e3,
                                            pct(float(r["mean_error"])))

        def g(name):
            r = by.get(name)
            if not r or not r.get("gmae"):
                return "-"
            return "%.0f %% (%s, %s)" % (100 * float(r["gmae"]),
                                         pct(float(r["mean_error"])),
                                         r["matched"])
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            cfg, e("e2e"), e("gpu_active"), g("GEMM"), g("embedding"),
            g("element-wise"), g("copies")))
    return out + [""]


OTHER_KINDS = [
    # (bench file, dlrmc kernel kind, rows kept, extra key=value columns)
    ("embedding.csv", "embedding_fwd", lambda r: r["direction"] == "fwd",
     {"dtype": "fp32"}),
    ("embedding.csv", "embedding_bwd", lambda r: r["direction"] == "bwd",
     {"dtype": "fp32", "optimizer": "sgd", "fused": "1"}),
    ("transpose.csv", "transpose", lambda r: True, {}),
    ("tril_fwd.csv", "tril_fwd", lambda r: True, {}),
    ("tril_bwd.csv", "tril_bwd", lambda r: True, {}),
    ("concat.csv", "concat", lambda r: True, {}),
    ("memcpy.csv", "memcpy", lambda r: True, {}),
]


def priced(dlrmc, kind, path, gpu, analytic):
    cmd = [dlrmc, "kernel", kind, "--csv", path, "--gpu", gpu]
    return read_csv_text(run(cmd + (["--analytic"] if analytic else [])))


def ratio_cells(rows):
    rat = sorted(float(r["pred_us"]) / float(r["time_us"]) for r in rows)
    return "%d | %.1f %% | %.2f" % (len(rat), 100 * gmae(rat), rat[len(rat) // 2])


def fitted_rows(gpu):
    """The held-out errors `dlrmc fit` wrote into the header of each model
    shipped for GPU (spec/kernels/<catalog name>/), as table rows."""
    out = []
    for f in sorted(glob.glob(os.path.join(HERE, "..", "..", "..", "spec",
                                           "kernels", CATALOG.get(gpu, gpu).lower(),
                                           "*.yaml"))):
        kind = os.path.basename(f)[:-5]
        with open(f) as fh:
            for line in fh:
                if not line.startswith("#"):
                    break
                mt = re.match(r"#\s+held-out (\w+)\s+n=\s*(\d+) GMAE ([0-9.]+)",
                              line)
                if mt:
                    out.append("| %s | fitted MLP, held-out 20 %% | %s | %s | "
                               "%.1f %% (fitted) | - |" % (
                                   kind, mt.group(1), mt.group(2),
                                   100 * float(mt.group(3))))
    return out


CATALOG = {"H200": "h200-sxm-141gb", "H100": "h100-sxm5-80gb"}


def kernels_section(dlrmc, data, gpu, tmp):
    out = ["### Kernels (dlrmc-bench on the %s)" % gpu, "",
           "Analytic models on every row; `p50` is the median of "
           "predicted / measured.", "",
           "| kind | shape set | dtype | rows | analytic GMAE | p50 |",
           "|---|---|---|---:|---:|---:|"]
    for f in sorted(glob.glob(os.path.join(data, "bench", "gemm_*.csv"))):
        set_, dt = os.path.basename(f)[5:-4].rsplit("_", 1)
        out.append("| gemm | %s | %s | %s |" % (
            set_, dt, ratio_cells(priced(dlrmc, "gemm", f, gpu, True))))
    out += fitted_rows(gpu)
    for name, kind, keep, extra in OTHER_KINDS:
        src = os.path.join(data, "bench", name)
        rows = [r for r in read_csv(src) if keep(r)]
        if not rows:
            continue
        path = os.path.join(tmp, kind + ".csv")
        cols = [c for c in rows[0] if c not in ("direction", "kind", "mean_us")
                or (kind == "memcpy" and c == "direction")]
        with open(path, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(cols + list(extra))
            for r in rows:
                w.writerow([r[c] for c in cols] + list(extra.values()))
        dts = sorted(set(r.get("dtype", extra.get("dtype", "fp32")) for r in rows))
        out.append("| %s | %s | %s | %s |" % (
            kind, name[:-4], ",".join(dts), ratio_cells(priced(dlrmc, kind, path, gpu, True))))
    return out + [""]


def main():
    a = sys.argv[1:]
    if len(a) not in (3, 5):
        sys.stderr.write(__doc__)
        return 2
    dlrmc, data, gpu = a[:3]
    with tempfile.TemporaryDirectory() as tmp:
        lines = steps_section(dlrmc, data, gpu, tmp)
        lines += replay_section(dlrmc, data, gpu)
        lines += kernels_section(dlrmc, data, gpu, tmp)
    text = "\n".join(lines).rstrip("\n") + "\n"
    if len(a) == 3:
        sys.stdout.write(text)
        return 0
    mode, readme = a[3], a[4]
    tag = gpu.lower()
    begin, end = "<!-- %s-accuracy:begin -->\n" % tag, "<!-- %s-accuracy:end -->" % tag
    with open(readme) as f:
        doc = f.read()
    if begin not in doc or end not in doc:
        sys.stderr.write("compare.py: %s: no %s...%s block\n" % (readme, begin.strip(), end))
        return 1
    i, j = doc.index(begin) + len(begin), doc.index(end)
    if mode == "--update":
        with open(readme, "w") as f:
            f.write(doc[:i] + text + doc[j:])
        return 0
    if doc[i:j] != text:
        import difflib
        sys.stdout.writelines(difflib.unified_diff(
            doc[i:j].splitlines(True), text.splitlines(True),
            "%s (committed)" % readme, "recomputed"))
        sys.stderr.write("compare.py: " + readme + "'s %s block differs from the "
                         "data (run with --update)\n" % tag)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
