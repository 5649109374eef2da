#!/usr/bin/env python3
"""trace_gemm_report.py — GMAE of GEMM prices against a trace's kernels.

Input: the CSV of `dlrmc kernel gemm --csv ROWS.csv ...` where ROWS.csv
came from `dlrmc trace kernels TRACE` (columns batch, m, n, k, transa,
transb, dtype, time_us, pred_us). Distinct shapes (batch, m, n, k, transa,
transb, dtype), sorted, are numbered 0, 1, 2, ...: the even ones are the
calibration half, the odd ones the held-back half (every row of a shape
falls in the same half). Prints GMAE = exp(mean(ln|pred/real - 1|)) and the
p10/p50/p90 of pred/real per shape class:
  batched  batch > 1
  wgrad    transa = 1 (the weight gradient Xᵀ·dY: k = the batch)
  skinny   min(m, n, k) <= 128
  large    the rest
Usage: trace_gemm_report.py PRICED.csv [all|even|odd]
       trace_gemm_report.py --split ROWS.csv EVEN.csv ODD.csv
Standard library only; a development helper (spec/accuracy.md, "GEMMs of real
traces"). trace_gemm_check.py, run by ctest, uses its gmae_by_class.
"""
import csv
import math
import sys


def shape(r):
    return (int(r['batch']), int(r['m']), int(r['n']), int(r['k']),
            r['transa'], r['transb'], r['dtype'])


def half_of(rows):
    keys = sorted(set(shape(r) for r in rows))
    return {k: i % 2 for i, k in enumerate(keys)}


def cls(r):
    if int(r['batch']) > 1:
        return 'batched'
    if r['transa'] == '1':
        return 'wgrad'
    if min(int(r['m']), int(r['n']), int(r['k'])) <= 128:
        return 'skinny'
    return 'large'


CLASSES = ('all', 'large', 'skinny', 'wgrad', 'batched')


def gmae(ratios):
    """exp(mean(ln|pred/real - 1|)) of the pred/real ratios (a ratio of
    exactly 1 counts as 1e-9, so the log stays finite)."""
    return math.exp(sum(math.log(max(abs(x - 1), 1e-9)) for x in ratios)
                    / len(ratios))


def gmae_by_class(rows, part='all'):
    """{class: (GMAE, sorted pred/real ratios)} over the rows of `part`
    (all, even or odd shapes), classes in CLASSES order, empty ones left
    out."""
    half = half_of(rows)
    groups = {}
    for r in rows:
        if part == 'even' and half[shape(r)] != 0:
            continue
        if part == 'odd' and half[shape(r)] != 1:
            continue
        ratio = float(r['pred_us']) / float(r['time_us'])
        for g in ('all', cls(r)):
            groups.setdefault(g, []).append(ratio)
    out = {}
    for g in CLASSES:
        v = sorted(groups.get(g, []))
        if v:
            out[g] = (gmae(v), v)
    return out


def main(argv):
    if len(argv) == 4 and argv[0] == '--split':
        rows = list(csv.DictReader(open(argv[1])))
        half = half_of(rows)
        for h, path in ((0, argv[2]), (1, argv[3])):
            with open(path, 'w', newline='') as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0].keys()),
                                   lineterminator='\n')
                w.writeheader()
                w.writerows(r for r in rows if half[shape(r)] == h)
        return 0
    rows = list(csv.DictReader(open(argv[0])))
    part = argv[1] if len(argv) > 1 else 'all'
    print('class,rows,gmae_pct,p10,p50,p90')
    for g, (gm, v) in gmae_by_class(rows, part).items():
        print(f'{g},{len(v)},{gm * 100:.1f},{v[len(v) // 10]:.2f},'
              f'{v[len(v) // 2]:.2f},{v[len(v) * 9 // 10]:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
