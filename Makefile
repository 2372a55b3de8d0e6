# Backlog Synthesizer: everything a fresh clone needs is installed by these targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
TOOLS  := .venv-tools

.PHONY: setup setup-demo chromium demo demo-serve test test-unit test-fast chaos bench lint typecheck format clean

# setup: everything the tests need (the app's and the dev requirements, checkov, Azurite, Chromium).
# setup-demo: only what the demo runs on (the app's requirements and Azurite): no checkov, no Chromium.
setup: $(VENV)/.installed $(TOOLS)/.installed node_modules/.installed chromium

setup-demo: $(VENV)/.installed-app node_modules/.installed

# requirements-dev.txt includes requirements.txt, so the full install also marks the app's as done:
# `make test` then `make demo` installs nothing more; `make demo` then `make test` adds the dev set.
$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(VENV)/.installed-app $@

$(VENV)/.installed-app: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

# checkov pins packaging<24 while pytest 9 needs >=24: it gets its own venv (used by test_infra.py)
$(TOOLS)/.installed:
	test -x $(TOOLS)/bin/python || $(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet checkov==3.3.30
	touch $@

# A node_modules that is a link (a git worktree sharing another checkout's install) is left alone:
# `npm ci` would replace the link with a fresh folder and empty the folder it points to.
node_modules/.installed: package.json package-lock.json
	@if [ -L node_modules ]; then \
	  echo "node_modules links to $$(readlink node_modules): not reinstalled here"; \
	else npm ci --no-audit --no-fund --loglevel=error; fi
	touch $@

# The review page's browser tests (tests/browser) drive Debian's Chromium with Playwright
# (`playwright install` downloads a browser from a CDN, which is not reachable here). Installed with
# apt-get when /usr/bin/chromium is missing and we are root; otherwise a note, and the tests skip.
CHROMIUM_PATH ?= /usr/bin/chromium
chromium:
	@if [ -x "$(CHROMIUM_PATH)" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing Debian chromium + chromium-driver for the browser tests (apt-get) ..."; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    chromium chromium-driver >/dev/null && echo "Installed $$(/usr/bin/chromium --version 2>/dev/null)"; \
	else \
	  echo "NOTE: $(CHROMIUM_PATH) is missing and cannot be installed here (needs root and apt-get)."; \
	  echo "      Install Debian's chromium and chromium-driver, or set CHROMIUM_PATH to a Chromium;"; \
	  echo "      until then the browser tests (tests/browser) are skipped."; \
	fi

## make demo: Azurite + local Functions host + sample backlog/docs + sample transcript, end to end;
## it ends with the review page's address (with its key) and the API base.
##   make demo FILE=path/to/meeting.vtt [PROJECT=name] [BACKLOG=export.csv] [DOCS=folder]
##   runs it on your own transcript (PROJECT defaults to the sample backlog's project).
## make demo-serve: the same, then the host stays up to open the review page (Ctrl-C stops it).
FILE    ?=
PROJECT ?= remote-control
BACKLOG ?=
DOCS    ?=
DEMO_ARGS = $(if $(FILE),"$(FILE)") --project "$(PROJECT)" \
	$(if $(BACKLOG),--backlog "$(BACKLOG)") $(if $(DOCS),--docs "$(DOCS)")
demo: setup-demo
	$(PY) -m devhost.demo $(DEMO_ARGS)

demo-serve: setup-demo
	$(PY) -m devhost.demo $(DEMO_ARGS) --keep-running

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

## make lint: ruff (rules and formatting) and mypy; make typecheck: mypy alone (pyproject.toml)
lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@$(MAKE) --no-print-directory typecheck

typecheck: $(VENV)/.installed
	$(PY) -m mypy

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf .data out .pytest_cache .ruff_cache .mypy_cache
