#!/usr/bin/env python3
"""check_layout.py — the repository's layout rules (spec/design.md), checked.

Usage:
    check_layout.py ROOT        check the tree at ROOT; exit 1 on a violation
    check_layout.py --self-test plant each violation in a synthetic tree
                                written to a temporary directory and check
                                that it is reported (and a clean tree is not)

Rules, over the source folders compiler/, graphgen/, kernels/, runtime/
(the product) and, for rule 3 only, tests/ as well:

1. No cycle between files. The graph: a node is one source file, except
   that a .c (or .cu) and its own header beside it are one node: the
   header of the same stem (compiler/support/point.h), or the stem and _int
   when no other .c includes it (graphgen/core.c, graphgen/core_int.h). Node A depends on node B
   when a file of A includes a header of B (#include "dir/x.h", from the
   repository root or beside the including file), or when code of A (a
   function body, an initializer, a macro body: anything that is not a
   file-scope declaration) names a function that B defines with external
   linkage and A does not define itself — a call, or the function's
   address taken. A cycle is a strongly connected component of more than
   one node; each is reported with the edge that closes it and the reason
   for every edge (the include line, or the function named).
2. Each folder depends (as in rule 1) only on the folders below it
   (STAGES): compiler/support/ on none, so no support file includes a
   stage header; the front end (compiler/) on support only, so it prices
   nothing; graphgen/ on support only, so it knows no time; kernels/ on
   support only (a kernel's descriptor is compiler/support/kdesc.h), so
   the kernel models know no ops; runtime/ on those; runtime/trace/ on
   runtime/ too; the driver, compiler/cli/, on all.
3. One name per file: no two .c, .h, .cu, .py or .sh files under the five
   folders share a file name.
4. No source file (.c, .h, .cu, .py, .sh, .cmake) is over MAX_LINES
   (1,000) lines.
5. Every repository path a comment or a document names exists: a token
   that starts with a top-level folder (compiler/, spec/, tests/, ...) in
   a C comment, a '#' comment of CMake, Python, shell or YAML, a Python
   docstring, or anywhere in a Markdown file. Tokens holding a pattern
   (*, {}, <>, $, [], ...) are not paths.
6. No document outside the repository is cited (the patterns of OUTSIDE:
   the team's brief and style guide, its shared data folder, its
   reference notes); the repository's own design document is
   spec/design.md.
7. At most MAX_ISSUES mentions of "issue #N" in code and documents: the
   tracker is not part of the repository.
8. One name for internal headers: a header of the product is its
   folder's contract, <folder>/<folder>.h (every header of
   compiler/support/, the floor every stage includes, is public), or it
   is internal to its folder and its name ends in _int.h.
9. One prefix rule: dc_ and DC_ are the contracts'. A name an internal
   header declares (function, variable, type, tag, enum constant, macro
   but its include guard) does not start with dc_ or DC_ unless a
   contract header names it too (an opaque public type completed or
   forward-declared); the functions with external linkage one internal
   header declares share one short prefix (gg_, res_, km_), and a
   prefix belongs to one folder; a function with external linkage that
   a product file defines and no contract header declares does not start
   with dc_.
Rules 4-7 read the whole repository but test inputs, corpora, goldens and
fixtures (TEXT_SKIP), which are data (code beside them, a fuzz target or a
golden's checker, is read); rule 6 reads the data too. Rule 5 also
holds for a Markdown document named by its file name alone (x.md): some
file of the repository has that name (an upper-case stem, DOC.md, is a
placeholder).

The C reading is lexical (comments, strings and character constants
blanked; brace depth tracked), which is what the rules need: it does not
expand macros or follow #if. Python standard library only, so CI needs
nothing beyond python3.
"""

import os
import re
import sys
import tempfile

PRODUCT = ("compiler", "graphgen", "kernels", "runtime")
NAMED = PRODUCT + ("tests",)
C_EXT = (".c", ".cu")
SRC_EXT = (".c", ".h", ".cu")
NAME_EXT = (".c", ".h", ".cu", ".py", ".sh")
MAX_LINES = 1000
MAX_ISSUES = 3
# Rules 4-7 read these files; test inputs, corpora and goldens are data,
# not prose.
TEXT_EXT = (".c", ".h", ".cu", ".py", ".sh", ".cmake", ".md", ".yaml",
            ".yml")
