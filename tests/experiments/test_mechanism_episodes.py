"""Each cooperation mechanism played through the real runner into a real store (an LLM seat on a
scripted model against a strategy), its rounds read by the matrix games' metrics and by the
thesis' and the counterfactual study's tables, and the report's stated comparisons checked
against an independent paired t."""

from __future__ import annotations

import hashlib
import math
import statistics
from pathlib import Path

import pytest
from scipy import stats
from support.scripted_run import run_scripted

from stratagem.analysis.cells import cell_table
from stratagem.analysis.episodes import load_episodes
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_stated import stated_section
from stratagem.analysis.report_views import TableView
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.games.mechanisms.repetition import stopping_time
from stratagem.llm.types import Request
from stratagem.studies import counterfactual
from stratagem.studies.counterfactual.tables import study_games
from stratagem.studies.frames import study_frame

ROUNDS = 3
GAMES = {  # name -> (rows of the rounds table, seat 0's decisions besides its moves)
    "repetition/dilemma": (None, 0),  # rows: the seed's stopping time
    "reputation/dilemma": (3 * ROUNDS, 0),  # 3 members a group, one match each a round
    "mediation/dilemma": (ROUNDS, 0),
    "contracting/dilemma": (ROUNDS, 1),  # seat 0 proposes (the option `proposer`)
    "disarmament/dilemma": (ROUNDS, 1),
}
PREFERRED = ("cooperate/cooperate", "remove defect", "accept", "cooperate")


def cooperative(request: Request, sample: int) -> str:
    """Proposes the cooperative contract, gives up defecting, cooperates."""
    return next((c for c in PREFERRED if c in request.choices), request.choices[0])


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mechanisms")
    summary = run_scripted(
        out, "mechanisms", cooperative,
        agents=[{"name": "plain"}], games=list(GAMES), opponents=["TitForTat"],
        game_options={"contracting/dilemma": {"proposer": 0}}, rounds=[ROUNDS], seeds=[0, 1],
    )  # fmt: skip
    assert summary.failed == 0 and summary.finished == 2 * len(GAMES)
    return out / STORE_FILE


def test_every_mechanism_plays_and_stores_its_rounds_as_a_repeated_game(played: Path) -> None:
    with ResultStore(played, read_only=True) as store:
        episodes = store.episodes("mechanisms")
        assert {e.game for e in episodes} == set(GAMES)
        for e in episodes:
            rows, extra = GAMES[e.game]
            rounds = store.rounds(e.id)
            assert len(rounds) == (rows or stopping_time(e.seed, 0.8, ROUNDS))
            assert [r.round for r in rounds] == list(range(1, len(rounds) + 1))
            assert all(r.valid and r.actions[0] == "cooperate" for r in rounds)
            assert [list(ls) for ls in e.labels or ()] == [["cooperate", "defect"]] * 2
            totals = [sum(r.payoffs[p] for r in rounds) for p in (0, 1)]
            assert list(e.payoffs or ()) == totals
            decisions = [d for d in store.events(e.id, "decision") if d.player == 0]
            assert len(decisions) == len(rounds) + extra
            assert len(store.llm_calls(e.id)) == len(decisions)  # one call each, none re-asked


def test_the_mechanisms_own_events_are_recorded(played: Path) -> None:
    with ResultStore(played, read_only=True) as store:
        for e in store.episodes("mechanisms"):
            kinds = [ev.kind for ev in store.events(e.id)]
            if e.game == "contracting/dilemma":
                (offer,) = store.events(e.id, "proposal")
                assert offer.data == {"proposer": 0, "profile": ["cooperate", "cooperate"]}
                (bound,) = store.events(e.id, "contract")  # TitForTat accepts the cooperative one
                assert bound.data["accepted"] is True and bound.round == 1
                assert kinds.count("enforcement") == ROUNDS
            elif e.game == "disarmament/dilemma":
                (removal,) = store.events(e.id, "disarmament")
                assert removal.data == {"removed": ["defect", None]}
            elif e.game == "mediation/dilemma":
                followed = [ev.data["followed"] for ev in store.events(e.id, "mediation")]
                assert followed == [[True, True]] * ROUNDS
            elif e.game == "reputation/dilemma":
                assert kinds.count("match") == 3 * ROUNDS


