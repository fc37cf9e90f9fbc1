"""Ratings per role, for games whose seats play different parts (the spy and the others in
Chameleon and Undercover, the proposer and the responder in the ultimatum game).

A model can be a fine spy and a poor detective; one rating over both roles averages the two by
however often it drew each. Here the rated unit is an entity *in a role*, `(entity, role)`.

**Comparisons.** In one game every two seats of different roles are compared by their scores
(the higher wins, equal scores tie), as `rating.seat_pairs` does, also when one entity holds both
(self-play: the entity as proposer against itself as responder is a comparison of two units);
seats of one role are teammates or equals and are not compared. `weighting="game"` makes a game's
comparisons share weight 1.

**Bradley-Terry per role.** For each game type with at least two roles, `rating.bradley_terry`
fits the (entity, role) units of that type (same model, prior, scale and bootstrap over games).
A unit's rating is comparable with another's only when comparisons connect them (a common
opponent, or a chain of them): with challengers against one defender, X as the spy and Y as the
spy are connected through the defender's majority seats, but X as the spy and the defender as
the spy are not. Each row carries its connected `group`; ratings of different groups share a
scale only through the prior, and say nothing about each other.

**Deviation ratings per role** (`deviation_rating`, Marris et al. 2025) where a two-role game has
a full payoff table: player 1 picks the entity in the first role, player 2 the entity in the
second, and G_1(i, j) = (weighted share of comparisons that i, in role 1, won against j, in
role 2) - ½, G_2 = -G_1. The table exists only when every entity seen in one role met every
entity seen in the other; otherwise the deviation column is None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from stratagem.analysis.deviation_rating import deviation_ratings
from stratagem.analysis.rating import BASE, PairResult, Rating, bradley_terry, compared
from stratagem.errors import StratagemError


@dataclass(frozen=True)
class RoleResult:
    """One comparison of entity `a` in role `a_role` with entity `b` in role `b_role`."""

    a: str
    a_role: str
    b: str
    b_role: str
    outcome: float
    """1 a won, 0.5 tie, 0 a lost."""
    game_type: str = ""
    game_id: str = ""
    weight: float = 1.0


def role_seat_pairs(
    entities: Sequence[str],
    roles: Sequence[str],
    scores: Sequence[float],
    *,
    game_type: str = "",
    game_id: str = "",
    weighting: Literal["game", "pair"] = "game",
) -> list[RoleResult]:
    """The role comparisons of one game (module docstring)."""
    if not len(entities) == len(roles) == len(scores):
        raise StratagemError(
            f"{len(entities)} seats' entities, {len(roles)} roles and {len(scores)} scores: "
            "expected one of each per seat"
        )
    n = len(entities)
    pairs = [(s, t) for s in range(n) for t in range(s + 1, n) if roles[s] != roles[t]]
    return [
        RoleResult(entities[s], roles[s], entities[t], roles[t], outcome, game_type, game_id, w)
        for s, t, outcome, w in compared(pairs, scores, weighting)
    ]


@dataclass(frozen=True)
class RoleRating:
    entity: str
    role: str
    rating: Rating
    """The Bradley-Terry row of the (entity, role) unit (its `entity` field is the unit key)."""
    group: int
    """Connected group of comparisons, from 1: ratings compare only within a group."""
    deviation: float | None
    """Deviation rating in the role (≤ 0), None without a full two-role payoff table."""


@dataclass(frozen=True)
class RoleTable:
    game_type: str
    roles: tuple[str, ...]
    rows: tuple[RoleRating, ...]
    """By role (in `roles` order), then best first."""
    groups: int
    deviation_missing: tuple[tuple[str, str], ...]
    """(entity in role 1, entity in role 2) pairs that never met; empty when the deviation
    ratings exist (or the game has more than two roles, see `deviation_note`)."""
    deviation_note: str

    def rating(self, entity: str, role: str) -> RoleRating | None:
        return next((r for r in self.rows if r.entity == entity and r.role == role), None)


def _check(results: Sequence[RoleResult]) -> None:
    for k, r in enumerate(results):
        where = f"role result {k} ({r.a} as {r.a_role} vs {r.b} as {r.b_role})"
        if r.a_role == r.b_role:
            raise StratagemError(f"{where}: only seats of different roles are compared")
        if not 0 <= r.outcome <= 1:
            raise StratagemError(f"{where}: outcome {r.outcome!r} must be in [0, 1]")
        if not math.isfinite(r.weight) or r.weight < 0:
            raise StratagemError(f"{where}: weight {r.weight!r} must be a finite number >= 0")


def _groups(
    units: Sequence[tuple[str, str]], results: Sequence[RoleResult]
) -> dict[tuple[str, str], int]:
    parent = {u: u for u in units}

    def find(u: tuple[str, str]) -> tuple[str, str]:
        while parent[u] != u:
            parent[u] = parent[parent[u]]
            u = parent[u]
        return u

    for r in results:
        if r.weight > 0:
            parent[find((r.a, r.a_role))] = find((r.b, r.b_role))
    roots: dict[tuple[str, str], int] = {}
    return {u: roots.setdefault(find(u), len(roots) + 1) for u in units}


def _deviation(
    results: Sequence[RoleResult], roles: tuple[str, ...]
) -> tuple[dict[tuple[str, str], float], tuple[tuple[str, str], ...], str]:
    if len(roles) != 2:
        return {}, (), f"{len(roles)} roles: deviation ratings per role need exactly two"
    first, second = roles
    ones = sorted({r.a for r in results if r.a_role == first} | {
        r.b for r in results if r.b_role == first})  # fmt: skip
    twos = sorted({r.a for r in results if r.a_role == second} | {
        r.b for r in results if r.b_role == second})  # fmt: skip
    i1 = {e: k for k, e in enumerate(ones)}
    i2 = {e: k for k, e in enumerate(twos)}
    weight = np.zeros((len(ones), len(twos)))
    won = np.zeros_like(weight)
    for r in results:
        if r.a_role == first:
            i, j, y = i1[r.a], i2[r.b], r.outcome
        else:
            i, j, y = i1[r.b], i2[r.a], 1.0 - r.outcome
        weight[i, j] += r.weight
        won[i, j] += r.weight * y
    missing = tuple(
        (ones[i], twos[j]) for i in range(len(ones)) for j in range(len(twos)) if weight[i, j] <= 0
    )
    if missing:
        return {}, missing, f"{len(missing)} ({first}, {second}) pairs of entities never met"
    g = won / weight - 0.5
    dr = deviation_ratings([g, -g], [ones, twos])
    out = {(e, first): v for e, v in dr.of(0).items()}
    out.update({(e, second): v for e, v in dr.of(1).items()})
    return out, (), ""


def role_ratings(
    results: Sequence[RoleResult],
    *,
    l2: float = 0.01,
    base: float = BASE,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[RoleTable, ...]:
    """One table per game type, game types and roles sorted (module docstring)."""
    if not results:
        raise StratagemError("no role results to rate")
    _check(results)
    tables = []
    for game_type in sorted({r.game_type for r in results}):
        mine = [r for r in results if r.game_type == game_type]
        roles = tuple(sorted({r.a_role for r in mine} | {r.b_role for r in mine}))
        units = sorted({(r.a, r.a_role) for r in mine} | {(r.b, r.b_role) for r in mine})
        key = {u: str(k) for k, u in enumerate(units)}
        pairs = [
            PairResult(
                a=key[(r.a, r.a_role)],
                b=key[(r.b, r.b_role)],
                outcome=r.outcome,
                game_type=game_type,
                game_id=r.game_id,
                weight=r.weight,
            )
            for r in mine
        ]
        table = bradley_terry(
            pairs, balance_types=False, l2=l2, base=base, n_boot=n_boot, level=level, seed=seed
        )
        groups = _groups(units, mine)
        deviation, missing, note = _deviation(mine, roles)
        by_key = {r.entity: r for r in table.ratings}
        rows = [RoleRating(u[0], u[1], by_key[key[u]], groups[u], deviation.get(u)) for u in units]
        rows.sort(key=lambda x: (roles.index(x.role), -x.rating.rating, x.entity))
        tables.append(
            RoleTable(
                game_type=game_type,
                roles=roles,
                rows=tuple(rows),
                groups=max(groups.values()),
                deviation_missing=missing,
                deviation_note=note,
            )
        )
    return tuple(tables)
