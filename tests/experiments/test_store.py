"""The SQLite result store: schema, transactions, protection of finished results, bulk writes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from stratagem.errors import StratagemError
from stratagem.experiments.records import EncodedJson
from stratagem.experiments.store import (
    SCHEMA_VERSION,
    EpisodeBundle,
    EpisodeRecord,
    MatchEntry,
    ResultStore,
    RoundRecord,
)
from stratagem.experiments.tournament import Tournament
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.match import MatchResult
from stratagem.strategies.registry import get_strategy

PD = NormalFormGame.prisoners_dilemma("pd", t=5, r=3, p=1, s=0)


@pytest.fixture
def store() -> ResultStore:
    s = ResultStore(":memory:")
    s.create_experiment("exp", "Experiment", {"turns": 3})
    return s


def llm_episode(store: ResultStore, episode_id: str = "ep1") -> None:
    store.add_episode(
        episode_id,
        "exp",
        "pd",
        [{"name": "gpt", "kind": "llm", "model": "openai/gpt-4o-mini"}, "TitForTat"],
        seed=7,
        spec={"model": "openai/gpt-4o-mini"},
        labels=PD.labels,
        game_payoffs=PD.payoffs.tolist(),
    )


MATCH = MatchResult(((0, 1, 1), (0, 0, 1)), (3.0 + 5.0 + 1.0, 3.0 + 0.0 + 1.0))


# -- opening -----------------------------------------------------------------------------------


def test_new_file_gets_schema_wal_and_parent_folder(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "results.db"
    with ResultStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        mode = store._conn.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
        assert store._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        store.create_experiment("exp", "E", {"k": 1})
    with ResultStore(path) as again:
        assert [e.id for e in again.experiments()] == ["exp"]
        assert again.experiments()[0].config == {"k": 1}


def test_a_file_that_is_not_a_database_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are not the results you are looking for\n" * 20)
    with pytest.raises(StratagemError, match=r"notes\.db: not a SQLite database"):
        ResultStore(path)


def test_another_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StratagemError, match="not a stratagem result store"):
        ResultStore(path)


def test_a_newer_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    ResultStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    with pytest.raises(
        StratagemError, match=rf"schema version {SCHEMA_VERSION + 1} is newer.*upgrade stratagem"
    ):
        ResultStore(path)


def test_context_manager_closes_the_connection() -> None:
    with ResultStore() as store:
        pass
    with pytest.raises(sqlite3.ProgrammingError):
        store.experiments()


# -- experiments -------------------------------------------------------------------------------


def test_experiments_are_idempotent_and_protected(store: ResultStore) -> None:
    assert store.create_experiment("exp", "Experiment", {"turns": 3}) is False
    with pytest.raises(StratagemError, match="already exists with a different"):
        store.create_experiment("exp", "Experiment", {"turns": 4})
    store.create_experiment("exp", "Experiment", {"turns": 4}, update=True)
    record = store.experiment("exp")
    assert record is not None and record.config == {"turns": 4}
    assert record.created_at.endswith("+00:00")
    assert store.experiment("nope") is None


def test_episode_needs_a_known_experiment(store: ResultStore) -> None:
    with pytest.raises(StratagemError, match="unknown experiment 'nope'"):
        store.add_episode("e", "nope", "pd", ["a", "b"])


# -- the episode lifecycle ---------------------------------------------------------------------


def test_llm_episode_lifecycle(store: ResultStore) -> None:
    llm_episode(store)
    assert store.add_episode("ep1", "exp", "pd", ["x", "y"]) is False  # existing kept
    ep = store.episode("ep1")
    assert ep is not None and ep.status == "pending" and ep.player_names == ("gpt", "TitForTat")
    store.start_episode("ep1")
    store.add_round("ep1", 1, ["cooperate", "cooperate"], [3, 3], tokens=[495, None])
    store.add_round("ep1", 2, [None, "cooperate"], [0, 0], valid=False, tokens=[668, None])
    assert store.add_event("ep1", "message", {"text": "hi"}, round=1, player=0) == 0
    assert store.add_event("ep1", "message", {"text": "ho"}, round=2, player=1) == 1
    call = store.add_llm_call(
        "openai/gpt-4o-mini",
        episode_id="ep1",
        player=0,
        round=1,
        cache_key="k1",
        request={"messages": [{"role": "user", "content": "play"}]},
        response={"text": "[move] cooperate"},
        text="[move] cooperate",
        input_tokens=400,
        output_tokens=95,
        cost_usd=0.0001,
        latency_s=0.5,
    )
    assert call > 0
    store.add_answer(
        "ep1", 1, 0, "Q1", "5", question="What if both defect?", parsed=5, correct=True
    )
    store.add_belief("ep1", 1, 0, 1, {"cooperate": 0.8}, about_player=1, score=0.25)
    store.finish_episode("ep1")

    ep = store.episode("ep1")
    assert ep is not None
    assert ep.status == "finished" and ep.payoffs == (3.0, 3.0)
    assert ep.labels == PD.labels and ep.seed == 7 and ep.source == "stratagem"
    assert ep.started_at is not None and ep.finished_at is not None
    rounds = store.rounds("ep1")
    assert rounds[1] == RoundRecord("ep1", 2, (None, "cooperate"), (0.0, 0.0), False, (668, None))
    assert [e.data["text"] for e in store.events("ep1", kind="message")] == ["hi", "ho"]
    calls = store.llm_calls("ep1")
    assert calls[0].seq == 0 and calls[0].input_tokens == 400 and calls[0].cached is False
    assert store.llm_calls(cache_key="k1")[0].id == call
    assert store.answers("ep1")[0].correct is True
    assert store.beliefs("ep1")[0].content == {"cooperate": 0.8}
    assert store.status_counts("exp") == {"pending": 0, "running": 0, "finished": 1, "failed": 0}


def test_round_and_event_checks(store: ResultStore) -> None:
    llm_episode(store)
    store.start_episode("ep1")
    with pytest.raises(StratagemError, match="expected 2 actions, got 3"):
        store.add_round("ep1", 1, ["cooperate"] * 3)
    with pytest.raises(StratagemError, match="'share' is not an action of player 1"):
        store.add_round("ep1", 1, ["cooperate", "share"])
    with pytest.raises(StratagemError, match="payoffs: expected 2 numbers, got 1"):
        store.add_round("ep1", 1, ["cooperate", "defect"], [1])
    with pytest.raises(StratagemError, match="not JSON"):
        store.add_event("ep1", "odd", {"x": object()})
    store.add_round("ep1", 1, ["cooperate", "defect"], [0, 5])
    with pytest.raises(StratagemError, match="round 1 is already recorded"):
        store.add_round("ep1", 1, ["cooperate", "defect"], [0, 5])
    with pytest.raises(StratagemError, match="unknown episode 'ghost'"):
        store.add_round("ghost", 1, ["cooperate", "defect"])


def test_finished_episodes_are_final(store: ResultStore) -> None:
    llm_episode(store)
    store.start_episode("ep1")
    store.add_round("ep1", 1, ["defect", "defect"], [1, 1])
    store.finish_episode("ep1", [1, 1])
    with pytest.raises(StratagemError, match="is finished"):
        store.add_round("ep1", 2, ["defect", "defect"], [1, 1])
    with pytest.raises(StratagemError, match="already finished"):
        store.finish_episode("ep1")
    with pytest.raises(StratagemError, match="already finished; pass replace=True"):
        store.start_episode("ep1")
    with pytest.raises(StratagemError, match="cannot fail"):
        store.fail_episode("ep1", "boom")
    assert len(store.rounds("ep1")) == 1
    store.start_episode("ep1", replace=True)
    assert store.rounds("ep1") == []


def test_seat_costs_sum_each_seats_calls(store: ResultStore) -> None:
    llm_episode(store)
    store.start_episode("ep1")
    store.add_llm_call("m", episode_id="ep1", player=0, cost_usd=0.5)
    store.add_llm_call("m", episode_id="ep1", player=0, cost_usd=0.25)
    store.add_llm_call("m", episode_id="ep1", player=1, cost_usd=None)  # a failed call
    store.add_llm_call("m", cost_usd=9.0)  # outside any episode
    assert store.seat_costs(["ep1", "nope"]) == {"ep1": {0: 0.75, 1: 0.0}}


def test_restart_clears_partial_work_but_keeps_model_calls(store: ResultStore) -> None:
    llm_episode(store)
    store.start_episode("ep1")
    store.add_round("ep1", 1, ["defect", "defect"], [1, 1])
    store.add_llm_call("m", episode_id="ep1", cost_usd=0.5)
    store.fail_episode("ep1", "rate limited")
    ep = store.episode("ep1")
    assert ep is not None and ep.status == "failed" and ep.error == "rate limited"
    store.start_episode("ep1")
    ep = store.episode("ep1")
    assert ep is not None and ep.status == "running" and ep.error is None
    assert store.rounds("ep1") == [] and store.llm_calls("ep1") == []
    spend = [c.cost_usd for c in store.llm_calls()]
    assert spend == [0.5]  # detached, not lost


def test_llm_call_outside_an_episode_and_secrets_redacted(store: ResultStore) -> None:
    store.add_llm_call(
        "anthropic/claude",
        request={"headers": {"Authorization": "Bearer sk-123", "x-api-key": "sk-1"}, "api_key": 1},
    )
    (call,) = store.llm_calls()
    assert call.episode_id is None
    assert "sk-" not in repr(call.request)
    assert call.request["headers"]["Authorization"] == "[redacted]"


@pytest.mark.parametrize("key", ["PASSWORD", "Api-Key", "api_\u212aey", "apI\u212aey"])
def test_secrets_are_redacted_under_keys_in_any_case(store: ResultStore, key: str) -> None:
    """The quick test for secret-looking keys ahead of the walk misses none that the walk
    redacts: other cases, and the Kelvin sign, whose lower case is "k"."""
    store.add_llm_call("m", request={"nested": [{key: "sk-secret"}]}, response={key: "sk-2"})
    (call,) = store.llm_calls()
    assert "sk-" not in repr(call.request) + repr(call.response)


@pytest.mark.parametrize("key", ["API_KEY", "api_\u212aey"])
def test_secrets_in_an_encoded_request_are_redacted(store: ResultStore, key: str) -> None:
    """A request given as its JSON text (the cache key's, non-ASCII unescaped) is checked too."""
    text = json.dumps({"nested": [{key: "sk-secret"}], "prompt": "caf\u00e9"}, ensure_ascii=False)
    store.add_llm_call("m", request=EncodedJson(text))
    (call,) = store.llm_calls()
    assert "sk-" not in repr(call.request)
    assert call.request["prompt"] == "caf\u00e9"


# -- whole matches -------------------------------------------------------------------------------


def test_record_match_writes_the_whole_match(store: ResultStore) -> None:
    store.record_match("exp", "m1", PD, ["TitForTat", "AlwaysDefect"], "0:1:2:3", MATCH)
    ep = store.episode("m1")
    assert ep is not None
    assert ep.status == "finished" and ep.game == "pd" and ep.seed == "0:1:2:3"
    assert ep.players == (
        {"name": "TitForTat", "kind": "strategy"},
        {"name": "AlwaysDefect", "kind": "strategy"},
    )
    assert ep.payoffs == MATCH.scores and ep.game_payoffs == PD.payoffs.tolist()
    rounds = store.rounds("m1")
    assert [r.actions for r in rounds] == [
        ("cooperate", "cooperate"),
        ("defect", "cooperate"),
        ("defect", "defect"),
    ]
    assert [r.payoffs for r in rounds] == [(3.0, 3.0), (5.0, 0.0), (1.0, 1.0)]
    assert sum(r.payoffs[0] for r in rounds if r.payoffs) == ep.payoffs[0]


def test_re_recording_a_finished_match_needs_replace(store: ResultStore) -> None:
    store.record_match("exp", "m1", PD, ["a", "b"], 1, MATCH)
    with pytest.raises(StratagemError, match="'m1' is already recorded as finished"):
        store.record_match("exp", "m1", PD, ["a", "b"], 1, MATCH)
    other = MatchResult(((1,), (1,)), (1.0, 1.0))
    store.record_match("exp", "m1", PD, ["a", "b"], 1, other, replace=True)
    assert len(store.rounds("m1")) == 1
    assert len(store.episodes()) == 1


def test_record_match_completes_a_pending_episode_and_keeps_its_spec(store: ResultStore) -> None:
    store.add_episode("m1", "exp", "pd", ["a", "b"], spec={"from": "grid"})
    store.record_match("exp", "m1", PD, ["a", "b"], 1, MATCH)
    ep = store.episode("m1")
    assert ep is not None and ep.status == "finished" and ep.spec == {"from": "grid"}


def test_a_bad_match_rolls_back_its_whole_batch(store: ResultStore) -> None:
    good = [MatchEntry("exp", f"g{i}", PD, ["a", "b"], i, MATCH) for i in range(3)]
    bad = MatchEntry("exp", "bad", PD, ["a", "b"], 0, MatchResult(((0, 2), (0, 0)), (0, 0)))
    with pytest.raises(StratagemError, match=r"match 'bad': action indices \(2, 0\)"):
        store.record_matches([*good, bad], batch_size=2)
    # The first batch (g0, g1) was committed; the second (g2, bad) left nothing behind.
    assert [e.id for e in store.episodes()] == ["g0", "g1"]
    assert store.rounds("g2") == []


class _FailingConnection:
    """A connection whose executemany fails, as a full disk would, after other writes succeeded."""

    def __init__(self, real: sqlite3.Connection) -> None:
        self.real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def executemany(self, *args: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")


def test_a_failing_write_in_the_middle_of_record_match_leaves_no_episode(
    store: ResultStore,
) -> None:
    real = store._conn
    store._conn = _FailingConnection(real)  # type: ignore[assignment]
    try:
        with pytest.raises(sqlite3.OperationalError, match="disk is full"):
            store.record_match("exp", "m1", PD, ["a", "b"], 1, MATCH)
    finally:
        store._conn = real
    assert store.episode("m1") is None
    assert store.episodes() == []
    store.record_match("exp", "m1", PD, ["a", "b"], 1, MATCH)  # the store still works
    assert len(store.rounds("m1")) == 3


def test_put_episode_is_all_or_nothing(store: ResultStore) -> None:
    episode = EpisodeRecord("e", "exp", "pd", ({"name": "a"}, {"name": "b"}), None, "finished")
    dup = RoundRecord("e", 1, ("x", "y"), None)
    with pytest.raises(StratagemError, match="duplicate round or event"):
        store.put_episode(EpisodeBundle(episode, (dup, dup)))
    assert store.episode("e") is None


def test_two_thousand_matches_in_batches(tmp_path: Path) -> None:
    names = [
        "AlwaysCooperate",
        "AlwaysDefect",
        "TitForTat",
        "GrimTrigger",
        "TitForTwoTats",
        "SuspiciousTitForTat",
        "WinStayLoseShift",
        "Alternator",
    ]
    tournament = Tournament([get_strategy(n) for n in names], PD, turns=50, repetitions=56)
    records = list(tournament.matches())
    assert len(records) == 36 * 56 == 2016
    with ResultStore(tmp_path / "t.db") as store:
        store.create_experiment("t", "tournament", {"turns": 50})
        entries = (
            MatchEntry(
                "t",
                f"{m.first}-{m.second}-{m.repetition}",
                PD,
                [names[m.first], names[m.second]],
                m.seed,
                m.result,
            )
            for m in records
        )
        assert store.record_matches(entries) == 2016
        assert store.status_counts("t")["finished"] == 2016
        n_rounds = store._conn.execute("SELECT COUNT(*) FROM rounds").fetchone()[0]
        assert n_rounds == 2016 * 50
        for m in records[::97]:
            eid = f"{m.first}-{m.second}-{m.repetition}"
            ep = store.episode(eid)
            assert ep is not None and ep.payoffs == m.result.scores
            rounds = store.rounds(eid)
            assert [PD.index(0, r.actions[0]) for r in rounds] == list(m.result.actions[0])
            assert sum(r.payoffs[1] for r in rounds if r.payoffs) == pytest.approx(
                m.result.scores[1]
            )
