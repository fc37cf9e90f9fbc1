"""The runner plays seed-003's protocol from a YAML file: prompting modes, self-consistency,
LLM-vs-LLM matchups, declared variants and the study's round counts. The scripted model stands
in for an LLM (logic only; the embedded model plays it in test_examples)."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from stratagem.errors import StratagemError
from stratagem.experiments.config import load_config
from stratagem.experiments.grid import expand
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

REQUESTS: list[Request] = []


def tag_script(request: Request, sample: int) -> str:
    """A `[move]` reply whose move depends on the request seed, so samples can disagree."""
    REQUESTS.append(request)
    system = request.messages[0].content
    listed = system.split("possible moves: ", 1)[1].split(".\n", 1)[0]
    labels = re.split(r", and |, | and ", listed)
    return f"[move] (seeded) {labels[(request.seed or 0) % len(labels)]}"


@pytest.fixture(autouse=True)
def scripted() -> Any:
    register_script("cf-tag", tag_script)
    REQUESTS.clear()
    yield
    _REGISTERED.pop("cf-tag", None)


def config(tmp_path: Path, **changes: Any) -> Path:
    data: dict[str, Any] = {
        "name": "cf",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/cf-tag"}],
        "agents": [
            {"name": "zs", "framing": "counterfactual", "output": "tag", "history": "chat",
             "max_reasks": 4},
            {"name": "sc-cot", "framing": "counterfactual", "output": "tag", "history": "chat",
             "prompting": "cot", "samples": 3, "max_reasks": 4},
        ],
        "games": ["pd", "sh-swap"],
        "variants": [{"name": "sh-swap", "base": "sh", "labels": ["hare", "stag"],
                      "payoffs": [[2, 4], [1, 6]]}],
        "opponents": ["srep", "agent:zs"],
        "rounds": ["study"],
        "concurrency": 2,
    }  # fmt: skip
    data.update(changes)
    path = tmp_path / "cf.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_grid_resolves_study_rounds_variants_and_llm_opponents(tmp_path: Path) -> None:
    specs = expand(load_config(config(tmp_path)))
    assert len(specs) == 2 * 2 * 2
    assert {s.rounds for s in specs} == {16}  # seed-003 §3.1: the PD family plays 16 rounds
    llm = [s for s in specs if s.opponent == "agent:zs"]
    assert all(s.opponent_agent is not None and s.opponent_agent.name == "zs" for s in llm)
    assert [p["kind"] for p in llm[0].players()] == ["llm", "llm"]
    variant = next(s for s in specs if s.game == "sh-swap")
    assert variant.build_game().matrix().labels[0] == ("hare", "stag")
    assert variant.key()["variant"]["base"] == "sh"
    # Settings added later enter the id only when set: a zero-shot, single-sample agent's key
    # is what it was before they existed, so stored episodes keep their ids.
    zs = next(s for s in specs if s.agent.name == "zs")
    assert "prompting" not in zs.key()["agent"] and "samples" not in zs.key()["agent"]
    assert next(s for s in specs if s.agent.name == "sc-cot").key()["agent"]["samples"] == 3


def test_rps_study_rounds(tmp_path: Path) -> None:
    specs = expand(load_config(config(tmp_path, games=["eq1", "ba3-alt"], variants=[])))
    assert {s.rounds for s in specs} == {24}  # seed-003 §3.1


def test_it_plays_self_consistency_and_llm_vs_llm(tmp_path: Path) -> None:
    summary = asyncio.run(Runner(load_config(config(tmp_path)), show_progress=False).run())
    assert (summary.finished, summary.failed) == (8, 0)
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        for episode in store.episodes("cf"):
            rounds = store.rounds(episode.id)
            assert len(rounds) == 16 and all(r.valid for r in rounds)
            assert all(r.tokens is not None and r.tokens[0] > 0 for r in rounds)
            if episode.spec["opponent"] == "agent:zs":
                assert all(r.tokens is not None and (r.tokens[1] or 0) > 0 for r in rounds)
            votes = store.events(episode.id, "self_consistency")
            if episode.spec["agent"]["name"] != "sc-cot":
                assert votes == []
                continue
            assert len(votes) == 16
            for vote, r in zip(votes, rounds, strict=True):
                moves = vote.data["moves"]
                assert len(moves) == 3 and vote.player == 0
                top = max(Counter(moves).values())
                assert Counter(moves)[r.actions[0]] == top  # the majority move was played
                assert moves[vote.data["chosen"]] == r.actions[0]
    # Samples use distinct seeds (else one cached reply would answer all three).
    cot = [r for r in REQUESTS if r.messages[0].content.startswith("You are going to play")]
    assert len({r.seed for r in cot}) >= 3


def test_self_consistency_tokens_are_the_sum_of_the_samples(tmp_path: Path) -> None:
    path = config(tmp_path, games=["pd"], variants=[], opponents=["srep"], rounds=[1])
    asyncio.run(Runner(load_config(path), show_progress=False).run())
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        episode = next(e for e in store.episodes("cf") if e.spec["agent"]["name"] == "sc-cot")
        (r,) = store.rounds(episode.id)
        calls = store.llm_calls(episode_id=episode.id)
    assert len(calls) == 3  # seed-003 §3.6: every sample's call counts
    assert r.tokens is not None
    assert r.tokens[0] == sum((c.input_tokens or 0) + (c.output_tokens or 0) for c in calls)


def test_the_chat_opens_with_the_study_hint(tmp_path: Path) -> None:
    path = config(tmp_path, games=["pd"], variants=[], opponents=["srep"], rounds=[2],
                  agents=[{"name": "zs", "framing": "counterfactual", "output": "tag",
                           "history": "chat"}])  # fmt: skip
    asyncio.run(Runner(load_config(path), show_progress=False).run())
    first, second = REQUESTS[0], REQUESTS[1]
    assert first.messages[1].content == (
        "[hint] Let's play this game. You are playing against a fresh player. "
        "Please choose your move.\n"
    )
    # seed-003 §3.3: round 2's user turn merges "Move made", the result and the new round's hint.
    assert second.messages[-1].content.startswith("[hint] Move made. Waiting for the game to end.")
    assert second.messages[-1].content.endswith(
        "Let's play another round. Please choose your move.\n"
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"opponents": ["agent:nobody"]}, "opponents.0: 'agent:nobody' names no agent entry"),
        (
            {"agents": [{"kind": "tool", "attitude": "defect", "samples": 3}]},
            "agents.0.samples: tool agents take no samples (only plain agents do)",
        ),
        (
            {"agents": [{"framing": "neutral", "prompting": "cot"}]},
            "agents.0: framing 'neutral' has no cot prompt",
        ),
        (
            {"variants": [{"name": "bad", "base": "pd", "payoffs": [[1, 2, 3]]}]},
            "variants.0: variant 'bad': payoffs have shape",
        ),
        (
            {"variants": [{"name": "pd", "base": "pd", "labels": ["x", "y"]}]},
            "already a catalog game",
        ),
        ({"games": ["nope"], "variants": []}, "games.0"),
    ],
)
def test_bad_settings_are_one_line_errors(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(StratagemError, match=message.replace("(", r"\(").replace(")", r"\)")):
        expand(load_config(config(tmp_path, **changes)))


def test_study_samples_and_per_agent_repetitions(tmp_path: Path) -> None:
    path = config(
        tmp_path, games=["pd", "eq1"], variants=[], opponents=["srep"], rounds=[1],
        agents=[{"name": "zs", "framing": "counterfactual", "output": "tag", "repetitions": 3},
                {"name": "sc", "framing": "counterfactual", "output": "tag", "samples": "study",
                 "repetitions": 1}],
    )  # fmt: skip
    specs = expand(load_config(path))
    # seed-003 §3.1: non-SC rows 5 runs, SC rows 2; here 3 and 1 per game.
    assert Counter(s.agent.name for s in specs) == {"zs": 6, "sc": 2}
    asyncio.run(Runner(load_config(path), show_progress=False).run())
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        k = {
            e.game: len(store.events(e.id, "self_consistency")[0].data["moves"])
            for e in store.episodes("cf")
            if e.spec["agent"]["name"] == "sc"
        }
    assert k == {"pd": 3, "eq1": 5}  # seed-003 §2.1: k = 3 in PD, 5 in RPS


def test_tag_output_is_constrained_unless_told_otherwise(tmp_path: Path) -> None:
    agents = [
        {"name": "on", "framing": "counterfactual", "output": "tag"},
        {"name": "off", "framing": "counterfactual", "output": "tag", "constrain": False},
    ]
    path = config(tmp_path, games=["pd"], variants=[], opponents=["srep"], rounds=[1],
                  agents=agents)  # fmt: skip
    asyncio.run(Runner(load_config(path), show_progress=False).run())
    choices = sorted(r.choices for r in REQUESTS)
    assert choices == [(), ("[move] cooperation", "[move] defection")]
