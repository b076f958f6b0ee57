"""The read API cannot write (issue 21): every parameter of read_mart / read_sql / open_warehouse attacked
with stacked statements and single writes against a canary table; the documented uses keep working.

The warehouse here is two hand-made tables (warehouse.relations, public.canary) on a database of the
test's own: no dbt build is needed to attack the API."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from warehouse.api import Warehouse, open_warehouse, read_mart, read_sql
from warehouse.query_guard import (
    QueryRefused,
    check_query,
    limit_clause,
    order_by_clause,
    statements,
    where_clause,
)
from warehouse.target import Target

CANARY_ROWS = [(1,), (2,), (3,)]


@pytest.fixture()
def canary(fresh_target: Target) -> Target:
    """A database with the mart warehouse.relations (two rows) and the table public.canary."""
    with fresh_target.connect() as conn:
        conn.execute("create table public.canary (x integer)")
        conn.execute("insert into public.canary values (1), (2), (3)")
        conn.execute("create schema if not exists warehouse")
        conn.execute("create table warehouse.relations (rel_id integer, path text, n_entity_pairs integer)")
        conn.execute("insert into warehouse.relations values (1, 'a___buy___b', 8), (2, 'a___sell___b', 3)")
    return fresh_target


def canary_rows(target: Target) -> list[tuple] | None:
    """The canary's rows, or None when the table is gone."""
    with target.connect() as conn:
        if conn.execute("select to_regclass('public.canary')").fetchone()[0] is None:
            return None
        return conn.execute("select x from public.canary order by x").fetchall()


STACKED = "1=1; delete from public.canary; commit; select 1 --"
ATTACKS = {
    "where": lambda t, tmp: read_mart("relations", where=STACKED, target=t),
    "order_by": lambda t, tmp: read_mart(
        "relations", order_by="rel_id; delete from public.canary; commit; select 1 --", target=t
    ),
    "order_by list": lambda t, tmp: read_mart(
        "relations", order_by=["rel_id", "path; drop table public.canary"], target=t
    ),
    "columns": lambda t, tmp: read_mart(
        "relations", columns=['path" from x; drop table public.canary; --'], target=t
    ),
    "mart name": lambda t, tmp: read_mart("relations; drop table public.canary", target=t),
    "limit": lambda t, tmp: read_mart("relations", limit="1; drop table public.canary", target=t),
    "read_sql stacked": lambda t, tmp: read_sql("drop table public.canary; commit; select 1", target=t),
    "read_sql stacked after a query": lambda t, tmp: read_sql(
        "select 1 as a; delete from public.canary; commit; select 1", target=t
    ),
    "read_sql one write": lambda t, tmp: read_sql("delete from public.canary", target=t),
    "read_sql write in a CTE": lambda t, tmp: read_sql(
        "with gone as (delete from public.canary returning x) select * from gone", target=t
    ),
    "read_sql select into": lambda t, tmp: read_sql(
        "select * into public.copy from public.canary; commit; select 1", target=t
    ),
    "read_sql copy to program": lambda t, tmp: read_sql(
        f"copy (select 1) to program 'touch {tmp / 'pwned'}'", target=t
    ),
    "read_sql copy to program, committed": lambda t, tmp: read_sql(
        f"commit; copy (select 1) to program 'touch {tmp / 'pwned'}'; select 1", target=t
    ),
    "read_sql set read write": lambda t, tmp: read_sql(
        "set transaction read write; delete from public.canary; commit; select 1", target=t
    ),
    "read_sql comment hides a statement": lambda t, tmp: read_sql(
        "select 1 /* ; */ ; delete from public.canary; commit; select 1", target=t
    ),
    "read_sql params": lambda t, tmp: read_sql(
        "select %s as a", ["x'; delete from public.canary; --"], target=t
    ),
}