LINE_EXT = (".c", ".h", ".cu", ".py", ".sh", ".cmake")
TEXT_SKIP = re.compile(r"^(tests/(bad|bad_cli|fuzz|data|golden|fixtures|"
                       r"trace/expected|validation/h200)/|build|"
                       r"tests/layout/check_layout\.py$)")
# README.md is the front door, rewritten on its own; it joins rules 5-7
# once it cites only the repository (drop it from PENDING then).
PENDING = ()
# A path component that stands for any name (test_NAME.c, studies/X.yaml).
PLACEHOLDER = re.compile(r"(^|/|_)(NAME|X|N|K|STUDY)(\.|/|$)")
TOP = ("compiler", "graphgen", "kernels", "runtime", "spec", "studies",
       "tests")
PATH_TOKEN = re.compile(r"(?<![\w./-])((?:%s)/[\w./*{}<>$\[\]-]*)"
                        % "|".join(TOP))
# what the self-test plants, spelled so that this file cites neither
BRIEF = "DESIGN" + ".md"
SHARED = ".." + "/shared"
NOTE = "reference" + "/gpus.md"
OUTSIDE = re.compile(r"DESIGN\.md|DESIGN §|STYLE\.md|\.\./shared\b|"
                     r"(?<![\w/])reference/[\w-]+\.md|anchor[-]notes")
ISSUE = re.compile(r"issue #\d+", re.I)
# a Markdown document named by its file name alone
BARE_MD = re.compile(r"(?<![\w./-])([\w-]+)\.md\b")

# Rule 2: each folder (the longest prefix that matches) and the folders it
# may depend on.
STAGES = {
    "compiler/support/": (),
    "compiler/": ("compiler/support/",),
    "graphgen/": ("compiler/support/",),
    "kernels/": ("compiler/support/",),
    "kernels/bench/": ("compiler/support/", "kernels/"),
    "runtime/": ("compiler/support/", "graphgen/", "kernels/"),
    "runtime/trace/": ("compiler/support/", "graphgen/", "kernels/",
                       "runtime/"),
    "compiler/cli/": ("compiler/support/", "compiler/", "graphgen/",
                      "kernels/", "runtime/", "runtime/trace/"),
}

KEYWORDS = frozenset(
    "if else for while do switch case default return sizeof break continue "
    "goto typedef struct union enum static extern const volatile inline "
    "register restrict signed unsigned void char short int long float "
    "double _Bool _Noreturn _Static_assert _Alignof _Alignas _Atomic "
    "_Thread_local _Generic __attribute__ asm __asm__ defined".split())

IDENT = re.compile(r"[A-Za-z_]\w*")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def list_files(root, folders, exts):
    """Relative paths of the files under `folders` ending in `exts`."""
    out = []
    for top in folders:
        base = os.path.join(root, top)
        for d, dirs, files in os.walk(base):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            for f in sorted(files):
                if f.endswith(exts):
                    out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(p.replace(os.sep, "/") for p in out)


