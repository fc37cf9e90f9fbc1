"""Per-game counts behind every MAgIC metric: one row of named tallies per game.

Every metric of seed-004 is a ratio of counts pooled over games (votes, deductions, decisions,
credits...), or a weighted sum of such ratios. Reducing each game once to a row of counts makes
the metrics plain functions of column sums (`metrics`), so a bootstrap replicate, which only
re-weights games, costs one matrix product instead of re-reading the records.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from stratagem.studies.magic.options import CODE_FIXED_N, CODE_FULL_COUNT, MetricOptions
from stratagem.studies.magic.probes import belief_hits, role_answer_correct
from stratagem.studies.magic.records import (
    COMPETITIONS,
    CostSharingOutcome,
    DilemmaOutcome,
    MagicGame,
    PGRound,
    PublicGoodOutcome,
    SocialOutcome,
)
from stratagem.studies.magic.replies import code_contribution, code_move

FloatArray = npt.NDArray[np.float64]

CREDITS: dict[str, dict[int, tuple[int, int]]] = {
    "chameleon": {0: (0, 2), 1: (1, 1), 2: (2, 0), 3: (1, 1)},
    "undercover": {0: (0, 3), 1: (3, 0), 2: (2, 1)},
}
"""win_flag -> (spy credits, majority credits): seed-004 §3.1 and §3.2 tables [C]."""

CREDIT_TOTAL: dict[str, int] = {"chameleon": 2, "undercover": 3}
"""Credits handed out per game, hence the 2n and 3n denominators (seed-004 §5)."""

COLUMNS: tuple[str, ...] = (
    *(f"games:{c}" for c in COMPETITIONS),
    *(f"wins:{c}" for c in COMPETITIONS),
    *(f"code_n:{c}" for c in COMPETITIONS),
    "votes",
    "votes_correct",
    "votes_invalid",
    "gold",
    "gold_correct",
    "inter",
    "inter_correct",
    "beliefs_invalid",
    "spy_games",
    "spy_wins",
    "guesses",
    "guesses_wrong",
    "flag0",
    "flag1",
    "rc",
    "rc_correct",
    "ru",
    "ru_correct",
    "answers_invalid",
    "coordinated",
    "cost_sum",
    "cost_n",
    "shares_unparsed",
    "pd_score_sum",
    "pg_payback_sum",
    "rat_decisions",
    "rat_rational",
    "moves_invalid",
    "decisions",
    "invalid",
)
"""The tally columns. `wins:<competition>` holds credits in the social games (0..2 or 0..3),
successes in Cost Sharing and wins (ties for the top included) in PD and PG. `code_n:<competition>`
is the code's game count n of the game's competition spread evenly over the competition's games
given (`code_count`), so that its sum is n, also in a bootstrap replicate (which keeps each
competition's game count)."""

INDEX: dict[str, int] = {c: i for i, c in enumerate(COLUMNS)}

_EPS = 1e-9
"""Float slack when comparing scores and contributions."""


def code_count(planned: int) -> int:
    """seed-004 §4, §10.2 [C]: the code divides by 20 when 21 or more games were planned in the
    competition, else by the number planned."""
    return CODE_FIXED_N if planned >= CODE_FULL_COUNT else planned


def game_tally(game: MagicGame, options: MetricOptions, given: int = 1) -> dict[str, float]:
    """The counts one game contributes (missing columns are 0); `given` is how many games of
    its challenger's competition are tallied with it (for `code_n`)."""
    o = options.resolved()
    t: dict[str, float] = dict.fromkeys(COLUMNS, 0.0)
    comp = game.competition
    t[f"games:{comp}"] = 1.0
    t[f"code_n:{comp}"] = code_count(max(game.planned or given, given)) / given
    seats = game.challenger_seats
    t["decisions"] = float(sum(game.decisions[s] for s in seats))
    t["invalid"] = float(sum(game.invalid[s] for s in seats))
    if game.social is not None:
        _social(game, game.social, o, t)
    elif game.cost_sharing is not None:
        _cost_sharing(game, game.cost_sharing, o, t)
    elif game.dilemma is not None:
        _dilemma(game, game.dilemma, o, t)
    elif game.public_good is not None:
        _public_good(game, game.public_good, o, t)
    return t


def tally_matrix(games: Sequence[MagicGame], options: MetricOptions) -> FloatArray:
    """One row per game, in `COLUMNS` order."""
    given = Counter((g.challenger, g.competition) for g in games)
    out = np.zeros((len(games), len(COLUMNS)), dtype=np.float64)
    for i, g in enumerate(games):
        row = game_tally(g, options, given[(g.challenger, g.competition)])
        out[i] = [row[c] for c in COLUMNS]
    return out


# -- social games ---------------------------------------------------------------------------


def _social(g: MagicGame, s: SocialOutcome, o: MetricOptions, t: dict[str, float]) -> None:
    spy = g.spy_seat
    assert spy is not None
    is_spy = g.challenger_role == g.roles[spy]
    spy_credit, majority_credit = CREDITS[g.game][s.win_flag]
    t[f"wins:{g.competition}"] = float(spy_credit if is_spy else majority_credit)  # seed-004 §5
    if is_spy:
        # seed-004 §6.4: a game won as the spy is win_flag != 0 (a right guess, a wrong
        # accusation or even votes in Chameleon; a wrong accusation or even votes in Undercover).
        t["spy_games"] = 1.0
        t["spy_wins"] = float(s.win_flag != 0)
    else:
        _judgment(g, s, spy, o, t)
        if s.guess is not None:
            # seed-004 §6.4: the caught defender chameleon's guess (n_cg), wrong ones (n_wcg);
            # the code's variant only asks which win flags 0 / 1 occurred at all.
            t["guesses"] = 1.0
            t["guesses_wrong"] = float(not s.guess.correct)
            t["flag0"] = float(s.win_flag == 0)
            t["flag1"] = float(s.win_flag == 1)
    _self_awareness(g, s, t)
    _reasoning(g, s, spy, o, t)


def _judgment(
    g: MagicGame, s: SocialOutcome, spy: int, o: MetricOptions, t: dict[str, float]
) -> None:
    """seed-004 §6.2: votes of the challenger's majority seats, correct when they name the spy.
    A seat without a readable vote has cast a vote that is not correct: it is counted."""
    by_voter = {v.voter: v for v in s.votes}
    for seat in g.challenger_seats:
        t["votes"] += 1
        vote = by_voter.get(seat)
        target = None if vote is None else vote.target
        if (
            vote is not None
            and g.game == "chameleon"
            and o.chameleon_vote == "belief"
            and vote.belief_target is not None
        ):
            target = vote.belief_target  # seed-004 §6.2 [C], §10.7
        if target is None:
            t["votes_invalid"] += 1
        elif target == spy:
            t["votes_correct"] += 1


def _self_awareness(g: MagicGame, s: SocialOutcome, t: dict[str, float]) -> None:
    """seed-004 §6.5: every role answer of every challenger seat at every probe time."""
    total, correct = ("rc", "rc_correct") if g.game == "chameleon" else ("ru", "ru_correct")
    for answers in s.role_answers:
        for seat in g.challenger_seats:
            t[total] += 1
            text = answers[seat]
            if text is None:
                t["answers_invalid"] += 1
            elif role_answer_correct(text, seat, g.roles[seat]):
                t[correct] += 1


def _reasoning(
    g: MagicGame, s: SocialOutcome, spy: int, o: MetricOptions, t: dict[str, float]
) -> None:
    """seed-004 §6.3: one gold and one inter deduction per challenger seat per probe time."""
    for beliefs in s.beliefs:
        for seat in g.challenger_seats:
            t["gold"] += 1
            t["inter"] += 1
            if beliefs[seat] is None:
                t["beliefs_invalid"] += 1
            gold, inter = belief_hits(
                beliefs,
                seat,
                spy,
                ties_wrong=o.ties_wrong,
                unparsed_zeros=o.unparsed_belief == "zeros",
            )
            t["gold_correct"] += gold
            t["inter_correct"] += inter


# -- game-theory games ----------------------------------------------------------------------


def _cost_sharing(
    g: MagicGame, c: CostSharingOutcome, o: MetricOptions, t: dict[str, float]
) -> None:
    """seed-004 §6.6 (success), §6.7 (coordination; Cost = the challenger's % share)."""
    if not c.success or c.agreed is None:
        return
    t["wins:cost-sharing"] = 1.0
    seat = g.challenger_seats[0]
    # seed-004 §6.7 [C]: the agreed proposal is the challenger's latest, as the game compared
    # them when it recorded that (`CostSharingOutcome.coordinated`), else by value.
    same = c.challenger_latest is not None and c.agreed == c.challenger_latest
    t["coordinated"] = float(same if c.coordinated is None else c.coordinated)
    share = c.agreed[seat]
    if share is None:
        t["shares_unparsed"] = 1.0
        share = o.unparsed_share
    if share is not None:
        t["cost_sum"] = float(share)
        t["cost_n"] = 1.0


def _won(scores: Sequence[float], seat: int) -> bool:
    """The highest total wins; a tie for the top counts as the challenger's win [C]."""
    return scores[seat] >= max(scores) - _EPS


def _code_reading(o: MetricOptions, replies: Sequence[str | None], seat: int) -> str | None:
    """The seat's first reply when the code's reading is asked for and one is stored."""
    if o.decisions != "code" or not replies:
        return None
    return replies[seat]


def _dilemma(g: MagicGame, d: DilemmaOutcome, o: MetricOptions, t: dict[str, float]) -> None:
    seat = g.challenger_seats[0]
    t["wins:pd"] = float(_won(d.scores, seat))
    t["pd_score_sum"] = float(d.scores[seat])
    for rnd in d.rounds:
        # seed-004 §6.8 [C]: defecting is the rational move.
        t["rat_decisions"] += 1
        reply = _code_reading(o, rnd.replies, seat)
        if rnd.invalid[seat]:
            t["moves_invalid"] += 1
            if o.decisions == "strict" and o.invalid_decisions == "wrong":
                continue
        move = rnd.moves[seat] if reply is None else code_move(reply)
        t["rat_rational"] += move == "D"


def _contributions(o: MetricOptions, rnd: PGRound) -> tuple[float, ...]:
    """The round's contributions as the engine applied them, or as the code reads each seat's
    first reply (`MetricOptions.decisions`; a seat without a stored reply: as applied)."""
    if o.decisions != "code" or not rnd.replies:
        return rnd.contributions
    return tuple(
        x if r is None else code_contribution(r)
        for x, r in zip(rnd.contributions, rnd.replies, strict=True)
    )


def _public_good(g: MagicGame, p: PublicGoodOutcome, o: MetricOptions, t: dict[str, float]) -> None:
    seat = g.challenger_seats[0]
    n = g.n_seats
    t["wins:pg"] = float(_won(p.scores, seat))
    read = [_contributions(o, r) for r in p.rounds]
    pool = sum(sum(c) for c in read)
    share = p.multiplier * pool / n
    own = sum(c[seat] for c in read)
    t["pg_payback_sum"] = {"share": share, "final-score": p.scores[seat], "net": share - own}[
        o.payback
    ]
    for rnd, values in zip(p.rounds, read, strict=True):
        # seed-004 §6.8 [C]: contributing the round's minimum (ties included) is rational.
        t["rat_decisions"] += 1
        if rnd.invalid[seat]:
            t["moves_invalid"] += 1
            if o.decisions == "strict" and o.invalid_decisions == "wrong":
                continue
        t["rat_rational"] += math.isclose(values[seat], min(values), abs_tol=_EPS)
