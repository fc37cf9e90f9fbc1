"""Paired comparisons of a default game with its counterfactual variants (seed-003, our extension).

The paper compares the variant tables with the default table by eye. Two things are added here.

**Paired difference.** A variant cell and its default cell share model, prompt, opponent and
repetition, so `variant[k] - default[k]` removes what the pair has in common. `paired_difference`
gives the mean of those differences and a bootstrap percentile interval: the pair indices are
resampled with replacement `n_boot` times and the interval is the central `level` part of the
resampled mean differences. With fewer than 2 pairs there is no interval.

**Canonical-strategy persistence**: how much of the default game's behaviour survives when the
incentives change. A game is a sequence of rounds `(own, opponent)` of action *indices* (None = an
invalid move). A variant keeps the index order of its default game, so index i plays the same
strategic role in both (pd "cooperation" = sh "stag"; eq1 rock = eq1-alt paper, the action that
beats index 2). The agent's conditional policy is read in k + 1 contexts (k = `n_actions`):

- `start`: round 1;
- `after:j`: the opponent played j in the previous round.

A round whose own move is None is skipped; a round whose previous opponent move is None has no
`after` context and is skipped too. For each context c, p_D(.|c) and p_V(.|c) are the empirical
distributions of the agent's valid own moves in c, pooled over the default games and over the
variant games, with n_D(c) and n_V(c) observations. Over the contexts observed on both sides (the
*shared* contexts)

    w_c   = (n_D(c) + n_V(c)) / sum over shared c' of (n_D(c') + n_V(c'))
    TV_c  = 0.5 * sum_a |p_D(a|c) - p_V(a|c)|
    score = 1 - sum_c w_c * TV_c

so 1 means the agent plays exactly as in the default game (same conditional policy by role) and 0
means completely different behaviour (the result is clipped to [0, 1] against rounding). With no
shared context the score is None.

`mapping[i]` (variant index -> default index) re-labels the variant games, own and opponent
moves alike, before the comparison. The identity aligns by role; a label alignment (eq1-alt's
"rock", index 1, onto eq1's "rock", index 0: mapping [1, 0, 2]) measures label anchoring instead.

All randomness goes through `numpy.random.default_rng(seed)`, so results are reproducible.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import numpy.typing as npt

from stratagem.errors import StratagemError

FloatArray = npt.NDArray[np.float64]

Moves = Sequence[tuple[int | None, int | None]]
"""One game: per round (own action index, opponent action index); None = an invalid move."""

START = "start"
"""The round-1 context of `behaviour_profile`."""

_BLOCK = 1 << 20
"""Most resampled values held at once by the bootstraps, to bound memory on long inputs."""


# -- paired difference --------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedDifference:
    """variant minus default over paired games (same model, prompt, opponent and repetition)."""

    n: int
    mean_default: float
    mean_variant: float
    mean_diff: float
    ci_low: float | None
    ci_high: float | None
    level: float

    @property
    def significant(self) -> bool:
        """True when the interval excludes 0; without an interval nothing can be claimed."""
        if self.ci_low is None or self.ci_high is None:
            return False
        return self.ci_low > 0 or self.ci_high < 0


def _check_bootstrap(n_boot: int, level: float) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, Integral) or n_boot < 1:
        raise StratagemError(f"n_boot must be a positive integer, got {n_boot!r}")
    if not 0 < level < 1:
        raise StratagemError(f"level must be strictly between 0 and 1, got {level!r}")


def _values(xs: Sequence[float], name: str) -> FloatArray:
    try:
        arr = np.asarray(xs, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StratagemError(f"{name} values must be numbers: {exc}") from None
    if arr.ndim != 1:
        raise StratagemError(f"{name} must be a flat sequence of numbers, got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise StratagemError(f"{name}[{bad[0]}] is {arr[bad[0]]}: values must be finite numbers")
    return arr


def _percentiles(stats: FloatArray, level: float) -> tuple[float, float]:
    alpha = (1 - level) / 2
    low, high = np.quantile(stats, [alpha, 1 - alpha])
    return float(low), float(high)


def paired_difference(
    default: Sequence[float],
    variant: Sequence[float],
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """Mean of variant[k] - default[k] with a bootstrap CI: pairing removes shared cell noise."""
    _check_bootstrap(n_boot, level)
    d, v = _values(default, "default"), _values(variant, "variant")
    if d.size != v.size:
        raise StratagemError(
            f"default has {d.size} values but variant {v.size}: pairs must be aligned"
        )
    if d.size == 0:
        raise StratagemError("no pairs: default and variant are empty")
    n = int(d.size)
    diffs = v - d
    mean_diff = float(diffs.mean())
    ci: tuple[float | None, float | None] = (None, None)
    if np.all(diffs == diffs[0]):
        # Every resample has the same mean; say so exactly instead of up to rounding.
        mean_diff = float(diffs[0])
        if n >= 2:
            ci = (mean_diff, mean_diff)
    elif n >= 2:
        means = np.concatenate([diffs[picks].mean(axis=1) for picks in _resamples(n, n_boot, seed)])
        ci = _percentiles(means, level)
    return PairedDifference(
        n=n,
        mean_default=float(d.mean()),
        mean_variant=float(v.mean()),
        mean_diff=mean_diff,
        ci_low=ci[0],
        ci_high=ci[1],
        level=level,
    )


def _resamples(n: int, n_boot: int, seed: int) -> Iterator[npt.NDArray[np.int64]]:
    """The bootstrap's index blocks (each `(rows, n)`): drawn once per size and seed, since every
    cell of a table with the same number of runs and the same seed draws the very same indices."""
    if n * n_boot <= _BLOCK:
        yield _cached_resamples(n, n_boot, seed)
        return
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK // n)
    for start in range(0, n_boot, rows):
        yield rng.integers(0, n, size=(min(rows, n_boot - start), n))


@functools.lru_cache(maxsize=32)
def _cached_resamples(n: int, n_boot: int, seed: int) -> npt.NDArray[np.int64]:
    picks = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    picks.flags.writeable = False
    return picks


# -- canonical-strategy persistence -------------------------------------------------------------


@dataclass(frozen=True)
class Persistence:
    """How much of the default game's conditional policy survives in the variant (1 = all)."""

    score: float | None
    contexts: int
    default_games: int
    variant_games: int


