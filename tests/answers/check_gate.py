"""tally diff as a CI gate, as docs/ci.md tells a user to set it up: a real
GL program (gate_workload, which knows nothing of tally) recorded by
`tally run --clock virtual` on llvmpipe with simgpu, and gated against the
baseline committed beside this script (gate_workload.baseline.csv).

usage: check_gate.py TALLY WORKLOAD FIXTURE WORKDIR CASE
  same           the unchanged workload passes, and its baseline is the
                 fixture byte for byte
  more-draws     a fifth draw in the "trees" pass fails the gate, naming
                 the counter, the label and the change
  more-vertices  900 vertices instead of 600 in the "terrain" draw fails it
  bad-input      unreadable or malformed input exits 2 with one line
  update         rewrites the fixture (after a deliberate change)

The expected numbers come from gate_workload.c's own source: 3 frames;
trees has 4 draws of 36 vertices a frame (12 draws, 432 vertices), 5 with
--more-draws (15, 540); terrain one draw of 600 vertices a frame (1800),
900 with --more-vertices (2700).
"""
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree


def record(tally, workload, workdir, name, *switches):
    report = os.path.join(workdir, name + ".csv")
    subprocess.run([tally, "run", "-q", "--clock", "virtual", "-o", report, "--", workload,
                    *switches], check=True)
    return report


def diff(tally, *arguments):
    return subprocess.run([tally, "diff", *arguments], capture_output=True, text=True)


def expect(result, status, *lines):
    assert result.returncode == status, (result.returncode, status, result.stdout, result.stderr)
    for line in lines:
        assert line in result.stdout, (line, result.stdout)


def junit_failures(path):
    tree = ElementTree.parse(path)
    return [f.get("message") for f in tree.iter("failure")]


def same(tally, workload, fixture, workdir):
    report = record(tally, workload, workdir, "same")
    junit = os.path.join(workdir, "same.xml")
    expect(diff(tally, "--baseline", fixture, report, "--junit", junit), 0, "gate: passed")
    assert junit_failures(junit) == [], junit_failures(junit)
    # The baseline of this run is the committed one, byte for byte.
    rewritten = os.path.join(workdir, "same.baseline.csv")
    expect(diff(tally, "--write-baseline", rewritten, report), 0)
    with open(fixture, "rb") as a, open(rewritten, "rb") as b:
        assert a.read() == b.read(), "the baseline changed: " + rewritten
    # Two recordings of the same program match command by command.
    again = record(tally, workload, workdir, "again")
    expect(diff(tally, report, again), 0, "commands matched by frame and position: 24 (0 with",
           "gate: passed")


def more_draws(tally, workload, fixture, workdir):
    report = record(tally, workload, workdir, "more_draws", "--more-draws")
    junit = os.path.join(workdir, "more_draws.xml")
    wanted = ['commands (exact) in label "trees": 12 -> 15 (+25.00 %) breaks exact>0',
              'IaVertices (exact) in label "trees": 432 -> 540 (+25.00 %) breaks exact>0']
    expect(diff(tally, "--baseline", fixture, report, "--junit", junit), 1, "gate: FAILED",
           *wanted)
    failures = junit_failures(junit)
    for line in wanted:
        assert any(m.startswith(line) for m in failures), (line, failures)
    # Report against report: the streams part in the trees pass of every
    # frame, and the groups still say where.
    base = record(tally, workload, workdir, "base")
    expect(diff(tally, base, report), 1, "command streams differ in 3 frame(s)", *wanted)
    # The Markdown for a pull request says the same.
    expect(diff(tally, "--baseline", fixture, report, "--format", "markdown"), 1,
           "### tally diff: FAILED", "- " + wanted[0])


def more_vertices(tally, workload, fixture, workdir):
    report = record(tally, workload, workdir, "more_vertices", "--more-vertices")
    junit = os.path.join(workdir, "more_vertices.xml")
    wanted = 'IaVertices (exact) in label "terrain": 1800 -> 2700 (+50.00 %) breaks exact>0'
    expect(diff(tally, "--baseline", fixture, report, "--junit", junit), 1, "gate: FAILED",
           wanted)
    assert any(m.startswith(wanted) for m in junit_failures(junit)), junit_failures(junit)
    # Report against report: every command matched, the terrain draw of
    # each frame the one that moved.
    base = record(tally, workload, workdir, "base")
    result = diff(tally, base, report)
    expect(result, 1, "commands matched by frame and position: 24 (3 with a changed value)",
           wanted)
    moved = [l for l in result.stdout.splitlines() if "IaVertices" in l and "600 -> 900" in l]
    assert len(moved) == 3 and all("terrain" in l for l in moved), result.stdout


def bad_input(tally, workload, fixture, workdir):
    def write(name, text):
        path = os.path.join(workdir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    torn = write("torn.csv", 'sequence,api_name,frame,label,GpuTime\n1,vkCmdDraw,0,"open,5\n')
    ragged = write("ragged.csv", "sequence,api_name,frame,label,GpuTime\n1,vkCmdDraw,0\n")
    words = write("words.csv", "sequence,api_name,frame,label,GpuTime\n1,vkCmdDraw,0,x,many\n")
    future = write("future.csv", "scope,name,commands,GpuTime\nschema,tally baseline 9,,\n")
    cases = [
        (["diff", os.path.join(workdir, "missing.csv"), fixture], "No such file"),
        (["diff", "--baseline", fixture, torn], "runs to the end of the file"),
        (["diff", "--baseline", fixture, ragged], "line 2: 3 fields where the header has 5"),
        (["diff", "--baseline", fixture, words], 'GpuTime "many" is not a number'),
        (["diff", "--baseline", future, fixture], "not a baseline this tally reads"),
        (["diff", "--fail-on", "GpuTime=5%", fixture, fixture], "bad rule"),
        (["summary", fixture], "no sequence column"),
        (["summary", torn], "runs to the end of the file"),
    ]
    for arguments, says in cases:
        result = subprocess.run([tally, *arguments], capture_output=True, text=True)
        lines = result.stderr.splitlines()
        assert result.returncode == 2, (arguments, result.returncode, result.stderr)
        assert len(lines) == 1 and says in lines[0], (arguments, result.stderr)
        assert lines[0].startswith("tally " + arguments[0] + ": "), lines


def update(tally, workload, fixture, workdir):
    report = record(tally, workload, workdir, "update")
    expect(diff(tally, "--write-baseline", fixture, report), 0)


def main():
    tally, workload, fixture, workdir, case = sys.argv[1:6]
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    {"same": same, "more-draws": more_draws, "more-vertices": more_vertices,
     "bad-input": bad_input, "update": update}[case](tally, workload, fixture, workdir)


if __name__ == "__main__":
    main()
