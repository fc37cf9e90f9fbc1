"""Solution concepts, computed from the payoff tensor, never typed in.

Studies state equilibria and dominance as facts about their games (seed-001 §2, seed-003 §1.2-1.3).
Computing them instead lets every counterfactual variant, and every game a user declares, get the
same analysis, and lets the tests check the studies' claims rather than repeat them.

Mixed equilibria of 2-player games come from nashpy (support enumeration, with vertex enumeration
added for degenerate games); pure equilibria, dominance and Pareto optimality of n-player games come
from enumerating pure profiles.
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stratagem.errors import StratagemError, unknown_name
from stratagem.games.matrix.normal_form import NormalFormGame

TOLERANCE = 1e-9
"""Payoff and probability differences below this are floating-point noise, not strategy."""

_DECIMALS = 9
"""Equilibrium probabilities are rounded to this many decimals, so one equilibrium found twice (or
by two algorithms) compares equal."""

Selection = Literal["mixed", "first"]
SELECTIONS: tuple[str, ...] = ("mixed", "first")

MixedStrategy = NDArray[np.float64]
"""A mixed strategy: a probability vector over one player's actions."""


# -- expected payoffs and equilibrium checks -----------------------------------------------------


def _as_strategies(game: NormalFormGame, strategies: Sequence[ArrayLike]) -> list[MixedStrategy]:
    if len(strategies) != game.n_players:
        raise StratagemError(
            f"game '{game.name}' has {game.n_players} players, got {len(strategies)} strategies"
        )
    out = []
    for p, s in enumerate(strategies):
        x = np.asarray(s, dtype=float)
        if x.shape != (game.sizes[p],):
            raise StratagemError(
                f"strategy of player {p + 1} has shape {x.shape}, expected ({game.sizes[p]},)"
            )
        if np.any(x < -TOLERANCE) or abs(float(x.sum()) - 1.0) > 1e-6:
            raise StratagemError(f"strategy of player {p + 1} is not a probability vector: {x}")
        out.append(x)
    return out


def _contract(
    tensor: NDArray[np.float64], strategies: Sequence[MixedStrategy], skip: int
) -> MixedStrategy:
    """Expectation of `tensor` (one axis per player) over every player's strategy but `skip`'s."""
    result = tensor
    # Contract from the last axis down, so the remaining axes keep their positions.
    for q in reversed(range(len(strategies))):
        if q != skip:
            result = np.tensordot(result, strategies[q], axes=([q], [0]))
    return np.asarray(result, dtype=float)


def expected_payoffs(game: NormalFormGame, strategies: Sequence[ArrayLike]) -> tuple[float, ...]:
    """Each player's expected payoff when players mix independently."""
    xs = _as_strategies(game, strategies)
    values = []
    for p in range(game.n_players):
        vs = _contract(game.payoffs[..., p], xs, skip=p)  # payoff of each own pure action
        values.append(float(vs @ xs[p]))
    return tuple(values)


def is_equilibrium(
    game: NormalFormGame, strategies: Sequence[ArrayLike], tol: float = TOLERANCE
) -> bool:
    """Whether no player gains more than `tol` by a unilateral deviation (n players, mixed)."""
    xs = _as_strategies(game, strategies)
    for p in range(game.n_players):
        vs = _contract(game.payoffs[..., p], xs, skip=p)
        if float(vs.max()) > float(vs @ xs[p]) + tol:
            return False
    return True


# -- Nash equilibria -----------------------------------------------------------------------------


def _normalise(x: ArrayLike) -> MixedStrategy:
    """Clip solver noise (tiny negatives) and renormalise."""
    v = np.clip(np.asarray(x, dtype=float), 0.0, None)
    normalised: MixedStrategy = v / v.sum()
    return normalised


def _clean(x: ArrayLike) -> MixedStrategy:
    """Normalise and round, so that equal equilibria compare equal."""
    rounded: MixedStrategy = np.round(_normalise(x), _DECIMALS) + 0.0  # + 0.0: no -0.0
    return rounded


def _dedupe(candidates: Iterable[tuple[MixedStrategy, ...]]) -> list[tuple[MixedStrategy, ...]]:
    seen: set[tuple[tuple[float, ...], ...]] = set()
    out = []
    for profile in candidates:
        key = tuple(tuple(float(v) for v in x) for x in profile)
        if key not in seen:
            seen.add(key)
            out.append(profile)
    return out


