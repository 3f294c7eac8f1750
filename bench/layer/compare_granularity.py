"""Checks the driver backend at a coarse granularity against the driver itself,
as tests/layer/test_layer_granularity.c does on lavapipe: per submission, the
sums of tally's report of `vk_workload SHADER_DIR none` and the program's own
per-submission queries (`vk_workload SHADER_DIR per-submission`, served by the
layer) equal the sums of the program's per-command lines without the layer.

The truth may also be the program's per-submission lines without the layer
(`vk_workload SHADER_DIR per-submission`): a driver may count vertex shader
invocations of several draws under one query differently from the sum of
per-draw queries (NVIDIA's does: post-transform reuse across draws), and a
coarse measurement is one query over several draws.

Usage: compare_granularity.py TRUTH.jsonl NONE.jsonl NONE_REPORT.json PER_SUBMISSION.jsonl"""
import json, sys

STATS = [("ia_vertices", "IaVertices"), ("ia_primitives", "IaPrimitives"),
         ("vs_invocations", "VsInvocations"), ("gs_invocations", "GsInvocations"),
         ("gs_primitives", "GsPrimitives"), ("clipper_invocations", "ClipperInvocations"),
         ("clipper_primitives", "ClipperPrimitives"), ("fs_invocations", "FsInvocations"),
         ("tcs_patches", "TessControlPatches"), ("tes_invocations", "TessEvalInvocations"),
         ("cs_invocations", "CsInvocations")]


def lines(path):
    return [json.loads(l) for l in open(path) if l.startswith('{')]


truth = {}
for l in lines(sys.argv[1]):
    t = truth.setdefault(l["submission"], {f: 0 for f, _ in STATS})
    for f, _ in STATS:
        t[f] += l[f]
none_lines = lines(sys.argv[2])
spans = {l["submission"]: l["span_ns"] for l in none_lines}
# The report's submissions are the engine's numbers: the program's 0, 1, 2 in order.
report = json.load(open(sys.argv[3]))["commands"]
order = sorted({r["submission"] for r in report})
sums, groups = {}, {}
for r in report:
    s = order.index(r["submission"])
    d = sums.setdefault(s, {c: 0 for _, c in STATS + [("", "GpuTime")]})
    for _, c in STATS + [("", "GpuTime")]:
        d[c] += r["values"].get(c, 0)
    groups[s] = groups.get(s, 0) + (r["values"].get("GpuTime", 0) > 0)
served = {l["submission"]: l for l in lines(sys.argv[4])}
bad = 0
for s in sorted(truth):
    for f, c in STATS:
        if sums[s][c] != truth[s][f]:
            bad += 1
            print("submission", s, c, "driver", truth[s][f], "report", sums[s][c])
        if served[s][f] != truth[s][f]:
            bad += 1
            print("submission", s, f, "driver", truth[s][f], "served query", served[s][f])
    print("submission", s, "measurements", groups[s], "sum GpuTime ns", sums[s]["GpuTime"],
          "program's span ns", int(spans[s]), "ok" if sums[s]["GpuTime"] <= spans[s] else "OVER")
print("statistics compared", 2 * len(truth) * len(STATS), "mismatches", bad)
