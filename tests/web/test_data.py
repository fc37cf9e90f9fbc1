"""The viewer's read-only data layer (issue 25 items 1, 2, 4, 5): experiments, cells, episode
pages with filters and search, an episode step by step from each perspective, over real stores
that browsing never changes and that a run may be writing to meanwhile."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.chameleon_view import REASKED_REPLY, SECRET_WORD, analysis_marker
from support.named import only
from support.stores import store_with_episodes

from stratagem.errors import StratagemError
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import SCHEMA_VERSION, ResultStore
from stratagem.web.data import Perspective, Sources
from stratagem.web.data import sources as data_sources

EVERYTHING = Perspective.parse("all")


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file of a results directory by name, with a hash of its bytes."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


@pytest.fixture
def sources(chameleon: tuple[Path, str]) -> Iterator[Sources]:
    found = Sources([chameleon[0]])
    yield found
    found.close()


def _seat_view(sources: Sources, episode: str, seat: int) -> dict[str, Any]:
    return sources.episode(only(sources), episode, Perspective.parse(f"seat:{seat}"))


# -- perspective -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, seat", [("all", None), ("seat:0", 0), ("seat:12", 12)])
def test_a_perspective_is_everything_or_one_seat(text: str, seat: int | None) -> None:
    assert Perspective.parse(text) == Perspective(seat)
    assert str(Perspective.parse(text)) == text


@pytest.mark.parametrize("text", ["", "seat:", "seat:-1", "3", "seat:1x", "seat:\u0663", "All"])
def test_a_bad_perspective_is_one_line_naming_it(text: str) -> None:
    with pytest.raises(StratagemError) as caught:
        Perspective.parse(text)
    assert f"perspective '{text}'" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_chameleon_sees_neither_the_word_nor_the_others_votes_nor_their_calls(
    sources: Sources, chameleon: tuple[Path, str]
) -> None:
    episode = chameleon[1]
    view = _seat_view(sources, episode, 2)
    text = json.dumps(view)
    assert SECRET_WORD not in text  # told to seats 0 and 1 only
    assert "You are the chameleon!" in text  # its own private message
    assert "I vote for Player 3." not in text  # seat 0's reply and seat 1's private vote
    assert "I vote for Player 2." not in text  # seat 0's private vote
    assert REASKED_REPLY not in text  # seat 1's invalid reply
    assert analysis_marker(0) not in text and analysis_marker(1) not in text
    assert analysis_marker(2) in text  # its own analyses
    assert "Your name: Player 1" not in text and "Your name: Player 2" not in text
    assert '"outcome"' not in text  # the record's hidden summary
    assert view["seed"] is None  # the engine could replay the hidden roles from it
    events = [e for step in view["steps"] for e in step["events"]]
    assert all(e["visible_to"] is None or 2 in e["visible_to"] or e["player"] == 2 for e in events)
    assert {e["data"]["player"] for e in events if e["kind"] == "vote"} == {2}
    calls = [c for step in view["steps"] for c in step["calls"]]
    assert calls and {c["seat"] for c in calls} == {2}
    beliefs = [b for step in view["steps"] for b in step["beliefs"]]
    assert beliefs and {b["seat"] for b in beliefs} == {2}


def test_a_seat_that_knows_the_word_sees_it_but_not_the_chameleons_message(
    sources: Sources, chameleon: tuple[Path, str]
) -> None:
    view = _seat_view(sources, chameleon[1], 0)
    text = json.dumps(view)
    assert SECRET_WORD in text
    events = [e for step in view["steps"] for e in step["events"]]
    assert all(e["visible_to"] is None or 0 in e["visible_to"] or e["player"] == 0 for e in events)
    private = [e["visible_to"] for e in events if e["visible_to"]]
    assert private == [[0], [0]]  # told the word, its own vote; never seat 1's or 2's
    assert analysis_marker(0) in text and analysis_marker(2) not in text


def test_everything_holds_every_event_call_belief_and_the_reask_with_its_correction(
    sources: Sources, chameleon: tuple[Path, str]
) -> None:
    view = sources.episode(only(sources), chameleon[1], EVERYTHING)
    text = json.dumps(view)
    for secret in (SECRET_WORD, "You are the chameleon!", '"outcome"', analysis_marker(0)):
        assert secret in text
    assert [s["seat"] for s in view["seats"]] == [0, 1, 2] and view["seed"] is not None
    assert all(s["kind"] == "llm" for s in view["seats"])
    steps = view["steps"]
    assert [s["index"] for s in steps] == list(range(len(steps)))
    seqs = [e["seq"] for s in steps for e in s["events"]]
    assert seqs == list(range(len(seqs)))  # every event once, in order
    calls = [c for s in steps for c in s["calls"]]
    (vote,) = [c for c in calls if c["seat"] == 1 and c["reply"] == REASKED_REPLY]
    (reask,) = vote["reasks"]
    assert "Please answer again" in reask["shown"] and reask["reply"] == "I vote for Player 3."
    assert vote["purpose"] == "decision" and vote["messages"][0]["role"] == "system"
    assert vote["tokens"] > 0 and vote["model"] == "scripted/pgm-test"
    assert {"cost_usd", "latency_s", "cached", "reasoning"} <= set(vote)
    assert not any(c["reply"] == "I vote for Player 3." and c["seat"] == 1 for c in calls)


def test_a_seat_beyond_the_episode_and_unknown_ids_are_one_line(
    sources: Sources, chameleon: tuple[Path, str]
) -> None:
    for call, what in [
        (lambda: _seat_view(sources, chameleon[1], 3), "has seats 0 to 2"),
        (lambda: sources.episode(only(sources), "nope", EVERYTHING), "unknown episode 'nope'"),
        (lambda: sources.episode("7", chameleon[1], EVERYTHING), "unknown source '7'"),
        (lambda: sources.cells(only(sources), "nope"), "unknown experiment 'nope'"),
        (lambda: sources.episodes(only(sources), "nope"), "unknown experiment 'nope'"),
    ]:
        with pytest.raises(StratagemError) as caught:
            call()
        assert what in str(caught.value) and "\n" not in str(caught.value)


# -- read-only -------------------------------------------------------------------------------------


def test_browsing_every_method_leaves_the_store_files_as_they_were(
    sources: Sources, chameleon: tuple[Path, str]
) -> None:
    folder, episode = chameleon
    before = _snapshot(folder)
    assert STORE_FILE in before and f"{STORE_FILE}-wal" not in before
    (experiment,) = sources.experiments()
    sources.sources()
    sources.cells(only(sources), experiment["id"])
    sources.episodes(only(sources), experiment["id"], filters={"invalid": "1"}, query="fruit")
    for perspective in ("all", "seat:0", "seat:1", "seat:2"):
        sources.episode(only(sources), episode, Perspective.parse(perspective))
    sources.version(only(sources))
    Sources([folder / STORE_FILE]).close()
    assert _snapshot(folder) == before  # no -wal or -shm left behind either


# -- while a run writes ----------------------------------------------------------------------------


def test_new_episodes_and_steps_appear_while_another_connection_writes(tmp_path: Path) -> None:
    store_with_episodes(tmp_path / STORE_FILE).close()
    sources = Sources([tmp_path])  # opened before the writer, while no -wal exists
    first = sources.version(only(sources))
    assert sources.episodes(only(sources), "exp")["total"] == 2
    with ResultStore(tmp_path / STORE_FILE) as writer:
        writer.start_episode("ep0")
        writer.add_event("ep0", "message", {"text": "first step"}, round=1)
        assert sources.episode(only(sources), "ep0", EVERYTHING)["steps"][0]["events"][0][
            "data"
        ] == {"text": "first step"}
        second = sources.version(only(sources))
        assert second != first
        writer.add_event("ep0", "message", {"text": "second step"}, round=2, visible_to=[1])
        view = sources.episode(only(sources), "ep0", EVERYTHING)
        assert [e["data"]["text"] for s in view["steps"] for e in s["events"]] == [
            "first step",
            "second step",
        ]
        assert "second step" not in json.dumps(
            sources.episode(only(sources), "ep0", Perspective(0))
        )
        third = sources.version(only(sources))
        assert third != second
        writer.add_episode("ep9", "exp", "pd", ["TitForTat", "TitForTat"], seed=9)
        assert [i["id"] for i in sources.episodes(only(sources), "exp")["items"]][-1] == "ep9"
        assert sources.version(only(sources)) != third
        assert sources.episode(only(sources), "ep0", EVERYTHING)["status"] == "running"
    assert sources.episodes(only(sources), "exp")["total"] == 3


# -- experiments and cells -------------------------------------------------------------------------


def _finished_pd(
    store: ResultStore, episode: str, moves: list[tuple[str, str]], cost: float
) -> None:
    payoff = {("C", "C"): (3, 3), ("C", "D"): (0, 5), ("D", "C"): (5, 0), ("D", "D"): (1, 1)}
    word = {"C": "cooperation", "D": "defection"}
    store.add_episode(
        episode, "exp", "pd",
        [{"name": "plain:m", "kind": "llm", "model": "m"},
         {"name": "TitForTat", "kind": "strategy"}],
        seed=len(episode), spec={"model": "m", "agent": {"name": "plain"}, "opponent": "TitForTat",
                                 "rounds": len(moves)},
    )  # fmt: skip
    store.start_episode(episode)
    for k, pair in enumerate(moves, start=1):
        store.add_round(episode, k, [word[m] for m in pair], list(payoff[pair]))
    store.add_llm_call("m", episode_id=episode, player=0, round=1, text="C", cost_usd=cost,
                       input_tokens=10, output_tokens=2)  # fmt: skip
    store.finish_episode(episode)


def test_experiments_and_cells_count_episodes_calls_cost_and_scores_per_seat(
    tmp_path: Path,
) -> None:
    with ResultStore(tmp_path / STORE_FILE) as store:
        store.create_experiment("exp", "PD runs")
        _finished_pd(store, "a", [("C", "C"), ("D", "C")], 0.25)
        _finished_pd(store, "b", [("C", "C"), ("C", "C")], 0.5)
        store.add_episode("c", "exp", "pd", ["TitForTat", "TitForTat"], seed=3)
    sources = Sources([tmp_path])
    (experiment,) = sources.experiments()
    assert experiment["id"] == "exp" and experiment["name"] == "PD runs"
    assert experiment["games"] == ["pd"] and experiment["models"] == ["m"]
    assert experiment["status"]["finished"] == 2 and experiment["status"]["pending"] == 1
    assert (experiment["calls"], experiment["tokens"], experiment["cost_usd"]) == (2, 24, 0.75)
    assert sources.sources() == [
        {"id": tmp_path.name, "path": str(tmp_path / STORE_FILE), "experiments": 1}
    ]
    (cell,) = sources.cells(only(sources), "exp")
    assert (cell["model"], cell["agent"], cell["game"], cell["rounds"]) == ("m", "plain", "pd", 2)
    assert cell["lineup"] == ["plain:m", "TitForTat"] and cell["episodes"] == 2
    assert cell["score"] == [(8 + 6) / 2, (3 + 6) / 2]
    assert cell["cooperation"] == 3 / 4 and cell["invalid_rate"] == 0.0
    assert cell["cost_usd"] == 0.75


def test_cells_are_read_once_per_store_version_and_again_after_a_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25 item 9: a second view of the same store reuses the cells; a write changes
    `version()` and the kept answer is not used."""
    with ResultStore(tmp_path / STORE_FILE) as store:
        store.create_experiment("exp", "PD runs")
        _finished_pd(store, "a", [("C", "C"), ("D", "C")], 0.25)
    reads: list[str] = []
    real = data_sources.episode_tallies

    def counted(store: ResultStore, experiment: str) -> Any:
        reads.append(experiment)
        return real(store, experiment)

    monkeypatch.setattr(data_sources, "episode_tallies", counted)
    sources = Sources([tmp_path])
    first = sources.cells(only(sources), "exp")
    first[0]["episodes"] = 99  # a caller changing its copy changes nothing kept
    assert sources.cells(only(sources), "exp")[0]["episodes"] == 1 and len(reads) == 1
    with ResultStore(tmp_path / STORE_FILE) as writer:  # a run writing meanwhile
        _finished_pd(writer, "b", [("C", "C"), ("C", "C")], 0.5)
        (cell,) = sources.cells(only(sources), "exp")
        assert (cell["episodes"], cell["cost_usd"], len(reads)) == (2, 0.75, 2)
        assert sources.cells(only(sources), "exp") == [cell] and len(reads) == 2


