#!/usr/bin/env python3
"""The README's result tables are what their commands print today.

Every block of the README between `<!-- NAME:begin -->` and
`<!-- NAME:end -->` whose nearest preceding backticked command is a
`dlrmc run ...` (or `dlrmc report ...`) is output: this script runs that
command from the repository root with the built binary and compares its
stdout with the block, byte for byte. Blocks preceded by anything else
(the benchmark table, measured on a machine, not computed) are left alone
and listed.

    check_readme.py DLRMC README.md            exit 1 on a stale table
    check_readme.py DLRMC README.md --update   rewrite the stale tables

The command is read as the README shows it: the text between the last
pair of backticks that opens with `dlrmc ` before the marker, split like a
POSIX shell would (shlex), so a reader can paste it. Standard library only.
"""
import re
import shlex
import subprocess
import sys
from pathlib import Path

BEGIN = re.compile(r"^<!-- ([a-z0-9-]+):begin -->$")
CMD = re.compile(r"`(dlrmc (?:run|report) [^`]+)`", re.S)


def blocks(lines):
    """Yields (name, begin index, end index, command or None)."""
    for i, line in enumerate(lines):
        m = BEGIN.match(line)
        if not m:
            continue
        name = m.group(1)
        end = next((j for j in range(i + 1, len(lines))
                    if lines[j] == f"<!-- {name}:end -->"), None)
        if end is None:
            raise SystemExit(f"README:{i + 1}: <!-- {name}:begin --> has no end marker")
        # The command: the last `dlrmc run ...` in the text since the
        # previous block (or the last 40 lines), before this marker.
        lo = max(0, i - 40)
        for k in range(i - 1, lo - 1, -1):
            if lines[k].endswith(":end -->"):
                lo = k + 1
                break
        text = "\n".join(lines[lo:i])
        cmds = CMD.findall(text)
        yield name, i, end, (cmds[-1] if cmds else None)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    dlrmc, readme = argv[1], Path(argv[2])
    update = "--update" in argv[3:]
    root = readme.resolve().parent
    lines = readme.read_text(encoding="utf-8").split("\n")
    stale, checked, skipped = [], 0, []
    out_lines = list(lines)
    # Walk from the end so that rewriting a block keeps earlier indices.
    for name, b, e, cmd in reversed(list(blocks(lines))):
        if cmd is None:
            skipped.append(name)
            continue
        args = shlex.split(" ".join(cmd.split()))
        args[0] = dlrmc
        r = subprocess.run(args, cwd=root, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"README:{b + 1}: `{cmd}` exited {r.returncode}:\n{r.stderr}",
                  file=sys.stderr)
            return 1
        got = r.stdout.rstrip("\n").split("\n")
        checked += 1
        if got != lines[b + 1:e]:
            stale.append((name, b, cmd, lines[b + 1:e], got))
            out_lines[b + 1:e] = got
    for name, b, cmd, old, new in reversed(stale):
        print(f"README:{b + 2}: table '{name}' is not what `{cmd}` prints today",
              file=sys.stderr)
        for o, n in zip(old, new):
            if o != n:
                print(f"  README:  {o}\n  dlrmc:   {n}", file=sys.stderr)
                break
        else:
            print(f"  README has {len(old)} lines, dlrmc prints {len(new)}",
                  file=sys.stderr)
    if stale and update:
        readme.write_text("\n".join(out_lines), encoding="utf-8")
        print(f"rewrote {len(stale)} table(s)", file=sys.stderr)
        return 0
    print(f"{checked} README tables checked against their commands, "
          f"{len(stale)} stale; not command output: {', '.join(sorted(skipped)) or 'none'}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
