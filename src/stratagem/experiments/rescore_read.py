"""One stored episode read again by changed agents, move by move (docs/rescore.md).

The episode is played again through the one episode loop (`play_episode`) from its game, seed and
seats, the LLM seats built from the changed agent entries and answered from the record
(`rescore_record`); every other seat plays its stored moves. Each LLM move is compared with the
stored one: it *flips* when the action played or its validity differs. A reading that needs a call
the record never sent (a re-ask of a reply the old parser accepted) makes the move invalid, with
the seat's invalid-output policy, as a run would have had the re-ask failed; a first ask the
record never saw (the changed agent asks another question) cannot be compared and changes the
episode there too.

`read_episode` follows the stored moves to the end whatever the new reading, so every stored
reply is read (the flips after the first are readings on grounds the new parser would not have
reached) and nothing is written. `write_episode` then stores the rescored episode: whole when
nothing changed, or cut before its first changed move. `fork_episode` plays a changed episode
on from the start with clients whose answers come from the record first, so only the calls from
the changed move on reach a provider.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stratagem.agents.base import Agent, Decision
from stratagem.agents.parsing import InvalidPolicy
from stratagem.errors import StratagemError
from stratagem.experiments.episode import DECISION_EVENT, play_episode
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.records import EventRecord, dump_json
from stratagem.experiments.rescore_record import NotInRecord
from stratagem.experiments.seating import SEAT_AGENTS, Seating, seat_seed
from stratagem.experiments.store import ResultStore
from stratagem.games.base import Event, Observation, State
from stratagem.games.spaces import Choice, IllegalAction
from stratagem.llm.pipeline import CallContext, CallRecorder, ModelClient
from stratagem.llm.types import Request, Response

if TYPE_CHECKING:
    from stratagem.agents.questions import Answer

_SHOWN = 40
"""Characters of an action a flip's line shows."""


@dataclass(frozen=True)
class Flip:
    """A stored move the changed agent reads differently."""

    step: int
    seat: int
    old: Any
    old_valid: bool
    new: Any
    new_valid: bool
    why: str

    def text(self) -> str:
        return (
            f"move {self.step}, seat {self.seat}: {_shown(self.old, self.old_valid)} -> "
            f"{_shown(self.new, self.new_valid)} ({self.why})"
        )


@dataclass
class Reading:
    """What reading one episode again found."""

    moves: int = 0
    """LLM moves compared with the stored ones."""
    flips: list[Flip] = field(default_factory=list)
    unread: int = 0
    """LLM moves the changed agent asked about differently (no stored reply): not compared."""
    changed_at: int | None = None
    """The first move (step) that changed; None: the episode is unchanged."""
    why: str = ""
    """What changed there, in words."""
    calls: list[tuple[int, str, int, int]] = field(default_factory=list)
    """(step, model, input tokens, output tokens) of every call answered from the record: a
    fork's plan counts those from its changed move on."""
    payoffs: tuple[float, ...] = ()
    """The engine's payoffs at the end of the stored moves."""

    def change(self, step: int, why: str) -> None:
        if self.changed_at is None or step < self.changed_at:
            self.changed_at, self.why = step, why

    def calls_from(self, step: int) -> list[tuple[str, int, int]]:
        """(model, input tokens, output tokens) of the calls the source made from `step` on:
        what a fork from there is expected to send again."""
        return [(model, i, o) for at, model, i, o in self.calls if at >= step]


class Cut(Exception):
    """Raised by every seat at the move an episode is cut before."""


@dataclass
class _Clock:
    """The step being played, and each seat's calls answered so far (a record-only client's
    recorder counts them): a miss after a hit in one decision is a re-ask."""

    step: int = 0
    hits: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Source:
    """What the record holds of one episode: its moves, in order, by seat."""

    episode_id: str
    decisions: tuple[EventRecord, ...]
    payoffs: tuple[float, ...] | None

    def queues(self) -> dict[int, deque[EventRecord]]:
        out: dict[int, deque[EventRecord]] = {}
        for event in self.decisions:
            assert event.player is not None
            out.setdefault(event.player, deque()).append(event)
        return out


def source_of(episode_id: str, events: Sequence[EventRecord], payoffs: Any) -> Source:
    decisions = tuple(e for e in events if e.kind == DECISION_EVENT)
    for e in decisions:
        if e.player is None or not isinstance(e.data, Mapping) or "action" not in e.data:
            raise StratagemError(f"episode '{episode_id}': a stored move names no seat or action")
    return Source(episode_id, decisions, None if payoffs is None else tuple(payoffs))


def stored_decision(event: EventRecord) -> Decision:
    data = event.data
    return Decision(
        data["action"],
        valid=data.get("valid") is not False,
        attempts=int(data.get("attempts") or 0),
        tokens=int(data.get("tokens") or 0),
    )


