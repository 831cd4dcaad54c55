# pdbtool: `make run` sets everything up and runs the main job; `make test` runs the tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
PARTITION ?= 15-7-8

.PHONY: run test bench clean venv install install-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e '.[test,ray]'
	touch $@ $(VENV)/.installed

venv: $(BIN)/python
install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

# The main job: build the default tables into the cache (once), then run the job on them.
run: install
	$(BIN)/pdbtool build --partition $(PARTITION)
	$(BIN)/pdbtool solve examples/korf100.txt --partition $(PARTITION)

test: install-test
	$(BIN)/python -m pytest -q

bench: install-test
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis bench/results
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