def contexts(n_actions: int) -> tuple[str, ...]:
    """The context names in their fixed order: start, after:0, ..., after:k-1."""
    _check_n_actions(n_actions)
    return (START, *(f"after:{j}" for j in range(n_actions)))


def _check_n_actions(n_actions: int) -> None:
    if isinstance(n_actions, bool) or not isinstance(n_actions, Integral) or n_actions < 1:
        raise StratagemError(f"n_actions must be a positive integer, got {n_actions!r}")


def _check_mapping(mapping: Sequence[int] | None, n_actions: int) -> list[int]:
    if mapping is None:
        return list(range(n_actions))
    m = list(mapping)
    if any(isinstance(i, bool) or not isinstance(i, Integral) for i in m) or sorted(
        int(i) for i in m
    ) != list(range(n_actions)):
        raise StratagemError(
            f"mapping {m!r} must be a permutation of 0..{n_actions - 1} "
            "(variant action index -> default action index)"
        )
    return [int(i) for i in m]


def _index(x: object, n_actions: int, where: str) -> int | None:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, Integral) or not 0 <= int(x) < n_actions:
        raise StratagemError(f"{where}: action {x!r} is not None or an index in 0..{n_actions - 1}")
    return int(x)


def _counts(games: Sequence[Moves], n_actions: int, side: str, mapping: list[int]) -> FloatArray:
    """Per game, the own-move counts by context: shape (games, n_actions + 1, n_actions)."""
    # Counted in a flat Python list per game (numpy item updates cost more than the loop).
    flat = [0.0] * (len(games) * (n_actions + 1) * n_actions)
    size = (n_actions + 1) * n_actions
    for g, game in enumerate(games):
        base = g * size
        prev_opp: int | None = None
        for r, rnd in enumerate(game):
            if isinstance(rnd, str | bytes) or not isinstance(rnd, Sequence) or len(rnd) != 2:
                where = _where(side, g, r)
                raise StratagemError(f"{where}: expected an (own, opponent) pair, got {rnd!r}")
            own, opp = rnd
            # The common case (None or a plain int in range) skips building the error context.
            if not (own is None or (type(own) is int and 0 <= own < n_actions)):
                own = _index(own, n_actions, f"{_where(side, g, r)}, own move")
            if not (opp is None or (type(opp) is int and 0 <= opp < n_actions)):
                opp = _index(opp, n_actions, f"{_where(side, g, r)}, opponent move")
            own = None if own is None else mapping[own]
            opp = None if opp is None else mapping[opp]
            if own is not None:
                if r == 0:
                    flat[base + own] += 1
                elif prev_opp is not None:
                    flat[base + (1 + prev_opp) * n_actions + own] += 1
            prev_opp = opp
    return np.array(flat, dtype=np.float64).reshape(len(games), n_actions + 1, n_actions)


def _where(side: str, g: int, r: int) -> str:
    return f"{side} game {g} (0-based), round {r + 1}".lstrip()


def behaviour_profile(games: Sequence[Moves], n_actions: int) -> dict[str, tuple[float, ...]]:
    """The agent's conditional policy pooled over games, the thing persistence compares.

    For each observed context ("start", "after:<j>") the key gives the distribution of its own
    valid moves (n_actions probabilities) and "n:<context>" gives (number of observations,).
    Contexts without observations have no keys, so a distribution is never empty.
    """
    _check_n_actions(n_actions)
    pooled = _counts(games, n_actions, "", list(range(n_actions))).sum(axis=0)
    out: dict[str, tuple[float, ...]] = {}
    for name, row in zip(contexts(n_actions), pooled, strict=True):
        total = float(row.sum())
        if total > 0:
            out[name] = tuple(float(x) / total for x in row)
            out[f"n:{name}"] = (total,)
    return out


