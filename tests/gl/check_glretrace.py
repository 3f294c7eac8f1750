#!/usr/bin/env python3
"""apitrace against libtally_gl.so: trace glx_draws, replay the trace with
glretrace under the shim, and check that

- --list-metrics lists the GL_AMD_performance_monitor and
  GL_INTEL_performance_query backends with tally's groups and counters;
- --pdrawcalls values from both backends equal the hand-computed counts of
  glx_draws and tally's own per-command report (TALLY_OUTPUT) of the replay;
- --pframes values are the per-frame sums of the same counts.

usage: check_glretrace.py GLX_DRAWS PRELOAD WORKDIR   (needs an X display)
"""
import csv
import os
import subprocess
import sys

FRAMES = 3
METRICS = ("GL_AMD_performance_monitor: IaVertices, DrawCalls; "
           "GL_INTEL_performance_query: IaPrimitives")


def golden_draws():
    """(name, IaVertices, DrawCalls, IaPrimitives) of each draw of glx_draws."""
    draws = []
    for frame in range(FRAMES):
        vertices = 3 * (frame + 1)
        draws.append(("glDrawArrays", vertices, 1, vertices // 3))
        draws.append(("glDrawArraysInstanced", 4 * 2, 1, 2 * 2))
        draws.append(("glDrawElements", 6, 1, 2))
    return draws


def run(args, env=None):
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=240)
    if result.returncode != 0:
        sys.exit(f"{args[0]} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


def check(condition, message):
    if not condition:
        sys.exit("FAIL: " + message)


def main():
    glx_draws, preload, workdir = sys.argv[1:4]
    os.makedirs(workdir, exist_ok=True)
    trace = os.path.join(workdir, "glx_draws.trace")
    report = os.path.join(workdir, "replay.csv")
    if os.path.exists(trace):
        os.remove(trace)
    run(["apitrace", "trace", "-o", trace, glx_draws, str(FRAMES)])

    env = dict(os.environ, LD_PRELOAD=preload, ASAN_OPTIONS="detect_leaks=0")
    env.pop("TALLY_OUTPUT", None)
    listing = run(["glretrace", "--list-metrics", trace], env)
    check("Backend GL_AMD_performance_monitor:" in listing, "no AMD backend listed")
    check("Backend GL_INTEL_performance_query:" in listing, "no INTEL backend listed")
    for name in ("Group #2: InputAssembler.", "Metric #0: IaVertices", "Group #4: PipelineStats.",
                 "VsInvocations", "DramWriteBytes"):
        check(name in listing, f"{name} not listed")

    golden = golden_draws()
    draw_env = dict(env, TALLY_OUTPUT=report, TALLY_COUNTERS="IaVertices,DrawCalls,IaPrimitives")
    lines = run(["glretrace", "--pdrawcalls=" + METRICS, trace], draw_env).splitlines()
    header = next(line for line in lines if line.startswith("#")).split("\t")
    columns = {name: header.index(name) for name in ("name", "IaVertices", "DrawCalls",
                                                      "IaPrimitives")}
    measured = []
    for line in lines:
        fields = line.split("\t")
        if fields[0] == "call" and fields[columns["name"]] != "glClear":
            measured.append((fields[columns["name"]],) +
                            tuple(int(fields[columns[m]]) for m in ("IaVertices", "DrawCalls",
                                                                     "IaPrimitives")))
    check(measured == golden, f"glretrace per draw {measured} != golden {golden}")

    with open(report, newline="") as f:
        rows = [row for row in csv.DictReader(f) if row["kind"] == "draw"]
    # glretrace replays the trace once per pass (one per backend here).
    check(len(rows) % len(golden) == 0 and rows, f"{len(rows)} draws in tally's report")
    for start in range(0, len(rows), len(golden)):
        reported = [(r["api_name"], int(r["IaVertices"]), int(r["DrawCalls"]),
                     int(r["IaPrimitives"])) for r in rows[start:start + len(golden)]]
        check(reported == golden, f"tally's report {reported} != golden {golden}")

    lines = run(["glretrace", "--pframes=" + METRICS, trace], env).splitlines()
    # The calls after the last swap make a frame of their own, with no draws.
    frames = [line.split("\t") for line in lines
              if line.startswith("frame\t") and "-" not in line.split("\t")]
    check(len(frames) == FRAMES, f"{len(frames)} frames measured")
    for frame, fields in enumerate(frames):
        in_frame = golden[3 * frame:3 * frame + 3]
        expected = [sum(d[i] for d in in_frame) for i in (1, 2, 3)]
        check([int(v) for v in fields[1:4]] == expected,
              f"frame {frame}: {fields[1:4]} != {expected}")
    print("glretrace metrics of both backends equal tally's report and the golden counts")


if __name__ == "__main__":
    main()
