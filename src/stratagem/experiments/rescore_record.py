"""A source episode's stored replies as the answers of a rescore's model calls.

A stored reply is the answer to one request: a rescore gives it to the new agent only where that
agent sends exactly the stored request (the same model, messages, parameters, seed and sample:
the response cache's key, `ResponseCache.key_and_request`), as the cache answers a resumed run.
So a reply is never read as the answer to a question it was not asked: where the new reading of a
reply leads to a request the record never sent (a re-ask of a reply the old parser accepted, or
anything after a changed move), the record has no answer (`NotInRecord`), and only a fork sends
that call, planned, priced and paid (`RecordedAnswers` with the directory's cache behind it).

Calls answered from the record are stored with the rescored episode as cached calls at no cost
(`experiments.call_writer`): they were paid once, by the source run, and its totals keep them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stratagem.experiments.model_entry import ModelEntry
from stratagem.experiments.records import LlmCallRecord
from stratagem.llm.cache import ResponseCache
from stratagem.llm.errors import PermanentError
from stratagem.llm.pipeline import CallContext, CallRecorder, ModelClient, cache_scope
from stratagem.llm.pricing import Prices
from stratagem.llm.retry import RetryPolicy
from stratagem.llm.shared_state import AnswerCache
from stratagem.llm.types import Message, Request, Response, Tool, ToolCall, Usage

_NO_CONTEXT = CallContext()


class NotInRecord(Exception):
    """The new agent sent a request the record holds no answer to (`purpose`: the call's)."""

    def __init__(self, purpose: str) -> None:
        self.purpose = purpose
        super().__init__(f"no stored reply to this {purpose} call")


class _Missing(Exception):
    """Raised by a record-only lookup; `RecordClient` turns it into `NotInRecord`."""


def response_of(call: LlmCallRecord) -> Response | None:
    """The stored reply of a call, None for a failed one or one stored without its reply."""
    data = call.response
    if call.error is not None or not isinstance(data, Mapping) or "text" not in data:
        return None
    return Response(
        text=str(data["text"]),
        tool_calls=tuple(ToolCall(**c) for c in data.get("tool_calls") or ()),
        reasoning=data.get("reasoning"),
        usage=Usage(**(data.get("usage") or {})),
        latency_s=float(data.get("latency_s") or 0.0),
        model=str(data.get("model") or call.model),
    )


Scopes = Mapping[str, str | None]
"""Model string -> the cache scope of its entries (`cache_scope`); None where entries of one
model string answer differently (their keys cannot be told apart without the stored key)."""


def scopes_of(models: Sequence[ModelEntry]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for entry in models:
        scope = cache_scope(entry.params)
        out[entry.model] = scope if out.get(entry.model, scope) == scope else None
    return out


def answers_of(calls: Sequence[LlmCallRecord], scopes: Scopes) -> dict[str, Response]:
    """The stored replies by cache key (the first under a key: a later one was its replay). A
    call stored without its key (before stores kept it) is keyed by its stored request."""
    out: dict[str, Response] = {}
    for call in calls:
        response = response_of(call)
        key = call.cache_key or key_of(call, scopes)
        if key and response is not None:
            out.setdefault(key, response)
    return out


def unkeyed(calls: Sequence[LlmCallRecord], scopes: Scopes) -> int:
    """Replies whose request cannot be told (no key stored, and no request a key can be made
    from): a rescore cannot match them to a new request, so their episode is not read again."""
    return sum(
        1
        for c in calls
        if not c.cache_key and response_of(c) is not None and key_of(c, scopes) is None
    )


_ADDED = ("n", "purpose", "retries", "after_events")
"""What a call's stored request holds beside the request's own fields (`stored_request`)."""


def key_of(call: LlmCallRecord, scopes: Scopes) -> str | None:
    """The cache key of a stored call's single-sample request, made again from the request as
    stored; None when it cannot be (several samples: which one is unknown; a model whose entries
    differ in scope; a request stored without its fields)."""
    data = call.request
    scope = scopes.get(call.model)
    if not isinstance(data, Mapping) or data.get("n", 1) != 1 or scope is None:
        return None
    try:
        request = Request(
            messages=tuple(
                Message(
                    m["role"],
                    m["content"],
                    tuple(ToolCall(**c) for c in m.get("tool_calls") or ()),
                    m.get("tool_call_id"),
                )
                for m in data["messages"]
            ),
            tools=tuple(Tool(**t) for t in data.get("tools") or ()),
            choices=tuple(data.get("choices") or ()),
            json_schema=data.get("json_schema"),
            temperature=data.get("temperature"),
            max_tokens=data.get("max_tokens"),
            seed=data.get("seed"),
            stop=tuple(data.get("stop") or ()),
        )
    except (KeyError, TypeError):
        return None
    if set(data) - set(request.to_json()) - set(_ADDED):
        return None  # a field this code does not know: the key would not be the run's
    model = f"{call.model}#{scope}" if scope else call.model
    return ResponseCache.key_and_request(model, request, 0)[0]


class RecordedAnswers:
    """An answer cache that answers from the record first; on a miss it asks `then` (a fork: the
    directory's response cache, then the provider), or with none raises (a rescore sends
    nothing)."""

    @staticmethod
    def key_and_request(model: str, request: Request, sample: int) -> tuple[str, str]:
        return ResponseCache.key_and_request(model, request, sample)

    def __init__(self, answers: Mapping[str, Response], then: AnswerCache | None = None) -> None:
        self.answers = answers
        self.then = then

    async def lookup(self, key: str) -> Response | None:
        hit = self.answers.get(key)
        if hit is not None:
            return hit
        if self.then is None:
            raise _Missing(key)
        return await self.then.lookup(key)

    def put(
        self,
        key: str,
        model: str,
        request: Request,
        response: Response,
        *,
        request_json: str | None = None,
    ) -> None:
        if self.then is not None:
            self.then.put(key, model, request, response, request_json=request_json)


class _NoProvider:
    """The provider of a record-only client: never reached (a miss raises before), and refusing
    if it were, so no key is needed and nothing is ever sent."""

    def __init__(self, model: str) -> None:
        self.model = model

    async def complete(self, request: Request, sample: int) -> Response:
        raise PermanentError(f"{self.model}: a rescore sends no model call")

    async def aclose(self) -> None:
        return None


class RecordClient(ModelClient):
    """A model entry's client that answers only from the record: the pipeline's own key,
    masking and recording, and `NotInRecord` where the record has no answer."""

    def __init__(
        self, entry: ModelEntry, answers: Mapping[str, Response], recorder: CallRecorder
    ) -> None:
        super().__init__(
            _NoProvider(entry.model),
            cache=RecordedAnswers(answers),
            limiter=None,
            limits=None,
            retry=RetryPolicy(),
            prices=Prices(),
            budget=None,
            recorder=recorder,
            cache_scope=cache_scope(entry.params),
        )

    async def generate(
        self, request: Request, context: CallContext = _NO_CONTEXT
    ) -> list[Response]:
        try:
            return await super().generate(request, context)
        except _Missing:
            raise NotInRecord(context.purpose) from None
