"""`stratagem view --export` (issue 25 item 7): the static site written from the same data layer
the server answers from, over a real scripted Chameleon store and a PD store whose replies hold
`</script>`; a seat's export holds nothing hidden from that seat; a bad OUT is refused."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import rendered
from support.chameleon_view import SECRET_WORD, analysis_marker
from support.cli import cli
from support.named import only
from support.scripted_run import run_scripted

from stratagem.web.data import Perspective, Sources
from stratagem.web.export import MARKER, episode_file, experiment_dir

BREAKOUT = "</script><!--<script>alert(1)</script>&\u2028"
_WRAPPER = re.compile(r'window\.STRATAGEM_DATA=window\.STRATAGEM_DATA\|\|\{\};'
                      r'window\.STRATAGEM_DATA\["([^"]+)"\]=(.*);\n', re.S)  # fmt: skip


@pytest.fixture(scope="module")
def pd_results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Three seeds of PD against two opponents: two cells of three episodes, replies `BREAKOUT`."""
    tmp = tmp_path_factory.mktemp("export-pd")
    reply = lambda request, sample: f"{BREAKOUT} {request.choices[0]}"  # noqa: E731
    summary = run_scripted(
        tmp / "out", "breakout", reply,
        opponents=["TitForTat", "AlwaysDefect"], rounds=[2], seeds=[0, 1, 2],
    )  # fmt: skip
    assert summary.finished == 6, summary.errors
    yield tmp / "out"


def read_data(path: Path) -> tuple[str, Any]:
    """A data file's key and value: the JS wrapper stripped, the JSON parsed."""
    found = _WRAPPER.fullmatch(path.read_text(encoding="utf-8"))
    assert found is not None, path
    return found.group(1), json.loads(found.group(2))


