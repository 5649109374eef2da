#!/usr/bin/env python3
"""The HTML report's end-to-end checks (tests/report.cmake, spec/report.md).

Standard library only. Usage: check_report.py MODE DLRMC SRC OUT [args]

  check    for a few studies: `run --format html` is well-formed (balanced
           tags with html.parser, and XML with xml.etree), self-contained
           (nothing fetched), every SVG number finite; the main chart's
           marks carry the CSV's numbers (data-value, the row's e2e_ms) and
           sit where a linear axis puts them; each breakdown adds up to
           the row's e2e_ms; the per-rank bars carry --per-rank's emb_ms
           and memory; `report` of the JSON lines draws the same SVG.
  golden   the SVG of two small studies against tests/golden/report/*.svg,
           byte for byte (DC_REGEN_GOLDEN=1 rewrites them).
  bad      reports of tables dlrmc did not write: exit 1, the file and
           the column named on stderr, nothing written.
  chromium the report of studies/paper-configs.yaml rendered by headless
           Chromium to a PNG that is not blank (distinct pixel values,
           read with zlib); exit 77 (skipped) without Chromium.
  shot     STUDY PNG [W,H]: the README's screenshot, made as `chromium`
           makes its PNG, of `dlrmc run STUDY --format html` run from SRC.
"""
import csv
import html.parser
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

VOID = {"meta", "br", "img", "hr", "input", "link", "col", "area", "base",
        "wbr", "source", "track", "embed", "param"}


def run(dlrmc, *args, ok=True):
    p = subprocess.run([dlrmc, *args], capture_output=True, text=True,
                       env=dict(os.environ, DLRMC_NO_PROGRESS="1"))
    if ok and p.returncode != 0:
        sys.exit(f"dlrmc {' '.join(args)} failed ({p.returncode}):\n"
                 f"{p.stderr}")
    return p


