"""Samples of a real program under `tally run -s` obey physical bounds, and
account for every command's clocks exactly once (docs/engine.md, "What a
sample's counters mean").

usage: check_sampling.py TALLY WORKDIR SET INTERVAL VIRTUAL_INTERVAL PROGRAM [ARGS...]
(run with Debian's python3, which has python3-pandas)

The program runs twice on simgpu, each time with a per-command report (-o)
and samples (-s) of metric set SET every INTERVAL (VIRTUAL_INTERVAL under
the virtual clock, where a whole run can take a few microseconds):

- realtime clock (the default): the GPU idles between submissions while
  samples keep coming. Per sample: GpuCoreClocks is at most the core clock
  frequency times the sample's span (plus one cycle of rounding), GpuTime is
  the span, GpuBusy lies in [0, 100]. Over the run: the samples' clocks add up
  to the frequency times the whole sampled span (no clock difference went
  backwards or wrapped at 2^40), and the samples' busy clocks
  (GpuBusy x GpuCoreClocks) add up to the report's GpuBusyCycles.
- virtual clock: the clock only runs with work, so the samples' GpuCoreClocks
  add up exactly to the report's (each command's clocks in exactly one
  sample, however its span meets the sample boundaries), and every sample
  with clocks is 100 % busy.

The truths are independent of the sampler: the frequency and span each row
states (CoreFrequencyMHz, QueryBeginTime, QueryEndTime) and the per-command
report the engine writes for the same commands.
"""
import os
import shutil
import subprocess
import sys

import pandas

CYCLE_TOLERANCE = 1  # cycles: GPU time and clocks are both whole numbers


def run(tally, workdir, name, clock, metric_set, interval, program):
    samples = os.path.join(workdir, name + "-samples.csv")
    report = os.path.join(workdir, name + "-report.csv")
    args = [tally, "run", "-q", "--clock", clock, "-s", interval, "--set", metric_set,
            "--sample-output", samples, "-o", report, "-c", "GpuCoreClocks,GpuBusyCycles", "--"]
    env = dict(os.environ, EGL_PLATFORM="surfaceless")
    env.pop("DISPLAY", None)
    done = subprocess.run(args + program, capture_output=True, text=True, env=env, timeout=240)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args + program)} exited with {done.returncode}:\n{done.stderr}")
    return pandas.read_csv(samples), pandas.read_csv(report)


def fail(problems, what, rows):
    if len(rows):
        problems.append(f"{what}:\n{rows.head(8).to_string()}")


def check_bounds(samples, problems):
    span = samples.QueryEndTime - samples.QueryBeginTime
    most = samples.CoreFrequencyMHz * span // 1000 + CYCLE_TOLERANCE
    cols = ["QueryBeginTime", "QueryEndTime", "GpuTime", "GpuCoreClocks", "GpuBusy"]
    fail(problems, "clocks above frequency x span", samples[samples.GpuCoreClocks > most][cols])
    fail(problems, "GpuTime is not the sample's span", samples[samples.GpuTime != span][cols])
    busy = samples.GpuBusy
    fail(problems, "GpuBusy outside [0, 100]", samples[(busy < 0) | (busy > 100)][cols])


def busy_clocks(samples):
    """The samples' busy clocks, and how far the CSV's 3-decimal GpuBusy can
    put their sum from the exact one."""
    total = (samples.GpuBusy * samples.GpuCoreClocks / 100).sum()
    rounding = (samples.GpuCoreClocks * 0.0005 / 100).sum() + 1
    return total, rounding


def check_realtime(samples, report, problems):
    check_bounds(samples, problems)
    first, last = samples.QueryBeginTime.iloc[0], samples.QueryEndTime.iloc[-1]
    whole = int(samples.CoreFrequencyMHz.iloc[0]) * (int(last) - int(first)) // 1000
    clocks = int(samples.GpuCoreClocks.sum())
    if abs(clocks - whole) > CYCLE_TOLERANCE * len(samples):
        problems.append(f"realtime: samples' clocks {clocks} != frequency x span {whole}")
    busy, rounding = busy_clocks(samples)
    worked = int(report.GpuBusyCycles.sum())
    if abs(busy - worked) > rounding:
        problems.append(f"realtime: samples' busy clocks {busy:.0f} != report's {worked}"
                        f" (rounding allows {rounding:.0f})")


def check_virtual(samples, report, problems):
    check_bounds(samples, problems)
    clocks, worked = int(samples.GpuCoreClocks.sum()), int(report.GpuCoreClocks.sum())
    if clocks != worked:
        problems.append(f"virtual: samples' clocks {clocks} != report's {worked}")
    idle = samples[(samples.GpuCoreClocks > 0) & (samples.GpuBusy != 100)]
    fail(problems, "virtual: a sample with clocks is not 100 % busy",
         idle[["QueryBeginTime", "QueryEndTime", "GpuCoreClocks", "GpuBusy"]])


def main():
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    tally, workdir, metric_set, interval, virtual_interval = sys.argv[1:6]
    program = sys.argv[6:]
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    problems = []
    samples, report = run(tally, workdir, "realtime", "realtime", metric_set, interval, program)
    if len(report) == 0 or len(samples) < 2:
        problems.append(f"realtime: {len(report)} commands, {len(samples)} samples: too few")
    else:
        check_realtime(samples, report, problems)
    samples, report = run(tally, workdir, "virtual", "virtual", metric_set, virtual_interval,
                          program)
    if len(report) == 0 or len(samples) < 2:
        problems.append(f"virtual: {len(report)} commands, {len(samples)} samples: too few")
    else:
        check_virtual(samples, report, problems)
    if problems:
        sys.exit("\n".join(problems))
    print(f"{len(samples)} virtual samples of {len(report)} commands within bounds")


if __name__ == "__main__":
    main()
