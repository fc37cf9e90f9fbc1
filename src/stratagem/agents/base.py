"""The one interface the runner knows: an `Agent` turns an observation into a `Decision`.

A `Decision` carries the action together with everything needed to audit it later (the messages
sent, every raw reply, the parse errors, the tokens spent), so invalid or re-asked rounds can be
counted in every metric instead of disappearing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from stratagem.games.base import Event, Observation
from stratagem.games.spaces import Action
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message, Request, Response

if TYPE_CHECKING:
    from stratagem.agents.questions import Answer


@dataclass(frozen=True)
class Belief:
    """A belief an agent reports about the game, kept in the store's beliefs table
    (`ResultStore.add_belief`) so that transcripts and metrics can read what an agent believed,
    not only what it did (seed-004 §7: the PGM agent's F and M matrices).

    `order` is the order of theory of mind: 0 the agent's view of its own situation (seed-002's
    V0, its own item values), 1 what it believes about another player (`about_player`: seed-002's
    V1, seed-004's F), 2 what it believes another player believes (V2, seed-004's M), and so on;
    `content` is plain JSON-able data whose shape the architecture documents; `score` an
    optional number (a probability, a confidence).
    """

    order: int
    content: Any
    about_player: int | None = None
    score: float | None = None


@dataclass(frozen=True)
class Decision:
    """One decision of one agent, with its trace.

    `valid` is False whenever the agent failed to produce a parseable legal action, even if a
    fallback action was played (the "default:<label>" invalid policy): metrics must be able to
    count such rounds.
    """

    action: Action | None
    """The action to play; None when invalid and the policy is to forfeit."""
    valid: bool = True
    attempts: int = 0
    """Model calls made for this decision, re-asks included (0 for rule-based agents)."""
    raw: tuple[str, ...] = ()
    """Every reply text, one per attempt, oldest first."""
    errors: tuple[str, ...] = ()
    """The parse error of each failed attempt, aligned with the first entries of `raw`."""
    error: str | None = None
    """Why the decision is invalid (the last parse error); None when valid."""
    messages: tuple[dict[str, Any], ...] = ()
    """The conversation of the last attempt as sent to the model, then its reply; plain data."""
    tokens: int = 0
    """Input plus output tokens over every call of this decision, re-asks included."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Architecture-specific data: answers to questions, beliefs, the invalid policy used, ..."""
    notes: Mapping[str, Any] = field(default_factory=dict)
    """What the architecture wants kept beside the decision, by kind (a self-consistency vote):
    the runner records each as an event of that kind, seen by no seat."""
    beliefs: tuple[Belief, ...] = ()
    """Beliefs formed while deciding; the runner stores them with the step."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["extra"] = dict(self.extra)
        data["notes"] = dict(self.notes)
        return data


def messages_to_data(messages: Iterable[Message]) -> tuple[dict[str, Any], ...]:
    """Messages as plain dicts (what the store and the JSONL export hold)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            item["tool_calls"] = [asdict(c) for c in m.tool_calls]
        if m.tool_call_id is not None:
            item["tool_call_id"] = m.tool_call_id
        out.append(item)
    return tuple(out)


class LLMClient(Protocol):
    """What LLM agents call: `stratagem.llm.pipeline.ModelClient`, or a test double of it."""

    model: str

    async def generate(self, request: Request, context: CallContext = ...) -> list[Response]: ...


class Agent(ABC):
    """A player the runner can seat in a game.

    The runner calls `reset` before each episode, `act` whenever the agent must move, `observe`
    after each step with the events it may see (architectures that keep a conversation use it to
    tell the model the result of a round), and `debrief` after each step to collect answers to
    questions about the game (seed-001 §7), when `questions` is on.
    """

    name: str
    questions: bool = False
    """Answer seed-001's comprehension questions after every round (architectures that can)."""

    @abstractmethod
    async def act(self, observation: Observation) -> Decision: ...

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        """Forget the previous episode; `seed` drives all of the agent's randomness."""
        return None

    async def observe(self, observation: Observation, events: Sequence[Event] = ()) -> None:
        """Receive what happened after a step; the default ignores it."""
        return None

    async def debrief(self, observation: Observation) -> Sequence[Answer]:
        """Answers to the questions asked after a step; none unless the architecture asks them."""
        return ()

    @property
    def debriefs(self) -> bool:
        """Whether `debrief` may answer anything: the episode loop builds no observation for an
        agent that never does (at hundreds of episodes in flight, each one costs)."""
        return type(self).debrief is not Agent.debrief
