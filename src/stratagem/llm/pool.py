"""A pool of OpenAI-compatible servers of one model, behind the one-provider interface.

A model entry's `endpoints:` (issue 26) become one provider the pipeline calls as any other:

- *Health first*: before the first call every server's `/models` must name the model. The pool
  starts as soon as one is healthy, waiting up to `health_wait_s` for any; a server that did not
  answer is re-checked in the background with backoff; one that answered without the model, or
  refused the key (401, 403, 404), is out. When every server that is not out refused the
  connection (nothing listens there: a wrong host or port, servers not started), the pool stops
  at once rather than after the wait, unless `health_wait_s` was given: a job that starts its
  servers with the run says how long they take.
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
- *Quotas*: a server's own `limits` (requests and tokens per minute, hour, day) hold for every
  call of this pool, on top of the model's: a call goes to a usable server whose quota is free
  (the episode's own first), and waits only when none has one; no server is sent a call over
  its quota. Their log is this pool's, in memory: shared by all tasks of the process. On a Ray
  cluster the coordinator keeps the servers' caps and quotas for every worker's pool (`share`):
  a call takes its server's slot and quota there, so the workers together never pass them.
- *Visible*: each server's calls, errors, latencies and output tokens are counted
  (`llm.pool_stats`); `snapshot()` returns them. An error the pool lets through names its server
  as `[endpoint URL]` after the model, so a failed call stored names it too.

The server that answered is kept in `Response.endpoint` (stored with the call); it is not part of
the cache key, so results do not depend on which one answered.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from stratagem.llm.errors import (
    ConnectionRefused,
    PermanentError,
    TransientError,
    scrub_secrets,
)
from stratagem.llm.pool_options import HEALTH_WAIT_S, pool_options
from stratagem.llm.pool_stats import EndpointCounters, EndpointFigures, figures
from stratagem.llm.providers.openai import OpenAIProvider
from stratagem.llm.providers.openai import check_config as openai_check_config
from stratagem.llm.providers.openai import create as create_openai
from stratagem.llm.providers.openai import ready as openai_ready
from stratagem.llm.ratelimit import Limits, RateLimiter, estimate_tokens
from stratagem.llm.routing import routing_key
from stratagem.llm.secrets import SecretScrubber
from stratagem.llm.shared_state import ServerSlots
from stratagem.llm.types import Request, Response
from stratagem.llm.wakeups import Wakeups

if TYPE_CHECKING:
    from stratagem.llm.registry import EndpointConfig, ModelConfig

COOL_BASE_S, COOL_MAX_S = 0.5, 30.0
RAISE_EVERY = 10
"""Successes after which a server whose concurrency a 429 lowered gets one slot back."""
OUT_STATUSES = frozenset({401, 403, 404})
"""Statuses that say this server will never answer this model: bad key, no access, no model."""
SHARED_WAIT_S = 1.0
"""Longest wait for a shared slot before the pool looks at its servers' states again."""
HEALTHY, DOWN, COOLING, OUT = "healthy", "down", "cooling", "out"
SHOWN_STATE = {HEALTHY: "healthy", COOLING: "cooling", OUT: "out", DOWN: "waiting"}
"""The state `snapshot()` reports (`pool_stats.STATES`): a server down since its health check is
one the pool waits for."""
TAG = "[endpoint "
"""How an error the pool lets through names its server: `model [endpoint URL]: why`."""


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
    limits: Limits = field(default_factory=Limits)
    """Its own quotas (`EndpointEntry.limits`), on top of the model's."""
    counters: EndpointCounters = field(default_factory=EndpointCounters)
    refused: bool = False
    """Its last health check found nothing listening (`ConnectionRefused`)."""

    def usable(self, now: float) -> bool:
        return self.state == HEALTHY or (self.state == COOLING and now >= self.cool_until)