def blank(text):
    """Comments, string literals and character constants replaced by
    spaces (newlines kept, so line numbers survive)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Source:
    """What the rules need from one C file: its includes, the functions it
    defines (external and static), and the names its code uses."""

    def __init__(self, text):
        self.includes = []        # (line, quoted path), from the raw text
        self.defines = {}         # name -> line (external linkage)
        self.statics = set()      # names of static functions
        self.uses = {}            # name -> first line where code names it
        self.lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        self._scan(blank(text))

    def _scan(self, code):
        # Preprocessor lines (with continuations) are taken out of the C
        # code; macro bodies count as code.
        c_lines = []
        lines = code.split("\n")
        k = 0
        while k < len(lines):
            line = lines[k]
            if line.lstrip().startswith("#"):
                start = k
                directive = line
                while directive.endswith("\\") and k + 1 < len(lines):
                    k += 1
                    directive = directive[:-1] + " " + lines[k]
                for _ in range(start, k + 1):
                    c_lines.append("")
                d = re.match(r"\s*#\s*define\s+\w+(\([^)]*\))?(.*)", directive)
                if d:
                    self._use_all(d.group(2), start + 1)
            else:
                c_lines.append(line)
            k += 1
        self._scan_c("\n".join(c_lines))

    def _use_all(self, text, line):
        for m in re.finditer(r"(?<![\w.>])([A-Za-z_]\w*)", text):
            if m.group(1) not in KEYWORDS:
                self.uses.setdefault(m.group(1), line)

    def _scan_c(self, code):
        tokens = re.finditer(r"[A-Za-z_]\w*|->|[{}();=.,\[\]]|\n", code)
        depth = 0
        line = 1
        decl = []     # file-scope tokens since the last ; or }
        linkage = 0   # open `extern "C" {` blocks: still file scope
        prev = ""
        for t in tokens:
            s = t.group(0)
            if s == "\n":
                line += 1
                continue
            if depth == 0:
                if s == "{" and [x for x, _ in decl] == ["extern"]:
                    linkage += 1
                    decl = []
                elif s == "}" and linkage and not decl:
                    linkage -= 1
                elif s == "{":
                    self._definition(decl)
                    depth = 1
                    decl = []
                elif s in (";", "}"):
                    self._initializer(decl)
                    decl = []
                else:
                    decl.append((s, line))
            else:
                if s == "{":
                    depth += 1
                elif s == "}":
                    depth -= 1
                    if depth == 0:
                        decl = []
                elif (IDENT.fullmatch(s) and s not in KEYWORDS
                      and prev not in (".", "->")):
                    self.uses.setdefault(s, line)
            prev = s

    def _definition(self, decl):
        """decl: the file-scope tokens before a `{`. A function definition
        ends `name ( ... )`; anything else (struct, enum, initializer)
        opens a brace whose contents are code like a body's."""
        toks = [s for s, _ in decl]
        if toks and toks[-1] == ")":
            level = 0
            for i in range(len(toks) - 1, -1, -1):
                if toks[i] == ")":
                    level += 1
                elif toks[i] == "(":
                    level -= 1
                    if level == 0:
                        break
            if i > 0 and IDENT.fullmatch(toks[i - 1]) and "=" not in toks:
                name = toks[i - 1]
                if name not in KEYWORDS and name != "__attribute__":
                    if "static" in toks[:i - 1]:
                        self.statics.add(name)
                    else:
                        self.defines.setdefault(name, decl[i - 1][1])
                    # Parameter lists name types, not functions used.
                    return
        self._initializer(decl)

    def _initializer(self, decl):
        """The names after `=` in a file-scope declaration are uses (a
        function's address in a table); a prototype uses nothing."""
        toks = [s for s, _ in decl]
        if "=" not in toks:
            return
        for s, ln in decl[toks.index("=") + 1:]:
            if IDENT.fullmatch(s) and s not in KEYWORDS:
                self.uses.setdefault(s, ln)


def read_sources(root, files):
    out = {}
    for p in files:
        with open(os.path.join(root, p), encoding="utf-8",
                  errors="replace") as f:
            text = f.read()
        src = Source(text)
        # Blanking hides the quoted include paths: read them from the raw
        # text.
        for ln, raw in enumerate(text.split("\n"), 1):
            m = INCLUDE.match(raw)
            if m:
                src.includes.append((ln, m.group(1)))
        out[p] = src
    return out


def node_of(path, files, own=frozenset()):
    """A .c/.cu and its own header beside it are one node: x.h, or x_int.h
    when no other .c/.cu includes it (in `own`)."""
    stem, ext = os.path.splitext(path)
    if ext == ".h":
        base = stem
        if stem.endswith("_int") and path in own:
            base = stem[:-len("_int")]
        for e in C_EXT:
            if base + e in files:
                return base
        return path
    return stem


def resolve_include(src_path, inc, files):
    for cand in (inc, os.path.normpath(
            os.path.join(os.path.dirname(src_path), inc)).replace(os.sep, "/")):
        if cand in files:
            return cand
    return None


