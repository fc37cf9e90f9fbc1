"""Stored TradeCraft episodes -> `records.TomGame`: everything the ToM metrics read (seed-002
§3–§7), taken from the events the game writes (`games/tradecraft/game.py`), the decision and `tom`
notes events of the episode loop (`experiments/episode.py`) and the beliefs table.

What the ToM-reporting agent records, per decision of a ToM seat:

- a `tom` notes event (player = seat, round = step): its phase and turn, its group ("V0", "V1",
  "V2"), whether it is the baseline, the orders whose report could not be read
  (`failed_orders`) and its counts (submissions, craft checks, model calls);
- one belief row per order it reported: content `{"turn", "phase", "values": {item: 0..10}}`.
  Every row is read with the agent's own §3.2 repairs (`agents/tom/scores`), so a report from
  another tool (a score of 7.5, or "7") is read as the agent reads a reply; each repair and
  each duplicate row is kept on the game, for the report to count and show.

The **focal** seat (§3.3, §5) is the one whose notes say `baseline: false`; when both say so
(a `V0 vs V0` game whose line-up marks no baseline) seat 0, flagged `baseline_focal`; when both
are baselines the game is no study game. An episode without `tom` notes is not a ToM game.

A finished ToM game whose events are damaged fails with a one-line error naming the episode and
the field: a score from a damaged store would be wrong without anyone knowing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from stratagem.agents.tom.scores import AGENT_READING, ScoreReading, repair_values
from stratagem.analysis.episodes import EpisodeData
from stratagem.errors import StratagemError
from stratagem.experiments.records import BeliefRecord, EventRecord
from stratagem.experiments.store import ResultStore
from stratagem.games.spaces import IllegalAction
from stratagem.games.tradecraft.actions import item_name
from stratagem.games.tradecraft.rules import to_fraction
from stratagem.studies.tom.options import DEFAULTS, TomOptions
from stratagem.studies.tom.records import (
    GROUPS,
    Group,
    Phase,
    Proposal,
    Report,
    SeatCounts,
    TomGame,
)

GAME = "tradecraft"
NOTES = "tom"
"""The notes event kind of the ToM-reporting agent."""
ORDERS: dict[str, int] = {"V0": 1, "V1": 2, "V2": 3}
"""Orders a report of each group asks for (§3.3)."""
TURN_LINE = re.compile(r"^### Turn (\d+) of (\d+) begins\.$")
"""The moderator's turn line (`tradecraft.TURN_BEGINS`): where the turn limit is read."""

BeliefReader = Callable[[str], Sequence[BeliefRecord]]
"""Episode id -> its belief rows (`ResultStore.beliefs`)."""


def is_tradecraft(episode: EpisodeData) -> bool:
    return episode.record.game.partition("/")[0] == GAME


def has_tom_notes(episode: EpisodeData) -> bool:
    return any(e.kind == NOTES for e in episode.events)


class _Damaged(StratagemError):
    pass


def _bad(field_name: str, value: object) -> _Damaged:
    return _Damaged(f"{field_name} is {value!r}")


def _int(data: Mapping[str, Any], key: str, where: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"{where}.{key}", value)
    return value


