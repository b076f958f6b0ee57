"""Dependency paths (docs/design.md §3), no database: records, spaCy parsing, path extraction, the
Appendix-A filters and the Stanford label mapping. Used by ingest, baselines and annotation."""