class _StoredMoves(Agent):
    """A seat that plays its stored moves (a strategy, a script, a person): nothing of it is
    re-read, and it plays exactly what the record says."""

    def __init__(self, name: str, moves: deque[EventRecord], episode_id: str) -> None:
        self.name = name
        self.moves = moves
        self.episode_id = episode_id

    async def act(self, observation: Observation) -> Decision:
        return stored_decision(_next(self.moves, self.episode_id, observation))


class _Rereader(Agent):
    """The changed agent of an LLM seat, its every move compared with the stored one."""

    def __init__(
        self,
        inner: Agent,
        seat: int,
        moves: deque[EventRecord],
        reading: Reading,
        clock: _Clock,
        episode_id: str,
        cut_at: int | None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.seat = seat
        self.moves = moves
        self.reading = reading
        self.clock = clock
        self.episode_id = episode_id
        self.cut_at = cut_at

    async def act(self, observation: Observation) -> Decision:
        step = observation.turn
        if self.cut_at is not None and step >= self.cut_at:
            raise Cut
        stored = _next(self.moves, self.episode_id, observation)
        old = stored_decision(stored)
        self.clock.step = step
        hits = self.clock.hits.get(self.seat, 0)
        why = "read differently"
        try:
            new = _checked(observation, await self.inner.act(observation))
        except NotInRecord as miss:
            if self.clock.hits.get(self.seat, 0) == hits:  # its first call: another question
                self.reading.unread += 1
                self.reading.change(step, f"seat {self.seat} asks what the record never asked")
                return self._after(step, old, old)
            new = self._invalid(observation, miss)
            why = f"its reading needs a {miss.purpose} call the run never sent"
        self.reading.moves += 1
        if _same(old, new):
            return self._after(step, old, new)
        flip = Flip(step, self.seat, old.action, old.valid, new.action, new.valid, why)
        self.reading.flips.append(flip)
        self.reading.change(step, flip.text())
        return self._after(step, old, new)

    def _after(self, step: int, old: Decision, new: Decision) -> Decision:
        """What the engine plays: the new decision while nothing changed, then the stored one,
        so the episode follows its record and every later reply is read too."""
        changed = self.reading.changed_at is not None and self.reading.changed_at <= step
        return old if changed else new

    def _invalid(self, observation: Observation, miss: NotInRecord) -> Decision:
        """The move when its reading needs a call the record never sent: invalid, with the
        seat's invalid-output policy, as if every re-ask had failed."""
        error = f"no stored reply: the new reading needs a {miss.purpose} call the run never sent"
        decision = Decision(None, valid=False, error=error)
        policy = getattr(self.inner, "invalid", None)
        if isinstance(policy, InvalidPolicy):
            space = observation.legal
            decision = policy.apply(decision, space.labels if isinstance(space, Choice) else ())
        return decision

    async def observe(self, observation: Observation, events: Sequence[Event] = ()) -> None:
        try:
            await self.inner.observe(observation, events)
        except NotInRecord:  # an architecture that calls its model between moves
            step = observation.turn + 1
            self.reading.change(step, f"seat {self.seat} makes a call the record lacks")
            if self.cut_at is not None:
                raise Cut from None

    async def debrief(self, observation: Observation) -> Sequence[Answer]:
        try:
            return await self.inner.debrief(observation)
        except NotInRecord:
            step = observation.turn + 1
            self.reading.change(step, f"seat {self.seat} answers a question the record lacks")
            if self.cut_at is not None:
                raise Cut from None
            return ()

    @property
    def debriefs(self) -> bool:
        return self.inner.debriefs


def _next(moves: deque[EventRecord], episode_id: str, observation: Observation) -> EventRecord:
    if not moves:
        raise StratagemError(
            f"episode '{episode_id}': the engine asks seat {observation.player} to move at step "
            f"{observation.turn}, where its record has no move (was the game changed since?)"
        )
    return moves.popleft()


def _checked(observation: Observation, decision: Decision) -> Decision:
    """The engine's check, as the episode loop makes it (an illegal action is invalid)."""
    if decision.action is None or observation.legal is None:
        return decision
    try:
        observation.legal.validate(decision.action)
    except IllegalAction as exc:
        return Decision(None, valid=False, error=f"the engine refused the action: {exc}")
    return decision


def _plain(value: Any) -> Any:
    return json.loads(dump_json(value, "an action"))


def _same(old: Decision, new: Decision) -> bool:
    return old.valid == new.valid and _plain(old.action) == _plain(new.action)


def _shown(action: Any, valid: bool) -> str:
    text = "nothing" if action is None else json.dumps(_plain(action), ensure_ascii=False)
    if len(text) > _SHOWN:
        text = text[: _SHOWN - 1] + "…"
    return text if valid else f"{text} (invalid)"


class _Discard:
    """Where a reading's records go: nowhere (`read_episode` writes nothing)."""

    def transaction(self) -> AbstractContextManager[None]:
        return nullcontext()

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
    ) -> object:
        return None

    def add_round(
        self,
        episode_id: str,
        round: int,
        actions: Sequence[Any],
        payoffs: Sequence[float] | None = None,
        valid: bool = True,
        tokens: Sequence[int | None] | None = None,
    ) -> None:
        return None

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
    ) -> None:
        return None

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
    ) -> None:
        return None

    def answers(self, episode_id: str) -> list[Any]:
        return []