def test_held_reuses_one_connection_per_store_and_still_sees_new_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_with_episodes(tmp_path / STORE_FILE).close()
    opened: list[Path] = []

    class Counted(ResultStore):
        def __init__(self, path: Path, **kw: Any) -> None:
            opened.append(Path(path))
            super().__init__(path, **kw)

    monkeypatch.setattr(data_sources, "ResultStore", Counted)
    sources = Sources([tmp_path])
    opened.clear()
    with sources.held():
        for _ in range(3):
            sources.episodes(tmp_path.name, "exp")
            sources.episode(tmp_path.name, "ep0", EVERYTHING)
        assert len(opened) == 1
        with ResultStore(tmp_path / STORE_FILE) as writer:  # a run starts: a reader per call
            writer.add_episode("ep9", "exp", "pd", ["TitForTat", "TitForTat"], seed=9)
            assert sources.episodes(tmp_path.name, "exp")["total"] == 3
            writer.add_episode("ep10", "exp", "pd", ["TitForTat", "TitForTat"], seed=10)
            assert sources.episodes(tmp_path.name, "exp")["total"] == 4
        assert len(opened) == 3
        assert sources.episodes(tmp_path.name, "exp")["total"] == 4  # the run is over: held again
        with ResultStore(tmp_path / STORE_FILE) as writer:
            writer.add_episode("ep11", "exp", "pd", ["TitForTat", "TitForTat"], seed=11)
        assert sources.episodes(tmp_path.name, "exp")["total"] == 5  # a changed file is read anew
        assert sources.episodes(tmp_path.name, "exp")["total"] == 5 and len(opened) == 5
    held = len(opened)
    sources.episodes(tmp_path.name, "exp")  # after the block: a connection per call again
    assert len(opened) == held + 1
    assert set(_snapshot(tmp_path)) == {STORE_FILE}  # no -wal or -shm left behind


