"""The viewer's routes for starting a game (`stratagem view --play OUT`), mounted only then.

`GET /api/play` says what can be played and how the last game went; `POST /api/play/plan` checks
a game and answers its plan (nothing starts); `POST /api/play` starts it and answers each human
seat's link. A POST body is read up to `MAX_BODY` and must be `application/json`, which a page of
another site cannot send without a preflight this server never answers. Bad input is 400 with
the one line `stratagem play` prints; a game while another is played is 409.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stratagem.errors import StratagemError
from stratagem.experiments.runner import STORE_FILE
from stratagem.web.play.launcher import Launcher
from stratagem.web.server import DataThread, error, json_response

MAX_BODY = 16_000
"""The largest request read: a game, its seats, a model, options."""


class _Refused(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def play_routes(launcher: Launcher, data: DataThread, token: str | None) -> list[Route]:
    async def source() -> str | None:
        """OUT's source id among the viewed stores (it was added to them)."""
        if launcher.source is None:
            store = (launcher.out / STORE_FILE).resolve()
            listed = await data.call(lambda s: s.sources())
            found = [x["id"] for x in listed if Path(x["path"]).resolve() == store]
            launcher.source = found[0] if found else None
        return launcher.source

    async def choices(request: Request) -> Response:
        await source()
        return json_response(launcher.choices())

    async def plan(request: Request) -> Response:
        try:
            prepared = launcher.prepare(await _body(request))
        except _Refused as exc:
            return error(str(exc), exc.status)
        except StratagemError as exc:
            return error(str(exc), 400)
        p = prepared
        answer = {"game": p.game, "seed": p.seed, "humans": p.humans, "plan": p.plan}
        return json_response({**answer, "paid": p.paid})

    async def start(request: Request) -> Response:
        await source()
        try:
            body = await _body(request)
            # No await from here on: the check and the start are one step of the loop, so two
            # requests cannot both pass the check.
            refusal = launcher.refusal()
            if refusal is not None:
                return error(refusal, 409)
            prepared = launcher.prepare(body)
            base = str(request.base_url) + (f"?token={token}" if token else "")
            return json_response(launcher.start(prepared, base, confirmed=_confirmed(body)))
        except _Refused as exc:
            return error(str(exc), exc.status)
        except StratagemError as exc:
            return error(str(exc), 400)

    return [
        Route("/api/play", choices, methods=["GET"]),
        Route("/api/play", start, methods=["POST"]),
        Route("/api/play/plan", plan, methods=["POST"]),
    ]


def _confirmed(body: dict[str, Any]) -> bool:
    return body.get("confirm") is True


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object, bounded; `_Refused` with the status otherwise."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise _Refused("a game is requested as application/json", 415)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise _Refused(f"a request is at most {MAX_BODY:,} bytes", 413)
    try:
        value = json.loads(body)
    except ValueError:
        raise _Refused("the request is not JSON", 400) from None
    if not isinstance(value, dict):
        raise _Refused('a game is requested as {"game": ..., "seats": [...]}', 400)
    return value
