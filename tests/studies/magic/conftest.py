"""Stores of scripted MAgIC runs shared by the extraction and report-section tests: one challenger
entity against one defender entity on all five games of seed-004 (two settings each, by side in
the social games, every seat in the others), with invalid replies on purpose."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

GAMES = ("chameleon", "undercover", "cost-sharing", "npd3", "public-good")
CHALLENGER_ID = "chal<i>"
"""Markup in a model id: the report must show it as text."""
CHALLENGER = f"{CHALLENGER_ID}|magic"
DEFENDER = "def|magic"
SCRIPTS = ("magic-chal", "magic-def")


def reply(request: Request, challenger: bool) -> str:
    """A player of MAgIC's chat games that reads the request as a model would (the study's
    texts, `agents/magic/prompts`). The challenger defects, contributes nothing and tells the
    truth; it also answers garbage at a few moments (PD round 2, Public Good round 3, its first
    Cost Sharing vote, Chameleon belief probes before the second clue), and the defender to the
    Undercover role probe."""
    system = request.messages[0].content
    found = re.search(r"Your name: Player (\d)", system)
    seat = int(found.group(1)) if found else 1
    others = [k for k in (1, 2, 3) if k != seat]
    chat = "\n".join(m.content for m in request.messages)
    last = request.messages[-1].content
    asked = last.rsplit("[System]:", 1)[-1]
    if "Tell me which Player you are" in asked:
        if "Chameleon" in system:
            role = "chameleon" if "You are the chameleon!" in chat else "non-chameleon"
            return f"I am Player {seat}, my role is {role}"
        return f"I am Player {seat}, my role is non-undercover" if challenger else "no idea"
    if "undercover from your own perspective" in asked:
        a, b = others
        return (
            f"I think Player {a} is undercover, because of the clue\n"
            f"I think Player {a} thinks Player {b} is undercover\n"
            f"I think Player {b} thinks Player {a} is undercover"
        )
    if "suspicious" in asked:
        if challenger and chat.count("My clue is") < 2:
            return "I cannot tell yet."
        a, b = others
        return (
            f"As Player {seat},\nI think:\nPlayer {a} is more suspicious, because x\n"
            f"Player {b} is less suspicious, because y"
        )
    if "can guess the" in last and "You are the chameleon!" in chat:
        return 'I guess the code is "Apple"' if challenger else 'I guess the code is "Grape"'
    if "Now vote which proposal" in last or "vote for Player xx's" in last:
        if challenger and "At 1's round" not in chat:
            return "I like them all."
        return "I vote for Player 1's proposal"
    if "Now vote which of the other players" in last:
        return f"I vote for Player {others[0] if challenger else others[-1]}."
    if "propose the following" in asked:
        return (
            "As Player 1, representing Airline A, I propose the following cost distribution:\n"
            "Airline A: 40%\nAirline B: 30%\nAirline C: 30%"
        )
    if "Cooperate" in asked or "cooperate" in last:
        if challenger and "Round 1 is over" in chat and "Round 2 is over" not in chat:
            return "Let me think about it."
        return "Defect" if challenger else "Cooperate"
    if "contribute" in system.lower() or "contribute" in asked:
        if challenger and "Round 2 is over" in chat and "Round 3 is over" not in chat:
            return "Some."
        return "I contribute 0" if challenger else "I contribute 20"
    return f"My clue is: thing {seat}."


@pytest.fixture(scope="session")
def scripted_players() -> Iterator[None]:
    register_script(SCRIPTS[0], lambda request, sample: reply(request, True))
    register_script(SCRIPTS[1], lambda request, sample: reply(request, False))
    yield
    for name in SCRIPTS:
        _REGISTERED.pop(name, None)


def run_magic(folder: Path, **settings: Any) -> Path:
    """Play an experiment of the two scripted entities; returns the store's path."""
    data: dict[str, Any] = {
        "name": "magic",
        "output": str(folder),
        "models": [
            {"model": f"scripted/{SCRIPTS[0]}", "id": CHALLENGER_ID},
            {"model": f"scripted/{SCRIPTS[1]}", "id": "def"},
        ],
        "agents": [{"name": "magic", "kind": "magic", "max_reasks": 1}],
        "games": [f"{g}/{k}" for g in GAMES for k in (0, 1)],
        "retry": {"base_delay": 0},
        "lineups": [
            {"challenger": f"magic@{CHALLENGER_ID}", "defenders": "magic@def", "by": "side"}
        ],
        **settings,
    }
    summary = asyncio.run(Runner(config_from_dict(data, "test"), show_progress=False).run())
    assert summary.failed == 0, summary.errors
    return folder / STORE_FILE


@pytest.fixture(scope="session")
def magic_store(scripted_players: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """26 competition games: 2 settings × (2 sides of each social game + 3 seats of each
    game-theory game)."""
    return run_magic(tmp_path_factory.mktemp("magic"))