# -- episode pages ---------------------------------------------------------------------------------


@pytest.fixture
def many(tmp_path: Path) -> Sources:
    """120 episodes: every third one failed, ep7 with an invalid move, ep42 with a reply and
    ep43 with an event holding searched text."""
    with ResultStore(tmp_path / STORE_FILE) as store:
        store.create_experiment("exp", "many")
        store.create_experiment("other", "other")
        for k in range(120):
            agent = "tom" if k % 5 == 0 else "plain"
            players = [{"name": "plain:m", "kind": "llm", "model": "m" if k % 2 else "n",
                        "agent": agent}, {"name": "TitForTat", "kind": "strategy"}]  # fmt: skip
            store.add_episode(f"ep{k}", "exp", "ultimatum" if k >= 100 else "pd", players, seed=k)
            if k % 3 == 0:
                store.start_episode(f"ep{k}")
                store.fail_episode(f"ep{k}", "boom")
        store.add_episode("x", "other", "pd", ["TitForTat", "TitForTat"], seed=0)
        store.start_episode("ep7")
        store.add_event("ep7", "invalid", {"error": "no move"}, round=1, player=0)
        store.add_llm_call("m", episode_id="ep42", player=0, text="100% sure, Grüße <b>")
        store.add_event("ep43", "message", {"text": 'a "quoted" Grüße'}, round=1)
    return Sources([tmp_path])


def _ids(page: dict[str, Any]) -> list[str]:
    return [item["id"] for item in page["items"]]


def test_pages_are_cut_in_store_order(many: Sources) -> None:
    first = many.episodes(only(many), "exp", per_page=50)
    assert (first["total"], first["page"], first["per_page"]) == (120, 0, 50)
    assert _ids(first) == [f"ep{k}" for k in range(50)]
    assert _ids(many.episodes(only(many), "exp", page=2, per_page=50)) == [
        f"ep{k}" for k in range(100, 120)
    ]
    assert many.episodes(only(many), "exp", page=9)["items"] == []
    item = first["items"][1]
    assert item["seats"] == ["plain:m (llm)", "TitForTat (strategy)"]
    assert (item["game"], item["model"], item["status"], item["invalid"]) == (
        "pd",
        "m",
        "pending",
        0,
    )


def test_filters_narrow_the_page_and_its_total(many: Sources) -> None:
    def ids(**filters: str) -> list[str]:
        page = many.episodes(only(many), "exp", filters=filters, per_page=500)
        assert page["total"] == len(page["items"])
        return _ids(page)

    assert ids(status="failed") == [f"ep{k}" for k in range(0, 120, 3)]
    assert ids(game="ultimatum") == [f"ep{k}" for k in range(100, 120)]
    assert ids(model="m", game="ultimatum") == [f"ep{k}" for k in range(101, 120, 2)]
    assert ids(invalid="1") == ["ep7"]
    assert len(ids(game="", status="")) == 120  # an empty form field filters nothing
    assert len(ids(invalid="0")) == 119
    assert len(ids(seat_kind="strategy")) == 120 and ids(seat_kind="human") == []
    assert ids(agent="tom") == [f"ep{k}" for k in range(0, 120, 5)]
    assert many.episodes(only(many), "exp", filters={"invalid": "1"})["items"][0]["invalid"] == 1


