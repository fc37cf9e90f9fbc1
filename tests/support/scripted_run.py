"""Play a small experiment on a scripted model, for tests that need a real results directory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import Runner, RunSummary
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request, Response


def run_scripted(
    output: Path, name: str, reply: Callable[[Request, int], str | Response], **settings: Any
) -> RunSummary:
    """Run experiment `name` into `output` on `scripted/<name>` answering with `reply` (registered
    for this run only): PD against TitForTat unless `settings` say otherwise."""
    data: dict[str, Any] = {
        "name": name,
        "output": str(output),
        "models": [{"model": f"scripted/{name}"}],
        "games": ["pd"],
        "opponents": ["TitForTat"],
        "retry": {"base_delay": 0},
        **settings,
    }
    register_script(name, reply)
    try:
        return asyncio.run(Runner(config_from_dict(data, name), show_progress=False).run())
    finally:
        _REGISTERED.pop(name, None)
