"""Extractors: entity-linked text -> SherLIiC dependency paths -> raw.* tables in Postgres."""
