"""The general report on imported and non-matrix episodes, and the bugs found on real data:
games named only (`pd/sh`) resolved everywhere, null moves counted as invalid, seats described by
their kind, study sections only where the study applies, precise reasons for dropped games."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.report_html import tables

from stratagem.analysis.cells import cell_table
from stratagem.analysis.games import catalog_name, resolve_game
from stratagem.analysis.report_data import ReportData
from stratagem.errors import StratagemError
from stratagem.experiments.store import (
    EpisodeBundle,
    EpisodeRecord,
    EventRecord,
    ExperimentRecord,
    ResultStore,
    RoundRecord,
)
from stratagem.studies import build_report, get_exporter, get_importer
from stratagem.studies.counterfactual import tables as ct

EXPERIMENT = ExperimentRecord("logs", "imported logs", {}, "")
COT = {"name": "cot", "kind": "llm"}


def _episode(
    eid: str,
    game: str,
    moves: list[tuple[str | None, str | None]],
    *,
    opponent: Any = "tft-br",
    payoffs: list[tuple[float, float]] | None = None,
    events: tuple[EventRecord, ...] = (),
    spec: dict[str, Any] | None = None,
) -> EpisodeBundle:
    """An episode as seed-003's logs import: the game by name only, no labels or payoffs."""
    rounds = tuple(
        RoundRecord(
            eid,
            t,
            (a, b),
            payoffs[t - 1] if payoffs else None,
            a is not None and b is not None,
            (100, None),
        )
        for t, (a, b) in enumerate(moves, start=1)
    )
    record = EpisodeRecord(
        id=eid,
        experiment_id=EXPERIMENT.id,
        game=game,
        players=(
            {"name": "zs", "kind": "llm", "model": "m"},
            # A bare name, as imported logs give a bot: no kind in the descriptor.
            {"name": opponent} if isinstance(opponent, str) else opponent,
        ),
        seed=0,
        status="finished",
        spec=spec or {"iteration": 0},
        source="import:seed-003",
    )
    return EpisodeBundle(record, rounds, events)


def _store(path: Path, bundles: list[EpisodeBundle]) -> ResultStore:
    store = ResultStore(path)
    for bundle in bundles:
        store.put_episode(bundle, experiment=EXPERIMENT)
    return store


# -- one resolver ---------------------------------------------------------------------------------


def test_a_game_named_only_resolves_to_the_catalog() -> None:
    assert catalog_name("pd/sh") == "sh" and catalog_name("rps/ba3") == "ba3"
    assert catalog_name("dilemma") == "dilemma" and catalog_name("pd/unknown") == "pd/unknown"
    record = _episode("e", "pd/sh", []).episode
    assert resolve_game(record).labels == (("stag", "hare"), ("stag", "hare"))
    with pytest.raises(
        StratagemError, match="episode 'x': game 'nope' stores no labels or payoffs"
    ):
        resolve_game(_episode("x", "nope", []).episode)


def test_status_cells_read_the_cooperation_of_a_game_named_only(tmp_path: Path) -> None:
    """Old code read the cooperative action off the stored labels (NULL): 0.00 everywhere."""
    store = _store(
        tmp_path / "s.db",
        [_episode("a", "pd/sh", [("stag", "hare"), ("stag", "stag"), ("hare", "stag")])],
    )
    (cell,) = cell_table(store, "logs")
    assert cell.cooperation == pytest.approx(2 / 3)
    assert (cell.rounds, cell.agent) == (3, "zs")


# -- one definition of invalid ---------------------------------------------------------------------


def test_null_moves_are_invalid_outputs_everywhere(tmp_path: Path) -> None:
    """Old code counted only `invalid` events: "0 of N invalid outputs" beside forfeited moves."""
    moves = [
        ("cooperation", "defection"),
        (None, "cooperation"),
        (None, None),
        ("defection", "cooperation"),
    ]
    store = _store(
        tmp_path / "stratagem.db",
        [
            _episode("a", "pd/pd", moves),
            _episode("b", "pd/pd", [("cooperation", None)] * 2, opponent=COT),
        ],
    )
    cells = {c.opponent: c for c in cell_table(store, "logs")}
    assert cells["tft-br"].invalid_rate == pytest.approx(0.5)  # 2 of episode a's 4 moves
    assert cells["tft-br"].cooperation == pytest.approx(1 / 2)  # of its 2 valid moves
    data = ReportData.load(store, EXPERIMENT)
    # Seat 0: 2 forfeits in 6 moves; seat 1 of "b" is an LLM with 2 forfeits (tft-br never fails).
    assert data.invalid_totals() == (8, 4)
    store.close()
    html = build_report(tmp_path).read_text("utf-8")
    assert "4 of 8" in html
    found = tables(html)
    invalid = found["Invalid outputs per model and agent"]
    assert next(r for r in invalid if r[:2] == ["m", "zs"])[2:6] == ["6", "2", "0.33", "2"]
    assert next(r for r in invalid if r[0] == "cot")[2:6] == ["2", "2", "1.00", "2"]


