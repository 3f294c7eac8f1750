#!/usr/bin/env python3
"""Runs cl_report_workload with the shim preloaded or as a layer and
TALLY_OUTPUT set, and checks the per-command report lists its commands with
the values their shapes and sizes determine.

usage: report_check.py MODE SHIM WORKLOAD REPORT [SANITIZER_RUNTIME [TALLY]]
MODE: preload, layer, or tally-run (`TALLY run --output REPORT -- WORKLOAD`,
which preloads the shim beside it)."""
import csv
import os
import subprocess
import sys

mode, shim, workload, report = sys.argv[1:5]
runtime = sys.argv[5] if len(sys.argv) > 5 else ""
env = dict(os.environ, TALLY_OUTPUT=report,
           TALLY_COUNTERS="Dispatches,TransferCommands,CsInvocations,CsWorkgroups")
env.pop("OPENCL_LAYERS", None)
preload = [runtime] if runtime else []
command = [workload]
if mode == "preload":
    preload.append(shim)
elif mode == "layer":
    env["OPENCL_LAYERS"] = shim
else:
    env.pop("TALLY_OUTPUT")
    command = [sys.argv[6], "run", "--output", report, "--", workload]
env["LD_PRELOAD"] = ":".join(preload)
if os.path.exists(report):
    os.remove(report)
done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
if done.returncode != 0:
    sys.exit(f"workload failed: {done.stdout}{done.stderr}")
with open(report, newline="") as f:
    rows = list(csv.DictReader(f))
got = [(r["kind"], r["api_name"], r["context_api"], int(r["Dispatches"]),
        int(r["TransferCommands"]), int(r["CsInvocations"]), int(r["CsWorkgroups"]))
       for r in rows]
# The last kernel has no local size: PoCL runs 64 items as 2 groups of 32 on
# 2 compute units (docs/opencl.md, rule step 3); other machines may differ,
# so only its item count is fixed here.
expected = [
    ("transfer", "clEnqueueWriteBuffer", "opencl", 0, 1, 0, 0),
    ("dispatch", "clEnqueueNDRangeKernel", "opencl", 1, 0, 64 * 16, 4 * 4),
    ("transfer", "clEnqueueReadBuffer", "opencl", 0, 1, 0, 0),
    ("transfer", "clEnqueueCopyBuffer", "opencl", 0, 1, 0, 0),
]
if got[:4] != expected or len(got) != 5:
    sys.exit(f"report rows {got}, expected {expected} and one more")
last = got[4]
if last[:5] != ("dispatch", "clEnqueueNDRangeKernel", "opencl", 1, 0) or last[5] != 64:
    sys.exit(f"unflushed kernel row {last}")
# A dispatch row names its kernel (its function), with a hash of its code
# that both dispatches of the kernel share; transfers run with no kernel.
kernels = [(r["pipeline_name"], r["shader_hash"], r["pipeline"]) for r in rows]
dispatch = kernels[1]
if dispatch[0] != "k" or dispatch[1] == "0" * 16 or dispatch[2] == "0":
    sys.exit(f"the kernel's row names {dispatch}, not kernel k with a hash and an id")
if kernels[4] != dispatch:
    sys.exit(f"two dispatches of one kernel name {dispatch} and {kernels[4]}")
for transfer in (kernels[0], kernels[2], kernels[3]):
    if transfer != ("", "0" * 16, "0"):
        sys.exit(f"a transfer names {transfer}, though it runs no kernel")
print(f"report ({mode}): {len(rows)} commands as expected")
