"""Start a command that dies with the process that started it: ``python -m builds.child_guard PARENT_PID
COMMAND...`` asks the kernel (Linux prctl PR_SET_PDEATHSIG) to send this process SIGINT when its parent
dies, even by SIGKILL, then becomes COMMAND (exec: the signal setting survives it). sherliic-dbt starts
dbt so: a dbt whose sherliic-dbt is gone stops instead of publishing a build nobody waits for. Set here,
after the fork, rather than in a ``preexec_fn`` (not safe when the parent has threads)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> None:
    parent, command = int(argv[0]), argv[1:]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGINT) != 0:
        sys.exit(f"child_guard: prctl failed: {os.strerror(ctypes.get_errno())}")
    if os.getppid() != parent:  # the parent died before prctl: nobody would stop the command
        sys.exit(1)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
