"""A fake model API on 127.0.0.1 whose prompt caches work as OpenAI's and Anthropic's do, and
whose replies are legal moves of a ToM agent's TradeCraft game (`benchmarks/caching.py`).

A token is taken to be 4 characters of a prompt part written as JSON. Each model has its own cache.

- OpenAI (`POST /v1/chat/completions`) caches every prompt by itself. The prompt is the tools, the
  structured-output schema and the messages, in that order (OpenAI puts the tools and the schema
  before the messages, so a change to either changes everything after it). The part of a prompt
  that repeats the longest prefix of an earlier one is read from the cache when it is at least
  1,024 tokens, in steps of 128 tokens, and reported as `prompt_tokens_details.cached_tokens`
  (inside `prompt_tokens`).
- Anthropic (`POST /v1/messages`) caches only what a request marks. The prompt is a list of
  blocks: the tools, the system blocks, the tool choice, then every message's content blocks. A
  block with `cache_control` is a breakpoint. A request reads the longest cached prefix that ends
  at one of its breakpoints or at most 20 blocks before one, writes the prefix up to each of its
  breakpoints (of 1,024 tokens or more) that was not cached, and reports what it read as
  `cache_read_input_tokens`, what it wrote beyond that as `cache_creation_input_tokens`, and the
  rest as `input_tokens`.

Replies: a request with a JSON schema (OpenAI's `response_format`, Anthropic's forced `respond`
tool) gets an instance of it: every report score 5, a proposal of one item for one item with a
one-sentence message, a decision that accepts one proposal in three; any other request (a craft
phase) gets a text, which ends crafting. Its length is counted as the output tokens.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHARS_PER_TOKEN = 4
OPENAI_MIN, OPENAI_STEP = 1024, 128
ANTHROPIC_MIN, LOOKBACK = 1024, 20
MESSAGE = (
    "I can spare this if it helps you; in return I would like one of the items I am missing, "
    "which brings me closer to my target."
)
CRAFT_REPLY = "Nothing to craft this turn; I am done crafting."
RESPOND_TOOL = "respond"


def tokens(chars: int) -> int:
    return chars // CHARS_PER_TOKEN


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def instance(schema: dict[str, Any], turn: int, name: str = "") -> Any:
    """A value valid against one of the ToM agent's reply schemas (see the module docstring).
    `turn` (the messages so far) picks the decision, so games replay alike however their calls
    interleave."""
    if name == "decision":
        return "accept" if turn % 3 == 0 else "reject"
    if "enum" in schema:
        values = schema["enum"]
        return 5 if 5 in values else values[0]
    kind = schema.get("type")
    if kind == "string":
        return MESSAGE[: schema.get("maxLength", len(MESSAGE))]
    if kind == "object":
        properties: dict[str, Any] = schema.get("properties", {})
        required = schema.get("required")
        if required is None:  # an offer or a request: one item, the first
            keys = list(properties)[:1]
        else:
            keys = [k for k in properties if k in required or k == "message"]
        return {k: instance(properties[k], turn, k) for k in keys}
    return None


class _Prefixes:
    """Prompts seen, as chained hashes of their parts: `longest` finds how much of a new prompt
    repeats an earlier one (whole parts, then the common start of the first differing part)."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self.next_parts: dict[bytes, set[str]] = {}

    @staticmethod
    def chain(parts: Iterable[str]) -> list[bytes]:
        out, digest = [], b""
        for part in parts:
            digest = hashlib.sha1(digest + part.encode()).digest()
            out.append(digest)
        return out

    def longest(self, parts: list[str]) -> int:
        """Characters of `parts` that repeat the start of an earlier prompt."""
        chars, previous = 0, b""
        for part, digest in zip(parts, self.chain(parts), strict=True):
            if digest not in self.seen:
                common = max(
                    (_common(part, other) for other in self.next_parts.get(previous, ())),
                    default=0,
                )
                return chars + common
            chars += len(part)
            previous = digest
        return chars

    def add(self, parts: list[str]) -> None:
        previous = b""
        for part, digest in zip(parts, self.chain(parts), strict=True):
            self.next_parts.setdefault(previous, set()).add(part)
            self.seen.add(digest)
            previous = digest


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class CachingServer:
    """Context manager: `with CachingServer() as s: ... s.openai_url, s.anthropic_url ...`."""

    def __init__(self) -> None:
        self._openai: dict[str, _Prefixes] = {}
        self._anthropic: dict[str, set[bytes]] = {}
        self._lock = threading.Lock()
        self.requests = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def anthropic_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        return self.anthropic_url + "/v1"

    def __enter__(self) -> CachingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # -- OpenAI -----------------------------------------------------------------------------------

    def openai(self, body: dict[str, Any]) -> dict[str, Any]:
        parts = [_dump(body.get("tools", [])), _dump(body.get("response_format"))]
        parts += [_dump(m) for m in body["messages"]]
        prompt = tokens(sum(map(len, parts)))
        with self._lock:
            self.requests += 1
            serial = self.requests
            cache = self._openai.setdefault(str(body.get("model")), _Prefixes())
            repeated = tokens(cache.longest(parts))
            cache.add(parts)
        cached = 0
        if repeated >= OPENAI_MIN:
            cached = OPENAI_MIN + (repeated - OPENAI_MIN) // OPENAI_STEP * OPENAI_STEP
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema")
        content = _dump(instance(schema, len(body["messages"]))) if schema else CRAFT_REPLY
        output = max(1, tokens(len(content)))
        return {
            "id": f"chatcmpl-{serial}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": output,
                "total_tokens": prompt + output,
                "prompt_tokens_details": {"cached_tokens": min(cached, prompt)},
            },
        }

    # -- Anthropic --------------------------------------------------------------------------------

    def anthropic(self, body: dict[str, Any]) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = [dict(t) for t in body.get("tools", [])]
        system = body.get("system") or []
        blocks += [{"type": "text", "text": system}] if isinstance(system, str) else system
        if body.get("tool_choice"):
            blocks.append({"tool_choice": body["tool_choice"]})
        for turn in body["messages"]:
            content = turn["content"]
            content = [{"type": "text", "text": content}] if isinstance(content, str) else content
            blocks += [{"role": turn["role"], **block} for block in content]
        marks = [i for i, b in enumerate(blocks) if "cache_control" in b]
        parts = [_dump({k: v for k, v in b.items() if k != "cache_control"}) for b in blocks]
        ends, total = [], 0  # tokens up to and including each block
        for part in parts:
            total += len(part)
            ends.append(tokens(total))
        digests = _Prefixes.chain(parts)
        with self._lock:
            self.requests += 1
            serial = self.requests
            cache = self._anthropic.setdefault(str(body.get("model")), set())
            hits = [
                j for b in marks for j in range(b, max(-1, b - LOOKBACK), -1) if digests[j] in cache
            ]
            read_to = max(hits, default=-1)
            read = ends[read_to] if read_to >= 0 else 0
            written_to = read_to
            for b in marks:
                if b > read_to and ends[b] >= ANTHROPIC_MIN:
                    cache.add(digests[b])
                    written_to = max(written_to, b)
        written = ends[written_to] - read if written_to > read_to else 0
        answer: dict[str, Any] = {"type": "text", "text": CRAFT_REPLY}
        for tool in body.get("tools", []):
            if tool["name"] == RESPOND_TOOL:
                value = instance(tool["input_schema"], len(body["messages"]))
                answer = {"type": "tool_use", "id": f"toolu_{serial}", "input": value}
                answer["name"] = RESPOND_TOOL
        output = max(1, tokens(len(_dump(answer))))
        return {
            "id": f"msg_{serial}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [answer],
            "stop_reason": "tool_use" if answer["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": total // CHARS_PER_TOKEN - read - written,
                "output_tokens": output,
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written,
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                path = self.path.rstrip("/")
                if path.endswith("/chat/completions"):
                    reply, status = fake.openai(body), 200
                elif path.endswith("/v1/messages"):
                    reply, status = fake.anthropic(body), 200
                else:
                    reply, status = {"error": {"message": "not found"}}, 404
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
