"""The local server of `stratagem view`: the packaged pages and a JSON API over the data layer.

Safety (issue 25 item 10): every response carries a Content-Security-Policy without inline
scripts or styles; only the packaged page files and the registered game views are served, by
fixed name (no path from a request reaches the filesystem); JSON escapes `<`, `>` and `&`, so no
stored text can close a tag if a page ever embeds it; with a token (a `--host` other than the
loopback) every request needs it. An experiment's or episode's id in a path is the hex of its
UTF-8 bytes (as the export names its files): a `%2F` is decoded before routing and a browser
folds `..` segments, so an id such as `exp/x` or `..` could not be one segment otherwise (issue
33 item 7). A source goes by its name (`data.names`: its folder's, whatever the order of the
directories given), URL-encoded: a name may hold `/`, so the routes take it whole (`:path`),
the segments after it being hex or fixed (issue 36 item 8). The data layer is used from one
thread of its own: SQLite connections belong to the thread that opened them, and one reader at
a time keeps a browsing session from competing with a run.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from http.cookies import SimpleCookie
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stratagem.errors import StratagemError
from stratagem.web import views
from stratagem.web.data import Perspective, Sources, downloads
from stratagem.web.data.compare import comparison
from stratagem.web.data.listing import BadQuery
from stratagem.web.data.reports import REPORT_CSP

CSP = (
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # A token in the URL must not leave in a Referer header.
    (b"referrer-policy", b"no-referrer"),
)
JAVASCRIPT = "text/javascript; charset=utf-8"
PAGES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/source.js": ("source.js", "text/javascript; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/compare.js": ("compare.js", "text/javascript; charset=utf-8"),
    "/diff.js": ("diff.js", "text/javascript; charset=utf-8"),
    "/cells.js": ("cells.js", JAVASCRIPT),
    "/analysis.js": ("analysis.js", JAVASCRIPT),
    "/charts.js": ("charts.js", JAVASCRIPT),
    "/vendor/d3/d3.min.js": ("vendor/d3/d3.min.js", JAVASCRIPT),
    "/launch.js": ("launch.js", "text/javascript; charset=utf-8"),
    "/calls.js": ("calls.js", JAVASCRIPT),
    "/links.js": ("links.js", JAVASCRIPT),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/favicon.svg": ("favicon.svg", "image/svg+xml"),
    "/views/kit.js": ("views/kit.js", JAVASCRIPT),
}
"""The page files served: URL path -> packaged file under web/pages/. The game views are the
files registered in `web.views` (index.html's script tags for them are written per request)."""
INDEX = "/index.html"
"""The page at "/" under its file's name too: a report links back to the viewer by a relative
path (`analysis.leaderboards.viewer_link`), which must open the same page from the live server
and from an export's files."""
FILTERS = (
    "game", "model", "agent", "seat_kind", "status", "invalid", "outcome", "group", "cell"
)  # fmt: skip
"""The episode filters the API passes to the data layer (query parameter = filter name)."""
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
"""Hosts bound without a token; a page from elsewhere can reach them only by DNS rebinding,
which the Host check refuses."""

log = logging.getLogger(__name__)
T = TypeVar("T")


class DataThread:
    """The data layer opened and called on one worker thread of its own."""

    def __init__(self, dirs: Sequence[Path]) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stratagem-view-data")
        try:
            self.sources: Sources = self._pool.submit(Sources, dirs).result()
        except BaseException:
            self._pool.shutdown()
            raise

    async def call(self, fn: Callable[[Sources], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, fn, self.sources)

    def now(self, fn: Callable[[Sources], T]) -> T:
        """Call `fn` on the data thread and wait (before serving starts)."""
        return self._pool.submit(fn, self.sources).result()

    def close(self) -> None:
        self._pool.submit(self.sources.close).result()
        self._pool.shutdown()


def page_bytes() -> dict[str, tuple[bytes, str]]:
    """The packaged pages, read once: URL path -> (bytes, content type)."""
    folder = files("stratagem.web").joinpath("pages")
    return {url: (folder.joinpath(name).read_bytes(), kind) for url, (name, kind) in PAGES.items()}


def json_bytes(value: Any) -> bytes:
    """JSON that no HTML parser reads as markup: `<`, `>`, `&` as \\u escapes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text.encode()


def json_response(value: Any, status: int = 200) -> Response:
    return Response(
        json_bytes(value),
        status_code=status,
        media_type="application/json",
        headers={"cache-control": "no-store"},
    )


def error(message: str, status: int) -> Response:
    return json_response({"error": message}, status)


class Guard:
    """Every response gets the security headers; with a token, a request without it gets 403,
    and one that brings it as `?token=` gets it back as a cookie for the page's later requests.
    Without a token, only loopback Host headers are answered (DNS rebinding)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        cookie_name = f"stratagem_view_{(scope.get('server') or ('', 0))[1]}"
        set_cookie = False
        if self.token is None:
            host = (request.url.hostname or "").strip("[]")
            if host not in LOOPBACK:
                await _secured(error("unknown host", 403))(scope, receive, send)
                return
        else:
            given = request.query_params.get("token")
            if given is not None and _same(given, self.token):
                set_cookie = request.cookies.get(cookie_name) != self.token
            elif not _same(request.cookies.get(cookie_name, ""), self.token):
                await _secured(error("a valid token is required", 403))(scope, receive, send)
                return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                given = message.get("headers", [])
                # A route may set a stricter policy of its own (the report's): it is kept.
                own = [(k, v) for k, v in given if k.lower() == b"content-security-policy"]
                headers = [(k, v) for k, v in given if k.lower() not in _OURS]
                headers.extend(own or SECURITY_HEADERS[:1])
                headers.extend(SECURITY_HEADERS[1:])
                if set_cookie:
                    cookie = SimpleCookie()
                    cookie[cookie_name] = str(self.token)
                    cookie[cookie_name]["httponly"] = True
                    # Lax, not Strict: a link from the sandboxed HTML report (an opaque
                    # origin, so cross-site) is a top-level GET and must bring it; cross-site
                    # POSTs (the play routes', the only ones that change anything) still do not.
                    cookie[cookie_name]["samesite"] = "Lax"
                    cookie[cookie_name]["path"] = "/"
                    headers.append((b"set-cookie", cookie[cookie_name].OutputString().encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_secured)


_OURS = frozenset(name for name, _ in SECURITY_HEADERS)


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


def _secured(response: Response) -> Response:
    for name, value in SECURITY_HEADERS:
        response.headers[name.decode()] = value.decode()
    return response


def _listed(request: Request) -> tuple[Mapping[str, str], str | None]:
    """The episode list's filters and search text in a request (the cells follow them too)."""
    q = request.query_params
    return {k: q[k] for k in FILTERS if q.get(k)}, q.get("q") or None


def _page(request: Request, number: str) -> int:
    text = request.query_params.get(number, "0")
    if not text.isdigit():
        raise _BadRequest(f"'{number}' must be a whole number >= 0, not '{text}'")
    return int(text)


class _BadRequest(Exception):
    """A request parameter the API cannot use: 400."""


def _id(request: Request, name: str) -> str:
    """An experiment's or episode's id from the path, where it is the hex of its UTF-8 bytes:
    any id then survives as one path segment (a `/`, `%`, `?`, `#`, `..`), as the export's file
    names do (`export.experiment_dir`)."""
    text = request.path_params[name]
    try:
        return bytes.fromhex(text).decode()
    except ValueError:  # UnicodeDecodeError is one
        raise _BadRequest(f"the {name} in the path is its id in hex, not '{text}'") from None


def _episode_ref(query: Mapping[str, str], name: str, what: str = "episode") -> tuple[str, str]:
    """`?a=<source>/<episode>` (or `<source>/<experiment>`) as (source, id): the source's name
    URL-encoded (a name may hold `/`, an id too), so the first `/` ends it."""
    source, _, episode = query.get(name, "").partition("/")
    if not source or not episode:
        raise _BadRequest(f"'{name}' must be <source>/<{what}>, not '{query.get(name, '')}'")
    return unquote(source), episode


def build_app(
    dirs: Sequence[Path], *, token: str | None = None, play: Path | None = None
) -> Starlette:
    """The viewer over `dirs`; a bad directory is a `StratagemError` here, before any serving.
    With `play` (`--play OUT`), games can be started from the viewer and are played into OUT,
    which is viewed too; without it, nothing the server does writes. `app.state.data.close()`
    releases the stores."""
    pages = page_bytes()
    launcher = None
    if play is not None:
        from stratagem.web.play.launcher import Launcher, open_out

        open_out(play)
        dirs = [*dirs, play]
        launcher = Launcher(play)
    data = DataThread(dirs)
    try:
        views.load_for(data.now(lambda s: s.experiments()))
    except BaseException:
        data.close()
        raise

    async def answer(fn: Callable[[Sources], Any]) -> Response:
        try:
            return json_response(await data.call(fn))
        except BadQuery as exc:  # a filter's value, a page number
            return error(str(exc), 400)
        except StratagemError as exc:  # an unknown source, experiment or episode
            return error(str(exc), 404)
        except Exception:
            log.exception("stratagem view: a request failed")
            return error("internal error; the server's log says more", 500)

    async def page(request: Request) -> Response:
        path = "/" if request.url.path == INDEX else request.url.path
        body, kind = pages[path]
        if path == "/":  # the views registered now (a game played since included)
            body = views.render_index(body)
        return Response(body, media_type=kind, headers={"cache-control": "no-cache"})

    async def view(request: Request) -> Response:
        """A registered game view's file; any other path under /views/ is not found."""
        path = views.file_at(f"views/{request.path_params['path']}")
        if path is None:
            return error("not found", 404)
        try:
            body = await asyncio.to_thread(path.read_bytes)
        except OSError:
            return error("not found", 404)
        return Response(body, media_type=JAVASCRIPT, headers={"cache-control": "no-cache"})

    async def sources(request: Request) -> Response:
        return await answer(lambda s: s.sources())

    async def experiments(request: Request) -> Response:
        return await answer(lambda s: s.experiments())

    def per_experiment(read: Callable[[Sources, str, str], Any]) -> Callable[[Request], Any]:
        """The route answering `read(sources, source, experiment)`: an experiment's cells,
        analysis or charts."""

        async def route(request: Request) -> Response:
            source = request.path_params["source"]
            try:
                experiment = _id(request, "experiment")
            except _BadRequest as exc:
                return error(str(exc), 400)
            return await answer(lambda s: read(s, source, experiment))

        return route

    async def episodes(request: Request) -> Response:
        source, (filters, query) = request.path_params["source"], _listed(request)
        try:
            experiment, number = _id(request, "experiment"), _page(request, "page")
        except _BadRequest as exc:
            return error(str(exc), 400)
        return await answer(
            lambda s: s.episodes(source, experiment, filters=filters, query=query, page=number)
        )

    async def cells(request: Request) -> Response:
        """The cells, counted over the episodes the list's filters and search keep."""
        source, (filters, query) = request.path_params["source"], _listed(request)
        try:
            experiment = _id(request, "experiment")
        except _BadRequest as exc:
            return error(str(exc), 400)
        return await answer(lambda s: s.cells(source, experiment, filters=filters, query=query))

    async def episode(request: Request) -> Response:
        source = request.path_params["source"]
        try:
            episode_id = _id(request, "episode")
            seen = Perspective.parse(request.query_params.get("perspective", "all"))
        except (StratagemError, _BadRequest) as exc:
            return error(str(exc), 400)
        return await answer(lambda s: s.episode(source, episode_id, seen))

    async def compare(request: Request) -> Response:
        q = request.query_params
        try:
            seen = Perspective.parse(q.get("perspective", "all"))
            (sa, ea), (sb, eb) = _episode_ref(q, "a"), _episode_ref(q, "b")
        except (StratagemError, _BadRequest) as exc:
            return error(str(exc), 400)
        return await answer(lambda s: comparison(s.episode(sa, ea, seen), s.episode(sb, eb, seen)))

    async def diff(request: Request) -> Response:
        q = request.query_params
        try:
            a, b = _episode_ref(q, "a", "experiment"), _episode_ref(q, "b", "experiment")
        except _BadRequest as exc:
            return error(str(exc), 400)
        return await answer(lambda s: s.diff(a, b))

    async def pairs(request: Request) -> Response:
        source = request.path_params["source"]
        try:
            episode_id = _id(request, "episode")
        except _BadRequest as exc:
            return error(str(exc), 400)
        return await answer(lambda s: {"pairs": s.pairs(source, episode_id), "left_out": 0})

    async def version(request: Request) -> Response:
        source = request.path_params["source"]
        return await answer(lambda s: {"version": s.version(source)})

    async def report(request: Request) -> Response:
        """The experiment's HTML report as written, under a policy that runs nothing of it."""
        p = request.path_params
        try:
            experiment = bytes.fromhex(p["name"]).decode()
            source = bytes.fromhex(p["source"]).decode()
            path = await data.call(lambda s: s.report_file(source, experiment))
        except (ValueError, StratagemError):
            return error("no such report", 404)
        body = await asyncio.to_thread(path.read_bytes)
        headers = {"content-security-policy": REPORT_CSP, "cache-control": "no-cache"}
        return Response(body, media_type="text/html; charset=utf-8", headers=headers)

    async def send_file(fn: Callable[[Sources], tuple[str, bytes]], fmt: str) -> Response:
        """A download (`web.data.downloads`) as an attachment; errors as `answer`'s."""
        try:
            name, body = await data.call(fn)
        except BadQuery as exc:
            return error(str(exc), 400)
        except StratagemError as exc:
            return error(str(exc), 404)
        except Exception:
            log.exception("stratagem view: a download failed")
            return error("internal error; the server's log says more", 500)
        headers = {"content-disposition": f'attachment; filename="{name}"',
                   "cache-control": "no-store"}  # fmt: skip
        return Response(body, media_type=downloads.FORMATS[fmt], headers=headers)

    async def download(request: Request) -> Response:
        """`<what>.<format>`: the cells, or a table of `stratagem.open` for the filtered list."""
        source, (filters, query) = request.path_params["source"], _listed(request)
        what, _, fmt = request.path_params["name"].partition(".")
        try:
            experiment = _id(request, "experiment")
            downloads.check_format(fmt)
        except (_BadRequest, BadQuery) as exc:
            return error(str(exc), 400)
        return await send_file(
            lambda s: downloads.experiment_file(s, source, experiment, what, fmt, filters, query),
            fmt,
        )

    async def download_diff(request: Request) -> Response:
        q, fmt = request.query_params, request.path_params["format"]
        filters = {k: q[k] for k in downloads.CELL_FILTERS if q.get(k)}
        try:
            a, b = _episode_ref(q, "a", "experiment"), _episode_ref(q, "b", "experiment")
            downloads.check_format(fmt)
        except (_BadRequest, BadQuery) as exc:
            return error(str(exc), 400)
        noise = q.get("noise") == "1"
        return await send_file(lambda s: downloads.diff_file(s, a, b, fmt, filters, noise), fmt)

    async def download_episode(request: Request) -> Response:
        source = request.path_params["source"]
        try:
            episode_id = _id(request, "episode")
        except _BadRequest as exc:
            return error(str(exc), 400)
        return await send_file(lambda s: downloads.episode_file(s, source, episode_id), "jsonl")

    async def not_found(request: Request, exc: Exception) -> Response:
        return error("not found", 404)

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return error("method not allowed", 405)

    routes = [Route(url, page) for url in (*PAGES, INDEX)] + [
        Route("/views/{path:path}", view),
        Route("/api/sources", sources),
        Route("/api/experiments", experiments),
        Route("/api/experiments/{source:path}/{experiment}/cells", cells),
        Route("/api/experiments/{source:path}/{experiment}/episodes", episodes),
        Route(
            "/api/experiments/{source:path}/{experiment}/analysis", per_experiment(Sources.analysis)
        ),
        Route("/api/experiments/{source:path}/{experiment}/charts", per_experiment(Sources.charts)),
        Route("/api/episodes/{source:path}/{episode}", episode),
        Route("/api/compare", compare),
        Route("/api/pairs/{source:path}/{episode}", pairs),
        Route("/api/diff", diff),
        Route("/api/version/{source:path}", version),
        Route("/api/download/{source:path}/{experiment}/{name}", download),
        Route("/api/download-diff/{format}", download_diff),
        Route("/api/download-episode/{source:path}/{episode}.jsonl", download_episode),
        Route("/report/{source}/{name}.html", report),
    ]
    if launcher is not None:
        from stratagem.web.play.app import seat_routes
        from stratagem.web.play.routes import play_routes

        routes += seat_routes(launcher.seats, served=PAGES) + play_routes(launcher, data, token)
    else:

        async def no_play(request: Request) -> Response:
            return json_response({"enabled": False})  # the page's "play a game" link is left out

        routes.append(Route("/api/play", no_play))
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})
    app.state.data = data
    app.add_middleware(Guard, token=token)
    return app
