"""Where each model call of an episode belongs in its transcript: what it was for, and when it
was made among the game's events.

A call's record says what it was for (its request's `purpose`: "decision", "tool", "report",
"craft", "debate-close", a hidden "probe:<kind>", "pgm-analysis", "question"...), and a re-ask
says what it re-asks: "reask" for a decision's, "<purpose>:reask" for any other call's
(`agents.parsing.reask_purpose`). A call made in an episode also records `after_events`, how
many of the episode's events were recorded before it, which places it exactly among them.

Older stores have neither, and are read as well as they allow: a plain "reask" right after a
probe, an analysis or a question of the same seat re-asks that call (a seat's calls are made one
after the other); a move's calls are the `attempts` its decision event counts, the seat's next
calls in order; and a call beside the moves is placed before the next move that made calls.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from stratagem.agents.parsing import REASK
from stratagem.experiments.episode import DECISION_EVENT
from stratagem.experiments.store import EventRecord, LlmCallRecord

ASIDE = ("question", "probe:", "pgm-")
"""Purposes of calls beside the moves (questions, seed-004's probes and PGM analyses): never
taken for a move's calls."""
DECISION = "decision"
"""The purpose of a move's own call."""
DEBRIEF = ("question", "probe:")
"""Purposes of the calls asked after a step (`Agent.debrief`: questions, probes): they belong to
that step's round, as their answers do, although a repeated game's observation after a round's
last step (which the agent records its calls with) already names the next round."""


@dataclass(frozen=True)
class PlacedCall:
    call: LlmCallRecord
    purpose: str
    """What the call was for; a re-ask's, what it re-asks ("probe:role" for a probe's)."""
    reask: bool
    at: int | None
    """The sequence number of the first event recorded after the call; None: after them all."""

    @property
    def aside(self) -> bool:
        return self.purpose.startswith(ASIDE)

    def section(self, events: Sequence[EventRecord], seqs: Sequence[int]) -> int | None:
        """The round it is shown in: a debrief's, the round of the step it followed (of the
        last event recorded before it; 0, the loop's step before the first, when none was);
        any other call's, the round it was made in. `seqs`: the events' sequence numbers."""
        if not self.purpose.startswith(DEBRIEF) or not events:
            return self.call.round
        i = len(events) if self.at is None else bisect_left(seqs, self.at)
        return events[i - 1].round if i else 0


def place_calls(calls: Sequence[LlmCallRecord], events: Sequence[EventRecord]) -> list[PlacedCall]:
    """`calls` (in the order they were recorded) with what each was for and where it goes."""
    purposes = _purposes(calls)
    recorded = [_after_events(c) for c in calls]
    at = recorded if None not in recorded else _inferred(calls, purposes, events)
    return [
        PlacedCall(c, purpose, reask, a)
        for c, (purpose, reask), a in zip(calls, purposes, at, strict=True)
    ]


def gaps(
    calls: Sequence[PlacedCall], events: Sequence[EventRecord]
) -> tuple[list[list[PlacedCall]], list[PlacedCall]]:
    """The calls made right before each of `events` (in the order they were made), and those
    made after the last."""
    seqs = [e.seq for e in events]
    before: list[list[PlacedCall]] = [[] for _ in events]
    after: list[PlacedCall] = []
    for call in calls:
        i = len(events) if call.at is None else bisect_left(seqs, call.at)
        (before[i] if i < len(events) else after).append(call)
    return before, after


def block_end(
    events: Sequence[EventRecord], start: int, cut: Callable[[int], bool] = lambda i: False
) -> int:
    """Where the step that starts with the decision event at `start` ends (exclusive): the
    other seats' decisions of the same step and each seat's own records of it (notes, invalid
    moves), up to a seat deciding again, another round, or `cut(i)` (calls made before event
    i: a new step)."""
    first = events[start]
    seats = {first.player}
    end = start + 1
    while end < len(events):
        e = events[end]
        if e.round != first.round or cut(end) or (e.kind != DECISION_EVENT and e.player is None):
            break
        if e.kind == DECISION_EVENT:
            if e.player in seats:
                break
            seats.add(e.player)
        end += 1
    return end


def _purposes(calls: Sequence[LlmCallRecord]) -> list[tuple[str, bool]]:
    out = []
    last: dict[int | None, str] = {}
    for call in calls:
        request: Any = call.request
        raw = str(request.get("purpose", "call")) if isinstance(request, dict) else "call"
        if raw == REASK:  # a decision's; in an older store, maybe the seat's last aside's
            before = last.get(call.player, DECISION)
            purpose, reask = before if before.startswith(ASIDE) else DECISION, True
        elif raw.endswith(":" + REASK):
            purpose, reask = raw.removesuffix(":" + REASK), True
        else:
            purpose, reask = raw, False
        last[call.player] = purpose
        out.append((purpose, reask))
    return out


def _after_events(call: LlmCallRecord) -> int | None:
    request: Any = call.request
    value = request.get("after_events") if isinstance(request, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _inferred(
    calls: Sequence[LlmCallRecord],
    purposes: Sequence[tuple[str, bool]],
    events: Sequence[EventRecord],
) -> list[int | None]:
    """Places for a store that did not record them: a move's calls before its step, the
    others before the next move that made calls."""
    queues: dict[int | None, deque[int]] = defaultdict(deque)
    for k, (purpose, _) in enumerate(purposes):
        if not purpose.startswith(ASIDE):
            queues[calls[k].player].append(k)
    at: list[int | None] = [None] * len(calls)
    placed: set[int] = set()
    i = 0
    while i < len(events):
        if events[i].kind != DECISION_EVENT:
            i += 1
            continue
        end = block_end(events, i)
        for e in events[i:end]:
            if e.kind != DECISION_EVENT:
                continue
            queue = queues[e.player]
            data = e.data if isinstance(e.data, dict) else {}
            attempts = data.get("attempts", 0)
            for _ in range(attempts if isinstance(attempts, int) else 0):
                if queue:
                    k = queue.popleft()
                    at[k] = events[i].seq
                    placed.add(k)
        i = end
    following: int | None = None
    for k in reversed(range(len(calls))):
        if k in placed:
            following = at[k]
        else:
            at[k] = following
    return at
