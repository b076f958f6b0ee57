"""Dependency paths (docs/design.md §3), no database: records, spaCy parsing, path extraction, the
Appendix-A filters, the Stanford label mapping and the English rendering of typed relations (render.py).
Used by ingest, baselines and annotation."""
