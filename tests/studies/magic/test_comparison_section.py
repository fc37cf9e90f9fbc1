"""The MAgIC comparisons (beyond seed-004): each leaderboard step and each PGM twin compared on
the win rates, paired by game, setting, seats, seed and repetition, checked against statsmodels
and scipy computed here from the games' outcomes, Holm-adjusted across the table."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from support.magic_records import cost_sharing, dilemma, public_good, social

from stratagem.analysis.comparison_table import adjust_rows
from stratagem.analysis.comparisons import CLUSTER_T, format_p
from stratagem.analysis.report_views import Note, TableView
from stratagem.analysis.unpaired import WELCH
from stratagem.studies.magic.comparison_section import (
    NEXT,
    PGM,
    compared_pairs,
    comparison_blocks,
    comparison_rows,
)
from stratagem.studies.magic.leaderboard import EntityMetrics, leaderboard
from stratagem.studies.magic.metrics import metric_values
from stratagem.studies.magic.options import MetricOptions
from stratagem.studies.magic.records import MagicGame

Outcome = Callable[[str, int, int], int]
"""(competition, setting, seat) -> an outcome index."""


def games_of(entity: str, outcome: Outcome) -> list[MagicGame]:
    """Every competition over several settings: the social games once per setting, Cost
    Sharing and Public Good in each of 3 seats of 3 settings (clusters), PD once in each of 10
    settings (one win-or-lose pair per setting)."""
    out: list[MagicGame] = []
    for s in range(4):
        out.append(
            social(
                "chameleon",
                as_spy=True,
                win_flag=outcome("cs", s, 0) % 4,
                challenger=entity,
                setting=s,
            )
        )
        out.append(
            social("chameleon", win_flag=outcome("cm", s, 0) % 4, challenger=entity, setting=s)
        )
        out.append(
            social(
                "undercover",
                spy=0,
                as_spy=True,
                win_flag=outcome("us", s, 0) % 3,
                challenger=entity,
                setting=s,
            )
        )
        out.append(social("undercover", spy=0, win_flag=outcome("uc", s, 0) % 3,
                          challenger=entity, setting=s))  # fmt: skip
    for s in range(3):
        for seat in range(3):
            agreed = outcome("cost", s, seat) % 2 == 1
            out.append(cost_sharing(agreed, (40, 30, 30) if agreed else None, (40, 30, 30),
                                    seat=seat, challenger=entity, setting=s))  # fmt: skip
            top = outcome("pg", s, seat) % 2 == 1
            scores = tuple(110 if (k == seat) == top else 100 for k in range(3))
            out.append(public_good([(0, 10, 10)], scores, 1.5, seat=seat, challenger=entity,
                                   setting=s))  # fmt: skip
    for s in range(10):
        won = outcome("pd", s, 0) % 2 == 1
        out.append(dilemma("DDD" if won else "CCC", (10, 0, 0) if won else (0, 5, 5),
                           challenger=entity, setting=s))  # fmt: skip
    return out


def random_outcomes(seed: int) -> Outcome:
    rng = np.random.default_rng(seed)
    table: dict[tuple[str, int, int], int] = {}

    def draw(comp: str, setting: int, seat: int) -> int:
        return table.setdefault((comp, setting, seat), int(rng.integers(0, 12)))

    return draw


@pytest.fixture(scope="module")
def games() -> list[MagicGame]:
    """Three challengers: a|magic, its PGM twin a|pgm, and b|magic."""
    return [
        *games_of("a|magic", random_outcomes(1)),
        *games_of("a|pgm", random_outcomes(2)),
        *games_of("b|magic", random_outcomes(3)),
    ]


@pytest.fixture(scope="module")
def compared(games: list[MagicGame]) -> tuple[list[str], dict[tuple[object, ...], Any]]:
    """The leaderboard's order, and each comparison by (B, A, win rate)."""
    rows = leaderboard(games, MetricOptions(), n_boot=20)
    found = comparison_rows(games, rows, MetricOptions(), vanilla="magic", pgm="pgm")
    return [r.entity for r in rows], {
        (r.labels[0], r.labels[1], r.labels[3]): r.comparison for r in found
    }


