# agentnb — one entry point. `make lab` to explore, `make test` to check everything.
# Both create or update .venv themselves: on a fresh machine you need only python3 and make.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
UV     := $(BIN)/uv
PORT   ?= 8888
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: help install dev lab test test-unit test-notebooks lint format typecheck bench strip clean

help:
	@echo "make lab    - install into .venv and open JupyterLab on the notebooks (works offline)"
	@echo "make test   - install dev extras into .venv and run every test tier"
	@echo "make lint   - ruff + mypy (strict on agentnb/)"
	@echo "make bench  - runtime overhead against a bare loop (figures for the docs)"
	@echo "make strip  - remove outputs from notebooks before committing"

# uv installs the stack in seconds where pip takes a minute; bootstrap it inside the venv.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(UV): | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv

install: $(UV)
	$(UV) pip install --quiet --python $(BIN)/python -e ".[notebooks]"

dev: $(UV)
	$(UV) pip install --quiet --python $(BIN)/python -e ".[dev]"

lab: install
	cd notebooks && ../$(BIN)/jupyter lab $(ROOT_FLAG) --port=$(PORT) 00_quickstart.ipynb

test: dev lint test-unit test-notebooks

test-unit:
	$(BIN)/python -m pytest tests --timeout=300

test-notebooks:
	$(BIN)/python scripts/check_notebooks.py
	$(BIN)/python -m pytest --nbmake --nbmake-timeout=300 --timeout=600 -p no:randomly notebooks/

lint: dev
	$(BIN)/ruff check agentnb tests scripts
	$(BIN)/ruff format --check agentnb tests scripts
	$(BIN)/mypy

format: dev
	$(BIN)/ruff format agentnb tests scripts
	$(BIN)/ruff check --fix agentnb tests scripts

typecheck: lint

bench: install
	$(BIN)/python scripts/bench.py

strip: $(BIN)/python
	$(BIN)/python scripts/check_notebooks.py --strip

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist
