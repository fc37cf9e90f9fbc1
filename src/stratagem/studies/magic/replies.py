"""The first reply each seat gave to each Prisoner's Dilemma and Public Good decision, and the
authors' code's reading of it (seed-004 §3.4, §3.5, §10.10).

The code asks once and reads that one reply leniently: anything without "cooperate" is Defect,
a contribution is the first integer of the reply (0 when there is none). stratagem's strict
parsing may re-ask, and applies the reply it could read; so the code's reading of a decision is
its *first* reply read by the code's parser, not the move the engine applied. The replies are
in the model-call records (the decision events hold only the applied move): a call is matched
to the decision it was made for by `analysis.transcript_calls.place_calls`, as transcripts are.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping, Sequence

from stratagem.agents.magic.vote_parse import contribution_code, prisoner_decision_code
from stratagem.analysis.transcript_calls import DECISION, PlacedCall, place_calls
from stratagem.experiments.episode import DECISION_EVENT
from stratagem.experiments.records import EventRecord, LlmCallRecord

Replies = Mapping[tuple[int | None, int], str]
"""(step, seat) -> the seat's first reply text to its decision of that step."""


def first_replies(calls: Sequence[LlmCallRecord], events: Sequence[EventRecord]) -> Replies:
    """Each decision's first reply: the seat's first decision call (not a re-ask, not a probe or
    an analysis) made before its decision event and after its previous one. A decision with no
    such call (a rule-based seat, an import without calls) has none."""
    queues: dict[int, deque[PlacedCall]] = defaultdict(deque)
    for placed in place_calls(calls, events):
        if placed.purpose == DECISION and placed.call.player is not None:
            queues[placed.call.player].append(placed)
    out: dict[tuple[int | None, int], str] = {}
    for e in sorted(events, key=lambda e: e.seq):
        if e.kind != DECISION_EVENT or e.player is None:
            continue
        queue, texts = queues[e.player], []
        while queue and queue[0].at is not None and queue[0].at <= e.seq:
            placed = queue.popleft()
            if placed.call.text is not None:
                texts.append(placed.call.text)
        if texts:
            out[(e.round, e.player)] = texts[0]
    return out


def code_move(reply: str) -> str:
    """seed-004 §3.4 [C]: "C" when the reply contains "cooperate" in any case, else "D"."""
    return "C" if prisoner_decision_code(reply, ("C", "D")) == "C" else "D"


def code_contribution(reply: str) -> float:
    """seed-004 §3.5 [C], §10.10: the reply's first integer, 0 when it has none."""
    found = contribution_code(reply)
    return float(found) if found is not None else 0.0