def rendezvous(key: str, url: str) -> bytes:
    """The score of `url` for `key`: highest wins (stable, and independent of the other URLs)."""
    return hashlib.blake2b(f"{key}\0{url}".encode(), digest_size=8).digest()


class EndpointPool:
    """The provider of a model with several servers; see the module docstring."""

    def __init__(
        self,
        model: str,
        endpoints: list[Endpoint],
        health_wait_s: float = HEALTH_WAIT_S,
        limiter: RateLimiter | None = None,
        wait_refused: bool = False,
    ) -> None:
        """`limiter` keeps the servers' quotas (a fresh in-memory one by default);
        `wait_refused`: wait `health_wait_s` for servers that refuse the connection too, instead
        of stopping at once when every one does."""
        self.model = model
        self.endpoints = endpoints
        self.health_wait_s = health_wait_s
        self.wait_refused = wait_refused
        quotas = any(not e.limits.unlimited for e in endpoints)
        self.limiter = RateLimiter() if limiter is None and quotas else limiter
        self.shared: ServerSlots | None = None
        """The servers' caps and quotas kept for several processes (`share`)."""
        self._health: asyncio.Task[None] | None = None
        self._rechecks: set[asyncio.Task[None]] = set()
        self._wakeups = Wakeups()

    def share(self, slots: ServerSlots) -> None:
        """Take each call's server slot and quota from `slots` (a Ray run's coordinator) instead
        of this process's own count and quota log."""
        self.shared, self.limiter = slots, None

    async def complete(self, request: Request, sample: int) -> Response:
        await self._ready()
        key = routing_key.get() or (request.messages[0].content if request.messages else "")
        tried: set[str] = set()
        last: Exception | None = None
        tokens = estimate_tokens(request) if self.limiter or self.shared else 0
        while True:
            endpoint, reservation = await self._acquire(key, tried, tokens)
            if endpoint is None:  # every live server failed this attempt: the pipeline retries
                if isinstance(last, TransientError):
                    raise last
                each = "; ".join(f"{e.url} ({e.state} {e.reason})" for e in self.endpoints)
                raise TransientError(f"{self.model}: no endpoint can take the call now: {each}")
            tried.add(endpoint.url)
            used = 0
            try:
                response = await endpoint.provider.complete(request, sample)
                used = response.usage.total
            except TransientError as exc:
                endpoint.counters.failed()
                self._failed(endpoint, exc)
                last = self._tagged(exc, endpoint.url)
                continue
            except PermanentError as exc:
                endpoint.counters.failed()
                if exc.status not in OUT_STATUSES:  # the request's fault (400): all would refuse
                    raise self._tagged(exc, endpoint.url) from None
                self._take_out(endpoint, f"HTTP {exc.status}")
                last = self._tagged(exc, endpoint.url)
                continue
            finally:
                endpoint.in_flight -= 1
                if self.shared is not None:
                    self.shared.give(endpoint.url, used, reservation)
                elif reservation is not None and self.limiter is not None:
                    self.limiter.record(self._quota_key(endpoint), used, reservation)
                self._wakeups.wake()
            endpoint.counters.answered(response.latency_s, response.usage.output_tokens)
            self._succeeded(endpoint)
            return replace(response, endpoint=endpoint.url)

    def _tagged(self, exc: TransientError | PermanentError, url: str) -> Exception:
        """`exc` with its server named after the model (`TAG`), for the store and the user."""
        text = f"{self.model} {TAG}{url}]: {str(exc).removeprefix(f'{self.model}: ')}"
        if isinstance(exc, TransientError):
            return TransientError(text, exc.retry_after, exc.status)
        return PermanentError(text, exc.status)

    def _quota_key(self, endpoint: Endpoint) -> str:
        return f"{self.model}@{endpoint.url}"

    def _reserve(self, endpoint: Endpoint, tokens: int) -> tuple[int | None, float]:
        """Its quota for one call: (reservation or None if it has no limits, 0), or (None,
        seconds until its quota frees) when it is spent."""
        if self.limiter is None or endpoint.limits.unlimited:
            return None, 0.0
        return self.limiter.try_acquire(self._quota_key(endpoint), endpoint.limits, tokens)

    async def _acquire(
        self, key: str, tried: set[str], tokens: int
    ) -> tuple[Endpoint | None, int | None]:
        """A server for this call, its slot and quota taken (with the quota's reservation); None
        when every live one was tried."""
        while True:
            if all(e.state == OUT for e in self.endpoints):
                raise PermanentError(self._all_out())
            now = time.monotonic()
            left = [
                e for e in self.endpoints if e.url not in tried and e.state in (HEALTHY, COOLING)
            ]
            if not left:
                return None, None
            usable = [e for e in left if e.usable(now)]
            cooled = min((e.cool_until - now for e in left if not e.usable(now)), default=None)
            if not usable:  # all cooling: wait for the first to be tried again
                await self._wakeups.wait(cooled or 0.0)
                continue
            preferred = max(usable, key=lambda e: rendezvous(key, e.url))
            roomy = sorted(
                (e for e in usable if e.in_flight < _room(e)),
                key=lambda e: (e is not preferred, _load(e)),
            )
            if self.shared is not None:
                pick, reservation = await self._take_shared(roomy, tokens, cooled)
                if pick is not None:
                    return pick, reservation
                continue
            quota_wait: float | None = None
            for pick in roomy:  # the episode's own server first, then the least loaded
                reservation, wait = self._reserve(pick, tokens)
                if wait <= 0:
                    pick.in_flight += 1
                    return pick, reservation
                quota_wait = wait if quota_wait is None else min(quota_wait, wait)
            waits = [w for w in (cooled, quota_wait) if w is not None]
            await self._wakeups.wait(min(waits, default=COOL_MAX_S))  # or a slot frees

    async def _take_shared(
        self, roomy: list[Endpoint], tokens: int, cooled: float | None
    ) -> tuple[Endpoint | None, int | None]:
        """The first of `roomy` (in their order) whose shared slot and quota are free, taken;
        None when none freed in time or the server changed meanwhile: `_acquire` looks again."""
        assert self.shared is not None
        if not roomy:  # this process's own calls fill them: one of those ends first
            await self._wakeups.wait(cooled if cooled is not None else COOL_MAX_S)
            return None, None
        wait = SHARED_WAIT_S if cooled is None else min(SHARED_WAIT_S, cooled)
        url, reservation = await self.shared.take([e.url for e in roomy], tokens, wait)
        if url is None:
            return None, None
        pick = next((e for e in roomy if e.url == url), None)
        if pick is not None and pick.usable(time.monotonic()) and pick.in_flight < _room(pick):
            pick.in_flight += 1
            return pick, reservation
        self.shared.give(url, 0, reservation)  # it failed or filled while we asked
        return None, None

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
        self._wakeups.wake()

    def _all_out(self) -> str:
        each = "; ".join(f"{e.url} ({e.reason})" for e in self.endpoints)
        return f"{self.model}: every endpoint is out: {each}"

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
            if not self.wait_refused and all(e.refused for e in down):
                raise PermanentError(self._none_up())
            left = deadline - time.monotonic()
            if left <= 0:
                each = "; ".join(f"{e.url} ({self._why(e)})" for e in self.endpoints)
                raise PermanentError(
                    f"{self.model}: no endpoint healthy after {self.health_wait_s:g} s: {each}"
                )
            await asyncio.sleep(min(delay, left))
            delay = min(COOL_MAX_S, delay * 2)
            await asyncio.gather(*(self._check(e) for e in down))
        for endpoint in self.endpoints:
            if endpoint.state == DOWN:
                task = asyncio.get_running_loop().create_task(self._recheck(endpoint))
                self._rechecks.add(task)
                task.add_done_callback(self._rechecks.discard)

    def _none_up(self) -> str:
        each = "; ".join(f"{e.url} ({self._why(e)})" for e in self.endpoints)
        return (
            f"{self.model}: no endpoint is up: {each}; nothing listens there: a wrong host or "
            "port, or servers not started yet (params.health_wait_s waits for them)"
        )

    @staticmethod
    def _why(endpoint: Endpoint) -> str:
        return "connection refused" if endpoint.refused else endpoint.reason

    async def _recheck(self, endpoint: Endpoint) -> None:
        """Re-check a server that did not answer, with backoff, until it does."""
        delay = COOL_BASE_S
        while endpoint.state == DOWN:
            await asyncio.sleep(delay)
            delay = min(COOL_MAX_S, delay * 2)
            await self._check(endpoint)
        self._wakeups.wake()

    async def _check(self, endpoint: Endpoint) -> None:
        """One health check: healthy if `/models` names the model, out if it answers otherwise."""
        wanted = endpoint.provider.api_model
        endpoint.refused = False
        try:
            ids = await endpoint.provider.model_ids()
        except TransientError as exc:
            endpoint.state, endpoint.reason = DOWN, str(exc).removeprefix(f"{self.model}: ")
            endpoint.refused = isinstance(exc, ConnectionRefused)
            return
        except PermanentError as exc:
            endpoint.state, endpoint.reason = OUT, f"health check: HTTP {exc.status}"
            return
        if wanted in ids:
            endpoint.state, endpoint.reason = HEALTHY, ""
        else:
            served = ", ".join(ids[:5]) or "none"
            endpoint.state, endpoint.reason = OUT, f"serves {served}, not {wanted}"

    def snapshot(self) -> list[EndpointFigures]:
        """Each server's figures now, in the configured order; the reasons (server text) without
        a key, since they are shown and written to endpoints.json."""
        keys = SecretScrubber(self.secrets())
        return [
            figures(
                e.url, e.counters, SHOWN_STATE[e.state], e.in_flight,
                scrub_secrets(keys.text(e.reason)),
            )
            for e in self.endpoints
        ]  # fmt: skip

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
    given, _ = pool_options(config.model, config.params)
    wait = HEALTH_WAIT_S if given is None else given
    endpoints = []
    for entry, one in _members(config):
        ceiling = float(entry.max_concurrency) if entry.max_concurrency else math.inf
        url, provider = shown_url(entry.base_url), create_openai(one)
        endpoints.append(Endpoint(url, provider, ceiling, ceiling, limits=entry.limits))
    return EndpointPool(config.model, endpoints, wait, wait_refused=given is not None)


def check_config(config: ModelConfig) -> None:
    """For `registry.check_config`: the pool's own params (`pool_options`), and the rest as each
    server's provider checks them."""
    _, params = pool_options(config.model, config.params)
    openai_check_config(config.model_copy(update={"endpoints": None, "params": params}))


def ready(config: ModelConfig) -> None:
    """For `registry.check_ready`: each server's key `create` would send is there."""
    for _, one in _members(config):
        openai_ready(one)


def _members(config: ModelConfig) -> list[tuple[EndpointConfig, ModelConfig]]:
    """Each server of the pool with the config of its own OpenAI-compatible provider."""
    _, params = pool_options(config.model, config.params)
    return [
        (
            entry,
            config.model_copy(
                update={
                    "endpoints": None,
                    "base_url": entry.base_url,
                    "api_key_env": entry.api_key_env or config.api_key_env,
                    "params": params,
                }
            ),
        )
        for entry in config.endpoints or ()
    ]


def preferred(key: str, urls: list[str]) -> str:
    """The server (of `urls`, as shown) that `key`'s calls go to while every server is healthy
    and has room: the plan's spread of episodes over a pool (issue 26 item 3)."""
    return max(urls, key=lambda url: rendezvous(key, url))
