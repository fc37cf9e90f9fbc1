"""`stratagem view`: the browser viewer over results directories (issue 25), served locally.

It binds 127.0.0.1 unless `--host` says otherwise; then a random token is printed in the URL
and every request needs it. The socket is bound and listening before the URL is printed, so the
URL works the moment it appears.
"""

from __future__ import annotations

import secrets
import socket
import webbrowser
from contextlib import suppress
from pathlib import Path
from typing import Annotated

import typer

from stratagem.cli.common import PluginOption, _say, app, out, use_plugins, use_plugins_of
from stratagem.cli.store_paths import DEFAULT
from stratagem.errors import StratagemError

LOCAL_HOSTS = ("127.0.0.1", "localhost")
"""Hosts served without a token: only this machine can reach them."""


@app.command()
def view(
    directories: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Results directories, stratagem.db files, or folders of them ('results' if none)."
        ),
    ] = None,
    port: Annotated[
        int | None, typer.Option(help="Port to serve on (default: a free one).")
    ] = None,
    host: Annotated[
        str,
        typer.Option(help="Address to bind; other than 127.0.0.1/localhost, a token is required."),
    ] = "127.0.0.1",
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the URL in a browser.")
    ] = False,
    export: Annotated[
        Path | None,
        typer.Option(help="Write a static site into this new or empty folder instead of serving."),
    ] = None,
    experiment: Annotated[
        list[str] | None,
        typer.Option(help="With --export: only this experiment id (repeatable)."),
    ] = None,
    max_per_cell: Annotated[
        int | None,
        typer.Option(help="With --export: at most N episodes of each cell (the first N stored)."),
    ] = None,
    perspective: Annotated[
        str | None,
        typer.Option(help="With --export: write only seat:K's view of each episode (for sharing)."),
    ] = None,
    play: Annotated[
        Path | None,
        typer.Option(
            help="Let the viewer start games (a page 'play a game'), played into this results "
            "directory, which is viewed too (without DIR: OUT, and 'results' where it exists)."
        ),
    ] = None,
    plugin: PluginOption = None,
) -> None:
    """Browse results in a web browser: experiments, cells, episodes step by step, read-only
    (unless --play)."""
    if export is not None and play is not None:
        raise StratagemError("--play: not with --export (a static site plays nothing)")
    use_plugins(plugin)
    use_plugins_of([*(directories or [DEFAULT]), *([play] if play is not None else [])])
    if export is not None:
        _export(directories or [DEFAULT], export, experiment or [], max_per_cell, perspective)
        return
    given = [f"--{n}" for n, v in (("experiment", experiment), ("max-per-cell", max_per_cell),
                                    ("perspective", perspective)) if v]  # fmt: skip
    if given:
        raise StratagemError(f"{', '.join(given)}: only with --export OUT")
    import uvicorn

    from stratagem.web.server import build_app

    token = None if host in LOCAL_HOSTS else secrets.token_urlsafe(24)
    viewed = directories or ([DEFAULT] if play is None or DEFAULT.exists() else [])
    application = build_app(viewed, token=token, play=play)
    try:
        sock = _listen(host, port)
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{sock.getsockname()[1]}/"
        if token is not None:
            url += f"?token={token}"
        _say(out, url)
        if open_browser:
            webbrowser.open(url)
        # A seat's page holds a long poll open (--play): Ctrl-C does not wait for it.
        config = uvicorn.Config(application, log_level="warning", access_log=False,
                                lifespan="off", timeout_graceful_shutdown=2)  # fmt: skip
        # uvicorn shuts down on Ctrl-C, then raises it again: stopping is this command's normal end.
        with sock, suppress(KeyboardInterrupt):
            uvicorn.Server(config).run(sockets=[sock])
    finally:
        application.state.data.close()


def _listen(host: str, port: int | None) -> socket.socket:
    """A listening socket on `host`:`port` (None: a free port); a clear error when it cannot be."""
    if port is not None and not 0 <= port <= 65535:
        raise StratagemError(f"--port {port}: a port is a number from 0 to 65535")
    port = port or 0
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except (OSError, UnicodeError) as exc:
        raise StratagemError(f"--host {host}: cannot be bound ({exc})") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise StratagemError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def _export(
    dirs: list[Path], site: Path, experiments: list[str], most: int | None, seen: str | None
) -> None:
    """The static site (`stratagem.web.export`), and one line saying what was written."""
    from stratagem.web.data import Perspective, Sources
    from stratagem.web.export import check_out, export_site

    check_out(site)  # before reading any store: a bad OUT is refused at once
    perspective = None if seen is None else Perspective.parse(seen)
    sources = Sources(dirs)
    try:
        done = export_site(
            sources, site, experiments=experiments, max_per_cell=most, perspective=perspective
        )
    finally:
        sources.close()
    _say(
        out,
        f"wrote {site}: {done.files} files, {done.bytes:,} bytes, {done.episodes} episodes "
        f"in {done.seconds:.1f} s; open {site / 'index.html'}",
    )
