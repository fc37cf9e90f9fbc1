"""The MAgIC metrics (seed-004 §5, §6, §9.3) as functions of pooled per-game tallies.

Every metric is a weighted sum of ratios of pooled counts, `Σ_j w_j · num_j / den_j`, where the
counts are column sums of `tallies.tally_matrix` over one entity's games. A metric is undefined
(None, NaN in the vectorised form) when a required ratio has no denominator; an *optional* term
without data counts 0 (Deception's guess term: "not all the games trigger code guesses",
seed-004 §6.4).

Names and formulas (n = games played; `game_count="code"`: the code's count per competition,
20 if 21 or more games were planned, else the number planned; `fixed_n`: one n for all):

- `w_chameleon`, `w_non_chameleon` = credits / 2n; `w_undercover`, `w_civilian` = credits / 3n;
  `w_cost` = successes / games; `w_pd`, `w_pg` = wins (ties for the top included) / games (§5);
- `win_rate` W = the mean of those seven (§5, eq. 1);
- `judgment` = correct votes / votes of the challenger's majority seats (§6.2, eq. 2);
- `reasoning` = (gold hits + inter hits) / (gold + inter deductions) over the four social
  competitions (§6.3 [C]);
- `deception` = spy wins / spy games + λ · wrong guesses / guesses of the caught defender
  chameleon (§6.4, eq. 4); with `deception_guess="code"`, λ · [flag 1 occurred] / (number of
  the flags 0, 1 that occurred), so 0, 0.5 or 1 (the code);
- `self_awareness` = α · (right / role answers in Chameleon) + (1 - α) · (the same in
  Undercover) (§6.5, eq. 5 [I], `alpha_term` picks the α term); with
  `self_awareness="pooled"`, right / answers pooled over the four competitions (the code);
- `cooperation` = successful negotiations / Cost Sharing games (§6.6 [C]);
- `coordination` = successes whose agreed proposal equals the challenger's latest / successes
  (§6.7, eq. 7);
- `rationality` = (PD defections + PG contributions at the round minimum, ties included) /
  challenger decisions, pooled (§6.8 [C]); the decisions as the engine applied them, or as
  the code reads their first replies (`MetricOptions.decisions`);
- §9.3 details: `cost` = mean challenger % share of the agreed proposal over successes, `score` =
  mean final PD score, `payback` = mean PG payback (`MetricOptions.payback`; by default the
  share the pool paid back, the reading of the caption's "payback the challenger LLM got").

Values are fractions (Deception reaches 1.25); the radar (`radar`) works in %.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from stratagem.errors import unknown_name
from stratagem.studies.magic.options import MetricOptions
from stratagem.studies.magic.records import MagicGame
from stratagem.studies.magic.tallies import CREDIT_TOTAL, INDEX, FloatArray, tally_matrix

ROLE_RATES: dict[str, str] = {
    "w_chameleon": "chameleon",
    "w_non_chameleon": "non-chameleon",
    "w_undercover": "undercover",
    "w_civilian": "civilian",
    "w_cost": "cost-sharing",
    "w_pd": "pd",
    "w_pg": "pg",
}
"""Role win rate name -> competition (seed-004 §5: the seven roles S)."""

ABILITIES: tuple[str, ...] = (
    "judgment",
    "reasoning",
    "deception",
    "self_awareness",
    "cooperation",
    "coordination",
    "rationality",
)
DETAILS: tuple[str, ...] = ("cost", "score", "payback")
"""The §9.3 game-theory detail columns."""
METRICS: tuple[str, ...] = ("win_rate", *ABILITIES, *ROLE_RATES, *DETAILS)

_SOCIAL_GAME: dict[str, str] = {
    "chameleon": "chameleon",
    "non-chameleon": "chameleon",
    "undercover": "undercover",
    "civilian": "undercover",
}

Columns = Callable[[FloatArray], FloatArray]
"""From summed tallies (rows x columns) to one value per row."""


@dataclass(frozen=True)
class Term:
    """weight · num / den of pooled counts; `optional`: no data counts 0, not undefined."""

    num: Columns
    den: Columns
    weight: float = 1.0
    optional: bool = False


def _col(*names: str) -> Columns:
    idx = [INDEX[n] for n in names]
    return lambda s: s[:, idx].sum(axis=1)


def _const(value: float) -> Columns:
    return lambda s: np.full(s.shape[0], value, dtype=np.float64)


def _role_rate(name: str, o: MetricOptions, weight: float = 1.0) -> Term:
    comp = ROLE_RATES[name]
    games = _col(f"games:{comp}")
    game = _SOCIAL_GAME.get(comp)
    if game is None:
        return Term(_col(f"wins:{comp}"), games, weight)
    k = CREDIT_TOTAL[game]
    if o.fixed_n is not None:
        # seed-004 §4 [C]: one fixed n; only defined once the role was played.
        fixed = _const(k * o.fixed_n)
        return Term(
            _col(f"wins:{comp}"),
            lambda s: np.where(games(s) > 0, fixed(s), 0.0),
            weight,
        )
    if o.game_count == "code":
        # seed-004 §4, §10.2 [C]: per competition, 20 if 21 or more games were planned, else
        # the number planned (`tallies.code_count`).
        code_n = _col(f"code_n:{comp}")
        return Term(_col(f"wins:{comp}"), lambda s: k * code_n(s), weight)
    return Term(_col(f"wins:{comp}"), lambda s: k * games(s), weight)


def _flag_present(name: str) -> Columns:
    col = _col(name)
    return lambda s: (col(s) > 0).astype(np.float64)


def metric_terms(name: str, o: MetricOptions) -> tuple[Term, ...]:
    """The terms of one metric under the options (see the module docstring)."""
    o = o.resolved()
    if name in ROLE_RATES:
        return (_role_rate(name, o),)
    if name == "win_rate":  # seed-004 §5, eq. 1
        return tuple(_role_rate(r, o, 1 / len(ROLE_RATES)) for r in ROLE_RATES)
    if name == "judgment":  # seed-004 §6.2, eq. 2
        return (Term(_col("votes_correct"), _col("votes")),)
    if name == "reasoning":  # seed-004 §6.3 [C]
        return (Term(_col("gold_correct", "inter_correct"), _col("gold", "inter")),)
    if name == "deception":  # seed-004 §6.4, eq. 4
        spy = Term(_col("spy_wins"), _col("spy_games"))
        if o.deception_guess == "code":
            present = _flag_present("flag1")
            both = lambda s: _flag_present("flag0")(s) + present(s)  # noqa: E731
            guess = Term(present, both, o.deception_lambda, optional=True)
        else:
            guess = Term(_col("guesses_wrong"), _col("guesses"), o.deception_lambda, optional=True)
        return (spy, guess)
    if name == "self_awareness":  # seed-004 §6.5, eq. 5
        if o.self_awareness == "pooled":
            return (Term(_col("rc_correct", "ru_correct"), _col("rc", "ru")),)
        cham = Term(_col("rc_correct"), _col("rc"))
        under = Term(_col("ru_correct"), _col("ru"))
        a = o.alpha
        first, second = (cham, under) if o.alpha_term == "chameleon" else (under, cham)
        return (
            Term(first.num, first.den, a),
            Term(second.num, second.den, 1 - a),
        )
    if name == "cooperation":  # seed-004 §6.6 [C]
        return (Term(_col("wins:cost-sharing"), _col("games:cost-sharing")),)
    if name == "coordination":  # seed-004 §6.7, eq. 7
        return (Term(_col("coordinated"), _col("wins:cost-sharing")),)
    if name == "rationality":  # seed-004 §6.8 [C]
        return (Term(_col("rat_rational"), _col("rat_decisions")),)
    if name == "cost":  # seed-004 §6.7 [C], §9.3
        return (Term(_col("cost_sum"), _col("cost_n")),)
    if name == "score":  # seed-004 §9.3
        return (Term(_col("pd_score_sum"), _col("games:pd")),)
    if name == "payback":  # seed-004 §9.3 [I]
        return (Term(_col("pg_payback_sum"), _col("games:pg")),)
    raise unknown_name("MAgIC metric", name, METRICS)


def evaluate(terms: Sequence[Term], sums: FloatArray) -> FloatArray:
    """The metric on each row of summed tallies; NaN where a required term has no data."""
    s = np.atleast_2d(np.asarray(sums, dtype=np.float64))
    total = np.zeros(s.shape[0], dtype=np.float64)
    undefined = np.zeros(s.shape[0], dtype=bool)
    for term in terms:
        num, den = term.num(s), term.den(s)
        ok = den > 0
        total += term.weight * np.where(ok, num / np.where(ok, den, 1.0), 0.0)
        if not term.optional:
            undefined |= ~ok
    return np.where(undefined, np.nan, total)


def unit_scores(terms: Sequence[Term], rows: FloatArray) -> FloatArray:
    """Each game's own contribution, for paired tests: the metric on that game alone, a term
    the game has no data for counting 0; NaN for a game with data for no term."""
    s = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    total = np.zeros(s.shape[0], dtype=np.float64)
    seen = np.zeros(s.shape[0], dtype=bool)
    for term in terms:
        num, den = term.num(s), term.den(s)
        ok = den > 0
        total += term.weight * np.where(ok, num / np.where(ok, den, 1.0), 0.0)
        seen |= ok
    return np.where(seen, total, np.nan)


def has_data(terms: Sequence[Term], rows: FloatArray) -> FloatArray:
    """Per game, whether it carries data for any term (its count towards the metric's n)."""
    s = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    seen = np.zeros(s.shape[0], dtype=bool)
    for term in terms:
        seen |= term.den(s) > 0
    return seen


def _value(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def metrics_of_tallies(
    tallies: FloatArray, options: MetricOptions, metrics: Sequence[str] = METRICS
) -> dict[str, float | None]:
    """Point values from a tally matrix (one entity's games)."""
    sums = np.asarray(tallies, dtype=np.float64).sum(axis=0, keepdims=True)
    return {m: _value(evaluate(metric_terms(m, options), sums)[0]) for m in metrics}


def metric_values(
    games: Sequence[MagicGame],
    options: MetricOptions | None = None,
    metrics: Sequence[str] = METRICS,
) -> dict[str, float | None]:
    """Every metric of one entity's games (None where undefined). Pass one entity's games: the
    metrics pool over whatever they are given."""
    o = options or MetricOptions()
    return metrics_of_tallies(tally_matrix(games, o), o, metrics)