class Balanced(html.parser.HTMLParser):
    """Balanced tags: every element closed, in order (void ones excepted)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []

    def handle_starttag(self, tag, attrs):
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1][0] != tag:
            self.errors.append(f"</{tag}> at {self.getpos()} closes "
                               f"{self.stack[-1] if self.stack else None}")
            return
        self.stack.pop()


NUM_ATTRS = {"x", "y", "width", "height", "x1", "y1", "x2", "y2", "cx",
             "cy", "r", "data-value"}


def finite(text, where):
    v = float(text)
    if not math.isfinite(v):
        raise AssertionError(f"{where}: non-finite {text!r}")
    return v


def well_formed(path):
    text = open(path, encoding="utf-8").read()
    p = Balanced()
    p.feed(text)
    p.close()
    assert not p.errors, f"{path}: {p.errors[:3]}"
    assert not p.stack, f"{path}: unclosed {p.stack[:3]}"
    root = ET.fromstring(text.replace("<!DOCTYPE html>", "", 1))
    # self-contained: no external fetch of any kind
    for bad in ("src=", "http://", "https://", "@import", "<link"):
        rest = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert bad not in rest, f"{path}: external reference {bad!r}"
    n = 0
    for el in root.iter():
        tag = el.tag.split("}")[-1]
        for k, v in el.attrib.items():
            if k in NUM_ATTRS:
                finite(v, f"{path} <{tag} {k}>")
                n += 1
            elif k == "points":
                for xy in v.split():
                    for c in xy.split(","):
                        finite(c, f"{path} <{tag} points>")
                        n += 1
            elif k == "viewBox":
                for c in v.split():
                    finite(c, f"{path} viewBox")
    assert n > 0, f"{path}: no SVG coordinates"
    return root, text


def svg_elems(root):
    for el in root.iter():
        yield el.tag.split("}")[-1], el


def section(root, sid):
    for el in root.iter():
        if el.tag.split("}")[-1] == "section" and el.get("id") == sid:
            return el
    return None


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def close(a, b, rel=1e-6, abs_=0.0):
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def check_study(dlrmc, src, out, study):
    name = os.path.splitext(os.path.basename(study))[0]
    h = os.path.join(out, name + ".html")
    c = os.path.join(out, name + ".csv")
    j = os.path.join(out, name + ".jsonl")
    run(dlrmc, "run", study, "--format", "html", "-o", h)
    run(dlrmc, "run", study, "-o", c)
    run(dlrmc, "run", study, "-o", j)
    root, text = well_formed(h)
    rows = read_csv(c)
    jsonl = [__import__("json").loads(l) for l in open(j) if l.strip()]
    e2e = [float(r["detail"]["e2e_ms"]) for r in jsonl]
    # the main chart's marks: their data-value is the row's e2e_ms, and
    # their vertical position a linear function of it
    main = section(root, "main")
    marks = [el for _, el in svg_elems(main)
             if el.get("data-row") is not None and el.get("data-value")]
    assert marks, f"{name}: the main chart has no marks"
    pos = []
    for el in marks:
        i = int(el.get("data-row"))
        v = float(el.get("data-value"))
        want = float(rows[i]["e2e_ms"]) if "e2e_ms" in rows[i] else e2e[i]
        assert close(v, want, abs_=1e-9), \
            f"{name}: row {i} drawn at {v}, the table says {want}"
        tag = el.tag.split("}")[-1]
        cls = el.get("class") or ""
        if tag == "circle":
            pos.append((v, float(el.get("cy"))))
        elif tag == "rect" and cls.startswith("pt "):
            pos.append((v, float(el.get("y")) + 3.3))  # a square mark
        elif tag == "rect" and v >= 0:
            pos.append((v, float(el.get("y"))))  # a bar's top
    # (a polygon's centre is no attribute: its value is checked only)
    assert len(pos) >= 2, f"{name}: too few marks to check the axis"
    (v0, y0), (v1, y1) = min(pos), max(pos)
    assert v1 > v0, f"{name}: every mark has one value"
    k = (y1 - y0) / (v1 - v0)
    assert k < 0, f"{name}: larger values drawn lower"
    for v, y in pos:
        assert abs(y0 + k * (v - v0) - y) < 0.25, \
            f"{name}: a mark at y={y} for {v} is off the axis"
    # breakdowns add up to e2e_ms
    bd = section(root, "breakdown")
    segs = {}
    for tag, el in svg_elems(bd):
        if tag == "rect" and (el.get("class") or "").startswith("seg ") \
                and el.get("data-row") is not None:
            segs.setdefault(int(el.get("data-row")), []).append(
                float(el.get("data-value")))
    assert segs, f"{name}: no breakdown bars"
    for i, vs in segs.items():
        assert len(vs) == 4, f"{name}: row {i} has {len(vs)} segments"
        assert abs(sum(vs) - e2e[i]) <= 3e-4, \
            f"{name}: row {i}'s breakdown {vs} adds up to {sum(vs)}, " \
            f"not e2e_ms {e2e[i]}"
    # per-rank bars carry --per-rank's numbers
    rk = section(root, "ranks")
    bars = [el for _, el in svg_elems(rk)] if rk is not None else []
    bars = [el for el in bars if el.get("data-rank") is not None]
    if any(len(r["detail"].get("ranks", [])) > 1 for r in jsonl):
        assert bars, f"{name}: points on several GPUs but no per-rank bars"
        pr = os.path.join(out, name + "-ranks.csv")
        run(dlrmc, "run", study, "--per-rank", "-o", pr)
        per = read_csv(pr)
        n_ranks = [max(1, len(r["detail"].get("ranks", []))) for r in jsonl]
        first = [sum(n_ranks[:i]) for i in range(len(n_ranks))]
        for el in bars:
            i, k = int(el.get("data-row")), int(el.get("data-rank"))
            row = per[first[i] + k]
            col = "mem_gib" if "mem" in el.get("class") else "emb_ms"
            assert close(float(el.get("data-value")), float(row[col]),
                         abs_=1e-9), f"{name}: rank {k} of row {i}: {col}"
            if "crit" in el.get("class"):
                assert k == jsonl[i]["detail"]["critical_rank"]
    # the saved JSON lines report draws the same charts
    h2 = os.path.join(out, name + "-report.html")
    run(dlrmc, "report", j, "-o", h2, "--title", name)
    assert svgs(open(h2).read()) == svgs(text), \
        f"{name}: `report` of the JSON lines draws other charts than `run`"
    # a CSV report: well-formed too
    h3 = os.path.join(out, name + "-csv.html")
    run(dlrmc, "report", c, "-o", h3)
    well_formed(h3)
    print(f"ok {name}: {len(marks)} marks, {len(segs)} breakdowns, "
          f"{len(bars)} rank bars")


def svgs(text):
    return "\n".join(re.findall(r"<svg.*?</svg>", text, re.S))


def mode_check(dlrmc, src, out):
    for s in ("gpu-generations", "paper-configs", "sharding-balance",
              "capacity-planning", "batch-scaling", "dcnv2-precision"):
        check_study(dlrmc, src, out, os.path.join(src, "studies",
                                                  s + ".yaml"))


def mode_golden(dlrmc, src, out):
    regen = os.environ.get("DC_REGEN_GOLDEN") == "1"
    bad = []
    for s in ("gpu-generations", "sharding-balance"):
        h = os.path.join(out, s + "-golden.html")
        run(dlrmc, "run", os.path.join(src, "studies", s + ".yaml"),
            "--format", "html", "-o", h)
        got = svgs(open(h, encoding="utf-8").read()) + "\n"
        g = os.path.join(src, "tests", "golden", "report", s + ".svg")
        if regen:
            with open(g, "w", encoding="utf-8") as f:
                f.write(got)
            print(f"rewrote {g}")
            continue
        if not os.path.exists(g) or open(g, encoding="utf-8").read() != got:
            bad.append(g)
            with open(os.path.join(out, s + ".svg"), "w") as f:
                f.write(got)
    if bad:
        sys.exit(f"the SVG differs from {bad} (got: {out}/*.svg); if the "
                 "change is intended, DC_REGEN_GOLDEN=1 ctest -R report_golden")
    print("ok: SVG goldens")


def expect_error(dlrmc, out, name, content, words):
    path = os.path.join(out, name)
    with open(path, "w") as f:
        f.write(content)
    dst = os.path.join(out, name + ".html")
    if os.path.exists(dst):
        os.remove(dst)
    p = run(dlrmc, "report", path, "-o", dst, ok=False)
    assert p.returncode == 1, f"{name}: exit {p.returncode}\n{p.stderr}"
    for w in words:
        assert w in p.stderr, f"{name}: '{w}' not in:\n{p.stderr}"
    assert not os.path.exists(dst), f"{name}: a report was written"
    leftovers = [f for f in os.listdir(out) if f.startswith(name + ".html")]
    assert not leftovers, f"{name}: left {leftovers}"


def mode_bad(dlrmc, src, out):
    expect_error(dlrmc, out, "foreign.csv", "name,age\r\nann,3\r\n",
                 ["foreign.csv", "'name'", "neither a dlrmc metric"])
    expect_error(dlrmc, out, "ranks.csv",
                 "sharding.plan,rank,e2e_ms\r\nauto,0,1.5\r\n",
                 ["ranks.csv", "'rank'", "per-rank"])
    expect_error(dlrmc, out, "no_e2e.csv",
                 "system.gpu,gpu_util\r\nB200,0.5\r\n",
                 ["no_e2e.csv", "'e2e_ms'"])
    expect_error(dlrmc, out, "nan.csv",
                 "system.gpu,e2e_ms\r\nB200,nan\r\n",
                 ["nan.csv:2:", "'nan'", "e2e_ms", "not a number from 0"])
    expect_error(dlrmc, out, "short.csv",
                 "system.gpu,e2e_ms\r\nB200\r\n", ["short.csv:2:"])
    expect_error(dlrmc, out, "empty.csv", "system.gpu,e2e_ms\r\n",
                 ["empty.csv", "no rows"])
    expect_error(dlrmc, out, "bad.jsonl",
                 '{"system.gpu":"B200","e2e_ms":1}\n{"system.gpu":\n',
                 ["bad.jsonl:2:", "not a JSON object"])
    expect_error(dlrmc, out, "cols.jsonl",
                 '{"system.gpu":"B200","e2e_ms":1}\n'
                 '{"system.gpu":"B200","gpu_util":1}\n',
                 ["cols.jsonl:2:", "'gpu_util'"])
    expect_error(dlrmc, out, "huge.jsonl",
                 '{"system.gpu":"B200","e2e_ms":1e999}\n',
                 ["huge.jsonl:1:", "not a number from 0"])
    # finite, but past the figures' range (their span overflows): refused
    # where read, never drawn as NaN ("-nan ms" ticks)
    expect_error(dlrmc, out, "vast.csv",
                 "system.gpu,e2e_ms\r\nB200,1.7e308\r\nH100,1\r\n",
                 ["vast.csv:2:", "not a number from 0 to 1e30"])
    expect_error(dlrmc, out, "span.csv",
                 "system.gpu,e2e_ms\r\nB200,1e308\r\nH100,-1e308\r\n",
                 ["span.csv:2:", "span.csv:3:", "not a number from 0 to 1e30"])
    expect_error(dlrmc, out, "span.jsonl",
                 '{"system.gpu":"B200","e2e_ms":1e308}\n'
                 '{"system.gpu":"H100","e2e_ms":-1e308}\n',
                 ["span.jsonl:1:", "span.jsonl:2:", "not a number from 0"])
    # a Latin-1 table: the page stays valid UTF-8 (U+FFFD for bad bytes)
    latin = os.path.join(out, "latin1.csv")
    with open(latin, "wb") as f:
        f.write(b"system.gpu,e2e_ms\r\ncaf\xe9,1.5\r\nH100\x01,2\r\n")
    run(dlrmc, "report", latin, "-o", latin + ".html")
    with open(latin + ".html", "rb") as f:
        page = f.read().decode("utf-8")  # raises on invalid UTF-8
    assert "caf\ufffd" in page and "\x01" not in page, "latin1 not replaced"
    # and a good one is written, its texts escaped
    ok = os.path.join(out, "ok.csv")
    odd = "<b>&'x\""
    with open(ok, "w") as f:
        f.write("system.gpu,e2e_ms,fits\r\n")
        f.write('"' + odd.replace('"', '""') + '",1.5,true\r\n')
        f.write("H100,2,false\r\n")
    title = '<i>a & "b"</i>'
    run(dlrmc, "report", ok, "-o", ok + ".html", "--title", title)
    root, _ = well_formed(ok + ".html")
    h1 = [el for el in root.iter() if el.tag == "h1"]
    assert h1 and h1[0].text == title, f"title {h1[0].text!r}"
    cells = [el.text for el in root.iter() if el.tag == "td"]
    assert odd in cells, f"cells {cells}"
    unfit = [el for el in root.iter()
             if el.tag == "tr" and el.get("class") == "unfit"]
    assert len(unfit) == 1, "the point that does not fit is not marked"
    oom = [el for el in root.iter() if el.get("data-fits") == "false"]
    assert oom and all(el.get("data-value") is None for el in oom), \
        "a point that does not fit is drawn as a time"
    print("ok: bad inputs refused, nothing written")


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def screenshot(dlrmc, study, html_path, png, size="1100,1500"):
    run(dlrmc, "run", study, "--format", "html", "-o", html_path)
    shoot(html_path, png, size)


def shoot(html_path, png, size):
    exe = chromium()
    subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--force-device-scale-factor=1",
                    f"--window-size={size}", f"--screenshot={png}",
                    "file://" + os.path.abspath(html_path)],
                   capture_output=True, timeout=120, check=True)


def png_pixels(path):
    """The distinct pixel values of an 8-bit RGB(A) PNG (zlib, unfiltered)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "8-bit RGB(A) only"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    seen = set()
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        if y % 4 == 0:
            seen.update(bytes(line[i:i + bpp]) for i in range(0, stride,
                                                              bpp * 2))
        prev = line
    return w, h, seen


