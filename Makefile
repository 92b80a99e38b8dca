# memvet — every target bootstraps what it needs, so `make serve` / `make test` work on a
# fresh Debian machine with Python 3.11. All installs go through constraints.txt, which pins
# torch to the CPU build.

SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV        := .venv
BIN         := $(VENV)/bin
PIP         := $(BIN)/python -m pip
CONSTRAINTS := constraints.txt
INSTALL_DEPS := pyproject.toml $(CONSTRAINTS)

HOST        ?= 127.0.0.1
PORT        ?= 8765
PYTEST_ARGS ?=

export PIP_DISABLE_PIP_VERSION_CHECK := 1

# python3.11, else any python3 that is at least 3.11.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || \
	{ python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && command -v python3; })

# The model and tokenizers come from the installed pip package; never reach for a hub.
OFFLINE_ENV := HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

.PHONY: help serve test bench lint schema clean system-deps install install-dev install-bench \
	train-extractor

help:
	@echo "make serve   install and run memvet on $(HOST):$(PORT) (HOST=/PORT= to override)"
	@echo "make test    install system packages (root on Debian), dev deps; run the test suite"
	@echo "             (PYTEST_ARGS='-k foo' passes arguments to pytest)"
	@echo "make bench   install bench deps and run the benchmarks"
	@echo "make lint    ruff + mypy"
	@echo "make train-extractor  retrain the learned extractor on extraction/corpus"
	@echo "make schema  regenerate graph/schema.graphql"
	@echo "make clean   remove the virtualenv and caches"

# --- virtualenv -------------------------------------------------------------------------

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "error: Python 3.11+ not found (python3.11 or python3)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -c $(CONSTRAINTS) --upgrade pip

# The folders install as `memvet.api`, `memvet.memory`, ... (pyproject's package-dir). The
# editable install is setuptools' strict mode: a tree of links to the sources under
# build/__editable__.*, which mypy and editors can read (they don't follow the default
# editable mode's import hook). A link tree sees edits at once but not new files, so a stamp
# is also rebuilt when a package folder changes (a file added, renamed or removed).
STRICT       := --config-settings editable_mode=strict
PACKAGE_DIRS := $(shell find api graph memory embeddings extraction -type d \
	-not -name __pycache__ -not -path '*/corpus*' 2>/dev/null)

# One stamp per extra set; each is rebuilt when pyproject.toml, constraints.txt or a package
# folder change.
$(VENV)/.stamp-base: $(INSTALL_DEPS) $(PACKAGE_DIRS) | $(BIN)/python
	$(PIP) install -c $(CONSTRAINTS) -e . $(STRICT)
	@touch $@

$(VENV)/.stamp-dev: $(INSTALL_DEPS) $(PACKAGE_DIRS) | $(BIN)/python
	$(PIP) install -c $(CONSTRAINTS) -e '.[dev]' $(STRICT)
	@touch $@ $(VENV)/.stamp-base

$(VENV)/.stamp-bench: $(INSTALL_DEPS) $(PACKAGE_DIRS) | $(BIN)/python
	$(PIP) install -c $(CONSTRAINTS) -e '.[dev,bench]' $(STRICT)
	@touch $@ $(VENV)/.stamp-dev $(VENV)/.stamp-base

install: $(VENV)/.stamp-base
install-dev: $(VENV)/.stamp-dev
install-bench: $(VENV)/.stamp-bench

# --- system packages for the tests (PostgreSQL server, Chromium, tmux) ------------------

# Only as root on a Debian-like system with apt, and only when something is missing.
system-deps:
	@if [ -x /usr/bin/chromium ] && command -v tmux >/dev/null 2>&1 && \
			ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		echo "system-deps: postgresql, chromium and tmux present"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update && \
		apt-get install -y --no-install-recommends postgresql chromium fonts-liberation tmux; \
	else \
		echo "system-deps: not root or no apt-get; install postgresql, chromium and tmux yourself" >&2; \
	fi

# --- targets ----------------------------------------------------------------------------

serve: $(VENV)/.stamp-base
	$(BIN)/memvet serve --host $(HOST) --port $(PORT)

test: system-deps $(VENV)/.stamp-dev
	$(OFFLINE_ENV) $(BIN)/pytest $(PYTEST_ARGS)

bench: $(VENV)/.stamp-bench
	$(OFFLINE_ENV) $(BIN)/python -m bench.run

# Deterministic: the corpus, the packaged model and fixed folds give the same model.npz.
train-extractor: $(VENV)/.stamp-dev
	$(OFFLINE_ENV) $(BIN)/memvet train-extractor

lint: $(VENV)/.stamp-dev
	$(BIN)/ruff check .
	$(BIN)/mypy

schema: $(VENV)/.stamp-base
	$(BIN)/memvet schema > graph/schema.graphql.tmp
	mv graph/schema.graphql.tmp graph/schema.graphql

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
