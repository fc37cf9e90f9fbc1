"""Every example config validates and expands to the grid its comments promise."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagem.experiments.config import load_config
from stratagem.experiments.grid import expand

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize(
    ("name", "episodes"),
    [
        ("quickstart.yaml", 9),
        ("openai-compatible.yaml", 18),
        ("anthropic.yaml", 18),
        ("thesis.yaml", 252),  # seed-001 §4.6: the thesis' 252 games
        ("thesis-local.yaml", 21),
        # seed-003 §3.1: 8 games x (3x7x5 + 3x7x2) = 1,176 games per model, two models.
        ("counterfactual.yaml", 4704),
        ("counterfactual-local.yaml", 128),
        # seed-004 §4: 143 games per challenger and architecture, 4 models x 2 architectures.
        ("magic.yaml", 1144),
        ("magic-local.yaml", 26),
    ],
)
def test_example_expands(name: str, episodes: int) -> None:
    assert len(expand(load_config(EXAMPLES / name))) == episodes
