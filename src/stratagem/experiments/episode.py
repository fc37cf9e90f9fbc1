"""The one episode loop: every game, any seats.

Whoever `state.to_act()` names acts (several seats at once, concurrently); each seat's agent
receives only its own observation; the engine validates every action, and a decision that stays
invalid is handled by the game's own rule (`State.forfeit`: a forfeited round, a default move, a
skipped turn). Everything is recorded as it happens:

- one "decision" event per acting seat and step (what it played, whether it was valid, its
  attempts and tokens), seen by no seat;
- a step that completes a round of a repeated matrix game (a "round" event) is also a row of the
  rounds table, with each seat's validity and tokens, as the matrix-game analyses read it;
- the game's own events, with their visibility (public, some seats, or none), and before the
  first step what the game announces before anyone acts (`State.opening`);
- an "invalid" event for every invalid decision, and what architectures ask to keep (`notes`);
- answers to questions asked before the first step and after every step (`Agent.debrief`,
  given the observation stamped with the step: 0 before the first);
- the beliefs agents report (`Decision.beliefs` with the step, `Answer.beliefs` with the
  answer), as rows of the beliefs table.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from stratagem.agents.base import Agent, Belief, Decision
from stratagem.experiments.records import AnswerRecord
from stratagem.experiments.seating import Seating, seat_agent
from stratagem.experiments.step_watch import stepped
from stratagem.games.base import Event, Game, State
from stratagem.games.spaces import Action, IllegalAction

if TYPE_CHECKING:
    from stratagem.experiments.grid import EpisodeSpec
    from stratagem.experiments.store import ResultStore

DECISION_EVENT = "decision"
"""The hidden event recorded for each acting seat's move at each step (what it played, whether
valid, its attempts): what an import replays and a transcript places the model calls by."""
ROUND_EVENT = "round"
"""The event a repeated matrix game emits per round: stored as a row of the rounds table."""
HIDDEN: tuple[int, ...] = ()
"""Visibility of what only the record may see."""


class EpisodeSink(Protocol):
    """Where an episode's records go as it plays: the run's `ResultStore`, or on a Ray worker a
    recorder that streams them to the coordinator (`experiments.distributed`)."""

    def transaction(self) -> AbstractContextManager[None]: ...

    def add_event(
        self,
        episode_id: str,
        kind: str,
        data: Any = None,
        *,
        round: int | None = None,
        player: int | None = None,
        seq: int | None = None,
        visible_to: Sequence[int] | None = None,
    ) -> object: ...

    def add_round(
        self,
        episode_id: str,
        round: int,
        actions: Sequence[Any],
        payoffs: Sequence[float] | None = None,
        valid: bool = True,
        tokens: Sequence[int | None] | None = None,
    ) -> None: ...

    def add_answer(
        self,
        episode_id: str,
        round: int | None,
        player: int,
        question_id: str,
        answer: str | None,
        *,
        question: str | None = None,
        parsed: Any = None,
        correct: bool | None = None,
    ) -> None: ...

    def add_belief(
        self,
        episode_id: str,
        round: int | None,
        player: int,
        order: int,
        content: Any,
        *,
        about_player: int | None = None,
        score: float | None = None,
    ) -> None: ...

    def answers(self, episode_id: str) -> list[AnswerRecord]: ...


async def play_seats(
    store: EpisodeSink, spec: EpisodeSpec, seating: Seating
) -> tuple[list[float], int]:
    """Play a grid episode already opened in the store (`open_episode`): its seats made into
    agents, the game to its end. Returns the payoffs and how many answers could not be read
    (questions, probes, analyses stored as unreadable), which the run counts."""
    game = spec.build_game()
    agents = [seat_agent(seat, p, spec.id, seating, game) for p, seat in enumerate(spec.seats)]
    state = await play_episode(store, spec.id, game, agents, spec.seed)
    unread = 0
    if any(agent.debriefs for agent in agents):
        unread = sum(
            isinstance(a.parsed, dict) and a.parsed.get("relevant") is False
            for a in store.answers(spec.id)
        )
    return list(state.payoffs()), unread


def open_episode(store: ResultStore, experiment: str, spec: EpisodeSpec) -> None:
    """Store the episode's row and mark it running (clearing an interrupted attempt's rows)."""
    stage = spec.build_game().matrix()
    store.add_episode(
        spec.id,
        experiment,
        spec.game,
        spec.players(),
        spec.seed,
        spec=spec.stored(),
        labels=None if stage is None else [list(ls) for ls in stage.labels],
        game_payoffs=None if stage is None else stage.payoffs.tolist(),
    )
    store.start_episode(spec.id)


async def play_episode(
    store: EpisodeSink, episode_id: str, game: Game, agents: Sequence[Agent], seed: int
) -> State:
    """Play one episode to its end, recording every step; returns the final state."""
    state = game.initial_state(seed)
    step = 0
    opening = state.opening()
    if opening:
        with store.transaction():
            _record_events(store, episode_id, step, opening)
    await _debrief(store, episode_id, state, agents, step)
    await stepped(episode_id, step)
    while not state.is_terminal():
        step += 1
        acting = state.to_act()
        observations = {p: replace(state.observation(p), turn=step) for p in acting}
        replies = await asyncio.gather(*(agents[p].act(observations[p]) for p in acting))
        decisions = {p: _checked(state, p, d) for p, d in zip(acting, replies, strict=True)}
        actions: dict[int, Action | None] = {p: d.action for p, d in decisions.items()}
        state, events = state.forfeit(actions)
        t = observations[acting[0]].moment()
        with store.transaction():  # a step is stored whole, in one commit
            _record_step(store, episode_id, t, decisions, events)
        for p, agent in enumerate(agents):
            await agent.observe(state.observation(p), [e for e in events if e.visible(p)])
        await _debrief(store, episode_id, state, agents, step, t)
        await stepped(episode_id, step)
    return state


async def _debrief(
    store: EpisodeSink,
    episode_id: str,
    state: State,
    agents: Sequence[Agent],
    step: int,
    t: int | None = None,
) -> None:
    """Ask each agent's questions of this moment and store the answers (round `t`, the step's
    round, or the step itself before the first)."""
    for p, agent in enumerate(agents):
        if not agent.debriefs:
            continue
        for answer in await agent.debrief(replace(state.observation(p), turn=step)):
            store.add_answer(
                episode_id, step if t is None else t, p, answer.question_id, answer.raw,
                question=answer.question,
                parsed={"value": answer.parsed, "relevant": answer.relevant},
            )  # fmt: skip
            _record_beliefs(store, episode_id, step if t is None else t, p, answer.beliefs)


def _checked(state: State, player: int, decision: Decision) -> Decision:
    """The engine's check of an agent's action: an illegal one makes the decision invalid, so
    nothing an agent returns reaches the state unless its space allows it."""
    if decision.action is None:
        return decision
    try:
        state.legal(player).validate(decision.action)
    except IllegalAction as exc:
        error = f"the engine refused the action: {exc}"
        return replace(decision, action=None, valid=False, error=error)
    return decision


def _record_step(
    store: EpisodeSink,
    episode_id: str,
    t: int,
    decisions: Mapping[int, Decision],
    events: Sequence[Event],
) -> None:
    rounds = [e for e in events if e.kind == ROUND_EVENT]
    for e in rounds:
        n = len(e.data["actions"])
        store.add_round(
            episode_id,
            int(e.data["round"]),
            list(e.data["actions"]),
            list(e.data["payoffs"]),
            valid=all(d.valid for d in decisions.values()),
            tokens=[decisions[p].tokens if p in decisions else 0 for p in range(n)],
        )
    for p, d in decisions.items():
        store.add_event(
            episode_id, DECISION_EVENT, _decision_data(d), round=t, player=p, visible_to=HIDDEN
        )
        for kind, data in d.notes.items():
            store.add_event(episode_id, kind, data, round=t, player=p, visible_to=HIDDEN)
        _record_beliefs(store, episode_id, t, p, d.beliefs)
        if not d.valid:
            store.add_event(
                episode_id, "invalid", {"error": d.error, "texts": list(d.raw),
                                        "played": d.action}, round=t, player=p, visible_to=HIDDEN,
            )  # fmt: skip
    _record_events(store, episode_id, t, [e for e in events if e.kind != ROUND_EVENT])


def _record_events(store: EpisodeSink, episode_id: str, t: int, events: Sequence[Event]) -> None:
    """The game's own events, each with its visibility."""
    for e in events:
        visible = None if e.visible_to is None else sorted(e.visible_to)
        store.add_event(episode_id, e.kind, dict(e.data), round=t, visible_to=visible)


def _record_beliefs(
    store: EpisodeSink, episode_id: str, t: int, player: int, beliefs: Sequence[Belief]
) -> None:
    for b in beliefs:
        store.add_belief(
            episode_id, t, player, b.order, b.content, about_player=b.about_player, score=b.score
        )


def _decision_data(d: Decision) -> dict[str, Any]:
    return {"action": d.action, "valid": d.valid, "attempts": d.attempts, "tokens": d.tokens}
