#!/usr/bin/python3
"""Ends a program under tally the way users and systems end programs, and
checks what its files hold (issue 33, "nothing lost").

    check_ending_signals.py SIGNAL REPORT TRACE -- PROGRAM ARGS...

The program (tests/exit_paths.h, "until-killed" mode) prints "round N" for
each round of work it finished, one draw each. Once it has said ROUNDS
rounds it is sent SIGNAL (INT, TERM, HUP or KILL); SIGNAL "none" waits for
it to end by itself (its "_exit" mode). Then:

- INT, TERM, HUP: the program ends by that signal, as it would without
  tally; the CSV report holds a whole row, numbered without a gap, for
  every round said before the signal was sent; the trace is whole (a JSON
  trace parses; a Perfetto trace is whole packets to its last byte).
- KILL: nothing can finish the files, but rows reach the file within a
  second: after a second's wait the report holds every round said before
  the wait, each row whole but the last line, and the Perfetto trace is
  whole packets but for its last.
- none: the program exits 0 and its report holds every round it said.
"""
import csv
import json
import os
import signal
import subprocess
import sys
import time

ROUNDS = 20


def fail(message):
    print("check_ending_signals.py: " + message)
    sys.exit(1)


def run(program, signal_name):
    # Signals a shell ignored for a background job come back to their
    # default, so the program meets them as it would at a terminal.
    def default_signals():
        for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGTERM):
            signal.signal(s, signal.SIG_DFL)

    child = subprocess.Popen(program, stdout=subprocess.PIPE, text=True,
                             preexec_fn=default_signals)
    said = 0
    deadline = time.monotonic() + 60
    for line in child.stdout:
        said = int(line.split()[1])
        if signal_name != "none" and said >= ROUNDS:
            break
        if time.monotonic() > deadline:
            child.kill()
            fail("the program said no round for a minute")
    if signal_name == "KILL":
        time.sleep(1.0)  # rows reach the file within a second
    if signal_name != "none":
        child.send_signal(getattr(signal, "SIG" + signal_name))
    try:
        child.wait(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        fail("the program did not end within a minute of SIG%s" % signal_name)
    child.stdout.close()
    return child.returncode, said


def check_report(path, said, whole_to_the_end):
    with open(path, newline="") as f:
        text = f.read()
    if whole_to_the_end and not text.endswith("\n"):
        fail("%s does not end with a whole row" % path)
    lines = text.split("\n")
    if not whole_to_the_end:
        lines = lines[:-1]  # the last line may be cut by the kill
    elif lines[-1] == "":
        lines = lines[:-1]
    rows = list(csv.reader(lines))
    header = rows[0]
    if header[0] != "sequence":
        fail("%s has no header: %r" % (path, header[:3]))
    for number, row in enumerate(rows[1:], start=1):
        if len(row) != len(header):
            fail("%s row %d has %d fields, the header %d" % (path, number, len(row), len(header)))
        if int(row[0]) != number:
            fail("%s row %d is numbered %s: a row is missing" % (path, number, row[0]))
    if len(rows) - 1 < said:
        fail("%s holds %d rows; the program finished %d draws before the signal"
             % (path, len(rows) - 1, said))
    print("%s: %d rows for %d draws said before the end" % (path, len(rows) - 1, said))


def read_varint(data, at):
    value, shift = 0, 0
    while True:
        if at >= len(data):
            return None, at
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def check_perfetto(path, whole_to_the_end):
    """A trace is a sequence of field 1 (TracePacket), each length-delimited."""
    with open(path, "rb") as f:
        data = f.read()
    at, packets = 0, 0
    while at < len(data):
        if data[at] != 0x0A:
            fail("%s: byte %d starts no packet" % (path, at))
        length, body = read_varint(data, at + 1)
        if length is None or body + length > len(data):
            if whole_to_the_end:
                fail("%s: the packet at byte %d is cut short" % (path, at))
            break
        at, packets = body + length, packets + 1
    if packets == 0:
        fail("%s holds no packet" % path)
    print("%s: %d whole packets" % (path, packets))


def check_trace(path, whole_to_the_end):
    if path.endswith(".json"):
        if not whole_to_the_end:
            return  # JSON is written whole: a kill leaves none, or the last whole one
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        if not events:
            fail("%s has no events" % path)
        print("%s: %d events" % (path, len(events)))
    else:
        check_perfetto(path, whole_to_the_end)


def main():
    signal_name, report, trace = sys.argv[1:4]
    if sys.argv[4] != "--":
        fail("usage: check_ending_signals.py SIGNAL REPORT TRACE -- PROGRAM ARGS...")
    program = sys.argv[5:]
    for path in (report, trace):
        if os.path.exists(path):
            os.remove(path)
    os.environ["TALLY_OUTPUT"] = report
    os.environ["TALLY_TRACE"] = trace
    status, said = run(program, signal_name)
    expected = 0 if signal_name == "none" else -getattr(signal, "SIG" + signal_name)
    if status != expected:
        fail("the program ended with %d, not %d as it would without tally" % (status, expected))
    whole = signal_name != "KILL"
    check_report(report, said, whole)
    if not os.path.exists(report[:-len(".csv")] + ".meta.csv"):
        fail("the report has no metadata beside it")
    check_trace(trace, whole)


main()
