#!/usr/bin/python3
"""Checks tally's traces as Perfetto and JSON readers see them.

The Perfetto traces are decoded by protobuf's own `protoc --decode` against
tally_trace.proto (Perfetto's messages and field numbers, the part tally
writes), resolved as trace_processor resolves them (packet sequences,
interned data, the incremental clock, GPU counter semantics) and compared
with the per-command report the same run wrote: one render stage per row,
with the row's times, keys and name, and the counters' values the row has.

Usage:
  check_traces.py WRITE_TRACES DIRECTORY
      runs write_traces (tests/perfetto/write_traces.c) and checks its traces
  check_traces.py --run TALLY DIRECTORY PROGRAM [ARGS...]
      runs PROGRAM under `tally run` twice, with a Perfetto trace and with a
      JSON trace and a report each time, and checks them the same way
Both say the bytes per draw of each trace; a Perfetto trace with the
default counters must stay within 160 bytes per draw."""
import bisect
import codecs
import csv
import json
import os
import subprocess
import sys

PROTO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tally_trace.proto")
BYTES_PER_DRAW_BOUND = 160
MONOTONIC, BOOTTIME, ENGINE_STEPS, ENGINE_WHOLE = 3, 6, 64, 65


class Message:
    """A decoded message: its fields in order, by name."""

    def __init__(self):
        self.fields = []

    def all(self, name):
        return [v for k, v in self.fields if k == name]

    def get(self, name, default=None):
        values = self.all(name)
        return values[0] if values else default


def scalar(text):
    if text.startswith('"'):
        return codecs.escape_decode(text[1:-1].encode("latin-1"))[0].decode("utf-8")
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text  # an enum value's name


def decode(path):
    with open(path, "rb") as f:
        text = subprocess.run(["protoc", "--proto_path", os.path.dirname(PROTO),
                               "--decode=tally_trace.Trace", os.path.basename(PROTO)],
                              stdin=f, capture_output=True, check=True).stdout.decode("utf-8")
    root = Message()
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if line.endswith("{"):
            child = Message()
            stack[-1].fields.append((line[:-1].strip(), child))
            stack.append(child)
        elif line == "}":
            stack.pop()
        elif line:
            key, value = line.split(": ", 1)
            stack[-1].fields.append((key, scalar(value)))
    assert len(stack) == 1, "unbalanced decoding"
    return root.all("packet")


class Sequence:
    """A packet sequence's state, as trace_processor keeps it."""

    def __init__(self, sequence_id):
        self.id = sequence_id
        self.default_clock = None
        self.clocks = {}  # clock id -> (timestamp, incremental) of the snapshot
        self.last = None  # the incremental clock's value
        self.specifications, self.contexts, self.event_names, self.annotation_names = \
            {}, {}, {}, {}

    def snapshot(self, snapshot):
        self.clocks = {c.get("clock_id"): (c.get("timestamp", 0), c.get("is_incremental", 0))
                       for c in snapshot.all("clocks")}
        assert snapshot.get("primary_trace_clock") == BOOTTIME, "BOOTTIME is the trace's clock"
        assert MONOTONIC in self.clocks and BOOTTIME in self.clocks, self.clocks
        assert self.clocks[ENGINE_STEPS][1], "clock 64 is incremental"
        assert not self.clocks[ENGINE_WHOLE][1], "clock 65 is whole"
        assert self.clocks[ENGINE_STEPS][0] == self.clocks[ENGINE_WHOLE][0] == 0
        self.last = 0

    def time(self, packet):
        """The packet's time on the engine's clock."""
        clock = packet.get("timestamp_clock_id", self.default_clock)
        assert clock in self.clocks, f"packet on clock {clock} before its snapshot"
        if clock == ENGINE_STEPS:
            self.last += packet.get("timestamp")
            return self.last
        assert clock == ENGINE_WHOLE, clock
        return packet.get("timestamp")

    def intern(self, interned):
        for s in interned.all("gpu_specifications"):
            self.specifications[s.get("iid")] = s
        for c in interned.all("graphics_contexts"):
            self.contexts[c.get("iid")] = c
        for n in interned.all("event_names"):
            self.event_names[n.get("iid")] = n.get("name")
        for n in interned.all("debug_annotation_names"):
            self.annotation_names[n.get("iid")] = n.get("name")


