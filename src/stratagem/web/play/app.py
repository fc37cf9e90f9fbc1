"""The play server's routes: each seat's page, and its API reached only through the seat's token.

The token travels in the `X-Stratagem-Seat` header, never in a request line, so no access log,
history or Referer holds it (a header other than the simple ones also makes another site's page
ask a preflight this server never answers). `GET /api/seat?after=N&wait=S` answers the seat's
state once something new happened (a long poll, at most `POLL_SECONDS`); `POST /api/seat` with
`{"line": "...", "turn": N}` sends the move for turn N, the one the page showed: a move for
another turn (a double click, a retry, a second tab) is 409 and played never. A body is read up
to a bound and must be JSON (`application/json`). The security headers, the Host check and the
token of a non-loopback `--host` are the viewer's own (`web.server.Guard`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from importlib.resources import files
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stratagem.agents.human import MAX_LINE_CHARS
from stratagem.web.play.seat import POLL_SECONDS, NotYourMove, WebSeat, WrongTurn
from stratagem.web.server import Guard, error, json_response

PAGES = {
    "/play": ("play.html", "text/html; charset=utf-8"),
    "/play.js": ("play.js", "text/javascript; charset=utf-8"),
    "/play-forms.js": ("play-forms.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/play.css": ("play.css", "text/css; charset=utf-8"),
    "/favicon.svg": ("favicon.svg", "image/svg+xml"),
}
"""The only files served: URL path -> packaged file under web/pages/."""
MAX_BODY = 4 * MAX_LINE_CHARS + 1_000
"""The largest move request read: the longest line, JSON-escaped, and its wrapping."""
SEAT_HEADER = "x-stratagem-seat"
"""The request header that carries a seat's token."""
NO_SEAT = "no such seat; use the link printed for your seat"


class Refused(Exception):
    """A request refused as it is read: its one-line message and its HTTP status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


async def read_json(request: Request, max_bytes: int, what: str) -> Any:
    """The request's JSON body, read up to `max_bytes` (`what` names it in the refusals): only
    `application/json`, which a page of another site cannot send without a preflight."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise Refused(f"{what} is sent as application/json", 415)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_bytes:
            raise Refused(f"{what} is at most {max_bytes:,} bytes", 413)
    try:
        return json.loads(body)
    except ValueError:
        raise Refused("the request is not JSON", 400) from None


def build_play_app(seats: Mapping[str, WebSeat], *, token: str | None = None) -> Starlette:
    """The pages and API of the seats, by token."""

    async def not_found(request: Request, exc: Exception) -> Response:
        return error("not found", 404)

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return error("method not allowed", 405)

    app = Starlette(
        routes=seat_routes(seats), exception_handlers={404: not_found, 405: not_allowed}
    )
    app.add_middleware(Guard, token=token)
    return app


def seat_routes(seats: Mapping[str, WebSeat], served: Collection[str] = ()) -> list[Route]:
    """The seats' pages (those not in `served`, which the host app serves already) and their
    API; `seats` is read at each request, so seats added later are found."""
    folder = files("stratagem.web").joinpath("pages")
    pages = {
        url: (folder.joinpath(n).read_bytes(), kind)
        for url, (n, kind) in PAGES.items()
        if url not in served
    }

    async def page(request: Request) -> Response:
        body, kind = pages[request.url.path]
        return Response(body, media_type=kind, headers={"cache-control": "no-cache"})

    def seat_of(request: Request) -> WebSeat | None:
        return seats.get(request.headers.get(SEAT_HEADER, ""))

    async def news(request: Request) -> Response:
        seat = seat_of(request)
        if seat is None:
            return error(NO_SEAT, 404)
        after, wait = request.query_params.get("after", "0"), request.query_params.get("wait", "0")
        if not after.isdigit() or not wait.isdigit():
            return error("'after' and 'wait' must be whole numbers >= 0", 400)
        return json_response(await seat.news(int(after), min(float(wait), POLL_SECONDS)))

    async def move(request: Request) -> Response:
        seat = seat_of(request)
        if seat is None:
            return error(NO_SEAT, 404)
        try:
            body = await read_json(request, MAX_BODY, "a move")
        except Refused as exc:
            return error(str(exc), exc.status)
        line, turn = (body.get("line"), body.get("turn")) if isinstance(body, dict) else (0, 0)
        if not isinstance(line, str) or type(turn) is not int:
            return error('a move is sent as {"line": "...", "turn": N}, N the turn shown', 400)
        try:
            seat.send(line, turn)
        except (NotYourMove, WrongTurn) as exc:
            return error(str(exc), 409)
        return json_response({"sent": True})

    return [Route(url, page) for url in pages] + [
        Route("/api/seat", news, methods=["GET"]),
        Route("/api/seat", move, methods=["POST"]),
    ]
