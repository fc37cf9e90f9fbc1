"""The MAgIC section's ratings beyond Bradley-Terry: deviation ratings (pairwise, worked by hand
for two entities; over competitions, for two challengers), ratings by role, the capability
profile, the episodes behind each row, and a person's seat rated as the population "human"."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CHALLENGER, DEFENDER
from support.magic_records import DEFENDER as SYNTH_DEFENDER
from support.magic_records import full_set
from support.play import play
from support.report_html import row, tables

from stratagem.analysis.deviation_rating import task_ratings
from stratagem.analysis.episodes import load_episodes
from stratagem.analysis.rating import PairResult, bradley_terry
from stratagem.analysis.rating_inputs import HUMAN
from stratagem.analysis.report import build_report
from stratagem.analysis.report_views import TableView
from stratagem.experiments.store import ResultStore
from stratagem.studies.magic import rating_section
from stratagem.studies.magic.extract import MagicData, magic_data, rating_results
from stratagem.studies.magic.leaderboard import leaderboard


@pytest.fixture(scope="module")
def html(magic_store: Path) -> str:
    return build_report(magic_store.parent).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def data(magic_store: Path) -> MagicData:
    store = ResultStore(magic_store)
    experiment = store.experiments()[0]
    return magic_data(store, experiment.config, load_episodes(store, experiment.id))


def test_pairwise_deviation_ratings_of_two_entities(html: str, data: MagicData) -> None:
    """Two entities: M = [[0, s - ½], [½ - s, 0]] with s the challenger's weighted share of
    wins. The challenger's row dominates, the equilibrium is (challenger, challenger) worth 0,
    so the challenger rates 0 and the defender M[def, chal] - 0 = ½ - s."""
    results, _ = rating_results(data)
    weight = sum(r.weight for r in results)
    won = sum(r.weight * (r.outcome if r.a == CHALLENGER else 1 - r.outcome) for r in results)
    s = won / weight
    assert s > 0.5
    dev = tables(html)["Deviation ratings"]
    assert dev[0] == ["Entity", "Pairwise", "Over competitions", "Episodes"]
    assert row(dev, CHALLENGER)[1:] == ["0.0", "–", "26"]
    assert row(dev, DEFENDER)[1] == f"{100 * (0.5 - s):.1f}"
    assert "clone-invariant" in html and "arXiv:2502.11645" in html
    assert "needs two challengers or more" in html


def test_over_competitions_for_two_challengers() -> None:
    games = full_set("a|magic") + full_set("b|magic", flip=True)
    rows = leaderboard(games, n_boot=10)
    assert {r.entity: len(r.episodes) for r in rows} == {"a|magic": 0, "b|magic": 0}
    results = [
        PairResult(c, SYNTH_DEFENDER, y, game_type="t", game_id=f"{c}{k}")
        for c, y in (("a|magic", 1.0), ("b|magic", 0.0))
        for k in range(3)
    ]
    table = bradley_terry(results, n_boot=5)
    view = rating_section.deviation_board(results, table, rows)
    cells = {r.label: list(r.cells) for r in view.rows}
    expected = task_ratings(rating_section.competition_scores(rows)).models
    for entity in ("a|magic", "b|magic"):
        assert cells[entity][1] == f"{100 * expected[entity]:.1f}".replace("-0.0", "0.0")
        assert cells[entity][2] == "3"
    assert cells[SYNTH_DEFENDER][:2] == ["–", "–"]
    assert "Pairwise: 1 pair of entities never met (e.g. a|magic and b|magic)" in view.note
    assert "best separate the challengers" in view.note


def test_ratings_by_role_and_the_profile(html: str, data: MagicData) -> None:
    roles = tables(html)["Ratings by role"]
    assert roles[0] == ["Entity", "Game", "Role", "Rating", "Group", "Deviation", "Games"]
    units = {(r[1], r[2], r[0]) for r in roles[1:]}
    assert units == {
        (game, role, entity)
        for game, pair in (("Chameleon", ("chameleon", "non-chameleon")),
                           ("Undercover", ("undercover", "civilian")))
        for role in pair
        for entity in (CHALLENGER, DEFENDER)
    }  # fmt: skip
    profile = tables(html)["Capability profile across the five games"]
    assert profile[0][1:6] == ["Chameleon", "Undercover", "Cost Sharing", "PD", "Public Good"]
    assert row(profile, CHALLENGER)[-1] == "26"
    # the challenger's PD advantage: every PD episode it outscored the defender's seats
    pd = [o.value for o in rating_section.profile_advantages(data)
          if o.entity == CHALLENGER and o.game == "npd3"]  # fmt: skip
    assert row(profile, CHALLENGER)[4].startswith(f"{100 * sum(pd) / len(pd):+.1f}")


def test_every_row_knows_its_episodes(data: MagicData) -> None:
    ids = sorted(g.episode_id for g in data.games)
    assert rating_section.rating_episodes(data) == {CHALLENGER: tuple(ids), DEFENDER: tuple(ids)}
    (board,) = leaderboard(data.games, n_boot=10)
    assert board.episodes == tuple(ids)


def test_a_person_enters_the_ratings_as_human(tmp_path: Path) -> None:
    seats = ["0=human", "1=scripted:It is sweet.,Player 1", "2=scripted:Red.,Player 1"]
    args = [arg for seat in seats for arg in ("--seat", seat)]
    done = play(tmp_path, "It grows in bunches.\n1\n", "chameleon/0", *args)
    assert done.returncode == 0, done.stderr
    with ResultStore(tmp_path / "play" / "stratagem.db") as store:
        (experiment,) = store.experiments()
        data = magic_data(store, experiment.config, load_episodes(store, experiment.id))
    (episode,) = data.episodes
    assert data.entities[episode.record.id][0] == HUMAN
    assert HUMAN in rating_section.rating_episodes(data)
    blocks = rating_section.rating_blocks(data, (), n_boot=5, level=0.95, seed=0)
    bt = next(b for b in blocks if isinstance(b, TableView) and b.title == "Bradley-Terry rating")
    assert HUMAN in [r[0].text for r in bt.rows]
