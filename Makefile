# Backlog Synthesizer: everything a fresh clone needs is installed by these targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
TOOLS  := .venv-tools

.PHONY: setup demo test test-unit test-fast chaos bench lint format clean

setup: $(VENV)/.installed $(TOOLS)/.installed node_modules/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

# checkov pins packaging<24 while pytest 9 needs >=24: it gets its own venv (used by test_infra.py)
$(TOOLS)/.installed:
	test -x $(TOOLS)/bin/python || $(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet checkov==3.3.30
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

## make demo: Azurite + local Functions host + sample backlog/docs + sample transcript, end to end
demo: setup
	$(PY) -m devhost.demo

## make test: every test (unit, integration on Azurite, e2e through the local host)
test: setup
	$(PY) -m pytest -q

## make chaos: the fault-injection suite with 10 trials per scenario (make test runs 1)
CHAOS_TRIALS ?= 10
chaos: setup
	CHAOS_TRIALS=$(CHAOS_TRIALS) $(PY) -m pytest -q -m chaos tests/chaos

test-unit: setup
	$(PY) -m pytest -q tests/unit

## make bench: every benchmarks/bench_*.py in turn (tables on stdout, JSON in benchmarks/results/)
bench: setup
	$(PY) -m benchmarks.run_all

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf .data out .pytest_cache .ruff_cache
