"""One episode as steps to replay, seen from a perspective.

The steps and the calls inside them come from the transcript's own placing (`transcript_calls`):
a step starts where seats decide (a decision block: the seats deciding together) and runs until
the next one, with the game's events that followed and every call made before or between its
events (`calls`: a re-ask folded into the call it re-asks, a tool call with its result).
A record made elsewhere (an imported log: rounds, no `decision` events) has a step per round,
as a played repeated game has, each with that round's events and calls.

In a seat's perspective the dict holds only what that seat could see: events whose stored
visibility includes it (public ones too), its own decisions, and its own calls, beliefs and
answers. Anything else is left out of the dict, not flagged, so it can never reach a browser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from stratagem.analysis.episodes import seat_of
from stratagem.analysis.transcript_calls import PlacedCall, block_end, gaps, place_calls
from stratagem.experiments.episode import DECISION_EVENT
from stratagem.experiments.store import (
    AnswerRecord,
    BeliefRecord,
    EpisodeRecord,
    EventRecord,
    ResultStore,
    RoundRecord,
)
from stratagem.web.data.calls import ToolResults, call_dicts, tool_results
from stratagem.web.data.perspective import Perspective


@dataclass
class _Step:
    round: int | None
    events: list[EventRecord] = field(default_factory=list)
    calls: list[PlacedCall] = field(default_factory=list)
    results: list[RoundRecord] = field(default_factory=list)
    beliefs: list[BeliefRecord] = field(default_factory=list)
    answers: list[AnswerRecord] = field(default_factory=list)


def episode_view(
    store: ResultStore, record: EpisodeRecord, perspective: Perspective
) -> dict[str, Any]:
    """The episode dict of `Sources.episode` (see `stratagem.web.data`)."""
    events = store.events(record.id)
    rounds = store.rounds(record.id)
    placed = place_calls(store.llm_calls(record.id), events)
    if rounds and not any(e.kind == DECISION_EVENT for e in events):
        steps = _round_steps(rounds, events, placed)  # a log made elsewhere: rounds only
    else:
        steps = _steps(events, placed)
    _attach(steps, rounds, store.beliefs(record.id), store.answers(record.id))
    seat = perspective.seat
    results = tool_results(placed)
    names = {k: seat_of(d).model for k, d in enumerate(record.players) if seat_of(d).model}
    return {
        "id": record.id,
        "experiment": record.experiment_id,
        "game": record.game,
        "status": record.status,
        "seed": record.seed if seat is None else None,  # the engine could replay hidden roles
        "payoffs": None if record.payoffs is None else list(record.payoffs),
        "perspective": str(perspective),
        "seats": [_seat(k, d) for k, d in enumerate(record.players)],
        "steps": [_step_dict(k, s, perspective, results, names) for k, s in enumerate(steps)],
        "error": record.error if seat is None else None,
    }


def _seat(k: int, descriptor: dict[str, Any]) -> dict[str, Any]:
    seat = seat_of(descriptor)
    return {
        "seat": k,
        "label": f"{seat.name} ({seat.kind})",
        "kind": seat.kind,
        "model": seat.model or None,
    }


def _steps(events: Sequence[EventRecord], calls: Sequence[PlacedCall]) -> list[_Step]:
    """Events cut where seats decide; each event's calls (those made right before it) with it."""
    before, after = gaps(list(calls), events)
    steps: list[_Step] = []
    i = 0
    while i < len(events):
        event = events[i]
        if event.kind == DECISION_EVENT or not steps:
            steps.append(_Step(event.round))
        end = i + 1
        if event.kind == DECISION_EVENT:
            end = block_end(events, i, lambda k: bool(before[k]))
        for k in range(i, end):
            steps[-1].calls += before[k]
            steps[-1].events.append(events[k])
        i = end
    if after:
        if not steps:
            steps.append(_Step(after[0].call.round))
        steps[-1].calls += after
    return steps


def _round_steps(
    rounds: Sequence[RoundRecord], events: Sequence[EventRecord], calls: Sequence[PlacedCall]
) -> list[_Step]:
    """One step per stored round, for a record without the loop's decisions; an event with no
    round of the record goes to the step before it, a call to its round's step (else the first)."""
    steps = [_Step(r.round) for r in rounds]
    of = {s.round: s for s in steps}
    current = steps[0]
    for event in events:
        current = of.get(event.round, current)
        current.events.append(event)
    for placed in calls:
        of.get(placed.call.round, steps[0]).calls.append(placed)
    return steps


def _attach(
    steps: list[_Step],
    rounds: Sequence[RoundRecord],
    beliefs: Sequence[BeliefRecord],
    answers: Sequence[AnswerRecord],
) -> None:
    """Each round's result, belief and answer under the last step of its round (or the last
    step, when no step has that round)."""
    if not steps and (rounds or beliefs or answers):
        steps.append(_Step(None))
    last: dict[int | None, _Step] = {s.round: s for s in steps}
    for row in rounds:
        last.get(row.round, steps[-1]).results.append(row)
    for belief in beliefs:
        last.get(belief.round, steps[-1]).beliefs.append(belief)
    for answer in answers:
        last.get(answer.round, steps[-1]).answers.append(answer)


def _step_dict(
    index: int, step: _Step, perspective: Perspective, results: ToolResults, names: dict[int, str]
) -> dict[str, Any]:
    own = perspective.owns
    return {
        "index": index,
        "round": step.round,
        "events": [_event(e) for e in step.events if _shown(e, perspective)],
        "calls": call_dicts([c for c in step.calls if own(c.call.player)], results, names),
        "results": [_result(r) for r in step.results],
        "beliefs": [_belief(b) for b in step.beliefs if own(b.player)],
        "answers": [_answer(a) for a in step.answers if own(a.player)],
    }


def _result(r: RoundRecord) -> dict[str, Any]:
    """A round's result: public, as the game shows every seat both moves after the round."""
    payoffs = None if r.payoffs is None else list(r.payoffs)
    tokens = None if r.tokens is None else list(r.tokens)
    return {"round": r.round, "actions": list(r.actions), "payoffs": payoffs, "valid": r.valid,
            "tokens": tokens}  # fmt: skip


def _belief(b: BeliefRecord) -> dict[str, Any]:
    return {
        "seat": b.player,
        "order": b.order,
        "about": b.about_player,
        "content": b.content,
        "score": b.score,
    }


def _answer(a: AnswerRecord) -> dict[str, Any]:
    return {
        "seat": a.player,
        "question_id": a.question_id,
        "question": a.question,
        "answer": a.answer,
        "parsed": a.parsed,
        "correct": a.correct,
    }


def _shown(event: EventRecord, perspective: Perspective) -> bool:
    """By the stored visibility; a seat's own records (its decision, its notes) are its own."""
    return perspective.sees(event.visible_to) or (
        event.player is not None and event.player == perspective.seat
    )


def _event(event: EventRecord) -> dict[str, Any]:
    return {
        "seq": event.seq,
        "kind": event.kind,
        "player": event.player,
        "data": event.data,
        "visible_to": None if event.visible_to is None else list(event.visible_to),
    }