def _items(value: object, where: str) -> dict[str, float]:
    """Item counts as the engine records them: whole numbers, or "p/q" text for the fractions a
    game with `fractional_amounts` allows (read by the engine's own amount parser)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _bad(where, value)
    out: dict[str, float] = {}
    for item, n in value.items():
        if isinstance(n, bool) or not isinstance(n, (int, str)):
            raise _bad(f"{where}[{item}]", n)
        try:
            amount = to_fraction(n)
        except ValueError:
            raise _bad(f"{where}[{item}]", n) from None
        if amount < 0:
            raise _bad(f"{where}[{item}]", n)
        if amount:
            out[str(item)] = int(amount) if amount.denominator == 1 else float(amount)
    return out


def _data(e: EventRecord) -> Mapping[str, Any]:
    if not isinstance(e.data, Mapping):
        raise _bad(f"{e.kind} event {e.seq}", e.data)
    return e.data


# -- the seats ------------------------------------------------------------------------------------


@dataclass
class _Seat:
    notes: list[Mapping[str, Any]] = field(default_factory=list)

    def baseline(self) -> bool:
        return any(n.get("baseline") is True for n in self.notes)

    def group(self) -> Group:
        groups = {n.get("group") for n in self.notes}
        if len(groups) != 1 or next(iter(groups)) not in GROUPS:
            raise _bad("tom notes group", sorted(map(str, groups)))
        return cast(Group, next(iter(groups)))


def _seats(events: Sequence[EventRecord]) -> dict[int, _Seat]:
    seats: dict[int, _Seat] = defaultdict(_Seat)
    for e in events:
        if e.kind != NOTES:
            continue
        if e.player not in (0, 1):
            raise _bad(f"tom notes event {e.seq} player", e.player)
        data = _data(e)
        if not isinstance(data.get("baseline"), bool):
            raise _bad(f"tom notes event {e.seq} baseline", data.get("baseline"))
        seats[e.player].notes.append(data)
    return seats


def focal_seat(seats: Mapping[int, _Seat]) -> tuple[int, bool] | None:
    """(focal seat, chosen by default) or None when every noted seat is a baseline."""
    tested = [p for p in (0, 1) if p in seats and not seats[p].baseline()]
    if not tested:
        return None
    if len(tested) == 2:
        return 0, True
    return tested[0], False


def _counts(seat: _Seat | None, decisions: int) -> SeatCounts:
    if seat is None:
        return SeatCounts(invalid_decisions=decisions)
    totals: dict[str, int] = defaultdict(int)
    expected = failures = 0
    for n in seat.notes:
        for key in ("submissions", "invalid_submissions", "craft_checks", "craft_errors", "calls"):
            value = n.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise _bad(f"tom notes {key}", value)
            if key in ("submissions", "invalid_submissions") and n.get("phase") != "proposal":
                continue  # §7's invalid-proposal rate: a decision's replies are no proposals
            totals[key] += value
        if n.get("phase") in ("proposal", "decision"):
            expected += ORDERS.get(str(n.get("group")), 1)
            failed = n.get("failed_orders") or []
            if not isinstance(failed, list):
                raise _bad("tom notes failed_orders", failed)
            failures += len(failed)
    return SeatCounts(
        submissions=totals["submissions"],
        invalid_submissions=totals["invalid_submissions"],
        craft_checks=totals["craft_checks"],
        craft_errors=totals["craft_errors"],
        reports_expected=expected,
        report_failures=failures,
        invalid_decisions=decisions,
        calls=totals["calls"],
    )


# -- reports, proposals, the end -----------------------------------------------------------------


@dataclass(frozen=True)
class ReadReports:
    """A game's reports, with the §3.2 repairs made and the duplicate belief rows ignored."""

    reports: tuple[Report, ...]
    repairs: tuple[str, ...] = ()
    duplicates: tuple[str, ...] = ()


Domains = Mapping[tuple[int, int, str], Sequence[str]]
"""(turn, seat, phase) -> the report's domain (the items in any hand), as the agent noted it."""


def domains(events: Sequence[EventRecord]) -> dict[tuple[int, int, str], list[str]]:
    """The domain of each report from the `tom` notes (`domain`); a note without one (an older
    store, another tool) leaves its reports' domain unknown: nothing dropped or filled."""
    out: dict[tuple[int, int, str], list[str]] = {}
    for e in events:
        if e.kind != NOTES or e.player is None:
            continue
        data = _data(e)
        domain, turn, phase = data.get("domain"), data.get("turn"), data.get("phase")
        if domain is None or phase not in ("proposal", "decision"):
            continue
        where = f"tom notes event {e.seq} domain"
        if not isinstance(domain, list) or isinstance(turn, bool) or not isinstance(turn, int):
            raise _bad(where, domain)
        try:
            out[(turn, e.player, str(phase))] = [item_name(i) for i in domain]
        except IllegalAction:
            raise _bad(where, domain) from None
    return out


