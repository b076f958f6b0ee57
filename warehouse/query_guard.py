"""What the read API (warehouse/api.py) lets through: one query per call, and the filters (``where``) and
orders (``order_by``) of a mart that it can check, on either engine.

    check_query("select 1; drop table t", "postgres")       # QueryRefused: one statement per call
    where_clause("alignment = %s and score > 0.5", columns)  # the condition, every name checked
    check_params("alignment = %s", ["crossed"])               # one value per %s placeholder
    order_by_clause("score desc, candidate_key", columns, quote)
    limit_clause(10, "postgres")                              # "limit 10": a count the engine takes

The databases enforce the rest: on Postgres every read runs in a read-only transaction as a prepared
statement (the server refuses a second statement). Spark has no read-only transactions, so there these
checks are what keeps a read from writing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence

# what a statement that only reads starts with (a `with`: its main statement); a write inside a CTE fails
# in Postgres' read-only transaction
QUERY_KEYWORDS = frozenset({"select", "values", "table", "show", "explain"})
WRITES = ("insert", "update", "delete", "merge")
# the words a `where` condition may use besides the mart's columns, and the functions it may call: the
# SQL both engines share, nothing that reads another table or has an effect
CONDITION_KEYWORDS = frozenset(
    {
        "and", "or", "not", "is", "null", "true", "false", "like", "ilike", "in", "between", "distinct",
        "from", "case", "when", "then", "else", "end",
    }
)  # fmt: skip
CONDITION_FUNCTIONS = frozenset(
    {"lower", "upper", "length", "abs", "coalesce", "nullif", "round", "greatest", "least"}
)
DIRECTIONS = ("asc", "desc")
# the largest LIMIT each engine takes: Postgres a bigint, Spark an int
LIMIT_MAX = {"postgres": 2**63 - 1, "spark": 2**31 - 1}


class QueryRefused(ValueError):
    """SQL the read API does not run: not a query, more than one statement, or a filter or order whose
    every part it cannot check."""


# -- whole queries (read_sql) ------------------------------------------------------------------------------
def _skip_quoted(sql: str, start: int, quote: str, backslash: bool) -> int:
    """The index after the quoted text opening at `start` (a doubled quote stays inside; with `backslash`
    a backslash escapes the next character); len(sql) when it never closes."""
    i = start + 1
    while i < len(sql):
        char = sql[i]
        if backslash and char == "\\":
            i += 2
            continue
        if char == quote:
            if i + 1 < len(sql) and sql[i + 1] == quote:
                i += 2
                continue
            return i + 1
        i += 1
    return len(sql)


def _skip_block_comment(sql: str, start: int) -> int:
    """The index after the /* comment */ opening at `start` (nested comments count, as on both engines)."""
    depth, i = 0, start
    while i < len(sql):
        if sql.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif sql.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return len(sql)


def _in_word(sql: str, i: int) -> bool:
    """Whether sql[i] exists and can be part of a Postgres name (letters, digits, _ and $)."""
    return i >= 0 and (sql[i].isalnum() or sql[i] in "_$")


DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")


def _pieces(sql: str, engine: str) -> Iterator[tuple[str, str]]:
    """`sql` as `engine` reads it, piece by piece: ("comment", text), ("semicolon", ";"), ("string", text)
    (a quoted or dollar-quoted string), ("name", name) (a quoted name, unquoted: Postgres' "...", Spark's
    `...`) and ("char", c) for every other character."""
    spark = engine == "spark"
    i = 0
    while i < len(sql):
        char = sql[i]
        start = i
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            i = len(sql) if end < 0 else end + 1
            yield "comment", sql[start:i]
        elif sql.startswith("/*", i):
            i = _skip_block_comment(sql, i)
            yield "comment", sql[start:i]
        elif char == ";":
            i += 1
            yield "semicolon", char
        elif char == "'":
            # Postgres: E'...' strings take backslash escapes; Spark: every string does
            escaped = spark or (i > 0 and sql[i - 1] in "eE" and not _in_word(sql, i - 2))
            i = _skip_quoted(sql, i, "'", backslash=escaped)
            yield "string", sql[start:i]
        elif char == '"' and spark:  # Spark: "..." is a string, `...` a name
            i = _skip_quoted(sql, i, char, backslash=True)
            yield "string", sql[start:i]
        elif char == '"' or (char == "`" and spark):
            i = _skip_quoted(sql, i, char, backslash=False)
            yield "name", sql[start + 1 : i - 1].replace(char * 2, char)
        elif char == "$" and not spark and not _in_word(sql, i - 1) and (tag := DOLLAR_TAG.match(sql, i)):
            end = sql.find(tag.group(0), tag.end())
            i = len(sql) if end < 0 else end + len(tag.group(0))
            yield "string", sql[start:i]
        else:
            i += 1
            yield "char", char


def statements(sql: str, engine: str) -> list[str]:
    """The statements of `sql` as `engine` splits them (at semicolons outside quotes and comments), each
    as its skeleton: comments left out, every quoted string or name replaced by ``''`` — the empty ones
    left out."""
    found: list[str] = []
    current: list[str] = []
    for kind, text in _pieces(sql, engine):
        if kind == "comment":
            current.append(" ")
        elif kind == "semicolon":
            found.append("".join(current).strip())
            current = []
        elif kind in ("string", "name"):
            current.append("''")
        else:
            current.append(text)
    found.append("".join(current).strip())
    return [statement for statement in found if statement]


def statement_kind(skeleton: str) -> str:
    """What a statement does, from its skeleton: its first word (lowercase; "" if none), or for a
    ``with`` statement the first of select/values/table/insert/update/delete/merge outside parentheses
    (the CTEs' bodies sit inside them; the main statement follows)."""
    depth, words = 0, []
    for match in re.finditer(r"[A-Za-z_][A-Za-z0-9_$]*|[()]", skeleton):
        token = match.group(0)
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
        elif depth <= 0 or not words:
            words.append(token.lower())
    if not words:
        return ""
    if words[0] != "with":
        return words[0]
    main = [word for word in words[1:] if word in ("select", "values", "table", *WRITES)]
    return main[0] if main else "with"


def check_query(sql: str, engine: str) -> None:
    """Raise :class:`QueryRefused` unless `sql` is ONE statement that reads: select, values, table, a
    ``with`` whose main statement is one of those, show or explain."""
    if not isinstance(sql, str):
        raise QueryRefused(f"a query must be SQL text, got {type(sql).__name__}")
    found = statements(sql, engine)
    if len(found) != 1:
        raise QueryRefused(f"the read API runs one query per call; got {len(found)} statements")
    kind = statement_kind(found[0])
    if kind not in QUERY_KEYWORDS:
        raise QueryRefused(
            "the read API only reads: one select, values, table, with ... select, show or explain "
            f"statement, not {kind or found[0][:20]!r}"
        )


def schema_references(sql: str, engine: str) -> list[str]:
    """The schemas `sql` may name, in order, each once: every name followed by a dot outside strings and
    comments (``warehouse.rules``, ``"build_x".rules``, Spark's ```warehouse`.rules``; in ``a.b.c``
    both a and b). Unquoted names in lowercase as the engine folds them; quoted names as written (on
    Spark, where names are case-insensitive, in lowercase too). A table or alias qualifying a column
    (``r.path``) is among them: the caller compares them with the schemas it cares about."""
    found: list[str] = []
    name: str | None = None  # the last name, until something other than space or a comment follows it
    word: list[str] = []
    for kind, text in [*_pieces(sql, engine), ("end", "")]:
        if kind == "char" and _in_word(text, 0):
            word.append(text)
            continue
        if word:
            name = "".join(word).lower() if not word[0].isdigit() else None
            word = []
        if kind == "comment" or (kind == "char" and text.isspace()):
            continue
        if kind == "char" and text == "." and name is not None and name not in found:
            found.append(name)
        name = (text.lower() if engine == "spark" else text) if kind == "name" else None
    return found


# -- parts of read_mart ------------------------------------------------------------------------------------
CONDITION_TOKEN = re.compile(
    r"""(?P<space>\s+)
    | (?P<comment>--|/\*)
    | (?P<placeholder>%s)
    | (?P<string>'(?:[^'\\]|'')*')
    | (?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<operator><>|!=|<=|>=|\|\||[=<>+\-*/(),])""",
    re.VERBOSE,
)


def _tokens(text: str, what: str) -> Iterable[tuple[str, str, int]]:
    """(kind, text, column) of each token of `text`; QueryRefused at anything else (a semicolon, a
    comment, a quoted name, a backslash in a string, ...)."""
    i = 0
    while i < len(text):
        match = CONDITION_TOKEN.match(text, i)
        if match is None or match.lastgroup == "comment":
            raise QueryRefused(
                f"{what} {text!r}: cannot check the text at column {i + 1} ({text[i : i + 12]!r}); use "
                "column names, %s placeholders with params, and plain operators"
            )
        if match.lastgroup == "string" and "%" in match.group(0):
            # the driver reads % as the start of a placeholder (Postgres) and Spark's ? stands for %s
            raise QueryRefused(
                f"{what} {text!r}: the quoted value {match.group(0)} at column {i + 1} holds a %; pass the "
                "value as a parameter instead (e.g. where='path like %s', params=['%buy%'])"
            )
        if match.lastgroup != "space":
            yield match.lastgroup, match.group(0), i + 1
        i = match.end()


def where_clause(where: str, columns: Sequence[str]) -> str:
    """`where` itself once every word in it is one of `columns`, a keyword of CONDITION_KEYWORDS or a
    function of CONDITION_FUNCTIONS, its parentheses balance and it holds nothing else than values,
    ``%s`` placeholders and operators (QueryRefused otherwise)."""
    if not isinstance(where, str):
        raise QueryRefused(f"where must be SQL text such as 'alignment = %s', got {type(where).__name__}")
    known = {column.lower() for column in columns}
    tokens = list(_tokens(where, "where"))
    depth = 0
    for index, (kind, text, column) in enumerate(tokens):
        following = tokens[index + 1][1] if index + 1 < len(tokens) else ""
        word = text.lower()
        if kind == "name":
            if word in CONDITION_FUNCTIONS and following == "(":
                continue
            if word not in known and word not in CONDITION_KEYWORDS:
                raise QueryRefused(
                    f"where {where!r}: unknown name {text!r} at column {column}; a condition uses the mart's "
                    f"columns ({', '.join(columns)}), %s placeholders and the functions "
                    f"{', '.join(sorted(CONDITION_FUNCTIONS))}"
                )
        elif text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
            if depth < 0:
                break
    if depth != 0:
        raise QueryRefused(f"where {where!r}: unbalanced parentheses")
    if not tokens:
        raise QueryRefused("where is empty; leave it out to read every row")
    return where


def check_params(where: str | None, params: Sequence | None) -> None:
    """QueryRefused unless `params` holds one value per ``%s`` placeholder of `where` (a string is not a
    list of values)."""
    if isinstance(params, (str, bytes)):
        raise QueryRefused(f"params must be a list of values, got the string {params!r}")
    wanted = sum(kind == "placeholder" for kind, _, _ in _tokens(where, "where")) if where else 0
    given = 0 if params is None else len(params)
    if given != wanted:
        raise QueryRefused(
            f"where {where!r} has {wanted} %s placeholder(s) but params gives {given} value(s)"
            if where
            else f"params gives {given} value(s) but there is no where condition to bind them to"
        )


def limit_clause(limit: int, engine: str) -> str:
    """``limit N`` for a count `engine` takes (ValueError otherwise: not an int, negative, or more than
    LIMIT_MAX)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= LIMIT_MAX[engine]:
        raise ValueError(
            f"limit must be a non-negative integer of at most {LIMIT_MAX[engine]:,} on {engine}, "
            f"got {limit!r}"
        )
    return f"limit {limit}"


def order_by_clause(
    order_by: str | Sequence[str], columns: Sequence[str], quote: Callable[[str], str]
) -> str:
    """The ORDER BY list of `order_by` ("score desc, candidate_key" or ["score desc", "candidate_key"]):
    each item a column of `columns` (quoted with `quote`), then asc or desc, then nulls first or last
    (QueryRefused otherwise)."""
    items = order_by.split(",") if isinstance(order_by, str) else list(order_by)
    known = {column.lower(): column for column in columns}
    spelled = []
    for item in items:
        if not isinstance(item, str):
            raise QueryRefused(f"order_by items must be text such as 'score desc', got {item!r}")
        tokens = list(_tokens(item, "order_by"))
        words = [text.lower() for kind, text, _ in tokens if kind == "name"]
        rest = words[1:]
        if rest and rest[0] in DIRECTIONS:
            rest = rest[1:]
        if (
            len(words) != len(tokens)
            or not words
            or words[0] not in known
            or rest not in ([], ["nulls", "first"], ["nulls", "last"])
        ):
            raise QueryRefused(
                f"order_by {item.strip()!r}: expected a column of the mart ({', '.join(columns)}), then asc "
                "or desc, then nulls first or nulls last"
            )
        spelled.append(" ".join([quote(known[words[0]]), *words[1:]]))
    if not spelled:
        raise QueryRefused("order_by is empty; leave it out for the mart's own order")
    return ", ".join(spelled)
