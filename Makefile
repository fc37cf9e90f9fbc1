# Everything the project needs is installed here, into .venv, from the package registries.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,axelrod]'
	touch $(STAMP)

demo: setup
	$(BIN)/stratagem tournament --game dilemma --turns 20 --repetitions 5 --seed 1 \
		--store demo-results/stratagem.db

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q

bench: setup
	$(BIN)/python benchmarks/tournament.py

clean:
	rm -rf $(VENV) demo-results .pytest_cache .mypy_cache .ruff_cache
