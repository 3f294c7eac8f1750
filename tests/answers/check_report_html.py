"""tally report --html in a real browser: headless Chromium from Debian
opens the page from disk, its screenshot is not blank, and its DOM, after
the page's script ran, holds the numbers tally summary computes.

usage: check_report_html.py TALLY WORKLOAD WORKDIR   (Debian's python3, chromium)

The run: gate_workload (a GL program that knows nothing of tally) recorded
by `tally run --clock virtual` on llvmpipe with simgpu; the diff mode
overlays it with its --more-vertices variant. A copy of the report whose
label holds markup checks that every text from a report is escaped.
"""
import csv
import html as markup
import io
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

FRAMES = "12"
HOSTILE_LABEL = '<img src=x onerror="document.title=1">&amp;\'q\''


def record(tally, workload, workdir, name, *switches):
    report = os.path.join(workdir, name + ".csv")
    subprocess.run([tally, "run", "-q", "--clock", "virtual", "-o", report, "--", workload,
                    "--frames", FRAMES, *switches], check=True)
    return report


def html_report(tally, page, *arguments):
    result = subprocess.run([tally, "report", "--html", page, *arguments], capture_output=True,
                            text=True)
    assert result.returncode == 0, (arguments, result.returncode, result.stderr)
    with open(page, encoding="utf-8") as f:
        return f.read()


def summary_rows(tally, report):
    out = subprocess.run([tally, "summary", "--format", "csv", report], check=True,
                         capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def summary_total(rows, counter):
    return next(r["value"] for r in rows
                if r["section"] == "total" and r["counter"] == counter)


def summary_group(rows, section, group, counter):
    return next(r["value"] for r in rows
                if r["section"] == section and r["group"] == group and r["counter"] == counter)


def check_self_contained(html):
    """Opens offline: nothing is fetched, no script or style comes from elsewhere."""
    assert "<script src" not in html and "<link" not in html, "an outside resource"
    for url in re.findall(r'(?:src|href)="([^"]*)"', html):
        assert url.startswith("file://"), "a link off the disk: " + url
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html


class Chromium:
    def __init__(self, workdir):
        self.binary = shutil.which("chromium")
        assert self.binary, "no chromium: apt-get install chromium (setup.sh installs it)"
        self.profile = os.path.join(workdir, "chromium-profile")

    def run(self, *arguments):
        # As root Chromium needs --no-sandbox; a profile of its own keeps
        # runs apart; the timeout keeps a hung browser from hanging CI. The
        # sanitized builds' LD_PRELOAD is for tally's programs, not the browser.
        environment = {k: v for k, v in os.environ.items()
                       if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "TSAN_OPTIONS")}
        return subprocess.run([self.binary, "--headless", "--no-sandbox", "--disable-gpu",
                               "--user-data-dir=" + self.profile, *arguments],
                              capture_output=True, text=True, timeout=90, check=True,
                              env=environment).stdout

    def dom(self, page):
        return self.run("--dump-dom", "file://" + os.path.abspath(page))

    def screenshot(self, page, png):
        self.run("--screenshot=" + png, "--window-size=1200,900",
                 "file://" + os.path.abspath(page))
        return png