# -- seats by kind, studies where they apply ------------------------------------------------------


def test_an_imported_seed003_experiment_reads_as_seed003(tmp_path: Path) -> None:
    bundles = []
    for run in range(2):
        for game, move in (("pd/pd", "defection"), ("pd/sh", "stag")):
            for opponent in ("tft-br", {"name": "cot", "kind": "llm", "model": "m"}):
                name = opponent if isinstance(opponent, str) else opponent["name"]
                bundles.append(
                    _episode(
                        f"{game}-{name}-{run}".replace("/", "_"),
                        game,
                        [(move, move)] * 4,
                        opponent=opponent,
                        spec={"iteration": run},
                    )
                )
    _store(tmp_path / "stratagem.db", bundles).close()
    html = build_report(tmp_path).read_text("utf-8")
    # The LLM opponent is not a rule-based one; the agent configuration is the imported prompt.
    assert "1 agent configuration" in html and "0 agent configurations" not in html
    assert "rule-based: tft-br" in html and "LLM: cot" in html
    assert "cot (LLM player)" in html
    # seed-003's section, none of the thesis' (its glossary cites the thesis).
    assert "Counterfactual strategic reasoning (seed-003 tables)" in html
    assert "Cremonini" not in html and "Average behaviour scores" not in html
    assert "not a two-player game" not in html
    cells = tables(html)["Score, cooperation and invalid outputs per setting"]
    sh = [r for r in cells[1:] if r[2] == "pd/sh"]
    assert sh and all(r[8] == "1.00" for r in sh)  # always stag: cooperating, not 0.00


def test_a_dropped_game_says_precisely_why(tmp_path: Path) -> None:
    """Old code: "N episode(s) are not 2-player matrix games" for a label problem."""
    good = [("rock", "paper")] * 3
    _store(
        tmp_path / "stratagem.db",
        [
            _episode("ok", "rps/eq1", good, opponent="srep"),
            _episode("bad", "rps/eq1", [("Scissors", "paper")] * 3, opponent="srep"),
        ],
    ).close()
    html = build_report(tmp_path).read_text("utf-8")
    assert "1 episode(s) are left out of these tables" in html
    assert "&#39;Scissors&#39; is not an action of player 0" in html
    assert "episode &#39;bad&#39;" in html
    assert "not 2-player matrix games" not in html
    with ResultStore(tmp_path / "stratagem.db") as store:
        games, skipped = ct.load_study_games(store, "logs")
    assert (len(games), skipped) == (1, 1)


# -- any game -------------------------------------------------------------------------------------


def test_a_game_without_rounds_gets_the_general_sections(tmp_path: Path) -> None:
    """Ultimatum-like: moves only as events, labels and payoffs NULL, final payoffs stored."""
    eid = "u1"
    events = (
        EventRecord(eid, 0, "offer", {"offer": 40}, round=1, player=0),
        EventRecord(eid, 1, "decision", {"action": "offer 40", "valid": True}, 1, 0),
        EventRecord(eid, 2, "invalid", {"texts": ["maybe?"]}, round=1, player=1),
        EventRecord(eid, 3, "decision", {"action": "accept", "valid": False}, 1, 1),
    )
    record = EpisodeRecord(
        id=eid,
        experiment_id=EXPERIMENT.id,
        game="ultimatum",
        players=(
            {"name": "plain:m", "kind": "llm", "model": "m", "agent": "plain"},
            {"name": "plain:m", "kind": "llm", "model": "m", "agent": "plain"},
        ),
        seed=1,
        status="finished",
        payoffs=(60.0, 40.0),
    )
    with ResultStore(tmp_path / "stratagem.db") as store:
        store.put_episode(EpisodeBundle(record, (), events), experiment=EXPERIMENT)
    html = build_report(tmp_path).read_text("utf-8")
    found = tables(html)
    seats = found["Payoff and invalid moves per seat"]
    assert seats[1][:8] == ["ultimatum", "0", "LLM", "m", "1", "60.00", "1", "0.00"]
    assert seats[2][:8] == ["ultimatum", "1", "LLM", "m", "1", "40.00", "1", "1.00"]
    assert "1 of 2" in html  # the headline counts decisions of any game
    assert "Counterfactual strategic reasoning" not in html and "Cremonini" not in html


def test_formats_are_found_through_the_registry() -> None:
    assert get_importer("thesis-csv") is not get_importer("jsonl")
    assert get_exporter("thesis-csv") is not get_exporter("jsonl")
    with pytest.raises(StratagemError, match="--format: got 'xml', allowed: jsonl, thesis-csv"):
        get_importer("xml")
