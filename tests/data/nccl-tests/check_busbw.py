#!/usr/bin/env python3
"""Holds dlrmc's collective prices to published nccl-tests bus bandwidths.

Usage: check_busbw.py DLRMC busbw.csv [tolerance] [--spec FILE]

For each row, `dlrmc kernel <collective> bytes=B ranks=n hosts=h
[algo=A] --gpu G` gives t (us); dlrmc's bus bandwidth is B / t x
2(n-1)/n (all-reduce) or x (n-1)/n (the others), as nccl-tests computes
it. A row whose status is `held` fails the check when dlrmc is more than
the tolerance (0.15) from it; a row whose status is `gap` is a published
figure the model does not reach yet: it fails the check when it comes
within the tolerance, so the fixture says `held` as soon as it is.

--spec FILE also checks that FILE (spec/collectives.md) carries, between
its `<!-- busbw-table -->` markers, the table this script prints with
--table: the comparison in the spec cannot drift from the model.
See tests/data/nccl-tests/README.md.
"""
import csv
import subprocess
import sys

MARK_BEGIN = "<!-- busbw-table begin -->"
MARK_END = "<!-- busbw-table end -->"


def size_name(b):
    for unit, v in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= v and b % v == 0:
            return "%d %s" % (b // v, unit)
    return "%d B" % b


def price(dlrmc, r):
    n, b = int(r["ranks"]), int(r["bytes"])
    cmd = [dlrmc, "kernel", r["collective"], "bytes=%d" % b, "ranks=%d" % n,
           "hosts=%s" % r["hosts"], "--gpu", r["gpu"]]
    if r["algo"] != "auto":
        cmd.insert(3, "algo=" + r["algo"])
    t = float(subprocess.run(cmd, capture_output=True, text=True,
                             check=True).stdout.strip())
    factor = 2 * (n - 1) / n if r["collective"] == "all_reduce" \
        else (n - 1) / n
    return b / (t * 1e3) * factor


def table(results):
    """The markdown table of dlrmc against every row."""
    out = ["| system | collective | GPUs x hosts | algo | size | "
           "published GB/s | dlrmc GB/s | error | status |",
           "|---|---|---|---|---:|---:|---:|---:|---|"]
    for r, got, err in results:
        out.append("| %s | %s | %s x %s | %s | %s | %s | %.3g | %+.0f %% | %s |"
                   % (r["system"], r["collective"], r["ranks"], r["hosts"],
                      r["algo"], size_name(int(r["bytes"])), r["busbw_gbps"],
                      got, 100 * err, r["status"]))
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    spec = None
    show_table = False
    if "--spec" in args:
        i = args.index("--spec")
        spec = args[i + 1]
        del args[i:i + 2]
    if "--table" in args:
        args.remove("--table")
        show_table = True
    dlrmc, path = args[0], args[1]
    tol = float(args[2]) if len(args) > 2 else 0.15
    bad = 0
    results = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            got = price(dlrmc, r)
            want = float(r["busbw_gbps"])
            err = got / want - 1
            within = abs(err) <= tol
            if r["status"] == "held":
                ok = within
            elif r["status"] == "gap":
                ok = not within
            else:
                print("row status must be held or gap:", r["status"])
                return 1
            bad += not ok
            results.append((r, got, err))
            print("%-4s %-5s %-28s %-14s %-5s n=%-3s hosts=%-2s %11s B: "
                  "dlrmc %7.2f GB/s, published %7.2f (%+.1f%%)%s" %
                  ("ok" if ok else "FAIL", r["status"], r["system"],
                   r["collective"], r["algo"], r["ranks"], r["hosts"],
                   r["bytes"], got, want, 100 * err,
                   "" if ok or r["status"] == "held"
                   else "  <- now within tolerance: mark it held"))
    if not results:
        print("no rows in", path)
        return 1
    held = sum(1 for r, _, _ in results if r["status"] == "held")
    print("%d of %d rows as the fixture says (%d held within %.0f%%, %d gaps)"
          % (len(results) - bad, len(results), held, 100 * tol,
             len(results) - held))
    text = table(results)
    if show_table:
        print(text, end="")
    if spec:
        doc = open(spec).read()
        a, b = doc.find(MARK_BEGIN), doc.find(MARK_END)
        if a < 0 or b < a:
            print(spec + ": no busbw-table markers")
            return 1
        if doc[a + len(MARK_BEGIN):b].strip("\n") != text.strip("\n"):
            print(spec + ": the table differs from the model's; regenerate "
                  "it with --table and paste it between the markers")
            return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