def export(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, out, err = cli(capsys, "view", *argv)
    assert code == 0, err
    (line,) = out.strip().splitlines()
    return line


def every_page(sources: Sources, source: str, experiment: str) -> list[dict[str, Any]]:
    items, page = [], 0
    while True:
        got = sources.episodes(source, experiment, page=page)
        items += got["items"]
        page += 1
        if page * got["per_page"] >= got["total"]:
            return items


@pytest.mark.parametrize("which", ["chameleon", "pd"])
def test_every_file_parses_and_equals_what_the_data_layer_answers(
    which: str,
    chameleon: tuple[Path, str],
    pd_results: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    results = chameleon[0] if which == "chameleon" else pd_results
    out = tmp_path / "site"
    line = export(capsys, str(results), "--export", str(out))
    sources = Sources([results])
    experiments = sources.experiments()
    n = sum(len(every_page(sources, x["source"], x["id"])) for x in experiments)
    assert f"{n} episodes" in line and "files" in line and "bytes" in line
    assert {p.name for p in out.iterdir()} == {
        "index.html",
        "source.js",
        "app.js",
        "compare.js",
        "diff.js",
        "cells.js",
        "analysis.js",
        "charts.js",
        "launch.js",
        "calls.js",
        "links.js",
        "app.css",
        "favicon.svg",
        "views",
        "vendor",
        "data",
    }
    assert f'<meta name="{MARKER}" content="all">' in (out / "index.html").read_text()
    for path in (out / "data").rglob("*.js"):  # every key is its file's own path
        assert read_data(path)[0] == path.relative_to(out).as_posix()
    assert read_data(out / "data/sources.js")[1] == sources.sources()
    assert read_data(out / "data/experiments.js")[1] == experiments
    for x in experiments:
        folder = out / experiment_dir(x["source"], x["id"])
        assert read_data(folder / "cells.js")[1] == sources.cells(x["source"], x["id"])
        listed = read_data(folder / "episodes.js")[1]
        assert listed["items"] == every_page(sources, x["source"], x["id"])
        for item in listed["items"]:
            seats = len(item["seats"])
            for seen in [Perspective(None), *(Perspective(k) for k in range(seats))]:
                written = read_data(out / episode_file(x["source"], item["id"], seen))[1]
                assert written == sources.episode(x["source"], item["id"], seen)


def test_the_filter_index_is_the_data_layers_filters(
    pd_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    export(capsys, str(pd_results), "--export", str(out))
    sources = Sources([pd_results])
    (x,) = sources.experiments()
    listed = read_data(out / experiment_dir("out", x["id"]) / "episodes.js")[1]
    for name, values in listed["index"].items():
        for value, positions in values.items():
            want = sources.episodes(only(sources), x["id"], filters={name: value})["items"]
            assert [listed["items"][k] for k in positions] == want, (name, value)
    assert listed["index"]["status"]["finished"] == list(range(6))


def test_a_reply_cannot_break_out_of_a_data_script(
    pd_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    export(capsys, str(pd_results), "--export", str(out))
    files = list((out / "data").rglob("*.js"))
    raw = "".join(p.read_text(encoding="utf-8") for p in files)
    assert "\\u003c/script\\u003e" in raw  # the reply is there, escaped
    for bad in ("</script", "<!--", "<script", "&", "\u2028"):
        assert bad not in raw
    search = [p for p in files if p.name == "search.js"]
    assert any(BREAKOUT.lower() in text for p in search for text in read_data(p)[1])


def _text_file(path: Path) -> bool:
    """Every file but the Parquet downloads (binary: their values are in the CSV beside)."""
    return path.is_file() and path.suffix != ".parquet"


def test_a_seat_export_holds_nothing_hidden_from_that_seat(
    chameleon: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    everything, seat = tmp_path / "all", tmp_path / "seat2"
    export(capsys, str(chameleon[0]), "--export", str(everything))
    export(capsys, str(chameleon[0]), "--export", str(seat), "--perspective", "seat:2")
    # The strings are in the full export, so their absence below is the perspective's doing.
    full = "".join(p.read_text(encoding="utf-8") for p in everything.rglob("*") if _text_file(p))
    assert SECRET_WORD in full and analysis_marker(0) in full
    text = "".join(p.read_text(encoding="utf-8") for p in seat.rglob("*") if _text_file(p))
    assert SECRET_WORD not in text and SECRET_WORD.lower() not in text
    assert analysis_marker(0) not in text and analysis_marker(1) not in text
    assert analysis_marker(2) in text  # its own analyses, its search text included
    names = {p.name for p in (seat / "data/e").rglob("*.js")}
    assert names == {"seat-2.js"}
    assert f'<meta name="{MARKER}" content="seat:2">' in (seat / "index.html").read_text()


def test_max_per_cell_keeps_the_first_n_of_each_cell(
    pd_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    line = export(capsys, str(pd_results), "--export", str(out), "--max-per-cell", "2")
    assert "4 episodes" in line
    sources = Sources([pd_results])
    (x,) = sources.experiments()
    listed = read_data(out / experiment_dir("out", x["id"]) / "episodes.js")[1]
    everything = every_page(sources, "out", x["id"])
    cell_of = sources.cell_of_episodes(only(sources), x["id"])
    cells = sorted(set(cell_of.values()))
    assert len(cells) == 2 and len(everything) == 6  # three episodes in each of two cells
    firsts = {c: [e for e in everything if cell_of[e["id"]] == c][:2] for c in cells}
    want = [e for e in everything if any(e in kept for kept in firsts.values())]
    assert listed["items"] == want and len(want) == 4
    assert len(list((out / "data/e").iterdir())) == 1
    assert len(list((out / "data/e" / b"out".hex()).iterdir())) == 4


def test_experiment_limits_the_experiments(
    chameleon: tuple[Path, str],
    pd_results: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "site"
    (pd,) = Sources([pd_results]).experiments()
    export(capsys, str(chameleon[0]), str(pd_results), "--export", str(out),
           "--experiment", pd["id"])  # fmt: skip
    (written,) = read_data(out / "data/experiments.js")[1]
    named = f"{pd_results.parent.name}/out"  # both folders are named "out": told apart
    assert written["id"] == pd["id"] and written["source"] == named
    assert [p.name for p in (out / "data/x").iterdir()] == [named.encode().hex()]


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--experiment", "nope"], "--experiment nope"),
        (["--max-per-cell", "0"], "--max-per-cell 0"),
        (["--perspective", "seat"], "perspective 'seat'"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    argv: list[str],
    says: str,
    pd_results: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(capsys, "view", str(pd_results), "--export", str(tmp_path / "s"), *argv)
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert says in line


def test_an_out_that_is_a_file_or_a_full_folder_is_refused_untouched(
    pd_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine", encoding="utf-8")
    a_file = tmp_path / "file"
    a_file.write_text("mine", encoding="utf-8")
    for out, says in ((full, "not empty"), (a_file, "is a file")):
        code, printed, err = cli(capsys, "view", str(pd_results), "--export", str(out))
        assert code == 2 and printed == ""
        (line,) = err.strip().splitlines()
        assert says in line and str(out) in line
    assert [p.name for p in full.iterdir()] == ["notes.txt"]
    assert a_file.read_text(encoding="utf-8") == "mine"
    empty = tmp_path / "empty"
    empty.mkdir()
    export(capsys, str(pd_results), "--export", str(empty))
    assert (empty / "index.html").is_file()


def test_an_out_under_a_file_or_in_proc_is_one_line_and_nothing_written(
    pd_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("mine", encoding="utf-8")
    refused = {
        a_file / "site": f"({a_file} is not a folder)",
        a_file / "deeper" / "site": f"({a_file} is not a folder)",
    }
    if Path("/proc/self").is_dir():
        refused[Path("/proc/stratagem-site")] = "("
    for out, says in refused.items():
        code, printed, err = cli(capsys, "view", str(pd_results), "--export", str(out))
        assert code == 2 and printed == "", (out, printed)
        (line,) = err.strip().splitlines()
        assert line.startswith(f"error: --export {out}: cannot write a folder there {says}"), line
    assert a_file.read_text(encoding="utf-8") == "mine"
    assert not Path("/proc/stratagem-site").exists()


def test_a_seat_no_episode_has_is_refused_before_anything_is_written(
    pd_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    argv = ("view", str(pd_results), "--export", str(out), "--perspective", "seat:9")
    code, printed, err = cli(capsys, *argv)
    assert code == 2 and printed == ""
    assert err.strip() == (
        "error: --perspective seat:9: no episode to export has that seat "
        "(the episodes have seats 0 to 1)"
    )
    assert not out.exists()
    export(capsys, str(pd_results), "--export", str(out), "--perspective", "seat:1")  # the last
    assert list((out / "data" / "e" / b"out".hex()).iterdir())


def test_export_options_without_export_are_refused(
    pd_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "view", str(pd_results), "--max-per-cell", "3")
    assert code == 2 and out == ""
    assert "--max-per-cell: only with --export" in err.strip()


def test_the_exported_pages_work_from_file_urls_with_their_csp(
    chameleon: tuple[Path, str],
    pd_results: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    site, seat = tmp_path / "site", tmp_path / "seat"
    export(capsys, str(pd_results), "--export", str(site))
    (x,) = Sources([pd_results]).experiments()
    index = (site / "index.html").as_uri()
    assert "Episodes (6)" in rendered(f"{index}#/x/out/{x['id']}")
    # Filters run in the page, over the exported list and its index.
    assert "Episodes (6)" in rendered(f"{index}#/x/out/{x['id']}?status=finished")
    assert "Episodes (0)" in rendered(f"{index}#/x/out/{x['id']}?status=failed")
    assert "Episodes (6)" in rendered(f"{index}#/x/out/{x['id']}?q=%3C%2Fscript%3E")
    episode = Sources([pd_results]).episodes("out", x["id"])["items"][0]["id"]
    dom = rendered(f"{index}#/e/out/{episode}?perspective=seat:0&step=2")  # 1-based, as shown
    assert f"Episode {episode}" in dom and "step 2 of" in dom
    assert "\\u003c" not in dom and "&lt;/script&gt;" in dom  # the reply shown, as text
    export(capsys, str(chameleon[0]), "--export", str(seat), "--perspective", "seat:2")
    uri = (seat / "index.html").as_uri()
    dom = rendered(f"{uri}#/e/{chameleon[0].name}/{chameleon[1]}")
    assert "seat 2 (" in dom and "You are the chameleon!" in dom
    assert SECRET_WORD not in dom
    dom = rendered(f"{uri}#/e/{chameleon[0].name}/{chameleon[1]}?perspective=all")
    assert "this export holds only the seat:2 perspective" in dom
