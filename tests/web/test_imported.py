"""Imported games read as played ones (issue 36 items 1-3): seed-003-style logs written as the
documented JSONL (rounds only: moves, points, validity, tokens; players named `zs`, `tft-br`)
and imported with `stratagem import`, as benchmarks/report.py's store is, then read by every
page: a step per round, invalid rounds as the cells table counts them, the agent filter, the
tokens, compare aligned by round, and every pair an episode has past the old cap of 200."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.browser import chromium, serving

from stratagem.analysis.episodes import load_episodes
from stratagem.analysis.invalid import invalid_rounds
from stratagem.cli import main
from stratagem.experiments.store import ResultStore
from stratagem.web.data import Perspective, Sources
from stratagem.web.data.compare import align

__all__ = ["chromium"]  # the session's browser, a fixture

EXPERIMENT = "seed-003"
FILLER = 205
"""Seeds of two-model filler cells: 205 model pairs, more than the old cap of 200."""
C, D = "cooperation", "defection"
EVERYTHING = Perspective(None)


def _line(model: str, seed: int, moves: list[list[str | None]]) -> dict[str, Any]:
    """One seed-003 game.json as docs/episode-format.md converts it (PD, zs vs tft-br)."""
    table = {(C, C): [4, 4], (C, D): [0, 6], (D, C): [6, 0], (D, D): [1, 1]}
    rounds = []
    for t, (a, b) in enumerate(moves):
        valid = a is not None and b is not None
        pay = table[(a, b)] if a is not None and b is not None else [0, 0]
        rounds.append({"round": t + 1, "actions": [a, b], "payoffs": pay, "valid": valid,
                       "tokens": [100 + t, 0]})  # fmt: skip
    return {
        "id": f"pd-{model}-{seed}",
        "experiment": {"id": EXPERIMENT},
        "game": "pd/pd",
        "seed": seed,
        "spec": {"model": model, "iteration": seed},
        "players": [
            {"name": "zs", "kind": "llm", "model": model},
            {"name": "tft-br", "kind": "strategy"},
        ],
        "rounds": rounds,
    }


LAST_A = f"pd-m1-{FILLER}"
LAST_B = f"pd-m2-{FILLER}"


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two results directories holding the same imported file; its last two games (seed
    FILLER) differ in rounds 2-4, and m1's forfeits round 2."""
    root = tmp_path_factory.mktemp("imported")
    lines = []
    for seed in range(FILLER):
        lines += [_line(m, seed, [[C, C], [C, C]]) for m in ("m1", "m2")]
    lines.append(_line("m1", FILLER, [[C, C], [None, C], [C, C], [C, C]]))
    lines.append(_line("m2", FILLER, [[C, C], [D, C], [D, D], [C, D]]))
    file = root / "seed003.jsonl"
    file.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    dirs = root / "one", root / "two"
    for folder in dirs:
        folder.mkdir()
        try:  # `stratagem import FILE --store DIR`
            main(["import", str(file), "--store", str(folder / "stratagem.db")])
        except SystemExit as exc:
            assert not exc.code, exc.code
    return dirs


def test_an_imported_repeated_game_has_a_step_per_round(imported: tuple[Path, Path]) -> None:
    episode = Sources([imported[0]]).episode("one", LAST_A, EVERYTHING)
    steps = episode["steps"]
    assert [s["round"] for s in steps] == [1, 2, 3, 4]
    assert [s["results"][0]["actions"] for s in steps] == [[C, C], [None, C], [C, C], [C, C]]
    assert [s["results"][0]["tokens"] for s in steps] == [[100, 0], [101, 0], [102, 0], [103, 0]]


def test_invalid_rounds_and_agents_read_as_the_cells_table_reads_them(
    imported: tuple[Path, Path],
) -> None:
    sources = Sources([imported[0]])
    with ResultStore(imported[0] / "stratagem.db", read_only=True) as store:
        episodes = load_episodes(store, EXPERIMENT)
    expected = {
        e.record.id: sum(len(invalid_rounds(e.rounds, e.events, s)) for s in range(2))
        for e in episodes
    }
    listed = [
        i
        for page in (0, 1)
        for i in sources.episodes("one", EXPERIMENT, page=page, per_page=500)["items"]
    ]
    assert {i["id"]: i["invalid"] for i in listed} == expected
    assert expected[LAST_A] == 1
    flagged = sources.episodes("one", EXPERIMENT, filters={"invalid": "1"})
    assert [i["id"] for i in flagged["items"]] == [LAST_A]
    (cell_agent,) = {c["agent"] for c in sources.cells("one", EXPERIMENT)}
    assert cell_agent == "zs"
    by_agent = sources.episodes("one", EXPERIMENT, filters={"agent": cell_agent})
    assert by_agent["total"] == len(expected)
    assert sources.episodes("one", EXPERIMENT, filters={"agent": "tft-br"})["total"] == 0


def test_the_experiments_page_counts_an_imports_tokens(imported: tuple[Path, Path]) -> None:
    (row,) = Sources([imported[0]]).experiments()
    assert row["tokens"] == FILLER * 2 * (100 + 101) + 2 * (100 + 101 + 102 + 103)


def test_compare_aligns_imported_games_by_round(imported: tuple[Path, Path]) -> None:
    sources = Sources([imported[0]])
    aligned = align(
        sources.episode("one", LAST_A, EVERYTHING), sources.episode("one", LAST_B, EVERYTHING)
    )
    assert aligned["by"] == "round" and aligned["first_difference"] == 1
    assert [r["same"] for r in aligned["steps"]] == [True, False, False, False]


def test_every_pair_an_episode_has_is_offered(imported: tuple[Path, Path]) -> None:
    sources = Sources(list(imported))
    got = {(p["kind"], p["b"]["source"], p["b"]["episode"]) for p in sources.pairs("one", LAST_A)}
    assert got == {("same-id", "two", LAST_A), ("model", "one", LAST_B)}


def test_the_pages_read_an_imported_game_as_a_played_one(
    chromium: Any, imported: tuple[Path, Path]
) -> None:
    """The agent filter finds the games, the list flags the invalid round, the replay has four
    steps, and the last episode's pairs (past the old cap) open a comparison by round."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = chromium
    wait = WebDriverWait(driver, 20)

    def text(d: Any) -> str:
        return str(d.find_element(By.ID, "main").text)

    total = 2 * FILLER + 2
    with serving(*imported) as url:
        driver.get(f"{url}#/x/one/{EXPERIMENT}?agent=zs")
        wait.until(lambda d: f"Episodes ({total})" in text(d))
        driver.get(f"{url}#/x/one/{EXPERIMENT}?invalid=1")
        wait.until(lambda d: "Episodes (1)" in text(d) and LAST_A in text(d))
        driver.get(f"{url}#/e/one/{LAST_A}")
        wait.until(lambda d: "step 1 of 4" in text(d))
        driver.get(f"{url}#/compare/one/{LAST_A}")
        pairs = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "a.pair"))
        assert sorted(a.text for a in pairs) == [LAST_A, LAST_B]
        next(a for a in pairs if a.text == LAST_B).click()
        note = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".first-note"))[0]
        assert note.text == "First difference at round 2."
        assert len(driver.find_elements(By.CSS_SELECTOR, "table.compare tbody tr")) == 4
