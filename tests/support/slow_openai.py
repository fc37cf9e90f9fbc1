"""A well-behaved but slow OpenAI-compatible server on 127.0.0.1, for tests that need real latency
(e.g. killing a run while its calls are in flight).

`POST /v1/chat/completions` answers every request with a valid completion after `latency_s`. When
the request asks for a JSON schema with a `choice` enum (what `OpenAIProvider` sends for
`request.choices`), the answer is `{"choice": <label>}` with the label picked by a hash of the
messages and the seed: the same request always gets the same answer, in any process and any order,
while different requests get varied answers. Otherwise the answer is `reply`.

The server counts every request it receives, including those whose client died before the answer
was sent: that is what a paid API would bill. It also keeps the most requests it had in hand at
once (`peak`), and `GET /v1/models` names `model`, so it can be one server of a pool.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def pick_label(body: dict[str, Any], labels: list[str]) -> str:
    key = json.dumps([body.get("messages"), body.get("seed")], sort_keys=True)
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return labels[digest[0] % len(labels)]


def _answer(body: dict[str, Any], reply: str) -> str:
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
    enum = (schema.get("properties") or {}).get("choice", {}).get("enum")
    if enum:
        return json.dumps({"choice": pick_label(body, list(enum))})
    return reply


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client killed mid-request: expected, not worth a traceback
        super().handle_error(request, client_address)


class SlowOpenAIServer:
    """Context manager: `with SlowOpenAIServer(latency_s=0.1) as s: ... s.base_url ...`."""

    def __init__(
        self, latency_s: float = 0.1, *, reply: str = "ok", model: str = "slow-model"
    ) -> None:
        self.latency_s = latency_s
        self.reply = reply
        self.model = model
        self._lock = threading.Lock()
        self._in_hand = 0
        self._peak = 0
        self._bodies: list[str] = []
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def count(self) -> int:
        """Chat requests received so far."""
        with self._lock:
            return len(self._bodies)

    @property
    def peak(self) -> int:
        """The most chat requests it was answering at once so far."""
        with self._lock:
            return self._peak

    def bodies(self) -> Counter[str]:
        """How many times each distinct request body (canonical JSON) was received."""
        with self._lock:
            return Counter(self._bodies)

    def __enter__(self) -> SlowOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms stall

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                if len(raw) < length:
                    self.close_connection = True  # the client died while sending: no request
                    return
                body = json.loads(raw)
                with server._lock:
                    server._bodies.append(json.dumps(body, sort_keys=True))
                    server._in_hand += 1
                    server._peak = max(server._peak, server._in_hand)
                try:
                    time.sleep(server.latency_s)
                finally:
                    with server._lock:
                        server._in_hand -= 1
                words = sum(len(str(m.get("content", "")).split()) for m in body["messages"])
                self._send(
                    200,
                    {
                        "id": "chatcmpl-slow",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": str(body.get("model", "slow")),
                        "choices": [
                            {
                                "index": 0,
                                "message": {
                                    "role": "assistant",
                                    "content": _answer(body, server.reply),
                                },
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": words,
                            "completion_tokens": 1,
                            "total_tokens": words + 1,
                        },
                    },
                )

            def _send(self, status: int, data: dict[str, Any]) -> None:
                payload = json.dumps(data).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client was killed while waiting: expected

        return Handler
