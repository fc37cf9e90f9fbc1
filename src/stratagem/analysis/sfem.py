"""Strategy Frequency Estimation Method (SFEM): which rule-based strategy does an agent play?

Dal Bó & Fréchette (2011) and Romero & Rosokha (2018), as seed-001 §10.2 uses it. Each candidate
strategy k is replayed on the real history of every game: at round t it sees both players' actual
moves of rounds 0..t-1 and prescribes an action. C_k counts the rounds where the agent's move equals
that prescription, E_k the rounds where it does not. The agent is modelled as following one strategy
per game, chosen with probability φ_k, and executing each prescription correctly with probability
β (else it trembles). The estimate maximises

    L(φ, β) = Π_games Σ_k φ_k β^{C_k} (1 − β)^{E_k},   φ on the simplex, β ∈ [0.5, 1],

by expectation-maximisation (closed-form M-steps; the β step is the clipped weighted match rate,
which is exact because the expected log-likelihood is concave in β).

The "Match Percentage" of seed-001 Tables 3.5 and 3.8 is, as §10.2 [CHECKED] found, the pooled
share of rounds, over all the games estimated together, in which the agent matched the *assigned*
(top) strategy: Σ_games C_top / Σ_games rounds. For Always Defect that is Σ defections / Σ rounds.

Choices the thesis leaves open (seed-001 §17 AMBIG-10), each an explicit, documented default here:

- **The 20 strategies** (`CLASSIC_STRATEGIES`, table below). The thesis names only AD and "Grim
  Trigger 2"; the set follows Fudenberg, Rand & Dreber (2012) and Dal Bó & Fréchette (2019).
  Triggers look at the *opponent's* defections (the thesis' own definitions of GT and GT2, §2),
  where FRD's versions trigger on either player's defection.
- **Pooled estimation**: one (φ, β) for all the games passed in. The thesis estimated per
  architecture × model over the 18 Dilemma games (§10.2); the caller selects those games.
  Per-game assignments are available as posteriors (`SfemResult.posterior`).
- **Optimiser**: EM from uniform φ, started from each β in `beta_starts`; the best likelihood wins.
- **Ties**: strategies that make identical predictions in every game cannot be told apart (e.g.
  GRIM2 and TF2T against an always-defecting opponent); EM splits their weight equally. The
  assigned strategy is the equivalence class with the largest total φ, named by its first member
  in table order; `SfemResult.equivalent` lists the whole class.

The candidate table. Notation: o = the opponent's actual moves, m = the agent's actual moves, round
t counts from 0, and every rule below applies from round 1 on ("first" is round 0's move).

======  =========================  =====  =======================================================
Key     Name                       First  Then, at round t
======  =========================  =====  =======================================================
AC      Always Cooperate           C      C
AD      Always Defect              D      D
TFT     Tit for Tat                C      o[t-1]
STFT    Suspicious Tit for Tat     D      o[t-1]
GRIM    Grim Trigger               C      D iff the opponent has defected at least once so far
GRIM2   Grim Trigger 2             C      D iff the opponent has defected at least twice in total
GRIM3   Grim Trigger 3             C      D iff the opponent has defected at least 3 times in total
WSLS    Win-Stay Lose-Shift        C      C after (C, C) or (D, D) in round t-1, else D
TF2T    Tit for Two Tats           C      D iff o[t-1] = o[t-2] = D
TF3T    Tit for Three Tats         C      D iff o[t-1] = o[t-2] = o[t-3] = D
2TFT    Two Tits for Tat           C      D iff o[t-1] = D or o[t-2] = D
2TF2T   Two Tits for Two Tats      C      D iff o[t-1] = o[t-2] = D or o[t-2] = o[t-3] = D
T2      Trigger, punish twice      C      after an opponent D, play D in the next two rounds
                                          whatever happens in them, then C again and re-arm
DTF2T   Suspicious Tit for 2 Tats  D      as TF2T
CALLD   C then Always Defect       C      D
DALLC   D then Always Cooperate    D      C
ALT     Alternator (C first)       C      the opposite of m[t-1]
DALT    Alternator (D first)       D      the opposite of m[t-1]
MAJ     Soft Majority              C      C iff o so far has at least as many C as D
ATFT    Anti Tit for Tat           C      the opposite of o[t-1]
======  =========================  =====  =======================================================

AC, AD, TFT, STFT, GRIM, GRIM2, WSLS, TF2T and ALT are stratagem's own strategies
(`stratagem.strategies`), replayed through their `act`; the other eleven are small history rules
local to this module.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from stratagem.errors import StratagemError
from stratagem.games.catalog import get_stage
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies import COOPERATE, DEFECT, get_strategy

Rule = Callable[[Sequence[int], Sequence[int]], int]
"""A history rule: (agent's past moves, opponent's past moves) -> the next action index."""

GameMoves = tuple[Sequence[int], Sequence[int]]
"""One game: (agent moves, opponent moves), action indices, 0 = cooperate, 1 = defect."""

_C, _D = COOPERATE, DEFECT


def _replay_rule(rule: Rule) -> Callable[[Sequence[int], Sequence[int]], list[int]]:
    def prescribe(own: Sequence[int], opponent: Sequence[int]) -> list[int]:
        return [rule(own[:t], opponent[:t]) for t in range(len(own))]

    return prescribe


def _replay_strategy(
    spec: str, stage: NormalFormGame
) -> Callable[[Sequence[int], Sequence[int]], list[int]]:
    def prescribe(own: Sequence[int], opponent: Sequence[int]) -> list[int]:
        # A fresh instance per game, stepped round by round, so stateful strategies see the
        # history grow exactly as in a real match.
        strategy = get_strategy(spec)
        strategy.reset(stage, 0)
        rng = random.Random(0)  # deterministic strategies never draw from it
        return [strategy.act(own[:t], opponent[:t], rng) for t in range(len(own))]

    return prescribe


@dataclass(frozen=True)
class Candidate:
    """One strategy of the SFEM candidate set, able to replay itself on a real history."""

    key: str
    """Short name used in results (e.g. `GRIM2`)."""
    name: str
    """Display name (e.g. `Grim Trigger 2`)."""
    prescribe: Callable[[Sequence[int], Sequence[int]], list[int]] = field(repr=False)
    """(agent moves, opponent moves) of a whole game -> the strategy's move for every round."""

    @classmethod
    def from_rule(cls, key: str, name: str, rule: Rule) -> Candidate:
        """A candidate from a stateless history rule."""
        return cls(key, name, _replay_rule(rule))

    @classmethod
    def from_strategy(
        cls,
        spec: str,
        key: str | None = None,
        name: str | None = None,
        stage: NormalFormGame | None = None,
    ) -> Candidate:
        """A candidate from any deterministic registry strategy (`get_strategy` spec).

        `stage` only matters for strategies that read payoffs; it defaults to seed-001's Dilemma.
        """
        probe = get_strategy(spec)
        if not probe.deterministic:
            raise StratagemError(
                f"SFEM needs deterministic strategies; '{probe.label}' is stochastic"
            )
        board = stage if stage is not None else get_stage("dilemma")
        probe.reset(board, 0)  # fails early, with a clear message, on a non-2-action strategy
        return cls(key or probe.label, name or probe.label, _replay_strategy(spec, board))


