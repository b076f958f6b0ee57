"""The typed event graph's scores in Python (scores.py: Relv, σ, esr of docs/design.md §3), the
reference the SQL models and the baselines are checked against."""
