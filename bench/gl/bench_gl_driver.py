#!/usr/bin/env python3
"""The GL shim's per-draw CPU cost under each backend, side by side in one run.

bench_gl_draws (FRAMES frames of DRAWS one-pixel draws, a glFlush per frame)
runs without the shim, with a pass-through preload that only forwards
(libtally_passthrough_gl.so, the baseline an idle shim is held to), with
the shim on simgpu idle and reporting, and with the shim on the driver
backend idle (nobody listens: no queries) and reporting (the shim's
timestamp and pipeline-statistics queries around each draw, read at the
next flushes). Configurations are interleaved, each is run --runs times
pinned to one CPU, and the medians of the program's thread CPU time and
wall time per draw are shown, with each one's CPU over the pass-through
preload's (the median of the rounds' differences). A measurement, no
target.

usage: bench_gl_driver.py [--runs N] [--cpu N] [--frames N] [--draws N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.dirname(HERE)


# One allocator setting for every configuration, as in bench_gl.py: without
# it, whether glibc trims and re-grows llvmpipe's heap between frames
# decides the figures (no shim measured 150 ns a draw slower than the
# pass-through preload).
MALLOC_TUNABLES = ("glibc.malloc.trim_threshold=1073741824:glibc.malloc.top_pad=67108864:"
                   "glibc.malloc.mmap_threshold=1073741824")


def configs(workdir):
    shim = os.path.join(BUILD, "lib", "libtally_gl.so")
    passthrough = os.path.join(BUILD, "lib", "libtally_passthrough_gl.so")
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("TALLY_") and k != "LD_PRELOAD"}
    base["EGL_PLATFORM"] = "surfaceless"
    base["GLIBC_TUNABLES"] = MALLOC_TUNABLES
    report = os.path.join(workdir, "report.csv")
    counters = ("GpuTime,IaVertices,IaPrimitives,VsInvocations,ClipperInvocations,"
                "ClipperPrimitives,FsInvocations")
    return [
        ("no shim", base),
        ("pass-through shim", dict(base, LD_PRELOAD=passthrough)),
        ("simgpu, idle", dict(base, LD_PRELOAD=shim)),
        ("simgpu, per-draw report", dict(base, LD_PRELOAD=shim, TALLY_OUTPUT=report,
                                         TALLY_COUNTERS="IaVertices,IaPrimitives,VsInvocations")),
        ("driver, idle", dict(base, LD_PRELOAD=shim, TALLY_BACKEND="driver")),
        ("driver, per-draw report", dict(base, LD_PRELOAD=shim, TALLY_BACKEND="driver",
                                         TALLY_OUTPUT=report, TALLY_COUNTERS=counters)),
    ]


def run_once(program, env, args):
    command = ["taskset", "-c", str(args.cpu), program, str(args.frames), str(args.draws)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    fields = out.stdout.split()
    values = dict(zip(fields[0::2], fields[1::2]))
    if out.returncode != 0 or values.get("error") != "0x0":
        sys.exit(f"bench_gl_draws failed: {out.stdout}{out.stderr}")
    return float(values["thread_ns_per_draw"]), float(values["wall_ns_per_draw"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--frames", type=int, default=50)
    parser.add_argument("--draws", type=int, default=200)
    args = parser.parse_args()
    program = os.path.join(BUILD, "bin", "bench_gl_draws")
    with tempfile.TemporaryDirectory() as workdir:
        cases = configs(workdir)
        results = {name: [] for name, _ in cases}
        for _ in range(args.runs):
            for name, env in cases:
                results[name].append(run_once(program, env, args))
    print(f"{args.frames} frames x {args.draws} draws, {args.runs} interleaved runs, "
          f"CPU {args.cpu}; medians, ns per draw")
    print(f"{'configuration':26} {'thread CPU':>11} {'wall':>9} {'CPU over pass-through':>22}")
    baseline = results["pass-through shim"]
    for name, _ in cases:
        cpu = statistics.median(r[0] for r in results[name])
        wall = statistics.median(r[1] for r in results[name])
        # Run i of every configuration ran in the same round: the median of
        # the rounds' differences cancels what the machine did in between.
        over = statistics.median(r[0] - b[0] for r, b in zip(results[name], baseline))
        print(f"{name:26} {cpu:11.1f} {wall:9.1f} {over:+22.1f}")


if __name__ == "__main__":
    main()
