"""Stored TradeCraft games -> `TomGame` (seed-002 §3–§7): the focal seat and its group from the
agent's `tom` notes, the V reports from the beliefs table, the delivered proposals with their
replies, the outcome, and the counts of §7; damaged games fail naming the episode and field."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.tom_games import EXPERIMENT, new_store, play

from stratagem.analysis.episodes import EpisodeData, load_episodes
from stratagem.errors import StratagemError
from stratagem.experiments.store import ResultStore
from stratagem.studies.tom import applies
from stratagem.studies.tom.extract import (
    BASELINES,
    NO_NOTES,
    TomData,
    tom_data,
    tom_game,
    unfinished,
)
from stratagem.studies.tom.records import TomGame


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ResultStore:
    s = new_store(tmp_path_factory.mktemp("tom") / "stratagem.db")
    play(s, "v1", group="V1", seed=1)
    play(s, "v2", group="V2", seed=2, invalid_first_proposal=True, fail_order=True)
    play(s, "v0v0", group="V0", baseline=(False, False), seed=3)
    play(s, "base", group="V0", baseline=(True, True), seed=4)
    play(s, "late", group="V1", baseline=(True, False), seed=5)
    play(s, "running", seed=6, finish=False)
    s.add_episode("plain", EXPERIMENT, "tradecraft/0", ["a", "b"], seed=0)
    s.start_episode("plain")
    s.add_event("plain", "outcome", {"outcome": "timeout"})
    s.finish_episode("plain", [0.0, 0.0])
    return s


@pytest.fixture(scope="module")
def data(store: ResultStore) -> TomData:
    return tom_data(load_episodes(store, EXPERIMENT), store.beliefs)


def game(data: TomData, eid: str) -> TomGame:
    return next(g for g in data.games if g.episode_id == eid)


def episode(store: ResultStore, eid: str) -> EpisodeData:
    return next(e for e in load_episodes(store, EXPERIMENT) if e.record.id == eid)


def test_the_focal_seat_and_group_come_from_the_notes(data: TomData) -> None:
    g = game(data, "v1")
    assert (g.focal, g.group, g.baseline_focal) == (0, "V1", False)
    assert g.model == "openai/gpt-test" and g.instance == "tradecraft/0"
    late = game(data, "late")
    assert (late.focal, late.opponent, late.group) == (1, 0, "V1")
    both = game(data, "v0v0")
    assert (both.focal, both.group, both.baseline_focal) == (0, "V0", True)


def test_every_turn_has_both_seats_reports_with_the_groups_orders(data: TomData) -> None:
    g = game(data, "v1")
    assert g.max_turn == 4 and g.turns == 4 and g.outcome == "timeout"
    assert len(g.reports) == 2 * g.turns
    for turn in range(1, g.turns + 1):
        mine, theirs = g.report(turn, g.focal), g.report(turn, g.opponent)
        assert mine is not None and theirs is not None
        assert mine.v0 and mine.v1 and mine.v2 is None
        assert theirs.v0 and theirs.v1 is None
        assert {mine.phase, theirs.phase} == {"proposal", "decision"}
        assert all(0 <= v <= 10 for v in mine.v0.values())
    v2 = game(data, "v2")
    focal_reports = [r for r in v2.reports if r.seat == v2.focal]
    assert all(r.v2 is not None for r in focal_reports)
    # fail_order: V1 unreadable whenever the focal seat decided: absent, and counted
    assert all((r.v1 is None) == (r.phase == "decision") for r in focal_reports)


def test_proposals_carry_their_replies_and_invalid_ones_are_left_out(data: TomData) -> None:
    g = game(data, "v1")
    assert [p.turn for p in g.proposals] == [1, 2, 3, 4]
    assert [p.proposer for p in g.proposals] == [0, 1, 0, 1]
    assert all(p.accepted is not None for p in g.proposals)
    assert any(p.accepted for p in g.proposals) and not all(p.accepted for p in g.proposals)
    v2 = game(data, "v2")
    assert 1 not in [p.turn for p in v2.proposals]  # the invalid one, played as a pass
    assert v2.counts[v2.focal].invalid_decisions == 1
    assert v2.counts[v2.focal].invalid_submissions == 1


def test_seat_counts_follow_the_notes(data: TomData) -> None:
    g = game(data, "v2")
    focal, base = g.counts[g.focal], g.counts[g.opponent]
    assert focal.reports_expected == 3 * 4  # one proposal or decision a turn, three orders
    assert focal.report_failures == 2  # its two decisions lost V1
    assert base.reports_expected == 4 and base.report_failures == 0
    assert focal.submissions == 2 and focal.craft_checks == 8 and focal.craft_errors == 1
    assert focal.calls == 8  # a proposal or decision, and a craft phase, each turn


def test_games_without_a_focal_agent_or_reports_are_skipped_and_said(
    store: ResultStore, data: TomData
) -> None:
    assert data.skipped[BASELINES] == ["base"]
    assert data.skipped[NO_NOTES] == ["plain"]
    assert {g.episode_id for g in data.games} == {"v1", "v2", "v0v0", "late"}
    assert not applies(episode(store, "plain")) and applies(episode(store, "v1"))
    assert unfinished(store, EXPERIMENT) == {"running": 1}


def _damaged(tmp_path: Path, damage: str) -> tuple[ResultStore, EpisodeData]:
    s = new_store(tmp_path / "stratagem.db")
    play(s, "bad", seed=1, finish=False)
    if damage == "values":
        s.add_belief("bad", 1, 0, 0, {"turn": 1, "phase": "proposal", "values": [11]})
    elif damage == "reply":
        s.add_event("bad", "reply", {"player": 1, "accept": "yes", "round": 1})
    elif damage == "group":
        s.add_event("bad", "tom", {"group": "V7", "baseline": False}, round=1, player=0)
    s.finish_episode("bad", [0.0, 0.0])
    return s, episode(s, "bad")


@pytest.mark.parametrize(
    ("damage", "field"),
    [("values", "values is [11]"), ("reply", "reply.accept"), ("group", "group")],
)
def test_a_damaged_game_fails_naming_the_episode_and_field(
    tmp_path: Path, damage: str, field: str
) -> None:
    s, e = _damaged(tmp_path, damage)
    with pytest.raises(StratagemError) as info:
        tom_game(e, s.beliefs("bad"))
    message = str(info.value)
    assert "'bad'" in message and field in message and "\n" not in message
