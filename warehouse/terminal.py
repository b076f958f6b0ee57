"""What the commands print, for a person at a terminal and for a log (``make baselines > log``):

- :class:`Progress`: a tqdm bar on a terminal; in a log no bar (no carriage-return updates, no bar left
  on the line an error is printed on), each step named by its description as one plain line instead;
- :func:`print_table`: a rich table whole, never a cell cut to ``acq_jso…``: in a log at its natural
  width, on a terminal with long cells folded onto more lines.
"""

from __future__ import annotations

import sys
from typing import IO, Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from tqdm import tqdm


def on_terminal(stream: IO | None = None) -> bool:
    """Whether `stream` (default stderr) is a terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False


class Progress(tqdm):
    """A tqdm bar on stderr when it is a terminal. Elsewhere no bar: the description it starts with, and
    each one set later (:meth:`set_description`, the step being started), is one plain line;
    ``lines=False`` prints nothing instead (a caller that prints its own line per step)."""

    def __init__(
        self,
        iterable: Any = None,
        desc: str | None = None,
        *,
        lines: bool = True,
        file: IO | None = None,
        disable: bool = False,
        **kwargs: Any,
    ) -> None:
        file = sys.stderr if file is None else file
        self.plain = not disable and not on_terminal(file)
        self.plain_file = file if lines else None
        super().__init__(iterable, desc=desc, file=file, disable=disable or self.plain, **kwargs)
        self._plain_line(desc)

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        self._plain_line(desc)
        super().set_description(desc, refresh)

    def _plain_line(self, text: str | None) -> None:
        if self.plain and self.plain_file is not None and text:
            print(text, file=self.plain_file, flush=True)


def print_table(console: Console, table: Table) -> None:
    """Print `table` whole: to a terminal within its width, long cells folded onto more lines; to a file
    or pipe (no width to fit) at the table's natural width."""
    for column in table.columns:
        column.overflow = "fold"
    if console.is_terminal:
        console.print(table)
        return
    natural = Measurement.get(console, console.options.update_width(1_000_000), table).maximum
    width = console.width
    console.width = max(width, natural)
    try:
        console.print(table)
    finally:
        console.width = width