def test_the_matrix_games_metrics_and_the_studies_tables_read_them(played: Path) -> None:
    with ResultStore(played, read_only=True) as store:
        cells = cell_table(store, "mechanisms")
        assert {c.game for c in cells} == set(GAMES)
        assert all(c.cooperation == 1.0 and c.invalid_rate == 0.0 for c in cells)
        thesis = study_frame(store, ("mechanisms",), "thesis")
        episodes = load_episodes(store, "mechanisms")
    # An LLM seat against a rule-based one in a 2x2 game: the thesis' behaviour metrics.
    assert sorted(thesis["Game"].unique()) == sorted(GAMES)
    assert (thesis["CR"] == 1.0).all() and len(thesis) == 2 * len(GAMES)
    # Two seats, rounds and a stage game: the counterfactual study's per-game metrics (its
    # section shows the games of counterfactual families only, which no mechanism forms).
    assert all(counterfactual.applies(e) for e in episodes)
    games, skipped = study_games(episodes)
    assert len(games) == 2 * len(GAMES) and not skipped.reasons
    for g in games:
        assert g.metrics["cooperation"] == 1.0 and g.metrics["validity"] == 100.0  # percent
        assert g.metrics["points"] == sum(p for p, _ in g.data.payoffs)


def coin(request: Request, sample: int) -> str:
    """A legal choice that depends on the whole prompt, so cooperation varies by episode."""
    text = "".join(m.content for m in request.messages)
    return request.choices[
        int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(request.choices)
    ]


def test_the_reports_stated_comparison_is_the_paired_t_of_the_episodes(tmp_path: Path) -> None:
    """The table's B − A and interval, computed again from the stored rounds."""
    games = ["mediation/dilemma", "disarmament/dilemma"]
    seeds = [0, 1, 2, 3, 4]
    run_scripted(
        tmp_path, "stated", coin, agents=[{"name": "plain"}], games=games,
        opponents=["TitForTat"], rounds=[4], seeds=seeds,
        analysis={"compare": [{"axis": "game", "a": games[0], "b": games[1]}]},
    )  # fmt: skip
    rates: dict[tuple[str, int], float] = {}
    with ResultStore(tmp_path / STORE_FILE, read_only=True) as store:
        for e in store.episodes("stated"):
            moves = [r.actions[0] for r in store.rounds(e.id)]
            rates[(e.game, e.seed)] = moves.count("cooperate") / len(moves)
        data = ReportData.load(store, store.experiment("stated"))  # type: ignore[arg-type]
        (section,) = stated_section(data)
    diffs = [rates[(games[1], s)] - rates[(games[0], s)] for s in seeds]
    mean = statistics.mean(diffs)
    half = stats.t.ppf(0.975, len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs))
    (table,) = [b for b in section.blocks if isinstance(b, TableView)]
    (row,) = table.rows
    cells = dict(zip(table.columns, (c.text for c in row), strict=True))
    assert cells["Comparison"] == f"game {games[0]} vs {games[1]} (cooperation)"
    assert cells["Paired by"] == "seed, repetition" and cells["n"] == "5 pairs"
    expected = f"{mean:+.2f} [{mean - half:.2f}, {mean + half:.2f}]"
    assert cells["B − A [95% CI]"] == expected


def test_a_decision_that_stays_invalid_is_recorded_counted_and_ruled_by_the_phase(
    tmp_path: Path,
) -> None:
    """A model that never answers with a label: each decision re-asked, then recorded invalid;
    the proposal becomes "none" and every round is forfeited (0, 0)."""
    summary = run_scripted(
        tmp_path, "garbled", lambda request, sample: "perhaps",
        agents=[{"name": "plain", "max_reasks": 1}], games=["contracting/dilemma"],
        game_options={"contracting/dilemma": {"proposer": 0}}, rounds=[2],
    )  # fmt: skip
    assert summary.finished == 1
    with ResultStore(tmp_path / STORE_FILE, read_only=True) as store:
        (e,) = store.episodes("garbled")
        (offer,) = store.events(e.id, "proposal")
        invalid = store.events(e.id, "invalid")
        rounds = store.rounds(e.id)
        calls = store.llm_calls(e.id)
        (cell,) = cell_table(store, "garbled")
    assert offer.data == {"proposer": 0, "profile": []}  # "none", by the phase's rule
    assert [(i.round, i.player) for i in invalid] == [(1, 0), (1, 0), (2, 0)]
    assert len(calls) == 2 * len(invalid)  # each asked, then re-asked once
    assert [(r.actions[0], r.payoffs, r.valid) for r in rounds] == [(None, (0.0, 0.0), False)] * 2
    assert cell.invalid_rate == 1.0 and cell.cooperation is None
