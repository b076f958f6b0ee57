"""The ground floor: it connects. Settings, the embedded Postgres and its URL, the Target a command works
on (Postgres or Spark), all DDL (schema/), the marts' reader and the Python API (warehouse/api.py: the
marts as pandas DataFrames), re-exported here:

    from warehouse import list_marts, open_warehouse, read_mart, read_sql
"""

API = (
    "list_marts",
    "open_warehouse",
    "read_mart",
    "read_sql",
    "CorporaMismatch",
    "MartError",
    "QueryRefused",
)
__all__ = list(API)


def __getattr__(name: str):
    # imported on first use: the command-line tools import warehouse.* without paying for pandas
    if name in API:
        from warehouse import api

        return getattr(api, name)
    raise AttributeError(f"module 'warehouse' has no attribute {name!r}")
