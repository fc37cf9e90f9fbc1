"""The coordinator's side of a Ray worker's stream (`distributed.inbox`), without Ray: a worker
plays, it does not write at will. A write no episode makes, or one to an episode the worker was
not given, stops the run and reaches no table."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from stratagem.errors import StratagemError
from stratagem.experiments.distributed.inbox import Inbox
from stratagem.experiments.distributed.messages import CallRecord, Ended, Message, Writes
from stratagem.experiments.distributed.shared_caps import Held, SharedCaps
from stratagem.experiments.store import ResultStore
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message as ChatMessage
from stratagem.llm.types import Request


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with ResultStore(tmp_path / "s.db") as db:
        db.create_experiment("x", "x", {})
        for episode in ("mine", "theirs"):
            db.add_episode(episode, "x", "dilemma", ["a", "b"], 0)
            db.start_episode(episode)
        yield db


def inbox(store: Any) -> Inbox:
    session: Any = SimpleNamespace(store=store, record=lambda *a: None)
    playing: Any = {"mine": SimpleNamespace(id="mine")}
    return Inbox(session, playing, lambda replies: None, {}, Held(SharedCaps({})))


def event(episode: str) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    return ("add_event", (episode, "note", {"x": 1}), {})


@pytest.mark.parametrize(
    ("message", "says"),
    [
        (Writes((event("mine"), event("theirs"))), "for episode 'theirs', which it was not given"),
        (Writes((("finish_episode", ("mine", [1.0, 1.0]), {}),)), "a write no episode makes"),
        (Writes((("add_event", (), {}),)), "for episode None"),
        (
            CallRecord(
                "scripted/x", CallContext(episode_id="theirs"),
                Request(messages=(ChatMessage("user", "hi"),)), None, "e", 0, None,
            ),
            "sent a model call for episode 'theirs'",
        ),
        (Ended("theirs", [1.0, 1.0]), "an episode's end for episode 'theirs'"),
    ],
)  # fmt: skip
def test_what_no_worker_may_write_stops_the_run_and_writes_nothing(
    store: Any, message: Message, says: str
) -> None:
    with pytest.raises(StratagemError, match=says.replace("(", r"\(")):
        inbox(store).apply([message])
    assert store.events("mine") == [] and store.events("theirs") == []
    assert store.episode("mine").status == "running"


def test_an_assigned_episode_s_step_is_written_whole(store: Any) -> None:
    inbox(store).apply([Writes((event("mine"), event("mine")))])
    assert [e.kind for e in store.events("mine")] == ["note", "note"]
