"""The viewer's game views: JavaScript files that draw one game's steps, registered by game name
or family (`chameleon` for `chameleon/3`), stratagem's own (`web/builtin_views.py`) and
plugins' (`stratagem.register.view`, `register.game(view=...)`) the same way.

The page loads every registered file before app.js starts: the server writes one `<script src>`
per file into index.html (`render_index`), a same-origin file as the CSP `script-src 'self'`
allows, never inline, and the static export writes the same page and copies the files. Only
registered files are served, each at a URL made here (`views/matrix.js`, a plugin's at
`views/plugin/<namespace>/<file>.js`), never from a path a request names. Each script element
carries the keys its file was registered under (`data-views`), so a plugin's view can register
its drawing with `StratagemViewKit.register(draw)` without knowing the namespace its plugin was
loaded under. A game without a view is drawn by the generic step view.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stratagem import plugins
from stratagem.analysis.needed_plugins import load_plugins
from stratagem.errors import StratagemError
from stratagem.plugins import Registry

BUILTIN_FOLDER = Path(__file__).resolve().parent / "pages" / "views"
"""Where stratagem's own view files are: served at `views/<file>`."""
MARKER = b"<!-- stratagem:views -->"
"""The line of the packaged index.html that the registered views' script tags replace."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class View:
    """One registered view: the game or family it draws, its file, and where the page loads it."""

    key: str
    path: Path
    url: str
    """Relative to the page (`views/plugin/highcard/high_card.js`), so it works from the server
    and from an export's folder alike."""


VIEWS: Registry[View] = Registry("view", ("stratagem.web.builtin_views",))
"""Every game view by game or family: the built-in ones, then plugins' as their plugins load."""

_FILES: dict[str, Path] = {}
"""URL -> file, for every registered file (one URL per file, however many keys it draws)."""


def register_view(game_or_family: str, path: Path) -> str:
    """Register the JavaScript file that draws the steps of a game (or of every game of a family);
    returns the key it is registered under (`<namespace>:<key>` while a plugin loads)."""
    file = Path(path).expanduser().resolve()
    if file.suffix != ".js" or not file.is_file():
        raise StratagemError(f"view '{game_or_family}': {path} is not a JavaScript (.js) file")
    plugin = plugins.loading()  # (stratagem's own views are registered before a plugin loads)
    clashes = len(VIEWS.clashes)
    key = VIEWS.add(game_or_family, View(game_or_family, file, ""))
    if len(VIEWS.clashes) == clashes:  # a plugin loaded twice keeps its first registration
        VIEWS.replace(key, View(key, file, _url_for(file, plugin)))
    return key


def _url_for(file: Path, plugin: plugins.Plugin | None) -> str:
    """The file's URL: its own when already registered; a plugin's under its namespace."""
    for url, known in _FILES.items():
        if known == file:
            return url
    if plugin is not None:
        folder = f"views/plugin/{plugin.namespace}"
    elif file.parent == BUILTIN_FOLDER:
        folder = "views"
    else:  # registered in-process by a script of the user's, not by a plugin
        folder = "views/local"
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", file.stem).strip("_") or "view"
    url, n = f"{folder}/{stem}.js", 1
    while url in _FILES or url == "views/kit.js":  # another file of the same name: numbered
        n += 1
        url = f"{folder}/{stem}-{n}.js"
    _FILES[url] = file
    return url


def view_files() -> list[tuple[str, Path, list[str]]]:
    """(URL, file, keys) of every registered view file, in registration order: the order the
    page loads them."""
    out: dict[str, tuple[Path, list[str]]] = {}
    for key in VIEWS:
        view = VIEWS[key]
        if view.url:
            out.setdefault(view.url, (view.path, []))[1].append(view.key)
    return [(url, path, keys) for url, (path, keys) in out.items()]


def file_at(url: str) -> Path | None:
    """The registered view file served at `url` (`views/...`, no leading slash), else None:
    a request's path is only ever a key of this table, never a path on disk."""
    for known, path, _ in view_files():
        if known == url:
            return path
    return None


def script_tags() -> str:
    """One deferred `<script src>` per registered view file, its keys in `data-views`; every
    value escaped for an HTML attribute."""
    tags = []
    for url, _, keys in view_files():
        listed = html.escape(json.dumps(keys, separators=(",", ":")))
        tags.append(f'<script src="{html.escape(url)}" data-views="{listed}" defer></script>\n')
    return "".join(tags)


def render_index(body: bytes) -> bytes:
    """The packaged index.html with the registered views' script tags where its marker is."""
    if MARKER not in body:
        raise StratagemError("the packaged index.html has no views marker; reinstall stratagem")
    line = MARKER + b"\n"
    return body.replace(line if line in body else MARKER, script_tags().encode(), 1)


def load_for(experiments: Sequence[Mapping[str, Any]]) -> list[str]:
    """Load the plugins whose games these experiments (`Sources.experiments()`) hold, so their
    views are registered before the page is written; one that cannot be had is logged (and
    returned), and its games are drawn by the generic view."""
    problems = load_plugins(game for x in experiments for game in x["games"])
    for line in problems:
        log.warning("stratagem view: %s; its games are drawn by the generic view", line)
    return problems
