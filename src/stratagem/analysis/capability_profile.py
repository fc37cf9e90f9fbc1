"""A model's capability profile across games, and how unevenly its advantage varies between
similar games beyond what sampling noise alone would give.

One rating over many games hides a model that wins the Prisoner's Dilemma and loses its
relabelled twin: the profile keeps one advantage per game, and the unevenness says whether the
spread between games is larger than the noise of each game's estimate.

**Advantage** of an entity in one episode (`episode_advantages`), one value per entity with a
seat in it and a seat of another entity:

- `measure="wins"`: the share of comparisons of its seats with other entities' seats that it won
  (the higher score wins, ties ½), minus ½; in [-½, ½] whatever the game's score unit, so games
  with different scores can be compared;
- `measure="score"`: the mean score of its seats minus the mean score of the other entities'
  seats (in the game's units).

**Per game** (`capability_profile`), over the entity's n episodes of the game (episodes are the
independent units): the mean advantage θ̂, its standard error s/√n (s the sample standard
deviation) and the Student-t interval θ̂ ± t_{n-1, (1+level)/2} · s/√n. Without two episodes
there is no standard error.

**Unevenness across a family of similar games**: the between-game variance τ² of the entity's
true advantage, by the method of moments of DerSimonian and Laird ("Meta-analysis in clinical
trials", Controlled Clinical Trials 7:177-188, 1986). With k games, estimates θ_i and their
sampling variances v_i = SE_i²:

    w_i  = 1 / v_i,     θ_FE = Σ w_i θ_i / Σ w_i
    Q    = Σ w_i (θ_i - θ_FE)²                       (Cochran's Q, k - 1 degrees of freedom)
    τ²   = max(0, (Q - (k - 1)) / (Σ w_i - Σ w_i² / Σ w_i))
    I²   = max(0, (Q - (k - 1)) / Q)                 (Higgins and Thompson, Stat Med 2002)
    w*_i = 1 / (v_i + τ²),  θ_RE = Σ w*_i θ_i / Σ w*_i,  SE(θ_RE) = 1 / √(Σ w*_i)

so τ = √τ² is the standard deviation of the advantage between games with the noise taken out
(0 when the games differ no more than their noise explains), I² the share of the observed spread
that is real, and θ_RE the random-effects mean advantage. A game without a positive sampling
variance (fewer than two episodes, or every episode alike) cannot be weighted and is left out,
and named.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from stratagem.errors import StratagemError

DEFAULT_FAMILY = "all games"


@dataclass(frozen=True)
class Advantage:
    """One entity's advantage in one episode."""

    entity: str
    game: str
    value: float
    episode_id: str = ""


def episode_advantages(
    entities: Sequence[str],
    scores: Sequence[float],
    *,
    game: str,
    episode_id: str = "",
    measure: Literal["wins", "score"] = "wins",
) -> list[Advantage]:
    """Each entity's advantage in one episode (module docstring), entities sorted."""
    if len(entities) != len(scores):
        raise StratagemError(f"{len(entities)} seats' entities but {len(scores)} scores")
    if measure not in ("wins", "score"):
        raise StratagemError(f"measure must be 'wins' or 'score', got {measure!r}")
    vals = [float(x) for x in scores]
    out = []
    for e in sorted(set(entities)):
        mine = [v for x, v in zip(entities, vals, strict=True) if x == e]
        theirs = [v for x, v in zip(entities, vals, strict=True) if x != e]
        if not theirs:
            continue
        if measure == "score":
            value = sum(mine) / len(mine) - sum(theirs) / len(theirs)
        else:
            won = [1.0 if a > b else 0.5 if a == b else 0.0 for a in mine for b in theirs]
            value = sum(won) / len(won) - 0.5
        out.append(Advantage(e, game, value, episode_id))
    return out


@dataclass(frozen=True)
class GameAdvantage:
    entity: str
    game: str
    mean: float
    se: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    """Episodes."""
    episodes: tuple[str, ...]
    """The ids of the episodes behind the number (those given)."""


@dataclass(frozen=True)
class Heterogeneity:
    """DerSimonian-Laird random-effects summary of k estimates (module docstring)."""

    k: int
    q: float
    tau2: float
    i2: float
    mean_fe: float
    mean_re: float
    se_re: float

    @property
    def tau(self) -> float:
        return math.sqrt(self.tau2)


