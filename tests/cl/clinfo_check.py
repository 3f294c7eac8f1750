#!/usr/bin/env python3
"""clinfo, unmodified, with libtally_cl loaded one way: it must succeed, list
cl_codeplay_performance_counters and cl_khr_create_command_queue, and print
everything else exactly as without the shim.

usage: clinfo_check.py MODE SHIM [SHIM_COPY] [SANITIZER_RUNTIME]
MODE: preload, layer or both."""
import os
import subprocess
import sys

EXTENSIONS = ("cl_codeplay_performance_counters", "cl_khr_create_command_queue")


def run(env):
    done = subprocess.run(["clinfo"], env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        sys.exit(f"clinfo exited with {done.returncode}: {done.stderr}")
    return done.stdout


def without_extension_lines(text):
    """Extension lists change by design; the rest must not."""
    return [line for line in text.splitlines()
            if "Extensions" not in line and not any(e in line for e in EXTENSIONS)]


def main():
    mode, shim = sys.argv[1], sys.argv[2]
    copy = sys.argv[3] if len(sys.argv) > 3 else shim
    runtime = sys.argv[4] if len(sys.argv) > 4 else ""
    base = dict(os.environ)
    for name in ("LD_PRELOAD", "OPENCL_LAYERS"):
        base.pop(name, None)
    plain = run(base)
    env = dict(base)
    preload = [runtime] if runtime else []
    if mode in ("preload", "both"):
        preload.append(shim)
    if mode in ("layer", "both"):
        env["OPENCL_LAYERS"] = copy if mode == "both" else shim
    if preload:
        env["LD_PRELOAD"] = ":".join(preload)
    shimmed = run(env)
    for name in EXTENSIONS:
        if name in plain:
            sys.exit(f"{name} already listed without the shim; the test proves nothing")
        if name not in shimmed:
            sys.exit(f"{name} is not listed with the shim ({mode})")
    if without_extension_lines(plain) != without_extension_lines(shimmed):
        sys.exit("clinfo printed something else besides the extensions")
    print(f"clinfo ({mode}) lists both extensions; all else unchanged")


main()
