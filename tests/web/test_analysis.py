"""The viewer's analysis of an experiment (issue 35): leaderboards whose rows resolve to exactly the
episodes behind them, calibration and noise floors equal to what `analysis` computes on the same
data, the `group` filter (and a bad one, 400 in one line), the API route and the static export,
over a real store of scripted MAgIC Chameleon games (`magic_results`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient
from support.browser import rendered
from support.cli import cli
from support.named import only
from test_export import read_data

from stratagem.analysis.calibration import calibration
from stratagem.analysis.forecasts import collect_forecasts
from stratagem.analysis.leaderboards import viewer_link
from stratagem.analysis.noise_floor import noise_floor
from stratagem.analysis.report_data import ReportData
from stratagem.experiments.replicates import replicate_of
from stratagem.experiments.store import ResultStore
from stratagem.web.data import Sources
from stratagem.web.data.listing import MAX_PER_PAGE, BadQuery
from stratagem.web.export import experiment_dir
from stratagem.web.server import build_app


@pytest.fixture(scope="module")
def sources(magic_results: Path) -> Sources:
    return Sources([magic_results])


@pytest.fixture(scope="module")
def experiment(sources: Sources) -> str:
    (x,) = sources.experiments()
    return str(x["id"])


@pytest.fixture(scope="module")
def analysis(sources: Sources, experiment: str) -> dict[str, Any]:
    return sources.analysis(only(sources), experiment)


@pytest.fixture(scope="module")
def report(magic_results: Path, experiment: str) -> Iterator[ReportData]:
    with ResultStore(magic_results / "stratagem.db", read_only=True) as store:
        found = store.experiment(experiment)
        assert found is not None
        yield ReportData.load(store, found)


def ids_of(sources: Sources, experiment: str, group: str) -> list[str]:
    got = sources.episodes(
        only(sources), experiment, filters={"group": group}, per_page=MAX_PER_PAGE
    )
    assert got["total"] == len(got["items"])
    return [item["id"] for item in got["items"]]


def rows(analysis: dict[str, Any], board: str) -> dict[str, dict[str, Any]]:
    (found,) = (b for b in analysis["leaderboards"] if b["id"] == board)
    return {r["group"]: r for r in found["rows"]}


def test_each_row_opens_exactly_the_episodes_behind_it(
    sources: Sources,
    experiment: str,
    analysis: dict[str, Any],
    report: ReportData,
    magic_model: str,
) -> None:
    """Worked out from the stored records, not by the study's code: every own episode (no
    replicate copy) seats both entities, so both rate over all four; of the competition games
    (those of the challenger's leaderboard row: not the one where the challenger held seats of
    both roles), an entity's spy row holds those whose outcome names a seat of its as the spy,
    its majority row those where it held another seat."""
    pgm, plain = f"{magic_model}|pgm", f"{magic_model}|magic"
    own = [e for e in report.episodes if not replicate_of(e.spec)]
    assert len(own) == 4 and len(report.episodes) == 8
    everything = sorted(e.record.id for e in own)
    spy: dict[str, set[str]] = {pgm: set(), plain: set()}
    majority: dict[str, set[str]] = {pgm: set(), plain: set()}
    for e in own:
        (outcome,) = [v for v in e.events if v.kind == "outcome"]
        for k, player in enumerate(e.record.players):
            entity = f"{player['model_id']}|{player['agent']}"
            (spy if k == outcome.data["spy"] else majority)[entity].add(e.record.id)
    assert set(rows(analysis, "magic/leaderboard")) == {f"magic/leaderboard/{pgm}"}
    games = set(ids_of(sources, experiment, f"magic/leaderboard/{pgm}"))
    assert len(games) == 3
    for entity in (pgm, plain):
        assert sorted(ids_of(sources, experiment, f"magic/bradley-terry/{entity}")) == everything
        assert sorted(ids_of(sources, experiment, f"magic/profile/{entity}")) == everything
        for role, held in (("chameleon", spy), ("non-chameleon", majority)):
            group = f"magic/roles/chameleon/{role}/{entity}"
            assert set(ids_of(sources, experiment, group)) == held[entity] & games, group
    assert {len(held & games) for held in spy.values()} == {1, 2}  # rows of part of the games
    for board in analysis["leaderboards"]:
        for row in board["rows"]:  # the count shown is the list's total
            assert len(ids_of(sources, experiment, row["group"])) == row["episodes"] > 0


def test_calibration_is_analysis_calibration_of_the_same_forecasts(
    analysis: dict[str, Any], report: ReportData
) -> None:
    found = collect_forecasts(report)
    expected = calibration([f for fs in found.values() for f in fs.forecasts])
    assert len(analysis["calibration"]) == len(expected) >= 1
    for got, want in zip(analysis["calibration"], expected, strict=True):
        assert [got[k] for k in ("model", "agent", "game", "kind")] == [
            want.model, want.agent, want.game, want.kind
        ]  # fmt: skip
        assert got["forecasts"] == want.forecasts and got["episodes"] == want.episodes
        for name in ("brier", "log_loss", "ece", "accuracy"):
            e = getattr(want, name)
            assert got[name] == (e and {"value": e.value, "low": e.low, "high": e.high})
        assert [(b["count"], b["confidence"], b["accuracy"]) for b in got["bins"]] == [
            (b.count, b.confidence, b.accuracy) for b in want.bins
        ]
    (pgm,) = [c for c in analysis["calibration"] if c["probabilistic"]]
    assert pgm["agent"] == "pgm" and sum(b["count"] for b in pgm["bins"]) == pgm["forecasts"]


def test_noise_floors_are_the_reports(analysis: dict[str, Any], report: ReportData) -> None:
    assert [f["metric"] for f in analysis["noise"]] == ["score", "invalid"]  # no cooperation
    for got in analysis["noise"]:
        want = noise_floor(report, got["metric"])
        assert want is not None
        assert (got["floor"], got["cells"], got["replicates"]) == (
            want.floor, want.cells, len(want.differences)
        )  # fmt: skip
        assert got["cells"] == 4  # the four cells, each against its copy


def test_a_group_no_row_has_is_a_bad_query(sources: Sources, experiment: str) -> None:
    with pytest.raises(BadQuery, match=r"^filter group='magic/x': no leaderboard row"):
        sources.episodes(only(sources), experiment, filters={"group": "magic/x"})


def test_the_api_answers_the_analysis_and_the_group_filter(
    magic_results: Path, experiment: str, analysis: dict[str, Any]
) -> None:
    app = build_app([magic_results])
    try:
        client = TestClient(app, base_url="http://127.0.0.1")
        base = f"/api/experiments/{magic_results.name}/{experiment.encode().hex()}"
        got = client.get(f"{base}/analysis")
        assert got.status_code == 200 and got.json() == json.loads(json.dumps(analysis))
        group = next(iter(rows(analysis, "magic/roles")))
        listed = client.get(f"{base}/episodes", params={"group": group}).json()
        assert listed["total"] == rows(analysis, "magic/roles")[group]["episodes"]
        bad = client.get(f"{base}/episodes", params={"group": "no such row"})
        assert bad.status_code == 400
        assert bad.json() == {
            "error": "filter group='no such row': no leaderboard row of this experiment has it"
        }
        assert (
            client.get(
                f"/api/experiments/{magic_results.name}/{b'nope'.hex()}/analysis"
            ).status_code
            == 404
        )
        assert client.get("/index.html").text == client.get("/").text  # a report's way back
    finally:
        app.state.data.close()


def test_the_export_writes_the_analysis_and_indexes_each_row(
    magic_results: Path,
    sources: Sources,
    experiment: str,
    analysis: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, seat = tmp_path / "site", tmp_path / "seat"
    assert cli(capsys, "view", str(magic_results), "--export", str(out))[0] == 0
    folder = out / experiment_dir(magic_results.name, experiment)
    assert read_data(folder / "analysis.js")[1] == json.loads(json.dumps(analysis))
    listed = read_data(folder / "episodes.js")[1]
    groups = {r["group"]: r for b in analysis["leaderboards"] for r in b["rows"]}
    assert set(listed["index"]["group"]) == set(groups)
    for group, positions in listed["index"]["group"].items():
        assert [listed["items"][k]["id"] for k in positions] == ids_of(sources, experiment, group)
    # From file://: the list filtered to a row, as the page shows it.
    group = next(g for g, r in groups.items() if r["episodes"] == 1)
    index = (out / "index.html").as_uri()
    dom = rendered(f"{index}#/x/{magic_results.name}/{experiment}?group={quote(group, safe='')}")
    assert "Episodes (1)" in dom and "The episodes behind the leaderboard row" in dom
    # A report's link (`viewer_link`, from report/<source>/): the experiment found, the row shown.
    link = viewer_link(experiment, group).removeprefix("../../index.html")
    dom = rendered(index + link)
    assert "Episodes (1)" in dom and "The episodes behind the leaderboard row" in dom
    # A seat's export: no analysis, no row to filter by.
    assert cli(capsys, "view", str(magic_results), "--export", str(seat),
               "--perspective", "seat:0")[0] == 0  # fmt: skip
    folder = seat / experiment_dir(magic_results.name, experiment)
    withheld = read_data(folder / "analysis.js")[1]
    assert withheld["leaderboards"] == withheld["calibration"] == withheld["noise"] == []
    assert "withheld" in withheld
    assert read_data(folder / "episodes.js")[1]["index"]["group"] == {}
