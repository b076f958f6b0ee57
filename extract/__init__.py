"""Ingest: corpus readers and type tables → the extraction pipeline → transactional batch loads into raw.*."""
