#!/usr/bin/env python3
"""merge_shards.py — joins the CSV parts of a sharded `dlrmc run` (written
by run_array.sh as OUTDIR/part-K-of-N.csv) into the single run's output,
byte for byte.

  merge_shards.py OUTDIR N OUT.csv [--strided]

`dlrmc run --shard K/N` evaluates the K-th of N contiguous blocks of
points and only shard 1 carries the header, so the merge is the parts in
K order. When shards were strided (older dlrmc), shard K held points
K-1, K-1+N, K-1+2N, ... (shard 1 with the header); --strided
merges such parts (one row per point: not --per-rank or --per-shard
output) by taking rows round-robin, which restores the point order.
Any missing part is an error (exit 1) and OUT is written atomically
(a temporary file renamed when complete), so it never holds half a run.
"""
import os
import sys
import tempfile


def die(msg):
    sys.stderr.write("merge_shards.py: error: %s\n" % msg)
    sys.exit(1)


def main(argv):
    args = [a for a in argv if a != "--strided"]
    strided = len(args) != len(argv)
    if len(args) != 3:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        sys.exit(2)
    outdir, n, out = args[0], args[1], args[2]
    try:
        n = int(n)
    except ValueError:
        die("N must be a count, not %r" % n)
    if n < 1:
        die("N must be at least 1")
    parts = []
    for k in range(1, n + 1):
        path = os.path.join(outdir, "part-%d-of-%d.csv" % (k, n))
        try:
            with open(path, "rb") as f:
                parts.append(f.read().splitlines(keepends=True))
        except OSError as e:
            die("%s: %s (did task %d of the array finish?)"
                % (path, e.strerror, k))
    if strided:
        header = parts[0][:1]
        bodies = [parts[0][1:]] + parts[1:]
        rows = []
        longest = max(len(b) for b in bodies)
        for i in range(longest):
            for k, b in enumerate(bodies):
                if i < len(b):
                    rows.append(b[i])
                elif any(i < len(bb) for bb in bodies[k + 1:]):
                    die("part %d of %d is short: not a strided split"
                        % (k + 1, n))
        data = b"".join(header + rows)
    else:
        data = b"".join(b"".join(p) for p in parts)
    d = os.path.dirname(os.path.abspath(out))
    fd, tmp = tempfile.mkstemp(prefix=".merge-", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise


if __name__ == "__main__":
    main(sys.argv[1:])
