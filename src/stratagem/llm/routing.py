"""Which episode a model call belongs to, for a provider that routes by it (an endpoint pool).

The provider interface takes only the request; the pipeline sets this for the duration of each
provider call so that a pool can keep one episode's calls on one server (its growing prompt then
stays in that server's prefix cache) without every provider taking a new argument.
"""

from __future__ import annotations

from contextvars import ContextVar

routing_key: ContextVar[str | None] = ContextVar("stratagem_routing_key", default=None)
"""The episode id of the call in progress in this task; None outside an episode."""
