"""SIGINT and SIGTERM as clean stops of a command (:func:`stop_on_signals`, installed by
:func:`warehouse.command_line.run` for the commands that load), and the few steps no signal may cut in
two (:func:`deferred`: the commit of a batch).

A stop is an :class:`~warehouse.errors.Interrupted` raised in the main thread: a KeyboardInterrupt, so
psycopg cancels a running query and transactions roll back on the way out; the command prints one line
and exits with 128 + the signal's number.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from warehouse.errors import Interrupted

_deferring: list[bool] = []  # inside deferred() (main thread)
_pending: list[int] = []  # a signal that came during deferred(), raised at its end


@contextmanager
def stop_on_signals(signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """While the block runs, SIGINT and SIGTERM stop the command: the first raises Interrupted in the
    main thread (at the end of a :func:`deferred` block if one is running), a second one ends the
    process at once (the kernel closes its database connections, so the server rolls back whatever was
    open). Installed even when the signal was inherited as ignored (a background job of a script):
    ``kill -INT`` stops a load as Ctrl-C does. Main thread only; the previous handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        if received:  # the first one's cleanup is running: stop now
            os.write(2, f"error: {signal.Signals(signum).name} again: stopped at once\n".encode())
            os._exit(128 + signum)
        received.append(signum)
        if _deferring:
            _pending.append(signum)
            return
        raise Interrupted(signum)

    previous = {signum: signal.signal(signum, handler) for signum in signums}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        _pending.clear()


@contextmanager
def deferred() -> Iterator[None]:
    """A block that a stop signal does not cut (e.g. a COMMIT): a signal arriving meanwhile raises its
    Interrupted when the block ends (unless the block ends with an error of its own)."""
    _deferring.append(True)
    try:
        yield
    finally:
        _deferring.pop()
    if _pending and not _deferring:
        raise Interrupted(_pending.pop())
