#!/usr/bin/env python3
"""Decodes the traces write_traces made with protoc --decode_raw (protobuf's
own decoder, which knows nothing of tally) and checks them against the field
numbers of Perfetto's protos/perfetto/trace/ and the events written.

Usage: check_traces.py WRITE_TRACES DIRECTORY"""
import struct
import subprocess
import sys


def decode(path):
    with open(path, "rb") as f:
        text = subprocess.run(["protoc", "--decode_raw"], stdin=f, capture_output=True,
                              check=True, text=True).stdout
    root, stack = [], []
    node = root
    for line in text.splitlines():
        line = line.strip()
        if line.endswith("{"):
            child = []
            node.append((int(line[:-1].strip()), child))
            stack.append(node)
            node = child
        elif line == "}":
            node = stack.pop()
        else:
            key, value = line.split(": ", 1)
            node.append((int(key), value))
    return root


def get(msg, field, default=None):
    for k, v in msg:
        if k == field:
            return v
    return default


def all_of(msg, field):
    return [v for k, v in msg if k == field]


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def reencode(node):
    """The bytes of a string that --decode_raw took for a message (its text
    happened to parse as one, like "instances"), encoded back."""
    out = bytearray()
    for field, value in node:
        if isinstance(value, list):
            inner = reencode(value)
            out += varint(field << 3 | 2) + varint(len(inner)) + inner
        elif value.startswith('"'):
            inner = value[1:-1].encode().decode("unicode_escape").encode("latin-1")
            out += varint(field << 3 | 2) + varint(len(inner)) + inner
        elif value.startswith("0x") and len(value) == 18:
            out += varint(field << 3 | 1) + struct.pack("<Q", int(value, 16))
        elif value.startswith("0x"):
            out += varint(field << 3 | 5) + struct.pack("<I", int(value, 16))
        else:
            out += varint(field << 3) + varint(int(value))
    return bytes(out)


def string(v):
    if isinstance(v, list):
        return reencode(v).decode()
    assert v.startswith('"') and v.endswith('"'), v
    return v[1:-1]


def double(v):
    return struct.unpack("<d", struct.pack("<Q", int(v, 16)))[0]


class Trace:
    """Packets with their interned names resolved, as trace_processor would."""

    def __init__(self, path):
        self.packets = [p for k, p in decode(path) if k == 1]  # Trace.packet
        assert self.packets, "no packets"
        first = self.packets[0]
        assert get(first, 13) == "1", "the first packet clears the incremental state"
        self.names, self.annotation_names, self.tracks, self.events = {}, {}, {}, []
        for p in self.packets:
            assert get(p, 10) == "1", "every packet is on sequence 1"
            interned = get(p, 12)
            if interned:
                for entry in all_of(interned, 2):
                    self.names[int(get(entry, 1))] = string(get(entry, 2))
                for entry in all_of(interned, 3):
                    self.annotation_names[int(get(entry, 1))] = string(get(entry, 2))
            descriptor = get(p, 60)
            if descriptor:
                self.tracks[int(get(descriptor, 1))] = descriptor
            event = get(p, 11)
            if event:
                if get(event, 10) is not None or get(event, 4) is not None:
                    assert get(p, 13) == "2", "events with interned names need the state"
                self.events.append(self.event(int(get(p, 8)), event))

    def event(self, ts, e):
        uuid = int(get(e, 11))
        assert uuid in self.tracks, "an event on a described track"
        args = {}
        for a in all_of(e, 4):
            name = self.annotation_names[int(get(a, 1))]
            if get(a, 3) is not None:
                args[name] = int(get(a, 3))
            elif get(a, 5) is not None:
                args[name] = double(get(a, 5))
            else:
                args[name] = string(get(a, 6))
        name_iid = get(e, 10)
        value = double(get(e, 44)) if get(e, 44) else None
        if get(e, 30) is not None:
            value = float(int(get(e, 30)))  # counter_value, an int64
        return {"ts": ts, "type": int(get(e, 9)), "track": uuid,
                "name": self.names[int(name_iid)] if name_iid else None, "args": args,
                "value": value}

    def track_named(self, name):
        for uuid, d in self.tracks.items():
            if get(d, 2) and string(get(d, 2)) == name:
                return uuid, d
        raise AssertionError("no track named " + name)


def check_api(path):
    t = Trace(path)
    process = get(t.tracks[1], 3)
    assert string(get(process, 6)) == "writer test"
    queue, queue_d = t.track_named("Queue")
    assert get(queue_d, 5) == "1", "tracks are children of the process track"
    driver, _ = t.track_named("Driver")
    counter, counter_d = t.track_named("GpuTime")
    assert get(counter_d, 8) is not None, "a counter track has a CounterDescriptor"
    slices = [(e["type"], e["name"], e["ts"]) for e in t.events if e["track"] == queue]
    assert slices == [(1, "Submission", 100), (1, "Draw", 100), (2, None, 150), (2, None, 200)], slices
    draw = [e for e in t.events if e["name"] == "Draw"][0]
    assert draw["args"] == {"vertices": 3, "ratio": 1.5}, draw
    frame = [e for e in t.events if e["track"] == driver][0]
    assert (frame["type"], frame["name"], frame["ts"]) == (3, "Frame", 210)
    assert frame["args"] == {"label": "shadow pass"}
    values = [(e["type"], e["ts"], e["value"]) for e in t.events if e["track"] == counter]
    assert values == [(4, 100, 280.0), (4, 150, 0.0), (4, 160, 77.25)], values


def check_device(path):
    t = Trace(path)
    queue, _ = t.track_named("Queue")
    open_slices, draws, submissions = [], [], 0
    for e in (e for e in t.events if e["track"] == queue):
        if e["type"] == 1:
            open_slices.append(e)
        elif e["type"] == 2:
            begin = open_slices.pop()  # ends close the latest begin: the slices nest
            assert e["ts"] >= begin["ts"]
            if begin["name"] == "Draw":
                assert [s["name"] for s in open_slices] == ["Submission"], "draws nest in submissions"
                draws.append(begin["args"]["vertices"])
            else:
                submissions += 1
    assert not open_slices
    assert submissions == 2, submissions
    assert draws == [3, 6, 9, 12, 15] * 2, draws
    vertices, _ = t.track_named("IaVertices")
    starts = [e["value"] for e in t.events if e["track"] == vertices and e["value"]]
    assert starts == [3.0, 6.0, 9.0, 12.0, 15.0] * 2, starts
    t.track_named("GpuBusy")


def main():
    program, directory = sys.argv[1], sys.argv[2]
    subprocess.run([program, directory], check=True)
    check_api(directory + "/api.pftrace")
    check_device(directory + "/device.perfetto-trace")
    print("perfetto traces: ok")


if __name__ == "__main__":
    main()