@pytest.fixture()
def server_writable(tmp_path: Path) -> Iterator[Path]:
    """A folder the database server's own user could write to (the embedded server runs as another user
    when the tests run as root): where a program the server ran would leave its trace."""
    folder = Path(tempfile.mkdtemp(prefix="sherliic-canary-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_no_parameter_of_the_read_api_can_write(canary: Target, server_writable: Path, attack: str) -> None:
    tmp_path = server_writable
    try:
        ATTACKS[attack](canary, tmp_path)
    except Exception:  # refused by the API or by the database (messages: the tests below)
        pass
    assert canary_rows(canary) == CANARY_ROWS, f"{attack}: the canary was written"
    assert not (tmp_path / "pwned").exists(), f"{attack}: a program ran on the server"
    with canary.connect() as conn:
        assert conn.execute("select to_regclass('public.copy')").fetchone()[0] is None


def test_stacked_statements_are_refused_in_one_line(canary: Target) -> None:
    with pytest.raises(QueryRefused, match=r"^where '1=1; delete.*cannot check the text at column 4"):
        read_mart("relations", where=STACKED, target=canary)
    with pytest.raises(QueryRefused, match=r"^order_by 'rel_id; delete"):
        read_mart("relations", order_by="rel_id; delete from public.canary", target=canary)
    with pytest.raises(QueryRefused, match="one query per call; got 3 statements"):
        read_sql("drop table public.canary; commit; select 1", target=canary)
    with pytest.raises(QueryRefused, match="the read API only reads: .* not 'delete'"):
        read_sql("delete from public.canary", target=canary)
    with pytest.raises(QueryRefused, match="not 'copy'"):
        read_sql("/* a comment first */ copy (select 1) to stdout", target=canary)
    with pytest.raises(QueryRefused, match="not 'insert'"):
        read_sql("with x as (select 1 as x) insert into public.canary select x from x", target=canary)


def test_the_database_refuses_what_gets_past_the_checks(canary: Target) -> None:
    """Every read runs in a read-only transaction as a prepared statement: a write hidden in a CTE, and a
    second statement that the client-side split would not see, are refused by Postgres itself."""
    with pytest.raises(Exception, match="read-only transaction"):
        read_sql("with gone as (delete from public.canary returning x) select * from gone", target=canary)
    with open_warehouse(canary) as wh:
        assert wh.read_sql("select current_setting('transaction_read_only') as ro")["ro"][0] == "on"
        wh_connection = wh._connection.connection.dbapi_connection
        with pytest.raises(psycopg.errors.SyntaxError, match="cannot insert multiple commands"):
            with wh_connection.cursor() as cursor:
                cursor.execute("select 1; delete from public.canary")
    assert canary_rows(canary) == CANARY_ROWS


def test_the_documented_uses_still_work(canary: Target) -> None:
    both = read_mart("relations", where="path like %s", params=["%a%"], order_by="rel_id desc", target=canary)
    assert list(both["rel_id"]) == [2, 1]
    one = read_mart(
        "relations",
        columns=["path"],
        where="rel_id = %s and n_entity_pairs > 5 or lower(path) = 'x'",
        params=[1],
        target=canary,
    )
    assert list(one["path"]) == ["a___buy___b"]
    ordered = read_mart("relations", order_by=["n_entity_pairs asc", "path desc nulls last"], target=canary)
    assert list(ordered["rel_id"]) == [2, 1]
    assert list(read_mart("relations", order_by="Rel_ID DESC", limit=1, target=canary)["rel_id"]) == [2]
    assert read_sql(
        "select n_entity_pairs from warehouse.relations where rel_id = %s;", [1], target=canary
    ).to_dict("records") == [{"n_entity_pairs": 8}]
    assert len(read_sql("with r as (select * from warehouse.relations) select * from r", target=canary)) == 2
    with open_warehouse(canary) as wh:
        with pytest.raises(QueryRefused):
            wh.read_sql("delete from public.canary")
        with pytest.raises(Exception, match="division by zero"):
            wh.read_sql("select 1 / 0 as x")
        # each read is a transaction of its own: the connection is usable after an error
        assert len(wh.read_mart("relations")) == 2


def test_what_the_driver_would_refuse_is_refused_before_it(canary: Target) -> None:
    """A % in a quoted value (the driver reads it as a placeholder), placeholders and params that do not
    match, and a limit larger than the engine's integer are the documented QueryRefused or ValueError, not
    a driver error (pandas' DatabaseError)."""
    with pytest.raises(QueryRefused, match=r"quoted value '%buy%' at column 11 holds a %; pass the value"):
        read_mart("relations", where="path like '%buy%'", target=canary)
    with pytest.raises(QueryRefused, match=r"has 1 %s placeholder\(s\) but params gives 0 value"):
        read_mart("relations", where="rel_id = %s", target=canary)
    with pytest.raises(QueryRefused, match=r"has 1 %s placeholder\(s\) but params gives 2 value"):
        read_mart("relations", where="rel_id = %s", params=[1, 2], target=canary)
    with pytest.raises(QueryRefused, match="no where condition to bind them to"):
        read_mart("relations", params=[1], target=canary)
    with pytest.raises(QueryRefused, match="params must be a list of values, got the string 'a'"):
        read_mart("relations", where="path = %s", params="a", target=canary)
    with pytest.raises(ValueError, match="at most 9,223,372,036,854,775,807 on postgres, got 10000"):
        read_mart("relations", limit=10**30, target=canary)
    assert limit_clause(2**63 - 1, "postgres") == f"limit {2**63 - 1}"
    with pytest.raises(ValueError, match="at most 2,147,483,647 on spark"):
        limit_clause(2**31, "spark")
    found = read_mart("relations", where="path like %s", params=["%buy%"], target=canary)
    assert list(found["rel_id"]) == [1]


@pytest.mark.parametrize(
    ("where", "problem"),
    [
        ("rel_id in (select x from canary)", "unknown name 'select'"),
        ("pg_sleep(10) is null", "unknown name 'pg_sleep'"),
        ("rel_id = 1 --\nor pg_sleep(10) is null", "cannot check the text at column 12"),
        ("rel_id = 1 /* */", "cannot check the text"),
        ("path = E'\\x'", "cannot check the text"),
        ('"rel_id" = 1', "cannot check the text"),
        ("path = $$a$$", "cannot check the text"),
        ("rel_id::text = %s", "cannot check the text"),
        ("public.canary.x = 1", "cannot check the text at column 7"),
        ("(rel_id = 1", "unbalanced parentheses"),
        ("rel_id = 1)", "unbalanced parentheses"),
        ("", "where is empty"),
    ],
)
def test_a_condition_is_only_columns_values_and_operators(where: str, problem: str) -> None:
    with pytest.raises(QueryRefused, match=problem.replace("(", r"\(")):
        where_clause(where, ["rel_id", "path"])


def test_order_by_is_columns_and_directions() -> None:
    def quote(name: str) -> str:
        return f'"{name}"'

    assert order_by_clause("score desc, candidate_key", ["score", "candidate_key"], quote) == (
        '"score" desc, "candidate_key"'
    )
    for bad in ("random()", "1", "score desc desc", "score nulls", "score, ", "other", "score; select 1"):
        with pytest.raises(QueryRefused, match="order_by"):
            order_by_clause(bad, ["score", "candidate_key"], quote)


@pytest.mark.parametrize("engine", ["postgres", "spark"])
def test_statements_are_split_as_the_engine_reads_them(engine: str) -> None:
    assert len(statements("select ';' as x -- ; drop\n", engine)) == 1
    assert len(statements("select 1 /* ; /* nested ; */ ; */", engine)) == 1
    assert len(statements("select 1;", engine)) == 1
    # a backslash escapes a quote in Spark's strings, never in Postgres' standard ones
    assert len(statements("select 'a\\'; drop table t; --'", engine)) == (1 if engine == "spark" else 2)
    for query in (
        "select 1; drop table t",
        "drop table t",
        "",
        "with x as (select 1) insert into t select 1",
    ):
        with pytest.raises(QueryRefused):
            check_query(query, engine)
    check_query("(select 1) union all select 2", engine)
    check_query(
        "with recursive x(n) as (select 1 union select n + 1 from x where n < 3) select * from x", engine
    )


class FakeSpark:
    """Stands in for a SparkSession: records every statement it is asked to run (Spark has no read-only
    transactions, so the API's own checks must stop a write before it reaches the session)."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.catalog = self

    def tableExists(self, name: str) -> bool:  # noqa: N802 - pyspark's name
        return name == "warehouse.relations"

    def table(self, name: str):
        return type("Frame", (), {"columns": ["rel_id", "path"]})()

    def sql(self, query: str, args=None):
        self.ran.append(query)
        raise AssertionError(f"reached Spark: {query}")


def test_on_spark_nothing_but_one_query_reaches_the_session() -> None:
    spark = FakeSpark()
    warehouse = Warehouse(Target(engine="spark"), spark)
    for attack in (
        lambda: warehouse.read_sql("drop table warehouse.relations"),
        lambda: warehouse.read_sql("select 1; drop table warehouse.relations"),
        # Spark's strings take backslash escapes: SQL '\'' is one string, then comes a second statement
        lambda: warehouse.read_sql("select '\\''; drop table warehouse.relations"),
        lambda: warehouse.read_mart("relations", where="1=1; drop table warehouse.relations"),
        lambda: warehouse.read_mart("relations", order_by="rel_id; drop table warehouse.relations"),
        lambda: warehouse.read_sql("with x as (select 1) insert into warehouse.relations select 1, 'p'"),
    ):
        with pytest.raises(QueryRefused):
            attack()
    assert spark.ran == []
    with pytest.raises(
        AssertionError, match="reached Spark: select `path` from warehouse.relations where rel_id"
    ):
        warehouse.read_mart("relations", columns=["path"], where="rel_id = %s", params=[1], order_by="path")
    assert spark.ran == ["select `path` from warehouse.relations where rel_id = ? order by `path`"]