# -- the local rules (the table in the module docstring) ------------------------------------------


def _grim(threshold: int) -> Rule:
    def rule(own: Sequence[int], opp: Sequence[int]) -> int:
        return _D if sum(opp) >= threshold else _C

    return rule


def _tit_for_n_tats(n: int, first: int = _C) -> Rule:
    def rule(own: Sequence[int], opp: Sequence[int]) -> int:
        if not opp:
            return first
        return _D if len(opp) >= n and all(opp[-n:]) else _C

    return rule


def _two_tits_for_tat(own: Sequence[int], opp: Sequence[int]) -> int:
    return _D if any(opp[-2:]) else _C


def _two_tits_for_two_tats(own: Sequence[int], opp: Sequence[int]) -> int:
    return _D if any(a and b for a, b in itertools.pairwise(opp[-3:])) else _C


def _trigger_two(own: Sequence[int], opp: Sequence[int]) -> int:
    punish = 0
    for move in opp:
        if punish:
            punish -= 1  # a punishment round: what the opponent did in it is ignored
        elif move == _D:
            punish = 2
    return _D if punish else _C


def _constant_after(first: int, then: int) -> Rule:
    def rule(own: Sequence[int], opp: Sequence[int]) -> int:
        return then if opp else first

    return rule


def _alternator_d_first(own: Sequence[int], opp: Sequence[int]) -> int:
    return 1 - own[-1] if own else _D


