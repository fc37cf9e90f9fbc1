"""The HTTP transport of the `openai` provider: JSON bodies POSTed over one aiohttp session.

The openai SDK costs about 2 ms of CPU per call on top of its transport (it re-validates the
parameters against its type hints, builds httpx request and response objects, and constructs
pydantic models), and its httpx pool scans every connection on each request: at 256 calls in
flight a process can then drive about a third of what a 200 ms API would answer
(`benchmarks/throughput.py`). The provider already builds the request body and parses the reply
itself, so it sends through aiohttp (a maintained client with a C HTTP parser) directly: one
session per event loop, keep-alive connections without a cap (`max_concurrency` and the rate
limits bound the calls in flight, not the pool).

Errors come back as the SDK's did: an HTTP error status becomes `status_error`'s one line, a
timeout or a refused connection a `TransientError`, a body that is not a JSON object a
`TransientError` saying it is malformed. The SDK's environment settings are honoured too:
`OPENAI_BASE_URL` when no base_url is given, `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID` as headers.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from typing import Any

import aiohttp

from stratagem.llm.errors import ConnectionRefused, TransientError
from stratagem.llm.providers._common import redact, status_error

OPENAI_URL = "https://api.openai.com/v1"
USER_AGENT = "stratagem"
_BODY_JSON = json.JSONEncoder(ensure_ascii=False)
"""Built once: `json.dumps` with options builds an encoder per call."""


def default_base_url() -> str:
    """Where `openai/...` calls go without a base_url: the SDK's `OPENAI_BASE_URL`, else OpenAI."""
    return os.environ.get("OPENAI_BASE_URL") or OPENAI_URL


def error_message(raw: bytes) -> str:
    """The readable part of an error body: OpenAI's `error.message`, else the body as text."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return text


class OpenAIHTTP:
    """POSTs to `<base_url>/<path>` with the key as a bearer token; one instance per provider."""

    def __init__(
        self, model: str, base_url: str, api_key: str, timeout_s: float, key_env: str | None
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=timeout_s, sock_read=timeout_s
        )
        self.headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        for env, header in (("OPENAI_ORG_ID", "OpenAI-Organization"),
                            ("OPENAI_PROJECT_ID", "OpenAI-Project")):  # fmt: skip
            if os.environ.get(env):
                self.headers[header] = os.environ[env]
        self._key = api_key
        self._key_env = key_env
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _session_now(self) -> aiohttp.ClientSession:
        """The session of the running loop (a session cannot move between loops)."""
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            connector = aiohttp.TCPConnector(limit=0)  # certificates: the system's, verified
            self._session = aiohttp.ClientSession(
                connector=connector, headers=self.headers, timeout=self.timeout
            )
            self._loop = loop
        return self._session

    async def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """The decoded JSON reply; raises Transient/PermanentError as the SDK's errors mapped."""
        return await self._send("POST", path, _BODY_JSON.encode(body).encode("utf-8"))

    async def get(self, path: str) -> Any:
        """The decoded JSON reply of a GET (`/models`, for a pool's health check)."""
        return await self._send("GET", path, None)

    async def _send(self, method: str, path: str, payload: bytes | None) -> Any:
        session = self._session_now()
        try:
            async with session.request(method, self.base_url + path, data=payload) as reply:
                raw = await reply.read()
                status, headers = reply.status, reply.headers
        except (TimeoutError, aiohttp.ServerTimeoutError):
            raise TransientError(f"{self.model}: request timed out") from None
        except (aiohttp.ClientError, OSError) as exc:
            refused = isinstance(exc, ConnectionRefusedError) or (
                isinstance(exc, aiohttp.ClientConnectorError)
                and isinstance(exc.os_error, ConnectionRefusedError)
            )
            kind = ConnectionRefused if refused else TransientError
            raise kind(redact(f"{self.model}: connection error: {exc}", self._key)) from None
        if status >= 400:
            raise status_error(
                self.model, status, error_message(raw), headers, self._key, self._key_env
            )
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise TransientError(f"{self.model}: malformed response body") from None

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed and self._loop is asyncio.get_running_loop():
            await session.close()