def build_graph(root):
    files = list_files(root, PRODUCT, SRC_EXT)
    fileset = set(files)
    srcs = read_sources(root, files)
    # x_int.h that only x.c (or x.cu) of the .c files includes
    includers = {}
    for p, s in srcs.items():
        if p.endswith(C_EXT):
            for _, inc in s.includes:
                q = resolve_include(p, inc, fileset)
                if q is not None:
                    includers.setdefault(q, set()).add(os.path.splitext(p)[0])
    own = frozenset(h for h, by in includers.items()
                    if h.endswith("_int.h") and by == {h[:-len("_int.h")]})
    node = {p: node_of(p, fileset, own) for p in files}
    definers = {}   # function name -> set of nodes defining it
    local = {}      # node -> names it defines (static or not)
    for p, s in srcs.items():
        for name in s.defines:
            definers.setdefault(name, set()).add(node[p])
        local.setdefault(node[p], set()).update(s.defines, s.statics)
    edges = {}      # (a, b) -> reason
    for p, s in srcs.items():
        a = node[p]
        for ln, inc in s.includes:
            q = resolve_include(p, inc, fileset)
            if q is not None and node[q] != a:
                edges.setdefault((a, node[q]),
                                 '%s:%d includes "%s"' % (p, ln, inc))
        for name, ln in sorted(s.uses.items(), key=lambda x: x[1]):
            if name in local.get(a, ()) or name == "main":
                continue
            for b in sorted(definers.get(name, ())):
                if b != a:
                    edges.setdefault((a, b), "%s:%d uses %s()" % (p, ln, name))
    nodes = sorted(set(node.values()))
    return nodes, edges, srcs, node


def cycles(nodes, edges):
    """Strongly connected components of more than one node (Tarjan)."""
    succ = {n: [] for n in nodes}
    for a, b in sorted(edges):
        succ[a].append(b)
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        work = [(v, iter(succ[v]))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            u, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[u])
                if low[u] == index[u]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == u:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = counter[0]
                counter[0] += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(succ[w])))
            elif w in on:
                low[u] = min(low[u], index[w])

    for v in nodes:
        if v not in index:
            visit(v)
    return sorted(comps)


