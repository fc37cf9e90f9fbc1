"""The provider interface: one model behind one async method."""

from __future__ import annotations

from typing import Protocol

from stratagem.llm.types import Request, Response


class Provider(Protocol):
    """A model client. `complete` returns ONE sample; the pipeline asks n times for n samples.

    Implementations raise `TransientError` for failures worth retrying and `PermanentError` for the
    rest. They report usage and latency; the pipeline adds cost, caching, limits and retries.

    A provider that sends a credential also has `secrets() -> tuple[str, ...]` (see
    `KeyHolder`): the values it sends, which the pipeline masks in every reply and error.
    """

    model: str
    """The full `provider/model` string."""

    async def complete(self, request: Request, sample: int) -> Response: ...

    async def aclose(self) -> None: ...


class KeyHolder(Protocol):
    """The optional part of a provider that holds a key."""

    def secrets(self) -> tuple[str, ...]:
        """The credential values this provider sends (its API key), for masking: a server may
        echo them back in a normal reply."""
        ...


def provider_secrets(provider: Provider) -> tuple[str, ...]:
    """What `provider.secrets()` returns; nothing for a provider without the method (one that
    sends no key: local, scripted, or written before the method existed)."""
    secrets = getattr(provider, "secrets", None)
    return tuple(s for s in secrets() if s) if callable(secrets) else ()
