"""The lockstep engine gives exactly what `play_match` gives, one match at a time: the same moves,
the same float scores, the same draws from the same generators in the same order."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable

import pytest

from stratagem.errors import StratagemError
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies import lockstep
from stratagem.strategies.base import Strategy
from stratagem.strategies.lockstep import play_matches
from stratagem.strategies.machine import tabulate
from stratagem.strategies.match import MatchResult, play_match
from stratagem.strategies.reactive import TitForTat
from stratagem.strategies.registry import get_strategy, strategy_names

AXELROD_PD = NormalFormGame.prisoners_dilemma("axelrod-pd", t=5, r=3, p=1, s=0)
# Payoffs that are not whole numbers (so the order of addition shows) and a mixed equilibrium.
STAG_HUNT = NormalFormGame.symmetric("sh", ("stag", "hare"), [[6.1, 1], [4, 2.3]])
RPS = NormalFormGame.symmetric(
    "rps", ("rock", "paper", "scissors"), [[0, -1, 1.5], [1, 0, -1.1], [-1, 1.2, 0]]
)
EXTRA = ["Random(0.3)", "Random(0)", "Random(1)", "Pattern(0, 0, 1)", "Pattern(scissors, rock)"]
NO_MACHINE = {"BestResponseToMode"}
"""Registered strategies the engine leaves to `play_match` (its state is every count)."""


def players(stage: NormalFormGame) -> list[Strategy]:
    """Every registered strategy and a few with arguments, those that can play `stage`."""
    found = []
    for name in [*strategy_names(), *EXTRA]:
        try:
            strategy = get_strategy(name)
            strategy.reset(stage, 0)
        except StratagemError:
            continue  # a 2-action strategy in RPS, a pattern of labels RPS lacks, ...
        found.append(strategy)
    return found


def one_at_a_time(
    pairs: list[tuple[Strategy, Strategy]],
    stage: NormalFormGame,
    turns: int,
    rng: Callable[[int], random.Random],
    noise: float,
) -> list[MatchResult]:
    return [
        play_match(a, copy.deepcopy(a) if b is a else b, stage, turns, rng(k), noise)
        for k, (a, b) in enumerate(pairs)
    ]


@pytest.fixture
def python_path(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The matches the engine plays with `play_match`, by first and second label."""
    played: list[str] = []

    def spy(first: Strategy, second: Strategy, *args: object) -> MatchResult:
        played.append(f"{first.label} v {second.label}")
        return play_match(first, second, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(lockstep, "play_match", spy)
    return played


@pytest.mark.parametrize("stage", [AXELROD_PD, STAG_HUNT, RPS], ids=lambda s: s.name)
@pytest.mark.parametrize("noise", [0.0, 0.1])
@pytest.mark.parametrize("turns", [1, 2, 37])
def test_every_pair_of_strategies_plays_as_one_at_a_time(
    stage: NormalFormGame, noise: float, turns: int, python_path: list[str]
) -> None:
    entrants = players(stage)
    pairs = [(a, b) for a in entrants for b in entrants] * 2  # enough for a lockstep batch
    got = play_matches(pairs, stage, turns, lambda k: random.Random(f"7:{k}"), noise)
    python_played = list(python_path)
    expected = one_at_a_time(pairs, stage, turns, lambda k: random.Random(f"7:{k}"), noise)
    assert got == expected
    if noise and stage is RPS:  # a flip draws the new move: not in lockstep
        assert len(python_played) == len(pairs)
    else:
        lagging = [p for p in pairs if NO_MACHINE & {p[0].name, p[1].name}]
        assert len(python_played) == len(lagging) < len(pairs)


def test_a_generator_shared_by_all_matches_is_drawn_in_their_order(
    python_path: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a Moran process draws: one generator, matches in lockstep and in Python interleaved,
    and batches cut short (a small `CHUNK_ROUNDS`) so several play in turn."""
    monkeypatch.setattr(lockstep, "CHUNK_ROUNDS", 20 * 30)
    entrants = players(STAG_HUNT)
    pairs = [(a, b) for a in entrants for b in entrants] * 2
    ours, theirs = random.Random(3), random.Random(3)
    got = play_matches(pairs, STAG_HUNT, 30, lambda k: ours, 0.05)
    assert 0 < len(python_path) < len(pairs)
    assert got == one_at_a_time(pairs, STAG_HUNT, 30, lambda k: theirs, 0.05)
    assert ours.random() == theirs.random()  # and it was left where play_match leaves it


def test_matches_equal_axelrods_between_deterministic_strategies(python_path: list[str]) -> None:
    axl = pytest.importorskip("axelrod")
    twins = {
        "AlwaysCooperate": "Cooperator",
        "AlwaysDefect": "Defector",
        "TitForTat": "TitForTat",
        "GrimTrigger": "Grudger",
        "TitForTwoTats": "TitFor2Tats",
        "SuspiciousTitForTat": "SuspiciousTitForTat",
        "WinStayLoseShift": "WinStayLoseShift",
        "Alternator": "Alternator",
    }
    ours = [get_strategy(n) for n in twins]
    pairs = [(a, b) for a in ours for b in ours]
    results = play_matches(pairs, AXELROD_PD, 60, lambda k: random.Random(k))
    assert python_path == []
    k = 0
    for a in twins.values():
        for b in twins.values():
            match = axl.Match((getattr(axl, a)(), getattr(axl, b)()), turns=60)
            match.play()
            assert results[k].scores == tuple(float(s) for s in match.final_score())
            k += 1


def test_a_lone_match_in_a_batch_adds_its_scores_turn_by_turn(
    python_path: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """NumPy sums a single column pairwise, which rounds other than `play_match`'s running sum
    does with payoffs that are not whole numbers."""
    monkeypatch.setattr(lockstep, "CHUNK_ROUNDS", 16 * 101)  # batches of 16, then of 1
    pairs = [(TitForTat(), get_strategy("Random(0.5)"))] * 17
    got = play_matches(pairs, STAG_HUNT, 101, lambda k: random.Random(k))
    assert python_path == []
    assert got == one_at_a_time(pairs, STAG_HUNT, 101, lambda k: random.Random(k), 0.0)


def test_few_matches_play_one_at_a_time(python_path: list[str]) -> None:
    pairs = [(TitForTat(), get_strategy("Random(0.5)"))] * (lockstep.MIN_WIDTH - 1)
    got = play_matches(pairs, AXELROD_PD, 10, lambda k: random.Random(k))
    assert len(python_path) == len(pairs)
    assert got == one_at_a_time(pairs, AXELROD_PD, 10, lambda k: random.Random(k), 0.0)


def test_machines_too_large_for_one_table_play_one_at_a_time(
    python_path: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lockstep, "MAX_JOINT", 3)  # TitForTat meeting itself needs 2 x 2
    pairs = [(TitForTat(), TitForTat())] * lockstep.MIN_WIDTH
    got = play_matches(pairs, AXELROD_PD, 10, lambda k: random.Random(k))
    assert len(python_path) == len(pairs)
    assert got == one_at_a_time(pairs, AXELROD_PD, 10, lambda k: random.Random(k), 0.0)
    monkeypatch.setattr(lockstep, "MAX_JOINT", 4)
    assert play_matches(pairs, AXELROD_PD, 10, lambda k: random.Random(k)) == got
    assert len(python_path) == len(pairs)  # no more: the second time in lockstep


def test_a_machine_must_stay_within_its_states_and_the_game() -> None:
    two_by_three = NormalFormGame("2x3", [("a", "b"), ("x", "y", "z")], [[[0, 0]] * 3] * 2)
    tft = TitForTat()
    tft.reset(two_by_three, 0)  # two actions of its own: accepted, but it copies a third
    with pytest.raises(StratagemError, match="leaves its 2 states in '2x3', player 1"):
        tft.machine()
    with pytest.raises(StratagemError, match="plays an action"):
        tabulate(AXELROD_PD, 0, (0, 2), lambda s, own, opp: opp)
    with pytest.raises(StratagemError, match="opening draw"):
        tabulate(AXELROD_PD, 0, (0, 1), lambda s, own, opp: opp, opening=True)


def test_which_registered_strategies_are_machines() -> None:
    without = set()
    for name in strategy_names():
        strategy = get_strategy(name)
        strategy.reset(STAG_HUNT, 1)
        if strategy.machine() is None:
            without.add(name)
    assert without == NO_MACHINE