def _soft_majority(own: Sequence[int], opp: Sequence[int]) -> int:
    defections = sum(opp)
    return _C if len(opp) - defections >= defections else _D


def _anti_tit_for_tat(own: Sequence[int], opp: Sequence[int]) -> int:
    return 1 - opp[-1] if opp else _C


def _classic() -> tuple[Candidate, ...]:
    own = Candidate.from_strategy
    rule = Candidate.from_rule
    return (
        own("AlwaysCooperate", "AC", "Always Cooperate"),
        own("AlwaysDefect", "AD", "Always Defect"),
        own("TitForTat", "TFT", "Tit for Tat"),
        own("SuspiciousTitForTat", "STFT", "Suspicious Tit for Tat"),
        own("GrimTrigger", "GRIM", "Grim Trigger"),
        own("GrimTrigger2", "GRIM2", "Grim Trigger 2"),
        rule("GRIM3", "Grim Trigger 3", _grim(3)),
        own("WinStayLoseShift", "WSLS", "Win-Stay Lose-Shift"),
        own("TitForTwoTats", "TF2T", "Tit for Two Tats"),
        rule("TF3T", "Tit for Three Tats", _tit_for_n_tats(3)),
        rule("2TFT", "Two Tits for Tat", _two_tits_for_tat),
        rule("2TF2T", "Two Tits for Two Tats", _two_tits_for_two_tats),
        rule("T2", "Trigger, punish twice", _trigger_two),
        rule("DTF2T", "Suspicious Tit for Two Tats", _tit_for_n_tats(2, first=_D)),
        rule("CALLD", "C then Always Defect", _constant_after(_C, _D)),
        rule("DALLC", "D then Always Cooperate", _constant_after(_D, _C)),
        own("Alternator", "ALT", "Alternator (C first)"),
        rule("DALT", "Alternator (D first)", _alternator_d_first),
        rule("MAJ", "Soft Majority", _soft_majority),
        rule("ATFT", "Anti Tit for Tat", _anti_tit_for_tat),
    )


CLASSIC_STRATEGIES: tuple[Candidate, ...] = _classic()
"""The 20 default candidates, in table order (which also breaks ties)."""


def classic_strategy(key: str) -> Candidate:
    """One of the 20 default candidates by key (case-insensitive)."""
    for candidate in CLASSIC_STRATEGIES:
        if candidate.key.lower() == key.lower():
            return candidate
    valid = ", ".join(c.key for c in CLASSIC_STRATEGIES)
    raise StratagemError(f"unknown SFEM strategy '{key}': valid: {valid}")


# -- estimation ------------------------------------------------------------------------------------


