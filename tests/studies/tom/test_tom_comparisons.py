"""The ToM groups compared (beyond seed-002, which compares them by eye): belief accuracy V2 vs V1
and the focal agent's wins V1 and V2 vs V0, per model, paired by instance and seed, checked
against scipy and statsmodels computed here from the games, Holm-adjusted across the table."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from tom_builders import game, rep

from stratagem.analysis.comparison_table import ComparedRow, adjust_rows
from stratagem.analysis.comparisons import CLUSTER_T, PAIRED_T
from stratagem.analysis.report_views import Note, TableView
from stratagem.analysis.unpaired import WELCH
from stratagem.studies.tom.options import DEFAULTS
from stratagem.studies.tom.records import Group, TomGame
from stratagem.studies.tom.section_comparisons import (
    KL,
    WIN,
    comparison_blocks,
    comparison_rows,
)

ITEMS = ("a", "b", "c", "d")
INSTANCES = 12


def one_game(group: Group, instance: int, seed: int, rng: random.Random, model: str) -> TomGame:
    """A game whose focal seat 0 reports V1 (V1 and V2 groups) beside the opponent's V0 on 3
    turns, and wins or not at random."""
    reports = []
    for turn in (1, 2, 3):
        v0 = {i: rng.randint(0, 10) for i in ITEMS}
        v1 = {i: rng.randint(0, 10) for i in ITEMS} if group != "V0" else None
        reports += [rep(turn, 0, {i: 5 for i in ITEMS}, v1), rep(turn, 1, v0)]
    won = rng.random() < (0.3 if group == "V0" else 0.7)
    g = game(
        f"{model}-{group}-{instance}-{seed}", group=group, model=model, reports=reports,
        outcome="win" if won else "timeout", winners=(0,) if won else (),
    )  # fmt: skip
    return dataclasses.replace(g, instance=f"tradecraft/{instance}", seed=seed)


@pytest.fixture(scope="module")
def games() -> list[TomGame]:
    rng = random.Random(7)
    return [
        one_game(group, i, 0, rng, "m") for group in ("V0", "V1", "V2") for i in range(INSTANCES)
    ]


def _found(games: list[TomGame]) -> dict[tuple[object, ...], ComparedRow]:
    return {r.labels: r for r in comparison_rows(games, DEFAULTS)}


def _kl(game: TomGame) -> float:
    """The game's mean KL(V0 opponent ‖ V1 focal), by scipy's entropy."""
    eps = DEFAULTS.epsilon
    values = []
    for turn in (1, 2, 3):
        mine, theirs = game.report(turn, 0), game.report(turn, 1)
        assert mine is not None and theirs is not None and mine.v1 and theirs.v0
        p = np.array([theirs.v0[i] + eps for i in ITEMS], dtype=float)
        q = np.array([mine.v1[i] + eps for i in ITEMS], dtype=float)
        values.append(float(stats.entropy(p / p.sum(), q / q.sum())))
    return float(np.mean(values))


def _of(games: list[TomGame], group: str) -> list[TomGame]:
    return sorted((g for g in games if g.group == group), key=lambda g: g.instance)


def test_belief_accuracy_v2_against_v1_is_scipys_paired_t(games: list[TomGame]) -> None:
    c = _found(games)[("m", KL, "V2 group", "V1 group")].comparison
    v1 = [_kl(g) for g in _of(games, "V1")]
    v2 = [_kl(g) for g in _of(games, "V2")]
    ref = stats.ttest_rel(v2, v1)
    assert c is not None and c.method == PAIRED_T and c.n == INSTANCES
    assert c.estimate == pytest.approx(np.mean(v2) - np.mean(v1))
    assert c.p == pytest.approx(ref.pvalue)
    low, high = ref.confidence_interval(DEFAULTS.level)
    assert (c.ci_low, c.ci_high) == (pytest.approx(low), pytest.approx(high))


@pytest.mark.parametrize("group", ["V1", "V2"])
def test_focal_wins_against_v0_are_mcnemar(games: list[TomGame], group: str) -> None:
    c = _found(games)[("m", WIN, f"{group} group", "V0 group")].comparison
    a = [g.winners == (0,) for g in _of(games, "V0")]
    b = [g.winners == (0,) for g in _of(games, group)]
    table = [[0, 0], [0, 0]]
    for x, y in zip(a, b, strict=True):
        table[1 - x][1 - y] += 1
    assert c is not None and c.method.startswith("McNemar exact")
    assert c.p == pytest.approx(sm_mcnemar(table, exact=True).pvalue)
    assert c.estimate == pytest.approx(np.mean(b) - np.mean(a))


def test_the_table_is_holm_adjusted(games: list[TomGame]) -> None:
    rows = comparison_rows(games, DEFAULTS)
    assert [r.labels[1:] for r in rows] == [
        (KL, "V2 group", "V1 group"),
        (WIN, "V1 group", "V0 group"),
        (WIN, "V2 group", "V0 group"),
    ]
    adjusted, sentence = adjust_rows(rows)
    raw = [r.comparison.p for r in rows if r.comparison is not None]
    expected = multipletests(raw, method="holm")[1]
    assert [r.comparison.p_adjusted for r in adjusted if r.comparison] == pytest.approx(
        list(expected)
    )
    blocks = comparison_blocks(games, DEFAULTS)
    (table,) = (b for b in blocks if isinstance(b, TableView))
    assert table.title == "Groups compared" and table.note == sentence


def test_seeds_of_one_instance_are_clustered_and_other_seeds_unpaired() -> None:
    rng = random.Random(3)
    clustered = [
        one_game(group, i, seed, rng, "m")
        for group in ("V1", "V2")
        for i in range(4)
        for seed in (0, 1, 2)
    ]
    c = _found(clustered)[("m", KL, "V2 group", "V1 group")].comparison
    assert c is not None and c.method == CLUSTER_T and (c.n, c.clusters) == (12, 4)
    apart = [one_game("V1", i, 0, rng, "m") for i in range(5)]
    apart += [one_game("V2", i, 1, rng, "m") for i in range(6)]
    w = _found(apart)[("m", KL, "V2 group", "V1 group")].comparison
    ref = stats.ttest_ind(
        [_kl(g) for g in apart if g.group == "V2"],
        [_kl(g) for g in apart if g.group == "V1"],
        equal_var=False,
    )
    assert w is not None and w.method == WELCH and w.p == pytest.approx(ref.pvalue)


def test_one_group_has_nothing_to_compare() -> None:
    rng = random.Random(1)
    blocks = comparison_blocks([one_game("V1", i, 0, rng, "m") for i in range(3)], DEFAULTS)
    assert any(
        isinstance(b, Note) and "No model was played in two groups" in b.text for b in blocks
    )
