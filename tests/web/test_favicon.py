"""The pages' icon (issue 36 item 11): one SVG drawn for stratagem, served by the viewer and by
the play server as an image under their CSP, named by the viewer's and the seat's pages (so no
browser asks for a /favicon.ico that is not there), and written into a static export."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.web.play.app import build_play_app
from stratagem.web.server import CSP, build_app

ICON = '<link rel="icon" href="favicon.svg" type="image/svg+xml">'


def test_the_viewer_and_the_play_server_serve_the_icon_their_pages_name(tmp_path: Path) -> None:
    ResultStore(tmp_path / STORE_FILE).close()
    viewer = build_app([tmp_path])
    try:
        for app, page in ((viewer, "/"), (build_play_app({}), "/play")):
            with TestClient(app, base_url="http://127.0.0.1") as client:
                assert ICON in client.get(page).text
                got = client.get("/favicon.svg")
                assert got.status_code == 200, got.text
                assert got.headers["content-type"] == "image/svg+xml"
                assert got.headers["content-security-policy"] == CSP
                assert got.headers["x-content-type-options"] == "nosniff"
                assert got.text.startswith("<svg xmlns=") and "<script" not in got.text
    finally:
        viewer.state.data.close()