def reports(
    beliefs: Sequence[BeliefRecord],
    reading: ScoreReading = AGENT_READING,
    known: Domains | None = None,
) -> ReadReports:
    """One `Report` per (turn, seat, phase), the orders the seat's belief rows hold.

    Every row's scores get the agent's §3.2 repairs (`agents/tom/scores`: out of range
    clipped, fractions made whole as `reading` says, over the noted domain when `known`),
    each repair named; a row repeating a (turn, seat, phase, order) is ignored, the first
    stored row used, and named. A row that is not a report at all is damage (raises)."""
    found: dict[tuple[int, int, str], dict[int, dict[str, int]]] = {}
    repairs: list[str] = []
    duplicates: list[str] = []
    for b in beliefs:
        where = f"belief (step {b.round}, seat {b.player}, order {b.order})"
        content = b.content
        if not isinstance(content, Mapping):
            raise _bad(f"{where} content", content)
        turn = _int(content, "turn", where)
        phase = content.get("phase")
        if phase not in ("proposal", "decision"):
            raise _bad(f"{where}.phase", phase)
        if b.order not in (0, 1, 2):
            raise _bad(f"{where} order", b.order)
        values = content.get("values")
        if not isinstance(values, Mapping):
            raise _bad(f"{where}.values", values)
        key = (turn, b.player, str(phase))
        scores, notes = repair_values(values, (known or {}).get(key), f"V{b.order}", reading)
        at = f"turn {turn}, seat {b.player} ({phase})"
        orders = found.setdefault(key, {})
        if b.order in orders:
            same = "the same" if orders[b.order] == scores else "different"
            duplicates.append(f"{at} V{b.order} again, {same} scores")
            continue
        orders[b.order] = scores
        repairs += [f"{at} {note}" for note in notes]
    out = []
    for (turn, seat, phase), orders in sorted(found.items()):
        out.append(
            Report(
                turn=turn,
                seat=seat,
                phase=cast(Phase, phase),
                v0=orders.get(0),
                v1=orders.get(1),
                v2=orders.get(2),
            )
        )
    return ReadReports(tuple(out), tuple(repairs), tuple(duplicates))


def _invalid_count(events: Sequence[EventRecord], seat: int) -> int:
    return sum(
        1
        for e in events
        if e.kind == "decision"
        and e.player == seat
        and isinstance(e.data, Mapping)
        and e.data.get("valid") is False
    )


def _valid_before(events: Sequence[EventRecord]) -> list[dict[int, bool]]:
    """At each event, whether each seat's latest decision so far was valid. A step's decision
    events are stored just before the game events they led to (`experiments/episode.py`), so
    this is the validity of the move behind a proposal or a reply. (The events' round is the
    turn, shared by a turn's three steps, so it cannot tell them apart.)"""
    latest: dict[int, bool] = {}
    out = []
    for e in events:
        if e.kind == "decision" and e.player is not None and isinstance(e.data, Mapping):
            latest[e.player] = e.data.get("valid") is not False
        out.append(dict(latest))
    return out


def proposals(events: Sequence[EventRecord]) -> tuple[Proposal, ...]:
    """The proposals the proposer chose (a fallback pass after an invalid reply is left out, and
    counted with the invalid decisions), each with its reply; a decision that stayed invalid
    (a fallback rejection) reads as no decision (None)."""
    valid = _valid_before(events)
    replies: dict[int, bool | None] = {}
    for i, e in enumerate(events):
        if e.kind == "reply":
            data = _data(e)
            accept = data.get("accept")
            if not isinstance(accept, bool):
                raise _bad("reply.accept", accept)
            seat = _int(data, "player", "reply")
            replies[_int(data, "round", "reply")] = accept if valid[i].get(seat, True) else None
    out = []
    for i, e in enumerate(events):
        if e.kind != "proposal":
            continue
        data = _data(e)
        turn = _int(data, "round", "proposal")
        proposer = _int(data, "player", "proposal")
        if not valid[i].get(proposer, True):
            continue
        message = data.get("message")
        out.append(
            Proposal(
                turn=turn,
                proposer=proposer,
                offer=_items(data.get("offer"), "proposal.offer"),
                request=_items(data.get("request"), "proposal.request"),
                accepted=replies.get(turn),
                message=message if isinstance(message, str) else "",
            )
        )
    return tuple(out)


def max_turn(events: Sequence[EventRecord], turns: int) -> int:
    """The turn limit, as the moderator announced it; the turns played when it never did."""
    for e in events:
        if e.kind == "moderator" and isinstance(e.data, Mapping):
            m = TURN_LINE.match(str(e.data.get("text", "")))
            if m:
                return int(m.group(2))
    return turns


def _outcome(events: Sequence[EventRecord]) -> Mapping[str, Any]:
    found = [e for e in events if e.kind == "outcome"]
    if not found:
        raise _bad("outcome event", None)
    return _data(found[-1])


# -- one game -------------------------------------------------------------------------------------


