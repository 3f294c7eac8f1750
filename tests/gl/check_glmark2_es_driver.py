#!/usr/bin/env python3
"""glmark2-es2 (an OpenGL ES 2 program on EGL) under `tally run --backend
driver`, with the EGL door on and with --no-egl: llvmpipe's ES has no
pipeline-statistics query (its GL_EXTENSIONS, read here without tally, has no
GL_ARB_pipeline_statistics_query), so no statistic may be offered as a column
that reads 0; the report's header must not depend on which doors are on; and
tally says nothing about GL_TIMESTAMP.

usage: check_glmark2_es_driver.py TALLY WORKDIR   (needs an X display)
"""
import csv
import os
import subprocess
import sys

STATISTICS = ["IaVertices", "IaPrimitives", "VsInvocations", "GsInvocations", "GsPrimitives",
              "ClipperInvocations", "ClipperPrimitives", "FsInvocations",
              "TessControlPatches", "TessEvalInvocations"]
GLMARK2 = ["glmark2-es2", "-b", "shading:duration=0.3", "--size", "64x64"]


def run(tally, report, extra):
    if os.path.exists(report):
        os.remove(report)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_")}
    result = subprocess.run([tally, "run", "--backend", "driver", "-o", report] + extra +
                            ["--"] + GLMARK2, env=env, capture_output=True, text=True,
                            timeout=240)
    if result.returncode != 0 or "glmark2 Score" not in result.stdout:
        sys.exit(f"glmark2-es2 failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    with open(report, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:], result.stderr


def main():
    tally, workdir = sys.argv[1:3]
    os.makedirs(workdir, exist_ok=True)
    alone = subprocess.run(["glmark2-es2", "--off-screen", "-b", "shading:duration=0.1",
                            "--size", "64x64", "--debug"], capture_output=True, text=True,
                           timeout=240)
    if "GL_ARB_pipeline_statistics_query" in alone.stdout + alone.stderr:
        sys.exit("SKIP-like: this ES exposes pipeline statistics; the check assumes it does not")
    failed = False
    headers = []
    for extra in ([], ["--no-egl"]):
        header, rows, stderr = run(tally, os.path.join(workdir, "es.csv"), extra)
        headers.append(header)
        draws = [r for r in rows if r[header.index("kind")] == "draw"]
        if not draws:
            print(f"FAIL {extra}: no draw in the report")
            failed = True
        offered = [s for s in STATISTICS if s in header]
        if offered:
            print(f"FAIL {extra}: an ES context without statistics queries offers {offered}")
            failed = True
        if "GL_TIMESTAMP" in stderr:
            print(f"FAIL {extra}: tally said {stderr.strip()}")
            failed = True
    if headers[0] != headers[1]:
        print(f"FAIL: the header depends on the EGL door:\n  {headers[0]}\n  {headers[1]}")
        failed = True
    if failed:
        sys.exit(1)
    print(f"ok: header {','.join(headers[0][headers[0].index('duration_ns') + 1:])} with and "
          f"without the EGL door")


if __name__ == "__main__":
    main()
