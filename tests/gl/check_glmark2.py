#!/usr/bin/env python3
"""glmark2's build scene under libtally_gl.so with a per-command report:
glmark2 must finish with its score, and tally's report must hold its draws
(the scene draws its model with glDrawArrays as a triangle list).

usage: check_glmark2.py PRELOAD REPORT   (needs an X display)
"""
import csv
import os
import subprocess
import sys


def main():
    preload, report = sys.argv[1:3]
    if os.path.exists(report):
        os.remove(report)
    env = dict(os.environ, LD_PRELOAD=preload, ASAN_OPTIONS="detect_leaks=0",
               TALLY_OUTPUT=report, TALLY_COUNTERS="IaVertices,IaPrimitives,DrawCalls")
    result = subprocess.run(["glmark2", "--off-screen", "-b", "build:duration=0.5",
                             "--size", "64x64"], env=env, capture_output=True, text=True,
                            timeout=240)
    if result.returncode != 0 or "glmark2 Score" not in result.stdout:
        sys.exit(f"glmark2 failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    with open(report, newline="") as f:
        draws = [row for row in csv.DictReader(f) if row["kind"] == "draw"]
    if not draws:
        sys.exit("FAIL: no draw in tally's report")
    for row in draws:
        vertices, primitives = int(row["IaVertices"]), int(row["IaPrimitives"])
        if row["api_name"] != "glDrawArrays" or vertices == 0 or vertices != 3 * primitives \
                or row["DrawCalls"] != "1":
            sys.exit(f"FAIL: unexpected draw in the report: {row}")
    frames = {row["frame"] for row in draws}
    print(f"glmark2 ran; tally's report holds {len(draws)} draws over {len(frames)} frames")


if __name__ == "__main__":
    main()
