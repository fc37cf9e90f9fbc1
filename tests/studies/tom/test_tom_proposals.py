"""seed-002 §5: proposals valued by the proposer's V0, OLS m, Pearson r, episode bootstrap."""

from __future__ import annotations

import random

import pytest
from tom_builders import game, prop, rep

from stratagem.studies.tom.options import TomOptions
from stratagem.studies.tom.proposals import (
    ProposalPoint,
    fit_mr,
    mr_map,
    mr_with_ci,
    proposal_points,
    value_of,
)
from stratagem.studies.tom.records import TomGame


def test_value_of_counts_multiplicity_and_zero_for_unscored() -> None:
    assert value_of({"a": 2, "b": 1, "z": 5}, {"a": 3, "b": 4}) == 10.0


def _game() -> TomGame:
    v0 = {"a": 3, "b": 4, "c": 1}
    return game(
        "e1",
        reports=[rep(1, 0, v0), rep(2, 1, {"a": 9, "b": 0, "c": 0}), rep(3, 0, v0)],
        proposals=[
            prop(1, 0, {"a": 2}, {"b": 1, "c": 3}, accepted=True),  # offer 6, request 7
            prop(2, 1, {"c": 1}, {"a": 1}),  # baseline's: request 9, offer 0
            prop(3, 0, {}, {}),  # a pass
            prop(4, 0, {"a": 1}, {"b": 1}),  # no report at turn 4 -> no point
        ],
    )


def test_proposal_points_focal_only_by_default() -> None:
    p, empty = proposal_points([_game()])
    assert (p.turn, p.request, p.offer, p.accepted) == (1, 7.0, 6.0, True)
    assert (empty.turn, empty.request, empty.offer) == (3, 0.0, 0.0)  # §5 keeps every valid one


def test_proposal_points_options() -> None:
    g = [_game()]
    both = proposal_points(g, TomOptions(include_baseline=True, skip_empty=True))
    assert [(p.turn, p.request, p.offer) for p in both] == [(1, 7.0, 6.0), (2, 9.0, 0.0)]
    no_pass = proposal_points(g, TomOptions(skip_empty=True))
    assert [(p.turn, p.request, p.offer) for p in no_pass] == [(1, 7.0, 6.0)]


def _pt(x: float, y: float, eid: str = "e") -> ProposalPoint:
    return ProposalPoint(eid, "m", "V1", 1, x, y, None)


def test_fit_mr_fair_line() -> None:
    mr = fit_mr([_pt(x, x) for x in (1, 4, 6, 9)])
    assert mr.m == pytest.approx(1.0) and mr.c == pytest.approx(0.0)
    assert mr.r == pytest.approx(1.0) and mr.n == 4


def test_fit_mr_by_hand() -> None:
    # (0,1), (1,1), (2,4): x̄ = 1, ȳ = 2, Sxy = 3, Sxx = 2, Syy = 6 -> m = 1.5, c = 0.5,
    # r = 3 / sqrt(12)
    mr = fit_mr([_pt(0, 1), _pt(1, 1), _pt(2, 4)])
    assert (mr.m, mr.c) == pytest.approx((1.5, 0.5))
    assert mr.r == pytest.approx(3 / 12**0.5)


def test_fit_mr_undefined_cases() -> None:
    assert fit_mr([]) == fit_mr([])
    assert (fit_mr([_pt(1, 2)]).m, fit_mr([_pt(1, 2)]).r) == (None, None)
    same_request = fit_mr([_pt(3, 1), _pt(3, 5)])
    assert (same_request.m, same_request.c, same_request.r) == (None, None, None)
    flat_offer = fit_mr([_pt(1, 2), _pt(5, 2)])
    assert flat_offer.m == pytest.approx(0.0) and flat_offer.r is None


def _noisy() -> list[ProposalPoint]:
    rng = random.Random(7)
    points = []
    for e in range(12):
        for _ in range(4):
            x = rng.randint(0, 20)
            points.append(_pt(x, 0.6 * x + rng.gauss(0, 3), f"e{e}"))
    return points


def test_bootstrap_interval_contains_point_and_is_seeded() -> None:
    points = _noisy()
    s = mr_with_ci(points)
    assert s.n == 48 and s.episodes == 12 and s.replicates == 2000
    assert s.m_ci is not None and s.r_ci is not None and s.m is not None and s.r is not None
    assert s.m_ci[0] <= s.m <= s.m_ci[1] and s.r_ci[0] <= s.r <= s.r_ci[1]
    assert s.m_defined == s.r_defined == 2000
    assert mr_with_ci(points) == s
    other = mr_with_ci(points, TomOptions(seed=1))
    assert other.m == s.m and other.m_ci != s.m_ci


def test_bootstrap_skips_and_counts_undefined_replicates() -> None:
    # one episode has two spread points, one a single point: a replicate drawing only the
    # latter has no spread
    points = [_pt(0, 0, "a"), _pt(4, 4, "a"), _pt(2, 1, "b")]
    s = mr_with_ci(points, TomOptions(bootstrap=400))
    assert 0 < s.m_defined < 400  # P(only "b" drawn twice) = 1/4
    assert s.m_ci is not None


def test_bootstrap_with_nothing_defined() -> None:
    s = mr_with_ci([_pt(1, 1, "a")], TomOptions(bootstrap=50))
    assert (s.m, s.r, s.m_ci, s.r_ci, s.m_defined) == (None, None, None, None, 0)
    empty = mr_with_ci([])
    assert (empty.n, empty.episodes, empty.m_ci) == (0, 0, None)


def test_mr_map_one_summary_per_cell() -> None:
    v0 = {"a": 2, "b": 2}
    g1 = game(
        "e1",
        reports=[rep(1, 0, v0), rep(3, 0, v0)],
        proposals=[prop(1, 0, {"a": 1}, {"b": 1}), prop(3, 0, {"a": 2}, {"b": 2})],
    )
    g2 = game("e2", group="V2", reports=[rep(1, 0, v0)], proposals=[prop(1, 0, {"a": 1}, {})])
    out = mr_map([g1, g2], TomOptions(bootstrap=100))
    assert set(out) == {("m", "V1"), ("m", "V2")}
    assert out[("m", "V1")].m == pytest.approx(1.0) and out[("m", "V1")].episodes == 1
    assert out[("m", "V2")].n == 1 and out[("m", "V2")].m is None
