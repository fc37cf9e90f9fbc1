"""The ToM report section (seed-002): built from a store of TradeCraft games with the ToM agent's
notes and reports, it shows belief accuracy, proposals, Table 1 beside the paper's, outcomes and
calibration, says what it left out and why a result is missing, and escapes model text; the
transcripts show each seat's V reports and the public hands turn by turn."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.report_html import row, tables
from support.tom_games import new_store, play

import stratagem.studies  # noqa: F401  (registers the studies' sections when run alone)
from stratagem.analysis.report import build_report
from stratagem.analysis.transcript import build_transcript
from stratagem.errors import StratagemError

SECTION = re.compile(r'<section id="tom">(.*?)</section>', re.DOTALL)
MODEL = "openai/a"
EVIL = "<script>alert(1)</script>"


def tom_part(page: str) -> str:
    found = SECTION.search(page)
    assert found is not None, "no ToM section"
    return found.group(1)


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("tom-report")
    store = new_store(home / "stratagem.db")
    k = 0
    for group in ("V0", "V1", "V2"):
        for _ in range(3):
            k += 1
            play(store, f"a{k}", model=MODEL, group=group, seed=k, max_turn=6)
    for seed in (40, 41):  # too few games for three folds
        play(store, f"evil{seed}", model=EVIL, group="V1", seed=seed, max_turn=4)
    play(store, "both-baselines", group="V0", baseline=(True, True), seed=50)
    play(store, "unfinished", seed=51, finish=False)
    store.close()
    return home


@pytest.fixture(scope="module")
def html(store_dir: Path) -> str:
    return build_report(store_dir).read_text(encoding="utf-8")


def test_the_section_explains_the_reports_and_has_every_part(html: str) -> None:
    part = tom_part(html)
    assert "Theory of mind (seed-002)" in html
    assert "The game never reads these reports" in part
    for heading in (
        "Belief accuracy (§4)",
        "Proposals (§5)",
        "Decisions (§6)",
        "Outcomes (§7, not reported in the paper)",
        "Calibration against the real target (beyond the paper)",
    ):
        assert heading in part, heading
    assert "not in the paper" in part  # the V2 proxy is labelled
    assert len(re.findall(r'<img src="data:image/png;base64,', part)) == 4


def test_table_1_has_the_papers_layout_beside_the_published_values(html: str) -> None:
    found = tables(html)
    ours = found["Table 1 (this experiment): macro-F1 of the utility model"]
    assert ours[0] == ["Model", "Zero-order", "n", "First-order", "n", "Second-order", "n"]
    line = row(ours, MODEL)
    for cell in (line[1], line[3], line[5]):
        assert re.fullmatch(r"\d\.\d\d ± \d\.\d\d", cell), cell
    assert all(int(n) > 0 for n in (line[2], line[4], line[6]))
    paper = found["Table 1 (the paper's, for reference)"]
    assert row(paper, "GPT-4o")[1:] == ["0.77 ± 0.28", "0.94 ± 0.09", "1.00 ± 0.00"]
    assert row(paper, "GPT-5 (medium)")[1:] == ["0.74 ± 0.24", "0.92 ± 0.06", "0.85 ± 0.11"]


def test_the_groups_are_compared_with_intervals_and_holm(html: str) -> None:
    """Each group here played other seeds of the one instance: no pair, so Welch's t on 3 + 3
    games (the numbers are tested in test_tom_comparisons)."""
    table = tables(html)["Groups compared"]
    assert table[0][:4] == ["Model", "Measure", "B", "A"]
    assert [r[1:4] for r in table[1:] if r[0] == MODEL] == [
        ["KL(V0 opponent ‖ V1 focal), per game", "V2 group", "V1 group"],
        ["focal win", "V1 group", "V0 group"],
        ["focal win", "V2 group", "V0 group"],
    ]
    assert all(r[9] == "3 + 3 games, unpaired" for r in table[1:] if r[0] == MODEL)
    assert "Comparisons between groups (beyond the paper)" in tom_part(html)


def test_degenerate_results_show_their_reason(html: str) -> None:
    part = tom_part(html)
    ours = tables(html)["Table 1 (this experiment): macro-F1 of the utility model"]
    evil = next(r for r in ours[1:] if "script" in r[0])
    assert evil[3] == "not fitted"
    assert "2 episode(s) with decisions, fewer than 3 folds" in part


def test_exclusions_and_counts_are_said(html: str) -> None:
    part = tom_part(html)
    assert "11 games in the study" in part
    assert "both seats are V0 baselines" in part and "both-baselines" in part
    assert "1 running (not finished: never scored)" in part
    kl = tables(html)["Belief accuracy: KL(V0 opponent ‖ V1 focal)"]
    assert kl[0][3] == "Turns (n)"
    assert row(kl, MODEL)[3] == "18"  # 3 games x 6 turns of the V1 group
    mr = tables(html)["Proposal consistency: slope m and correlation r"]
    assert mr[0][4:6] == ["Proposals (n)", "Games"]
    outcomes = tables(html)["Acceptance and errors by seat (not reported in the paper)"]
    assert outcomes[0][-2:] == ["Craft errors / turn", "Report parse failures"]


def test_model_text_is_escaped(html: str) -> None:
    part = tom_part(html)
    assert EVIL not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in part


def test_without_v1_reports_the_belief_part_says_why(tmp_path: Path) -> None:
    store = new_store(tmp_path / "stratagem.db")
    for seed in range(3):
        play(store, f"v0-{seed}", group="V0", seed=seed, max_turn=3)
    store.close()
    part = tom_part(build_report(tmp_path).read_text(encoding="utf-8"))
    assert "only the V1 and V2 groups report V1), so there is no KL to show" in part
    assert "Proposals (§5)" in part  # the rest of the section is still there


def test_a_damaged_game_fails_the_report_naming_it(tmp_path: Path) -> None:
    store = new_store(tmp_path / "stratagem.db")
    play(store, "broken", seed=1, max_turn=2, finish=False)
    # a score out of range is repaired as the agent does (clipped); a row that holds no
    # report at all is damage
    store.add_belief("broken", 1, 0, 1, {"turn": 1, "phase": "decision", "values": "x=-1"})
    store.finish_episode("broken", [0.0, 0.0])
    store.close()
    with pytest.raises(StratagemError, match=r"'broken'.*values is 'x=-1'"):
        build_report(tmp_path)


def test_the_transcript_shows_reports_and_hands_turn_by_turn(tmp_path: Path) -> None:
    store = new_store(tmp_path / "stratagem.db")
    play(store, "t", group="V2", seed=3, max_turn=2)
    episode = store.episode("t")
    assert episode is not None
    text = build_transcript(store, episode).text()
    assert re.search(r"seat 0 reported V0 \(turn 1, proposal\): cherry_planks \d+, coal \d+", text)
    assert re.search(r"seat 0 reported V1 about seat 1 \(turn 2, decision\): \w+ \d+", text)
    assert re.search(r"seat 0 reported V2 about seat 1 \(turn 1, proposal\)", text)
    assert re.search(r"seat 1 reported V0 \(turn 1, decision\)", text)
    assert "hands: seat 0: cherry_planks 1, coal 1, cobblestone 1" in text
    assert "; seat 1: cobblestone 1, oak_planks 1, raw_copper 2, raw_iron 5" in text
    assert "said (proposal): Player 1 makes a proposal" in text
    # Each seat's reports sit under the move they came with, before the other seat's move.
    lines = text.splitlines()
    v0 = next(i for i, x in enumerate(lines) if "seat 0 reported V0 (turn 1, proposal)" in x)
    assert "seat 0 played" in "".join(lines[v0 - 3 : v0])
    later = [i for i, x in enumerate(lines) if "seat 1 reported V0 (turn 1, decision)" in x]
    proposal = next(i for i, x in enumerate(lines) if "said (proposal)" in x)
    reply = next(i for i, x in enumerate(lines) if "said (reply)" in x)
    assert v0 < proposal < later[0] < reply
    store.close()
    page = build_report(tmp_path).read_text(encoding="utf-8")
    assert "reported V1 about seat 1 (turn 1, proposal)" in page
