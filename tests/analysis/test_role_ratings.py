"""Ratings per role: which seats are compared, Bradley-Terry per (entity, role) checked against
its closed form for two units, the connected groups of a challenger-defender design, and the
deviation ratings of a two-role payoff table worked by hand."""

from __future__ import annotations

import math

import pytest

from stratagem.analysis.rating import ELO_SCALE
from stratagem.analysis.role_ratings import RoleResult, role_ratings, role_seat_pairs
from stratagem.errors import StratagemError


def test_only_seats_of_different_roles_are_compared() -> None:
    # Chameleon-like: X is the spy, D holds both majority seats; the spy lost (credits 0 vs 1)
    pairs = role_seat_pairs(["X", "D", "D"], ["spy", "civ", "civ"], [0, 1, 1], game_type="g",
                            game_id="e1")  # fmt: skip
    assert [(p.a, p.a_role, p.b, p.b_role, p.outcome) for p in pairs] == [
        ("X", "spy", "D", "civ", 0.0),
        ("X", "spy", "D", "civ", 0.0),
    ]
    assert [p.weight for p in pairs] == [0.5, 0.5]
    # self-play: the entity in one role against itself in the other is a comparison
    (self_play,) = role_seat_pairs(["X", "X"], ["proposer", "responder"], [60, 40],
                                   weighting="pair")  # fmt: skip
    assert (self_play.a_role, self_play.b_role, self_play.outcome, self_play.weight) == (
        "proposer", "responder", 1.0, 1.0)  # fmt: skip
    with pytest.raises(StratagemError, match="expected one of each per seat"):
        role_seat_pairs(["X"], ["a", "b"], [1, 2])


def test_two_units_match_the_closed_form() -> None:
    """With two units and a vanishing prior the Bradley-Terry MLE solves σ(Δθ) = wins / n, so
    the rating gap is ELO_SCALE · ln(wins / losses): X as proposer beat Y as responder 3 of 4."""
    results = [
        RoleResult("X", "proposer", "Y", "responder", 1.0 if k < 3 else 0.0, "ult", f"e{k}")
        for k in range(4)
    ]
    (table,) = role_ratings(results, l2=1e-8, n_boot=20)
    assert table.roles == ("proposer", "responder")
    x, y = table.rating("X", "proposer"), table.rating("Y", "responder")
    assert x is not None and y is not None
    assert x.rating.rating - y.rating.rating == pytest.approx(ELO_SCALE * math.log(3), rel=1e-4)
    assert x.group == y.group == 1 and table.groups == 1


def _design() -> list[RoleResult]:
    """Challengers X and Y against defender D in a spy game, each on both sides: X wins 3 of 4
    as the spy, Y 1 of 4; as civilians X wins 2 of 4, Y 1 of 4."""
    out = []
    for c, spy_wins, civ_wins in (("X", 3, 2), ("Y", 1, 1)):
        for k in range(4):
            out.append(RoleResult(c, "spy", "D", "civ", float(k < spy_wins), "cham", f"{c}s{k}"))
            out.append(RoleResult("D", "spy", c, "civ", float(k >= civ_wins), "cham", f"{c}c{k}"))
    return out


def test_groups_follow_the_comparisons() -> None:
    (table,) = role_ratings(_design(), n_boot=50)
    assert table.roles == ("civ", "spy")
    g = {(r.entity, r.role): r.group for r in table.rows}
    assert g[("X", "spy")] == g[("Y", "spy")] == g[("D", "civ")]
    assert g[("D", "spy")] == g[("X", "civ")] == g[("Y", "civ")]
    assert g[("X", "spy")] != g[("D", "spy")] and table.groups == 2
    spy = [r for r in table.rows if r.role == "spy" and r.entity != "D"]
    assert [r.entity for r in spy] == ["X", "Y"]  # best first within the role
    # rows are ordered by role, then rating
    assert [r.role for r in table.rows] == ["civ"] * 3 + ["spy"] * 3
    # the design never pits X as spy against Y as civilian: no deviation table
    assert all(r.deviation is None for r in table.rows)
    assert ("D", "D") in table.deviation_missing and "never met" in table.deviation_note


def test_self_play_joins_the_groups() -> None:
    results = [*_design(), RoleResult("D", "spy", "D", "civ", 0.5, "cham", "self")]
    (table,) = role_ratings(results, n_boot=20)
    assert table.groups == 1


def test_deviation_ratings_per_role_worked_by_hand() -> None:
    """Proposer share of wins against each responder: X-X 0.75, X-Y 1.0, Y-X 0.25, Y-Y 0.5, so
    G_proposer = [[0.25, 0.5], [-0.25, 0]] (minus ½). X dominates as proposer; the responder's
    minimax answer is X (0.25 < 0.5): a saddle at (X, X) worth 0.25. Proposer ratings: X 0,
    Y = G(Y, X) - 0.25 = -0.5; responder ratings: X 0, Y = -G(X, Y) + 0.25 = -0.25."""
    shares = {("X", "X"): 0.75, ("X", "Y"): 1.0, ("Y", "X"): 0.25, ("Y", "Y"): 0.5}
    results = []
    for (p, r), share in shares.items():
        wins = round(4 * share)
        for k in range(4):
            outcome = 1.0 if k < wins else 0.0
            if k % 2:  # stored with the responder first: the outcome flips
                results.append(RoleResult(r, "responder", p, "proposer", 1 - outcome, "ult"))
            else:
                results.append(RoleResult(p, "proposer", r, "responder", outcome, "ult"))
    (table,) = role_ratings(results, n_boot=20)
    dev = {(r.entity, r.role): r.deviation for r in table.rows}
    assert dev == pytest.approx({("X", "proposer"): 0.0, ("Y", "proposer"): -0.5,
                                 ("X", "responder"): 0.0, ("Y", "responder"): -0.25},
                                abs=1e-9)  # fmt: skip
    assert table.deviation_missing == () and table.deviation_note == ""


def test_one_table_per_game_type_and_bad_input_is_named() -> None:
    results = [*_design(), RoleResult("X", "proposer", "Y", "responder", 1.0, "ult")]
    assert [t.game_type for t in role_ratings(results, n_boot=10)] == ["cham", "ult"]
    with pytest.raises(StratagemError, match="only seats of different roles"):
        role_ratings([RoleResult("X", "a", "Y", "a", 1.0)])
    with pytest.raises(StratagemError, match="no role results"):
        role_ratings([])
