"""RenderDoc over tally (label "client"): a vkcube frame captured by
RenderDoc 1.24 while vkcube runs under `tally run`, then replayed with
RenderDoc's Python module under `tally run`, where RenderDoc offers tally's
VK_KHR_performance_query counters per event and fetches them for the cube's
draw. The replay is the case the preload shims once broke: librenderdoc.so
finds its replay marker with dlsym(RTLD_DEFAULT) from the Python module's
RTLD_LOCAL group, and the shims' dlsym searched from tally instead.

Run with Debian's python3 (python3-renderdoc):
  renderdoc_check.py TALLY WORKDIR XVFB_SERVER_NUMBER
"""
import json
import os
import platform
import signal
import subprocess
import sys
import time

# lavapipe's manifest is named for the CPU it runs on (RenderDoc runs natively).
VK_ENV = {"VK_DRIVER_FILES": f"/usr/share/vulkan/icd.d/lvp_icd.{platform.machine()}.json"}


def capture(tally, template):
    """Runs `tally run -- vkcube` injected with RenderDoc and captures one
    frame through RenderDoc's target control; prints the capture's path."""
    import renderdoc as rd

    opts = rd.GetDefaultCaptureOptions()
    opts.hookIntoChildren = True  # tally run forks vkcube
    env = [rd.EnvironmentModification(rd.EnvMod.Set, rd.EnvSep.NoSep, k, v)
           for k, v in VK_ENV.items()]
    result = rd.ExecuteAndInject(tally, os.getcwd(), "run --quiet -- vkcube --c 2000", env,
                                 template, opts, False)
    if result.result != rd.ResultCode.Succeeded:
        sys.exit("RenderDoc could not launch tally run: %s" % result.result)
    deadline = time.time() + 120
    while time.time() < deadline:
        ident = rd.EnumerateRemoteTargets("", 0)
        while ident:
            target = rd.CreateTargetControl("", ident, "tally-ci", True)
            if target and "vkcube" in target.GetTarget():
                path = capture_from(rd, target, deadline)
                pid = target.GetPID()
                target.Shutdown()
                os.kill(pid, signal.SIGTERM)  # the frame is all we need
                print(path)
                return
            if target:
                target.Shutdown()
            ident = rd.EnumerateRemoteTargets("", ident)
        time.sleep(0.2)
    sys.exit("vkcube never appeared as a RenderDoc target")


def capture_from(rd, target, deadline):
    while not target.GetAPI() and time.time() < deadline:
        target.ReceiveMessage(None)  # until vkcube created its device
    target.TriggerCapture(1)
    while time.time() < deadline:
        message = target.ReceiveMessage(None)
        if message.type == rd.TargetControlMessageType.NewCapture:
            return message.newCapture.path
        if message.type == rd.TargetControlMessageType.Disconnected:
            break
    sys.exit("RenderDoc made no capture")


def replay(path):
    """Replays a capture and prints, as JSON, the Vulkan-extended counters
    RenderDoc offers and their values for the capture's draws."""
    import renderdoc as rd

    rd.InitialiseReplay(rd.GlobalEnvironment(), [])
    capture_file = rd.OpenCaptureFile()
    if capture_file.OpenFile(path, "", None) != rd.ResultCode.Succeeded:
        sys.exit("cannot open " + path)
    status, controller = capture_file.OpenCapture(rd.ReplayOptions(), None)
    if status != rd.ResultCode.Succeeded:
        sys.exit("cannot replay %s: %s" % (path, status))
    first, last = int(rd.GPUCounter.FirstVulkanExtended), int(rd.GPUCounter.LastVulkanExtended)
    counters = [c for c in controller.EnumerateCounters() if first <= int(c) <= last]
    described = {int(c): controller.DescribeCounter(c) for c in counters}

    def walk(actions):
        for action in actions:
            yield action
            yield from walk(action.children)

    draws = [a for a in walk(controller.GetRootActions()) if a.flags & rd.ActionFlags.Drawcall]
    values = {}
    for result in controller.FetchCounters(counters):
        d = described[int(result.counter)]
        value = result.value.u64 if d.resultType == rd.CompType.UInt else result.value.d
        values.setdefault(str(result.eventId), {})[d.name] = value
    print(json.dumps({
        "counters": sorted(d.name for d in described.values()),
        "draws": [{"event": a.eventId, "name": a.GetName(controller.GetStructuredFile()),
                   "vertices": a.numIndices} for a in draws],
        "values": values,
    }))
    controller.Shutdown()
    capture_file.Shutdown()
    rd.ShutdownReplay()


def catalogue_names(tally):
    """The NAME column of `tally list`'s table: what VK_KHR_performance_query
    calls each counter."""
    lines = subprocess.run([tally, "list"], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    start, end = lines[0].index("NAME"), lines[0].index("GROUP")
    table = lines[1:lines.index("")] if "" in lines else lines[1:]  # notes follow a blank line
    return sorted(line[start:end].strip() for line in table)


def check(tally, workdir, server):
    os.makedirs(workdir, exist_ok=True)
    os.chdir(workdir)
    env = dict(os.environ, **VK_ENV)
    env.pop("DISPLAY", None)
    made = subprocess.run(["xvfb-run", "-a", "-n", server, sys.executable, __file__, "capture",
                           tally, os.path.join(workdir, "vkcube")],
                          env=env, capture_output=True, text=True, timeout=300)
    paths = [line for line in made.stdout.splitlines() if line.endswith(".rdc")]
    if not paths or not os.path.exists(paths[-1]):
        sys.exit("no capture:\n" + made.stdout + made.stderr)
    replayed = subprocess.run([tally, "run", "--quiet", "--", sys.executable, __file__, "replay",
                               paths[-1]], env=env, capture_output=True, text=True, timeout=300)
    if replayed.returncode != 0:
        sys.exit("the replay under tally run failed (exit %d):\n%s%s"
                 % (replayed.returncode, replayed.stdout, replayed.stderr))
    found = json.loads(replayed.stdout.strip().splitlines()[-1])
    expected = catalogue_names(tally)
    if found["counters"] != expected:
        sys.exit("RenderDoc offers %s\nnot tally's %s" % (found["counters"], expected))
    draws = found["draws"]
    if len(draws) != 1 or draws[0]["vertices"] != 36:
        sys.exit("not vkcube's one draw of 36 vertices: %s" % draws)
    values = found["values"].get(str(draws[0]["event"]), {})
    want = {"Draw calls": 1, "Input assembly vertices": 36, "Input assembly primitives": 12,
            "Vertex shader invocations": 36}
    got = {name: values.get(name) for name in want}
    if got != want:
        sys.exit("the draw's counters are %s, not %s" % (got, want))
    print("RenderDoc replayed the vkcube frame under tally: %d counters, draw %s" % (
        len(found["counters"]), got))


if __name__ == "__main__":
    if sys.argv[1] == "capture":
        capture(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "replay":
        replay(sys.argv[2])
    else:
        check(sys.argv[1], sys.argv[2], sys.argv[3])
