"""Transcripts in the HTML report: a bounded sample per setting, linked from the per-setting
table, hidden information marked, and model text escaped (a reply that tries to inject a script or
close the <pre> it is shown in stays text). Also the cells of line-up episodes in `status`."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.report_html import tables

import stratagem.studies  # noqa: F401  (registers the studies' sections)
from stratagem.analysis.cells import NO_ROUNDS, cell_table
from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.report import build_report
from stratagem.analysis.report_transcripts import MAX_TRANSCRIPTS, choose_sample
from stratagem.analysis.transcript import excerpt
from stratagem.experiments.config import load_config
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import EpisodeRecord, ResultStore, RoundRecord
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

INJECTION = "<script>alert(1)</script></pre><b>bold</b> & more"
"""A reply that would run a script, close the <pre> it is shown in and add markup."""


@pytest.fixture
def model() -> Iterator[None]:
    def reply(request: Request, sample: int) -> str:
        if request.choices:
            return request.choices[0]
        if request.json_schema is not None:
            return '{"offer": 40}'
        return INJECTION

    register_script("report-talk", reply)
    yield
    _REGISTERED.pop("report-talk", None)


def run(tmp_path: Path, name: str, **settings: Any) -> Path:
    data = {
        "name": name,
        "output": str(tmp_path / name),
        "models": [{"model": "scripted/report-talk"}],
        "agents": [{"name": "plain", "max_reasks": 1}],
        "retry": {"base_delay": 0},
        **settings,
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    summary = asyncio.run(Runner(load_config(path), show_progress=False).run())
    assert summary.failed == 0
    return tmp_path / name


def test_model_text_is_escaped_and_transcripts_are_linked(tmp_path: Path, model: None) -> None:
    out = run(
        tmp_path, "talk", games=["dilemma-talk"], lineups=[["plain", "plain"]], rounds=[2],
        seeds=[0, 1, 2],
    )  # fmt: skip
    html = build_report(out / STORE_FILE, out_path=tmp_path / "r.html").read_text("utf-8")
    # Only the escaped form: no script, no closing tag the model wrote, no markup of its own.
    assert "<script" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/pre&gt;&lt;b&gt;bold&lt;/b&gt;" in html
    assert "&amp; more" in html
    assert html.count("<pre>") == html.count("</pre>") > 0
    # Two of the three episodes of the one setting, folded, linked from the table's row.
    assert html.count('<details class="transcript"') == 2
    cells = tables(html)["Score, cooperation and invalid outputs per setting"]
    assert cells[0][-1] == "Transcripts" and cells[1][-1] == "1 2"
    for n in (1, 2):
        assert f'href="#transcript-{n}"' in html and f'id="transcript-{n}"' in html
    # Round by round, each seat's prompt and reply; a seat's own decision is marked hidden.
    section = html[html.index('<section id="transcripts">') :]
    assert "<h4>Round 1</h4>" in section and "<h4>Round 2</h4>" in section
    assert "hidden: seen by no seat (record only)" in section
    assert "was asked (decision)" in section and "seat 1</b> replied" in section


def test_games_without_a_table_get_transcripts_per_line_up(tmp_path: Path, model: None) -> None:
    out = run(
        tmp_path, "ult", games=["ultimatum"], seeds=[0],
        lineups=[["plain", "plain"], ["scripted:10", "plain"]],
    )  # fmt: skip
    html = build_report(out / STORE_FILE, out_path=tmp_path / "r.html").read_text("utf-8")
    titles = re.findall(r"<h3>(ultimatum: [^<]*)</h3>", html)
    assert titles == [
        "ultimatum: scripted/report-talk (plain) against plain:scripted/report-talk",
        "ultimatum: scripted:10 (scripted) against plain:scripted/report-talk",
    ]
    assert html.count('<details class="transcript"') == 2
    assert "<h4>Step 1</h4>" in html and "<h4>Round 1</h4>" not in html  # offer, then answer


def test_status_cells_describe_line_ups(tmp_path: Path, model: None) -> None:
    out = run(
        tmp_path, "ult", games=["ultimatum"], seeds=[0],
        lineups=[["plain", "scripted:accept"], ["scripted:10", "plain"]],
    )  # fmt: skip
    with ResultStore(out / STORE_FILE) as store:
        cells = {c.model: c for c in cell_table(store, "ult")}
    offer, answer = cells["scripted/report-talk"], cells["scripted:10"]
    assert (offer.agent, offer.opponent, offer.rounds) == ("plain", "scripted:accept", NO_ROUNDS)
    assert (answer.agent, answer.opponent, answer.rounds) == (
        "scripted", "plain:scripted/report-talk", NO_ROUNDS,
    )  # fmt: skip
    assert (offer.score, answer.score) == (60.0, 90.0)


def _episode(n: int, setting: int) -> EpisodeData:
    record = EpisodeRecord(
        id=f"e{n}", experiment_id="x", game="pd/pd",
        players=({"name": "zs", "kind": "llm", "model": "m"}, {"name": f"bot{setting:03d}"}),
        seed=n, status="finished", spec={"model": "m", "opponent": f"bot{setting:03d}"},
    )  # fmt: skip
    rounds = (RoundRecord(record.id, 1, ("C", "C"), (3.0, 3.0), True),)
    return EpisodeData(record, rounds, ())


def test_the_sample_is_bounded_and_spread_over_the_settings() -> None:
    few = choose_sample([_episode(n, n % 5) for n in range(15)])
    assert len(few.groups) == 5 and all(len(chosen) == 2 for _, chosen in few.groups)
    many = choose_sample([_episode(n, n % 100) for n in range(300)])
    chosen = [e for _, group in many.groups for _, e in group]
    assert len(chosen) == MAX_TRANSCRIPTS and many.settings == 100
    opponents = [e.spec["opponent"] for e in chosen]
    assert opponents[0] == "bot000" and opponents[-1] > "bot090"  # not only the first settings
    anchors = [a for _, group in many.groups for a, _ in group]
    assert len(set(anchors)) == len(anchors)


def test_long_bodies_keep_their_end() -> None:
    text = "\n".join(f"line {i}" for i in range(40))
    short = excerpt(text, 12, 1_000)
    assert short.splitlines()[0] == "... (28 earlier lines not shown)"
    assert short.endswith("line 39")
    huge = excerpt("x" * 5_000 + "\nChoose.", 12, 100)
    assert huge.startswith("... (4908 characters not shown)") and huge.endswith("Choose.")
    assert excerpt("short", 12, 100) == "short"
