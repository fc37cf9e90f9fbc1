"""The smallest experiment file a check needs: one scripted model, a plain agent against
TitForTat, 2 rounds of the dilemma; a test overrides the fields it is about."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def experiment(tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "checks",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/random:7"}],
        "agents": [{"name": "plain"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [2],
        "seeds": [0],
    }
    data.update(overrides)
    return data


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