def tom_game(
    episode: EpisodeData, beliefs: Sequence[BeliefRecord], options: TomOptions = DEFAULTS
) -> TomGame | None:
    """The record of one finished ToM game; None when both seats are baselines (no study game).

    A damaged game raises a StratagemError naming the episode and the field."""
    eid = episode.record.id
    try:
        return _game(episode, beliefs, options)
    except _Damaged as exc:
        raise StratagemError(f"ToM episode '{eid}': {exc}") from None
    except StratagemError as exc:  # the records' own checks
        raise StratagemError(f"ToM episode '{eid}': {exc}") from None


def _game(
    episode: EpisodeData, beliefs: Sequence[BeliefRecord], options: TomOptions
) -> TomGame | None:
    events = episode.events
    seats = _seats(events)
    chosen = focal_seat(seats)
    if chosen is None:
        return None
    focal, by_default = chosen
    group = seats[focal].group()
    outcome = _outcome(events)
    kind = outcome.get("outcome")
    if kind not in ("win", "tie", "timeout"):
        raise _bad("outcome.outcome", kind)
    winners = outcome.get("winners")
    if not isinstance(winners, list) or any(w not in (0, 1) for w in winners):
        raise _bad("outcome.winners", winners)
    targets = outcome.get("targets")
    if not isinstance(targets, list) or len(targets) != 2:
        raise _bad("outcome.targets", targets)
    payoffs = outcome.get("payoffs")
    if (
        not isinstance(payoffs, list)
        or len(payoffs) != 2
        or any(isinstance(x, bool) or not isinstance(x, int | float) for x in payoffs)
    ):
        raise _bad("outcome.payoffs", payoffs)
    turns = _int(outcome, "turns", "outcome")
    invalid = [_invalid_count(events, p) for p in (0, 1)]
    seat_model = episode.seats[focal].model if focal < len(episode.seats) else ""
    read = reports(beliefs, options.reading, domains(events))
    return TomGame(
        episode_id=episode.record.id,
        model=seat_model or episode.model,
        group=group,
        focal=focal,
        instance=episode.record.game,
        max_turn=max(max_turn(events, turns), turns),
        targets=(
            _items(targets[0], "outcome.targets[0]"),
            _items(targets[1], "outcome.targets[1]"),
        ),
        reports=read.reports,
        proposals=proposals(events),
        outcome=kind,
        winners=tuple(winners),
        turns=turns,
        payoffs=(float(payoffs[0]), float(payoffs[1])),
        counts=(_counts(seats.get(0), invalid[0]), _counts(seats.get(1), invalid[1])),
        baseline_focal=by_default,
        repairs=read.repairs,
        duplicates=read.duplicates,
        seed=episode.record.seed,
    )


# -- the experiment -------------------------------------------------------------------------------


@dataclass
class TomData:
    """What the report section reads: the study's games and why other episodes are not in it."""

    games: list[TomGame]
    skipped: dict[str, list[str]] = field(default_factory=dict)
    """Why a TradeCraft episode is not a study game -> its ids."""

    def skip(self, reason: str, episode_id: str) -> None:
        self.skipped.setdefault(reason, []).append(episode_id)


NO_NOTES = "no ToM reports (not played by the ToM-reporting agent)"
BASELINES = "both seats are V0 baselines (no focal agent)"


def unfinished(store: ResultStore, experiment_id: str) -> dict[str, int]:
    """TradeCraft episodes of the experiment not finished (pending, running, failed) by status:
    never scored, always counted."""
    counts: dict[str, int] = defaultdict(int)
    for r in store.episodes(experiment_id):
        if r.status != "finished" and r.game.partition("/")[0] == GAME:
            counts[r.status] += 1
    return dict(counts)


def tom_data(
    episodes: Sequence[EpisodeData], beliefs: BeliefReader, options: TomOptions = DEFAULTS
) -> TomData:
    """Every finished TradeCraft episode as a study game, or the reason it is not one; the
    first damaged ToM game raises (see the module docstring)."""
    data = TomData([])
    for e in episodes:
        if not is_tradecraft(e):
            continue
        if not has_tom_notes(e):
            data.skip(NO_NOTES, e.record.id)
            continue
        game = tom_game(e, beliefs(e.record.id), options)
        if game is None:
            data.skip(BASELINES, e.record.id)
        else:
            data.games.append(game)
    return data
