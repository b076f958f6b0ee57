"""The raw batch store the loaders write: one interface (base.py, store.py) over Postgres (postgres.py)
and Spark (spark.py). Each batch is one loaded file, added or removed as a whole."""
