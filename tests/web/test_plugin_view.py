"""A game view from a plugin file (issue 34): the viewer loads the plugins whose games the results
hold, serves the registered view file (only it) under /views/plugin/<namespace>/ with the pages'
content type and CSP, the static export copies it, and in a real browser the plugin's game is
drawn by its view while a plugin game without one gets the generic step view."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from support.browser import chromium, rendered, serving
from support.plugin_files import named_plugin
from support.scripted_run import run_scripted
from test_views import open_episode, wait

from stratagem import plugins
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.web.data import Sources
from stratagem.web.export import export_site
from stratagem.web.server import CSP, build_app

__all__ = ["chromium"]  # the session's browser, a fixture

PLUGIN = '''
"""A plugin: two Ultimatum games under its own names, one drawn by a view of its own."""
from stratagem import register
from stratagem.games.ultimatum import UltimatumGame

register.game("drawn", UltimatumGame, view="drawn_view.js")
register.game("bare", UltimatumGame)
'''
VIEW = """// A plugin's step view: registered under the keys the page loaded it for.
"use strict";
(() => {
  const { el, eventsUpTo, register } = window.StratagemViewKit;
  register((step, episode) => {
    const offers = eventsUpTo(step, episode, "offer");
    return el("section", { class: "game-view plugin-drawn" },
      el("h2", {}, "Drawn by the plugin"),
      el("p", { class: "plugin-drawn-text" }, `${episode.game}: ${offers.length} offer(s)`));
  });
})();
"""
URL = "views/plugin/viewcards/drawn_view.js"
TAG = f'<script src="{URL}" data-views="[&quot;viewcards:drawn&quot;]" defer></script>'


def no_model(request: Any, sample: int) -> str:
    raise AssertionError("only scripted seats play here")


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin file, its view, and a script beside them that is registered as nothing."""
    folder = tmp_path_factory.mktemp("plugin")
    (folder / "drawn_view.js").write_text(VIEW, encoding="utf-8")
    (folder / "secret.js").write_text("window.leaked = 1;\n", encoding="utf-8")
    path = folder / "viewcards.py"
    path.write_text(PLUGIN, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def results(plugin_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One episode of each plugin game, played by scripted seats in a session of their own."""
    out = tmp_path_factory.mktemp("results") / "out"
    lineup = ["scripted:35", "scripted:accept"]
    with named_plugin(plugin_path):
        summary = run_scripted(
            out, "views", no_model, games=["viewcards:drawn", "viewcards:bare"],
            lineups=[lineup], opponents=[],
        )  # fmt: skip
    assert (summary.finished, summary.failed) == (2, 0), summary.errors
    yield out


def episode_of(results: Path, game: str) -> str:
    with ResultStore(results / STORE_FILE, read_only=True) as store:
        (episode,) = [e.id for e in store.episodes() if e.game == game]
    return episode


def test_the_server_serves_the_plugin_view_and_no_other_file(
    plugin_path: Path, results: Path
) -> None:
    with named_plugin(plugin_path) as plugin:
        app = build_app([results])
        try:
            assert plugin.loaded  # before any request: the results hold its games
            client = TestClient(app, base_url="http://127.0.0.1")
            index = client.get("/").text
            view = client.get(f"/{URL}")
            refused = [
                client.get(f"/views/plugin/viewcards/{name}")
                for name in ("secret.js", "viewcards.py", "%2e%2e/%2e%2e/stratagem.db")
            ] + [client.get("/views/drawn_view.js"), client.get("/views/plugin/other/x.js")]
        finally:
            app.state.data.close()
    assert index.count(TAG) == 1
    assert index.index('src="views/kit.js"') < index.index(TAG) < index.index('src="app.js"')
    assert view.status_code == 200
    assert view.headers["content-type"] == "text/javascript; charset=utf-8"
    assert view.headers["content-security-policy"] == CSP
    assert view.headers["x-content-type-options"] == "nosniff"
    assert view.content == (plugin_path.parent / "drawn_view.js").read_bytes()
    for response in refused:
        assert (response.status_code, response.json()) == (404, {"error": "not found"})
        assert response.headers["content-security-policy"] == CSP


def test_without_its_plugin_the_page_loads_no_view_of_it(results: Path) -> None:
    with plugins.isolated():
        app = build_app([results])
        try:
            client = TestClient(app, base_url="http://127.0.0.1")
            index, view = client.get("/").text, client.get(f"/{URL}")
        finally:
            app.state.data.close()
    assert "views/plugin/" not in index and 'src="views/matrix.js"' in index
    assert view.status_code == 404


def test_the_export_copies_the_plugin_view_and_draws_with_it(
    plugin_path: Path, results: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    with named_plugin(plugin_path) as plugin:
        sources = Sources([results])
        try:
            export_site(sources, out)
        finally:
            sources.close()
        assert plugin.loaded
    assert TAG in (out / "index.html").read_text(encoding="utf-8")
    assert (out / URL).read_bytes() == (plugin_path.parent / "drawn_view.js").read_bytes()
    assert sorted(p.name for p in (out / URL).parent.iterdir()) == ["drawn_view.js"]
    assert (out / "views" / "matrix.js").is_file() and (out / "views" / "kit.js").is_file()
    episode = episode_of(results, "viewcards:drawn")
    dom = rendered(f"{(out / 'index.html').as_uri()}#/e/out/{episode}")  # from file://, its CSP
    assert "viewcards:drawn: 1 offer(s)" in dom


def test_in_a_browser_the_plugin_game_has_its_view_and_the_other_the_generic_one(
    chromium: Any, plugin_path: Path, results: Path
) -> None:
    drawn, bare = episode_of(results, "viewcards:drawn"), episode_of(results, "viewcards:bare")
    chromium.get_log("browser")  # the tests' before: the log drains as it is read
    with serving(results, env={plugins.ENV_PLUGINS: str(plugin_path)}) as url:
        open_episode(chromium, url, "out", drawn)
        text = wait(
            chromium,
            lambda d: d.execute_script(
                "return document.querySelector('.step-box .plugin-drawn-text')?.textContent"
            ),
        )
        assert text.startswith("viewcards:drawn: ")
        assert chromium.execute_script("return window.leaked") is None
        open_episode(chromium, url, "out", bare)
        shown = chromium.execute_script(
            "const box = document.querySelector('.step-box');"
            "return [box.querySelectorAll('.game-view').length,"
            " box.querySelectorAll('.step .events li').length,"
            " box.querySelector('.step h2').textContent]"
        )
    assert shown[0] == 0  # no game view: neither the plugin's nor a built-in one
    assert shown[1] > 0 and shown[2].startswith("Step 1")
    logged = [e["message"] for e in chromium.get_log("browser") if e["level"] == "SEVERE"]
    assert [m for m in logged if "/favicon.ico" not in m] == []  # no script failed or was refused
