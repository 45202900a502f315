# agentnb — one entry point. `make lab` to explore, `make test` to check everything.
# Both create or update .venv themselves: on a fresh machine you need only python3 and make.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
UV     := $(BIN)/uv
PORT   ?= 8888
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: help install dev local lab test test-unit test-313 test-plain postgres test-notebooks test-browser lint format typecheck bench bench-all notebook-times strip clean

# The offline real model: llama-cpp-python compiles llama.cpp (about 5 minutes on 2 cores),
# and its default build can crash with SIGILL (it compiles for the build CPU's newest
# instructions). Build once with portable flags into a cache keyed by version and flags
# (pip caches builds by source, not by CMAKE_ARGS), so a fresh clone on this machine reuses it.
LLAMA_VERSION    := 0.3.36
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
LLAMA_KEY        := $(shell printf '%s' "llama-cpp-python==$(LLAMA_VERSION) $(LLAMA_CMAKE_ARGS)" | sha256sum | cut -c1-12)
LLAMA_WHEELS     := $(HOME)/.cache/agentnb/wheels/llama-cpp-python-$(LLAMA_KEY)

help:
	@echo "make lab    - install into .venv and open JupyterLab on the notebooks (works offline)"
	@echo "make test   - install dev extras into .venv and run every test tier"
	@echo "make local  - build llama-cpp-python once (cached), fetch SmolLM2, check it generates"
	@echo "make lint   - ruff + mypy (strict on agentnb/)"
	@echo "make test-313 - the unit tier on Python 3.13 too (Debian's, unpacked under ~/.cache)"
	@echo "make bench  - runtime overhead against a bare loop, paired ratios (about 2 minutes)"
	@echo "make bench-all - and the record, stores, evaluation, service, proxy and view figures"
	@echo "make strip  - remove outputs from notebooks before committing"

# uv installs the stack in seconds where pip takes a minute; bootstrap it inside the venv.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(UV): | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv

# Installed with compiled bytecode: uv writes no .pyc by default, and an environment with
# PYTHONDONTWRITEBYTECODE=1 never writes one, so every fresh kernel would recompile the stack
# (import agentnb: ~0.6 s instead of ~0.2 s). The editable package is compiled separately.
install: $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(BIN)/python -e ".[notebooks]"
	$(BIN)/python -m compileall -q agentnb

dev: $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(BIN)/python -e ".[dev]"
	$(BIN)/python -m compileall -q agentnb

local: dev
	@if ! ls $(LLAMA_WHEELS)/*.whl >/dev/null 2>&1; then \
	  echo "building llama-cpp-python $(LLAMA_VERSION) once into $(LLAMA_WHEELS) (about 5 min)"; \
	  rm -rf $(LLAMA_WHEELS).tmp && mkdir -p $(LLAMA_WHEELS).tmp && \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip wheel --quiet --no-deps \
	    --no-cache-dir --wheel-dir $(LLAMA_WHEELS).tmp "llama-cpp-python==$(LLAMA_VERSION)" && \
	  mv $(LLAMA_WHEELS).tmp $(LLAMA_WHEELS); \
	fi
	$(UV) pip install --quiet --python $(BIN)/python \
	  "llama-cpp-python[server] @ file://$$(ls $(LLAMA_WHEELS)/*.whl | head -n1)"
	$(UV) pip install --quiet --python $(BIN)/python -e ".[dev,local]"
	$(BIN)/python -m agentnb.models.local fetch
	$(BIN)/python -m agentnb.models.local check

lab: install
	cd notebooks && JUPYTERLAB_SETTINGS_DIR=$(CURDIR)/etc/jupyterlab/user-settings \
	  ../$(BIN)/jupyter lab $(ROOT_FLAG) --port=$(PORT) 00_quickstart.ipynb

test: dev local lint test-unit test-plain test-notebooks test-browser

# The service tests start their own Postgres 15 on 127.0.0.1 (Debian's postgresql package).
test-unit: postgres
	$(BIN)/python -m pytest tests --timeout=300 --ignore=tests/browser --ignore=tests/notebooks -n auto

# The unit tests of the code the hot-path tricks touch (agentnb/_fast.py), once more with
# every trick switched to its plain twin (AGENTNB_PLAIN=1): about 40 s of CPU, not the whole tier.
PLAIN_TESTS := tests/test_fast.py tests/test_messages.py tests/runtime tests/tools tests/models \
  tests/session tests/storage tests/context
test-plain: dev
	AGENTNB_PLAIN=1 $(BIN)/python -m pytest $(PLAIN_TESTS) --timeout=300 -p no:randomly -n auto

# The unit tier on Python 3.13 too (agentnb/_fast.py picks other tricks from 3.12 on): Debian
# trixie's interpreter, unpacked under ~/.cache/agentnb with its own C library, into
# .venv-3.13 (scripts/python313.sh: nothing installed on the system). Not part of `make test`.
# Python 3.12 comes from none of the registries reached here (see the script).
test-313: dev postgres
	UV=$(UV) sh scripts/python313.sh .venv-3.13
	.venv-3.13/bin/python -m pytest tests --timeout=300 --ignore=tests/browser --ignore=tests/notebooks -n auto

postgres:
	@if [ ! -x /usr/lib/postgresql/15/bin/initdb ]; then \
	  $(SUDO) apt-get update && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql; \
	fi

# The real-browser tier: JupyterLab + Debian's chromium driven by playwright (never
# `playwright install`: it downloads). fonts-noto-cjk, or Chinese renders as boxes. Two
# workers, a JupyterLab and a Chromium each, a test file per worker (its notebook and page
# stay together): 205 s -> 136 s here, much of a browser test being waits.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
test-browser: dev
	@if [ ! -x /usr/bin/chromium ] || ! dpkg -s fonts-noto-cjk >/dev/null 2>&1; then \
	  $(SUDO) apt-get update && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium fonts-noto-cjk; \
	fi
	$(BIN)/python -m pytest tests/browser --timeout=600 -n 2 --dist loadfile

# Every notebook, with nbmake, in the environment `make lab` creates (no `dev`, no `local`:
# a venv of `.[notebooks]` under ~/.cache/agentnb/lab-env, rebuilt when pyproject.toml changes).
test-notebooks: dev
	$(BIN)/python scripts/check_notebooks.py
	$(BIN)/python -m pytest tests/notebooks --timeout=900 -p no:randomly

lint: dev
	$(BIN)/ruff check agentnb tests scripts
	$(BIN)/ruff format --check agentnb tests scripts
	$(BIN)/mypy

format: dev
	$(BIN)/ruff format agentnb tests scripts
	$(BIN)/ruff check --fix agentnb tests scripts

typecheck: lint

# The runtime's overhead in paired rounds (about 2 minutes); bench-all adds the record, the
# stores, an evaluation sweep, the service, the proxy and the view (JupyterLab + Chromium).
bench: dev
	$(BIN)/python scripts/bench.py

# Each notebook's wall and CPU seconds in the environment `make lab` creates, heaviest first.
notebook-times: dev
	$(BIN)/python scripts/notebook_times.py

bench-all: dev
	$(BIN)/python scripts/bench.py --all
	$(BIN)/python scripts/bench_view.py
	$(BIN)/python scripts/bench_tools.py
	$(BIN)/python scripts/bench_service.py

strip: $(BIN)/python
	$(BIN)/python scripts/check_notebooks.py --strip

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist
