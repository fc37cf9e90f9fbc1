"""`stratagem rescore` on a stored MAgIC run (issue 35 item 4): a changed vote parser's flips are
found at the vote, unchanged episodes keep every metric, the source is never touched, `--fork`
plans before it calls and then calls only after the changed move, and `--metric` stores a
comparable experiment. The players are scripted; the store, the engine and the command are real.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scipy import stats
from support.cli import cli

from stratagem.agents.magic.vote_parse import strict_vote
from stratagem.agents.parsing import ParseError
from stratagem.analysis.rescore_report import compare_metrics
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.grid import build_game
from stratagem.experiments.records import EventRecord
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.games.replay import replay
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

SCRIPTS = ("rescore-chal", "rescore-def")
SENT: list[str] = []
"""The purpose-free log of every reply the scripted models gave (one entry per provider call)."""


def reply(request: Request, challenger: bool) -> str:
    """A MAgIC player that reads the request as a model would. The challenger changes its mind
    in every vote of the social games ("I vote for Player a. On reflection, I vote for Player
    b."), which the strict reading re-asks and answers with its second choice."""
    SENT.append(request.messages[-1].content[-40:])
    system = request.messages[0].content
    found = re.search(r"Your name: Player (\d)", system)
    seat = int(found.group(1)) if found else 1
    others = [k for k in (1, 2, 3) if k != seat]
    chat = "\n".join(m.content for m in request.messages)
    last = request.messages[-1].content
    asked = last.rsplit("[System]:", 1)[-1]
    if "could not be used" in last:  # the re-ask of a double vote
        return f"I vote for Player {others[-1]}."
    if "Tell me which Player you are" in asked:
        role = "chameleon" if "You are the chameleon!" in chat else "non-chameleon"
        return f"I am Player {seat}, my role is {role}"
    if "suspicious" in asked:
        a, b = others
        return (
            f"As Player {seat},\nI think:\nPlayer {a} is more suspicious, because x\n"
            f"Player {b} is less suspicious, because y"
        )
    if "can guess the" in last and "You are the chameleon!" in chat:
        return 'I guess the code is "Apple"'
    if "Now vote which proposal" in last or "vote for Player xx's" in last:
        return "I vote for Player 1's proposal"
    if "Now vote which of the other players" in last:
        if challenger:
            return f"I vote for Player {others[0]}. On reflection, I vote for Player {others[-1]}."
        return f"I vote for Player {others[-1]}."
    if "propose the following" in asked:
        return (
            "As Player 1, representing Airline A, I propose the following cost distribution:\n"
            "Airline A: 40%\nAirline B: 30%\nAirline C: 30%"
        )
    return f"My clue is: thing {seat}."


@pytest.fixture(scope="module", autouse=True)
def scripted() -> Iterator[None]:
    register_script(SCRIPTS[0], lambda request, sample: reply(request, True))
    register_script(SCRIPTS[1], lambda request, sample: reply(request, False))
    yield
    for name in SCRIPTS:
        _REGISTERED.pop(name, None)


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return play(tmp_path / "magic")


def play(folder: Path, options: dict[str, Any] | None = None) -> Path:
    """A stored MAgIC run: two Chameleon settings and Cost Sharing, the challenger on each
    side; a fork of any size needs a confirmation (`confirm.calls: 0`)."""
    data: dict[str, Any] = {
        "name": "magic",
        "output": str(folder),
        "models": [
            {"model": f"scripted/{SCRIPTS[0]}", "id": "chal"},
            {"model": f"scripted/{SCRIPTS[1]}", "id": "def"},
        ],
        "agents": [{"name": "magic", "kind": "magic", "max_reasks": 1, "options": options or {}}],
        "games": ["chameleon/0", "chameleon/1", "cost-sharing/0"],
        "retry": {"base_delay": 0},
        "confirm": {"calls": 0},
        "lineups": [{"challenger": "magic@chal", "defenders": "magic@def", "by": "side"}],
    }
    summary = asyncio.run(Runner(config_from_dict(data, "test"), show_progress=False).run())
    assert summary.failed == 0, summary.errors
    return folder


def digest(folder: Path, experiment: str = "magic") -> str:
    """Every stored row of an experiment, hashed: what must not change."""
    conn = sqlite3.connect(folder / STORE_FILE)
    rows: list[Any] = list(conn.execute("SELECT * FROM experiments WHERE id=?", (experiment,)))
    ids = [
        r[0] for r in conn.execute("SELECT id FROM episodes WHERE experiment_id=?", (experiment,))
    ]
    for table, order in (
        ("episodes", "id"), ("events", "seq"), ("rounds", "round"), ("answers", "id"),
        ("beliefs", "id"), ("llm_calls", "id"),
    ):  # fmt: skip
        column = "id" if table == "episodes" else "episode_id"
        for episode in ids:
            rows += conn.execute(
                f"SELECT * FROM {table} WHERE {column}=? ORDER BY {order}", (episode,)
            ).fetchall()
    conn.close()
    return hashlib.sha256(json.dumps(rows, default=str).encode()).hexdigest()


def rescored(folder: Path) -> str:
    with ResultStore(folder / STORE_FILE) as store:
        names = [e.id for e in store.experiments() if e.id != "magic"]
    assert len(names) == 1, names
    return names[0]


def moves(store: ResultStore, episode: str) -> list[tuple[int, EventRecord]]:
    """(step, decision event) of every stored move: the engine plays them again to tell the
    steps (a step is one request for moves, simultaneous ones together)."""
    record = store.episode(episode)
    assert record is not None and isinstance(record.seed, int)
    decisions = store.events(episode, "decision")
    game = build_game(record.game, None, record.spec.get("rounds"), record.spec.get("game_options"))
    played = replay(game, record.seed, [(e.player or 0, e.data["action"]) for e in decisions])
    return [(k + 1, decisions[i]) for k, step in enumerate(played.steps) for i in step.moves]


def votes(store: ResultStore, episode: str, seats: set[int]) -> list[tuple[int, int, Any]]:
    """(step, seat, action) of the stored votes of `seats` (a Chameleon vote names a player)."""
    return [
        (step, int(e.player or 0), e.data["action"])
        for step, e in moves(store, episode)
        if e.player in seats and str(e.data.get("action", "")).startswith("Player ")
    ]


def test_a_strict_vote_reads_several_votes_as_asked() -> None:
    text = "I vote for Player 2. On reflection, I vote for Player 3."
    with pytest.raises(ParseError, match="Player 2 and Player 3"):
        strict_vote(text, ("Player 2", "Player 3"))
    assert strict_vote(text, ("Player 2", "Player 3"), "first") == "Player 2"
    assert strict_vote(text, ("Player 2", "Player 3"), "last") == "Player 3"
    with pytest.raises(ParseError, match="cannot vote for Player 1"):
        strict_vote(
            "I vote for Player 1, no, Player 2... I vote for Player 1", ("Player 2",), "last"
        )


def test_a_changed_vote_parser_flips_at_the_vote_and_cuts_there(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, sent = digest(results), len(SENT)
    code, out, err = cli(
        capsys, "rescore", str(results), "--set", "agent.magic.options.several_votes=first"
    )
    assert code == 0, err
    assert len(SENT) == sent, "a rescore without --fork sends nothing"
    assert digest(results) == before, "the source experiment is only read"
    name = rescored(results)
    with ResultStore(results / STORE_FILE) as store:
        config = store.experiment(name).config  # type: ignore[union-attr]
        assert config["rescored_from"] == "magic"
        assert config["rescore"]["changes"] == ["agent.magic.options.several_votes=first"]
        assert config["agents"][0]["options"] == {"several_votes": "first"}
        flips = 0
        for new in store.episodes(name):
            origin = new.spec["rescore"]
            old = store.episode(origin["source_episode"])
            assert old is not None and old.experiment_id == "magic"
            if not old.game.startswith("chameleon"):  # a vote names one proposal: unchanged
                assert origin["changed_at"] is None
                # the same moves, payoffs and rounds as the source
                assert new.status == "finished" and new.payoffs == old.payoffs
                assert [e.data for e in store.events(new.id, "decision")] == [
                    e.data for e in store.events(old.id, "decision")
                ]
                assert store.rounds(new.id) == [
                    dataclasses.replace(r, episode_id=new.id) for r in store.rounds(old.id)
                ]
                continue
            # every challenger vote flips, read as its first name; the episode is cut there
            challenger = {p for p, d in enumerate(old.players) if "chal" in json.dumps(d)}
            expected = votes(store, old.id, challenger)
            flips += len(expected)
            step = min(s for s, _, _ in expected)
            assert origin["changed_at"] == step
            assert new.status == "failed" and new.payoffs is None
            assert new.error is not None and new.error.startswith(
                f"cut at move {step} by a rescore"
            )
            kept = moves(store, new.id)
            assert kept == [(k, e) for k, e in kept if k < step] and kept
            assert [e.data["action"] for _, e in kept] == [
                e.data["action"] for k, e in moves(store, old.id) if k < step
            ]
    assert f"{flips} flipped" in out
    assert re.search(r"episodes: 7 read, 3 unchanged, 4 changed \(at move \d+\): 4 stored cut", out)
    # the metrics compare the unchanged episodes only, so every difference is 0
    assert "4 changed episodes not played on left out" in out
    assert re.search(r"the same in every pair \(\d+\): .*payoff, seat 0", out)
    report = results / f"rescore-{name}.md"
    assert "## Moves read differently" in report.read_text("utf-8")


def test_a_parser_that_reads_what_the_reask_gave_changes_nothing(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(
        capsys, "rescore", str(results), "--set", "agent.magic.options.several_votes=last"
    )
    assert code == 0, err
    assert "0 flipped" in out and "7 read, 7 unchanged, 0 changed" in out
    name = rescored(results)
    with ResultStore(results / STORE_FILE) as store:
        for new in store.episodes(name):
            old = store.episode(new.spec["rescore"]["source_episode"])
            assert old is not None and new.status == "finished" and new.payoffs == old.payoffs
            calls = store.llm_calls(new.id)
            assert all(c.cached and c.cost_usd == 0.0 for c in calls)
            # the vote is read from the first reply: its re-ask is never needed
            if old.game.startswith("chameleon"):
                assert len(calls) < len(store.llm_calls(old.id))
        assert store.call_totals(name)["paid_usd"] == 0


def test_a_reading_that_needs_a_reask_the_run_never_sent_is_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = play(tmp_path / "first", {"several_votes": "first"})  # double votes read, no re-ask
    sent = len(SENT)
    code, out, err = cli(
        capsys, "rescore", str(folder), "--set", "agent.magic.options.several_votes=reask"
    )
    assert code == 0, err
    assert len(SENT) == sent and "6 flipped" in out
    name = rescored(folder)
    report = (folder / f"rescore-{name}.md").read_text("utf-8")
    # the vote was valid; read strictly it needs a re-ask nobody sent: invalid, nothing played
    assert (
        report.count("-> nothing (invalid) (its reading needs a reask call the run never sent)")
        == 6
    )


def test_a_store_from_before_calls_kept_their_keys_is_read_the_same(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(results / STORE_FILE) as conn:  # as stores made before 0.1 hold them
        conn.execute("UPDATE llm_calls SET cache_key = NULL")
    code, out, err = cli(
        capsys, "rescore", str(results), "--set", "agent.magic.options.several_votes=first"
    )
    assert code == 0, err
    assert "6 flipped" in out and "7 read, 3 unchanged, 4 changed" in out


def test_fork_is_planned_before_any_call_and_calls_only_after_the_change(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("rescore", str(results), "--set", "agent.magic.options.several_votes=first")
    code, out, err = cli(capsys, *args)  # cut first: the fork continues this experiment
    assert code == 0, err
    name = rescored(results)
    source, sent = digest(results), len(SENT)
    code, out, err = cli(capsys, *args, "--fork", "--dry-run")
    assert code == 0, err
    assert re.search(r"plan: 4 episodes to play .* about \d+ model calls", out)
    code, out, err = cli(capsys, *args, "--fork")  # above confirm.calls, and no terminal
    assert code == 2 and "needs a confirmation" in err and "plan: 4 episodes" in out
    assert len(SENT) == sent, "nothing is sent before the plan is confirmed"
    code, out, err = cli(capsys, *args, "--fork", "--yes")
    assert code == 0, err
    paid = len(SENT) - sent
    assert paid > 0 and digest(results) == source
    with ResultStore(results / STORE_FILE) as store:
        assert store.call_totals(name)["calls"] - store.call_totals(name)["cached"] >= paid
        forked = [e for e in store.episodes(name) if e.spec["rescore"]["changed_at"]]
        assert len(forked) == 4 and all(e.status == "finished" for e in forked)
        new_calls = 0
        for episode in forked:
            t = episode.spec["rescore"]["changed_at"]
            start = min(e.seq for k, e in moves(store, episode.id) if k == t)
            for call in store.llm_calls(episode.id):
                if not call.cached:  # placed among the events: after those before move t
                    new_calls += 1
                    assert call.request["after_events"] >= start, "a paid call before t"
            # the changed move is the new reading of the stored reply
            old = store.episode(episode.spec["rescore"]["source_episode"])
            assert old is not None
            challenger = {p for p, d in enumerate(old.players) if "chal" in json.dumps(d)}
            before = [v for v in votes(store, old.id, challenger) if v[0] == t]
            after = [v for v in votes(store, episode.id, challenger) if v[0] == t]
            assert before and len(before) == len(after)
            for (_, seat, was), (_, _, now) in zip(before, after, strict=True):
                assert was != now and now == f"Player {min(k for k in (1, 2, 3) if k != seat + 1)}"
    assert new_calls == paid, "every new call is a paid one, and every paid one is new"
    assert f"{paid} paid" in out and "4 played on" in out
    code, out, err = cli(capsys, *args, "--fork", "--yes")  # again: nothing left to play
    assert code == 0 and len(SENT) == sent + paid
    assert "plan: 0 episodes to play" in out


def test_metric_mode_stores_the_episodes_under_other_options(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, sent = digest(results), len(SENT)
    code, out, err = cli(capsys, "rescore", str(results), "--metric", "--set",
                         "magic.code_compat=true")  # fmt: skip
    assert code == 0, err
    assert len(SENT) == sent and digest(results) == before
    name = rescored(results)
    with ResultStore(results / STORE_FILE) as store:
        config = store.experiment(name).config  # type: ignore[union-attr]
        assert config["analysis"]["magic"] == {"code_compat": True}
        assert config["rescore"] == {"mode": "metric", "changes": ["magic.code_compat=true"]}
        copied = store.episodes(name, status="finished")
        assert len(copied) == len(store.episodes("magic", status="finished"))
        for episode in copied:
            old = store.episode(episode.spec["rescore"]["source_episode"])
            assert old is not None and old.payoffs == episode.payoffs
            assert len(store.llm_calls(episode.id)) == len(store.llm_calls(old.id))
        assert store.call_totals(name)["paid_usd"] == 0
    assert "7 scored under the new options" in out
    assert "magic: " in out, "the study's metrics are compared"


def test_bad_changes_are_one_line_errors(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args, message in (
        (("--set", "agent.nobody.options.x=1"), "agent.NAME.FIELD=VALUE with NAME one of"),
        (("--set", "agent.magic.options.several_votes=sometimes"), "several_votes"),
        (("--set", "agent.magic.options.several_votes=reask"), "leaves every agent as it was"),
        (("--set", "agent.magic.repetitions=2"), "keeps the grid"),
        ((), "nothing to change"),
        (("--metric", "--fork", "--set", "magic.code_compat=true"), "--metric reads no reply"),
    ):
        code, _out, err = cli(capsys, "rescore", str(results), *args)
        assert code == 2, (args, err)
        assert message in err and "Traceback" not in err
    args = ("--set", "agent.magic.options.several_votes=first", "--name", "mine")
    assert cli(capsys, "rescore", str(results), *args)[0] == 0
    other = ("--set", "agent.magic.options.several_votes=last", "--name", "mine")
    code, _, err = cli(capsys, "rescore", str(results), *other)
    assert code == 2 and "stored with other settings" in err


def test_the_metric_differences_are_paired_by_source_episode() -> None:
    old = {"score": {"a": 1.0, "b": 2.0, "c": 4.0, "z": 9.0}, "zero": {"a": 0.0}}
    new = {"score": {"x": 2.0, "y": 2.5, "w": 7.0}, "zero": {"x": 0.0}}
    pairs = {"x": "a", "y": "b", "w": "c"}  # "z" was cut: no new value
    diffs, _ = compare_metrics(old, new, pairs)
    assert [d.name for d in diffs] == ["score"]  # a metric 0 everywhere is no metric here
    c = diffs[0].comparison
    assert c is not None and c.n == 3 and c.estimate == pytest.approx((1 + 0.5 + 3) / 3)
    expected = stats.ttest_rel([2.0, 2.5, 7.0], [1.0, 2.0, 4.0])
    assert c.p == pytest.approx(expected.pvalue)
    low, high = expected.confidence_interval(0.95)
    assert (c.ci_low, c.ci_high) == (pytest.approx(low), pytest.approx(high))
