"""Tournaments and Moran processes, cross-checked against the Axelrod library."""

from __future__ import annotations

import pytest

from stratagem.errors import StratagemError
from stratagem.experiments.limits import MAX_MATCH_ROUNDS, MAX_POPULATION
from stratagem.experiments.moran import MoranProcess
from stratagem.experiments.tournament import Tournament
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.registry import get_strategy

# Axelrod's default game: R=3, P=1, S=0, T=5.
AXELROD_PD = NormalFormGame.prisoners_dilemma("axelrod-pd", t=5, r=3, p=1, s=0)

# The deterministic strategies both libraries have: stratagem name -> axelrod class name.
SHARED = {
    "AlwaysCooperate": "Cooperator",
    "AlwaysDefect": "Defector",
    "TitForTat": "TitForTat",
    "GrimTrigger": "Grudger",
    "TitForTwoTats": "TitFor2Tats",
    "SuspiciousTitForTat": "SuspiciousTitForTat",
    "WinStayLoseShift": "WinStayLoseShift",
    "Alternator": "Alternator",
}


def test_round_robin_matches_axelrod_per_match_scores() -> None:
    axl = pytest.importorskip("axelrod")
    turns, repetitions = 50, 3
    ours = Tournament(
        [get_strategy(name) for name in SHARED], AXELROD_PD, turns=turns, repetitions=repetitions
    ).play()
    theirs = axl.Tournament(
        [getattr(axl, cls)() for cls in SHARED.values()], turns=turns, repetitions=repetitions
    ).play(processes=1, progress_bar=False)
    checked = 0
    for i, j in [(a, b) for a in range(len(SHARED)) for b in range(a, len(SHARED))]:
        scores = ours.scores(i, j)
        assert len(scores) == repetitions
        for rep, (a, b) in enumerate(scores):
            # axelrod's `payoffs[i][j][rep]` is player i's mean payoff per turn against j.
            assert a == pytest.approx(theirs.payoffs[i][j][rep] * turns)
            assert b == pytest.approx(theirs.payoffs[j][i][rep] * turns)
            checked += 1
    assert checked == 36 * repetitions


def test_standings_table() -> None:
    players = [get_strategy(n) for n in ("AlwaysCooperate", "AlwaysDefect", "TitForTat")]
    result = Tournament(players, AXELROD_PD, turns=10, repetitions=2, self_play=False).play()
    rows = {row.player: row for row in result.standings()}
    # AlwaysDefect: 10 turns x 5 against AC, then 5 + 9 x 1 against TFT, per repetition.
    assert rows["AlwaysDefect"].mean_score == pytest.approx((50 + 14) * 2 / 40)
    assert rows["AlwaysDefect"].wins == 4
    assert rows["AlwaysDefect"].cooperation == 0.0
    assert rows["AlwaysCooperate"].cooperation == 1.0
    assert rows["TitForTat"].cooperation == pytest.approx((10 + 1) / 20)
    assert [r.rank for r in result.standings()] == [1, 2, 3]
    assert result.standings()[0].player == "AlwaysDefect"


def test_seeded_stochastic_tournament_is_reproducible() -> None:
    def run(seed: int) -> list[tuple[float, float]]:
        players = [get_strategy("Random(0.5)"), get_strategy("TitForTat")]
        t = Tournament(players, AXELROD_PD, turns=30, repetitions=3, noise=0.1, seed=seed)
        return [m.result.scores for m in t.play().matches]

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_noise_changes_deterministic_matches_per_repetition() -> None:
    players = [get_strategy("TitForTat"), get_strategy("AlwaysCooperate")]
    result = Tournament(players, AXELROD_PD, turns=100, repetitions=4, noise=0.2, seed=3).play()
    assert len({r.result.actions for r in result.matches if (r.first, r.second) == (0, 1)}) > 1


def test_self_play_toggle_and_validation() -> None:
    players = [get_strategy("TitForTat"), get_strategy("AlwaysDefect")]
    assert Tournament(players, AXELROD_PD, self_play=True).pairs() == [(0, 0), (0, 1), (1, 1)]
    assert Tournament(players, AXELROD_PD, self_play=False).pairs() == [(0, 1)]
    with pytest.raises(StratagemError, match="turns"):
        Tournament(players, AXELROD_PD, turns=0)
    with pytest.raises(StratagemError, match="noise"):
        Tournament(players, AXELROD_PD, noise=1.5)
    with pytest.raises(StratagemError, match="once"):
        Tournament([get_strategy("TitForTat"), get_strategy("TitForTat")], AXELROD_PD)