class Trace:
    """Every packet resolved: render stages, counter samples, track events."""

    def __init__(self, path):
        self.size = os.path.getsize(path)
        self.sequences = {}
        self.stages, self.counter_events, self.track_events = [], [], []
        self.tracks = {}
        for packet in decode(path):
            self.read(packet)
        assert len(self.sequences) == 2, "a GPU sequence and a process sequence"

    def sequence_of(self, packet):
        sequence_id = packet.get("trusted_packet_sequence_id")
        assert sequence_id, "every packet is on a sequence"
        flags = packet.get("sequence_flags")
        if sequence_id not in self.sequences:
            assert flags == 1, "a sequence's first packet clears its incremental state"
            self.sequences[sequence_id] = Sequence(sequence_id)
            defaults = packet.get("trace_packet_defaults")
            assert defaults.get("timestamp_clock_id") == ENGINE_STEPS
            self.sequences[sequence_id].default_clock = ENGINE_STEPS
        else:
            assert flags == 2, "later packets read the sequence's state"
        return self.sequences[sequence_id]

    def read(self, packet):
        s = self.sequence_of(packet)
        if packet.get("interned_data"):
            s.intern(packet.get("interned_data"))
        if packet.get("clock_snapshot"):
            s.snapshot(packet.get("clock_snapshot"))
            return
        if packet.get("track_descriptor"):
            d = packet.get("track_descriptor")
            self.tracks[d.get("uuid")] = d
            return
        if packet.get("timestamp") is None:
            return
        ts = s.time(packet)
        if packet.get("gpu_render_stage_event"):
            self.stages.append((ts, s, packet.get("gpu_render_stage_event")))
        elif packet.get("gpu_counter_event"):
            self.counter_events.append((ts, packet.get("gpu_counter_event")))
        elif packet.get("track_event"):
            self.track_events.append((ts, s, packet.get("track_event")))

    def process(self):
        processes = [d for d in self.tracks.values() if d.get("process")]
        assert len(processes) == 1, "one process track"
        return processes[0]

    def track_label(self, uuid):
        """A track's name, or "thread TID" for a thread's own track."""
        d = self.tracks[uuid]
        thread = d.get("thread")
        return f"thread {thread.get('tid')}" if thread else d.get("name")

    def events(self):
        """(track, type, name, ts, args, value) of every TrackEvent."""
        out = []
        for ts, s, e in self.track_events:
            args = {s.annotation_names[a.get("name_iid")]:
                    a.get("uint_value", a.get("double_value", a.get("string_value")))
                    for a in e.all("debug_annotations")}
            value = e.get("counter_value", e.get("double_counter_value"))
            out.append((self.track_label(e.get("track_uuid")), e.get("type"),
                        s.event_names.get(e.get("name_iid")), ts, args, value))
        return out

    def counters(self):
        """The descriptor's specs by id, and each counter's samples in order."""
        assert self.counter_events, "GPU counter events"
        descriptor = self.counter_events[0][1].get("counter_descriptor")
        assert descriptor, "the first GpuCounterEvent carries the descriptor"
        assert all(not e.get("counter_descriptor") for _, e in self.counter_events[1:])
        specs = {s.get("counter_id"): s for s in descriptor.get("specs") and
                 descriptor.all("specs")}
        samples = {i: [] for i in specs}
        for ts, event in self.counter_events:
            for c in event.all("counters"):
                value = c.get("int_value", c.get("double_value"))
                assert value is not None, "a counter has a value"
                samples[c.get("counter_id")].append((ts, value))
        return descriptor, specs, samples


def value_over(samples, begin, end):
    """A GPU counter's value over [begin, end], as trace_processor reads
    samples: a sample's value holds since the counter's previous sample."""
    times = [t for t, _ in samples]
    k = bisect.bisect_left(times, end)
    assert 0 < k < len(samples), f"no sample closes [{begin}, {end}]"
    assert times[k - 1] <= begin, f"[{begin}, {end}] spans a change at {times[k - 1]}"
    return samples[k][1]


def command_name(row):
    return f"{row['label']}: {row['api_name']}" if row["label"] else row["api_name"]


