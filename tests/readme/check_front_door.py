#!/usr/bin/env python3
"""README.md is a front door: short, and pointing only inside the
repository.

    check_front_door.py REPO

Fails when README.md is longer than 400 lines, lacks the two commands of
a fresh machine (`make demo`, `make test`), names a file outside the
repository (a path with `..`, an absolute path, a document the repository
does not have), or links to a file the repository does not have. The
guides under spec/ are held to the last two rules as well. Standard
library only.
"""
import re
import sys
from pathlib import Path

MAX_LINES = 400
OUTSIDE = [re.compile(p) for p in (
    r"\.\./(?!spec/)",         # a path above the repository (a study in
                              # studies/ may point at ../spec/)
    r"(?<![\w.])/(?:work|home|root)/",  # an absolute path of a machine
    r"\bDESIGN(?:\.md)?\b",   # the project's brief lives outside
    r"\breference/[\w.-]+\.md\b",
    r"\bshared/data\b",
)]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
PATH = re.compile(r"`((?:spec|tests|studies|compiler|graphgen|kernels|"
                  r"runtime)/[\w./<>*-]+)`")


def problems(doc, root, front_door):
    text = doc.read_text(encoding="utf-8")
    lines = text.split("\n")
    rel = doc.relative_to(root)
    out = []
    if front_door:
        n = len(lines) - (1 if lines and lines[-1] == "" else 0)
        if n > MAX_LINES:
            out.append(f"{rel}: {n} lines, more than {MAX_LINES}")
        for cmd in ("make demo", "make test"):
            if cmd not in text:
                out.append(f"{rel}: does not show `{cmd}`")
    for i, line in enumerate(lines, 1):
        for pat in OUTSIDE:
            m = pat.search(line)
            if m:
                out.append(f"{rel}:{i}: names something outside the "
                           f"repository: {m.group(0)!r}")
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            if not (doc.parent / target).exists():
                out.append(f"{rel}:{i}: link to {target}, which the "
                           "repository does not have")
        for m in PATH.finditer(line):
            p = m.group(1).rstrip(".")
            if any(c in p for c in "<>*"):
                continue  # a pattern, not a file
            if not (root / p).exists():
                out.append(f"{rel}:{i}: `{p}` is not in the repository")
    return out


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    root = Path(argv[1]).resolve()
    found = problems(root / "README.md", root, True)
    for guide in sorted((root / "spec").glob("*.md")):
        found += problems(guide, root, False)
    for p in found:
        print(p, file=sys.stderr)
    if found:
        return 1
    print("README.md and spec/*.md: a front door of at most "
          f"{MAX_LINES} lines, every path inside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