def png_pixels(path):
    """(width, height, rows of bytes per pixel) of an 8-bit RGB or RGBA PNG,
    decoded here: the chunks, zlib, and the five scanline filters."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, idat = 8, b""
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    raw = zlib.decompress(idat)
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = previous[x]
            c = previous[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, bpp, rows


def check_not_blank(png):
    width, height, bpp, rows = png_pixels(png)
    assert (width, height) == (1200, 900), (width, height)
    colours, inked = set(), 0
    for row in rows:
        for x in range(0, len(row), bpp):
            pixel = row[x:x + 3]
            colours.add(pixel)
            inked += pixel != b"\xff\xff\xff"
    # Text, axes and coloured lines: anti-aliasing alone gives hundreds.
    assert len(colours) >= 50, "a blank screenshot: %d colours" % len(colours)
    assert inked >= width * height // 100, "almost nothing drawn: %d pixels" % inked
    # The plots' line colours are on the screen.
    assert b"\x2b\x6c\xb0" in colours, "no plotted line in the screenshot"


def body_rows(dom, table_id):
    table = re.search(r'<table[^>]*id="%s".*?</table>' % table_id, dom, re.S)
    assert table, "no table " + table_id
    body = table.group(0).split("<tbody>", 1)[1]
    return [[markup.unescape(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def one_run(tally, chromium, workdir, report, trace):
    page = os.path.join(workdir, "one run.html")  # a blank in the name: the URL must hold
    html = html_report(tally, page, report, trace)
    check_self_contained(html)
    check_not_blank(chromium.screenshot(page, os.path.join(workdir, "one.png")))

    dom = chromium.dom(page)
    rows = summary_rows(tally, report)
    total = summary_total(rows, "GpuTime")
    assert re.search(r'data-counter="GpuTime"><td>GpuTime</td><td[^>]*>%s</td>' % total, dom), \
        ("total GpuTime", total)
    # The script ran: it sorted the top commands by GpuTime, largest first.
    assert re.search(r'<th aria-sort="descending">GpuTime</th>', dom), "the script did not run"
    top = body_rows(dom, "top-commands")
    first = next(r for r in rows if r["section"] == "top" and r["rank"] == "1"
                 and r["statistic"] == "value")
    # columns: #, frame, sequence, kind, API command, label, pipeline, GpuTime, ...
    assert top[0][1] == first["frame"] and top[0][2] == first["sequence"], (top[0], first)
    assert top[0][5] == first["label"] and top[0][7] == first["value"], (top[0], first)
    assert len(top) == 20, len(top)
    meta = dict(re.findall(r"<tr><th>([^<]*)</th><td>([^<]*)</td></tr>", dom))
    assert meta.get("backend") == "simgpu" and meta.get("clock") == "virtual", meta
    assert "start_utc" in meta and "program" in meta, meta
    assert os.path.basename(trace) in dom, "no link to the trace"


def diff_mode(tally, chromium, workdir, base, new):
    page = os.path.join(workdir, "diff.html")
    html = html_report(tally, page, "--base", base, new)
    check_self_contained(html)
    check_not_blank(chromium.screenshot(page, os.path.join(workdir, "diff.png")))
    assert html.count("<polyline") >= 2 * 3, "both runs are not overlaid in every plot"
    dom = chromium.dom(page)
    was = summary_group(summary_rows(tally, base), "label", "terrain", "IaVertices")
    now = summary_group(summary_rows(tally, new), "label", "terrain", "IaVertices")
    change = "%s -> %s (+%.2f %%)" % (was, now, (int(now) - int(was)) * 100 / int(was))
    movers = body_rows(dom, "movers")
    assert ["IaVertices", 'label "terrain"', was, now, change] in movers, (change, movers)


def escaped(tally, chromium, workdir, report):
    """A label of markup shows as text, never as markup."""
    hostile = os.path.join(workdir, "hostile.csv")
    with open(report, newline="") as f:
        rows = list(csv.reader(f))
    label = rows[0].index("label")
    for row in rows[1:]:
        row[label] = HOSTILE_LABEL
    with open(hostile, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    shutil.copy(report[:-4] + ".meta.csv", hostile[:-4] + ".meta.csv")
    page = os.path.join(workdir, "hostile.html")
    html = html_report(tally, page, hostile)
    assert "<img" not in html and HOSTILE_LABEL not in html, "a label went in unescaped"
    dom = chromium.dom(page)
    assert "<img" not in dom and "<title>tally report" in dom, "the label became markup"
    assert body_rows(dom, "top-commands")[0][5] == HOSTILE_LABEL


def bad_input(tally, workdir):
    for arguments in (["--html", os.path.join(workdir, "x.html"), os.path.join(workdir, "none.csv")],
                      ["--html", os.path.join(workdir, "x.html")],
                      ["--html", os.path.join(workdir, "x.html"), "--counter", "Nope",
                       os.path.join(workdir, "base.csv")]):
        result = subprocess.run([tally, "report", *arguments], capture_output=True, text=True)
        assert result.returncode == 2, (arguments, result.returncode)
        assert result.stderr.startswith("tally report: "), result.stderr
    assert not os.path.exists(os.path.join(workdir, "x.html"))


def main():
    tally, workload, workdir = sys.argv[1:4]
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    chromium = Chromium(workdir)
    base = record(tally, workload, workdir, "base")
    trace = os.path.join(workdir, "base.trace.json")
    shutil.copy(base, trace)  # any file does: the page only links it
    new = record(tally, workload, workdir, "new", "--more-vertices")
    one_run(tally, chromium, workdir, base, trace)
    diff_mode(tally, chromium, workdir, base, new)
    escaped(tally, chromium, workdir, base)
    bad_input(tally, workdir)
    print("tally report --html: checked in", chromium.binary)


if __name__ == "__main__":
    main()