def dersimonian_laird(effects: Sequence[float], variances: Sequence[float]) -> Heterogeneity:
    """τ², Q, I² and the fixed- and random-effects means of k ≥ 2 estimates with positive
    sampling variances (module docstring's formulas)."""
    theta = np.asarray(effects, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    if theta.shape != v.shape or theta.ndim != 1:
        raise StratagemError(f"{theta.size} effects but {v.size} variances: expected one each")
    if theta.size < 2:
        raise StratagemError(f"between-game variance needs at least 2 estimates, got {theta.size}")
    if not (np.isfinite(theta).all() and np.isfinite(v).all() and (v > 0).all()):
        raise StratagemError("every estimate needs a finite effect and a positive variance")
    k = theta.size
    w = 1.0 / v
    mean_fe = float(w @ theta / w.sum())
    q = float(w @ (theta - mean_fe) ** 2)
    c = float(w.sum() - (w @ w) / w.sum())
    tau2 = max(0.0, (q - (k - 1)) / c)
    i2 = max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0
    w_re = 1.0 / (v + tau2)
    return Heterogeneity(
        k=k,
        q=q,
        tau2=tau2,
        i2=i2,
        mean_fe=mean_fe,
        mean_re=float(w_re @ theta / w_re.sum()),
        se_re=float(1.0 / math.sqrt(w_re.sum())),
    )


@dataclass(frozen=True)
class Unevenness:
    entity: str
    family: str
    games: tuple[str, ...]
    """The family's games the entity played with a usable standard error."""
    left_out: tuple[str, ...]
    """The family's games it played without one (module docstring)."""
    spread: float | None
    """Plain standard deviation of the per-game means (noise included), ≥ 2 games."""
    heterogeneity: Heterogeneity | None
    """None with fewer than 2 usable games."""


@dataclass(frozen=True)
class CapabilityProfile:
    advantages: tuple[GameAdvantage, ...]
    """By entity, then game."""
    unevenness: tuple[Unevenness, ...]
    """By entity, then family."""
    level: float
    measure: str

    def advantage(self, entity: str, game: str) -> GameAdvantage | None:
        return next((a for a in self.advantages if a.entity == entity and a.game == game), None)


def _game_advantage(
    entity: str, game: str, obs: Sequence[Advantage], level: float
) -> GameAdvantage:
    from scipy.stats import t as student_t  # deferred: importing scipy costs about half a second

    x = np.array([o.value for o in obs], dtype=np.float64)
    n = x.size
    mean = float(x.mean())
    se = low = high = None
    if n >= 2:
        se = float(x.std(ddof=1) / math.sqrt(n))
        half = float(student_t.ppf((1 + level) / 2, n - 1)) * se
        low, high = mean - half, mean + half
    episodes = tuple(sorted({o.episode_id for o in obs if o.episode_id}))
    return GameAdvantage(entity, game, mean, se, low, high, n, episodes)


def capability_profile(
    observations: Sequence[Advantage],
    families: Mapping[str, Sequence[str]] | None = None,
    *,
    level: float = 0.95,
    measure: str = "wins",
) -> CapabilityProfile:
    """Per entity and game the mean advantage with its interval; per entity and family of
    similar games (`families`: family name -> its games; default one family of every game)
    the DerSimonian-Laird unevenness (module docstring). `measure` only labels the result."""
    if not observations:
        raise StratagemError("no advantages to profile")
    if not 0 < level < 1:
        raise StratagemError(f"level must be strictly between 0 and 1, got {level!r}")
    for o in observations:
        if not math.isfinite(o.value):
            raise StratagemError(f"{o.entity} in {o.game} ({o.episode_id}): advantage {o.value}")
    groups: dict[tuple[str, str], list[Advantage]] = defaultdict(list)
    for o in observations:
        groups[(o.entity, o.game)].append(o)
    advantages = tuple(_game_advantage(e, g, groups[(e, g)], level) for e, g in sorted(groups))
    games = sorted({o.game for o in observations})
    fams = {DEFAULT_FAMILY: games} if families is None else dict(families)
    for name, members in fams.items():
        unknown = sorted(set(members) - set(games))
        if unknown:
            raise StratagemError(f"family {name!r} names games with no data: {', '.join(unknown)}")
    by_entity: dict[str, dict[str, GameAdvantage]] = defaultdict(dict)
    for a in advantages:
        by_entity[a.entity][a.game] = a
    uneven = []
    for entity in sorted(by_entity):
        mine = by_entity[entity]
        for name, members in fams.items():
            played = [mine[g] for g in members if g in mine]
            usable = [a for a in played if a.se is not None and a.se > 0]
            means = [a.mean for a in played]
            het = None
            if len(usable) >= 2:
                het = dersimonian_laird(
                    [a.mean for a in usable], [(a.se or 0.0) ** 2 for a in usable]
                )
            uneven.append(
                Unevenness(
                    entity=entity,
                    family=name,
                    games=tuple(a.game for a in usable),
                    left_out=tuple(a.game for a in played if a not in usable),
                    spread=float(np.std(means, ddof=1)) if len(means) >= 2 else None,
                    heterogeneity=het,
                )
            )
    return CapabilityProfile(advantages, tuple(uneven), level, measure)
