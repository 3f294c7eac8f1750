"""Compares tally's driver-backend report of vk_workload with the program's own
lines without the layer (the driver's statistics), as tests/layer/test_layer_driver.c does."""
import json, sys
truth = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
lines = [json.loads(l) for l in open(sys.argv[2]) if l.startswith('{')]
report = json.load(open(sys.argv[3]))['commands']
stats = [("ia_vertices","IaVertices"),("ia_primitives","IaPrimitives"),("vs_invocations","VsInvocations"),
         ("gs_invocations","GsInvocations"),("gs_primitives","GsPrimitives"),("clipper_invocations","ClipperInvocations"),
         ("clipper_primitives","ClipperPrimitives"),("fs_invocations","FsInvocations"),("tcs_patches","TessControlPatches"),
         ("tes_invocations","TessEvalInvocations"),("cs_invocations","CsInvocations")]
owner = []
for i, l in enumerate(lines):
    owner += [i] * l["records"]
assert len(owner) == len(report), (len(owner), len(report))
sums = [dict() for _ in lines]
for r, i in zip(report, owner):
    for k, v in r["values"].items():
        sums[i][k] = sums[i].get(k, 0) + v
bad = 0
for i, (t, s, l) in enumerate(zip(truth, sums, lines)):
    for f, c in stats:
        if s[c] != t[f] or l[f] != t[f]:
            bad += 1
            print("line", i, t["api"], f, "driver", t[f], "report", s[c], "program under layer", l[f])
print("commands", len(lines), "records", len(report), "statistics compared", len(lines) * len(stats), "mismatches", bad)
subs = {}
for r, i in zip(report, owner):
    subs.setdefault(r["submission"], [0, lines[i]["span_ns"], 0])
    subs[r["submission"]][0] += r["values"]["GpuTime"]
    subs[r["submission"]][2] += 1
for s, (total, span, n) in sorted(subs.items()):
    print("submission", s, "commands", n, "sum GpuTime ns", total, "program's span ns", int(span), "ok" if total <= span else "OVER")
zero = [i for i, s in enumerate(sums) if s["GpuTime"] == 0]
print("commands with GpuTime 0:", zero)
print("per-command GpuTime ns:", [s["GpuTime"] for s in sums])
