"""Run a command, SIGKILL it at a chosen moment, and report which of its descendants outlive it and for how
long (tests/test_faults.py).

    python -m tests.orphans MOMENT COMMAND...   # prints one JSON object

This process is a subreaper (Linux PR_SET_CHILD_SUBREAPER): every orphan of the command, grandchildren
included, becomes its child, so it sees each one end and reaps it (a zombie has ended). MOMENT is a state of
the command, not a delay: ``first_child`` (the command has forked one child: a pool spawning its workers),
``two_children`` (it has two), ``working`` (two children for a second), ``child:NAME`` (a child runs the
program NAME).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
BOUND = 30.0  # seconds the descendants are watched after the kill
WAIT = 120.0  # seconds for the moment to come


def children(pid: int) -> dict[int, str]:
    """The living (not zombie) children of `pid`: pid -> name."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            name, rest = stat.split("(", 1)[1].rsplit(")", 1)
            state, parent = rest.split()[:2]
            if int(parent) == pid and state != "Z":
                found[int(entry)] = name
    return found


def reap() -> None:
    """Reap every child that has ended."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main(moment: str, command: list[str]) -> dict:
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wanted = 1 if moment == "first_child" else 2
    deadline, since = time.monotonic() + WAIT, None
    while True:
        seen = children(process.pid)
        if moment.startswith("child:"):
            if moment.removeprefix("child:") in seen.values():
                break
        elif len(seen) >= wanted:
            since = since or time.monotonic()
            if moment != "working" or time.monotonic() - since >= 1.0:
                break
        if process.poll() is not None or time.monotonic() > deadline:
            return {"moment": None, "exit": process.returncode}
        time.sleep(0.002)
    process.kill()
    process.wait()
    killed = time.monotonic()
    left = children(os.getpid())
    while left and time.monotonic() - killed < BOUND:
        time.sleep(0.01)
        reap()
        left = children(os.getpid())
    report = {
        "moment": moment,
        "descendants": sorted(seen.values()),
        "left": sorted(left.values()),
        "seconds": round(time.monotonic() - killed, 3),
    }
    for pid in left:  # the test's cleanup: nothing it started stays behind
        os.kill(pid, signal.SIGKILL)
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2:])))
