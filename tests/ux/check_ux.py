#!/usr/bin/env python3
"""What a new user trips over, checked end to end (spec/multi-gpu.md,
spec/study.md, spec/report.md): one check per ctest, named on the command
line.

    check_ux.py DLRMC CHECK

Each check runs dlrmc as a user would and fails with the command, its
output and what was expected. Inputs are the files beside this script.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DLRMC = None


def fail(msg, r=None):
    sys.stderr.write("FAIL: %s\n" % msg)
    if r is not None:
        sys.stderr.write("$ %s\nrc=%d\n--- stdout\n%s\n--- stderr\n%s\n" % (
            " ".join(r.args), r.returncode, r.stdout[-4000:],
            r.stderr[-4000:]))
    sys.exit(1)


def run(*args, rc=0, env=None):
    e = dict(os.environ)
    e["DLRMC_NO_PROGRESS"] = "1"
    if env:
        e.update(env)
    r = subprocess.run([DLRMC] + list(args), capture_output=True, text=True,
                       env=e, timeout=120)
    if rc is not None and r.returncode != rc:
        fail("exit status %d, expected %d" % (r.returncode, rc), r)
    return r


def here(name):
    return os.path.join(HERE, name)


def csv_rows(text):
    lines = [l for l in text.replace("\r\n", "\n").split("\n") if l]
    head = lines[0].split(",")
    return [dict(zip(head, l.split(","))) for l in lines[1:]]


# ---- 1. host layout --------------------------------------------------------

def check_host_layout():
    study = here("h100x64.yaml")
    r = run("run", study)
    want = "assumed 8 hosts × 8 GPUs"
    if r.stderr.count(want) != 1:
        fail("a bare system.gpus: 64 must say once on stderr '%s'" % want, r)
    bare = csv_rows(r.stdout)[0]
    r2 = run("run", study, "-D", "system.gpus_per_host=8")
    if "assumed" in r2.stderr:
        fail("nothing is assumed when gpus_per_host is written", r2)
    if csv_rows(r2.stdout)[0]["e2e_ms"] != bare["e2e_ms"]:
        fail("gpus: 64 must be priced as 8 hosts of 8 (the H100's catalog "
             "host size): %s vs %s" % (bare["e2e_ms"],
                                       csv_rows(r2.stdout)[0]["e2e_ms"]))
    one = run("run", study, "-D", "system.gpus_per_host=64")
    if csv_rows(one.stdout)[0]["e2e_ms"] == bare["e2e_ms"]:
        fail("one 64-GPU host must differ from 8 hosts of 8", one)
    # once per run, not once per point
    r = run("run", study, "-D", "system.gpus=16,32,64")
    if r.stderr.count("assumed") != 1:
        fail("a sweep over bare GPU counts warns once", r)
    # the capacity search lays its counts out by the same rule
    cap = run("run", here("capacity.yaml"), "-D", "capacity.gpus=[64]",
              "-D", "capacity.target_step_ms=1000")
    if "gpus_per_host" not in cap.stderr:
        fail("the capacity search says it assumed the host size", cap)
    row = csv_rows(cap.stdout)[0]
    if (row["hosts"], row["gpus_per_host"]) != ("8", "8"):
        fail("capacity lays 64 H100s out as 8 × 8", cap)
    if abs(float(row["e2e_ms"]) - float(bare["e2e_ms"])) > 1e-3:
        fail("the sweep (%s) and the capacity search (%s) price 64 H100s "
             "alike" % (bare["e2e_ms"], row["e2e_ms"]), cap)
    # the headers name the layout
    md = run("run", study, "--format", "md")
    if "8 hosts × 8 GPUs" not in md.stdout.split("\n")[0]:
        fail("the Markdown table's caption names hosts × GPUs", md)
    ex = run("explain", study)
    if "(8 hosts × 8 GPUs)" not in ex.stdout.split("\n")[1]:
        fail("explain's header names hosts × GPUs", ex)
    gr = run("graph", study)
    if "# ranks 64 (8 hosts × 8 GPUs)" not in gr.stdout:
        fail("graph's header names hosts × GPUs", gr)
    # the catalog says each GPU's host size
    g = run("gpus", "T4")
    if "host                   4 GPUs" not in g.stdout:
        fail("dlrmc gpus NAME shows the host size (T4: 4)", g)
    # a bare host count is hosts of the catalog's size too, said once
    hs = run("run", here("h100x8hosts.yaml"))
    if hs.stderr.count("assumed 8 hosts × 8 GPUs") != 1:
        fail("a bare system.hosts: 8 must say once it assumed 8 GPUs a host",
             hs)
    if csv_rows(hs.stdout)[0]["e2e_ms"] != bare["e2e_ms"]:
        fail("hosts: 8 of H100 must be the 64 GPUs of gpus: 64", hs)
    # an 8-GPU board's NVLink ends at its host: 8 H100s as two hosts of 4
    # talk over the NICs and are slower than one host of 8
    two = run("run", study, "-D", "system.gpus=8", "-D",
              "system.gpus_per_host=4", "-D", "training.batch_size=8192")
    one8 = run("run", study, "-D", "system.gpus=8", "-D",
               "system.gpus_per_host=8", "-D", "training.batch_size=8192")
    if not (float(csv_rows(two.stdout)[0]["comm_ms"]) >
            float(csv_rows(one8.stdout)[0]["comm_ms"])):
        fail("two hosts of 4 H100s must pay the NICs one host of 8 does not",
             two)
    # a count that is no whole number of hosts is refused, with the fix
    bad = run("check", study, "-D", "system.gpus=12", rc=1)
    if ("not a whole number" not in bad.stderr or
            "gpus_per_host" not in bad.stderr):
        fail("gpus: 12 on 8-GPU hosts is an error naming gpus_per_host", bad)


# ---- 2. points that do not fit ---------------------------------------------

def check_fits():
    demo = "studies/paper-configs.yaml"
    r = run("run", demo, "--format", "jsonl")
    unfit = r.stdout.count('"fits":false')
    if unfit == 0:
        fail("the demo study has points that do not fit", r)
    want = "%d of 12 points do not fit in GPU memory" % unfit
    if want not in r.stderr:
        fail("stderr must say '%s'" % want, r)
    md = run("run", demo, "--format", "md")
    rows = [l for l in md.stdout.split("\n") if l.startswith("| ")][1:]
    marked = [l for l in rows if l.startswith("| \u2717 ")]
    if len(marked) != unfit:
        fail("Markdown marks the %d rows that do not fit (%d marked)" %
             (unfit, len(marked)), md)
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "r.html")
        h = run("run", demo, "-o", out)
        html = open(out, encoding="utf-8").read()
        if html.count('<tr class="unfit">') != unfit:
            fail("the HTML table marks the %d rows that do not fit" % unfit,
                 h)
    ok = run("run", here("h100x64.yaml"))
    if "do not fit" in ok.stderr or "does not fit" in ok.stderr:
        fail("nothing is said when every point fits", ok)


def check_unitless_bytes():
    for key in ("hbm", "l2"):
        with tempfile.TemporaryDirectory() as t:
            gpu = os.path.join(t, "gpu.yaml")
            text = open(here("bad_hbm.yaml")).read()
            if key == "l2":
                text = text.replace("hbm: 80", "hbm: 80GiB").replace(
                    "l2: 50MiB", "l2: 50")
            open(gpu, "w").write(text)
            r = run("run", here("h100x64.yaml"), "-D", "system.gpu=" + gpu,
                    "-D", "system.gpus_per_host=8", rc=1)
            want = "'%s' is %s with no unit" % (key, "80" if key == "hbm"
                                               else "50")
            if want not in r.stderr or "gpu.yaml:" not in r.stderr:
                fail("a size without a unit is an error at its line: '%s'"
                     % want, r)


# ---- 3. swept keys are columns ----------------------------------------------

def check_swept_columns():
    demo = "studies/paper-configs.yaml"
    r = run("run", demo, "-D", "system.gpu=V100,A100-SXM4-80GB",
            "-D", "training.precision=fp32")
    head = r.stdout.split("\r\n")[0].split(",")
    if head[0] != "system.gpu":
        fail("a key swept with -D is a column, first, even though "
             "output.columns leaves it out", r)
    if "training.precision" in head:
        fail("a -D of one value sweeps nothing and adds no column", r)
    rows = csv_rows(r.stdout)
    keys = [tuple(v for k, v in row.items() if "." in k) for row in rows]
    if len(set(keys)) != len(keys):
        fail("every row is told apart by its swept columns", r)


# ---- 4. the progress bar on a terminal -------------------------------------

def render(text):
    """The lines a terminal shows for `text`: CR returns to column 0, ESC[K
    erases to the end of the line, LF starts a new line."""
    lines, cur, col = [], [], 0
    i = 0
    while i < len(text):
        ch = text[i]
        if text.startswith("\x1b[K", i):
            del cur[col:]
            i += 3
            continue
        if ch == "\r":
            col = 0
        elif ch == "\n":
            lines.append("".join(cur).rstrip())
            cur, col = [], 0
        else:
            if col < len(cur):
                cur[col] = ch
            else:
                cur.append(ch)
            col += 1
        i += 1
    if cur:
        lines.append("".join(cur).rstrip())
    return lines


def on_terminal(args):
    """Runs dlrmc with stdout and stderr on one pseudo-terminal."""
    import pty
    import select
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.pop("DLRMC_NO_PROGRESS", None)
        os.environ.pop("NO_COLOR", None)
        os.execv(DLRMC, [DLRMC] + args)
    out = b""
    while True:
        try:
            ready, _, _ = select.select([fd], [], [], 60)
            if not ready:
                break
            b = os.read(fd, 65536)
        except OSError:
            break
        if not b:
            break
        out += b
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8")


def check_progress():
    args = ["run", "studies/paper-configs.yaml", "-D",
            "training.batch_size=512,1024,2048,4096,8192,16384",
            "--jobs", "2"]
    rc, text = on_terminal(args)
    if rc != 0:
        fail("run on a terminal exits 0, not %d:\n%s" % (rc, text))
    lines = render(text)
    bars = [l for l in lines if re.search(r"\[[# ]+\] +\d+%", l)]
    if not bars:
        fail("no progress bar on a terminal:\n%r" % text)
    for l in lines:
        if "points" in l and ("," in l.split("points")[0] or "|" in l):
            fail("the progress bar shares a line with the table: %r" % l)
    header = [l for l in lines if l.startswith("model.preset,")]
    if len(header) != 1:
        fail("the CSV header is on a line of its own:\n%r" % lines)
    if not re.search(r"18/18 points +[0-9.e+]+ points/s +in [0-9hms]+$",
                     bars[-1]):
        fail("the last bar gives the rate and the time taken: %r" % bars[-1])
    if "ETA" not in text:
        fail("the bar gives the time left while it runs:\n%r" % text)


def check_huge_sweep():
    p = subprocess.Popen([DLRMC, "run", here("huge.yaml")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    try:
        first = p.stderr.readline()
    finally:
        p.kill()
        p.wait()
    if "10000000000 points" not in first or "warning" not in first:
        fail("a sweep of 10^10 points is warned about before it starts: "
             "%r" % first)


# ---- 7. replay's help -------------------------------------------------------

def check_replay_help():
    h = run("help", "replay")
    text = " ".join(h.stdout.split())
    for want in ("`self` when the Kineto traces hold GPU activity",
                 "paper-v100 with no Kineto trace or ones recorded on the "
                 "CPU only"):
        if want not in text:
            fail("replay's help says: %s" % want, h)
    # ... and the code does what it says
    f = "tests/fixtures/traces/"
    cases = [([f + "dcn_lowrank.et.json.gz", f + "dcn_lowrank.kineto.json.gz"],
              "overheads: paper-v100"),  # a CPU run's Kineto trace
             ([f + "tf32_pair.et.json", f + "tf32_pair.kineto.json"],
              "overheads: self"),         # a GPU run's
             ([f + "tf32_pair.et.json"], "overheads: paper-v100")]
    for args, want in cases:
        r = run("replay", *args, "--gpu", "H100")
        if want not in r.stdout:
            fail("replay %s reports '%s'" % (" ".join(args), want), r)


# ---- 9. make demo -----------------------------------------------------------

def check_make_demo():
    """`make demo` with cmake replaced by a stand-in that prints 500 lines
    (tests/ux/fake_cmake.sh): the build's output goes to a log, the table
    is what is shown; a failing build shows the log's tail."""
    fake = here("fake_cmake.sh")
    with tempfile.TemporaryDirectory() as t:
        env = dict(os.environ, DLRMC=DLRMC, DLRMC_NO_PROGRESS="1")
        env.pop("MAKEFLAGS", None)
        env.pop("MFLAGS", None)
        base = ["make", "--no-print-directory", "demo", "SKIP_DEPS=1",
                "CMAKE=" + fake, "BUILD=" + t]
        r = subprocess.run(base, capture_output=True, text=True, env=env,
                           timeout=120)
        out = r.stdout + r.stderr
        if r.returncode != 0:
            fail("make demo exits 0", r)
        if "noise" in out:
            fail("make demo shows no build output when the build works", r)
        table = [l for l in r.stdout.split("\n") if l.startswith("|")]
        other = [l for l in r.stdout.split("\n")
                 if l and not l.startswith("|")]
        if len(table) != 14 or len(other) > 3:
            fail("make demo shows the table (14 lines) and at most 3 "
                 "others, not %d and %d" % (len(table), len(other)), r)
        if "noise499" not in open(os.path.join(t, "build.log")).read():
            fail("the build's output is kept in BUILD/build.log", r)
        env["FAKE_CMAKE_FAIL"] = "1"
        r = subprocess.run(base, capture_output=True, text=True, env=env,
                           timeout=120)
        out = r.stdout + r.stderr
        if r.returncode == 0:
            fail("make demo fails when the build does", r)
        if ("error: the build broke here" not in out or
                "build.log" not in out or "noise0.o" in out):
            fail("a failed build shows the log's tail and names the log", r)


# ---- 6. the capacity curve ---------------------------------------------------

def check_capacity_curve():
    r = run("run", here("capacity.yaml"))
    rows = csv_rows(r.stdout)
    counts = [row["gpus"] for row in rows]
    if counts != ["8", "16", "32", "64"]:
        fail("the capacity search shows every count it tried: %s" % counts,
             r)
    for row in rows:
        if not row["e2e_ms"] or row["fits"] not in ("true", "false"):
            fail("each count shows e2e_ms and fits", r)
    answers = [row for row in rows if row["answer"] == "true"]
    if len(answers) != 1:
        fail("exactly one row is the answer", r)
    first = next(row for row in rows if row["meets_target"] == "true")
    if answers[0] is not first:
        fail("the answer is the smallest count that meets the target", r)
    # -D sets capacity.* keys like any other key
    r = run("run", here("capacity.yaml"), "-D", "capacity.gpus=[16]",
            "-D", "capacity.gpu=[H100, A100-SXM4-80GB]",
            "-D", "capacity.target_step_ms=1000",
            "-D", "capacity.gpus_per_host=4")
    rows = csv_rows(r.stdout)
    got = [(x["gpu"], x["gpus"], x["hosts"], x["answer"]) for x in rows]
    if got != [("H100-SXM5-80GB", "16", "4", "true"),
               ("A100-SXM4-80GB", "16", "4", "true")]:
        fail("-D capacity.* keys are applied: %s" % got, r)
    if "gpus_per_host in the GPU catalog" in r.stderr or \
            "capacity without" in r.stderr:
        fail("nothing is assumed when capacity.gpus_per_host is given", r)


# ---- 5. the HTML report -------------------------------------------------------

def html_of(*args):
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "r.html")
        r = run("run", *args, "-o", out)
        return r, open(out, encoding="utf-8").read()