def one_loop(comp, edges):
    """A shortest closed walk through the component's first node."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        u = queue.pop(0)
        for (a, b) in sorted(edges):
            if a != u or b not in members:
                continue
            if b == start:
                path = [u]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                path.reverse()
                return path + [start]
            if b not in prev:
                prev[b] = u
                queue.append(b)
    return comp


def check(root):
    """Every violation in the tree at root, as a list of messages."""
    problems = []
    nodes, edges, srcs, node = build_graph(root)

    for comp in cycles(nodes, edges):
        loop = one_loop(comp, edges)
        lines = ["cycle between %s:" % ", ".join(comp)]
        for a, b in zip(loop, loop[1:]):
            lines.append("    %s -> %s  (%s)" % (a, b, edges[(a, b)]))
        problems.append("\n".join(lines))

    for (a, b), why in sorted(edges.items()):
        fa, fb = folder_of(a), folder_of(b)
        if fa != fb and fb not in STAGES.get(fa, ()):
            problems.append("%s depends on %s: %s -> %s  (%s)"
                            % (fa, fb, a, b, why))

    by_name = {}
    for p in list_files(root, NAMED, NAME_EXT):
        by_name.setdefault(os.path.basename(p), []).append(p)
    for name, paths in sorted(by_name.items()):
        if len(paths) > 1:
            problems.append("file name %s used %d times: %s"
                            % (name, len(paths), ", ".join(paths)))

    problems.extend(check_headers(root, srcs))
    problems.extend(check_text(root))
    return problems


def is_contract(path):
    """A folder's contract header: <folder>/<folder>.h, or any header of
    compiler/support/ (rule 8)."""
    d = os.path.dirname(path)
    return (path.startswith("compiler/support/")
            or os.path.basename(path) == os.path.basename(d) + ".h")


def top_level(code):
    """The file-scope text of blanked C: brace contents blanked (newlines
    kept), preprocessor lines dropped; an extern "C" { } block is file
    scope."""
    code = re.sub(r'extern\s*"\s*"\s*\{', "", code)
    out, depth, body = [], 0, False
    for ch in code:
        if ch == "{":
            if depth == 0:
                # a function body ends a statement ({ after its ")")
                body = "".join(out).rstrip().endswith(")")
            depth += 1
            out.append(" ")
        elif ch == "}":
            depth = max(depth - 1, 0)
            out.append(";" if depth == 0 and body else " ")
        else:
            out.append(ch if depth == 0 or ch == "\n" else " ")
    return "\n".join(ln for ln in "".join(out).split("\n")
                     if not ln.lstrip().startswith("#"))


def declared(text):
    """(names a header declares, its external function prototypes)."""
    code = blank(text)
    names = set(re.findall(r"^\s*#\s*define\s+(\w+)", code, re.M))
    guard = re.search(r"^\s*#\s*ifndef\s+(\w+)", code, re.M)
    if guard:
        names.discard(guard.group(1))
    names |= set(re.findall(r"\b(?:struct|union|enum)\s+(\w+)", code))
    for body in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", code):
        names |= set(re.findall(r"(?:^|,)\s*([A-Za-z_]\w*)", body))
    funcs = []
    for stmt in top_level(code).split(";"):
        words = stmt.split()
        m = re.search(r"\b([A-Za-z_]\w*)\s*\(", stmt)
        if words[:1] == ["typedef"]:
            t = re.search(r"\(\s*\*\s*(\w+)\s*\)|(\w+)\s*(\[[^]]*\])?\s*$",
                          stmt)
            if t:
                names.add(t.group(1) or t.group(2))
        elif m and m.group(1) not in KEYWORDS:
            names.add(m.group(1))
            if "static" not in words:
                funcs.append(m.group(1))
        elif words[:1] == ["extern"]:
            names |= set(re.findall(r"([A-Za-z_]\w*)\s*(?:\[[^]]*\])?\s*"
                                    r"(?:,|$)", stmt))
    return names - KEYWORDS, funcs


def check_headers(root, srcs):
    """Rules 8 and 9."""
    problems = []
    headers = [p for p in list_files(root, PRODUCT, (".h",))]
    texts = {}
    for h in headers:
        with open(os.path.join(root, h), encoding="utf-8",
                  errors="replace") as f:
            texts[h] = f.read()
    public = set()
    for h in headers:
        if is_contract(h):
            public |= declared(texts[h])[0]
    owner = {}  # prefix -> (folder, header)
    for h in headers:
        if is_contract(h):
            continue
        if not h.endswith("_int.h"):
            problems.append("%s: a header is its folder's contract (%s) or "
                            "internal, named *_int.h"
                            % (h, os.path.join(os.path.dirname(h),
                                               os.path.basename(
                                                   os.path.dirname(h))
                                               + ".h")))
            continue
        names, funcs = declared(texts[h])
        for n in sorted(names):
            if n.lower().startswith("dc_") and n not in public:
                problems.append("%s declares %s: dc_/DC_ names are the "
                                "contracts'; give it the folder's prefix"
                                % (h, n))
        prefixes = sorted({f.split("_")[0] + "_" for f in funcs
                           if "_" in f.strip("_")})
        if len(prefixes) > 1:
            problems.append("%s: its functions have %d prefixes (%s); an "
                            "internal header has one"
                            % (h, len(prefixes), ", ".join(prefixes)))
        for pre in prefixes:
            folder = folder_of(h)
            if pre in owner and owner[pre][0] != folder:
                problems.append("prefix %s is used by %s and %s; a prefix "
                                "belongs to one folder"
                                % (pre, owner[pre][1], h))
            owner.setdefault(pre, (folder, h))
    for p, s in sorted(srcs.items()):
        if not p.endswith(C_EXT):
            continue
        for name in sorted(s.defines):
            if name.startswith("dc_") and name not in public:
                problems.append("%s:%d defines %s, which no contract header "
                                "declares: an internal name takes its "
                                "folder's prefix, not dc_"
                                % (p, s.defines[name], name))
    return problems


def folder_of(path):
    """The STAGES folder a file or node belongs to (longest prefix)."""
    best = path.split("/")[0] + "/"
    for f in STAGES:
        if path.startswith(f) and len(f) > len(best):
            best = f
    return best


def text_files(root):
    """Repository files rules 4-7 read: prose and code, not test data."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".")
                         and not (d == root and x.startswith("build")))
        for f in sorted(files):
            p = os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
            prose = f.endswith(TEXT_EXT) or f == "CMakeLists.txt"
            # code in a data folder (a fuzz target, a golden's checker)
            # is code
            data = TEXT_SKIP.match(p) and not (
                p.startswith("tests/") and f.endswith(LINE_EXT)
                and not p.startswith("tests/layout/"))
            if data or p in PENDING or not prose:
                continue
            out.append(p)
    return out