def _scores(d: FloatArray, v: FloatArray) -> FloatArray:
    """Persistence of pooled counts shaped (..., contexts, actions); NaN where nothing is shared."""
    n_d, n_v = d.sum(axis=-1), v.sum(axis=-1)
    shared = (n_d > 0) & (n_v > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_d = d / n_d[..., None]
        p_v = v / n_v[..., None]
        tv = np.where(shared, 0.5 * np.abs(p_d - p_v).sum(axis=-1), 0.0)
        w = np.where(shared, n_d + n_v, 0.0)
        total = w.sum(axis=-1)
        score = 1 - (w * tv).sum(axis=-1) / total
    return np.where(total > 0, np.clip(score, 0.0, 1.0), np.nan)


def context_counts(
    games: Sequence[Moves], n_actions: int, mapping: Sequence[int] | None = None, side: str = ""
) -> FloatArray:
    """Per game, the own-move counts by context, shape (games, n_actions + 1, n_actions): what
    `persistence` and its interval compare. Computed once, they serve every comparison of the
    same games (a default game is compared with each of its variants)."""
    _check_n_actions(n_actions)
    return _counts(games, n_actions, side, _check_mapping(mapping, n_actions))


def persistence(
    default: Sequence[Moves],
    variant: Sequence[Moves],
    n_actions: int,
    mapping: Sequence[int] | None = None,
) -> Persistence:
    """1 - the observation-weighted TV distance between the two conditional policies (see above)."""
    _check_n_actions(n_actions)
    m = _check_mapping(mapping, n_actions)
    d = _counts(default, n_actions, "default", list(range(n_actions)))
    v = _counts(variant, n_actions, "variant", m)
    return persistence_of_counts(d, v)


def persistence_of_counts(d_games: FloatArray, v_games: FloatArray) -> Persistence:
    """`persistence` from `context_counts` of both sides."""
    d, v = d_games.sum(axis=0), v_games.sum(axis=0)
    shared = int(((d.sum(axis=-1) > 0) & (v.sum(axis=-1) > 0)).sum())
    score = float(_scores(d, v))
    return Persistence(
        score=None if math.isnan(score) else score,
        contexts=shared,
        default_games=len(d_games),
        variant_games=len(v_games),
    )


def persistence_interval(
    default: Sequence[Moves],
    variant: Sequence[Moves],
    n_actions: int,
    mapping: Sequence[int] | None = None,
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """Bootstrap percentile interval of the persistence score, resampling games on each side.

    Games, not rounds, are resampled because rounds within a game depend on each other. Default
    and variant games are drawn independently (they are different games); resamples that share
    no context are left out. (None, None) when either side has fewer than 2 games or no resample
    has a score. The score is a plug-in estimate biased towards 0 (sampling noise adds distance),
    so the interval need not contain it when the behaviour is nearly identical.
    """
    _check_n_actions(n_actions)
    _check_bootstrap(n_boot, level)
    m = _check_mapping(mapping, n_actions)
    d = _counts(default, n_actions, "default", list(range(n_actions)))
    v = _counts(variant, n_actions, "variant", m)
    return interval_of_counts(d, v, n_boot=n_boot, level=level, seed=seed)


def interval_of_counts(
    d: FloatArray, v: FloatArray, *, n_boot: int = 1000, level: float = 0.95, seed: int = 0
) -> tuple[float | None, float | None]:
    """`persistence_interval` from `context_counts` of both sides."""
    _check_bootstrap(n_boot, level)
    if len(d) < 2 or len(v) < 2:
        return None, None
    n_actions = d.shape[-1]
    rng = np.random.default_rng(seed)
    flat_d, flat_v = d.reshape(len(d), -1), v.reshape(len(v), -1)
    shape = (n_actions + 1, n_actions)
    rows = max(1, _BLOCK // max(len(d), len(v)))
    scores: list[FloatArray] = []
    for start in range(0, n_boot, rows):
        size = min(rows, n_boot - start)
        # Multinomial draw counts = how often each game is picked by resampling with replacement.
        w_d = rng.multinomial(len(d), np.full(len(d), 1 / len(d)), size=size).astype(np.float64)
        w_v = rng.multinomial(len(v), np.full(len(v), 1 / len(v)), size=size).astype(np.float64)
        scores.append(
            _scores((w_d @ flat_d).reshape(size, *shape), (w_v @ flat_v).reshape(size, *shape))
        )
    all_scores = np.concatenate(scores)
    valid = all_scores[~np.isnan(all_scores)]
    if valid.size == 0:
        return None, None
    return _percentiles(valid, level)
