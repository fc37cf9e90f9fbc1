"""seed-001's tool and debate agents under every cooperation mechanism through the real runner
into a real store (a scripted model against TitForTat), and once on the embedded Gemma 3 270M."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.cli import cli
from support.scripted_run import run_scripted
from support.seed001_script import seed001_reply

from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore

GAMES = [
    "repetition/dilemma", "reputation/dilemma", "mediation/sh", "contracting/dilemma",
    "disarmament/sh",
]  # fmt: skip
AGENTS = [
    {"name": "tool", "kind": "tool", "attitude": "cooperate", "framing": "prisoner"},
    {"name": "debate", "kind": "debate", "attitude": "cooperate", "framing": "prisoner"},
]


def test_both_architectures_play_every_mechanism_through_the_runner(tmp_path: Path) -> None:
    summary = run_scripted(
        tmp_path, "seed001-mechanisms", seed001_reply, agents=AGENTS, games=GAMES,
        game_options={"contracting/dilemma": {"proposer": 0}}, rounds=[2], seeds=[0],
    )  # fmt: skip
    assert summary.failed == 0 and summary.finished == len(AGENTS) * len(GAMES)
    with ResultStore(tmp_path / STORE_FILE, read_only=True) as store:
        episodes = store.episodes("seed001-mechanisms")
        assert sorted(e.game for e in episodes) == sorted(GAMES * len(AGENTS))
        for e in episodes:
            mine = [d for d in store.events(e.id, "decision") if d.player == 0]
            assert mine and all(d.data["valid"] for d in mine), (e.game, mine)
            rounds = store.rounds(e.id)
            assert rounds and all(r.valid and r.actions[0] in ("cooperate", "stag") for r in rounds)
            if e.game == "contracting/dilemma":  # the proposal went through the agent
                (offer,) = store.events(e.id, "proposal")
                assert offer.data["profile"] == ["cooperate", "cooperate"]


def test_embedded_model_plays_a_mechanism_with_the_tool_and_the_debate_agents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real model, both architectures, `mediation/dilemma`, 2 rounds: it finishes and is
    stored, every decision recorded (valid or not: a 270M base model may fail to answer)."""
    file = tmp_path / "mechanism.yaml"
    config = {
        "name": "seed001-embedded",
        "output": str(tmp_path / "out"),
        "models": [{"model": "local/gemma-3-270m", "max_concurrency": 1}],
        "agents": [
            {**AGENTS[0], "max_tokens": 48},
            {**AGENTS[1], "max_turns": 2, "max_tokens": 48},
        ],
        "games": ["mediation/dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [2],
    }
    file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    code, out, _ = cli(capsys, "run", str(file), "--no-progress")
    assert code == 0, out
    assert "2 played, 0 failed" in out
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        episodes = store.episodes()
        assert len(episodes) == 2
        for e in episodes:
            rounds = store.rounds(e.id)
            assert len(rounds) == 2
            mine = [d for d in store.events(e.id, "decision") if d.player == 0]
            assert len(mine) == 2
            calls = store.llm_calls(e.id)
            assert calls and any("a mediator recommends" in str(c.request) for c in calls)