def read_report(path):
    """The rows, and the counters' columns: those after duration_ns."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        columns = reader.fieldnames
    assert rows, "the report has rows"
    return rows, columns[columns.index("duration_ns") + 1:]


EXPECTED_UNITS = {"GpuTime": ["NANOSECOND"], "IaVertices": ["VERTEX"],
                  "IaPrimitives": ["PRIMITIVE"], "ClipperPrimitives": ["PRIMITIVE"],
                  "RasterizedPixels": ["PIXEL"], "ShaderAluInstructions": ["INSTRUCTION"],
                  "DramReadBytes": ["BYTE"], "DramWriteBytes": ["BYTE"], "GpuBusy": ["PERCENT"],
                  "VsInvocations": [], "FsInvocations": [], "CsInvocations": [],
                  "L2CacheMisses": []}


def check_descriptor(descriptor, specs, names):
    assert [specs[i].get("name") for i in sorted(specs)] == names, "a spec per column, in order"
    assert sorted(specs) == list(range(1, len(names) + 1))
    for spec in specs.values():
        name = spec.get("name")
        assert spec.get("description"), name
        if name in EXPECTED_UNITS:
            assert spec.all("numerator_units") == EXPECTED_UNITS[name], (name, spec.fields)
        assert spec.all("groups"), f"{name} has a group"
    blocks = [i for b in descriptor.all("blocks") for i in b.all("counter_ids")]
    assert sorted(blocks) == sorted(specs), "each counter is in one block"
    assert descriptor.get("supports_instrumented_sampling") == "true"


def check_stage(trace, ts, sequence, stage, row):
    where = f"row {row['sequence']}"
    assert stage.get("event_id") == int(row["sequence"]), where
    assert ts == int(row["begin_ns"]), (where, ts)
    assert stage.get("duration") == int(row["duration_ns"]), where
    assert stage.get("submission_id") == int(row["submission"]), where
    assert stage.get("context") == int(row["context"]), where
    extra = {e.get("name"): e.get("value") for e in stage.all("extra_data")}
    assert extra == {"frame": row["frame"], "sequence": row["sequence"]}, (where, extra)
    spec = sequence.specifications[stage.get("stage_iid")]
    assert spec.get("name") == command_name(row), (where, spec.get("name"))
    description = spec.get("description")
    assert description.startswith(f"{row['context_api']} {row['kind']}"), (where, description)
    if row.get("pipeline", "0") != "0":
        assert f"pipeline {row['pipeline']} \"{row['pipeline_name']}\"" in description, \
            (where, description)
        assert f"shaders {row['shader_hash']}" in description, (where, description)
    if row.get("target_width", "0") != "0":
        assert f"target {row['target_width']}x{row['target_height']}" in description, \
            (where, description)
    category = {"draw": "GRAPHICS", "dispatch": "COMPUTE"}.get(row["kind"], "OTHER")
    assert spec.get("category", "OTHER") == category, where
    queue = sequence.specifications[stage.get("hw_queue_iid")]
    assert queue.get("name") and queue.get("iid") != spec.get("iid"), where
    context = sequence.contexts[stage.get("context")]
    assert context.get("pid") == trace.process().get("process").get("pid"), where
    assert context.get("api") == {"vulkan": "VULKAN", "gl": "OPEN_GL",
                                  "opencl": "OPEN_CL"}.get(row["context_api"], "UNDEFINED")


def check_against_report(trace, rows, counters):
    """Render stages are the report's rows; the counters hold its values."""
    assert len(trace.stages) == len(rows), (len(trace.stages), len(rows))
    for (ts, sequence, stage), row in zip(trace.stages, rows):
        check_stage(trace, ts, sequence, stage, row)
    descriptor, specs, samples = trace.counters()
    check_descriptor(descriptor, specs, counters)
    for counter_id, name in enumerate(counters, 1):
        for row in rows:
            begin, end = int(row["begin_ns"]), int(row["end_ns"])
            if end > begin:
                got = value_over(samples[counter_id], begin, end)
                assert float(got) == float(row[name]), (name, row["sequence"], got, row[name])
    # Idle between commands, every counter is 0.
    for before, after in zip(rows, rows[1:]):
        if int(after["begin_ns"]) > int(before["end_ns"]):
            for counter_id in specs:
                got = value_over(samples[counter_id], int(before["end_ns"]),
                                 int(after["begin_ns"]))
                assert got == 0, (counter_id, before["sequence"], got)
    last = max(int(r["end_ns"]) for r in rows)
    assert all(s[-1][0] == last for s in samples.values()), "every value closes at the end"


