"""The three proof games of the general engine, from the example files, on the embedded model for
real (llama.cpp on the shipped Gemma 3 270M, offline): Ultimatum (structured offers, in turn),
Public Good (three LLM seats at once) and the cheap-talk Dilemma (free-text messages)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from stratagem.experiments.config import load_config
from stratagem.experiments.runner import STORE_FILE, Runner, RunSummary
from stratagem.experiments.store import ResultStore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, tmp_path: Path) -> tuple[RunSummary, ResultStore]:
    data = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8"))
    data["output"] = str(tmp_path / name)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    summary = asyncio.run(Runner(load_config(path), show_progress=False).run())
    assert summary.failed == 0 and summary.finished == summary.episodes, summary.errors
    assert summary.calls > 0 and summary.cached_calls == 0
    return summary, ResultStore(tmp_path / name / STORE_FILE)


def test_ultimatum_on_the_embedded_model(tmp_path: Path) -> None:
    summary, store = run_example("ultimatum", tmp_path)
    with store:
        assert summary.episodes == 6  # 3 line-ups x 2 seeds
        for episode in store.episodes():
            offer = store.events(episode.id, "offer")
            if offer:
                amount = offer[0].data["offer"]
                assert 0 <= amount <= 100  # the schema's enum held the model to the range
                (end,) = store.events(episode.id, "response")
                assert end.data["response"] in ("accept", "reject")
                expected = (100 - amount, amount) if end.data["response"] == "accept" else (0, 0)
                assert episode.payoffs == expected
            llm_seats = [p for p, d in enumerate(episode.players) if d["kind"] == "llm"]
            decisions = store.events(episode.id, "decision")
            assert all(d.data["valid"] for d in decisions if d.player in llm_seats)


def test_public_good_with_three_embedded_seats(tmp_path: Path) -> None:
    _, store = run_example("public-good", tmp_path)
    with store:
        (episode,) = store.episodes()
        rounds = store.events(episode.id, "contributions")
        assert len(rounds) == 5
        # Every contribution within 0..100; the budget is not enforced (seed-004 §3.5).
        assert all(0 <= c <= 100 for r in rounds for c in r.data["contributions"])
        kept = [100 - sum(r.data["contributions"][p] for r in rounds) for p in range(3)]
        (payout,) = store.events(episode.id, "payout")
        assert episode.payoffs == tuple(k + payout.data["share"] for k in kept)
        assert store.events(episode.id, "invalid") == []


def test_cheap_talk_on_the_embedded_model(tmp_path: Path) -> None:
    _, store = run_example("cheap-talk", tmp_path)
    with store:
        (episode,) = store.episodes()
        rounds = store.rounds(episode.id)
        assert len(rounds) == 3 and all(r.valid for r in rounds)
        messages = store.events(episode.id, "messages")
        assert len(messages) == 3 and all(m.visible_to is None for m in messages)
        for m in messages:
            assert all(isinstance(text, str) and len(text) <= 300 for text in m.data["messages"])
        assert episode.payoffs == tuple(sum(r.payoffs[p] for r in rounds) for p in range(2))  # type: ignore[index]
