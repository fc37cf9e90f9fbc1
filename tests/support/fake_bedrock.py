"""AWS Bedrock's Converse API on 127.0.0.1, for the real AWS SDK client (`endpoint_url`).

`POST /model/{modelId}/converse` (REST/JSON, as the SDK sends it) keeps every request in
`requests` (model id, JSON body, headers) and answers like Bedrock would:

- the text `reply`, with the usage `INPUT_TOKENS` in and `OUTPUT_TOKENS` out;
- a `reasoningContent` block first, holding `reasoning`, when the request turns Claude's thinking
  on (`additionalModelRequestFields.thinking`) or the model reasons natively (its id contains one
  of `reasoning_models`: DeepSeek-R1), billed as `reasoning_tokens` more output tokens;
- `cacheReadInputTokens` / `cacheWriteInputTokens` of `cache_read` / `cache_write` (which, as
  Bedrock counts them, `inputTokens` leaves out);
- with `echo_credentials`, a reply that quotes the request's `Authorization` and
  `X-Amz-Security-Token` headers (a server that echoes what it was sent).

`gate`, when given, holds every reply until it is set (10 s at most), so a test can act while a
call is in flight.

Errors: `errors` is a list of (HTTP status, error code) answered to the first requests, one each,
before the replies; `error` answers every request with one. An error is Bedrock's: the code in the
`x-amzn-ErrorType` header, `{"message": ...}` as the body. The server runs in a thread,
independent of the test's event loop.
"""

from __future__ import annotations

import contextlib
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

INPUT_TOKENS, OUTPUT_TOKENS = 13, 7
"""The usage of every reply (plus `reasoning_tokens` output tokens when it reasons)."""


@dataclass(frozen=True)
class Received:
    model_id: str
    body: dict[str, Any]
    headers: dict[str, str]
    """Header names in lower case."""


class FakeBedrockServer:
    """Context manager: `with FakeBedrockServer() as s: ... s.endpoint_url ...`."""

    def __init__(
        self,
        *,
        reply: str = "[move] (fine) cooperation",
        reasoning: str = "They cooperated last round.",
        reasoning_tokens: int = 30,
        reasoning_models: tuple[str, ...] = ("deepseek.r1",),
        cache_read: int = 0,
        cache_write: int = 0,
        errors: list[tuple[int, str]] | None = None,
        error: tuple[int, str] | None = None,
        echo_credentials: bool = False,
        gate: threading.Event | None = None,
    ) -> None:
        self.reply = reply
        self.reasoning = reasoning
        self.reasoning_tokens = reasoning_tokens
        self.reasoning_models = reasoning_models
        self.cache_read = cache_read
        self.cache_write = cache_write
        self.errors = list(errors or ())
        self.error = error
        self.echo_credentials = echo_credentials
        self.gate = gate
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def answer(self, received: Received) -> tuple[int, dict[str, Any], str | None]:
        """(status, JSON body, error code or None) for one request."""
        with self._lock:
            self.requests.append(received)
        if self.gate is not None:
            self.gate.wait(timeout=10)
        with self._lock:
            failure = self.errors.pop(0) if self.errors else self.error
        if failure is not None:
            status, code = failure
            return status, {"message": f"fake {code} for {received.model_id}"}, code
        body = received.body
        thinking = (body.get("additionalModelRequestFields") or {}).get("thinking") or {}
        content: list[dict[str, Any]] = []
        output = OUTPUT_TOKENS
        native = any(name in received.model_id for name in self.reasoning_models)
        if thinking.get("type") == "enabled" or native:
            text = {"text": self.reasoning, "signature": "sig"}
            content.append({"reasoningContent": {"reasoningText": text}})
            output += self.reasoning_tokens
        reply = self.reply
        if self.echo_credentials:
            headers = received.headers
            reply += f" Authorization: {headers.get('authorization', '')}"
            reply += f" token: {headers.get('x-amz-security-token', '')}"
        content.append({"text": reply})
        usage = {
            "inputTokens": INPUT_TOKENS,
            "outputTokens": output,
            "totalTokens": INPUT_TOKENS + output + self.cache_read + self.cache_write,
            "cacheReadInputTokens": self.cache_read,
            "cacheWriteInputTokens": self.cache_write,
        }
        data = {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "end_turn",
            "usage": usage,
            "metrics": {"latencyMs": 1},
        }
        return 200, data, None

    def __enter__(self) -> FakeBedrockServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: tests read `requests` instead."""

            def _send(self, status: int, data: dict[str, Any], code: str | None) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if code is not None:
                    self.send_header("x-amzn-ErrorType", f"{code}:http://internal.amazon.com/")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)  # unless the client gave up waiting (a timeout test)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parts = self.path.split("?")[0].strip("/").split("/")
                if len(parts) != 3 or parts[0] != "model" or parts[2] != "converse":
                    self._send(404, {"message": "not found"}, "UnknownOperationException")
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                received = Received(unquote(parts[1]), json.loads(raw or b"{}"), headers)
                self._send(*fake.answer(received))

        return Handler