ClientsFor = Callable[[CallRecorder], Mapping[str, ModelClient]]
"""(recorder) -> the record-only clients by model entry name, with that recorder."""


def _seats(
    spec: EpisodeSpec,
    source: Source,
    episode_id: str,
    clients: Mapping[str, ModelClient],
    reading: Reading,
    clock: _Clock,
    cut_at: int | None,
) -> list[Agent]:
    game = spec.build_game()
    seating = Seating(clients)
    queues = source.queues()
    agents: list[Agent] = []
    for p, seat in enumerate(spec.seats):
        moves = queues.get(p, deque())
        if seat.kind != "llm":
            agents.append(_StoredMoves(seat.label, moves, source.episode_id))
            continue
        agent = SEAT_AGENTS["llm"](seat, p, seating, game)
        agent.reset(seat_seed(source.episode_id, p, "llm"), episode_id)
        agents.append(_Rereader(agent, p, moves, reading, clock, source.episode_id, cut_at))
    return agents


def counting(clock: _Clock, reading: Reading) -> CallRecorder:
    """The recorder of a reading: counts each seat's answered calls and their tokens."""

    def record(
        model: str,
        context: CallContext,
        request: Request,
        response: Response | None,
        error: str | None,
        retries: int,
        request_json: str | None,
        cache_key: str | None = None,
    ) -> None:
        if context.player is not None:
            clock.hits[context.player] = clock.hits.get(context.player, 0) + 1
        if response is not None:
            usage = response.usage
            reading.calls.append((clock.step, model, usage.input_tokens, usage.output_tokens))

    return record


async def read_episode(
    spec: EpisodeSpec, source: Source, episode_id: str, make_clients: ClientsFor
) -> Reading:
    """Read every stored move of `source` again with the agents of `spec` (module docstring);
    nothing is written. `make_clients(recorder)` gives the record-only clients."""
    reading, clock = Reading(), _Clock()
    clients = make_clients(counting(clock, reading))
    agents = _seats(spec, source, episode_id, clients, reading, clock, None)
    state = await play_episode(_Discard(), episode_id, spec.build_game(), agents, spec.seed)
    left = sum(len(a.moves) for a in agents if isinstance(a, _Rereader | _StoredMoves))
    if left:
        raise StratagemError(
            f"episode '{source.episode_id}': the game ends with {left} stored moves not "
            "played (was the game changed since?)"
        )
    reading.payoffs = tuple(float(x) for x in state.payoffs())
    return reading


async def write_episode(
    store: ResultStore,
    spec: EpisodeSpec,
    source: Source,
    episode_id: str,
    clients: Mapping[str, ModelClient],
    cut_at: int | None,
) -> State | None:
    """Play the rescored episode into `store` (opened, started) from the record: to its end
    (returns the final state), or up to the move `cut_at` (returns None). The clients are
    record-only ones whose recorder stores the calls."""
    reading, clock = Reading(), _Clock()
    agents = _seats(spec, source, episode_id, clients, reading, clock, cut_at)
    try:
        state = await play_episode(store, episode_id, spec.build_game(), agents, spec.seed)
    except Cut:
        return None
    if reading.changed_at is not None:  # the reading found nothing here: the code is not pure
        raise StratagemError(
            f"episode '{source.episode_id}': read twice, it changed the second time only "
            f"({reading.why}); a seat's agent is not deterministic"
        )
    return state


async def fork_episode(
    store: ResultStore,
    spec: EpisodeSpec,
    source: Source,
    episode_id: str,
    clients: Mapping[str, ModelClient],
) -> State:
    """Play a changed episode from its start to its end with `clients` that answer from the
    record where they can (the calls before the changed move) and call the model otherwise;
    every seat plays live, seeded as the source episode was."""
    game = spec.build_game()
    seating = Seating(clients)
    agents = []
    for p, seat in enumerate(spec.seats):
        if seat.kind not in SEAT_AGENTS or seat.human:
            raise StratagemError(f"episode '{source.episode_id}': seat {p} was played by a person")
        agent = SEAT_AGENTS[seat.kind](seat, p, seating, game)
        agent.reset(seat_seed(source.episode_id, p, seat.kind), episode_id)
        agents.append(agent)
    return await play_episode(store, episode_id, game, agents, spec.seed)
