"""Every inference candidate of a build ranked by a verifier (issue 19; docs/lm.md, "Ranking the candidates").

- candidates.py  a typed rule as premise and hypothesis sentences (deppath.render), read from the marts
- store.py       results.verifiers / results.verifier_scores (Postgres, either engine): resumable chunks
- ranking.py     the ranking itself: Postgres in-process, Spark with mapInPandas; the same scores
- report.py      the plot of verifier score against esr
- bench.py       pairs/s per model and backend (`make bench-rank`)
- cli.py         `sherliic-lm rank` / `bench-rank` (`make rank`, `make bench-rank`)

The verifier (which runs, its name, key, weights and cosine share) is lm.verifier, the one the
benchmarks' honest selection judges; scoring itself (length-sorted batches, torch and ONNX Runtime
backends) is lm.inference, which imports torch: the modules here import it lazily.
"""
