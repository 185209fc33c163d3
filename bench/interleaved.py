"""Interleaved runs of commands over one input, for the log benchmarks (log_scan.sh,
explain_log.sh): each command's median wall time and peak RSS in the same run."""
import os
import statistics
import subprocess
import sys
import time

GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
RSS_SOURCE = "/usr/bin/time -f %M" if GNU_TIME else "wait4 rusage"


def run(argv, sink, scratch):
    """Wall seconds and peak RSS (KiB) of one run, stdout to sink (grep's must be a real file: GNU
    grep stops at the first match when its output is /dev/null). Peak RSS comes from
    /usr/bin/time -f %M when present (a child of this Python would report Python's own size from
    before exec), else from wait4's rusage. Exit status 0 or 1 is success (grep: no match)."""
    wrapped = [GNU_TIME, "-f", "%M", "-o", scratch + ".rss"] + argv if GNU_TIME else argv
    with open(sink, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{argv[0]} failed ({code}): {err}")
    peak = usage.ru_maxrss
    if GNU_TIME:
        with open(scratch + ".rss") as f:
            peak = int(f.read().split()[-1])
    return wall, peak


def measure(commands, runs, scratch, warm="cat"):
    """commands: name -> (argv, stdout sink). One run of `warm` fills the page cache; then each
    command runs `runs` times, interleaved so that load changes hit all alike. Returns the median
    wall seconds and the peak RSS (KiB) of each name."""
    run(*commands[warm], scratch)
    times = {name: [] for name in commands}
    rss = {name: 0 for name in commands}
    for _ in range(runs):
        for name, (argv, sink) in commands.items():
            wall, peak = run(argv, sink, scratch)
            times[name].append(wall)
            rss[name] = max(rss[name], peak)
    return {name: statistics.median(v) for name, v in times.items()}, rss
