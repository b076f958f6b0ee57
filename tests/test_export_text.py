"""The export's Spark path writes values exactly as Postgres' COPY does (text and csv formats), so the
release files are the same whichever engine built the marts."""

from __future__ import annotations

import random

from release.export import _csv_value, _text_value, postgres_float
from warehouse.target import Target


def copy_out(target: Target, query: str, options: str) -> list[str]:
    with target.connect() as conn, conn.cursor().copy(f"copy ({query}) to stdout with ({options})") as copy:
        return b"".join(bytes(chunk) for chunk in copy).decode().splitlines()


def test_doubles_print_as_postgres_prints_them(db_target):
    rng = random.Random(11)
    values = [0.0, -0.0, 3.0, 0.1, 1e14, 1e15, 123456789012345.6, 1e-4, 1e-5, 1.2345e-5, 1 / 3, 1e300, -2.5]
    values += [rng.uniform(-1, 1) * 10 ** rng.randint(-12, 20) for _ in range(2000)]
    values += [float(rng.randint(0, 10**17)) for _ in range(200)]
    literal = ",".join(f"{v!r}::float8" for v in values)
    printed = copy_out(db_target, f"select unnest(array[{literal}])", "format text")
    assert [postgres_float(v) for v in values] == printed
    assert [postgres_float(v) for v in (float("nan"), float("inf"), -float("inf"))] == [
        "NaN",
        "Infinity",
        "-Infinity",
    ]


def test_text_and_csv_values_match_copy(db_target):
    texts = ["plain", "tab\there", 'quote"d', "new\nline", "back\\slash", "", "cr\rx", None]
    query = "select t from unnest(%s) with ordinality as u(t, i) order by i"
    with db_target.connect() as conn:
        literal = conn.execute("select %s::text[]::text", (texts,)).fetchone()[0]
    quoted = literal.replace("'", "''")
    query = f"select t from unnest('{quoted}'::text[]) with ordinality as u(t, i) order by i"
    text_lines = copy_out(db_target, query, "format text")
    assert [_text_value(t) for t in texts] == text_lines
    with (
        db_target.connect() as conn,
        conn.cursor().copy(f"copy ({query}) to stdout with (format csv, delimiter E'\\t')") as copy,
    ):
        csv_text = b"".join(bytes(chunk) for chunk in copy).decode()
    assert "".join(_csv_value(t) + "\n" for t in texts) == csv_text
