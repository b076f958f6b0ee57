"""The database side: settings, the embedded Postgres and its URL, all DDL (schema/), the dbt runner,
the release export, the candidate-score formulas and the plain-Python reference build."""
