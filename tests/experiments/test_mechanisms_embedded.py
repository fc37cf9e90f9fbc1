"""A cooperation mechanism played for real: the embedded Gemma 3 270M in both seats of
`contracting/dilemma` through `stratagem run`, offline on the CPU. The model proposes a contract,
answers it and moves, each decision constrained by a grammar to the phase's legal labels, and
the engine enforces what was agreed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.cli import cli

from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import get_stage

ROUNDS = 2


def test_embedded_model_proposes_answers_and_plays_under_a_contract(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "contract.yaml"
    config = {
        "name": "contract",
        "output": str(tmp_path / "out"),
        "models": [{"model": "local/gemma-3-270m", "max_concurrency": 1}],
        "agents": [{"name": "plain"}],
        "games": ["contracting/dilemma"],
        "game_options": {"contracting/dilemma": {"proposer": 0}},
        "lineups": [["plain", "plain"]],
        "rounds": [ROUNDS],
    }
    file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    code, out, _ = cli(capsys, "run", str(file), "--no-progress")
    assert code == 0, out
    assert "1 played, 0 failed" in out
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        (episode,) = store.episodes()
        decisions = store.events(episode.id, "decision")
        calls = store.llm_calls(episode.id)
        (offer,) = store.events(episode.id, "proposal")
        contracts = store.events(episode.id, "contract")
        rounds = store.rounds(episode.id)
    # Seat 0 proposes; a proposal other than "none" is answered by seat 1; then both move.
    answered = offer.data["profile"] != []
    assert len(decisions) == len(calls) == 1 + answered + 2 * ROUNDS
    assert all(d.data["valid"] for d in decisions)  # the grammar allows nothing but a label
    first, *_ = calls
    assert "none" in first.request["choices"] and first.text in first.request["choices"]
    assert len(rounds) == ROUNDS and all(r.valid for r in rounds)
    stage = get_stage("dilemma")
    bound = contracts[0].data
    for r in rounds:
        profile = [stage.index(p, a) for p, a in enumerate(r.actions)]
        expected = list(stage.payoff(profile))
        if bound["accepted"]:  # a deviation pays the penalty to the other seat
            broke = [a != c for a, c in zip(r.actions, bound["profile"], strict=True)]
            expected = [x + 15.0 * (broke[1 - p] - broke[p]) for p, x in enumerate(expected)]
        assert list(r.payoffs) == expected
