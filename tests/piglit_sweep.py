"""A broad, bounded sweep of piglit's GL, GLES, EGL and CL tests, run as they
are and under `tally run` (label "client"). tally's promise is that the
shims change nothing a program observes: every result that differs between
the two runs is a failure, except the four tests of the counter extensions
the shims add (GL_AMD_performance_monitor's api, vc4 and measure,
GL_INTEL_performance_query's issue_2235), which go from skip to pass, and
must.

The selection is deterministic: every test of quick_gl whose name is an
EGL, GLES or counter test, every GL_STRIDE-th of the rest (sorted by name);
every CL test but program@execute, and every CL_STRIDE-th of those. Both
runs go through `piglit run` on Xvfb (GLX, and X11 EGL for the EGL tests),
two tests at a time. A test whose results differ is run again, one at a
time, both ways: only a difference that holds counts (Xvfb refuses a
connection now and then, with or without tally).

  piglit_sweep.py TALLY WORKDIR XVFB_SERVER_NUMBER [GL_STRIDE CL_STRIDE]
"""
import bz2
import glob
import json
import lzma
import os
import shutil
import subprocess
import sys

COUNTER_TESTS = ("spec@amd_performance_monitor@", "spec@intel_performance_query@")
MUST_STAY = ("api@clgetkernelarginfo",)


def names(profile):
    out = subprocess.run(["piglit", "print-cmd", profile], check=True, capture_output=True,
                         text=True).stdout
    return sorted(line.split(" ::: ")[0] for line in out.splitlines() if " ::: " in line)


def is_gles_or_egl(name):
    lowered = name.lower()
    return (lowered.startswith("spec@egl") or "opengl es" in lowered or "gles" in lowered
            or "_es2" in lowered or "_es3" in lowered or "es3_" in lowered)


def selection(gl_stride, cl_stride):
    """The GL and the CL tests of the sweep, each list sorted."""
    gl = names("quick_gl")
    picked = [n for n in gl if n.startswith(COUNTER_TESTS) or is_gles_or_egl(n)]
    chosen = set(picked)
    picked += [n for n in gl if n not in chosen][::gl_stride]
    cl = names("quick_cl")
    executes = [n for n in cl if n.startswith("program@execute@")]
    others = [n for n in cl if not n.startswith("program@execute@")]
    return {"quick_gl": sorted(set(picked)), "quick_cl": sorted(others + executes[::cl_stride])}


def run_profile(tally, workdir, server, profile, tests, label, with_tally, jobs):
    listing = os.path.join(workdir, f"{label}-{profile}.txt")
    with open(listing, "w") as f:
        f.write("\n".join(tests) + "\n")
    results = os.path.join(workdir, f"{label}-{profile}")
    shutil.rmtree(results, ignore_errors=True)
    piglit = ["piglit", "run", "-p", "glx", "-j", str(jobs), "-l", "quiet", "--timeout", "180",
              "--test-list", listing, profile, results]
    if with_tally:
        piglit = [tally, "run", "--quiet", "--"] + piglit
    env = dict(os.environ, TALLY_OUTPUT="", TALLY_TRACE="")
    env.pop("DISPLAY", None)
    # -noreset: piglit's tests come and go two at a time, and Xvfb refuses a
    # client that connects while it resets after the last one left.
    xvfb = ["xvfb-run", "-a", "-n", str(server), "-s", "-screen 0 1024x768x24 -noreset"]
    subprocess.run(xvfb + piglit,
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)
    found = glob.glob(os.path.join(results, "results.json*"))
    if not found:
        sys.exit(f"piglit wrote no results for the {label} run of {profile}")
    opener = bz2.open if found[0].endswith(".bz2") else lzma.open if found[0].endswith(".xz") else open
    with opener(found[0], "rt") as f:
        return json.load(f)["tests"]


def run(tally, workdir, server, tests, label, with_tally, jobs):
    """Every result of the run by name, subtests as test@subtest."""
    outcome = {}
    for profile, listed in tests.items():
        if not listed:
            continue
        found = run_profile(tally, workdir, server, profile, listed, label, with_tally, jobs)
        for name, test in found.items():
            outcome[name] = test["result"]
            for sub, result in test.get("subtests", {}).items():
                outcome[name + "@" + sub] = result
    return outcome


def differences(base, shim):
    return {n: (base.get(n, "notrun"), shim.get(n, "notrun"))
            for n in set(base) | set(shim) if base.get(n, "notrun") != shim.get(n, "notrun")}


def allowed(name, change):
    return name.startswith(COUNTER_TESTS) and change[0] in ("skip", "notrun") and change[1] == "pass"


def main():
    tally, workdir, server = sys.argv[1], sys.argv[2], int(sys.argv[3])
    gl_stride = int(sys.argv[4]) if len(sys.argv) > 4 else 12
    cl_stride = int(sys.argv[5]) if len(sys.argv) > 5 else 16
    os.makedirs(workdir, exist_ok=True)
    tests = selection(gl_stride, cl_stride)
    every = tests["quick_gl"] + tests["quick_cl"]
    base = run(tally, workdir, server, tests, "without", False, 2)
    shim = run(tally, workdir, server + 1, tests, "with", True, 2)
    changed = differences(base, shim)
    suspects = {top_level(n, every) for n, c in changed.items() if not allowed(n, c)}
    held = {}
    if suspects:  # again, one at a time: only what holds counts
        again_tests = {p: [t for t in listed if t in suspects] for p, listed in tests.items()}
        base_again = run(tally, workdir, server + 2, again_tests, "without-again", False, 1)
        shim_again = run(tally, workdir, server + 3, again_tests, "with-again", True, 1)
        again = differences(base_again, shim_again)
        held = {n: c for n, c in changed.items() if not allowed(n, c) and n in again}
    failures = [f"{n}: {c[0]} without tally, {c[1]} under tally run" for n, c in sorted(held.items())]
    for name in every:
        if name.startswith(COUNTER_TESTS) and shim.get(name) != "pass":
            failures.append(f"{name}: {shim.get(name)} under tally run, where the shims offer "
                            f"its extension")
    for name in MUST_STAY:
        if name in every and (base.get(name), shim.get(name)) != ("pass", "pass"):
            failures.append(f"{name}: {base.get(name)} without tally, {shim.get(name)} with")
    counts = {}
    for result in base.values():
        counts[result] = counts.get(result, 0) + 1
    print(f"piglit sweep: {len(every)} tests, {len(base)} results with subtests "
          f"({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}); "
          f"{len(changed)} differed in the first runs, {len(held)} held when run again")
    for n, c in sorted(changed.items()):
        print(f"  {n}: {c[0]} -> {c[1]}" + (" (allowed)" if allowed(n, c) else ""))
    if failures:
        sys.exit("changed by tally:\n  " + "\n  ".join(failures))


def top_level(name, tests):
    """The test a result belongs to (a subtest's name extends its test's)."""
    best = None
    for t in tests:
        if name == t or name.startswith(t + "@"):
            if best is None or len(t) > len(best):
                best = t
    return best or name


if __name__ == "__main__":
    main()
