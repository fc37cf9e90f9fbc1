"""An Anthropic-compatible Messages API on 127.0.0.1 that records what it is sent.

`POST /v1/messages` keeps every request body in `requests` and answers like Claude would:

- a forced tool (`tool_choice` of type `tool`) is called with its first enum value (the
  `select_choice` tool `AnthropicProvider` sends for `request.choices`);
- otherwise the reply is the text `reply`;
- with `thinking` enabled in the request, a `thinking` block (`thinking` text, signed) comes
  first and `thinking_tokens` more output tokens are billed, as the API bills thinking.

The prompt cache is imitated with `cache_read=n` and `cache_write=m`: every reply says it read
n input tokens from the cache and wrote m to it (`cache_read_input_tokens`,
`cache_creation_input_tokens`), which, as the API counts them, `input_tokens` leaves out.

Errors: `status` answers every request with that HTTP status instead. The server runs in a thread,
independent of the test's event loop.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

INPUT_TOKENS, OUTPUT_TOKENS = 11, 5
"""The usage of every reply (plus `thinking_tokens` output tokens when thinking)."""


def _forced_answer(body: dict[str, Any]) -> dict[str, Any] | None:
    choice = body.get("tool_choice") or {}
    if choice.get("type") != "tool":
        return None
    for tool in body.get("tools") or ():
        if tool.get("name") == choice.get("name"):
            props = (tool.get("input_schema") or {}).get("properties") or {}
            enum = (props.get("choice") or {}).get("enum") or [""]
            return {
                "type": "tool_use",
                "id": "toolu_1",
                "name": tool["name"],
                "input": {"choice": enum[0]},
            }
    return None


class FakeAnthropicServer:
    """Context manager: `with FakeAnthropicServer() as s: ... s.base_url ...`."""

    def __init__(
        self,
        *,
        reply: str = "cooperate",
        thinking: str = "Defection dominates, but let me see.",
        thinking_tokens: int = 40,
        status: int | None = None,
        cache_read: int = 0,
        cache_write: int = 0,
    ) -> None:
        self.reply = reply
        self.cache_read = cache_read
        self.cache_write = cache_write
        self.thinking = thinking
        self.thinking_tokens = thinking_tokens
        self.status = status
        self.requests: list[dict[str, Any]] = []
        """The JSON body of each Messages request, in arrival order."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
        content: list[dict[str, Any]] = []
        output = OUTPUT_TOKENS
        if (body.get("thinking") or {}).get("type") == "enabled":
            content.append({"type": "thinking", "thinking": self.thinking, "signature": "sig"})
            output += self.thinking_tokens
        forced = _forced_answer(body)
        content.append(forced if forced else {"type": "text", "text": self.reply})
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": "tool_use" if forced else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": INPUT_TOKENS,
                "output_tokens": output,
                "cache_read_input_tokens": self.cache_read,
                "cache_creation_input_tokens": self.cache_write,
            },
        }

    def __enter__(self) -> FakeAnthropicServer:
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

            def _send(self, status: int, data: dict[str, Any]) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.rstrip("/").endswith("/v1/messages"):
                    self._send(404, {"type": "error", "error": {"message": "not found"}})
                    return
                body = json.loads(raw or b"{}")
                if fake.status is not None:
                    with fake._lock:
                        fake.requests.append(body)
                    error = {"type": "invalid_request_error", "message": f"fake {fake.status}"}
                    self._send(fake.status, {"type": "error", "error": error})
                    return
                self._send(200, fake.answer(body))

        return Handler
