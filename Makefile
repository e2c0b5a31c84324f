# sessiongraph: `make demo` and `make test` work on a fresh machine with Python >= 3.11.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_DB ?= demo/sessiongraph.duckdb

.PHONY: install demo test clean

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

test: install
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) demo build *.egg-info .pytest_cache
