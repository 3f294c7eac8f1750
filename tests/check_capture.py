#!/usr/bin/python3
"""tally run's capture window on a real GL program (issue 33, item 3).

    check_capture.py TALLY WORKLOAD WORKDIR

WORKLOAD is tests/answers/gate_workload, which draws the same passes every
frame and ends each with eglSwapBuffers. Checks:

- --frames 10-19 reports exactly frames 10 to 19, and each of their rows
  equals the same frame's row of a run with no window (the same commands,
  labels, pipelines and exact counts);
- a --trigger file that never exists captures nothing, one that exists
  from the start captures every frame;
- --delay longer than the run captures nothing;
- a malformed window is refused before the program runs (exit 2).
"""
import csv
import os
import shutil
import subprocess
import sys

FRAMES = 30
KEYS = ("kind", "api_name", "label", "pipeline_name", "shader_hash", "IaVertices",
        "IaPrimitives", "VsInvocations")


def run(tally, workload, report, *window):
    done = subprocess.run([tally, "run", "-q", "--clock", "virtual", "-o", report, *window, "--",
                           workload, "--frames", str(FRAMES)], capture_output=True, text=True)
    assert done.returncode == 0, (window, done.stderr)
    with open(report, newline="") as f:
        return list(csv.DictReader(f))


def by_frame(rows):
    frames = {}
    for row in rows:
        frames.setdefault(int(row["frame"]), []).append(tuple(row[k] for k in KEYS))
    return frames


def main():
    tally, workload, workdir = sys.argv[1:4]
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    path = lambda name: os.path.join(workdir, name)

    whole = by_frame(run(tally, workload, path("whole.csv")))
    assert sorted(whole) == list(range(FRAMES)), sorted(whole)

    window = by_frame(run(tally, workload, path("window.csv"), "--frames", "10-19"))
    assert sorted(window) == list(range(10, 20)), sorted(window)
    for frame, rows in window.items():
        assert rows == whole[frame], (frame, rows, whole[frame])
    print("--frames 10-19: frames 10 to 19, each as in the whole run")

    never = path("never-there")
    assert run(tally, workload, path("off.csv"), "--trigger", never) == []
    there = path("there")
    open(there, "w").close()
    assert by_frame(run(tally, workload, path("on.csv"), "--trigger", there)) == whole
    print("--trigger FILE: nothing while it is missing, everything while it exists")

    assert run(tally, workload, path("late.csv"), "--delay", "10min") == []
    print("--delay past the run: nothing")

    for option, value in (("--frames", "19-10"), ("--delay", "2"), ("--trigger", "SIGKILL")):
        done = subprocess.run([tally, "run", option, value, "--", "/bin/false"],
                              capture_output=True, text=True)
        assert done.returncode == 2 and done.stderr.startswith("tally run: " + option), (
            option, done.returncode, done.stderr)
    print("malformed windows are refused before the program runs")


main()
