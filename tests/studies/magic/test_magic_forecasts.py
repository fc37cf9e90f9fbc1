"""MAgIC's beliefs as forecasts (`studies/magic/forecasts.py`) on real stores: the probe answers
of the scripted competitions (`conftest.magic_store`) and the PGM agent's belief M, each with the
spy the game recorded as its outcome, what is not scored counted, and the report's calibration
section built from them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import CHALLENGER_ID, run_magic
from support.pgm_play import Replier, asked, beliefs_of, play, scripted_model, seat

from stratagem.agents.magic.analysis_parse import parse_chameleon_analysis
from stratagem.agents.magic.belief import init_chameleon, update
from stratagem.analysis.forecasts import ForecastSet
from stratagem.analysis.report import build_report
from stratagem.analysis.report_data import ReportData
from stratagem.experiments.store import ResultStore
from stratagem.llm.types import Request
from stratagem.studies.magic import forecasts as mf

SECTION = re.compile(r'<section id="calibration">(.*?)</section>', re.DOTALL)


def extracted(store: ResultStore) -> ForecastSet:
    (experiment,) = store.experiments()
    data = ReportData.load(store, experiment)
    return mf.magic_forecasts(data, data.episodes)


def spy_of(store: ResultStore, episode: str) -> int:
    (outcome,) = store.events(episode, "outcome")
    return int(outcome.data["spy"])


# -- the probes of the scripted competitions ------------------------------------------------------


@pytest.fixture(scope="module")
def probes(magic_store: Path) -> tuple[ResultStore, ForecastSet]:
    store = ResultStore(magic_store)
    return store, extracted(store)


def test_belief_probe_guesses_are_scored_against_the_recorded_spy(
    probes: tuple[ResultStore, ForecastSet],
) -> None:
    store, found = probes
    guesses = [f for f in found.forecasts if f.kind == mf.PROBE_SPY]
    assert guesses and all(f.probabilities is None for f in guesses)
    for f in guesses:
        assert f.seat is not None and f.when.startswith("magic-belief@")
        spy = spy_of(store, f.episode_id)
        # The scripted players call the lowest other seat "more suspicious" (`conftest.reply`).
        suspect = min(k for k in range(3) if k != f.seat)
        assert f.outcome == int(suspect == spy)
        if f.game == "chameleon":
            assert f.seat != spy, "the chameleon knows who the spy is"
    assert {f.model for f in guesses} == {CHALLENGER_ID, "def"}
    assert {f.agent for f in guesses} == {"magic"}


def test_role_answers_count_only_where_roles_are_hidden(
    probes: tuple[ResultStore, ForecastSet],
) -> None:
    store, found = probes
    roles = [f for f in found.forecasts if f.kind == mf.ROLE]
    assert roles and {f.game for f in roles} == {"undercover"}
    # Only the challenger answers readably ("non-undercover"): right unless it is the spy.
    assert {f.model for f in roles} == {CHALLENGER_ID}
    for f in roles:
        assert f.outcome == int(f.seat != spy_of(store, f.episode_id))
    asked_in = {"chameleon": 0, "undercover-def": 0}
    for e in store.episodes():
        for a in store.answers(e.id):
            if a.question_id.startswith("magic-consistency@"):
                if e.game.startswith("chameleon"):
                    asked_in["chameleon"] += 1
                elif e.players[a.player]["model_id"] == "def":
                    asked_in["undercover-def"] += 1
    assert found.skipped[mf.ROLE_TOLD] == asked_in["chameleon"] > 0
    assert found.skipped[mf.ROLE_UNREAD] == asked_in["undercover-def"] > 0


def test_unscored_probe_rows_are_counted(probes: tuple[ResultStore, ForecastSet]) -> None:
    _, found = probes
    read = len([f for f in found.forecasts if f.kind == mf.PROBE_SPY])
    # Every readable answer of a non-spy has two second-order rows; the challenger's garbage
    # answers before the second Chameleon clue are unreadable.
    assert found.skipped[mf.PROBE_SECOND] == 2 * (read + found.skipped[mf.PROBE_TIE])
    assert found.skipped[mf.PROBE_UNREAD] > 0 and found.skipped[mf.PROBE_SPY_KNOWS] > 0
    assert not any(f.kind == mf.PGM_BELIEF for f in found.forecasts)


def test_the_report_shows_the_section_for_a_magic_run(magic_store: Path) -> None:
    html = build_report(magic_store.parent).read_text(encoding="utf-8")
    found = SECTION.search(html)
    assert found is not None, "no calibration section"
    part = found.group(1)
    assert "Accuracy of point guesses" in part and mf.PROBE_SPY in part
    assert "Stored beliefs not scored" in part and mf.ROLE_TOLD in part
    assert "Calibration of probabilistic beliefs" not in part
    assert "chal&lt;i&gt;" in part and CHALLENGER_ID not in html


def test_no_section_without_beliefs(scripted_players: None, tmp_path: Path) -> None:
    store = run_magic(tmp_path, games=["npd3/0"], lineups=[["magic@def"] * 3])
    assert 'id="calibration"' not in build_report(store.parent).read_text(encoding="utf-8")


# -- the PGM agent's belief M --------------------------------------------------------------------


@pytest.fixture
def model() -> Iterator[list[Replier]]:
    yield from scripted_model()


VIEW = {
    0: "As Player 1,\nI think:\nPlayer 2 is more suspicious, because its clue is vague.\n"
    "Player 3 is no change, because it has not spoken.",
    1: "As Player 2,\nI think:\nPlayer 1 is more suspicious, because x\n"
    "Player 3 is more suspicious, because y",
}


def chameleon(view: Callable[[int], str] = VIEW.__getitem__) -> Replier:
    """Chameleon setting 0 (the chameleon is Player 3): fixed analyses, plain clues and votes."""

    def reply(request: Request) -> str:
        question = asked(request)
        if "evaluate who is more suspicious" in question or "deduce the secret code" in question:
            return view(seat(request))
        if "Now vote" in request.messages[-1].content:
            return "I vote for Player 3." if seat(request) != 2 else "I vote for Player 1."
        if "guess the code" in request.messages[-1].content:
            return 'I guess the code is "Apple"'
        return "It is a fruit."

    return reply


def test_pgm_belief_rows_forecast_the_chameleon(tmp_path: Path, model: list[Replier]) -> None:
    model[0] = chameleon()
    store, episode = play(tmp_path, "chameleon/0", ["pgm", "pgm", "magic"])
    assert spy_of(store, episode) == 2
    found = extracted(store)
    beliefs = [f for f in found.forecasts if f.kind == mf.PGM_BELIEF]
    assert sorted(f.seat or 0 for f in beliefs) == [0, 0, 0, 1, 1, 1]
    for owner in (0, 1):
        # The owner's own row of M after each analysis, recomputed from §7.2's update.
        m = init_chameleon(owner, False)
        mine = [f for f in beliefs if f.seat == owner]
        for f in mine:
            m = update(m, parse_chameleon_analysis(VIEW[owner], owner).matrix)
            assert f.probabilities == pytest.approx(tuple(m[owner]))
            assert f.outcome == 2 and f.game == "chameleon"
            assert (f.model, f.agent) == ("scripted/pgm-test", "pgm")
    assert found.skipped[mf.PGM_SECOND] == 2 * len(beliefs)
    assert found.skipped[mf.PGM_FACTOR] == 3 * len(beliefs)


def test_the_chameleons_own_belief_is_not_a_forecast(tmp_path: Path, model: list[Replier]) -> None:
    model[0] = chameleon(lambda s: "I think now Player 1 thinks:\nPlayer 2 is more suspicious, "
                         "because x")  # fmt: skip
    store, _ = play(tmp_path, "chameleon/0", ["magic", "magic", "pgm"])
    found = extracted(store)
    assert not found.forecasts
    assert found.skipped[mf.PGM_SPY_KNOWS] == 3


def test_an_unreadable_analysis_repeats_the_belief_and_is_not_scored(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = chameleon(lambda s: "I am not sure what to say.")
    store, episode = play(tmp_path, "chameleon/0", ["pgm", "magic", "magic"])
    stored = beliefs_of(store, episode, 0, "belief")
    assert stored and all(b.content["valid"] is False for b in stored if b.order == 1)
    found = extracted(store)
    assert not found.forecasts and found.skipped[mf.PGM_UNREAD] == 3


def test_the_report_draws_a_reliability_diagram_for_pgm_beliefs(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = chameleon()
    store, _ = play(tmp_path, "chameleon/0", ["pgm", "pgm", "magic"])
    html = build_report(store, out_path=tmp_path / "report.html").read_text(encoding="utf-8")
    found = SECTION.search(html)
    assert found is not None
    part = found.group(1)
    assert "Calibration of probabilistic beliefs" in part and mf.PGM_BELIEF in part
    assert "Reliability diagram, chameleon" in part and "<img" in part


def undercover_analyses(request: Request) -> str:
    """Undercover setting 0 (the undercover is Player 1): every analysis suspects Player 2."""
    if len(request.messages) == 1:
        text = request.messages[0].content
        if "what role do you think you are" in text:
            return "No, I am not the undercover."
        return "I think Player 2 is undercover, because x."
    if "Now vote" in request.messages[-1].content:
        return "I vote for Player 2."
    return "My clue is: it makes a sound."


def test_in_undercover_even_the_spy_forecasts(tmp_path: Path, model: list[Replier]) -> None:
    model[0] = undercover_analyses
    store, episode = play(tmp_path, "undercover/0", ["pgm", "magic", "pgm"])
    assert spy_of(store, episode) == 0
    found = extracted(store)
    beliefs = [f for f in found.forecasts if f.kind == mf.PGM_BELIEF]
    assert {f.seat for f in beliefs} == {0, 2}
    for owner in (0, 2):
        rows = [b.content["row"] for b in beliefs_of(store, episode, owner, "belief")
                if b.order == 1]  # fmt: skip
        mine = [f for f in beliefs if f.seat == owner]
        assert len(mine) == len(rows) > 0
        for f, row in zip(mine, rows, strict=True):
            assert f.probabilities == pytest.approx(tuple(row)) and f.outcome == 0
            assert f.game == "undercover" and f.when.startswith("pgm-analysis@")
