"""The MAgIC leaderboard (bootstrap intervals, invalid counts) and the PGM-vs-vanilla paired
comparison, on synthetic games with known answers."""

from __future__ import annotations

import math

import pytest
from scipy import stats
from support.magic_records import dilemma, full_set, social

from stratagem.errors import StratagemError
from stratagem.studies.magic.leaderboard import entity_metrics, leaderboard
from stratagem.studies.magic.metrics import ABILITIES, metric_values
from stratagem.studies.magic.pgm_gain import (
    architecture_pairs,
    compare_architectures,
    pgm_comparisons,
)
from stratagem.studies.magic.radar import radar_area, radar_values
from stratagem.studies.magic.records import MagicGame, Vote


def test_intervals_contain_the_point_and_repeat_with_the_seed() -> None:
    games = full_set()
    a = entity_metrics(games, n_boot=300, seed=3)
    b = entity_metrics(games, n_boot=300, seed=3)
    assert a == b
    assert a.games == 14 and all(n == 2 for n in a.competitions.values())
    w = a.metrics["win_rate"]
    assert w.value is not None and w.ci_low is not None and w.ci_high is not None
    assert w.ci_low <= w.value <= w.ci_high
    assert w.ci_low < w.ci_high  # the games differ, so the replicates do
    for name, est in a.metrics.items():
        if est.value is not None:
            assert est.ci_low is not None and est.ci_high is not None
            assert est.ci_low - 1e-12 <= est.value <= est.ci_high + 1e-12, name
    # the point values are metric_values'
    assert w.value == pytest.approx(metric_values(games)["win_rate"])
    values = radar_values({k: metric_values(games)[k] for k in ABILITIES})
    assert values is not None and a.radar_area.value == pytest.approx(radar_area(values))


def test_metric_counts_and_undefined_metrics() -> None:
    est = entity_metrics([social(as_spy=True, win_flag=2)], n_boot=50)
    assert est.metrics["judgment"].value is None and est.metrics["judgment"].ci_low is None
    assert est.metrics["judgment"].n == 0
    assert est.metrics["deception"].n == 1
    assert est.radar_area.value is None


def test_invalid_replies_are_reported() -> None:
    games = [
        social(
            votes=[Vote(0, None), Vote(1, 2)],
            role_answers=[(None, "I am Player 2, my role is non-chameleon", None)],
            beliefs=[(None, ((0, 0, 1),) * 3, None)],
            invalid=(3, 0, 1),  # the defender's invalid reply (seat 2) is not the challenger's
            decisions=(4, 4, 4),
        ),
        dilemma("DDCCD", (4, 0, 0), invalid_rounds=[0, 1]),
    ]
    inv = entity_metrics(games, n_boot=20).invalid
    assert (inv.decisions, inv.invalid) == (4 + 4 + 5, 3 + 0 + 2)
    assert inv.rate == pytest.approx(5 / 13)
    assert (inv.votes, inv.role_answers, inv.beliefs, inv.moves, inv.shares) == (1, 1, 1, 2, 0)
    # the invalid vote still counts as a vote: 1 right of 2
    assert entity_metrics(games, n_boot=20).metrics["judgment"].value == pytest.approx(0.5)


def test_leaderboard_orders_entities_by_win_rate() -> None:
    good = full_set("a|plain")
    bad = full_set("b|plain", flip=True)
    bad = [g for g in bad if g.repetition == 0]  # b keeps only its losing games
    rows = leaderboard(good + bad, n_boot=50)
    assert [r.entity for r in rows] == ["a|plain", "b|plain"]
    with pytest.raises(StratagemError, match="one challenger"):
        entity_metrics(good + bad)


# -- PGM vs vanilla -------------------------------------------------------------------------


def _judgment_games(entity: str, correct: list[int]) -> list[MagicGame]:
    # the spy is seat 2; per game, the challenger's seats 0 and 1 vote right `c` times of 2
    return [
        social(
            votes=[Vote(0, 2 if c >= 1 else 1), Vote(1, 2 if c >= 2 else 0)],
            challenger=entity,
            setting=s,
        )
        for s, c in enumerate(correct)
    ]


def test_architecture_pairs() -> None:
    got = architecture_pairs(["b|plain", "a|pgm", "a|plain", "c|pgm", "x"])
    assert got == [("a|plain", "a|pgm")]


def test_paired_judgment_difference_and_t_test() -> None:
    vanilla = _judgment_games("m|plain", [0, 1, 1, 2])  # 4/8
    pgm = _judgment_games("m|pgm", [2, 1, 2, 2])  # 7/8
    pgm.append(social(votes=[Vote(0, 2), Vote(1, 2)], challenger="m|pgm", setting=9))  # no twin
    cmp = compare_architectures(vanilla, pgm, metrics=["judgment"], n_boot=500, seed=1)
    assert (cmp.matched, cmp.vanilla_only, cmp.pgm_only) == (4, 0, 1)
    j = cmp.metrics["judgment"]
    assert j.vanilla == pytest.approx(0.5) and j.pgm == pytest.approx(0.875)
    assert j.diff == pytest.approx(0.375)
    assert j.ci_low is not None and j.ci_high is not None
    assert j.ci_low <= 0.375 <= j.ci_high
    # unit differences 1, 0, .5, 0: mean .375, sd sqrt(.6875 / 3), t = .375 / (sd / 2)
    t = 0.375 / (math.sqrt(0.6875 / 3) / 2)
    assert j.units == 4
    assert j.t_statistic == pytest.approx(t)
    assert j.p_value == pytest.approx(2 * stats.t.sf(t, df=3))


def test_identical_twins_show_no_gain() -> None:
    games = full_set("m|plain") + full_set("m|pgm")
    (cmp,) = pgm_comparisons(games, n_boot=100)
    assert cmp.matched == 14
    for name, m in cmp.metrics.items():
        if m.diff is not None:
            assert m.diff == pytest.approx(0.0), name
            assert m.ci_low == pytest.approx(0.0) and m.ci_high == pytest.approx(0.0)
            assert m.p_value is None  # every unit difference is 0: nothing to test
    assert cmp.area_gain.value == pytest.approx(0.0)


def test_area_gain_over_matched_games() -> None:
    games = full_set("m|plain", flip=True) + full_set("m|pgm")
    (cmp,) = pgm_comparisons(games, n_boot=200, seed=2)
    assert cmp.area_vanilla is not None and cmp.area_pgm is not None
    assert cmp.area_gain.value == pytest.approx(cmp.area_pgm / cmp.area_vanilla - 1)
    gain, low, high = cmp.area_gain.value, cmp.area_gain.ci_low, cmp.area_gain.ci_high
    assert gain is not None and low is not None and high is not None
    assert low <= gain <= high


def test_duplicate_pair_keys_are_refused() -> None:
    twice = _judgment_games("m|plain", [1, 1]) + _judgment_games("m|plain", [1])
    with pytest.raises(StratagemError, match="ambiguous"):
        compare_architectures(twice, _judgment_games("m|pgm", [1, 1]))
