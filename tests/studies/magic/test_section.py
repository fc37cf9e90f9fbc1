"""The MAgIC report section (seed-004): built from a store of scripted competitions on all five
games, it shows the leaderboard, the radar chart, the detail table, the rating and the invalid
replies, with model text escaped; it is absent from reports without MAgIC games."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from conftest import CHALLENGER, CHALLENGER_ID, DEFENDER, run_magic
from support.magic_records import full_set
from support.report_html import row, tables

from stratagem.analysis.episodes import load_episodes
from stratagem.analysis.report import build_report
from stratagem.analysis.report_views import Note, TableView
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.studies.magic import section
from stratagem.studies.magic.extract import magic_data
from stratagem.studies.magic.metrics import metric_values
from stratagem.studies.magic.options import MetricOptions

SECTION = re.compile(r'<section id="magic">(.*?)</section>', re.DOTALL)


@pytest.fixture(scope="module")
def html(magic_store: Path) -> str:
    return build_report(magic_store.parent).read_text(encoding="utf-8")


def magic_part(page: str) -> str:
    found = SECTION.search(page)
    assert found is not None, "no MAgIC section"
    return found.group(1)


def test_the_leaderboard_has_the_challengers_metrics_with_intervals(
    html: str, magic_store: Path
) -> None:
    board = tables(html)["MAgIC leaderboard"]
    assert board[0] == [
        "Challenger", "W", "Judgement", "Reasoning", "Deception", "Self-awareness",
        "Cooperation", "Coordination", "Rationality", "Games", "Invalid", "Cost / game",
    ]  # fmt: skip
    assert len(board) == 2
    line = row(board, CHALLENGER)
    store = ResultStore(magic_store)
    experiment = store.experiments()[0]
    games = magic_data(store, experiment.config, load_episodes(store, experiment.id)).games
    values = metric_values(games, MetricOptions())
    for k, name in enumerate(section.LABELS, start=1):
        value = values[name]
        assert value is not None
        assert re.fullmatch(rf"{100 * value:.1f} \(\d+\.\d–\d+\.\d\)", line[k]), (name, line[k])
    assert line[9] == "26"
    bad = sum(g.invalid[s] for g in games for s in g.challenger_seats)
    asked = sum(g.decisions[s] for g in games for s in g.challenger_seats)
    assert bad > 0 and line[10] == f"{bad / asked:.1%} ({bad}/{asked})"
    assert line[11] == "$0.0000"
    part = magic_part(html)
    assert "Metric options: defaults" in part and "26 games in all" in part
    assert f"against {DEFENDER}" in part


def test_the_section_draws_the_radar_and_its_areas(html: str) -> None:
    part = magic_part(html)
    assert len(re.findall(r'<img src="data:image/png;base64,', part)) == 1
    areas = tables(html)["Radar area"]
    assert row(areas, CHALLENGER)[1] != "–"


def test_the_detail_table_has_the_game_theory_columns_and_role_rates(html: str) -> None:
    detail = tables(html)["Game-theory detail and role win rates"]
    assert detail[0][1:7] == ["CS WR", "Cost", "PD WR", "Score", "PG WR", "Payback"]
    assert detail[0][7:] == ["Chameleon", "Non-chameleon", "Undercover", "Civilian"]
    line = row(detail, CHALLENGER)
    # The challenger agreed to 40/30/30 in every Cost Sharing game: its share averages 33.3%.
    assert line[1].startswith("100.0") and line[2].startswith("33.3")


def test_the_rating_ranks_every_entity(html: str) -> None:
    rating = tables(html)["Bradley-Terry rating"]
    assert rating[0] == ["Entity", "Rating", "Games", "W / T / L", "Cost / game"]
    assert [r[0] for r in rating[1:]] == [CHALLENGER, DEFENDER]
    assert row(rating, CHALLENGER)[2] == row(rating, DEFENDER)[2] == "26"
    high, low = (int(r[1].split()[0]) for r in rating[1:])
    assert high > 1500 > low


def test_the_invalid_replies_and_the_explanations_are_shown(html: str) -> None:
    invalid = tables(html)["Invalid replies in the competition games"]
    assert row(invalid, CHALLENGER)[1] == "challenger" and int(row(invalid, CHALLENGER)[3]) > 0
    assert row(invalid, DEFENDER)[1] == "defender" and int(row(invalid, DEFENDER)[3]) > 0
    part = magic_part(html)
    for label in ("Judgement", "Reasoning", "Deception", "Self-awareness", "Rationality"):
        assert f"<dt>{label}</dt>" in part
    assert "§6.8" in part and "§10.10" in part
    assert "No model was played as a challenger with both" in part


def test_model_text_is_escaped(html: str) -> None:
    assert CHALLENGER_ID not in html
    assert "chal&lt;i&gt;|magic" in magic_part(html)
    assert "<script" not in html.lower()


def test_self_play_is_no_competition(scripted_players: None, tmp_path: Path) -> None:
    store = run_magic(tmp_path, games=["npd3/0"], lineups=[["magic@def"] * 3])
    part = magic_part(build_report(store.parent).read_text(encoding="utf-8"))
    assert "1 MAgIC episode is not in the leaderboard: 1 × self-play" in part
    assert "no leaderboard" in part and "nothing to rate" in part
    assert "MAgIC leaderboard" not in part and "<img" not in part


def test_no_section_without_magic_games(tmp_path: Path) -> None:
    register_script("magic-none", lambda request, sample: "cooperate")
    data = {
        "name": "pd",
        "output": str(tmp_path),
        "models": [{"model": "scripted/magic-none"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [2],
        "retry": {"base_delay": 0},
    }
    try:
        asyncio.run(Runner(config_from_dict(data, "test"), show_progress=False).run())
    finally:
        _REGISTERED.pop("magic-none", None)
    page = build_report(tmp_path).read_text(encoding="utf-8")
    assert SECTION.search(page) is None and section.TITLE not in page


def test_the_comparisons_follow_the_pgm_gains(html: str) -> None:
    """One challenger here: the section says there is none to compare it with (the numbers are
    tested in test_comparison_section)."""
    part = magic_part(html)
    assert part.index("PGM gains") < part.index("Comparisons") < part.index("Bradley-Terry")
    assert "One challenger here (chal&lt;i&gt;|magic)" in part


def test_pgm_gains_compare_the_twins_ability_by_ability() -> None:
    games = full_set("m|magic") + full_set("m|pgm", flip=True)
    blocks = section.pgm_blocks(games, MetricOptions())
    (table,) = (b for b in blocks if isinstance(b, TableView))
    assert table.title == "PGM vs vanilla: m"
    labels = [r[0].text for r in table.rows]
    assert labels[:8] == list(section.LABELS.values())
    assert labels[8].startswith("Radar area")
    assert "14 matched games" in table.caption
    assert all(len(r) == 6 for r in table.rows)
    assert not any(isinstance(b, Note) for b in blocks)


def test_pgm_gains_need_both_architectures() -> None:
    blocks = section.pgm_blocks(full_set("m|magic"), MetricOptions())
    assert any(isinstance(b, Note) and "no PGM gain" in b.text for b in blocks)


def test_code_compat_and_both_variants_from_the_report_options(
    magic_store: Path, tmp_path: Path
) -> None:
    """`report --set magic.code_compat=true` scores as the authors' code, states it at the top
    of the section, and `magic.variants=both` puts the two leaderboards row beside row."""
    store = ResultStore(magic_store)
    experiment = store.experiments()[0]
    games = magic_data(store, experiment.config, load_episodes(store, experiment.id)).games
    code = metric_values(games, MetricOptions(code_compat=True))
    paper = metric_values(games, MetricOptions())

    out = tmp_path / "code.html"
    build_report(magic_store.parent, out_path=out, settings={"magic": {"code_compat": "true"}})
    page = out.read_text(encoding="utf-8")
    part = magic_part(page)
    assert "Analysis options that differ from the defaults: code_compat = True" in part
    line = row(tables(page)["MAgIC leaderboard"], CHALLENGER)
    for k, name in enumerate(section.LABELS, start=1):
        assert line[k].startswith(f"{100 * code[name]:.1f} "), (name, line[k])  # type: ignore[operator]

    out = tmp_path / "both.html"
    build_report(magic_store.parent, out_path=out, settings={"magic": {"variants": "both"}})
    both = tables(out.read_text(encoding="utf-8"))["MAgIC leaderboard: paper and code-compatible"]
    assert both[0][:2] == ["Challenger", "Variant"]
    assert [r[1] for r in both[1:]] == ["paper", "code"]
    for variant, values in zip(both[1:], (paper, code), strict=True):
        for k, name in enumerate(section.LABELS, start=2):
            assert variant[k].startswith(f"{100 * values[name]:.1f}"), (name, variant[k])  # type: ignore[operator]
    assert paper != code  # the fixture's games tell the two readings apart