def _two_player(game: NormalFormGame) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    if game.n_players != 2:
        raise StratagemError(
            f"mixed equilibria are computed for 2-player games; '{game.name}' has "
            f"{game.n_players} players (use pure_nash_equilibria)"
        )
    return game.matrices()


def nash_equilibria(game: NormalFormGame) -> list[tuple[MixedStrategy, MixedStrategy]]:
    """All Nash equilibria (pure and mixed) of a 2-player game, each as (row, column) strategies.

    Support enumeration finds every equilibrium of a nondegenerate game, which has an odd number of
    them. An even count signals a degenerate game (ties in best responses); there the extreme
    equilibria of vertex enumeration are added. Every result is re-checked with a tolerance (nashpy
    compares floats exactly), rounded to 1e-9 and deduplicated. Pure equilibria come first.
    Results are cached by payoffs, since bots solve the same stage game at every match.
    """
    a, b = _two_player(game)
    solved = _solve_bimatrix(a.shape, a.tobytes(), b.tobytes())
    return [(np.array(x), np.array(y)) for x, y in solved]


_Solved = tuple[tuple[tuple[float, ...], tuple[float, ...]], ...]


@functools.lru_cache(maxsize=1024)
def _solve_bimatrix(shape: tuple[int, ...], row: bytes, col: bytes) -> _Solved:
    import nashpy  # deferred: importing it (and scipy) costs about half a second

    a = np.frombuffer(row, dtype=np.float64).reshape(shape)
    b = np.frombuffer(col, dtype=np.float64).reshape(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nashpy's "even number" warning
        found = list(nashpy.Game(a, b).support_enumeration(tol=TOLERANCE))
    if len(found) % 2 == 0:
        # Shifting each player's payoffs to be >= 1 keeps the equilibria and bounds the
        # best-response polytopes that vertex enumeration walks.
        shifted = nashpy.Game(a - a.min() + 1.0, b - b.min() + 1.0)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found += list(shifted.vertex_enumeration())
        except Exception:  # qhull can fail on flat polytopes; keep what support enumeration found
            pass
    # Checked before rounding: rounding to 1e-9 can cost more than the tolerance in large payoffs.
    tol = 1e-7 * max(1.0, float(np.abs(a).max()), float(np.abs(b).max()))
    verified = []
    for x, y in found:
        xn, yn = _normalise(x), _normalise(y)
        row_gain = float((a @ yn).max() - xn @ a @ yn)
        col_gain = float((xn @ b).max() - xn @ b @ yn)
        if row_gain <= tol and col_gain <= tol:
            verified.append((_clean(xn), _clean(yn)))
    unique = _dedupe(verified)
    unique.sort(key=lambda xy: int(np.count_nonzero(xy[0]) + np.count_nonzero(xy[1])))
    return tuple((tuple(map(float, x)), tuple(map(float, y))) for x, y in unique)


def pure_nash_equilibria(game: NormalFormGame) -> list[tuple[int, ...]]:
    """Pure profiles where no player gains by a unilateral deviation (any number of players)."""
    stable = np.ones(game.sizes, dtype=bool)
    for p in range(game.n_players):
        own = game.payoffs[..., p]
        best = own.max(axis=p, keepdims=True)
        stable &= own >= best - TOLERANCE
    return [tuple(int(i) for i in idx) for idx in np.argwhere(stable)]


# -- dominance -----------------------------------------------------------------------------------


def _own_rows(
    game: NormalFormGame, player: int, alive: Sequence[Sequence[int]] | None = None
) -> NDArray[np.float64]:
    """`player`'s payoffs as a matrix: one row per own action, one column per opponents' profile."""
    if not 0 <= player < game.n_players:
        raise StratagemError(
            f"game '{game.name}' has players 0..{game.n_players - 1}, got player {player}"
        )
    own = game.payoffs[..., player]
    if alive is not None:
        own = own[np.ix_(*[list(a) for a in alive])]
    return np.moveaxis(own, player, 0).reshape(own.shape[player], -1)


def _dominated_rows(rows: NDArray[np.float64]) -> list[int]:
    k = rows.shape[0]
    return [
        i
        for i in range(k)
        if any(bool(np.all(rows[j] > rows[i] + TOLERANCE)) for j in range(k) if j != i)
    ]


def strictly_dominated(game: NormalFormGame, player: int) -> list[int]:
    """Actions of `player` that another pure action beats against every opponents' profile."""
    return _dominated_rows(_own_rows(game, player))


def dominant_action(game: NormalFormGame, player: int) -> int | None:
    """The action strictly better than every other against every opponents' profile, if any."""
    rows = _own_rows(game, player)
    for i in range(rows.shape[0]):
        others = [j for j in range(rows.shape[0]) if j != i]
        if all(bool(np.all(rows[i] > rows[j] + TOLERANCE)) for j in others):
            return i
    return None


def iterated_strict_dominance(game: NormalFormGame) -> tuple[tuple[int, ...], ...]:
    """Actions (original indices) of each player that survive iterated removal of strictly
    dominated pure actions. The result does not depend on the removal order."""
    alive = [list(range(k)) for k in game.sizes]
    changed = True
    while changed:
        changed = False
        for p in range(game.n_players):
            dominated = _dominated_rows(_own_rows(game, p, alive))
            if dominated:
                alive[p] = [a for i, a in enumerate(alive[p]) if i not in dominated]
                changed = True
    return tuple(tuple(a) for a in alive)


# -- efficiency ----------------------------------------------------------------------------------


def pareto_optimal(game: NormalFormGame) -> list[tuple[int, ...]]:
    """Pure profiles that no other pure profile Pareto-dominates (none as good for all and better
    for one)."""
    profiles = game.profiles()
    values = np.array([game.payoffs[p] for p in profiles])
    out = []
    for i, profile in enumerate(profiles):
        at_least = np.all(values >= values[i] - TOLERANCE, axis=1)
        better = np.any(values > values[i] + TOLERANCE, axis=1)
        if not np.any(at_least & better):
            out.append(profile)
    return out


# -- symmetric equilibrium -----------------------------------------------------------------------


def _symmetric_by_support(a: NDArray[np.float64]) -> list[MixedStrategy]:
    """Symmetric equilibria x (both play x) by enumerating supports of x.

    A fallback for degenerate games, where the extreme equilibria that the 2-player solver lists may
    all be asymmetric although a symmetric one always exists (Nash 1951).
    """
    k = a.shape[0]
    out = []
    for size in range(1, k + 1):
        for support in itertools.combinations(range(k), size):
            s = list(support)
            # Indifference on the support, probabilities summing to 1:
            # [A_SS  -1; 1 0] [x; v] = [0; 1]
            m = np.zeros((size + 1, size + 1))
            m[:size, :size] = a[np.ix_(s, s)]
            m[:size, size] = -1.0
            m[size, :size] = 1.0
            rhs = np.zeros(size + 1)
            rhs[size] = 1.0
            sol, *_ = np.linalg.lstsq(m, rhs, rcond=None)
            if not np.allclose(m @ sol, rhs, atol=1e-9):
                continue
            x = np.zeros(k)
            x[s] = sol[:size]
            if np.any(x < -TOLERANCE):
                continue
            x = _clean(x)
            u = a @ x
            if float(u.max()) <= float(u @ x) + 1e-7:
                out.append(x)
    return [x for (x,) in _dedupe((x,) for x in out)]


def symmetric_equilibria(game: NormalFormGame) -> list[MixedStrategy]:
    """Mixed strategies x such that (x, x) is a Nash equilibrium of a symmetric 2-player game."""
    if not game.is_symmetric():
        raise StratagemError(
            f"game '{game.name}' is not a symmetric 2-player game: u2(a, b) must equal u1(b, a)"
        )
    found = [x for x, y in nash_equilibria(game) if np.allclose(x, y, atol=1e-7)]
    if not found:
        found = _symmetric_by_support(game.matrices()[0])
    return found


def symmetric_equilibrium(game: NormalFormGame, selection: str = "mixed") -> MixedStrategy:
    """The mixed strategy that both players use in a symmetric equilibrium of a symmetric game.

    With several, `selection` picks one: "mixed" takes the one with the largest support (the
    behaviour of seed-003's SREP bot, §2.2: under Stag Hunt payoffs 6,1,4,2 it plays the first
    action w.p. 1/3), "first" the first found (pure equilibria come first, in action order).
    """
    if selection not in SELECTIONS:
        raise unknown_name("equilibrium selection", selection, SELECTIONS)
    found = symmetric_equilibria(game)
    if not found:  # pragma: no cover - every finite symmetric game has one (Nash 1951)
        raise StratagemError(f"no symmetric equilibrium found for game '{game.name}'")
    if selection == "first" or len(found) == 1:
        return found[0].copy()
    # max() keeps the first of equal supports, so the choice is deterministic.
    return max(found, key=lambda x: int(np.count_nonzero(x))).copy()
