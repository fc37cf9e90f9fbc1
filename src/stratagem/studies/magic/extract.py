"""Stored MAgIC episodes -> `records.MagicGame`: everything the metrics read, taken from the
events the games and the episode loop record, for the games `entities.competitions` finds to be
competitions between a challenger and a defender.

Invalid replies (seed-004 §10.10): a seat's `decisions` are its `decision` events (one per step
it acted in, as the episode loop writes them) plus the probes it was asked; `invalid` those
marked not valid plus the probe answers stored as not relevant.

Reads go through `analysis.episodes` and the store's read API: the model calls only of the PD and
Public Good games, for their decisions' first replies (`replies`, what the code's reading of a
decision reads), and otherwise only their costs, summed by SQL per seat (`seat_costs`).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.rating import PairResult, seat_pairs
from stratagem.errors import StratagemError
from stratagem.experiments.records import AnswerRecord, EventRecord, LlmCallRecord
from stratagem.experiments.store import ResultStore
from stratagem.studies.magic.entities import Competition, competitions, seat_entities
from stratagem.studies.magic.planned import planned_games
from stratagem.studies.magic.records import (
    GAMES,
    MAJORITY_ROLES,
    PLAYER,
    SPY_ROLES,
    Belief,
    CostSharingOutcome,
    DilemmaOutcome,
    Guess,
    MagicGame,
    PDRound,
    PGRound,
    PublicGoodOutcome,
    SocialOutcome,
    Vote,
)
from stratagem.studies.magic.replies import Replies, first_replies

OUTCOME, DECISION, MOVE = "outcome", "decision", "move"
CONTRIBUTIONS, PAYOUT = "contributions", "payout"
PGM_VOTE = "pgm-vote"
"""Event kinds read here (`games/chat.py`, `games/magic/public_good.py`, `experiments/episode.py`,
and the PGM player's hidden vote note, `agents/magic/pgm_social.VOTE_NOTE`)."""

REPLIED = ("npd3", "public-good")
"""The games whose decisions' first replies are read from their model calls (`replies`)."""

PROBE = re.compile(r"^magic-(consistency|belief)@(before_clue|after_clue):(\d+)$")
"""A probe's question id (`agents/magic/probing.py`): its kind and when it was asked."""


def base_game(name: str) -> str:
    """`chameleon/3` -> `chameleon`."""
    return name.partition("/")[0]


def setting_of(name: str) -> int:
    """`chameleon/3` -> 3; a game named without a setting plays its setting 0."""
    suffix = name.partition("/")[2]
    return int(suffix) if suffix.isdigit() else 0


def is_magic(episode: EpisodeData) -> bool:
    """One of seed-004's five games (§3), whatever plays it."""
    return base_game(episode.record.game) in GAMES


# -- per-seat counts -----------------------------------------------------------------------------


def _decision_counts(
    events: Sequence[EventRecord], answers: Sequence[AnswerRecord], n: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    decisions, invalid = [0] * n, [0] * n
    for e in events:
        if e.kind == DECISION and e.player is not None and 0 <= e.player < n:
            decisions[e.player] += 1
            if isinstance(e.data, Mapping) and e.data.get("valid") is False:
                invalid[e.player] += 1
    for a in answers:
        if PROBE.match(a.question_id) and 0 <= a.player < n:
            decisions[a.player] += 1
            if not _relevant(a):
                invalid[a.player] += 1
    return tuple(invalid), tuple(decisions)


def _relevant(answer: AnswerRecord) -> bool:
    parsed = answer.parsed
    return isinstance(parsed, Mapping) and parsed.get("relevant") is True


def _invalid_steps(events: Sequence[EventRecord]) -> set[tuple[int | None, int]]:
    """(step, seat) of every decision that stayed invalid."""
    return {
        (e.round, e.player)
        for e in events
        if e.kind == DECISION
        and e.player is not None
        and isinstance(e.data, Mapping)
        and e.data.get("valid") is False
    }


def _last(events: Sequence[EventRecord], kind: str) -> Mapping[str, Any] | None:
    found = [e.data for e in events if e.kind == kind and isinstance(e.data, Mapping)]
    return found[-1] if found else None


# -- the social games: seed-004 §3.1, §3.2, §6.1 ---------------------------------------------------


def _probe_times(
    answers: Sequence[AnswerRecord], kind: str, n: int
) -> list[list[AnswerRecord | None]]:
    """[probe time][seat]: the answers to one probe, times in the order they were asked."""
    by_time: dict[tuple[int, int], list[AnswerRecord | None]] = {}
    for a in answers:
        m = PROBE.match(a.question_id)
        if m is None or m.group(1) != kind or not 0 <= a.player < n:
            continue
        when = (int(m.group(3)), 0 if m.group(2) == "before_clue" else 1)
        by_time.setdefault(when, [None] * n)[a.player] = a
    return [by_time[t] for t in sorted(by_time)]


def _role_answer(answer: AnswerRecord | None) -> str | None:
    """The raw reply (the metric reads it as the code does, `probes.role_answer_correct`);
    None when not asked or when it stayed invalid."""
    if answer is None or not _relevant(answer):
        return None
    return answer.answer


def _belief(answer: AnswerRecord | None, n: int) -> Belief | None:
    """The stored F (`agents/magic/probing.ProbeParser`: JSON rows); None when not asked, invalid
    or not an n×n matrix of -1/0/+1."""
    if answer is None or not _relevant(answer):
        return None
    value = answer.parsed.get("value")
    try:
        rows = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return None
    if not isinstance(rows, list) or len(rows) != n:
        return None
    out = []
    for row in rows:
        if not isinstance(row, list) or len(row) != n:
            return None
        if any(isinstance(x, bool) or x not in (-1, 0, 1) for x in row):
            return None
        out.append(tuple(int(x) for x in row))
    return tuple(out)


def _seat_or_none(value: object, n: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
        return None
    return value


def _vote(seat: int, ballot: object, note: Mapping[str, Any] | None, n: int) -> Vote:
    """A seat's vote as the game counted it; a PGM seat's note (Chameleon, seed-004 §7.2) holds
    its belief vote, which the game counted, and its text vote (None: not asked or not read),
    so that Judgment can score either (`MetricOptions.chameleon_vote`, §6.2, §10.7)."""
    if note is None:
        return Vote(voter=seat, target=_seat_or_none(ballot, n))
    belief = _seat_or_none(note.get("belief"), n)
    return Vote(voter=seat, target=_seat_or_none(note.get("text"), n), belief_target=belief)


def _social(
    game: str, events: Sequence[EventRecord], answers: Sequence[AnswerRecord], n: int
) -> tuple[tuple[str, ...], SocialOutcome]:
    outcome = _last(events, OUTCOME)
    if outcome is None:
        raise StratagemError("no outcome event")
    spy = _seat_or_none(outcome.get("spy"), n)
    if spy is None:
        raise StratagemError(f"the outcome names no spy seat ({outcome.get('spy')!r})")
    roles = tuple(SPY_ROLES[game] if k == spy else MAJORITY_ROLES[game] for k in range(n))
    flag = outcome.get("win_flag")
    if not isinstance(flag, int) or isinstance(flag, bool):
        raise StratagemError(f"the outcome's win_flag is {flag!r}")
    ballots = outcome.get("votes") or []
    notes = {e.player: e.data for e in events if e.kind == PGM_VOTE and isinstance(e.data, Mapping)}
    votes = tuple(
        _vote(k, ballots[k] if k < len(ballots) else None, notes.get(k), n) for k in range(n)
    )
    guess = None
    if game == "chameleon" and flag in (0, 1):
        text = outcome.get("guess")
        guess = Guess(text=text if isinstance(text, str) else None, correct=flag == 1)
    role_answers = tuple(
        tuple(_role_answer(a) for a in at) for at in _probe_times(answers, "consistency", n)
    )
    beliefs = tuple(tuple(_belief(a, n) for a in at) for at in _probe_times(answers, "belief", n))
    return roles, SocialOutcome(flag, votes, guess, role_answers, beliefs)


# -- the game-theory games: seed-004 §3.3 - §3.5 ---------------------------------------------------


def parse_proposal(text: object, n: int) -> tuple[float | None, ...] | None:
    """A stored proposal ("40/30/30", `Shares`) as % per seat; None when there is none."""
    if not isinstance(text, str):
        return None
    parts = text.split("/")
    if len(parts) != n:
        return None
    out: list[float | None] = []
    for p in parts:
        try:
            out.append(float(p))
        except ValueError:
            out.append(None)
    return tuple(out)


def _cost_sharing(events: Sequence[EventRecord], seat: int, n: int) -> CostSharingOutcome:
    outcome = _last(events, OUTCOME)
    if outcome is None:
        raise StratagemError("no outcome event")
    success = outcome.get("success") is True
    agreed = None
    if success:
        shares = outcome.get("shares")
        if isinstance(shares, list) and len(shares) == n:
            agreed = tuple(float(x) if isinstance(x, int | float) else None for x in shares)
        else:
            agreed = parse_proposal(outcome.get("agreed_proposal"), n) or (None,) * n
    latest = outcome.get("latest_proposals") or []
    text = latest[seat] if seat < len(latest) else None
    mine = parse_proposal(text, n)
    chosen = _seat_or_none(outcome.get("agreed_with"), n)
    coordinated = None
    if success and chosen is not None:
        # seed-004 §6.7 [C], §10.11: the first voter's choice, compared as the game stored it.
        proposal = outcome.get("agreed_proposal")
        coordinated = chosen == seat or (isinstance(proposal, str) and proposal == text)
    return CostSharingOutcome(success, agreed, mine, coordinated=coordinated)


def _steps(events: Sequence[EventRecord], kind: str) -> dict[int | None, list[EventRecord]]:
    """Events of one kind by the step they were recorded in (the `round` column)."""
    found: dict[int | None, list[EventRecord]] = defaultdict(list)
    for e in events:
        if e.kind == kind and isinstance(e.data, Mapping):
            found[e.round].append(e)
    return found


def _scores(episode: EpisodeData, n: int, fallback: Sequence[float] | None) -> tuple[float, ...]:
    payoffs = episode.record.payoffs
    if payoffs is not None and len(payoffs) == n:
        return tuple(float(x) for x in payoffs)
    if fallback is not None and len(fallback) == n:
        return tuple(float(x) for x in fallback)
    raise StratagemError("no final scores stored")


def _dilemma(episode: EpisodeData, n: int, replies: Replies) -> DilemmaOutcome:
    """Moves as the engine applied them (`move` events, else the rounds table); a seat with no
    move (a forfeited round) reads as Defect, the code's reading of anything but "cooperate"
    (seed-004 §3.4), and its decision is flagged invalid either way. Each round keeps every
    seat's first reply where one is stored (`replies`)."""
    bad = _invalid_steps(episode.events)
    rounds: list[PDRound] = []
    moves = _steps(episode.events, MOVE)
    if moves:
        for step in sorted(moves, key=lambda s: -1 if s is None else s):
            labels: list[object] = [None] * n
            for e in moves[step]:
                p = _seat_or_none(e.data.get("player"), n)
                if p is not None:
                    labels[p] = e.data.get("decision")
            rounds.append(_pd_round(labels, [(step, p) in bad for p in range(n)], step, replies))
    else:
        for r in episode.rounds:
            labels = list(r.actions) + [None] * (n - len(r.actions))
            flags = [(r.round, p) in bad for p in range(n)]
            rounds.append(_pd_round(labels[:n], flags, r.round, replies))
    totals = [0.0] * n
    for r in episode.rounds:
        for p, x in enumerate((r.payoffs or ())[:n]):
            totals[p] += float(x or 0.0)
    return DilemmaOutcome(tuple(rounds), _scores(episode, n, totals if episode.rounds else None))


def _step_replies(replies: Replies, step: int | None, n: int) -> tuple[str | None, ...]:
    found = tuple(replies.get((step, p)) for p in range(n))
    return found if any(x is not None for x in found) else ()


def _pd_round(
    labels: Sequence[object], invalid: Sequence[bool], step: int | None, replies: Replies
) -> PDRound:
    moves = tuple("C" if str(x).lower() == "cooperate" else "D" for x in labels)
    flags = tuple(bool(f) or x is None for f, x in zip(invalid, labels, strict=True))
    return PDRound(moves, flags, _step_replies(replies, step, len(labels)))


def _public_good(episode: EpisodeData, n: int, replies: Replies) -> PublicGoodOutcome:
    bad = _invalid_steps(episode.events)
    rounds: list[PGRound] = []
    steps = _steps(episode.events, CONTRIBUTIONS)
    for step in sorted(steps, key=lambda s: -1 if s is None else s):
        for e in steps[step]:
            values = e.data.get("contributions")
            if not isinstance(values, list) or len(values) != n:
                raise StratagemError(f"contributions {values!r} need one number per seat")
            rounds.append(
                PGRound(
                    contributions=tuple(float(x) for x in values),
                    invalid=tuple((step, p) in bad for p in range(n)),
                    replies=_step_replies(replies, step, n),
                )
            )
    payout = _last(episode.events, PAYOUT)
    fallback = payout.get("payoffs") if payout is not None else None
    scores = _scores(episode, n, fallback if isinstance(fallback, list) else None)
    return PublicGoodOutcome(tuple(rounds), scores, _multiplier(episode, payout, n))


def _multiplier(episode: EpisodeData, payout: Mapping[str, Any] | None, n: int) -> float:
    """What the pool was multiplied by: from the payout when anything was contributed, else from
    the game rebuilt by its name (seed-004 §3.5: one multiplier per setting)."""
    if payout is not None:
        pool, share = payout.get("pool"), payout.get("share")
        if isinstance(pool, int | float) and isinstance(share, int | float) and pool > 0:
            return float(share) * n / float(pool)
    from stratagem.games.catalog import get_game

    try:
        return float(getattr(get_game(episode.record.game), "multiplier", 0.0))
    except StratagemError:
        return 0.0


# -- one game ------------------------------------------------------------------------------------


def magic_game(
    episode: EpisodeData,
    answers: Sequence[AnswerRecord],
    competition: Competition,
    calls: Sequence[LlmCallRecord] = (),
) -> MagicGame:
    """The record of one competition game; a StratagemError says what is missing or wrong.
    `calls` (its model calls) give the PD and Public Good decisions' first replies."""
    game = base_game(episode.record.game)
    n = len(episode.seats)
    invalid, decisions = _decision_counts(episode.events, answers, n)
    details: dict[str, Any] = {}
    roles: tuple[str, ...] = (PLAYER,) * n
    seat = competition.seats[0]
    if game in SPY_ROLES:
        roles, details["social"] = _social(game, episode.events, answers, n)
    elif game == "cost-sharing":
        details["cost_sharing"] = _cost_sharing(episode.events, seat, n)
    elif game == "npd3":
        details["dilemma"] = _dilemma(episode, n, first_replies(calls, episode.events))
    elif game == "public-good":
        details["public_good"] = _public_good(episode, n, first_replies(calls, episode.events))
    else:
        raise StratagemError(f"{episode.record.game} is not a MAgIC game")
    return MagicGame(
        game=game,
        setting=setting_of(episode.record.game),
        repetition=int(episode.spec.get("repetition") or 0),
        challenger=competition.challenger,
        defender=competition.defender,
        challenger_seats=competition.seats,
        roles=roles,
        invalid=invalid,
        decisions=decisions,
        seed=int(episode.record.seed or 0),
        episode_id=episode.record.id,
        **details,
    )


def rating_scores(episode: EpisodeData) -> tuple[float, ...] | None:
    """What `analysis.rating.seat_pairs` compares seat by seat (higher is better): the credits of
    the social games and the final scores of PD and Public Good (the games' payoffs); in Cost
    Sharing, where every seat scores the same (1 on agreement), the share left unpaid, 100 minus
    the seat's % of the agreed fee (all seats tie on failure) [I]. None when nothing is stored."""
    n = len(episode.seats)
    if base_game(episode.record.game) == "cost-sharing":
        outcome = _last(episode.events, OUTCOME)
        if outcome is None:
            return None
        shares = outcome.get("shares")
        if outcome.get("success") is not True or not isinstance(shares, list):
            return (0.0,) * n
        return tuple(100.0 - float(x) for x in shares)
    payoffs = episode.record.payoffs
    return None if payoffs is None or len(payoffs) != n else tuple(float(x) for x in payoffs)


# -- the experiment ------------------------------------------------------------------------------


@dataclass
class MagicData:
    """What the report section reads: the competition records and everything around them."""

    games: list[MagicGame]
    entities: dict[str, tuple[str, ...]]
    """Episode id -> each seat's entity (every MAgIC episode)."""
    episodes: list[EpisodeData]
    competitions: dict[str, Competition]
    skipped: dict[str, list[str]] = field(default_factory=dict)
    """Why an episode is not in the leaderboard -> its ids."""
    costs: dict[str, dict[int, float]] = field(default_factory=dict)
    """Episode id -> seat -> dollars spent on that seat's model calls."""

    def skip(self, reason: str, episode_id: str) -> None:
        self.skipped.setdefault(reason, []).append(episode_id)


def seat_costs(store: ResultStore, episode_ids: Sequence[str]) -> dict[str, dict[int, float]]:
    """Dollars per episode and seat, summed over its model calls."""
    return store.seat_costs(episode_ids)


def magic_data(
    store: ResultStore, config: Mapping[str, Any], episodes: Sequence[EpisodeData]
) -> MagicData:
    """Every MAgIC episode's entities, the competitions among them and their records, each with
    the games planned in its competition (`planned`, for the code's game count)."""
    mine = [e for e in episodes if is_magic(e)]
    entities = {e.record.id: seat_entities(e, config) for e in mine}
    comps = competitions(mine, entities, config)
    data = MagicData([], entities, mine, comps)
    for e in mine:
        kinds = len(set(entities[e.record.id]))
        comp = comps.get(e.record.id)
        if comp is None:
            data.skip("self-play" if kinds == 1 else f"{kinds} entities", e.record.id)
            continue
        game = base_game(e.record.game)
        answers = store.answers(e.record.id) if game in SPY_ROLES else []
        calls = store.llm_calls(e.record.id) if game in REPLIED else []
        try:
            data.games.append(magic_game(e, answers, comp, calls))
        except StratagemError as exc:
            data.skip(str(exc), e.record.id)
    data.costs = seat_costs(store, [e.record.id for e in mine])
    planned = planned_games(store, config, mine, data.games)
    data.games = [
        replace(g, planned=planned.get((g.challenger, g.competition))) for g in data.games
    ]
    return data


def rating_results(data: MagicData) -> tuple[list[PairResult], dict[str, float] | None]:
    """Every MAgIC game's seats as pairs of different entities, and each entity's cost per
    game (None when no model call is stored)."""
    results: list[PairResult] = []
    spent: dict[str, float] = defaultdict(float)
    played: dict[str, int] = defaultdict(int)
    for e in data.episodes:
        entities = data.entities[e.record.id]
        scores = rating_scores(e)
        if scores is None or len(set(entities)) < 2:
            continue
        results += seat_pairs(
            entities, scores, game_type=base_game(e.record.game), game_id=e.record.id
        )
        seats = data.costs.get(e.record.id, {})
        for entity in set(entities):
            played[entity] += 1
            spent[entity] += sum(seats.get(k, 0.0) for k, x in enumerate(entities) if x == entity)
    costs = {k: spent[k] / played[k] for k in played} if data.costs else None
    return results, costs