def mode_chromium(dlrmc, src, out):
    if not chromium():
        print("skipped: Chromium is not installed (Debian: apt-get install "
              "chromium); the report's browser check needs it")
        sys.exit(77)
    png = os.path.join(out, "paper-configs.png")
    if os.path.exists(png):
        os.remove(png)
    screenshot(dlrmc, os.path.join(src, "studies", "paper-configs.yaml"),
               os.path.join(out, "paper-configs-chromium.html"), png)
    w, h, seen = png_pixels(png)
    assert (w, h) == (1100, 1500), f"{png}: {w}x{h}"
    # a blank page has one value; text alone a few dozen (antialiasing);
    # the charts' colours and patterns bring hundreds
    assert len(seen) >= 100, f"{png}: only {len(seen)} distinct pixels"
    print(f"ok: {png} {w}x{h}, {len(seen)} distinct pixel values")


def main():
    mode, dlrmc, src, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    if mode == "shot":
        # run from the source tree with relative names, so that the page
        # shows the command a reader types: dlrmc run studies/X.yaml
        # --format html -o X.html
        study, png = sys.argv[5], sys.argv[6]
        name = os.path.splitext(os.path.basename(study))[0] + ".html"
        p = subprocess.run([os.path.abspath(dlrmc), "run",
                            os.path.relpath(study, src), "--format", "html",
                            "-o", name], cwd=src, capture_output=True,
                           text=True)
        if p.returncode != 0:
            sys.exit(p.stderr)
        page = os.path.join(out, name)
        shutil.move(os.path.join(src, name), page)
        shoot(page, png, sys.argv[7] if len(sys.argv) > 7 else "1000,1300")
        return
    {"check": mode_check, "golden": mode_golden, "bad": mode_bad,
     "chromium": mode_chromium}[mode](dlrmc, src, out)


if __name__ == "__main__":
    main()
