"""What a worker actor and the coordinator say to each other.

A worker streams batches of messages (its `messages` generator): the store writes of its
episodes, each model call's record, the budget's charges and the cache's new answers, in the order
they happened, and questions (`Ask`) the coordinator answers by calling the worker's `answer`.
Only facts with no secret in them travel: requests, key-masked responses, counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stratagem.errors import StratagemError
from stratagem.llm.errors import BudgetExceeded, ModelRefused
from stratagem.llm.pipeline import CallContext
from stratagem.llm.pool_stats import EndpointFigures
from stratagem.llm.types import Request, Response

Op = tuple[str, tuple[Any, ...], dict[str, Any]]
"""One store write: the `EpisodeSink` method's name, its arguments (the episode id first)."""


@dataclass(frozen=True)
class Writes:
    """Store writes applied in one transaction (an episode's step, or one write)."""

    ops: tuple[Op, ...]


@dataclass(frozen=True)
class CallRecord:
    """One model call, for the run's recorder (`CallRecorder`'s arguments)."""

    model: str
    context: CallContext
    request: Request
    response: Response | None
    error: str | None
    retries: int
    request_json: str | None
    cache_key: str | None = None


@dataclass(frozen=True)
class Charge:
    cost: float
    tokens: int


@dataclass(frozen=True)
class CachePut:
    key: str
    model: str
    request: Request
    response: Response
    request_json: str | None


@dataclass(frozen=True)
class QuotaUsed:
    model: str
    tokens: int
    reservation: int | None


@dataclass(frozen=True)
class SlotFreed:
    """A slot of the entry's `max_concurrency` given back."""

    entry: str


@dataclass(frozen=True)
class ServerFreed:
    """A slot of one of the entry's servers given back (`ServerSlots.give`)."""

    entry: str
    url: str
    tokens: int
    reservation: int | None


@dataclass(frozen=True)
class Ask:
    """A question the worker awaits: "lookup" (key), "admit" (), "acquire" (model, limits,
    estimated tokens), "slot" (entry: a slot of its `max_concurrency`), "server" (entry, urls,
    estimated tokens, seconds to wait: `ServerSlots.take`)."""

    id: int
    what: str
    args: tuple[Any, ...]


@dataclass(frozen=True)
class Failure:
    """An episode's end by a `StratagemError`, rebuilt on the coordinator as the same kind."""

    kind: str
    message: str
    model: str | None = None

    @staticmethod
    def of(exc: StratagemError) -> Failure:
        if isinstance(exc, ModelRefused):
            return Failure("refused", str(exc), exc.model)
        return Failure("budget" if isinstance(exc, BudgetExceeded) else "error", str(exc))

    def error(self) -> StratagemError:
        if self.kind == "refused":
            return ModelRefused(self.message, self.model or "")
        if self.kind == "budget":
            return BudgetExceeded(self.message)
        return StratagemError(self.message)


@dataclass(frozen=True)
class Ended:
    """An episode played to its end (`payoffs`), or failed (`failure`)."""

    episode: str
    payoffs: list[float] | None
    unread: int = 0
    failure: Failure | None = None


@dataclass(frozen=True)
class Crashed:
    """An episode raised what no episode should (a bug): the run stops with its traceback."""

    episode: str
    traceback: str


@dataclass(frozen=True)
class PoolFigures:
    """A worker's endpoint pools' figures now, by model entry (sent every `REPORT_S`)."""

    worker: str
    pools: dict[str, list[EndpointFigures]]


Message = (
    Writes | CallRecord | Charge | CachePut | QuotaUsed | SlotFreed | ServerFreed | Ask | Ended
    | Crashed | PoolFigures
)  # fmt: skip

Reply = tuple[int, Any, Failure | None]
"""An `Ask`'s answer: (its id, the value, or the failure to raise)."""
