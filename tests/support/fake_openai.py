"""A misbehaving OpenAI-compatible server on 127.0.0.1, for fault-injection tests.

`POST /v1/chat/completions` answers in a fixed pattern of faults, then (or in between) with valid
completions, so a test can assert exactly how many attempts a client made:

- `"429"`: rate limited, with `Retry-After: 0`;
- `"500"`: internal server error;
- `"slow"`: a valid completion sent only after `slow_s` seconds (beyond the client's timeout);
- `"malformed"`: status 200, `Content-Type: application/json`, a body that is not JSON;
- `"ok"`: a valid completion;
- `"400"`, `"403"`, `"404"`: bad request, forbidden, not found (not worth retrying);
- `"401"`: unauthorised, echoing the bearer token in the message as real APIs partly do, so a
  test can check that the key never reaches an error message;
- `"echo"`: status 200, a completion whose content and reasoning quote the request's
  `Authorization` header and the bare key: a server echoing the key in a normal reply.

After the pattern is used up it answers `"ok"`, or starts over when `repeat=True`. The valid reply
is `{"choice": <first enum value>}` when the request asks for a JSON schema with a `choice` enum
(what `OpenAIProvider` sends for `request.choices`), else `reply`. The server runs in a thread, so
it is independent of the test's event loop. Every request body is kept in `requests`.

A reasoning model is imitated with `reasoning="..."`: the valid reply then carries that text in the
message's `reasoning_field` (`reasoning_content` as DeepSeek and vLLM send it, `reasoning` as
OpenRouter and Ollama do, or `"inline"`: a `<think>` block before the content, as hosts without
a reasoning parser send DeepSeek-R1), and `reasoning_tokens` more completion tokens, reported in
`completion_tokens_details` as OpenAI does.

OpenAI's prompt cache is imitated with `cached_tokens=n`: every valid reply says that n of its
`prompt_tokens` (7, or `prompt_tokens=`) were read from the cache, in
`prompt_tokens_details.cached_tokens` as OpenAI reports it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = ("429", "500", "slow", "malformed", "ok")
"""The default pattern: each transient fault once, then a valid completion."""
BEHAVIOURS = (*FAULTS, "400", "401", "403", "404", "echo")
PROMPT_TOKENS, COMPLETION_TOKENS = 7, 3
"""The usage of every valid reply (plus `reasoning_tokens` completion tokens when reasoning)."""


def completion_body(
    model: str,
    content: str,
    prompt_tokens: int = PROMPT_TOKENS,
    *,
    reasoning: str | None = None,
    reasoning_field: str = "reasoning_content",
    reasoning_tokens: int = 0,
    cached_tokens: int = 0,
) -> dict[str, Any]:
    """A minimal valid chat.completion object, with reasoning and cached prompt tokens if
    given."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        if reasoning_field == "inline":
            message["content"] = f"<think>\n{reasoning}\n</think>\n\n{content}"
        else:
            message[reasoning_field] = reasoning
    completion_tokens = COMPLETION_TOKENS + reasoning_tokens
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    if cached_tokens:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens, "audio_tokens": 0}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage,
    }


def _reply_for(body: dict[str, Any], default: str) -> str:
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or {}
    enum = (schema.get("properties") or {}).get("choice", {}).get("enum")
    if enum:
        return json.dumps({"choice": enum[0]})
    return default