@pytest.mark.parametrize(
    "filters, what",
    [({"colour": "red"}, "unknown filter 'colour'"), ({"status": "done"}, "status='done'"),
     ({"invalid": "yes"}, "invalid='yes'")],
)  # fmt: skip
def test_a_bad_filter_or_page_is_one_line(
    many: Sources, filters: dict[str, str], what: str
) -> None:
    with pytest.raises(StratagemError) as caught:
        many.episodes(only(many), "exp", filters=filters)
    assert what in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(StratagemError, match="per page"):
        many.episodes(only(many), "exp", per_page=0)


@pytest.mark.parametrize(
    "query, found",
    [("100%", ["ep42"]), ("Grüße", ["ep42", "ep43"]), ('"quoted"', ["ep43"]), ("<b>", ["ep42"]),
     ("1_0", []), ("1%s", []), ("%", ["ep42"])],
)  # fmt: skip
def test_search_finds_replies_and_messages_as_written(
    many: Sources, query: str, found: list[str]
) -> None:
    assert _ids(many.episodes(only(many), "exp", query=query)) == found


# -- sources ---------------------------------------------------------------------------------------


def test_a_folder_of_results_directories_gives_one_source_each(tmp_path: Path) -> None:
    for name in ("b", "a"):
        store_with_episodes(tmp_path / name / STORE_FILE).close()
    sources = Sources([tmp_path, tmp_path / "a"])  # "a" named twice is one source
    assert [Path(s["path"]).parent.name for s in sources.sources()] == ["a", "b"]


def test_a_bad_path_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain.db").write_bytes(b"not a database at all" * 100)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    old = tmp_path / "old.db"
    store_with_episodes(old).close()
    with sqlite3.connect(old) as conn:
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (SCHEMA_VERSION - 1,))
    for path, what in [
        (old, f"`stratagem status {old}` upgrades it"),
        (tmp_path / "missing", "does not exist"),
        (tmp_path / "plain.db", "not a SQLite database"),
        (other, "not a stratagem result store"),
    ]:
        with pytest.raises(StratagemError) as caught:
            Sources([path])
        assert what in str(caught.value) and "\n" not in str(caught.value)