def prose_of(path, text):
    """(line, text) pairs of what a file says in prose: the comments of
    code (C comments; '#' comments and Python docstrings elsewhere), all of
    a Markdown file."""
    if path.endswith(".md"):
        return list(enumerate(text.split("\n"), 1))
    out = []
    if path.endswith((".c", ".h", ".cu")):
        for m in re.finditer(r"/\*.*?\*/|//[^\n]*", text, re.S):
            ln = text.count("\n", 0, m.start()) + 1
            for k, line in enumerate(m.group(0).split("\n")):
                out.append((ln + k, line))
        return out
    for ln, line in enumerate(text.split("\n"), 1):
        i = line.find("#")
        if i >= 0:
            out.append((ln, line[i:]))
    if path.endswith(".py"):
        for m in re.finditer(r'"""(.*?)"""', text, re.S):
            ln = text.count("\n", 0, m.start()) + 1
            for k, line in enumerate(m.group(1).split("\n")):
                out.append((ln + k, line))
    return out


def repo_names(root):
    """The file names of the repository (for rule 5's bare names)."""
    out = set()
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".")
                   and not (d == root and x.startswith("build"))]
        out.update(files)
    return out


def data_files(root):
    """The test data rules 4-7 skip: rule 6 reads them."""
    out = []
    for d, dirs, files in os.walk(os.path.join(root, "tests")):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for f in sorted(files):
            p = os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
            if (TEXT_SKIP.match(p)
                    and not p.startswith("tests/layout/")
                    and (f.endswith(TEXT_EXT + (".json", ".csv", ".txt",
                                                ".stderr", ".args", ".cmd"))
                         or f == "CMakeLists.txt")):
                out.append(p)
    return out


def check_text(root):
    """Rules 4-7."""
    problems = []
    issues = []
    names = repo_names(root)
    for p in data_files(root):
        with open(os.path.join(root, p), encoding="utf-8",
                  errors="replace") as f:
            for ln, line in enumerate(f, 1):
                for m in OUTSIDE.finditer(line):
                    problems.append("%s:%d cites a document outside the "
                                    "repository: %s" % (p, ln, m.group(0)))
    for p in text_files(root):
        with open(os.path.join(root, p), encoding="utf-8",
                  errors="replace") as f:
            text = f.read()
        n = text.count("\n")
        if p.endswith(LINE_EXT) and n > MAX_LINES:
            problems.append("%s: %d lines (over %d)" % (p, n, MAX_LINES))
        seen = set()
        for ln, line in prose_of(p, text):
            if (ln, line) in seen:
                continue
            seen.add((ln, line))
            for m in OUTSIDE.finditer(line):
                problems.append("%s:%d cites a document outside the "
                                "repository: %s" % (p, ln, m.group(0)))
            for m in ISSUE.finditer(line):
                issues.append("%s:%d" % (p, ln))
            for m in BARE_MD.finditer(line):
                if (not m.group(1).isupper()
                        and m.group(1) + ".md" not in names):
                    problems.append("%s:%d names %s.md, which is no file of "
                                    "the repository" % (p, ln, m.group(1)))
            for m in PATH_TOKEN.finditer(line):
                tok = m.group(1).rstrip(".,:;)'`\"")
                if (re.search(r"[*{}<>$\[\]]|\.\.\.", tok)
                        or PLACEHOLDER.search(tok)):
                    continue
                if not os.path.exists(os.path.join(root, tok)):
                    problems.append("%s:%d names %s, which does not exist"
                                    % (p, ln, tok))
    if len(issues) > MAX_ISSUES:
        problems.append("%d mentions of an issue number (at most %d): %s"
                        % (len(issues), MAX_ISSUES, ", ".join(issues)))
    return problems


# ---- self-test --------------------------------------------------------------

