"""spark-submit's entry to the project's commands:

    spark-submit [SPARK OPTIONS] warehouse/spark/submit.py COMMAND [ARGS]...

runs COMMAND (sherliic-extract, sherliic-export, sherliic-demo, ...: the project's console scripts) as
the driver of the submitted application, so that spark-submit's options and spark-defaults.conf are its
session's (docs/spark.md, "On a cluster"). A file, because spark-submit runs Python files, not modules; in
this folder, because a file's folder comes first on sys.path and nothing here shadows a module (run as a
file, extract/cli.py would put extract/types.py in the place of the standard library's `types`).
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

PREFIX = "sherliic-"


def main(argv: list[str]) -> int:
    commands = {ep.name: ep for ep in entry_points(group="console_scripts") if ep.name.startswith(PREFIX)}
    if not argv or argv[0] not in commands:
        given = f"unknown command {argv[0]!r}; " if argv else ""
        print(f"error: {given}expected one of {', '.join(sorted(commands))}", file=sys.stderr)
        return 2
    return commands[argv[0]].load()(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
