"""Behavioural outcomes per (model, group) (seed-002 §7): not reported by the paper, logged so a
reproduction can say whether ToM elicitation changes how games end, not only how agents talk.

Rates pool counts over the cell's games (Σ numerators / Σ denominators), so a game with more
proposals or turns weighs more; a rate with a zero denominator is None, never 0. The acceptance
rate divides by valid proposals (§7), empty ones included unless `TomOptions.skip_empty`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stratagem.studies.tom.options import DEFAULTS, TomOptions
from stratagem.studies.tom.records import Group, TomGame

Key = tuple[str, str]


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


@dataclass(frozen=True)
class SeatRates:
    """§7's per-seat-role rates: one for the focal seat, one for the baseline seat."""

    proposals: int
    """Delivered proposals the seat made (non-empty ones only with `skip_empty`)."""
    acceptance: float | None
    """#accepted / #delivered proposals the seat made (§7, split by proposer)."""
    invalid_rate: float | None
    """invalid_submissions / submissions (§7)."""
    craft_errors_per_turn: float | None
    """failed craft checks / turns played (§7)."""
    parse_failure_rate: float | None
    """report_failures / reports_expected (§7)."""


@dataclass(frozen=True)
class Outcomes:
    """§7 outcome metrics of one (model, group)."""

    model: str
    group: Group
    games: int
    focal_win_rate: float
    """Games where only the focal seat crafted its target (§7)."""
    opponent_win_rate: float
    tie_rate: float
    timeout_rate: float
    mean_focal_score: float
    mean_length: float
    """Mean turns played (capped at max_turn, §7)."""
    focal: SeatRates
    baseline: SeatRates


def _seat_rates(games: Sequence[TomGame], focal: bool, options: TomOptions) -> SeatRates:
    made = accepted = submissions = invalid = errors = turns = expected = failures = 0
    for g in games:
        seat = g.focal if focal else g.opponent
        mine = [
            p for p in g.proposals if p.proposer == seat and not (p.empty and options.skip_empty)
        ]
        made += len(mine)
        accepted += sum(1 for p in mine if p.accepted)
        c = g.counts[seat]
        submissions += c.submissions
        invalid += c.invalid_submissions
        errors += c.craft_errors
        turns += g.turns
        expected += c.reports_expected
        failures += c.report_failures
    return SeatRates(
        made,
        _ratio(accepted, made),
        _ratio(invalid, submissions),
        _ratio(errors, turns),
        _ratio(failures, expected),
    )


def _cell(games: Sequence[TomGame], options: TomOptions) -> Outcomes:
    n = len(games)
    focal_wins = sum(1 for g in games if g.outcome == "win" and g.winners == (g.focal,))
    opp_wins = sum(1 for g in games if g.outcome == "win" and g.winners == (g.opponent,))
    return Outcomes(
        games[0].model,
        games[0].group,
        n,
        focal_wins / n,
        opp_wins / n,
        sum(1 for g in games if g.outcome == "tie") / n,
        sum(1 for g in games if g.outcome == "timeout") / n,
        sum(g.payoffs[g.focal] for g in games) / n,
        sum(g.turns for g in games) / n,
        _seat_rates(games, True, options),
        _seat_rates(games, False, options),
    )


def outcome_metrics(
    games: Sequence[TomGame], options: TomOptions = DEFAULTS
) -> dict[Key, Outcomes]:
    """§7: one `Outcomes` per (model, group) present in `games`."""
    cells: dict[Key, list[TomGame]] = {}
    for g in games:
        cells.setdefault((g.model, g.group), []).append(g)
    return {key: _cell(cells[key], options) for key in sorted(cells)}
