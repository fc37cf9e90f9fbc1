"""Where a run's model calls go: each stored with its episode and counted in the run's totals.

One recorder for `Runner` and for a rescore's episodes (`experiments.rescore`), so a call is
stored and counted the same way whichever wrote it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stratagem.experiments.records import EncodedJson, dump_json
from stratagem.experiments.store import ResultStore
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Request, Response

if TYPE_CHECKING:
    from stratagem.experiments.runner import RunSummary


def stored_request(
    request: Request,
    purpose: str,
    retries: int,
    request_json: str | None,
    after_events: int | None = None,
) -> Any:
    """A call record's request: its fields, the call's purpose and its retries, and in an
    episode `after_events`, how many of its events were recorded before the call (a transcript
    places the call among them by it). Given the cache key's encoding of the request (every
    field but `n`, a temperature as a float), that text is kept with these added, so a call
    encodes its request once for its cache key, its cache row and its record."""
    added: dict[str, Any] = {"n": request.n, "purpose": purpose, "retries": retries}
    if after_events is not None:
        added["after_events"] = after_events
    if request_json is None:
        return {**request.to_json(), **added}
    return EncodedJson(f"{dump_json(added, 'request')[:-1]},{request_json[1:]}")


class CallWriter:
    """The recorder of a run (and of a rescore): stores each call with the episode it belongs
    to and counts it in `summary`; a call answered from the cache (or a rescore's record) is
    counted as cached, at no cost."""

    def __init__(self, store: ResultStore, summary: RunSummary) -> None:
        self.store = store
        self.summary = summary

    def __call__(
        self,
        model: str,
        context: CallContext,
        request: Request,
        response: Response | None,
        error: str | None,
        retries: int,
        request_json: str | None,
        cache_key: str | None = None,
    ) -> None:
        episode = context.episode_id
        after = None if episode is None else self.store.next_event_seq(episode)
        usage: Any = None if response is None else response.usage
        self.store.add_llm_call(
            model,
            episode_id=episode,
            player=context.player,
            round=context.round,
            cache_key=cache_key,
            request=stored_request(request, context.purpose, retries, request_json, after),
            response=None if response is None else response.to_json(),
            text=None if response is None else response.text,
            input_tokens=None if usage is None else usage.input_tokens,
            output_tokens=None if usage is None else usage.output_tokens,
            cost_usd=None if response is None else response.cost_usd,
            latency_s=None if response is None else response.latency_s,
            cached=bool(response and response.cached),
            error=error,
            cached_input_tokens=0 if usage is None else usage.cached_input_tokens,
            cache_write_tokens=0 if usage is None else usage.cache_write_tokens,
            saved_usd=0.0 if response is None else response.saved_usd,
        )
        summary = self.summary
        summary.calls += 1
        if response is None:
            summary.failed_calls += 1
            return
        summary.cached_calls += int(response.cached)
        if not response.cached:
            summary.prompt_cache.add(response.usage, response.saved_usd)
        summary.tokens += response.usage.total
        summary.cost_usd += response.cost_usd
