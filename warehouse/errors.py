"""Errors every component reports to the user as one line."""

from __future__ import annotations

import signal
import sys


class InputError(ValueError):
    """Bad input: always names the file, the line and the problem."""

    def __init__(self, file: str, line: int | None, problem: str):
        self.file, self.line, self.problem = file, line, problem
        where = f"{file}:{line}" if line is not None else file
        super().__init__(f"{where}: {problem}")

    def __reduce__(self) -> tuple:
        # picklable (the loader's worker processes send it back as a document's outcome)
        return type(self), (self.file, self.line, self.problem)


class ConfigurationError(ValueError):
    """A setting that cannot work (an environment variable, a flag, a dbt var): one line naming it."""


class DatabaseUnavailable(RuntimeError):
    """The database cannot be reached or started: one line naming the URL (password hidden), the cause
    and what to do."""


def error_message(error: BaseException | str) -> str:
    """The text of a user error: an operating-system error as ``PATH: reason`` (the OS's reason for a
    folder below a regular file, a full disk, a missing permission), anything else as its text."""
    if isinstance(error, OSError) and error.strerror and error.filename is not None:
        where = str(error.filename) + (f" -> {error.filename2}" if error.filename2 is not None else "")
        return f"{where}: {error.strerror}"
    return str(error)


class Interrupted(KeyboardInterrupt):
    """A signal (SIGINT, SIGTERM) stopping a command. A KeyboardInterrupt, so that everything that cleans
    up after Ctrl-C does (psycopg cancels a running query, transactions roll back); the command ends with
    one ``error:`` line and exit code 128 + the signal's number (130, 143)."""

    def __init__(self, signum: int, message: str | None = None):
        self.signum = signum
        self.detailed = message is not None  # says what was stopped (else only the signal)
        super().__init__(message or f"interrupted by {signal.Signals(signum).name}")

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def print_error(error: BaseException | str) -> None:
    """``error: <message>`` on stderr as ONE line, whatever the path length or terminal width (users and
    scripts grep the ``file:line: problem`` form, so the console must never wrap it). Notes added to the
    exception (``add_note``, e.g. the files of a multi-file load not tried) follow, one line each."""
    message = " ".join(error_message(error).splitlines())
    print(f"error: {message}", file=sys.stderr, flush=True)
    for note in getattr(error, "__notes__", ()):
        print(" ".join(str(note).splitlines()), file=sys.stderr, flush=True)
