"""Belief accuracy (seed-002 §4): how close the focal agent's first-order belief V1 is to the
opponent's own self-report V0, as a KL divergence per turn.

The paper names the metric but not its normalisation, direction, smoothing or aggregation; the
§4 [A] formula is used, with ε from `TomOptions` and its sensitivity reported separately.
Ground truth is the opponent's *reported* V0 (§4 [P]), never an oracle.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from stratagem.errors import StratagemError
from stratagem.studies.tom.options import DEFAULTS, TomOptions
from stratagem.studies.tom.records import Group, TomGame, Values

Key = tuple[str, str]
"""(model, group): one cell of Figure 4."""


def kl(
    p_values: Mapping[str, int], q_values: Mapping[str, int], items: Sequence[str], epsilon: float
) -> float:
    """KL(P ‖ Q) of two 0–10 score reports over `items`, each smoothed by ε and normalised.

    §4 [A]: P(i) = (p(i)+ε) / Σ_j (p(j)+ε), Q likewise, KL = Σ_i P(i)·log(P(i)/Q(i)); an item
    missing from a report scores 0 (§3.2 [A]: missing keys are 0).
    """
    if not items:
        raise StratagemError("KL needs a non-empty item domain")
    if not epsilon > 0:
        raise StratagemError(f"epsilon must be positive, got {epsilon!r}")
    p = [p_values.get(i, 0) + epsilon for i in items]
    q = [q_values.get(i, 0) + epsilon for i in items]
    sp, sq = sum(p), sum(q)
    # §4: Σ P·log(P/Q); every term is finite since ε > 0
    return max(
        0.0, sum((a / sp) * math.log((a / sp) / (b / sq)) for a, b in zip(p, q, strict=True))
    )


@dataclass(frozen=True)
class KLPoint:
    """One (game, turn) KL value."""

    episode_id: str
    model: str
    group: Group
    turn: int
    kl: float


def _domain(a: Values, b: Values) -> list[str]:
    """§4 [A]: S_t = the items either report scores, sorted (both share the hands, §3.2)."""
    return sorted(set(a) | set(b))


def kl_points(games: Sequence[TomGame], options: TomOptions = DEFAULTS) -> list[KLPoint]:
    """KL(V0_opponent ‖ V1_focal) for every turn where both reports exist (§4: same turn index).

    A turn where either report is missing (not asked, or unread) gives no point.
    """
    points: list[KLPoint] = []
    for game in games:
        turns = sorted({r.turn for r in game.reports if r.seat == game.focal})
        for turn in turns:
            mine, theirs = game.report(turn, game.focal), game.report(turn, game.opponent)
            if mine is None or theirs is None or mine.v1 is None or theirs.v0 is None:
                continue
            items = _domain(theirs.v0, mine.v1)
            if not items:
                continue
            value = kl(theirs.v0, mine.v1, items, options.epsilon)
            points.append(KLPoint(game.episode_id, game.model, game.group, turn, value))
    return points


def kl_by_turn(points: Sequence[KLPoint]) -> dict[Key, dict[int, tuple[float, int]]]:
    """§4: per (model, group) and turn, the mean KL over games and how many games it averages."""
    cells: dict[Key, dict[int, list[float]]] = {}
    for p in points:
        cells.setdefault((p.model, p.group), {}).setdefault(p.turn, []).append(p.kl)
    return {
        key: {t: (sum(v) / len(v), len(v)) for t, v in sorted(by_turn.items())}
        for key, by_turn in cells.items()
    }


def kl_overall(points: Sequence[KLPoint]) -> dict[Key, tuple[float, int]]:
    """§4: per (model, group), the mean over all (game, turn) points and their count.

    Every turn weighs the same, so longer games weigh more; this matches Figure 4's per-turn
    curves pooled, rather than a mean of per-game means.
    """
    cells: dict[Key, list[float]] = {}
    for p in points:
        cells.setdefault((p.model, p.group), []).append(p.kl)
    return {key: (sum(v) / len(v), len(v)) for key, v in cells.items()}


def revealed_kl(games: Sequence[TomGame], options: TomOptions = DEFAULTS) -> list[KLPoint]:
    """PROXY, not an accuracy (§4 [A]): KL(V0_focal ‖ V2_focal) in the V2 group.

    V2 has no ground truth (the baseline never reports V1, §4 [P]); this measures how far the
    agent thinks the opponent's picture of its own needs is from those needs, i.e. how much it
    believes it has revealed (low = "they know what I need").
    """
    points: list[KLPoint] = []
    for game in games:
        if game.group != "V2":
            continue
        for r in sorted((r for r in game.reports if r.seat == game.focal), key=lambda r: r.turn):
            if r.v0 is None or r.v2 is None:
                continue
            items = _domain(r.v0, r.v2)
            if items:
                value = kl(r.v0, r.v2, items, options.epsilon)
                points.append(KLPoint(game.episode_id, game.model, game.group, r.turn, value))
    return points


def epsilon_sensitivity(
    games: Sequence[TomGame], options: TomOptions = DEFAULTS
) -> dict[Key, dict[float, float]]:
    """§4: the overall mean KL per (model, group) under each ε of `options.epsilons`."""
    out: dict[Key, dict[float, float]] = {}
    for eps in options.epsilons:
        for key, (mean, _) in kl_overall(kl_points(games, replace(options, epsilon=eps))).items():
            out.setdefault(key, {})[eps] = mean
    return out
