"""A run of several processes under `tally run` leaves one report per
process with every row, each with its metadata sidecar, and pandas reads
both with no options.

usage: check_run_files.py TALLY WORKDIR   (run with Debian's python3, which
has python3-pandas)

The truths it holds them to are independent of the report writer: the rows
of one `tally demo` run alone, the process ids the shell printed, and the
units and kinds `tally list` prints.
"""
import datetime
import glob
import os
import shutil
import subprocess
import sys

import pandas


def run(args, **kwargs):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs)


def list_kinds(tally):
    """SYMBOL -> (UNIT, KIND) from `tally list`."""
    lines = run([tally, "list"]).stdout.splitlines()
    kinds = {}
    for line in lines[1:]:
        fields = line.split()
        if len(fields) >= 3:
            kinds[fields[0]] = (fields[-3], fields[-1])
    return kinds


def check_metadata(path, tally, pid, kinds):
    meta = pandas.read_csv(path)  # no options: the sidecar is plain CSV
    assert list(meta.columns) == ["key", "value"], meta.columns
    values = dict(zip(meta.key, meta.value.astype(str)))
    assert values["backend"] == "simgpu", values
    assert values["clock"] == "virtual", values  # tally demo runs on the virtual clock
    assert values["program"] == tally, values["program"]
    assert values["arguments"] == "demo", values["arguments"]
    assert values["pid"] == str(pid), (values["pid"], pid)
    start = datetime.datetime.strptime(values["start_utc"][:19], "%Y-%m-%dT%H:%M:%S")
    now = datetime.datetime.utcnow()
    assert abs((now - start).total_seconds()) < 600, (start, now)
    return values


def check_report(path, rows, tally, kinds):
    report = pandas.read_csv(path)  # no options
    assert len(report) == rows, (path, len(report), rows)
    assert list(report.sequence) == list(range(1, rows + 1)), path
    pid = int(os.path.basename(path).split(".")[1])
    values = check_metadata(path[: -len(".csv")] + ".meta.csv", tally, pid, kinds)
    counters = list(report.columns[report.columns.get_loc("duration_ns") + 1 :])
    assert counters, report.columns
    for symbol in counters:
        unit, kind = kinds[symbol]
        assert values[f"counter.{symbol}.unit"] == unit, (symbol, unit)
        if kind == "derived":
            assert values[f"counter.{symbol}.derived"] == "true", symbol
        else:
            assert values[f"counter.{symbol}.exactness"] == kind, (symbol, kind)
            assert values[f"counter.{symbol}.derived"] == "false", symbol
    return pid


def main():
    tally, workdir = os.path.abspath(sys.argv[1]), sys.argv[2]
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    env = dict(os.environ, TALLY_OUTPUT=os.path.join(workdir, "alone.csv"))
    run([tally, "demo"], env=env)
    rows = len(pandas.read_csv(os.path.join(workdir, "alone.csv")))
    assert rows > 0

    # Two processes of one shell script, each printing its pid first.
    demo = f'sh -c \'echo $$; exec "{tally}" demo >/dev/null\''
    script = f"{demo}; {demo}"
    done = run([tally, "run", "-o", "m.csv", "--", "sh", "-c", script], cwd=workdir)
    pids = sorted(int(line) for line in done.stdout.splitlines() if line.isdigit())
    assert len(pids) == 2, done.stdout
    reports = sorted(glob.glob(os.path.join(workdir, "m.*[0-9].csv")))
    assert len(reports) == 2, reports
    kinds = list_kinds(tally)
    seen = sorted(check_report(path, rows, tally, kinds) for path in reports)
    assert seen == pids, (seen, pids)
    for path in reports:
        assert path in done.stderr and f"({rows} rows)" in done.stderr, done.stderr
    assert not os.path.exists(os.path.join(workdir, "m.csv"))

    # One process: its report takes the name asked for, with its sidecar.
    done = run([tally, "run", "-o", "one.csv", "--", tally, "demo"], cwd=workdir)
    one = os.path.join(workdir, "one.csv")
    assert len(pandas.read_csv(one)) == rows
    assert os.path.exists(os.path.join(workdir, "one.meta.csv"))
    assert f"per-command report: {one} ({rows} rows)" in done.stderr, done.stderr
    print("ok")


if __name__ == "__main__":
    main()
