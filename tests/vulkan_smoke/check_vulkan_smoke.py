#!/usr/bin/env python3
"""The Vulkan layer's smoke test for a build without the other front doors
(the arm64 build under qemu-user): tests/layer/vk_workload.c, a program that
knows nothing of tally, runs under the layer on lavapipe; every command it
measured with the driver's own pipeline-statistics query is in tally's
report under the name the program called, with IaVertices and IaPrimitives
equal to the driver's.

usage: check_vulkan_smoke.py ICD LAYER_DIR SCRATCH -- [EMULATOR...] VK_WORKLOAD SHADER_DIR
"""
import json
import os
import shutil
import subprocess
import sys


def one_per_line(lines, records):
    """The program measures an indirect command of several records with one
    query; tally reports each record: one command per line, summed."""
    merged, i = [], 0
    for line in lines:
        n = line.get("records", 1)
        group = records[i:i + n]
        if n < 1 or len(group) != n:
            sys.exit(f"the report has {len(records)} records, fewer than the program's lines")
        names = {r["api_name"] for r in group}
        if names != {line["api"]}:
            sys.exit(f"command {len(merged)}: reported as {sorted(names)}, called {line['api']}")
        values = {}
        for r in group:
            for symbol, value in r["values"].items():
                values[symbol] = values.get(symbol, 0) + value
        merged.append(values)
        i += n
    if i != len(records):
        sys.exit(f"the report has {len(records) - i} records the program did not make")
    return merged


def main():
    icd, layer_dir, scratch = sys.argv[1:4]
    command = sys.argv[sys.argv.index("--") + 1:]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    report = os.path.join(scratch, "report.json")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VK_", "TALLY")) and k != "DISPLAY"}
    env.update({"VK_DRIVER_FILES": icd, "VK_ADD_LAYER_PATH": layer_dir,
                "VK_INSTANCE_LAYERS": "VK_LAYER_TALLY_counters", "TALLY_OUTPUT": report,
                "TALLY_COUNTERS": "IaVertices,IaPrimitives"})
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        sys.exit(f"the workload exited {run.returncode}:\n{run.stderr}")
    lines = [json.loads(l) for l in run.stdout.splitlines() if l.startswith("{")]
    with open(report) as f:
        records = json.load(f)["commands"]
    commands = one_per_line(lines, records)
    draws = 0
    for n, (line, values) in enumerate(zip(lines, commands)):
        for symbol, field in (("IaVertices", "ia_vertices"), ("IaPrimitives", "ia_primitives")):
            if values.get(symbol) != line[field]:
                sys.exit(f"command {n} ({line['api']} {line['label']}): {symbol} "
                         f"{values.get(symbol)}, the driver's {field} {line[field]}")
        draws += line["ia_vertices"] > 0
    if draws < 22:  # 11 topologies, non-indexed and indexed
        sys.exit(f"only {draws} draws with vertices")
    print(f"{len(lines)} commands, {draws} draws: each as the driver counted it")


if __name__ == "__main__":
    main()