CLEAN = {
    "compiler/support/support.h":
        "/* support.h */\nvoid dc_fatal(void);\n",
    "compiler/support/alloc.c":
        '/* alloc.c */\n#include "compiler/support/support.h"\n'
        "void dc_fatal(void) {}\n",
    "graphgen/graphgen.h": "/* graphgen.h */\nvoid gg_a(void);\n"
                           "typedef struct dc_g dc_g;\n",
    "graphgen/a.c":
        '/* a.c */\n#include "graphgen/graphgen.h"\n'
        '#include "compiler/support/support.h"\n'
        "static void helper(void) { dc_fatal(); }\n"
        "void gg_a(void) { helper(); gg_b(); }\n",
    "graphgen/b.c": '/* b.c */\n#include "graphgen/b_int.h"\nvoid gg_b(void) {}\n',
    # an internal header may complete a public opaque type
    "graphgen/b_int.h": "/* b_int.h */\n#ifndef DC_B_INT_H\n#define DC_B_INT_H\n"
                        "void gg_b(void);\nstruct dc_g { int x; };\n#endif\n",
    "runtime/long.c": "/* long.c - a long file. */\n" + "int x;\n" * 900,
    "spec/guide.md": "The planner is in runtime/long.c; see graphgen/.\n",
    "tests/unit/test_a.c": "int main(void) { return 0; }\n",
    # Prototypes in an extern "C" block are declarations, not uses.
    "kernels/gpu_int.h": '#ifdef __cplusplus\nextern "C" {\n#endif\n'
                         "void k_fill(void);\n"
                         "#ifdef __cplusplus\n}\n#endif\n",
    "kernels/gpu_kernels.cu": '#include "kernels/gpu_int.h"\n'
                              'extern "C" void k_fill(void) {}\n',
}