def check_api_calls(trace, rows):
    """Each submission is an API call on the thread that made it, in the
    program's process, named for the call."""
    pid = trace.process().get("process").get("pid")
    calls = set()
    for track, kind, name, ts, args, value in trace.events():
        if track.startswith("thread ") and "submission" in args:
            assert kind == "TYPE_INSTANT" and name and name != "Submission", (track, name)
            calls.add((int(track.split()[1]), args["submission"]))
    threads = [d.get("thread") for d in trace.tracks.values() if d.get("thread")]
    assert threads and all(t.get("pid") == pid for t in threads), "threads of the process"
    made = {(int(r["tid"]), int(r["submission"])) for r in rows}
    assert made <= calls, sorted(made - calls)[:5]


def draws_of(rows):
    return sum(1 for r in rows if r["kind"] == "draw")


def check_perfetto_run(trace_path, report_path, bound=True):
    rows, counters = read_report(report_path)
    trace = Trace(trace_path)
    check_against_report(trace, rows, counters)
    check_api_calls(trace, rows)
    per_draw = trace.size / draws_of(rows)
    print(f"{trace_path}: {trace.size} bytes, {draws_of(rows)} draws, "
          f"{per_draw:.1f} bytes per draw with {len(counters)} counters")
    if bound:
        assert per_draw <= BYTES_PER_DRAW_BOUND, f"{per_draw:.1f} bytes per draw"
    return trace


def check_json_run(trace_path, report_path):
    """A command is one slice with its row's keys and one counter event."""
    rows, counters = read_report(report_path)
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    slices = [e for e in events if e["ph"] == "X" and "sequence" in e.get("args", {})]
    assert len(slices) == len(rows), (len(slices), len(rows))
    values = {}
    for e in events:
        if e["ph"] == "C" and e["name"] == "GPU":
            values[round(e["ts"] * 1000)] = e["args"]
    for s, row in zip(slices, rows):
        assert s["name"] == command_name(row), (s["name"], row["sequence"])
        assert s["args"] == {"frame": int(row["frame"]), "sequence": int(row["sequence"])}
        assert round(s["ts"] * 1000) == int(row["begin_ns"])
        assert round(s["dur"] * 1000) == int(row["duration_ns"])
        assert not any(k in s["args"] for k in counters), "counters are not repeated per slice"
        held = values[int(row["begin_ns"])]
        assert list(held) == counters, "every counter, in the report's order"
        assert all(float(held[k]) == float(row[k]) for k in counters), row["sequence"]
    last = max(int(r["end_ns"]) for r in rows)
    assert all(v == 0 for v in values[last].values()), "the values drop to 0 at the end"
    size = os.path.getsize(trace_path)
    print(f"{trace_path}: {size} bytes, {draws_of(rows)} draws, "
          f"{size / draws_of(rows):.1f} bytes per draw")


