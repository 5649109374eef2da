#!/usr/bin/env python3
"""trace_reduce_report.py — the kernels cuBLAS runs after a GEMM, measured.

Reads a PyTorch profiler (Kineto) trace and finds every split-K reduction
kernel (`splitKreduce_kernel`) and cuBLASLt bias epilogue kernel
(`epilogue::impl::globalKernel`). For each it takes the kernel launched
just before it on the same stream (the GEMM it finishes: its grid's z is
the split factor), and the GEMM operator (aten::mm, addmm, bmm, baddbmm)
whose CPU span encloses the launch, for C's shape. Prints one CSV row per
kernel (kind, op, m, n, batch, split, us), or with --summary the median,
min and max time per (kind, m·n·batch, split). The measurements behind
split-K's reduction model in kernels/gemm.c (spec/accuracy.md,
"Split-K's reduction kernel").
Usage: trace_reduce_report.py TRACE.json[.gz] [--summary]
       trace_reduce_report.py --check TEST_DATA_DIR
--check (run by ctest, validation_reduce_trace) reads the A100 recsys
trace in TEST_DATA_DIR/traces and fails (exit 1) unless its 606 reduce
and 6 epilogue kernels are all found with their operator and the medians
spec/accuracy.md quotes still come out. Standard library only.
"""
import bisect
import csv
import gzip
import json
import os
import statistics
import sys

GEMM_OPS = ('aten::mm', 'aten::addmm', 'aten::bmm', 'aten::baddbmm')
KINDS = (('splitKreduce', 'splitk'), ('epilogue::impl', 'epilogue'))


def load(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        d = json.load(f)
    return d['traceEvents'] if isinstance(d, dict) else d


def out_shape(op):
    """(m, n, batch) of C from the operator's input dims."""
    dims = op['args']['Input Dims']
    if op['name'] == 'aten::mm':
        a, b = dims[0], dims[1]
    elif op['name'] == 'aten::addmm':
        a, b = dims[1], dims[2]
    else:  # bmm, baddbmm: batched operands
        a, b = dims[0], dims[1]
        if op['name'] == 'aten::baddbmm':
            a, b = dims[1], dims[2]
        return a[1], b[2], a[0]
    return a[0], b[1], 1


def rows(events):
    launches = {}
    ops = {}
    kernels = []
    for e in events:
        cat, args = e.get('cat'), e.get('args', {})
        if cat in ('cuda_runtime', 'Runtime') and 'correlation' in args:
            launches[args['correlation']] = e
        elif cat in ('cpu_op', 'Operator') and e.get('name') in GEMM_OPS \
                and 'Input Dims' in args:
            ops.setdefault(e['tid'], []).append(e)
        elif cat in ('kernel', 'Kernel'):
            kernels.append(e)
    starts = {}
    for tid, v in ops.items():
        v.sort(key=lambda o: o['ts'])
        starts[tid] = [o['ts'] for o in v]
    kernels.sort(key=lambda k: (str(k['args'].get('stream')), k['ts']))
    out, missing = [], 0
    for i, k in enumerate(kernels):
        kind = next((t for key, t in KINDS if key in k['name']), None)
        if kind is None or i == 0:
            continue
        gemm = kernels[i - 1]
        launch = launches.get(k['args'].get('correlation'))
        op = None
        if launch is not None and launch['tid'] in ops:
            v, ts = ops[launch['tid']], launch['ts']
            j = bisect.bisect_right(starts[launch['tid']], ts)
            for o in reversed(v[:j]):  # innermost enclosing span
                if o['ts'] + o['dur'] >= ts and \
                        (op is None or o['dur'] < op['dur']):
                    op = o
        if op is None:
            missing += 1
            continue
        m, n, b = out_shape(op)
        out.append({'kind': kind, 'op': op['name'], 'm': m, 'n': n,
                    'batch': b, 'split': gemm['args']['grid'][2],
                    'us': float(k['dur'])})
    return out, missing


def summary(found):
    groups = {}
    for r in found:
        key = (r['kind'], r['m'] * r['n'] * r['batch'], r['split'])
        groups.setdefault(key, []).append(r['us'])
    return {k: (len(v), statistics.median(v), min(v), max(v))
            for k, v in sorted(groups.items())}


def check(data):
    trace = os.path.join(data, 'traces', 'a100_recsys_rank3_kineto.json.gz')
    if not os.path.exists(trace):
        print(f'FAIL: {trace} not found')
        return 1
    found, missing = rows(load(trace))
    count = {t: sum(r['kind'] == t for r in found) for _, t in KINDS}
    s = summary(found)
    want = {('splitk', 225, 216): 21.5, ('splitk', 750, 108): 9.0,
            ('splitk', 25600, 8): 4.0, ('splitk', 9705, 18): 6.0,
            ('epilogue', 98304 * 15, 1): 18.0}
    bad = missing != 0 or count != {'splitk': 606, 'epilogue': 6}
    print(f'reduce kernels {count["splitk"]}, epilogue kernels '
          f'{count["epilogue"]}, without their GEMM op {missing}')
    for key, us in want.items():
        got = s.get(key, (0, float('nan')))[1]
        print(f'{key[0]} outputs {key[1]} split {key[2]}: median {got} µs '
              f'(spec/accuracy.md: {us})')
        bad |= got != us
    return 1 if bad else 0


def main(argv):
    if len(argv) == 2 and argv[0] == '--check':
        return check(argv[1])
    if not argv or len(argv) > 2 or (len(argv) == 2 and
                                     argv[1] != '--summary'):
        print('usage: trace_reduce_report.py TRACE.json[.gz] [--summary]\n'
              '       trace_reduce_report.py --check TEST_DATA_DIR',
              file=sys.stderr)
        return 2
    found, missing = rows(load(argv[0]))
    w = csv.writer(sys.stdout)
    if len(argv) == 2:
        w.writerow(['kind', 'outputs', 'split', 'kernels', 'median_us',
                    'min_us', 'max_us'])
        for (kind, mn, split), (n, med, lo, hi) in summary(found).items():
            w.writerow([kind, mn, split, n, med, lo, hi])
    else:
        w.writerow(['kind', 'op', 'm', 'n', 'batch', 'split', 'us'])
        for r in found:
            w.writerow([r[c] for c in ('kind', 'op', 'm', 'n', 'batch',
                                       'split', 'us')])
    if missing:
        print(f'{missing} kernels without an enclosing GEMM op',
              file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
