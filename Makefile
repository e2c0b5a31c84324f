# sessiongraph: `make demo` and `make test` work on a fresh machine with Python >= 3.11.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_DB ?= demo/sessiongraph.duckdb

.PHONY: install demo test lint fuzz bench bench-scale clean

$(BIN)/sessiongraph: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

install: $(BIN)/sessiongraph

demo: install
	rm -f $(DEMO_DB)
	$(BIN)/sessiongraph ingest sample_logs --db $(DEMO_DB)
	@echo
	@echo "$$ sessiongraph query --file sql/queries/tokens_by_model.sql --db $(DEMO_DB)"
	@$(BIN)/sessiongraph query --file sql/queries/tokens_by_model.sql --db $(DEMO_DB)

# Two workers (pytest-xdist): the machine's two cores. A test file runs whole on one worker
# (--dist loadfile), so its module fixtures (a template store, the built wheel, a Ray cluster) are
# made once. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
test: install
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile

# ruff (lint and format check) and mypy (.ci/typecheck.py says why it is not plain `mypy`), configured in
# pyproject.toml.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python .ci/typecheck.py

# The fuzz properties of tests/test_fuzz.py with many more cases (FUZZ_EXAMPLES per sample file).
FUZZ_EXAMPLES ?= 1000
fuzz: install
	SESSIONGRAPH_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest -q tests/test_fuzz.py

# benchmarks/run.py, one run of every figure issue 30 names: a generated corpus of BENCH_MB MB, the
# shared real logs replicated to 170 and 700 MB (one worker, --privacy full against metadata_only),
# 100 MB of small files, the exports' peak memory on both real sizes' stores, and append-to-queryable
# latency under `sessiongraph watch` with WATCH_FILES files (benchmarks/README.md). BENCH_ARGS adds
# flags, e.g. BENCH_ARGS='--real-dir ~/.cache/sg-real --watch-dir ~/.cache/sg-watch --json'.
BENCH_MB ?= 1000
BENCH_ARGS ?=
WATCH_FILES ?= 100000
$(VENV)/.bench-installed: $(BIN)/sessiongraph
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $@

# Then benchmarks/scale.py: cold ingests of repeat_samples corpora of SCALE_SIZES MB, and warm,
# one-appended-line and new-file costs at the largest (SCALE_ARGS: e.g. --workdir DIR --json).
SCALE_SIZES ?= 100,400
SCALE_ARGS ?=
bench: $(VENV)/.bench-installed
	$(BIN)/python benchmarks/run.py --size $(BENCH_MB) --watch-files $(WATCH_FILES) $(BENCH_ARGS)
	$(BIN)/python benchmarks/scale.py --sizes $(SCALE_SIZES) $(SCALE_ARGS)

bench-scale: $(VENV)/.bench-installed
	$(BIN)/python benchmarks/scale.py --sizes $(SCALE_SIZES) $(SCALE_ARGS)

clean:
	rm -rf $(VENV) demo build *.egg-info .pytest_cache .mypy_cache .ruff_cache
