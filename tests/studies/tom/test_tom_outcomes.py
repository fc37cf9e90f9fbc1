"""seed-002 §7: outcome metrics counted by hand on three small games."""

from __future__ import annotations

import pytest
from tom_builders import game, prop

from stratagem.studies.tom.outcomes import outcome_metrics
from stratagem.studies.tom.records import SeatCounts


def test_outcomes_on_three_games() -> None:
    focal_wins = game(
        "g1",
        focal=0,
        outcome="win",
        winners=(0,),
        turns=4,
        payoffs=(3.0, 0.0),
        proposals=[
            prop(1, 0, {"a": 1}, {"b": 1}, accepted=True),
            prop(2, 1, {"b": 1}, {"a": 1}, accepted=False),
            prop(3, 0, {}, {}, accepted=True),  # an empty proposal: valid, counted (§7)
            prop(4, 1, {"c": 1}, {}, accepted=True),
        ],
        counts=(
            SeatCounts(submissions=3, invalid_submissions=1, craft_errors=2, reports_expected=8),
            SeatCounts(submissions=2, reports_expected=4, report_failures=1),
        ),
    )
    opponent_wins = game(
        "g2",
        focal=1,
        outcome="win",
        winners=(0,),
        turns=6,
        payoffs=(3.0, 0.0),
        proposals=[prop(1, 1, {"a": 1}, {"b": 1}, accepted=False)],
        counts=(
            SeatCounts(submissions=3, reports_expected=6, report_failures=1),
            SeatCounts(submissions=3, craft_errors=1, reports_expected=6),
        ),
    )
    tie = game("g3", outcome="tie", winners=(0, 1), turns=2, payoffs=(1.0, 1.0))
    other = game("g4", group="V2", outcome="timeout", turns=15)
    out = outcome_metrics([focal_wins, opponent_wins, tie, other])
    assert set(out) == {("m", "V1"), ("m", "V2")}
    o = out[("m", "V1")]
    assert o.games == 3
    assert (o.focal_win_rate, o.opponent_win_rate, o.tie_rate, o.timeout_rate) == pytest.approx(
        (1 / 3, 1 / 3, 1 / 3, 0.0)
    )
    assert o.mean_focal_score == pytest.approx((3 + 0 + 1) / 3)
    assert o.mean_length == pytest.approx(4.0)
    # focal proposals: g1 turns 1 and 3 (accepted, the latter empty), g2 turn 1 (rejected)
    assert (o.focal.proposals, o.focal.acceptance) == (3, pytest.approx(2 / 3))
    # baseline proposals: g1 turns 2 (rejected) and 4 (accepted)
    assert (o.baseline.proposals, o.baseline.acceptance) == (2, 0.5)
    # focal seat: g1 seat 0 (3 subs, 1 invalid), g2 seat 1 (3 subs, 0 invalid)
    assert o.focal.invalid_rate == pytest.approx(1 / 6)
    assert o.baseline.invalid_rate == pytest.approx(0 / 5)
    assert o.focal.craft_errors_per_turn == pytest.approx(3 / 12)  # (2 + 1) / (4 + 6 + 2)
    assert o.baseline.craft_errors_per_turn == pytest.approx(0.0)
    assert o.focal.parse_failure_rate == pytest.approx(0 / 14)
    assert o.baseline.parse_failure_rate == pytest.approx(2 / 10)
    v2 = out[("m", "V2")]
    assert v2.timeout_rate == 1.0 and v2.focal.acceptance is None and v2.focal.invalid_rate is None