def _clean_games(games: Sequence[GameMoves]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    if not games:
        raise StratagemError("SFEM needs at least one game")
    clean = []
    for g, game in enumerate(games):
        if len(game) != 2:
            raise StratagemError(f"SFEM game {g}: expected (agent moves, opponent moves)")
        agent, opponent = game
        if len(agent) != len(opponent):
            raise StratagemError(
                f"SFEM game {g}: {len(agent)} agent moves but {len(opponent)} opponent moves"
            )
        if not agent:
            raise StratagemError(f"SFEM game {g}: no rounds")
        for who, moves in (("agent", agent), ("opponent", opponent)):
            bad = [m for m in moves if m not in (0, 1) or isinstance(m, bool)]
            if bad:
                raise StratagemError(
                    f"SFEM game {g}: {who} moves must be action indices 0 (cooperate) or "
                    f"1 (defect), got {bad[0]!r}"
                )
        clean.append((tuple(int(m) for m in agent), tuple(int(m) for m in opponent)))
    return clean


def match_counts(
    games: Sequence[GameMoves], candidates: Sequence[Candidate] = CLASSIC_STRATEGIES
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """C_k per game and candidate (shape games × candidates), and the rounds of each game."""
    if not candidates:
        raise StratagemError("SFEM needs at least one candidate strategy")
    clean = _clean_games(games)
    counts = np.zeros((len(clean), len(candidates)), dtype=np.int64)
    for g, (agent, opponent) in enumerate(clean):
        for k, candidate in enumerate(candidates):
            predicted = candidate.prescribe(agent, opponent)
            counts[g, k] = sum(p == a for p, a in zip(predicted, agent, strict=True))
    rounds = np.array([len(agent) for agent, _ in clean], dtype=np.int64)
    return counts, rounds


@dataclass(frozen=True)
class SfemResult:
    """The estimate for one set of games (one "personality" in the thesis' words)."""

    keys: tuple[str, ...]
    names: tuple[str, ...]
    phi: tuple[float, ...]
    """Estimated frequency of each candidate, in candidate order; sums to 1."""
    beta: float
    """Probability that the agent executes its strategy's prescription (no tremble)."""
    log_likelihood: float
    matches: tuple[tuple[int, ...], ...]
    """C_k for each game (rows) and candidate (columns)."""
    rounds: tuple[int, ...]
    top: str
    """Key of the assigned strategy (see the module docstring for ties)."""
    equivalent: tuple[str, ...]
    """Keys that match exactly as `top` does in every game, `top` first."""
    iterations: int
    converged: bool

    @property
    def top_name(self) -> str:
        return self.names[self.keys.index(self.top)]

    @property
    def match_percentage(self) -> float:
        """seed-001 Tables 3.5/3.8: the pooled share of rounds matching the assigned strategy."""
        return self.match_rate(self.top)

    def match_rate(self, key: str) -> float:
        """Pooled share of rounds, over all games, in which the agent matched strategy `key`."""
        if key not in self.keys:
            raise StratagemError(f"strategy '{key}' is not a candidate: {', '.join(self.keys)}")
        k = self.keys.index(key)
        return sum(row[k] for row in self.matches) / sum(self.rounds)

    def frequencies(self) -> dict[str, float]:
        """φ by key, in candidate order."""
        return dict(zip(self.keys, self.phi, strict=True))

    def ranking(self) -> list[tuple[str, float]]:
        """(key, φ) from most to least frequent; ties keep candidate order."""
        return sorted(self.frequencies().items(), key=lambda item: -item[1])

    def posterior(self) -> list[dict[str, float]]:
        """Per game, the probability that each candidate generated it (per-game assignment)."""
        log_lik = _log_lik(np.array(self.matches), np.array(self.rounds), self.beta)
        with np.errstate(divide="ignore"):
            log_joint = np.log(np.array(self.phi))[None, :] + log_lik
        post = np.exp(log_joint - _logsumexp_rows(log_joint)[:, None])
        return [dict(zip(self.keys, (float(p) for p in row), strict=True)) for row in post]


def _log_lik(
    counts: NDArray[np.int64], rounds: NDArray[np.int64], beta: float
) -> NDArray[np.float64]:
    """log(β^C (1-β)^E) per game and candidate, with 0·log 0 = 0 so β = 1 is allowed."""
    errors = rounds[:, None] - counts
    log_b = math.log(beta)
    log_1b = math.log1p(-beta) if beta < 1.0 else -math.inf
    with np.errstate(invalid="ignore"):
        miss = np.where(errors > 0, errors * log_1b, 0.0)
    return np.asarray(counts * log_b + miss, dtype=np.float64)


def _logsumexp_rows(values: NDArray[np.float64]) -> NDArray[np.float64]:
    top = np.max(values, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        total = np.log(np.sum(np.exp(values - safe[:, None]), axis=1))
    return np.asarray(total + safe, dtype=np.float64)


def _em(
    counts: NDArray[np.int64], rounds: NDArray[np.int64], beta: float, tol: float, max_iter: int
) -> tuple[NDArray[np.float64], float, float, int, bool]:
    n_games, n_strategies = counts.shape
    phi = np.full(n_strategies, 1.0 / n_strategies)
    previous = -math.inf
    for iteration in range(1, max_iter + 1):
        with np.errstate(divide="ignore"):
            log_joint = np.log(phi)[None, :] + _log_lik(counts, rounds, beta)
        per_game = _logsumexp_rows(log_joint)
        ll = float(np.sum(per_game))
        resp = np.exp(log_joint - per_game[:, None])
        phi = resp.sum(axis=0) / n_games
        weighted_rounds = float(np.sum(resp * rounds[:, None]))
        beta = min(1.0, max(0.5, float(np.sum(resp * counts)) / weighted_rounds))
        if abs(ll - previous) <= tol * (1.0 + abs(ll)):
            return phi, beta, ll, iteration, True
        previous = ll
    with np.errstate(divide="ignore"):
        final = np.log(phi)[None, :] + _log_lik(counts, rounds, beta)
    return phi, beta, float(np.sum(_logsumexp_rows(final))), max_iter, False


def estimate(
    games: Sequence[GameMoves],
    candidates: Sequence[Candidate] = CLASSIC_STRATEGIES,
    *,
    beta_starts: Sequence[float] = (0.6, 0.8, 0.95),
    tol: float = 1e-12,
    max_iter: int = 20_000,
) -> SfemResult:
    """Fit φ and β by maximum likelihood over `games`, pooled (see the module docstring)."""
    keys = tuple(c.key for c in candidates)
    if len(set(keys)) != len(keys):
        raise StratagemError(f"SFEM candidate keys must be unique: {', '.join(keys)}")
    if not beta_starts or any(not 0.5 <= b <= 1.0 for b in beta_starts):
        raise StratagemError("SFEM beta_starts must be values in [0.5, 1]")
    counts, rounds = match_counts(games, candidates)
    fits = [_em(counts, rounds, float(start), tol, max_iter) for start in beta_starts]
    # The first start wins unless a later one is clearly better: deterministic under float noise.
    best = fits[0]
    for fit in fits[1:]:
        if fit[2] > best[2] + 1e-9 * (1.0 + abs(best[2])):
            best = fit
    phi, beta, ll, iterations, converged = best
    # Candidates with identical match counts in every game form one class; the class with the
    # largest total weight wins, named by its first member in candidate order.
    classes: dict[tuple[int, ...], list[int]] = {}
    for k in range(len(candidates)):
        classes.setdefault(tuple(int(c) for c in counts[:, k]), []).append(k)
    # Rounding keeps float noise from deciding ties, which go to the earlier class.
    members = max(classes.values(), key=lambda ks: (round(float(phi[ks].sum()), 9), -ks[0]))
    return SfemResult(
        keys=keys,
        names=tuple(c.name for c in candidates),
        phi=tuple(float(p) for p in phi),
        beta=beta,
        log_likelihood=ll,
        matches=tuple(tuple(int(c) for c in row) for row in counts),
        rounds=tuple(int(r) for r in rounds),
        top=keys[members[0]],
        equivalent=tuple(keys[k] for k in members),
        iterations=iterations,
        converged=converged,
    )
