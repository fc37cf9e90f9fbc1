"""Playing the PGM-aware agent (`pgm`) through the episode loop on a scripted model, and reading
what it sent and stored: the helpers of its tests (`tests/agents/magic/test_pgm_*.py`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from stratagem.experiments.config import config_from_dict
from stratagem.experiments.records import BeliefRecord, LlmCallRecord
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

Replier = Callable[[Request], str]

NAME = "pgm-test"


def scripted_model() -> Iterator[list[Replier]]:
    """`scripted/pgm-test`, answering with the replier a test puts in the yielded list (the body
    of each test module's `model` fixture)."""
    slot: list[Replier] = [lambda request: ""]
    register_script(NAME, lambda request, sample: slot[0](request))
    yield slot
    _REGISTERED.pop(NAME, None)


def play(
    tmp_path: Path,
    game: str,
    lineup: list[str],
    options: dict[str, Any] | None = None,
    game_options: dict[str, Any] | None = None,
) -> tuple[ResultStore, str]:
    """One episode of `game` with `lineup` ("pgm" / "magic" seats), the pgm seats' `options`
    and the game's rule options; the store and episode id."""
    config = config_from_dict(
        {
            "game_options": game_options or {},
            "name": "pgm",
            "output": str(tmp_path / "out"),
            "models": [{"model": f"scripted/{NAME}"}],
            "agents": [
                {"name": "pgm", "kind": "pgm", "max_reasks": 1,
                 "options": {"probes": False, **(options or {})}},
                {"name": "magic", "kind": "magic", "max_reasks": 1, "options": {"probes": False}},
            ],
            "games": [game],
            "lineups": [lineup],
            "retry": {"base_delay": 0},
        },
        "test",
    )  # fmt: skip
    summary = asyncio.run(Runner(config, show_progress=False).run())
    assert (summary.finished, summary.failed) == (1, 0), summary.errors
    store = ResultStore(tmp_path / "out" / STORE_FILE)
    (episode,) = store.episodes()
    return store, episode.id


# -- reading requests ------------------------------------------------------------------------------


def seat(request: Request) -> int:
    """The seat a chat call is for ("Your name: Player k" in its system message)."""
    system = request.messages[0].content
    return int(system.split("Your name: Player ")[1][0]) - 1


def asked(request: Request) -> str:
    """What the call asks: the text after the last "[System]: " (the whole message for a
    single-history call)."""
    last = request.messages[-1].content
    return last.rsplit("[System]: ", 1)[-1]


def calls(store: ResultStore, episode: str, purpose: str | None = None) -> list[LlmCallRecord]:
    return [
        c for c in store.llm_calls(episode) if purpose is None or c.request["purpose"] == purpose
    ]


def votes_of(store: ResultStore, episode: str) -> dict[int, int]:
    return {e.data["player"]: e.data["vote"] for e in store.events(episode, "vote")}


def beliefs_of(store: ResultStore, episode: str, player: int, kind: str) -> list[BeliefRecord]:
    return [b for b in store.beliefs(episode) if b.player == player and b.content["kind"] == kind]


def matrices(records: list[BeliefRecord]) -> dict[str, np.ndarray]:
    """Stored rows grouped back into 3x3 matrices, by analysis."""
    out: dict[str, np.ndarray] = {}
    for b in records:
        m = out.setdefault(b.content["analysis"], np.zeros((3, 3)))
        m[b.content["perspective"]] = b.content["row"]
    return out


def asked_text(call: LlmCallRecord) -> str:
    return str(call.request["messages"][-1]["content"])


def decision_requests(store: ResultStore, episode: str, player: int) -> list[str]:
    """What each decision of `player` asked (the text after the last "[System]: ")."""
    return [
        asked_text(c).rsplit("[System]: ", 1)[-1]
        for c in calls(store, episode, "decision")
        if c.player == player
    ]
