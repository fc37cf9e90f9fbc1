"""The viewer links an experiment's cells to the study sections of its HTML report (issue 25
item 2): the report `stratagem report` wrote next to the store is found, its sections listed,
served as written under a policy that runs nothing, copied into a full export and never into a
seat's export (a report shows every seat's secrets)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from support.browser import chromium, serving
from support.scripted_run import run_scripted

from stratagem.studies import build_report
from stratagem.web.data import Perspective, Sources
from stratagem.web.data.reports import REPORT_CSP
from stratagem.web.export import export_site
from stratagem.web.server import build_app

__all__ = ["chromium"]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A PD run with its report written next to the store; the directory and the report."""
    out = tmp_path_factory.mktemp("reported") / "out"
    summary = run_scripted(out, "reported", lambda request, sample: request.choices[0], rounds=[3])
    assert summary.finished == 1, summary.errors
    yield out, build_report(out)


def sections_in(report: Path) -> list[tuple[str, str]]:
    text = report.read_text()
    return re.findall(r'<section id="([^"]+)">\s*<h2>([^<]+)</h2>', text)


def test_the_report_s_sections_are_listed(results: tuple[Path, Path], tmp_path: Path) -> None:
    out, report = results
    (experiment,) = Sources([out]).experiments()
    listed = experiment["report"]
    assert (
        listed["url"] == f"report/{out.name.encode().hex()}/{experiment['id'].encode().hex()}.html"
    )
    assert [(s["id"], s["title"]) for s in listed["sections"]] == sections_in(report)
    assert len(listed["sections"]) >= 3
    bare = tmp_path / "bare"  # a run whose report was never written: no link
    assert run_scripted(bare, "bare", lambda r, s: r.choices[0], rounds=[1]).finished == 1
    assert Sources([bare]).experiments()[0]["report"] is None


def test_the_report_is_served_as_written_running_nothing(results: tuple[Path, Path]) -> None:
    out, report = results
    app = build_app([out])
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            (experiment,) = client.get("/api/experiments").json()
            answer = client.get("/" + experiment["report"]["url"])
            assert answer.status_code == 200 and answer.content == report.read_bytes()
            assert answer.headers["content-security-policy"] == REPORT_CSP
            assert answer.headers["x-content-type-options"] == "nosniff"
            named = out.name.encode().hex()
            for url in (f"/report/{named}/zz.html", f"/report/{named}/6e6f7065.html",
                        "/report/30/00.html", "/report/zz/00.html"):  # fmt: skip
                assert client.get(url).status_code == 404, url
            page = client.get("/")  # the pages keep the viewer's own policy
            assert "script-src 'self'" in page.headers["content-security-policy"]
    finally:
        app.state.data.close()


def test_a_full_export_holds_the_report_and_a_seat_s_export_does_not(
    results: tuple[Path, Path], tmp_path: Path
) -> None:
    out, report = results
    sources = Sources([out])
    url = sources.experiments()[0]["report"]["url"]
    export_site(sources, tmp_path / "all")
    assert (tmp_path / "all" / url).read_bytes() == report.read_bytes()
    export_site(sources, tmp_path / "seat", perspective=Perspective.parse("seat:1"))
    assert not (tmp_path / "seat" / "report").exists()
    assert '"report":null' in (tmp_path / "seat" / "data" / "experiments.js").read_text()


def test_the_cells_link_to_the_report_s_sections(chromium: Any, results: tuple[Path, Path]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    out, report = results
    section, title = sections_in(report)[1]
    with serving(out) as url:
        experiment = Sources([out]).experiments()[0]["id"]
        chromium.get(f"{url}#/x/{out.name}/{experiment}")
        link = WebDriverWait(chromium, 20).until(
            lambda d: next(
                (a for a in d.find_elements(By.CSS_SELECTOR, ".report-links a") if a.text == title),
                None,
            )
        )
        link.click()
        WebDriverWait(chromium, 20).until(lambda d: d.current_url.endswith(f"#{section}"))
        assert chromium.find_element(By.CSS_SELECTOR, f"section#{section} h2").text == title
