"""The runner plays seed-001's tool and debate architectures and records the comprehension
questions, from a YAML file; the scripted model stands in for an LLM (logic only)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from stratagem.errors import StratagemError
from stratagem.experiments.config import load_config
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request


def lawyer_script(request: Request, sample: int) -> str:
    """Always decides to defect, answers every question with the thesis' format."""
    text = "\n".join(m.content for m in request.messages)
    if "Your task is to answer this question" in text:
        return "{'ANSWER': '1'}"
    return "{'DECISION': 'Defect'}"


def write(path: Path, agents: list[dict[str, object]]) -> Path:
    config = {
        "name": "arch",
        "output": str(path.parent / "out"),
        "models": [{"model": "scripted/arch-lawyer"}],
        "agents": agents,
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [2],
        "concurrency": 1,
    }
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(autouse=True)
def scripted_lawyer() -> object:
    register_script("arch-lawyer", lawyer_script)
    yield
    _REGISTERED.pop("arch-lawyer", None)


def test_tool_and_debate_agents_play_and_answer_the_four_questions(tmp_path: Path) -> None:
    agents: list[dict[str, object]] = [
        {"name": "tool", "kind": "tool", "attitude": "defect", "framing": "prisoner",
         "questions": True},
        {"name": "debate", "kind": "debate", "attitude": "defect", "framing": "prisoner",
         "questions": True, "max_turns": 2},
    ]  # fmt: skip
    summary = asyncio.run(Runner(load_config(write(tmp_path / "a.yaml", agents))).run())
    assert (summary.finished, summary.failed) == (2, 0)
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        for episode in store.episodes("arch"):
            assert episode.spec["agent"]["kind"] in {"tool", "debate"}
            rounds = store.rounds(episode.id)
            assert [r.actions[0] for r in rounds] == ["defect", "defect"]
            assert all(r.valid for r in rounds)
            answers = store.answers(episode.id)
            assert sorted((a.round, a.question_id) for a in answers) == [
                (t, q) for t in (1, 2) for q in ("Q1", "Q2", "Q3", "Q4")
            ]
            assert all(a.answer for a in answers)


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ({"kind": "tool", "framing": "prisoner"}, "needs one"),
        ({"kind": "plain", "attitude": "defect"}, "plain agents take no attitude"),
        ({"kind": "debate", "attitude": "maybe"}, "attitude"),
    ],
)
def test_attitude_must_fit_the_architecture(tmp_path: Path, agent: dict[str, object],
                                            message: str) -> None:  # fmt: skip
    with pytest.raises(StratagemError, match=message):
        load_config(write(tmp_path / "b.yaml", [agent]))
