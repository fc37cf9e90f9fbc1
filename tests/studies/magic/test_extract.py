"""Stored MAgIC episodes -> game records (seed-004 §3-§6): on a real store of a scripted run,
every record field is checked against the events, answers and rounds the store holds, read here
through the store's own API; and the rules that name the challenger and the defender."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import CHALLENGER, DEFENDER

from stratagem.analysis.episodes import EpisodeData, load_episodes
from stratagem.experiments.records import EpisodeRecord
from stratagem.experiments.store import ResultStore
from stratagem.studies.magic.entities import competitions, seat_entities
from stratagem.studies.magic.extract import MagicData, magic_data, parse_proposal, rating_scores
from stratagem.studies.magic.records import MagicGame


@pytest.fixture(scope="module")
def extracted(magic_store: Path) -> tuple[ResultStore, MagicData]:
    store = ResultStore(magic_store)
    experiment = store.experiments()[0]
    return store, magic_data(store, experiment.config, load_episodes(store, experiment.id))


def by_game(data: MagicData) -> dict[str, list[MagicGame]]:
    out: dict[str, list[MagicGame]] = {}
    for g in data.games:
        out.setdefault(g.game, []).append(g)
    return out


def test_every_game_is_a_competition_of_the_challenger_against_the_defender(
    extracted: tuple[ResultStore, MagicData],
) -> None:
    _, data = extracted
    assert data.skipped == {}
    assert len(data.games) == 26
    assert {(g.challenger, g.defender) for g in data.games} == {(CHALLENGER, DEFENDER)}
    # seed-004 §4: both sides of each social game, each seat of each game-theory game.
    assert Counter(g.competition for g in data.games) == {
        "chameleon": 2,
        "non-chameleon": 2,
        "undercover": 2,
        "civilian": 2,
        "cost-sharing": 6,
        "pd": 6,
        "pg": 6,
    }
    for game in ("cost-sharing", "npd3", "public-good"):
        seats = sorted(g.challenger_seats for g in by_game(data)[game])
        assert seats == [(0,), (0,), (1,), (1,), (2,), (2,)]
    for g in data.games:
        entities = data.entities[g.episode_id]
        assert tuple(k for k, e in enumerate(entities) if e == CHALLENGER) == g.challenger_seats
        assert g.setting in (0, 1) and g.repetition == 0 and g.seed == 0


def _events(store: ResultStore, g: MagicGame, kind: str) -> list[Any]:
    return store.events(g.episode_id, kind)


def test_seat_counts_are_the_decision_events_and_the_probes(
    extracted: tuple[ResultStore, MagicData],
) -> None:
    store, data = extracted
    for g in data.games:
        decisions, invalid = Counter[int](), Counter[int]()
        for e in _events(store, g, "decision"):
            decisions[e.player] += 1
            invalid[e.player] += e.data["valid"] is False
        for a in store.answers(g.episode_id):
            decisions[a.player] += 1
            invalid[a.player] += a.parsed["relevant"] is False
        assert g.decisions == tuple(decisions[k] for k in range(3))
        assert g.invalid == tuple(invalid[k] for k in range(3))
        flagged = Counter(e.player for e in _events(store, g, "invalid"))
        probes = Counter(a.player for a in store.answers(g.episode_id) if not a.parsed["relevant"])
        assert g.invalid == tuple(flagged[k] + probes[k] for k in range(3))
    # The scripted challenger's garbage is counted where it was given, and only there.
    totals = Counter[tuple[str, bool]]()
    for g in data.games:
        for k, bad in enumerate(g.invalid):
            totals[(g.game, k in g.challenger_seats)] += bad
    assert totals[("npd3", True)] == 6 and totals[("public-good", True)] == 6
    assert totals[("cost-sharing", True)] == 6 and totals[("npd3", False)] == 0
    assert totals[("undercover", False)] > 0  # the defender's role probe answers


def test_social_records_match_the_outcome_votes_guess_and_probes(
    extracted: tuple[ResultStore, MagicData],
) -> None:
    store, data = extracted
    for g in by_game(data)["chameleon"] + by_game(data)["undercover"]:
        assert g.social is not None
        (outcome,) = (e.data for e in _events(store, g, "outcome"))
        assert g.social.win_flag == outcome["win_flag"]
        assert g.spy_seat == outcome["spy"]
        assert g.roles.count(g.game) == 1
        ballots = {e.data["player"]: e.data["vote"] for e in _events(store, g, "vote")}
        assert {v.voter: v.target for v in g.social.votes} == ballots
        guesses = [e.data["guess"] for e in _events(store, g, "guess")]
        assert (g.social.guess is None) == (not guesses)
        if guesses:
            assert g.social.guess is not None and g.social.guess.text == guesses[0]
            assert g.social.guess.correct == (outcome["win_flag"] == 1)
        answers = store.answers(g.episode_id)
        for kind, got in (("consistency", g.social.role_answers), ("belief", g.social.beliefs)):
            mine = [a for a in answers if a.question_id.startswith(f"magic-{kind}@")]
            times = sorted({a.question_id for a in mine}, key=lambda q: int(q.rsplit(":", 1)[1]))
            assert len(got) == len(times) == (3 if g.game == "chameleon" else 2)
            for t, question in enumerate(times):
                for a in (a for a in mine if a.question_id == question):
                    value = got[t][a.player]
                    if not a.parsed["relevant"]:
                        assert value is None
                    elif kind == "consistency":
                        assert value == a.answer
                    else:
                        assert value == tuple(tuple(r) for r in json.loads(a.parsed["value"]))
    # The challenger's Chameleon belief answers before the second clue stayed invalid.
    chameleon = by_game(data)["chameleon"]
    first = [g.social.beliefs[0][s] for g in chameleon if g.social for s in g.challenger_seats]
    assert first and all(f is None for f in first)


def test_game_theory_records_match_moves_contributions_and_outcomes(
    extracted: tuple[ResultStore, MagicData],
) -> None:
    store, data = extracted
    for g in by_game(data)["npd3"]:
        assert g.dilemma is not None
        record = store.episode(g.episode_id)
        assert record is not None and g.dilemma.scores == record.payoffs
        moves: dict[int, list[str]] = {}
        for e in _events(store, g, "move"):
            moves.setdefault(e.round, ["?"] * 3)[e.data["player"]] = e.data["decision"]
        assert [r.moves for r in g.dilemma.rounds] == [
            tuple("C" if m == "cooperate" else "D" for m in moves[k]) for k in sorted(moves)
        ]
        bad = {(e.round, e.player) for e in _events(store, g, "invalid")}
        assert [r.invalid for r in g.dilemma.rounds] == [
            tuple((k, p) in bad for p in range(3)) for k in sorted(moves)
        ]
        seat = g.challenger_seats[0]
        assert [r.invalid[seat] for r in g.dilemma.rounds] == [False, True, False, False, False]
    for g in by_game(data)["public-good"]:
        assert g.public_good is not None
        record = store.episode(g.episode_id)
        assert record is not None and g.public_good.scores == record.payoffs
        stored = [e.data["contributions"] for e in _events(store, g, "contributions")]
        assert [list(r.contributions) for r in g.public_good.rounds] == stored
        (payout,) = (e.data for e in _events(store, g, "payout"))
        pool = sum(sum(c) for c in stored)
        assert g.public_good.multiplier == pytest.approx(payout["share"] * 3 / pool)
        seat = g.challenger_seats[0]
        assert [r.invalid[seat] for r in g.public_good.rounds] == [False, False, True, False, False]
    for g in by_game(data)["cost-sharing"]:
        assert g.cost_sharing is not None
        (outcome,) = (e.data for e in _events(store, g, "outcome"))
        assert g.cost_sharing.success is outcome["success"] is True
        assert g.cost_sharing.agreed == tuple(outcome["shares"])
        latest = outcome["latest_proposals"][g.challenger_seats[0]]
        assert g.cost_sharing.challenger_latest == parse_proposal(latest, 3)


def test_rating_scores_are_credits_scores_and_unpaid_shares(
    extracted: tuple[ResultStore, MagicData],
) -> None:
    _, data = extracted
    for e in data.episodes:
        scores = rating_scores(e)
        if e.record.game.startswith("cost-sharing"):
            assert scores == (60.0, 70.0, 70.0)  # the agreed 40/30/30, as the fee left unpaid
        else:
            assert scores == e.record.payoffs


def test_parse_proposal() -> None:
    assert parse_proposal("40/30/30", 3) == (40.0, 30.0, 30.0)
    assert parse_proposal("40/x/30", 3) == (40.0, None, 30.0)
    assert parse_proposal(None, 3) is None and parse_proposal("50/50", 3) is None


# -- entities, challengers and defenders -----------------------------------------------------------


def episode(eid: str, seats: list[tuple[str, str]], game: str = "npd3/0") -> EpisodeData:
    """An episode whose seats are (agent entry name, model id); the spec has the agent kinds."""
    kinds = {"magic": "magic", "fixed": "magic", "pgm": "pgm"}
    players = tuple(
        {"name": f"{a}:{m}", "kind": "llm", "model": f"p/{m}", "model_id": m, "agent": a}
        for a, m in seats
    )
    spec = {
        "seats": [{"agent": {"name": a, "kind": kinds[a]}, "model": f"p/{m}"} for a, m in seats]
    }
    record = EpisodeRecord(eid, "x", game, players, 0, "finished", spec, payoffs=(1.0, 0.0, 0.0))
    return EpisodeData(record, (), ())


def sides(
    episodes: list[EpisodeData], config: dict[str, Any]
) -> dict[str, tuple[str, str, tuple[int, ...]]]:
    entities = {e.record.id: seat_entities(e, config) for e in episodes}
    found = competitions(episodes, entities, config)
    return {k: (c.challenger, c.defender, c.seats) for k, c in found.items()}


AGENTS = {"agents": [{"name": "magic", "kind": "magic"}, {"name": "pgm", "kind": "pgm"}]}


def test_the_defender_sits_in_every_game_of_every_challenger() -> None:
    games = [
        episode("a", [("magic", "gpt35"), ("magic", "gpt4"), ("magic", "gpt4")]),
        episode("b", [("magic", "gpt4"), ("pgm", "gpt35"), ("magic", "gpt4")]),
        episode("c", [("magic", "gpt4"), ("magic", "gpt4"), ("magic", "llama")]),
        episode("d", [("magic", "gpt4")] * 3),
        episode("e", [("magic", "gpt4"), ("magic", "llama"), ("pgm", "gpt35")]),
    ]
    assert sides(games, AGENTS) == {
        "a": ("gpt35|magic", "gpt4|magic", (0,)),
        "b": ("gpt35|pgm", "gpt4|magic", (1,)),
        "c": ("llama|magic", "gpt4|magic", (2,)),
    }


def test_one_challenger_is_told_from_its_defender_by_the_seats_it_holds() -> None:
    # Both sit in every game; the defender holds two seats of each game-theory game.
    games = [
        episode("a", [("magic", "zz"), ("magic", "aa"), ("magic", "aa")], "chameleon/0"),
        episode("b", [("magic", "zz"), ("magic", "zz"), ("magic", "aa")], "chameleon/0"),
        episode("c", [("magic", "zz"), ("magic", "zz"), ("magic", "aa")], "npd3/0"),
    ]
    assert {c for c, _, _ in sides(games, AGENTS).values()} == {"aa|magic"}


def test_a_declared_defender_is_the_defender_whatever_the_counts() -> None:
    games = [
        episode("a", [("magic", "aa"), ("magic", "zz"), ("magic", "zz")]),
        episode("b", [("magic", "zz"), ("magic", "aa"), ("magic", "zz")]),
    ]
    rotation = {**AGENTS, "lineups": [{"challenger": "magic@zz", "defenders": "magic@aa"}]}
    assert {d for _, d, _ in sides(games, rotation).values()} == {"aa|magic"}
    assert {d for _, d, _ in sides(games, AGENTS).values()} == {"zz|magic"}


def test_two_entries_of_one_kind_are_two_architectures() -> None:
    # A fixed defender (`magic` with `replay`) and a challenger of the same model and kind.
    config = {"agents": [{"name": "magic", "kind": "magic"}, {"name": "fixed", "kind": "magic"}]}
    game = episode("a", [("magic", "gpt4"), ("fixed", "gpt4"), ("fixed", "gpt4")])
    assert seat_entities(game, config) == ("gpt4|magic", "gpt4|magic:fixed", "gpt4|magic:fixed")
    assert seat_entities(game, {}) == ("gpt4|magic",) * 3


def test_a_game_without_an_outcome_is_left_out_with_its_reason(
    extracted: tuple[ResultStore, MagicData],
) -> None:
    store, data = extracted
    chameleon = next(e for e in data.episodes if e.record.game.startswith("chameleon"))
    bare = EpisodeData(
        chameleon.record, (), tuple(ev for ev in chameleon.events if ev.kind != "outcome")
    )
    result = magic_data(store, store.experiments()[0].config, [bare])
    assert result.games == []
    assert result.skipped == {"no outcome event": [chameleon.record.id]}
