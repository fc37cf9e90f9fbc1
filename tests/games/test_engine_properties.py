"""Property tests of the engine: any game, any legal play, the same invariants."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagem.games import (
    Action,
    Choice,
    FreeText,
    Game,
    IllegalAction,
    IntegerRange,
    NormalFormGame,
    Observation,
    PublicGoodGame,
    RepeatedGame,
    State,
    UltimatumGame,
    is_equilibrium,
    iterated_strict_dominance,
    nash_equilibria,
    pareto_optimal,
    pure_nash_equilibria,
    symmetric_equilibrium,
)

FAST = settings(max_examples=60, deadline=None)

payoff_values = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
small_ints = st.integers(min_value=-3, max_value=3)  # many ties: degenerate games
# For solution concepts: payoffs that differ by far more than the solvers' tolerance or not at all
# (a difference of 1e-78 is a tie to one solver and not to another).
rounded_values = st.floats(min_value=-1e4, max_value=1e4).map(lambda v: round(v, 2))


@st.composite
def normal_form_games(
    draw: st.DrawFn, players: st.SearchStrategy[int] | None = None, values: Any = payoff_values
) -> NormalFormGame:
    n = draw(players if players is not None else st.integers(2, 3))
    sizes = [draw(st.integers(2, 4)) for _ in range(n)]
    count = int(np.prod(sizes)) * n
    flat = draw(st.lists(values, min_size=count, max_size=count))
    labels = [[f"p{p}a{i}" for i in range(k)] for p, k in enumerate(sizes)]
    return NormalFormGame("random", labels, np.array(flat, dtype=float).reshape(*sizes, n))


def random_policy(rng: random.Random) -> Any:
    """A seeded policy that plays uniformly over whatever space it is offered."""

    def policy(obs: Observation) -> Action:
        space = obs.legal
        assert space is not None
        if isinstance(space, Choice):
            return rng.choice(space.labels)
        if isinstance(space, IntegerRange):
            return rng.randint(space.low, space.high)
        assert isinstance(space, FreeText)
        return "ok"

    return policy


def play_through(game: Game, seed: int) -> tuple[State, list[Any]]:
    """Play to the end with a policy seeded by `seed`; return the final state and all events."""
    policy = random_policy(random.Random(seed))
    state = game.initial_state(seed)
    events: list[Any] = []
    steps = 0
    while not state.is_terminal():
        acting = state.to_act()
        assert acting, "a non-terminal state must have someone to act"
        for p in range(game.n_players):
            assert (state.observation(p).legal is not None) == (p in acting)
        state, new = state.apply({p: policy(state.observation(p)) for p in acting})
        events.extend(new)
        assert all(math.isfinite(x) for x in state.payoffs())
        steps += 1
        assert steps < 1000
    return state, events


def assert_refuses_actions(state: State, game: Game) -> None:
    assert state.to_act() == ()
    for actions in ({}, {p: 0 for p in range(game.n_players)}, {0: "x"}):
        try:
            state.apply(actions)  # type: ignore[arg-type]
        except IllegalAction:
            continue
        raise AssertionError(f"terminal state accepted {actions}")


# -- normal-form and repeated games --------------------------------------------------------------


@FAST
@given(normal_form_games())
def test_every_profile_has_finite_payoffs(game: NormalFormGame) -> None:
    for profile in game.profiles():
        payoff = game.payoff(profile)
        assert len(payoff) == game.n_players
        assert all(math.isfinite(x) for x in payoff)


@FAST
@given(normal_form_games(), st.integers(1, 6), st.data())
def test_repeated_history_is_consistent(game: NormalFormGame, rounds: int, data: Any) -> None:
    repeated = RepeatedGame(game, rounds)
    state = repeated.initial_state()
    played: list[tuple[int, ...]] = []
    for t in range(rounds):
        assert not state.is_terminal()
        profile = tuple(data.draw(st.integers(0, k - 1)) for k in game.sizes)
        actions = {p: game.labels[p][a] for p, a in enumerate(profile)}
        state, events = state.apply(actions)
        played.append(profile)
        assert len(state.history) == t + 1
        assert events[0].data["round"] == t + 1
        observations = [state.observation(p) for p in range(game.n_players)]
        # Every player sees the same public history.
        for obs in observations:
            assert obs.history == state.history
            assert obs.events == observations[0].events
            assert obs.round == t + 2
        totals = np.sum([r.payoffs for r in state.history], axis=0)
        np.testing.assert_allclose(state.payoffs(), totals, rtol=1e-12, atol=1e-6)
        assert all(math.isfinite(x) for x in state.payoffs())
    assert state.is_terminal()
    assert [r.actions for r in state.history] == played
    assert [r.payoffs for r in state.history] == [game.payoff(p) for p in played]
    assert_refuses_actions(state, repeated)


@FAST
@given(normal_form_games(), st.integers(0, 2**32))
def test_repeated_same_seed_same_result(game: NormalFormGame, seed: int) -> None:
    repeated = RepeatedGame(game, 5)
    first, first_events = play_through(repeated, seed)
    second, second_events = play_through(repeated, seed)
    assert first == second
    assert first_events == second_events
    assert_refuses_actions(first, repeated)


# -- solution concepts ---------------------------------------------------------------------------


@FAST
@given(normal_form_games(players=st.just(2), values=small_ints | rounded_values))
def test_nash_equilibria_are_verified_and_include_every_pure_one(game: NormalFormGame) -> None:
    eqs = nash_equilibria(game)
    assert eqs, "every finite game has an equilibrium (Nash 1951)"
    # Probabilities are rounded to 1e-9, so the check allows that much times the payoff scale.
    tol = 1e-6 * max(1.0, float(np.abs(game.payoffs).max()))
    for x, y in eqs:
        assert is_equilibrium(game, (x, y), tol=tol)
    pure_found = {(int(np.argmax(x)), int(np.argmax(y))) for x, y in eqs if max(x) == max(y) == 1}
    assert set(pure_nash_equilibria(game)) <= pure_found


@FAST
@given(normal_form_games(values=small_ints))
def test_pure_equilibria_survive_dominance_and_pareto_is_nonempty(game: NormalFormGame) -> None:
    survivors = iterated_strict_dominance(game)
    for profile in pure_nash_equilibria(game):
        assert all(a in survivors[p] for p, a in enumerate(profile))
    optimal = pareto_optimal(game)
    assert optimal
    best = max(game.profiles(), key=lambda pr: sum(game.payoff(pr)))
    assert sum(game.payoff(best)) == max(sum(game.payoff(pr)) for pr in optimal)


@FAST
@given(
    st.integers(2, 4).flatmap(
        lambda k: st.lists(small_ints | rounded_values, min_size=k * k, max_size=k * k)
    ),
    st.sampled_from(["mixed", "first"]),
)
def test_symmetric_equilibrium_is_an_equilibrium(flat: list[float], selection: str) -> None:
    k = round(len(flat) ** 0.5)
    game = NormalFormGame.symmetric("sym", [f"a{i}" for i in range(k)], np.reshape(flat, (k, k)))
    x = symmetric_equilibrium(game, selection)
    tol = 1e-6 * max(1.0, float(np.abs(game.payoffs).max()))
    assert is_equilibrium(game, (x, x), tol=tol)


# -- turn-based and n-player games ---------------------------------------------------------------


@FAST
@given(st.integers(1, 500), st.integers(0, 2**32))
def test_ultimatum_same_seed_same_result(pie: int, seed: int) -> None:
    game = UltimatumGame(pie)
    first, events = play_through(game, seed)
    second, events_again = play_through(game, seed)
    assert first == second
    assert events == events_again
    assert [e.kind for e in events] == ["offer", "response"]
    assert sum(first.payoffs()) in (0.0, float(pie))
    assert all(x >= 0 for x in first.payoffs())
    assert_refuses_actions(first, game)


@FAST
@given(
    st.integers(2, 5),
    st.integers(1, 50),
    st.integers(1, 6),
    st.floats(0, 5, allow_nan=False),
    st.booleans(),
    st.integers(0, 2**32),
)
def test_public_good_same_seed_same_result_and_accounting(
    n: int, endowment: int, rounds: int, multiplier: float, enforce: bool, seed: int
) -> None:
    game = PublicGoodGame(n, endowment, rounds, multiplier, enforce)
    first, events = play_through(game, seed)
    second, events_again = play_through(game, seed)
    assert first == second
    assert events == events_again
    assert len(first.history) == rounds
    pool = sum(sum(r) for r in first.history)
    # Points are conserved except for what the multiplier adds to the pool.
    assert sum(first.payoffs()) == np_approx(n * endowment + (multiplier - 1) * pool)
    if enforce:
        assert all(first.remaining(p) >= 0 for p in range(n))
    observations = [first.observation(p) for p in range(n)]
    assert all(
        o.history == first.history and o.events == observations[0].events for o in observations
    )
    assert_refuses_actions(first, game)


def np_approx(x: float) -> Any:
    import pytest

    return pytest.approx(x, rel=1e-9, abs=1e-9)
