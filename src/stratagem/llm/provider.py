"""The provider interface: one model behind one async method."""

from __future__ import annotations

from typing import Protocol

from stratagem.llm.types import Request, Response


class Provider(Protocol):
    """A model client. `complete` returns ONE sample; the pipeline asks n times for n samples.

    Implementations raise `TransientError` for failures worth retrying and `PermanentError` for the
    rest. They report usage and latency; the pipeline adds cost, caching, limits and retries.
    """

    model: str
    """The full `provider/model` string."""

    async def complete(self, request: Request, sample: int) -> Response: ...

    async def aclose(self) -> None: ...