# Each plant: the files it adds or replaces, and a fragment of the report.
PLANTS = [
    ("a call cycle between two .c files",
     {"graphgen/b.c": '/* b.c */\n#include "graphgen/b_int.h"\n'
                      "void gg_b(void) { gg_a(); }\n"},
     "cycle between graphgen/a, graphgen/b"),
    ("an include cycle between two headers",
     {"kernels/x_int.h": '#include "kernels/y_int.h"\n',
      "kernels/y_int.h": '#include "kernels/x_int.h"\n'},
     "cycle between kernels/x_int.h, kernels/y_int.h"),
    ("a header whose inline code calls a file that includes it",
     {"graphgen/graphgen_int.h":
          "static inline void gg_i(void) { gg_b(); }\n",
      "graphgen/b.c": '#include "graphgen/graphgen_int.h"\n'
                      "void gg_b(void) {}\n"},
     "cycle between graphgen/b, graphgen/graphgen_int.h"),
    ("a macro in a header that names a function of its includer",
     {"compiler/support/support.h":
          "#define DC_ASSERT(c) ((c) ? (void)0 : \\\n  dc_fatal())\n"},
     "cycle between compiler/support/alloc, compiler/support/support.h"),
    ("a support file including a stage header",
     {"compiler/support/alloc.c":
          '#include "compiler/support/support.h"\n'
          '#include "graphgen/graphgen.h"\nvoid dc_fatal(void) {}\n'},
     "compiler/support/ depends on graphgen/: compiler/support/alloc -> "
     "graphgen/graphgen.h"),
    ("a support file calling a stage",
     {"compiler/support/alloc.c": "void dc_fatal(void) { gg_b(); }\n"},
     "compiler/support/ depends on graphgen/: compiler/support/alloc -> "
     "graphgen/b"),
    ("graphgen calling a kernel model",
     {"kernels/price.c": "double k_price(void) { return 1; }\n",
      "graphgen/b.c": '#include "graphgen/b_int.h"\n'
                      "void gg_b(void) { (void)k_price(); }\n"},
     "graphgen/ depends on kernels/: graphgen/b -> kernels/price"),
    ("the front end including a runtime header",
     {"runtime/runtime.h": "void rt(void);\n",
      "compiler/study.c": '#include "runtime/runtime.h"\n'},
     "compiler/ depends on runtime/: compiler/study -> runtime/runtime.h"),
    ("two files of one name",
     {"tests/bench/b.c": "int main(void) { return 0; }\n"},
     "file name b.c used 2 times: graphgen/b.c, tests/bench/b.c"),
    ("a file over 1,000 lines",
     {"runtime/long.c": "/* long.c - a long file. */\n" + "int x;\n" * 1000},
     "runtime/long.c: 1001 lines (over 1000)"),
    ("a comment naming a path that does not exist",
     {"graphgen/b.c": '/* b.c: see graphgen/gone.c */\n'
                      '#include "graphgen/b_int.h"\nvoid gg_b(void) {}\n'},
     "graphgen/b.c:1 names graphgen/gone.c, which does not exist"),
    ("a document citing the brief outside the repository",
     {"spec/guide.md": "As %s says, the planner is greedy.\n" % BRIEF},
     "spec/guide.md:1 cites a document outside the repository: " + BRIEF),
    ("a comment citing the shared data folder",
     {"tests/unit/test_a.c": "/* data in %s/data */\n" % SHARED +
                             "int main(void) { return 0; }\n"},
     "cites a document outside the repository: " + SHARED),
    ("too many issue numbers",
     {"spec/guide.md": ", ".join("issue #%d" % i for i in range(1, 5)) +
                       "\n"},
     "4 mentions of an issue number (at most 3)"),
    ("a Markdown document named that is no file of the repository",
     {"spec/guide.md": "The op counts are in op-notes.md.\n"},
     "spec/guide.md:1 names op-notes.md, which is no file"),
    ("a fuzz target (code in a data folder) naming a missing path",
     {"tests/fuzz/fuzz_a.c": "/* see graphgen/gone.c */\n"},
     "tests/fuzz/fuzz_a.c:1 names graphgen/gone.c, which does not exist"),
    ("test data citing a note outside the repository",
     {"tests/bad/gpu.yaml": "source: \"%s\"\n" % NOTE},
     "tests/bad/gpu.yaml:1 cites a document outside the repository"),
    ("a header neither a contract nor *_int.h",
     {"graphgen/util.h": "void gg_u(void);\n"},
     "graphgen/util.h: a header is its folder's contract "
     "(graphgen/graphgen.h) or internal"),
    ("an internal header declaring a dc_ name",
     {"graphgen/b_int.h": "void gg_b(void);\nvoid dc_b_help(void);\n"},
     "graphgen/b_int.h declares dc_b_help"),
    ("an internal header declaring a DC_ macro",
     {"graphgen/b_int.h": "void gg_b(void);\n#define DC_B_MAX 4\n"},
     "graphgen/b_int.h declares DC_B_MAX"),
    ("an internal header with two prefixes",
     {"graphgen/b_int.h": "void gg_b(void);\nint gb_x(int y);\n"},
     "graphgen/b_int.h: its functions have 2 prefixes (gb_, gg_)"),
    ("one prefix in two folders",
     {"runtime/emit_int.h": "void gg_emit(void);\n"},
     "prefix gg_ is used by"),
    ("a dc_ function no contract header declares",
     {"graphgen/b.c": '#include "graphgen/b_int.h"\nvoid gg_b(void) {}\n'
                      "void dc_b_extra(void) {}\n"},
     "graphgen/b.c:3 defines dc_b_extra, which no contract header"),
]


def write_tree(base, files):
    for p, text in files.items():
        full = os.path.join(base, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)


def self_test():
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, "clean")
        write_tree(clean, CLEAN)
        got = check(clean)
        if got:
            print("self-test: the clean tree was reported:\n" + "\n".join(got))
            failed += 1
        for k, (what, files, expect) in enumerate(PLANTS):
            tree = os.path.join(tmp, "plant%d" % k)
            write_tree(tree, dict(CLEAN, **files))
            got = check(tree)
            if not any(expect in g for g in got):
                print("self-test: %s not reported (wanted '%s'); got:\n%s"
                      % (what, expect, "\n".join(got) or "(nothing)"))
                failed += 1
    if failed:
        return 1
    print("self-test: the clean tree passes, %d planted violations are "
          "reported" % len(PLANTS))
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    problems = check(argv[1])
    for p in problems:
        print("layout: " + p)
    if problems:
        print("layout: %d problem(s); the rules are in %s" %
              (len(problems), os.path.relpath(__file__)))
        return 1
    print("layout: no cycles, each folder uses only the ones below it, one "
          "name per file, no file over %d lines, every path named exists, "
          "nothing outside the repository cited, internal headers *_int.h "
          "with their folder's prefix" % MAX_LINES)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
