"""A fake OpenAI-compatible server that answers every chat completion after a fixed latency.

It stands in for a model API in benchmarks, so the client's throughput can be compared with the
ideal `concurrency / latency`. A bare `asyncio.start_server` HTTP/1.1 keep-alive handler keeps its
own cost per request far below the client's; it runs in its own process (see `serving`) so its CPU
never counts as the client's.

- `POST /v1/chat/completions`: a valid `chat.completion` after `latency` seconds, or with
  `--jitter J` after a latency drawn uniformly from `latency * (1 +- J)` (the same mean), as a
  real API's latency varies from call to call (seeded: runs draw the same sequence). A JSON-schema
  `response_format` whose `choice` property is an enum is answered `{"choice": "<first value>"}`;
  any other request gets a short text.
  With `--max-concurrency N` at most N calls are answered at once and the rest queue, as a
  model server's batch slots do.
- `GET /v1/models`: names the model `fake` (an endpoint pool's health check).
- `GET /stats`: `{"requests": n, "connections": n, "cpu_s": seconds}`: what it served, and its
  own CPU time.

    .venv/bin/python benchmarks/latency_server.py --latency 0.2 [--jitter 0.5] [--port 8000]
                                                  [--max-concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

TEXT_REPLY = "I choose the first option."


def _choice(body: dict[str, Any]) -> str | None:
    """The first enum value of a `choice` property in a JSON-schema response_format, if any."""
    fmt = body.get("response_format")
    if not isinstance(fmt, dict):
        return None
    inner = fmt.get("json_schema")
    schema = inner.get("schema") if isinstance(inner, dict) else fmt.get("schema")
    if not isinstance(schema, dict):
        return None
    prop = schema.get("properties", {}).get("choice")
    if isinstance(prop, dict) and isinstance(prop.get("enum"), list) and prop["enum"]:
        return str(prop["enum"][0])
    return None


def completion(body: dict[str, Any], serial: int) -> bytes:
    """The JSON of one `chat.completion` answering `body`."""
    label = _choice(body)
    content = TEXT_REPLY if label is None else json.dumps({"choice": label})
    messages = body.get("messages")
    prompt_chars = len(json.dumps(messages)) if messages else 0
    prompt_tokens = max(1, prompt_chars // 4)
    completion_tokens = max(1, len(content) // 4)
    reply = {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model", "fake")),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return json.dumps(reply, separators=(",", ":")).encode()


def _http(status: str, payload: bytes) -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(payload)}\r\nconnection: keep-alive\r\n\r\n"
    )
    return head.encode("latin-1") + payload


class LatencyServer:
    """The request handler; one instance per server process."""

    def __init__(self, latency: float, jitter: float = 0.0, max_concurrency: int = 0) -> None:
        if not 0 <= jitter < 1:
            raise ValueError(f"jitter must be at least 0 and below 1, not {jitter}")
        self.latency = latency
        self.jitter = jitter
        self.random = random.Random(0)
        self.requests = 0
        self.connections = 0
        self.slots = asyncio.Semaphore(max_concurrency) if max_concurrency else None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one keep-alive connection, one request at a time (clients do not pipeline)."""
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, _, rest = lines[0].partition(" ")
                path = rest.partition(" ")[0]
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                body = await reader.readexactly(length) if length else b""
                writer.write(await self._respond(method, path, body))
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _respond(self, method: str, path: str, body: bytes) -> bytes:
        if method == "GET" and path == "/stats":
            stats = {
                "requests": self.requests,
                "connections": self.connections,
                "cpu_s": time.process_time(),
            }
            return _http("200 OK", json.dumps(stats).encode())
        if method == "GET" and path.endswith("/models"):
            return _http("200 OK", b'{"object":"list","data":[{"id":"fake","object":"model"}]}')
        if method != "POST" or not path.endswith("/chat/completions"):
            return _http("404 Not Found", b'{"error":{"message":"not found"}}')
        try:
            request = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            request = None
        if not isinstance(request, dict):
            return _http("400 Bad Request", b'{"error":{"message":"expected a JSON object"}}')
        self.requests += 1
        serial = self.requests
        delay = self.latency * (1 + self.jitter * self.random.uniform(-1, 1))
        if self.slots is None:
            await asyncio.sleep(delay)
        else:
            async with self.slots:
                await asyncio.sleep(delay)
        return _http("200 OK", completion(request, serial))


async def serve(
    latency: float,
    host: str = "127.0.0.1",
    port: int = 0,
    jitter: float = 0.0,
    max_concurrency: int = 0,
) -> None:
    """Serve forever; prints `listening on http://host:port/v1` once ready."""
    handler = LatencyServer(latency, jitter, max_concurrency)
    server = await asyncio.start_server(handler.handle, host, port, backlog=4096)
    bound = server.sockets[0].getsockname()
    print(f"listening on http://{bound[0]}:{bound[1]}/v1", flush=True)
    async with server:
        await server.serve_forever()


@contextlib.contextmanager
def serving(
    latency: float, jitter: float = 0.0, max_concurrency: int = 0, port: int = 0
) -> Iterator[str]:
    """Run a server in a child process for the duration; yields its base URL (`.../v1`)."""
    process = start(latency, jitter, max_concurrency, port)
    try:
        yield url_of(process)
    finally:
        process.terminate()
        process.wait(timeout=10)


def start(latency: float, jitter: float, max_concurrency: int, port: int) -> subprocess.Popen[str]:
    """A server's child process (on `port`, 0 for any free one); `url_of` waits for it."""
    return subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--latency",
            str(latency),
            "--jitter",
            str(jitter),
            "--port",
            str(port),
            "--max-concurrency",
            str(max_concurrency),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def url_of(process: subprocess.Popen[str]) -> str:
    """The base URL a started server prints once it listens."""
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("listening on "):
        process.kill()
        raise RuntimeError(f"latency server did not start: {line!r}")
    return line.removeprefix("listening on ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per reply")
    parser.add_argument(
        "--jitter", type=float, default=0.0, help="latency varies by up to this fraction (0-1)"
    )
    parser.add_argument(
        "--max-concurrency", type=int, default=0, help="calls answered at once (0: no cap)"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0: any free port")
    args = parser.parse_args()
    if not 0 <= args.jitter < 1:
        parser.error(f"--jitter must be at least 0 and below 1, not {args.jitter}")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.latency, args.host, args.port, args.jitter, args.max_concurrency))


if __name__ == "__main__":
    main()
