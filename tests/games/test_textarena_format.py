"""TextArena's move format stated in the prompt (issue 37 item 2): the seat is told TextArena's
own messages unchanged and the moves in TextArena's format that the game accepts now, so a model
that writes what the prompt states plays `examples/textarena.yaml` with every move valid."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from stratagem.experiments.config import load_config
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import get_game
from stratagem.games.textarena import TextArenaMove
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

pytest.importorskip("textarena")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "textarena.yaml"
STATED = "Moves in the game's format that it accepts now"


def stated_moves(request: Request) -> list[str]:
    """The moves the turn prompt states, in its order."""
    prompt = next(m.content for m in request.messages if m.role == "user")
    line = next(line for line in prompt.splitlines() if line.startswith(STATED))
    return re.findall(r"\[[^\[\]]+\]", line.split(":", 1)[1])


@pytest.fixture
def by_the_format() -> Iterator[None]:
    """A model that replies with the last move the prompt states, and a word before it."""
    register_script("ta-format", lambda request, sample: f"I play {stated_moves(request)[-1]}")
    yield
    _REGISTERED.pop("ta-format", None)


def test_the_seat_is_told_the_moves_textarena_named_that_it_accepts() -> None:
    state = get_game("textarena:KuhnPoker-v0").initial_state(0)
    (seat,) = state.to_act()
    space = state.legal(seat)
    assert isinstance(space, TextArenaMove)
    assert space.named() == ("[check]", "[bet]")  # "[call]" and "[fold]" are named, not legal
    assert space.example() == "[bet]"


def test_the_example_played_in_the_stated_format_is_all_valid(
    tmp_path: Path, by_the_format: None
) -> None:
    config = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    config |= {"output": str(tmp_path / "out"), "models": [{"model": "scripted/ta-format"}]}
    path = tmp_path / "textarena.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    summary = asyncio.run(Runner(load_config(path), show_progress=False).run())
    assert (summary.episodes, summary.finished, summary.failed) == (4, 4, 0), summary.errors
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        for episode in store.episodes():
            decisions = store.events(episode.id, "decision")
            assert len(decisions) >= 3 and all(d.data["valid"] for d in decisions)
            assert not store.events(episode.id, "invalid")
            assert store.events(episode.id, "textarena-outcome")  # played to TextArena's end
        system = store.llm_calls()[0].request["messages"][0]["content"]
        assert "passed to you unchanged" in system