def check_api_perfetto(path):
    t = Trace(path)
    process = t.process()
    pid = process.get("process").get("pid")
    assert process.get("process").get("process_name"), "the process has its program's name"
    assert process.get("uuid") >> 32 == pid, "track uuids carry the pid"
    named = {d.get("name"): d for d in t.tracks.values() if d.get("name")}
    for track in ("Driver", "Queue", "Sampled"):
        assert named[track].get("parent_uuid") == process.get("uuid"), track
    assert named["Sampled"].get("counter") is not None, "a counter track"
    threads = [d.get("thread") for d in t.tracks.values() if d.get("thread")]
    assert len(threads) == 1 and threads[0].get("pid") == pid, "the writer's thread, in its process"
    thread = f"thread {threads[0].get('tid')}"
    events = t.events()
    assert events == [
        ("Queue", "TYPE_SLICE_BEGIN", "Submission", 100, {"vertices": 3}, None),
        ("Queue", "TYPE_SLICE_END", None, 200, {}, None),
        ("Driver", "TYPE_INSTANT", "Frame", 210, {"label": "shadow pass"}, None),
        ("Driver", "TYPE_SLICE_BEGIN", "Call", 220, {"vertices": 3, "ratio": 1.5}, None),
        ("Driver", "TYPE_SLICE_END", None, 230, {}, None),
        (thread, "TYPE_INSTANT", "vkQueueSubmit", 240, {"vertices": 3}, None),
        ("Driver", "TYPE_INSTANT", "glFlush", 250, {}, None),
        ("Sampled", "TYPE_COUNTER", None, 100, {}, 280),  # earlier: written whole
        ("Sampled", "TYPE_COUNTER", None, 150, {}, 0),
        ("Sampled", "TYPE_COUNTER", None, 160, {}, 77.25),
    ], events
    rows = [{"sequence": str(i), "kind": "draw", "api_name": "vkCmdDraw", "context": "1",
             "context_api": "vulkan", "frame": "0", "submission": str(sub), "label": label,
             "begin_ns": str(b), "end_ns": str(e), "duration_ns": str(e - b),
             "IaVertices": v, "GpuBusy": busy}
            for i, sub, label, b, e, v, busy in [
                (1, 1, "", 1000, 1100, "3", "50"), (2, 1, "", 1100, 1300, "6", "50"),
                (3, 2, "post/tonemap", 2000, 2050, "6", "62.5")]]
    check_against_report(t, rows, ["IaVertices", "GpuBusy"])
    _, specs, samples = t.counters()
    assert samples[1] == [(1000, 0), (1100, 3), (1300, 6), (2000, 0), (2050, 6)], samples[1]
    assert samples[2] == [(1000, 0), (1300, 50.0), (2000, 0), (2050, 62.5)], samples[2]


def check_api_json(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    commands = [(e["name"], e["ts"], e["dur"], e["args"]) for e in events
                if e["ph"] == "X" and e["tid"] == 2 and "sequence" in e["args"]]
    assert commands == [("vkCmdDraw", 1.0, 0.1, {"frame": 0, "sequence": 1}),
                        ("vkCmdDraw", 1.1, 0.2, {"frame": 0, "sequence": 2}),
                        ("post/tonemap: vkCmdDraw", 2.0, 0.05, {"frame": 0, "sequence": 3})]
    gpu = [(e["ts"], e["args"]) for e in events if e["ph"] == "C" and e["name"] == "GPU"]
    assert gpu == [(1.0, {"IaVertices": 3, "GpuBusy": 50}), (1.1, {"IaVertices": 6, "GpuBusy": 50}),
                   (1.3, {"IaVertices": 0, "GpuBusy": 0}), (2.0, {"IaVertices": 6, "GpuBusy": 62.5}),
                   (2.05, {"IaVertices": 0, "GpuBusy": 0})], gpu


def run_program(tally, directory, program):
    """The program under tally run, once per trace format."""
    os.makedirs(directory, exist_ok=True)
    for trace, report in (("run.perfetto-trace", "run.csv"), ("run.json", "run_json.csv")):
        subprocess.run([tally, "run", "-q", "-o", os.path.join(directory, report),
                        "-t", os.path.join(directory, trace), "--", *program], check=True)
    check_perfetto_run(os.path.join(directory, "run.perfetto-trace"),
                       os.path.join(directory, "run.csv"))
    check_json_run(os.path.join(directory, "run.json"), os.path.join(directory, "run_json.csv"))


def main():
    if sys.argv[1] == "--run":
        run_program(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        program, directory = sys.argv[1], sys.argv[2]
        os.makedirs(directory, exist_ok=True)
        subprocess.run([program, directory], check=True)
        check_api_perfetto(os.path.join(directory, "api.pftrace"))
        check_api_json(os.path.join(directory, "api.json"))
        check_perfetto_run(os.path.join(directory, "device.perfetto-trace"),
                           os.path.join(directory, "device.csv"))
        check_json_run(os.path.join(directory, "device.json"),
                       os.path.join(directory, "device_json.csv"))
    print("perfetto traces: ok")


if __name__ == "__main__":
    main()
