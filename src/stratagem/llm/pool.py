"""A pool of OpenAI-compatible servers of one model, behind the one-provider interface.

A model entry's `endpoints:` (issue 26) become one provider the pipeline calls as any other:

- *Health first*: before the first call every server's `/models` must name the model. The pool
  starts as soon as one is healthy, waiting up to `health_wait_s` for any; a server that did not
  answer is re-checked in the background with backoff; one that answered without the model, or
  refused the key (401, 403, 404), is out.
- *Routing*: a call goes to the usable server ranked first by rendezvous hashing of its episode
  id (`stratagem.llm.routing`), so an episode's growing prompt stays in one server's prefix cache
  and adding a server moves few episodes; when that server is saturated (its concurrency in
  flight) the least-loaded usable one takes the call.
- *Failover*: a connection error, timeout, 5xx or malformed reply cools the server down
  (0.5 s doubling to 30 s, until it answers again; the calls in flight when it failed are one
  failure, not one each) and the call moves at once to a server it has not tried; once cooled,
  one call at a time probes it until one succeeds; a 429 halves that server's concurrency
  (floor 1), and every `RAISE_EVERY` successes give one back up to its cap. These moves are not
  the pipeline's retries: only when every server has failed this attempt does its last error
  reach the pipeline, which backs off and retries as for one server (so the attempts a call can
  make stay bounded). Nothing is charged for a failed attempt (no answer, no usage); the one
  answer is charged once, by the pipeline.
- A 401, 403 or 404 takes that server out; when every server is out the call raises a
  `PermanentError` naming each and why, which stops the run.

The server that answered is kept in `Response.endpoint` (stored with the call); it is not part of
the cache key, so results do not depend on which one answered.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from stratagem.llm.errors import PermanentError, TransientError
from stratagem.llm.providers.openai import OpenAIProvider
from stratagem.llm.providers.openai import create as create_openai
from stratagem.llm.routing import routing_key
from stratagem.llm.types import Request, Response

if TYPE_CHECKING:
    from stratagem.llm.registry import ModelConfig

HEALTH_WAIT_S = 30.0
"""Default wait for a first healthy server (`params.health_wait_s` overrides it)."""
COOL_BASE_S, COOL_MAX_S = 0.5, 30.0
RAISE_EVERY = 10
"""Successes after which a server whose concurrency a 429 lowered gets one slot back."""
OUT_STATUSES = frozenset({401, 403, 404})
"""Statuses that say this server will never answer this model: bad key, no access, no model."""
HEALTHY, DOWN, COOLING, OUT = "healthy", "down", "cooling", "out"


@dataclass
class Endpoint:
    """One server and what the pool knows of it."""

    url: str
    provider: OpenAIProvider
    ceiling: float
    """Its configured max_concurrency (inf: none)."""
    limit: float
    """Its concurrency now: the ceiling, less what 429s took."""
    state: str = DOWN
    reason: str = "not checked yet"
    in_flight: int = 0
    failures: int = 0
    cool_until: float = 0.0
    successes: int = 0

    def usable(self, now: float) -> bool:
        return self.state == HEALTHY or (self.state == COOLING and now >= self.cool_until)


def rendezvous(key: str, url: str) -> bytes:
    """The score of `url` for `key`: highest wins (stable, and independent of the other URLs)."""
    return hashlib.blake2b(f"{key}\0{url}".encode(), digest_size=8).digest()


class EndpointPool:
    """The provider of a model with several servers; see the module docstring."""

    def __init__(
        self, model: str, endpoints: list[Endpoint], health_wait_s: float = HEALTH_WAIT_S
    ) -> None:
        self.model = model
        self.endpoints = endpoints
        self.health_wait_s = health_wait_s
        self._health: asyncio.Task[None] | None = None
        self._rechecks: set[asyncio.Task[None]] = set()
        self._waiters: list[asyncio.Future[None]] = []

    async def complete(self, request: Request, sample: int) -> Response:
        await self._ready()
        key = routing_key.get() or (request.messages[0].content if request.messages else "")
        tried: set[str] = set()
        last: Exception | None = None
        while True:
            endpoint = await self._acquire(key, tried)
            if endpoint is None:  # every live server failed this attempt: the pipeline retries
                if isinstance(last, TransientError):
                    raise last
                each = "; ".join(f"{e.url} ({e.state} {e.reason})" for e in self.endpoints)
                raise TransientError(f"{self.model}: no endpoint can take the call now: {each}")
            tried.add(endpoint.url)
            try:
                response = await endpoint.provider.complete(request, sample)
            except TransientError as exc:
                self._failed(endpoint, exc)
                last = exc
                continue
            except PermanentError as exc:
                if exc.status not in OUT_STATUSES:
                    raise  # the request's fault (400): every server would refuse it
                self._take_out(endpoint, f"HTTP {exc.status}")
                last = exc
                continue
            finally:
                endpoint.in_flight -= 1
                self._wake()
            self._succeeded(endpoint)
            return replace(response, endpoint=endpoint.url)

    async def _acquire(self, key: str, tried: set[str]) -> Endpoint | None:
        """A server for this call, its slot taken; None when every live one was tried."""
        while True:
            if all(e.state == OUT for e in self.endpoints):
                raise PermanentError(self._all_out())
            now = time.monotonic()
            left = [
                e for e in self.endpoints if e.url not in tried and e.state in (HEALTHY, COOLING)
            ]
            if not left:
                return None
            usable = [e for e in left if e.usable(now)]
            cooled = min((e.cool_until - now for e in left if not e.usable(now)), default=None)
            if not usable:  # all cooling: wait for the first to be tried again
                await self._wait(cooled or 0.0)
                continue
            preferred = max(usable, key=lambda e: rendezvous(key, e.url))
            roomy = [e for e in usable if e.in_flight < _room(e)]
            if roomy:
                pick = preferred if preferred in roomy else min(roomy, key=_load)
                pick.in_flight += 1
                return pick
            await self._wait(COOL_MAX_S if cooled is None else cooled)  # or a slot frees

    def _failed(self, endpoint: Endpoint, exc: TransientError) -> None:
        endpoint.successes = 0
        if exc.status == 429:  # it answered: lower its concurrency, keep it
            endpoint.limit = max(1.0, min(endpoint.limit, endpoint.in_flight) // 2)
            return
        now = time.monotonic()
        if endpoint.state == COOLING and now < endpoint.cool_until:
            return  # a call sent before it cooled down: the same outage, not a longer one
        endpoint.failures += 1
        cool = min(COOL_MAX_S, COOL_BASE_S * 2 ** (endpoint.failures - 1))
        endpoint.state, endpoint.reason = COOLING, str(exc).removeprefix(f"{self.model}: ")
        endpoint.cool_until = now + cool

    def _succeeded(self, endpoint: Endpoint) -> None:
        if endpoint.state != OUT:  # taken out by another call meanwhile: it stays out
            endpoint.state, endpoint.failures, endpoint.reason = HEALTHY, 0, ""
        endpoint.successes += 1
        if endpoint.limit < endpoint.ceiling and endpoint.successes % RAISE_EVERY == 0:
            endpoint.limit += 1

    def _take_out(self, endpoint: Endpoint, reason: str) -> None:
        endpoint.state, endpoint.reason = OUT, reason
        self._wake()

    def _all_out(self) -> str:
        each = "; ".join(f"{e.url} ({e.reason})" for e in self.endpoints)
        return f"{self.model}: every endpoint is out: {each}"

    async def _wait(self, seconds: float) -> None:
        """Until a slot frees or a server's state changes, at most `seconds`."""
        future = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        await asyncio.wait({future}, timeout=max(0.0, seconds))
        if future in self._waiters:
            self._waiters.remove(future)

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(None)

    # -- health ------------------------------------------------------------------------------

    async def _ready(self) -> None:
        """Health-check every server once (per event loop) before the first call."""
        loop = asyncio.get_running_loop()
        if self._health is None or self._health.get_loop() is not loop:
            self._health = loop.create_task(self._start())
        await asyncio.shield(self._health)

    async def _start(self) -> None:
        deadline = time.monotonic() + self.health_wait_s
        await asyncio.gather(*(self._check(e) for e in self.endpoints))
        delay = COOL_BASE_S
        while not any(e.state == HEALTHY for e in self.endpoints):
            down = [e for e in self.endpoints if e.state == DOWN]
            if not down:
                raise PermanentError(self._all_out())
            if time.monotonic() + delay > deadline:
                each = "; ".join(f"{e.url} ({e.reason})" for e in self.endpoints)
                raise PermanentError(
                    f"{self.model}: no endpoint healthy after {self.health_wait_s:g} s: {each}"
                )
            await asyncio.sleep(delay)
            delay = min(COOL_MAX_S, delay * 2)
            await asyncio.gather(*(self._check(e) for e in down))
        for endpoint in self.endpoints:
            if endpoint.state == DOWN:
                task = asyncio.get_running_loop().create_task(self._recheck(endpoint))
                self._rechecks.add(task)
                task.add_done_callback(self._rechecks.discard)

    async def _recheck(self, endpoint: Endpoint) -> None:
        """Re-check a server that did not answer, with backoff, until it does."""
        delay = COOL_BASE_S
        while endpoint.state == DOWN:
            await asyncio.sleep(delay)
            delay = min(COOL_MAX_S, delay * 2)
            await self._check(endpoint)
        self._wake()

    async def _check(self, endpoint: Endpoint) -> None:
        """One health check: healthy if `/models` names the model, out if it answers otherwise."""
        wanted = endpoint.provider.api_model
        try:
            ids = await endpoint.provider.model_ids()
        except TransientError as exc:
            endpoint.state, endpoint.reason = DOWN, str(exc).removeprefix(f"{self.model}: ")
            return
        except PermanentError as exc:
            endpoint.state, endpoint.reason = OUT, f"health check: HTTP {exc.status}"
            return
        if wanted in ids:
            endpoint.state, endpoint.reason = HEALTHY, ""
        else:
            served = ", ".join(ids[:5]) or "none"
            endpoint.state, endpoint.reason = OUT, f"serves {served}, not {wanted}"

    def secrets(self) -> tuple[str, ...]:
        """Every server's key, for the pipeline to mask."""
        return tuple(s for e in self.endpoints for s in e.provider.secrets())

    async def aclose(self) -> None:
        for task in list(self._rechecks):
            task.cancel()
        for endpoint in self.endpoints:
            await endpoint.provider.aclose()


