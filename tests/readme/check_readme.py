#!/usr/bin/env python3
"""The documents' figures are what their commands print today.

Every block of README.md or a guide under spec/ between
`<!-- NAME:begin -->` and `<!-- NAME:end -->` whose nearest preceding
backticked command is a `dlrmc ...` command is output: this script runs
that command from the repository root with the built binary and compares
its output with the block, byte for byte. A block fenced with ``` is
compared inside its fences. Blocks preceded by no command, and blocks
named `measured-...` (timings made on a machine) or `GPU-accuracy` (the
real-GPU comparison that tests/validation/gpu/compare.py recomputes and
ctest validation_h200 checks) are left alone and listed.

    check_readme.py DLRMC DOC.md...            exit 1 on a stale block
    check_readme.py DLRMC DOC.md... --update   rewrite the stale blocks

The command is read as the document shows it: the text between the last
pair of backticks that opens with `dlrmc ` before the marker, split like a
POSIX shell would (shlex), so a reader can paste it. Two shell endings are
understood: `| head -N` (`| tail -N`) keeps the first (last) N lines, and
`2>&1` compares
stdout and stderr together and accepts any exit status (a diagnostic's
example); otherwise the command must exit 0 and only stdout counts.

A document's indented code lines that run `dlrmc` on files of the
repository (four spaces, then `dlrmc `, continued with a trailing
backslash) are commands a reader pastes as they are: each must exit 0.
Lines with a placeholder (an upper-case word such as STUDY or N) or a
path that does not exist are examples, not commands, and are skipped.

Standard library only.
"""
import re
import shlex
import subprocess
import sys
from pathlib import Path

BEGIN = re.compile(r"^<!-- ([a-z0-9-]+):begin -->$")
CMD = re.compile(r"`(dlrmc (?:run|report|check|graph|explain|gpus|kernel|"
                 r"replay|trace|overheads) [^`]+)`", re.S)
PIPE = re.compile(r"\s*\|\s*(head|tail)\s+-(?:n\s*)?(\d+)\s*$")


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
            raise SystemExit(f"{i + 1}: <!-- {name}:begin --> has no end marker")
        # The command: the last `dlrmc ...` in the text since the
        # previous block (or the last 40 lines), before this marker.
        lo = max(0, i - 40)
        for k in range(i - 1, lo - 1, -1):
            if lines[k].endswith(":end -->"):
                lo = k + 1
                break
        text = "\n".join(lines[lo:i])
        cmds = CMD.findall(text)
        yield name, i, end, (cmds[-1] if cmds else None)


def output_of(dlrmc, cmd, root):
    """The lines `cmd` prints, or None (with a message) when it fails."""
    cmd = " ".join(cmd.split())
    cut = None
    m = PIPE.search(cmd)
    if m:
        cut = (m.group(1), int(m.group(2)))
        cmd = cmd[:m.start()]
    merge = cmd.endswith("2>&1")
    if merge:
        cmd = cmd[:-4]
    args = shlex.split(cmd)
    args[0] = dlrmc
    r = subprocess.run(args, cwd=root, capture_output=True, text=True,
                       env={"DLRMC_NO_PROGRESS": "1", "PATH": "/usr/bin:/bin",
                            "LC_ALL": "C.UTF-8"})
    if not merge and r.returncode != 0:
        print(f"`{cmd}` exited {r.returncode}:\n{r.stderr}", file=sys.stderr)
        return None
    out = r.stdout + (r.stderr if merge else "")
    got = out.rstrip("\n").split("\n")
    if cut is None:
        return got
    return got[:cut[1]] if cut[0] == "head" else got[-cut[1]:]


PLACEHOLDER = re.compile(r"(^|[\s=/])[A-Z][A-Z_]{1,}(\b|$)")


def indented_commands(lines):
    """Yields (line index, command) of the indented `dlrmc` lines."""
    i = 0
    while i < len(lines):
        if lines[i].startswith("    dlrmc "):
            start, cmd = i, lines[i].strip()
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            yield start, cmd
        i += 1


def check_pasted(dlrmc, lines, name_of, root):
    """Runs the document's pasteable commands; the number that fail."""
    bad = 0
    for i, cmd in indented_commands(lines):
        args = shlex.split(cmd)
        files = [a for a in args[1:] if a.endswith((".yaml", ".json", ".gz",
                                                    ".csv", ".jsonl"))]
        if PLACEHOLDER.search(cmd) or any(not (root / f).exists()
                                          for f in files):
            continue
        args[0] = dlrmc
        r = subprocess.run(args, cwd=root, capture_output=True, text=True,
                           env={"DLRMC_NO_PROGRESS": "1",
                                "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"})
        if r.returncode != 0:
            print(f"{name_of}:{i + 1}: `{cmd}` exited {r.returncode}:\n"
                  f"{r.stderr}", file=sys.stderr)
            bad += 1
    return bad


def check_doc(dlrmc, doc, root, update, skipped):
    lines = doc.read_text(encoding="utf-8").split("\n")
    name_of = doc.relative_to(root) if doc.is_relative_to(root) else doc
    stale, checked = [], 0
    if check_pasted(dlrmc, lines, name_of, root):
        return -1, 0
    out_lines = list(lines)
    # Walk from the end so that rewriting a block keeps earlier indices.
    for name, b, e, cmd in reversed(list(blocks(lines))):
        if cmd is None or name.startswith("measured-") or \
                name.endswith("-accuracy"):
            skipped.append(f"{name_of}:{name}")
            continue
        got = output_of(dlrmc, cmd, root)
        if got is None:
            print(f"{name_of}:{b + 1}: block '{name}'", file=sys.stderr)
            return -1, 0
        lo, hi = b + 1, e
        if hi - lo >= 2 and lines[lo].startswith("```") and lines[hi - 1] == "```":
            lo, hi = lo + 1, hi - 1
        checked += 1
        if got != lines[lo:hi]:
            stale.append((name, lo, cmd, lines[lo:hi], got))
            out_lines[lo:hi] = got
    for name, lo, cmd, old, new in reversed(stale):
        print(f"{name_of}:{lo + 1}: block '{name}' is not what `{cmd}` prints "
              "today", file=sys.stderr)
        for o, n in zip(old, new):
            if o != n:
                print(f"  document: {o}\n  dlrmc:    {n}", file=sys.stderr)
                break
        else:
            print(f"  the document has {len(old)} lines, dlrmc prints "
                  f"{len(new)}", file=sys.stderr)
    if stale and update:
        doc.write_text("\n".join(out_lines), encoding="utf-8")
        print(f"{name_of}: rewrote {len(stale)} block(s)", file=sys.stderr)
        return 0, checked
    return len(stale), checked


def main(argv):
    args = [a for a in argv[1:] if a != "--update"]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    update = "--update" in argv[1:]
    dlrmc, docs = args[0], [Path(a).resolve() for a in args[1:]]
    root = Path(__file__).resolve().parents[2]
    total_stale = total = 0
    skipped = []
    for doc in docs:
        n, checked = check_doc(dlrmc, doc, root, update, skipped)
        if n < 0:
            return 1
        total_stale += n
        total += checked
    print(f"{total} blocks in {len(docs)} documents checked against their "
          f"commands, {total_stale} stale; not command output: "
          f"{', '.join(sorted(skipped)) or 'none'}")
    return 1 if total_stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