def test_moran_fixates_and_is_reproducible() -> None:
    def run(seed: int) -> tuple[str | None, int]:
        population = [get_strategy(n) for n in ("AlwaysDefect", "TitForTat", "AlwaysCooperate")]
        result = MoranProcess(population * 2, AXELROD_PD, turns=20, seed=seed).play()
        return result.winner, result.generations

    winner, generations = run(1)
    assert winner in {"AlwaysDefect", "TitForTat", "AlwaysCooperate"}
    assert generations >= 1
    assert run(1) == run(1)


def test_moran_population_size_is_constant_and_mutation_runs_to_the_limit() -> None:
    population = [get_strategy(n) for n in ("AlwaysDefect", "TitForTat")]
    result = MoranProcess(
        population, AXELROD_PD, turns=5, mutation_rate=0.5, max_generations=25, seed=2
    ).play()
    assert result.generations == 25
    assert result.winner is None or len(result.populations[-1]) == 1
    assert all(sum(p.values()) == 2 for p in result.populations)


# -- bounded work (issue 23 item 7) ---------------------------------------------------------------


def test_a_tournament_beyond_the_round_bound_is_refused_before_playing() -> None:
    """The issue's `-s TitForTat -s "Random(0.3)" --turns 1000000 --repetitions 10000`: 30,000
    matches of a million turns (a day, 2 TB of store) is refused when built, with its product."""
    players = [get_strategy("TitForTat"), get_strategy("Random(0.3)")]
    with pytest.raises(StratagemError) as info:
        Tournament(players, AXELROD_PD, turns=1_000_000, repetitions=10_000)
    message = str(info.value)
    assert "3 pairings x 10,000 repetitions" in message
    assert "30,000 matches x 1,000,000 turns = 30,000,000,000 rounds" in message
    assert f"more than the {MAX_MATCH_ROUNDS:,}" in message and "\n" not in message
    with pytest.raises(StratagemError, match="12,000,000 rounds"):  # 4 repetitions: 804 MB
        Tournament(players, AXELROD_PD, turns=1_000_000, repetitions=4)
    at_bound = Tournament(players, AXELROD_PD, 1_000_000, 10, self_play=False)  # built, not played
    assert at_bound.rounds == MAX_MATCH_ROUNDS
    small = Tournament(players, AXELROD_PD, turns=200, repetitions=10)
    assert small.plan == (
        "3 pairings x 10 repetitions = 30 matches of 200 turns: 6,000 rounds to play and store"
    )


def test_a_moran_population_and_its_work_are_bounded() -> None:
    tft = get_strategy("TitForTat")
    with pytest.raises(StratagemError, match=f"more than the {MAX_POPULATION:,} a Moran"):
        MoranProcess([tft] * (MAX_POPULATION + 1), AXELROD_PD, turns=1, max_generations=1)
    # 400 individuals, one of them stochastic: 79,800 matches a generation, up to 1,000
    # generations of 50 turns each
    with pytest.raises(StratagemError) as info:
        MoranProcess([tft, get_strategy("Random(0.5)")] * 200, AXELROD_PD, turns=50)
    message = str(info.value)
    assert "up to 1,000 generations x 79,800 pairings" in message
    assert (
        "= 3,990,000,000 rounds" in message and "fewer generations, turns or individuals" in message
    )
    process = MoranProcess([tft, get_strategy("Random(0.5)")] * 6, AXELROD_PD, turns=50)
    assert process.rounds == 1_000 * 66 * 50 <= MAX_MATCH_ROUNDS
    # deterministic strategies without noise: each ordered pair of strategies plays once
    process = MoranProcess([tft, get_strategy("AlwaysDefect")] * 200, AXELROD_PD, turns=50)
    assert process.rounds == 4 * 50
    four = [get_strategy(n) for n in ("TitForTat", "AlwaysDefect", "GrimTrigger", "Alternator")]
    with pytest.raises(StratagemError, match=r"16 ordered pairs of strategies\): 16 matches"):
        MoranProcess(four, AXELROD_PD, turns=1_000_000)
