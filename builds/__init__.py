"""The build: `sherliic-dbt` (runner.py: dbt in its own process group, one build per schema at a time), the
build records the dbt project writes (records.py: reading, listing, comparing and dropping them; cli.py:
`sherliic-dbt builds`), the dbt vars a command passes (dbt_vars.py) and the guard that stops dbt's
children with it (child_guard.py). docs/design.md §2 "Builds"."""
