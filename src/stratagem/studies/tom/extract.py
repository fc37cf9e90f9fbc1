"""Stored TradeCraft episodes -> `records.TomGame`: everything the ToM metrics read (seed-002
§3–§7), taken from the events the game writes (`games/tradecraft.py`), the decision and `tom`
notes events of the episode loop (`experiments/episode.py`) and the beliefs table.

What the ToM-reporting agent records, per decision of a ToM seat:

- a `tom` notes event (player = seat, round = step): its phase and turn, its group ("V0", "V1",
  "V2"), whether it is the baseline, the orders whose report could not be read
  (`failed_orders`) and its counts (submissions, craft checks, model calls);
- one belief row per order it reported: content `{"turn", "phase", "values": {item: 0..10}}`.

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

from stratagem.analysis.episodes import EpisodeData
from stratagem.errors import StratagemError
from stratagem.experiments.records import BeliefRecord, EventRecord
from stratagem.experiments.store import ResultStore
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


def _items(value: object, where: str) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _bad(where, value)
    out: dict[str, int] = {}
    for item, n in value.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise _bad(f"{where}[{item}]", n)
        if n:
            out[str(item)] = n
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


def reports(beliefs: Sequence[BeliefRecord]) -> tuple[Report, ...]:
    """One `Report` per (turn, seat, phase), the orders the seat's belief rows hold."""
    found: dict[tuple[int, int, str], dict[int, dict[str, int]]] = {}
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
        scores: dict[str, int] = {}
        for item, score in values.items():
            if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= 10:
                raise _bad(f"{where}.values[{item}]", score)
            scores[str(item)] = score
        found.setdefault((turn, b.player, str(phase)), {}).setdefault(b.order, scores)
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
    return tuple(out)


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


def tom_game(episode: EpisodeData, beliefs: Sequence[BeliefRecord]) -> TomGame | None:
    """The record of one finished ToM game; None when both seats are baselines (no study game).

    A damaged game raises a StratagemError naming the episode and the field."""
    eid = episode.record.id
    try:
        return _game(episode, beliefs)
    except _Damaged as exc:
        raise StratagemError(f"ToM episode '{eid}': {exc}") from None
    except StratagemError as exc:  # the records' own checks
        raise StratagemError(f"ToM episode '{eid}': {exc}") from None


def _game(episode: EpisodeData, beliefs: Sequence[BeliefRecord]) -> TomGame | None:
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
        reports=reports(beliefs),
        proposals=proposals(events),
        outcome=kind,
        winners=tuple(winners),
        turns=turns,
        payoffs=(float(payoffs[0]), float(payoffs[1])),
        counts=(_counts(seats.get(0), invalid[0]), _counts(seats.get(1), invalid[1])),
        baseline_focal=by_default,
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


def tom_data(episodes: Sequence[EpisodeData], beliefs: BeliefReader) -> TomData:
    """Every finished TradeCraft episode as a study game, or the reason it is not one; the
    first damaged ToM game raises (see the module docstring)."""
    data = TomData([])
    for e in episodes:
        if not is_tradecraft(e):
            continue
        if not has_tom_notes(e):
            data.skip(NO_NOTES, e.record.id)
            continue
        game = tom_game(e, beliefs(e.record.id))
        if game is None:
            data.skip(BASELINES, e.record.id)
        else:
            data.games.append(game)
    return data