def check_html():
    import html as htmllib
    # the command line keeps every -D value
    r, page = html_of("studies/paper-configs.yaml", "-D",
                      "training.batch_size=512,1024", "-D",
                      "system.gpu=A100-SXM4-80GB")
    cmd = re.search(r"<dt>command</dt><dd><code>(.*?)</code>", page)
    if not cmd or ("-D training.batch_size=512,1024" not in
                   htmllib.unescape(cmd.group(1)) or
                   "-D system.gpu=A100-SXM4-80GB" not in
                   htmllib.unescape(cmd.group(1))):
        fail("the report's command line keeps the -D values: %s" %
             (cmd.group(1) if cmd else None), r)
    # the table scrolls in its own box, not the page
    if not re.search(r'<div class="scroll">\s*<table class="sortable">',
                     page) or not re.search(r"\.scroll\{overflow:auto", page):
        fail("the table sits in a box that scrolls by itself", r)
    # slanted bar labels never overlap and fit in their chart
    r, page = html_of("studies/paper-configs.yaml", "-D",
                      "system.gpu=" + ",".join(GPUS), "-D",
                      "training.batch_size=2048")
    svgs = re.findall(r'<svg[^>]*viewBox="0 0 [0-9.]+ ([0-9.]+)"(.*?)</svg>',
                      page, re.S)
    slanted = 0
    for h, body in svgs:
        labels = re.findall(r'<text x="([0-9.]+)" y="([0-9.]+)"[^>]*'
                            r'rotate\((-?[0-9.]+) [^>]*>(?:<title>[^<]*'
                            r'</title>)?([^<]*)</text>', body)
        labels = [l for l in labels if l[2] != "-90"]
        xs = [float(l[0]) for l in labels]
        for (x, y, ang, text), nx in zip(labels, xs[1:] + [None]):
            slanted += 1
            sin = abs(__import__("math").sin(__import__("math").radians(
                float(ang))))
            if nx is not None and (nx - float(x)) * sin < 15:
                fail("slanted labels %r and the next are %.1f px apart "
                     "(< 15)" % (text, (nx - float(x)) * sin))
            bottom = float(y) + len(htmllib.unescape(text)) * 6 * sin
            if bottom > float(h):
                fail("label %r ends at y=%.0f, below its chart (%s)" %
                     (text, bottom, h))
    if slanted < 10:
        fail("17 GPU names under their bars are slanted (%d found)" %
             slanted, r)
    # every k-th in words
    r, page = html_of(here("h100x64.yaml"), "-D",
                      "training.batch_size=" + ",".join(
                          str(1024 * i) for i in range(1, 131)))
    if "-th" in page or "Every 3rd of 130 points" not in page:
        fail("decimation notes read 'Every 3rd of 130 points'", r)
    # an empty chart says why
    r, page = html_of("studies/paper-configs.yaml", "-D",
                      "model.preset=dlrm_mlperf_kaggle")
    if "Nothing to draw: none of the 4 points fits in GPU memory" not in page:
        fail("a chart of points none of which fits says why it is empty", r)
    # capacity curves and --per-rank rows can be reported
    r, page = html_of(here("capacity.yaml"))
    if "<h2>e2e_ms against gpus</h2>" not in page or \
            page.count('<tr class="unfit">') + page.count("<tr>") < 5:
        fail("run --format html draws a capacity study's curve", r)
    r, page = html_of(here("h100x64.yaml"), "-D", "system.gpus_per_host=8",
                      "-D", "system.gpus=8", "--per-rank")
    if "<h2>e2e_ms against rank</h2>" not in page:
        fail("run --per-rank --format html charts the ranks", r)
    with tempfile.TemporaryDirectory() as t:
        jl = os.path.join(t, "cap.jsonl")
        open(jl, "w").write(run("run", here("capacity.yaml"),
                                "--format", "jsonl").stdout)
        run("report", jl, "-o", os.path.join(t, "cap.html"))


GPUS = ["V100-SXM2-16GB", "V100-SXM2-32GB", "A100-SXM4-40GB",
        "A100-SXM4-80GB", "H100-SXM5-80GB", "H100-PCIe-80GB",
        "H200-SXM-141GB", "B200", "P100-SXM2-16GB", "P100-PCIe-16GB",
        "TITAN-Xp", "T4", "A10", "L4", "L40S", "MI250X", "MI300X"]


CHECKS = {name[len("check_"):]: f for name, f in globals().items()
          if name.startswith("check_")}


def main():
    global DLRMC
    if len(sys.argv) != 3 or sys.argv[2] not in CHECKS:
        sys.exit("usage: check_ux.py DLRMC {%s}" % "|".join(sorted(CHECKS)))
    DLRMC = os.path.abspath(sys.argv[1])
    CHECKS[sys.argv[2]]()
    print("ok: %s" % sys.argv[2])


if __name__ == "__main__":
    main()