def _room(endpoint: Endpoint) -> float:
    """Calls it may have in flight: its limit, or one probe while it is cooling down."""
    return endpoint.limit if endpoint.state == HEALTHY else 1


def _load(endpoint: Endpoint) -> float:
    return endpoint.in_flight / endpoint.limit if endpoint.limit else math.inf


def shown_url(url: str) -> str:
    """The URL as recorded and shown: without a trailing slash, or a `user:password@` part."""
    scheme, sep, rest = url.rstrip("/").partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme}{sep}{host.rpartition('@')[2]}{slash}{path}"


def create(config: ModelConfig) -> EndpointPool:
    """The registry's entry point for a model config with `endpoints`."""
    if config.name.provider != "openai":
        raise PermanentError(f"{config.model}: endpoints are for openai/ models only")
    params = dict(config.params)
    wait = float(params.pop("health_wait_s", HEALTH_WAIT_S))
    endpoints = []
    for entry in config.endpoints or ():
        one = config.model_copy(
            update={
                "endpoints": None,
                "base_url": entry.base_url,
                "api_key_env": entry.api_key_env or config.api_key_env,
                "params": params,
            }
        )
        ceiling = float(entry.max_concurrency) if entry.max_concurrency else math.inf
        endpoints.append(Endpoint(shown_url(entry.base_url), create_openai(one), ceiling, ceiling))
    return EndpointPool(config.model, endpoints, wait)
