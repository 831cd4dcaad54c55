# pdbtool: `make run` sets everything up and runs the main job; `make test` runs the tests (as CI does),
# `make test-fast` the edit loop's subset, `make lint` ruff and mypy.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

# `make run PARTITION=NAME|FILE`: build the partition's tables, then solve the instance file of its board.
PARTITION ?= 15-7-8
PARTITION_FILE := $(or $(wildcard $(PARTITION)),partitions/$(PARTITION).txt)
BOARD := $(shell sed -n 's/^board[[:space:]]*\([0-9]*x[0-9]*\).*/\1/p' $(PARTITION_FILE) 2>/dev/null)
# Korf's 100 on 4x4; on 5x5 the easiest of Korf & Felner's 24-puzzles (the first ten take hours to days)
INSTANCES_3x3 := examples/8puzzle.txt
INSTANCES_4x4 := examples/korf100.txt
INSTANCES_5x5 := examples/korf24_easy.txt
INSTANCES_4x5 := examples/19puzzle.txt
INSTANCES_4x8 := examples/31puzzle.txt
INSTANCES ?= $(INSTANCES_$(BOARD))

.PHONY: run test test-fast lint bench bench-report clean venv install install-test install-bench install-lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e '.[test,ray]'
	touch $@ $(VENV)/.installed

$(VENV)/.installed-bench: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e '.[test,ray,bench]'
	touch $@ $(VENV)/.installed-test $(VENV)/.installed

$(VENV)/.installed-lint: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e '.[lint]'
	touch $@ $(VENV)/.installed

venv: $(BIN)/python
install: $(VENV)/.installed
install-test: $(VENV)/.installed-test
install-bench: $(VENV)/.installed-bench
install-lint: $(VENV)/.installed-lint

# The main job: build the partition's tables into the cache (once), then solve the instances on them.
run: install
	@test -n "$(INSTANCES)" || { echo "make run: no instance file for board '$(BOARD)' of $(PARTITION_FILE); set INSTANCES=FILE" >&2; exit 2; }
	$(BIN)/pdbtool build --partition $(PARTITION)
	$(BIN)/pdbtool solve $(INSTANCES) --board $(BOARD) --partition $(PARTITION)

# Both in parallel processes, one per logical CPU (TEST_PROCESSES=N sets how many; 0 runs them in this process);
# tests/conftest.py keeps the tests that share a module's fixture, or Ray, in one process and compiles the
# common kernels once first.
TEST_PROCESSES ?= logical
PYTEST := $(BIN)/python -m pytest -q -n $(TEST_PROCESSES) --dist loadgroup

test: install-test
	$(PYTEST)

# the edit loop: everything but the tests marked slow, ray or install (markers: pyproject.toml)
test-fast: install-test
	HYPOTHESIS_PROFILE=fast $(PYTEST) -m "not slow and not ray and not install"

lint: install-lint
	$(BIN)/ruff check pdbtool tests bench
	$(BIN)/mypy

# Benchmarks write bench/results/*.json (committed); bench-report turns them into docs/performance*.md.
bench: install-test
	$(BIN)/python bench/run.py $(BENCH_ARGS)

bench-report: install-bench
	$(BIN)/python bench/report.py

# keeps bench/results/ (measurements are committed) and the table cache
clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
