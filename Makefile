# Everything the project needs is installed here, into .venv, from the package registries.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# llama.cpp compiles for this machine's CPU (-march=native). Some virtual machines report Intel AMX
# but fault on its first tile instruction (SIGILL in the first matrix product, seen on the 2-core
# development machines); a 270M model gains nothing from AMX, so x86-64 builds leave it out.
ifeq ($(shell uname -m),x86_64)
NO_AMX := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
export CMAKE_ARGS ?= -DCMAKE_C_FLAGS="$(NO_AMX)" -DCMAKE_CXX_FLAGS="$(NO_AMX)"
endif

.PHONY: setup demo tournament test lint docs bench clean screenshots

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,axelrod,bedrock,pettingzoo,textarena,openspiel,ray]'
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

# The documentation site (mkdocs.yml) into site/, warnings as errors: a broken link fails it.
docs: setup
	$(BIN)/mkdocs build --strict

test: lint docs
	$(BIN)/pytest -q

# docs/img/*.png: the viewer's pages, saved by its browser tests (needs chromium, chromium-driver).
screenshots: setup
	STRATAGEM_SCREENSHOTS=1 $(BIN)/pytest -q tests/web/test_browser.py tests/web/test_views.py \
		tests/web/test_views_games.py tests/web/test_diff.py tests/web/test_play_browser.py \
		tests/web/test_play_viewer_browser.py

bench: setup
	$(BIN)/python benchmarks/tournament.py

clean:
	rm -rf $(VENV) results site .pytest_cache .mypy_cache .ruff_cache
