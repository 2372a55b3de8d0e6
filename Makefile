# Backlog Synthesizer: everything a fresh clone needs is installed by these targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python

.PHONY: setup demo test test-unit test-fast lint format clean

setup: $(VENV)/.installed node_modules/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
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

test-unit: setup
	$(PY) -m pytest -q tests/unit

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf .data out .pytest_cache .ruff_cache