class FakeOpenAIServer:
    """Context manager: `with FakeOpenAIServer(["429", "ok"]) as s: ... s.base_url ...`."""

    def __init__(
        self,
        pattern: Iterable[str] = FAULTS,
        *,
        repeat: bool = False,
        slow_s: float = 2.0,
        reply: str = "cooperate",
        reasoning: str | None = None,
        reasoning_field: str = "reasoning_content",
        reasoning_tokens: int = 0,
        prompt_tokens: int = PROMPT_TOKENS,
        cached_tokens: int = 0,
        models: Iterable[str] = ("fake",),
        port: int = 0,
    ) -> None:
        """`port`: 0 for any free one; a given one lets a test start the server late, at a URL
        a client already has."""
        self.pattern = list(pattern)
        self.models = list(models)
        """What `GET /v1/models` names (an endpoint pool's health check)."""
        self.dead = False
        """Set by `kill()`: every request then gets its connection closed, unanswered."""
        self.dropped = 0
        """Chat requests dropped unanswered while dead."""
        unknown = [p for p in self.pattern if p not in BEHAVIOURS]
        if unknown:
            raise ValueError(f"unknown behaviours {unknown}; known: {BEHAVIOURS}")
        self.repeat = repeat
        self.slow_s = slow_s
        self.reply = reply
        self.reasoning = reasoning
        self.reasoning_field = reasoning_field
        self.reasoning_tokens = reasoning_tokens
        self.prompt_tokens = prompt_tokens
        self.cached_tokens = cached_tokens
        self.served: list[str] = []
        """The behaviour of each chat request, in arrival order."""
        self.requests: list[dict[str, Any]] = []
        """The JSON body of each chat request."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def next_behaviour(self, body: dict[str, Any]) -> str:
        with self._lock:
            index = len(self.served)
            if self.repeat and self.pattern:
                behaviour = self.pattern[index % len(self.pattern)]
            else:
                behaviour = self.pattern[index] if index < len(self.pattern) else "ok"
            self.served.append(behaviour)
            self.requests.append(body)
            return behaviour

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def kill(self) -> None:
        """Die as a crashed server does: stop listening, and drop the open connections' next
        requests unanswered (nothing is served, so nothing is paid)."""
        self.dead = True
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: tests read `served` instead."""

            def _send(
                self, status: int, body: bytes, headers: dict[str, str] | None = None
            ) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): expected for "slow"

            def _error(
                self, status: int, message: str, headers: dict[str, str] | None = None
            ) -> None:
                body = {"error": {"message": message, "type": "fake_error", "code": str(status)}}
                self._send(status, json.dumps(body).encode(), headers)

            def do_GET(self) -> None:
                if fake.dead:
                    self.close_connection = True
                    return
                if self.path.rstrip("/").endswith("/models"):
                    rows = [{"id": m, "object": "model"} for m in fake.models]
                    data = {"object": "list", "data": rows}
                    self._send(200, json.dumps(data).encode())
                else:
                    self._error(404, "not found")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if fake.dead:
                    with fake._lock:
                        fake.dropped += 1
                    self.close_connection = True
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._error(404, "not found")
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._error(400, "request body is not JSON")
                    return
                behaviour = fake.next_behaviour(body)
                model = str(body.get("model", "fake"))
                reply = completion_body(
                    model,
                    _reply_for(body, fake.reply),
                    fake.prompt_tokens,
                    cached_tokens=fake.cached_tokens,
                    reasoning=fake.reasoning,
                    reasoning_field=fake.reasoning_field,
                    reasoning_tokens=fake.reasoning_tokens,
                )
                ok = json.dumps(reply).encode()
                if behaviour == "429":
                    self._error(429, "rate limited", {"Retry-After": "0"})
                elif behaviour == "500":
                    self._error(500, "internal error")
                elif behaviour == "slow":
                    time.sleep(fake.slow_s)
                    self._send(200, ok)
                elif behaviour in ("400", "403", "404"):
                    self._error(int(behaviour), f"fake {behaviour}")
                elif behaviour == "401":
                    token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    self._error(401, f"Incorrect API key provided: {token}")
                elif behaviour == "echo":
                    header = self.headers.get("Authorization", "")
                    key = header.removeprefix("Bearer ")
                    said = f"You sent Authorization: {header} (key {key})"
                    echo = completion_body(model, said, reasoning=said)
                    self._send(200, json.dumps(echo).encode())
                elif behaviour == "malformed":
                    self._send(200, b'{"id": "chatcmpl-fake", "choices": [ {"index": 0,')
                else:
                    self._send(200, ok)

        return Handler
