"""The call pipeline every model call passes through, the same for every provider.

cache -> budget check -> rate limiter -> provider -> retries -> cost -> recorder. A cache hit
short-circuits everything after it: it is free, never refused by the budget, never counted against
quotas, and recorded with `cached=True`, so a re-run replays exactly at no cost. Error texts are
scrubbed of anything that looks like a credential before they are raised or recorded.

The provider's key (`provider.secrets()`) is masked in every reply as it comes in, before the agent,
the recorder or the cache sees it, and in every cached reply as it comes out (one cached before
masking existed): a server that echoes the key can never get it stored, printed or sent back.
Lone surrogates (`"\\udcff"` in a server's JSON) are escaped in the same two places and in error
texts, so whatever a server sends is stored and shown (`stratagem.llm.surrogates`).

A permanent error from the provider (bad key, unknown model, invalid request) is remembered: every
later call to that model fails at once with the same error and sends nothing, so one bad key costs
one request, not one per episode. Cache hits still replay (they send nothing either).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from stratagem.llm.errors import (
    CallFailed,
    ModelRefused,
    PermanentError,
    TransientError,
    scrub_secrets,
)
from stratagem.llm.pricing import Prices
from stratagem.llm.provider import Provider, provider_secrets
from stratagem.llm.ratelimit import Limits, RateLimiter, estimate_tokens
from stratagem.llm.reasoning import ANSWER_PARAMS
from stratagem.llm.registry import ModelConfig, create_provider
from stratagem.llm.retry import RetriesExhausted, RetryPolicy, Sleep, call_with_retries
from stratagem.llm.routing import routing_key
from stratagem.llm.secrets import SecretScrubber
from stratagem.llm.shared_state import AnswerCache, Quotas, Slots, Spending
from stratagem.llm.surrogates import escape_surrogates, escaped_response
from stratagem.llm.types import Request, Response

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallContext:
    """Where a call belongs, for the store."""

    episode_id: str | None = None
    player: int | None = None
    round: int | None = None
    purpose: str = "decision"
    """decision | reask | question | tool | debate ..."""


CallRecorder = Callable[
    [str, CallContext, Request, Response | None, str | None, int, str | None, str | None], None
]
"""(model, context, request, response or None, error text or None, retries, request JSON or
None, cache key or None) -> None. The request JSON is the request as the response cache's key
encoded it (every field but `n`; `ResponseCache.key_and_request`), when the client has a cache: a
recorder may keep it instead of encoding the request again. The cache key is the entry the call
was looked up under (and its answer cached under): what the store keeps to tie the two."""


@dataclass
class ClientStats:
    """What one client did, for progress lines and tests."""

    provider_calls: int = 0
    """Attempts that reached the provider (retries included)."""
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    cost_usd: float = 0.0
    tokens: int = 0


class ModelClient:
    """One model behind the full pipeline; what agents hold and call."""

    model: str

    def __init__(
        self,
        provider: Provider,
        *,
        cache: AnswerCache | None,
        limiter: Quotas | None,
        limits: Limits | None,
        retry: RetryPolicy,
        prices: Prices,
        budget: Spending | None,
        recorder: CallRecorder | None = None,
        max_concurrency: int | None = None,
        rng: random.Random | None = None,
        sleep: Sleep = asyncio.sleep,
        cache_scope: str = "",
    ) -> None:
        """`cache_scope` tells apart, in the response cache, models with one model string but
        settings that change their answers (a thinking and a plain variant)."""
        self.provider = provider
        self.model = provider.model
        self._secrets = SecretScrubber(provider_secrets(provider))
        self._cache_model = f"{self.model}#{cache_scope}" if cache_scope else self.model
        self.cache = cache
        self.limits = None if limits is None or limits.unlimited else limits
        # Limits without a shared limiter still hold within this client.
        self.limiter: Quotas | None = (
            limiter if limiter is not None or self.limits is None else RateLimiter()
        )
        self.retry = retry
        self.prices = prices
        self.budget = budget
        self.recorder = recorder
        self.slots: Slots | None = asyncio.Semaphore(max_concurrency) if max_concurrency else None
        """Its `max_concurrency` (a Ray worker's client is given the coordinator's, shared)."""
        # Jitter only spreads retries in time; it never changes a result, so an unseeded default
        # is fine (and desirable: processes should not retry in lockstep).
        self._rng = rng if rng is not None else random.Random()
        self._sleep = sleep
        self.stats = ClientStats()
        self.refused: ModelRefused | None = None
        """The permanent error that stopped calls to this model, once there is one."""

    async def generate(
        self, request: Request, context: CallContext = CallContext()
    ) -> list[Response]:
        """`request.n` samples, sample i cached under index i.

        The samples run concurrently; if one fails, the others still finish (and are cached and
        recorded, so nothing paid for is lost) before the first error is raised.
        """
        if request.n < 1:
            raise PermanentError(f"{self.model}: a request must ask for at least 1 sample")
        if request.n == 1:
            return [await self._sample(request, 0, context)]
        results = await asyncio.gather(
            *(self._sample(request, i, context) for i in range(request.n)), return_exceptions=True
        )
        out: list[Response] = []
        for result in results:
            if isinstance(result, BaseException):
                raise result
            out.append(result)
        return out

    async def _sample(self, request: Request, sample: int, context: CallContext) -> Response:
        key = request_json = None
        if self.cache is not None:
            key, request_json = self.cache.key_and_request(self._cache_model, request, sample)
            hit = await self.cache.lookup(key)
            if hit is not None:
                hit = self._secrets.response(escaped_response(hit))
                response = replace(hit, cached=True, cost_usd=0.0, model=hit.model or self.model)
                self.stats.cache_hits += 1
                self._record(context, request, response, None, 0, request_json, key)
                return response
        self._check_refused()
        if self.budget is not None:
            await self.budget.admit()
        retries = 0

        def count(retry: int, exc: TransientError, wait: float) -> None:
            nonlocal retries
            retries = retry
            self.stats.retries += 1
            log.info("%s: %s; retry %d in %.1f s", self.model, self._error_text(exc), retry, wait)

        async def attempt() -> Response:
            return await self._attempt(request, sample, context.episode_id)

        try:
            async with self._slot():
                result = await call_with_retries(attempt, self.retry, self._rng, self._sleep, count)
        except RetriesExhausted as exc:
            text = (
                f"{self.model}: gave up after {exc.retries + 1} attempts; last error: "
                f"{self._error_text(exc.last)}"
            )
            self.stats.failures += 1
            self._record(context, request, None, text, exc.retries, request_json, key)
            raise CallFailed(text, exc.retries) from None
        except ModelRefused as exc:
            if retries:  # earlier attempts of this call were sent (and failed transiently)
                self.stats.failures += 1
                error = self._error_text(exc)
                self._record(context, request, None, error, retries, request_json, key)
            raise
        except PermanentError as exc:
            text = self._error_text(exc)
            self.stats.failures += 1
            self._record(context, request, None, text, retries, request_json, key)
            refused = ModelRefused(self._scrub(str(exc)), self.model)
            if self.refused is None:
                self.refused = refused
            raise refused from None
        except Exception as exc:
            text = self._error_text(exc)
            self.stats.failures += 1
            self._record(context, request, None, text, retries, request_json, key)
            if self._scrub(str(exc)) != str(exc):  # never let a credential travel further
                raise CallFailed(text, retries) from None
            raise
        response = self._secrets.response(escaped_response(result.value))
        cost = self.prices.cost(self.model, response.usage)  # prompt-cache rates included
        saved = self.prices.saving(self.model, response.usage)
        response = replace(
            response,
            cost_usd=cost,
            saved_usd=saved,
            cached=False,
            model=response.model or self.model,
        )
        self.stats.cost_usd += cost
        self.stats.tokens += response.usage.total
        if self.budget is not None:
            self.budget.charge(cost, response.usage.total)
        # Recorded first: a paid call is counted even if caching its answer fails.
        self._record(context, request, response, None, result.retries, request_json, key)
        if self.cache is not None and key is not None:
            self.cache.put(key, self.model, request, response, request_json=request_json)
        return response

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        if self.slots is None:
            yield
            return
        await self.slots.acquire()
        try:
            yield
        finally:
            self.slots.release()

    async def _attempt(self, request: Request, sample: int, episode: str | None) -> Response:
        """One try: wait for the quotas, ask the provider (told the episode, for routing), count
        what it used."""
        reservation = None
        if self.limiter is not None and self.limits is not None:
            reservation = await self.limiter.acquire(
                self.model, self.limits, estimate_tokens(request)
            )
        used = 0
        try:
            self._check_refused()  # another call may have been refused while this one waited
            self.stats.provider_calls += 1
            token = routing_key.set(episode)
            try:
                response = await self.provider.complete(request, sample)
            finally:
                routing_key.reset(token)
            used = response.usage.total
        except (TimeoutError, ConnectionError) as exc:  # providers should map these; be safe
            raise TransientError(self._error_text(exc)) from exc
        finally:
            if self.limiter is not None and reservation is not None:
                self.limiter.record(self.model, used, reservation)
        return response

    def _scrub(self, text: str) -> str:
        """An error text without this provider's key (exact value first: a pattern could mask
        only part of it) and without anything else shaped like a credential."""
        return scrub_secrets(self._secrets.text(escape_surrogates(text)))

    def _error_text(self, exc: BaseException) -> str:
        message = self._scrub(str(exc))
        return f"{type(exc).__name__}: {message}" if message else type(exc).__name__

    def _check_refused(self) -> None:
        if self.refused is not None:
            raise ModelRefused(str(self.refused), self.model)

    def _record(
        self,
        context: CallContext,
        request: Request,
        response: Response | None,
        error: str | None,
        retries: int,
        request_json: str | None,
        key: str | None,
    ) -> None:
        if self.recorder is not None:
            self.recorder(self.model, context, request, response, error, retries, request_json, key)

    async def aclose(self) -> None:
        await self.provider.aclose()


def cache_scope(params: Mapping[str, Any]) -> str:
    """A model entry's `ModelClient.cache_scope`: the parameters among `params` that change its
    answers (`ANSWER_PARAMS`), so that whoever looks a stored call up by its cache key (a
    rescore reading the record) computes the key the run did."""
    answer = {k: params[k] for k in ANSWER_PARAMS if k in params}
    return json.dumps(answer, sort_keys=True) if answer else ""


def build_client(
    config: ModelConfig,
    *,
    cache: AnswerCache | None = None,
    limiter: Quotas | None = None,
    budget: Spending | None = None,
    recorder: CallRecorder | None = None,
    prices: Prices | None = None,
    retry: RetryPolicy | None = None,
    rng: random.Random | None = None,
) -> ModelClient:
    """A client for `config`: its provider, its price override, quotas and concurrency cap."""
    provider = create_provider(config)
    scope = cache_scope(config.params)
    table = prices if prices is not None else Prices()
    if config.prices is not None:
        table = table.with_overrides({config.model: config.prices})
    return ModelClient(
        provider,
        cache=cache,
        limiter=limiter,
        limits=config.limits,
        retry=retry if retry is not None else RetryPolicy(),
        prices=table,
        budget=budget,
        recorder=recorder,
        max_concurrency=config.max_concurrency,
        rng=rng,
        cache_scope=scope,
    )
