#!/usr/bin/env python3
"""trace_gemm_check.py — holds the analytic GEMM's error on the held-back
GEMMs of a real trace, run by ctest (validation_gemm_trace).

Runs the pipeline of spec/accuracy.md on the A100 recsys trace
in tests/data/traces:
  dlrmc trace kernels TRACE --csv -o ROWS.csv
  dlrmc kernel gemm --csv ROWS.csv --gpu A100-SXM4-40GB --analytic -o PRICED.csv
and scores PRICED.csv with trace_gemm_report.gmae_by_class on the odd
(held-back) distinct shapes, which no constant of kernels/gemm.c was
chosen on. Fails (exit 1) when the GMAE of all held-back rows, or of one
shape class, exceeds what the model reached when the limit was set plus
one point, or when the trace is missing.
Usage: trace_gemm_check.py DLRMC TEST_DATA_DIR
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_gemm_report import gmae_by_class  # noqa: E402
import csv  # noqa: E402

# GMAE (%) on the held-back rows when the limits were set (spec/accuracy.md, "GEMMs
# of real traces"); the test allows one point more.
REACHED = {'all': 12.8, 'large': 9.5, 'skinny': 19.3, 'wgrad': 6.1,
           'batched': 26.4}


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    dlrmc, data = argv
    trace = os.path.join(data, 'traces', 'a100_recsys_rank3_kineto.json.gz')
    if not os.path.exists(trace):
        print(f'FAIL: {trace} not found (the trace lives in tests/data)')
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        rows = os.path.join(tmp, 'rows.csv')
        priced = os.path.join(tmp, 'priced.csv')
        for cmd in ([dlrmc, 'trace', 'kernels', trace, '--csv', '-o', rows],
                    [dlrmc, 'kernel', 'gemm', '--csv', rows, '--gpu',
                     'A100-SXM4-40GB', '--analytic', '-o', priced]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(' '.join(cmd), 'failed:', r.stderr, file=sys.stderr)
                return 1
        with open(priced, newline='') as f:
            got = gmae_by_class(list(csv.DictReader(f)), 'odd')
    bad = 0
    print('class,rows,gmae_pct,limit_pct')
    for g, limit in REACHED.items():
        gm, v = got.get(g, (float('inf'), []))
        ok = gm * 100 <= limit + 1
        print(f'{g},{len(v)},{gm * 100:.1f},{limit + 1:.1f}'
              f'{"" if ok else "  <- over the limit"}')
        bad += not ok
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
