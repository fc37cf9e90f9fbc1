"""The viewer's routes for starting a game (`stratagem view --play OUT`), mounted only then.

`GET /api/play` says what can be played and how the last game went; `POST /api/play/plan` checks
a game and answers its plan (nothing starts); `POST /api/play` starts it and answers, once its
episode is stored, each human seat's link; `POST /api/play/abandon` with `{"episode": ID}` stops
the game being played (a seat's page closed for good), leaving its episode unfinished. A POST
body is read up to `MAX_BODY` and must be `application/json`, which a page of another site
cannot send without a preflight this server never answers. Bad input is 400 with the one line
`stratagem play` prints; a game while another is played is 409.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stratagem.errors import StratagemError
from stratagem.experiments.runner import STORE_FILE
from stratagem.web.play.app import Refused, read_json
from stratagem.web.play.launcher import Launcher
from stratagem.web.server import DataThread, error, json_response

MAX_BODY = 16_000
"""The largest request read: a game, its seats, a model, options."""


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
        except Refused as exc:
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
            answer = launcher.start(prepared, base, confirmed=_confirmed(body))
        except Refused as exc:
            return error(str(exc), exc.status)
        except StratagemError as exc:
            return error(str(exc), 400)
        await launcher.opening()  # the page may open the episode at once
        return json_response(answer)

    async def abandon(request: Request) -> Response:
        try:
            episode = (await _body(request)).get("episode")
            if not isinstance(episode, str):
                raise Refused('a game is abandoned as {"episode": ID}', 400)
            return json_response(await launcher.abandon(episode))
        except Refused as exc:
            return error(str(exc), exc.status)
        except StratagemError as exc:
            return error(str(exc), 409)

    return [
        Route("/api/play", choices, methods=["GET"]),
        Route("/api/play/abandon", abandon, methods=["POST"]),
        Route("/api/play", start, methods=["POST"]),
        Route("/api/play/plan", plan, methods=["POST"]),
    ]


def _confirmed(body: dict[str, Any]) -> bool:
    return body.get("confirm") is True


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object, bounded; `Refused` with the status otherwise."""
    value = await read_json(request, MAX_BODY, "a game request")
    if not isinstance(value, dict):
        raise Refused('a game is requested as {"game": ..., "seats": [...]}', 400)
    return value