def _values(games: list[MagicGame], entity: str, game: str) -> dict[tuple[int, int], float]:
    """Challenger's credit share per (setting, seat), computed from the outcomes directly."""
    out: dict[tuple[int, int], float] = {}
    for g in games:
        if g.challenger != entity or g.game != game:
            continue
        key = (g.setting, g.challenger_seats[0])
        if game == "npd3":
            assert g.dilemma is not None
            out[key] = float(g.dilemma.scores[0] == max(g.dilemma.scores))
        elif game == "cost-sharing":
            assert g.cost_sharing is not None
            out[key] = float(g.cost_sharing.success)
    return out


def test_the_pairs_are_each_rank_step_and_each_pgm_twin() -> None:
    def rows(*entities: str) -> list[EntityMetrics]:
        return [cast(EntityMetrics, SimpleNamespace(entity=e)) for e in entities]

    both = f"{NEXT}; {PGM}"
    assert compared_pairs(rows("b|magic", "a|pgm", "a|magic"), "magic", "pgm") == [
        (NEXT, "a|pgm", "b|magic"),
        (both, "a|magic", "a|pgm"),
    ]
    assert compared_pairs(rows("a|magic", "b|magic", "a|pgm", "c|pgm"), "magic", "pgm") == [
        (NEXT, "b|magic", "a|magic"),
        (NEXT, "a|pgm", "b|magic"),
        (NEXT, "c|pgm", "a|pgm"),
        (PGM, "a|magic", "a|pgm"),
    ]


def test_every_pair_is_compared_on_w_and_the_seven_win_rates(
    compared: tuple[list[str], dict[tuple[object, ...], Any]],
) -> None:
    order, found = compared
    assert {(k[0], k[1]) for k in found} == {(order[0], order[1]), (order[1], order[2])}
    assert {k[2] for k in found} == {
        "W", "Chameleon (spy)", "Non-chameleon", "Undercover (spy)", "Civilian", "Cost Sharing",
        "PD", "Public Good",
    }  # fmt: skip
    assert all(c is not None for c in found.values())


def test_pd_wins_one_pair_per_setting_take_mcnemar(
    games: list[MagicGame], compared: tuple[list[str], dict[tuple[object, ...], Any]]
) -> None:
    order, found = compared
    b, a = order[0], order[1]
    c = found[(b, a, "PD")]
    va, vb = _values(games, a, "npd3"), _values(games, b, "npd3")
    table = [[0, 0], [0, 0]]
    for k in va:
        table[1 - int(va[k])][1 - int(vb[k])] += 1
    assert c.method.startswith("McNemar exact")
    assert c.p == pytest.approx(sm_mcnemar(table, exact=True).pvalue)
    assert c.estimate == pytest.approx(np.mean(list(vb.values())) - np.mean(list(va.values())))


def test_cost_sharing_three_seats_per_setting_take_the_cluster_robust_t(
    games: list[MagicGame], compared: tuple[list[str], dict[tuple[object, ...], Any]]
) -> None:
    order, found = compared
    b, a = order[0], order[1]
    c = found[(b, a, "Cost Sharing")]
    va, vb = _values(games, a, "cost-sharing"), _values(games, b, "cost-sharing")
    keys = sorted(va)
    d = np.array([vb[k] - va[k] for k in keys])
    assert not np.all(d == d[0])  # the fixed draws give the t something to test
    fit = sm.OLS(d, np.ones(len(d))).fit(
        cov_type="cluster", cov_kwds={"groups": np.array([k[0] for k in keys])}, use_t=True
    )
    assert c.method == CLUSTER_T and (c.n, c.clusters) == (9, 3)
    assert c.estimate == pytest.approx(d.mean())
    assert c.p == pytest.approx(float(fit.pvalues[0]))


def test_w_is_the_difference_of_the_leaderboard_w_with_a_clustered_interval(
    games: list[MagicGame], compared: tuple[list[str], dict[tuple[object, ...], Any]]
) -> None:
    order, found = compared
    b, a = order[0], order[1]
    c = found[(b, a, "W")]
    w = {e: metric_values([g for g in games if g.challenger == e])["win_rate"] for e in (a, b)}
    assert c.mean_a == pytest.approx(w[a]) and c.mean_b == pytest.approx(w[b])
    assert c.estimate == pytest.approx(w[b] - w[a])
    # independently: each game's credit share, weighted N / (7 n_c), clustered by (game, setting)
    shares = {}
    for e in (a, b):
        for g in (g for g in games if g.challenger == e):
            share = {
                "chameleon": lambda g: _social_share(g, 2),
                "undercover": lambda g: _social_share(g, 3),
            }.get(g.game, lambda g: None)(g)
            if share is None:
                share = _theory_win(g)
            shares[(e, g.competition, g.pair_key)] = share
    comps = sorted({k[1] for k in shares})
    counts = {comp: sum(1 for k in shares if k[0] == a and k[1] == comp) for comp in comps}
    total = sum(counts.values())
    keys = sorted({(k[1], k[2]) for k in shares})
    d = np.array(
        [total / (7 * counts[comp]) * (shares[(b, comp, k)] - shares[(a, comp, k)])
         for comp, k in keys]
    )  # fmt: skip
    groups = np.unique([repr((k[0], k[1])) for _, k in keys], return_inverse=True)[1]
    fit = sm.OLS(d, np.ones(len(d))).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    assert c.estimate == pytest.approx(d.mean())
    assert c.p == pytest.approx(float(fit.pvalues[0]))
    low, high = fit.conf_int()[0]
    assert (c.ci_low, c.ci_high) == (pytest.approx(low), pytest.approx(high))


