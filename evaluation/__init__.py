"""What the baselines and the language-model methods share: the benchmark items (datasets/), the metrics,
the method registry and its plugin list (registry.py, catalog.py), the harness that scores and reports
(evaluate.py, report.py), a command's evaluation context (context.py) and the options both CLIs take
(options.py)."""
