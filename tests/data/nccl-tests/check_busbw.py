#!/usr/bin/env python3
"""Holds dlrmc's collective prices to published nccl-tests bus bandwidths.

Usage: check_busbw.py DLRMC busbw.csv [tolerance]
For each row, `dlrmc kernel <collective> bytes=B ranks=n hosts=h --gpu G`
gives t (us); dlrmc's bus bandwidth is B / t x 2(n-1)/n (all-reduce) or
x (n-1)/n (the others), as nccl-tests computes it. Fails when any row is
off by more than the tolerance (0.15). See tests/data/nccl-tests/README.md.
"""
import csv
import subprocess
import sys


def main():
    dlrmc, path = sys.argv[1], sys.argv[2]
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 0.15
    bad = 0
    rows = 0
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows += 1
            n, b = int(r["ranks"]), int(r["bytes"])
            out = subprocess.run(
                [dlrmc, "kernel", r["collective"], "bytes=%d" % b,
                 "ranks=%d" % n, "hosts=%s" % r["hosts"], "--gpu", r["gpu"]],
                capture_output=True, text=True, check=True).stdout
            t = float(out.strip())
            factor = 2 * (n - 1) / n if r["collective"] == "all_reduce" \
                else (n - 1) / n
            got = b / (t * 1e3) * factor
            want = float(r["busbw_gbps"])
            err = got / want - 1
            ok = abs(err) <= tol
            bad += not ok
            print("%-4s %-28s %-14s n=%-3d hosts=%-2s %11d B: dlrmc %7.1f "
                  "GB/s, published %7.1f (%+.1f%%)" %
                  ("ok" if ok else "FAIL", r["system"], r["collective"], n,
                   r["hosts"], b, got, want, 100 * err))
    if rows == 0:
        print("no rows in", path)
        return 1
    print("%d of %d rows within %.0f%%" % (rows - bad, rows, 100 * tol))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
