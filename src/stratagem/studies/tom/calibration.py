"""Calibration of first-order beliefs against the opponent's *real* target — an addition, NOT
from the paper (seed-002 §4 scores V1 only against the opponent's self-report V0).

A self-report can be wrong, so agreeing with it is not knowing the opponent's needs. Here the
truth is rule-based: an item of the report domain is *relevant* to a target if it feeds some
recipe of the target, directly or through a crafting chain of at most `depth` steps, fuel of
cooking recipes included as a leaf (§2.2: any fuel item burns, but how a fuel is itself made
is not followed). A V1 report is calibrated if it scores relevant items above
irrelevant ones: the AUC (Mann–Whitney, ties ½) and the mean score of each class. The
opponent's own V0 is scored the same way, as a reference for how well self-reports know needs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from stratagem.games.tradecraft.rules import TradecraftRules
from stratagem.studies.tom.records import Group, Items, TomGame, Values

Relevance = Callable[[Items, Sequence[str]], set[str]]
"""(target, report domain) -> the domain items relevant to the target."""
Source = Literal["V1_focal", "V0_opponent"]
"""Whose report is scored: the focal agent's belief, or the opponent's self-report."""
Key = tuple[str, str, str]


def rules_relevance(rules: TradecraftRules, depth: int = 3) -> Relevance:
    """The rule-based relevance (module docstring), its closure cached per target item."""

    @cache
    def feeds(item: str) -> frozenset[str]:
        return rules.feeders([item], depth, fuel=True)

    def relevant(target: Items, domain: Sequence[str]) -> set[str]:
        inputs = frozenset().union(*(feeds(t) for t in target))
        return {i for i in domain if i in inputs}

    return relevant


def auc(scores: Values, relevant: set[str], domain: Sequence[str]) -> float | None:
    """P(a relevant item outscores an irrelevant one), ties ½ (Mann–Whitney); None when either
    class is empty. Items missing from the report score 0 (§3.2 [A])."""
    pos = [scores.get(i, 0) for i in domain if i in relevant]
    neg = [scores.get(i, 0) for i in domain if i not in relevant]
    if not pos or not neg:
        return None
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


@dataclass(frozen=True)
class CalibrationPoint:
    """One report scored against the opponent's real target."""

    episode_id: str
    model: str
    group: Group
    turn: int
    source: Source
    auc: float | None
    mean_relevant: float | None
    mean_irrelevant: float | None
    n_relevant: int
    n_irrelevant: int


def _score(
    game: TomGame, turn: int, source: Source, values: Values, relevant: Relevance
) -> CalibrationPoint:
    domain = sorted(values)
    rel = relevant(game.targets[game.opponent], domain)
    pos = [values[i] for i in domain if i in rel]
    neg = [values[i] for i in domain if i not in rel]
    return CalibrationPoint(
        game.episode_id,
        game.model,
        game.group,
        turn,
        source,
        auc(values, rel, domain),
        sum(pos) / len(pos) if pos else None,
        sum(neg) / len(neg) if neg else None,
        len(pos),
        len(neg),
    )


def calibration_points(games: Sequence[TomGame], relevant: Relevance) -> list[CalibrationPoint]:
    """Every focal V1 report, and every opponent V0 report, scored against the opponent's
    target over the report's own domain (its keys: the items in the hands, §3.2)."""
    points: list[CalibrationPoint] = []
    for game in games:
        for r in sorted(game.reports, key=lambda r: (r.turn, r.seat)):
            if r.seat == game.focal and r.v1 is not None:
                points.append(_score(game, r.turn, "V1_focal", r.v1, relevant))
            elif r.seat == game.opponent and r.v0 is not None:
                points.append(_score(game, r.turn, "V0_opponent", r.v0, relevant))
    return points


@dataclass(frozen=True)
class CalibrationSummary:
    """Means over one (model, group, source)'s points; AUC over the points where defined."""

    mean_auc: float | None
    auc_points: int
    mean_relevant: float | None
    mean_irrelevant: float | None
    points: int


def _mean(values: Sequence[float | None]) -> tuple[float | None, int]:
    kept = [v for v in values if v is not None]
    return (sum(kept) / len(kept) if kept else None), len(kept)


def calibration_summary(points: Sequence[CalibrationPoint]) -> dict[Key, CalibrationSummary]:
    """Per (model, group, source): mean AUC and mean score of relevant / irrelevant items."""
    cells: dict[Key, list[CalibrationPoint]] = {}
    for p in points:
        cells.setdefault((p.model, p.group, p.source), []).append(p)
    out: dict[Key, CalibrationSummary] = {}
    for key in sorted(cells):
        cell = cells[key]
        mean_auc, n_auc = _mean([p.auc for p in cell])
        out[key] = CalibrationSummary(
            mean_auc,
            n_auc,
            _mean([p.mean_relevant for p in cell])[0],
            _mean([p.mean_irrelevant for p in cell])[0],
            len(cell),
        )
    return out


def calibration_by_turn(
    points: Sequence[CalibrationPoint],
) -> dict[Key, dict[int, tuple[float, int]]]:
    """Per (model, group, source) and turn: mean AUC over the games where it is defined."""
    cells: dict[Key, dict[int, list[float]]] = {}
    for p in points:
        if p.auc is not None:
            cells.setdefault((p.model, p.group, p.source), {}).setdefault(p.turn, []).append(p.auc)
    return {
        key: {t: (sum(v) / len(v), len(v)) for t, v in sorted(by_turn.items())}
        for key, by_turn in sorted(cells.items())
    }