def _social_share(g: MagicGame, credits: int) -> float:
    from stratagem.studies.magic.tallies import CREDITS

    assert g.social is not None
    spy, majority = CREDITS[g.game][g.social.win_flag]
    return (spy if g.challenger_seats == (g.spy_seat,) else majority) / credits


def _theory_win(g: MagicGame) -> float:
    if g.cost_sharing is not None:
        return float(g.cost_sharing.success)
    scores = g.dilemma.scores if g.dilemma is not None else g.public_good.scores  # type: ignore[union-attr]
    return float(scores[g.challenger_seats[0]] == max(scores))


def test_the_table_is_holm_adjusted_and_printed_beside_each_number(
    games: list[MagicGame],
) -> None:
    rows = leaderboard(games, MetricOptions(), n_boot=20)
    found = comparison_rows(games, rows, MetricOptions(), vanilla="magic", pgm="pgm")
    adjusted, sentence = adjust_rows(found)
    raw = [r.comparison.p for r in found if r.comparison is not None and r.comparison.p is not None]
    holm = multipletests(raw, method="holm")[1]
    got = [r.comparison.p_adjusted for r in adjusted if r.comparison and r.comparison.p is not None]
    assert got == pytest.approx(list(holm))
    assert sentence.endswith(f"across {len(raw)} comparisons.")
    blocks = comparison_blocks(games, rows, MetricOptions(), vanilla="magic", pgm="pgm")
    (table,) = (b for b in blocks if isinstance(b, TableView))
    assert table.title == "MAgIC comparisons" and table.note == sentence
    first = next(r for r in adjusted if r.comparison is not None and r.comparison.p is not None)
    line = next(
        [c.text for c in row]
        for row in table.rows
        if tuple(c.text for c in row[:4]) == first.labels
    )
    c = first.comparison
    assert c is not None and c.p is not None and c.p_adjusted is not None
    assert line[6] == f"{100 * c.estimate:+.1f} [{100 * c.ci_low:.1f}, {100 * c.ci_high:.1f}]"  # type: ignore[operator]
    assert (line[7], line[8]) == (format_p(c.p, prefix=""), format_p(c.p_adjusted, prefix=""))


def test_challengers_without_a_common_game_are_compared_unpaired() -> None:
    one = games_of("a|magic", random_outcomes(1))
    other = [dataclasses.replace(g, seed=7) for g in games_of("b|magic", random_outcomes(4))]
    rows = leaderboard(one + other, MetricOptions(), n_boot=20)
    found = {r.labels[3]: r for r in comparison_rows(one + other, rows, MetricOptions(),
                                                     vanilla="magic", pgm="pgm")}  # fmt: skip
    assert found["W"].comparison is None and "no paired game" in found["W"].reason
    pd = found["PD"].comparison
    assert pd is not None and pd.method == WELCH
    b, a = rows[0].entity, rows[1].entity
    wins = {
        e: [_theory_win(g) for g in one + other if g.challenger == e and g.game == "npd3"]
        for e in (a, b)
    }
    assert pd.p == pytest.approx(stats.ttest_ind(wins[b], wins[a], equal_var=False).pvalue)


def test_one_challenger_has_nothing_to_compare() -> None:
    one = games_of("a|magic", random_outcomes(1))
    rows = leaderboard(one, MetricOptions(), n_boot=20)
    blocks = comparison_blocks(one, rows, MetricOptions(), vanilla="magic", pgm="pgm")
    assert any(isinstance(b, Note) and "One challenger here (a|magic)" in b.text for b in blocks)
