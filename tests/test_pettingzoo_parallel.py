"""`stratagem.parallel_env` (issue 37 item 4): a simultaneous-move game as a PettingZoo parallel
environment. PettingZoo's own `parallel_api_test` and `parallel_seed_test`, a legal play
checked against the engine replayed beside it, the AEC environment's conventions (refusals,
the rule for a missing move, truncation, bots), and a turn-based game refused in one line."""

from __future__ import annotations

import random
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any

import pytest
from pettingzoo import ParallelEnv
from pettingzoo.test import parallel_api_test, parallel_seed_test

from stratagem.api import parallel_env
from stratagem.errors import StratagemError
from stratagem.experiments.pettingzoo_parallel import StratagemParallelEnv
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.conformance import random_action
from stratagem.games.spaces import Action, ActionSpace, Choice

OPENSPIEL = pytest.mark.skipif(find_spec("pyspiel") is None, reason="OpenSpiel not installed")

GAMES = [
    ("dilemma", {"rounds": 5}),
    ("dilemma", {"rounds": 5, "bots": {1: "tit-for-tat"}}),
    ("eq1", {"rounds": 3, "actions": "text"}),
    ("npd3/0", {}),
    ("public-good/0", {}),
    ("dilemma-talk", {"rounds": 2}),
    pytest.param("openspiel:matrix_pd", {}, marks=OPENSPIEL),
    pytest.param("openspiel:goofspiel(num_cards=5)", {}, marks=OPENSPIEL),
]


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_pettingzoos_parallel_api_and_seed_tests_pass(game: str, options: dict[str, Any]) -> None:
    env = parallel_env(game, **options)
    assert isinstance(env, ParallelEnv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice for numeric observations, not failures
        parallel_api_test(env, num_cycles=300)
        parallel_seed_test(lambda: parallel_env(game, **options), num_cycles=100)


@pytest.mark.parametrize(("game", "options"), [g for g in GAMES if "bots" not in g[1]])
def test_a_legal_play_to_the_end_gets_the_engines_payoffs(
    game: str, options: dict[str, Any]
) -> None:
    env = parallel_env(game, **options)
    observations, infos = env.reset(seed=3)
    assert set(observations) == set(infos) == set(env.agents) == set(env.possible_agents)
    engine = env.game.initial_state(3)  # the engine, replayed beside the environment
    rng = random.Random(3)
    total = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        assert set(engine.to_act()) == set(range(env.game.n_players))
        moves = {s: random_action(engine.legal(s), rng) for s in engine.to_act()}
        actions = {f"player_{s}": _action(env, s, m) for s, m in moves.items()}
        observations, rewards, terminations, truncations, infos = env.step(actions)
        assert set(rewards) == set(actions) and not any(truncations.values())
        assert all(info == {} for info in infos.values()), infos
        engine, _ = engine.apply(moves)
        for agent, reward in rewards.items():
            total[agent] += reward
    assert all(terminations.values()) and engine.is_terminal()
    assert total == pytest.approx({a: engine.payoffs()[s] for a, s in env.table.seats.items()})


def _action(env: StratagemParallelEnv, seat: int, move: Action) -> Any:
    """The action that stands for `move`: its number where the seat acts by number, else the
    line a person would type."""
    if env.table.words[seat] is None:
        return str(move)
    return next(n for n, legal in env.table.numbered(seat).items() if legal == move)


def test_a_step_is_played_once_every_move_is_in() -> None:
    env = parallel_env("dilemma", rounds=3)
    observations, _ = env.reset(seed=0)
    assert observations["player_0"]["action_mask"].tolist() == [1, 1]
    observations, rewards, terminations, truncations, infos = env.step(
        {"player_0": 1, "player_1": 0}
    )
    assert rewards == {"player_0": 15.0, "player_1": 0.0}
    assert infos == {"player_0": {}, "player_1": {}}
    assert not any(terminations.values()) and not any(truncations.values())
    history = observations["player_1"]["observation"]["history"]
    assert history.tolist() == [[1, 0], [-1, -1], [-1, -1]]


def test_an_illegal_action_is_refused_and_the_step_asked_again() -> None:
    env = parallel_env("dilemma", rounds=3)
    before, _ = env.reset(seed=0)
    state = env.table.state
    for actions in (
        {"player_0": 5, "player_1": 0},
        {"player_0": "D", "player_1": 0},
        {"player_1": 1},
    ):
        observations, rewards, _, _, infos = env.step(actions)
        assert env.table.state is state  # nothing was played
        assert rewards == {"player_0": -1.0, "player_1": 0.0}
        assert "illegal" in infos["player_0"] and infos["player_1"] == {}
        assert observations["player_1"]["text"] == before["player_1"]["text"]
        env._refused[0] = 0  # not reaching the rule for a missing move here
    assert infos["player_0"]["illegal"] == "no action for player_0"
    _, rewards, _, _, infos = env.step({"player_0": 0, "player_1": 0})
    assert rewards == {"player_0": 10.0, "player_1": 10.0} and env.table.turn == 2


def test_after_max_illegal_refusals_the_games_rule_for_a_missing_move_applies() -> None:
    env = parallel_env("dilemma", rounds=2, max_illegal=2, illegal_reward=-0.5)
    env.reset(seed=0)
    env.step({"player_0": 7, "player_1": 1})
    assert env.table.turn == 1
    observations, rewards, _, _, infos = env.step({"player_0": 7, "player_1": 1})
    assert env.table.turn == 2  # played: the round is forfeited, and scores (0, 0)
    assert rewards == {"player_0": -0.5, "player_1": 0.0} and "illegal" in infos["player_0"]
    assert observations["player_0"]["observation"]["history"].tolist()[0] == [-1, 1]
    _, rewards, terminations, _, _ = env.step({"player_0": 1, "player_1": 1})
    assert rewards == {"player_0": 5.0, "player_1": 5.0} and all(terminations.values())
    assert env.agents == []


def test_an_unknown_agent_is_a_one_line_error() -> None:
    env = parallel_env("dilemma", rounds=2)
    env.reset(seed=0)
    with pytest.raises(StratagemError) as caught:
        env.step({"player_0": 0, "player_1": 0, "player_2": 0})
    assert str(caught.value) == (
        "actions: 'player_2' is no live agent; agents: ['player_0', 'player_1']"
    )
    assert env.table.turn == 1


@pytest.mark.parametrize("game", ["chameleon/0", "ultimatum", "tradecraft/0", "cost-sharing/0"])
def test_a_turn_based_game_is_refused_in_one_line(game: str) -> None:
    with pytest.raises(StratagemError) as caught:
        parallel_env(game)
    assert str(caught.value) == (
        f"game '{game}' is played in turns (its first step asks player_0 only), so it has no "
        f"parallel environment: use stratagem.env('{game}')"
    )


@OPENSPIEL
def test_a_turn_based_openspiel_game_is_refused_too() -> None:
    with pytest.raises(StratagemError, match=r"use stratagem.env\('openspiel:kuhn_poker'\)"):
        parallel_env("openspiel:kuhn_poker")


def test_bad_options_are_the_aec_environments_one_line_errors() -> None:
    for options, message in [
        ({"actions": "words"}, "actions:"),
        ({"bots": {0: "tft", 1: "tft"}}, "leave one to train"),
        ({"illegal_reward": float("nan")}, "illegal_reward must be a finite number"),
        ({"render_mode": "rgb_array"}, "render_mode"),
    ]:
        with pytest.raises(StratagemError, match=message):
            parallel_env("dilemma", **options)


def test_a_bot_takes_a_seat() -> None:
    env = parallel_env("dilemma", rounds=5, bots={"player_1": "tit-for-tat"})
    env.reset(seed=0)
    assert env.possible_agents == ["player_0"] and env.agents == ["player_0"]
    total = 0.0
    while env.agents:
        _, rewards, _, _, _ = env.step({"player_0": 1})  # always defect
        total += rewards["player_0"]
    assert total == 15 + 4 * 5  # T, then P four times (seed-001 §4.1)


@dataclass(frozen=True)
class _ThenTurnState(State):
    """Both seats say "go" at once, then seat 0 alone: a game that turns into turns."""

    step: int = 0

    def to_act(self) -> tuple[int, ...]:
        return ((0, 1), (0,), ())[self.step]

    def legal(self, player: int) -> ActionSpace:
        return Choice(("go",))

    def observation(self, player: int) -> Observation:
        return Observation(player, self.legal(player) if player in self.to_act() else None)

    def is_terminal(self) -> bool:
        return self.step == 2

    def payoffs(self) -> tuple[float, ...]:
        return (float(self.step), 0.0)

    def _next(self, actions: Mapping[int, Action]) -> tuple[State, list[Event]]:
        return _ThenTurnState(self.step + 1), []


class _ThenTurnGame(Game):
    name, n_players = "then-turn", 2

    def initial_state(self, seed: int = 0) -> State:
        return _ThenTurnState()

    def moves(self, seat: int) -> tuple[str, ...]:
        return ("go",)


def test_a_step_that_is_one_seats_turn_truncates_the_episode() -> None:
    env = StratagemParallelEnv(_ThenTurnGame())
    env.reset(seed=0)
    _, rewards, terminations, truncations, infos = env.step({"player_0": 0, "player_1": 0})
    assert rewards == {"player_0": 1.0, "player_1": 0.0}
    assert truncations == {"player_0": True, "player_1": True} and not any(terminations.values())
    assert infos["player_1"]["truncated"] == (
        "step 2 asks player_0 only: a turn, which the parallel API cannot take (use stratagem.env)"
    )
    assert env.agents == []
    assert env.step({}) == ({}, {}, {}, {}, {})


def test_render_shows_every_agents_text(capsys: pytest.CaptureFixture[str]) -> None:
    env = parallel_env("dilemma", rounds=2, render_mode="ansi")
    observations, _ = env.reset(seed=0)
    assert env.render() == "\n\n".join(
        f"[{a}]\n{observations[a]['text']}" for a in ("player_0", "player_1")
    )
    shown = parallel_env("dilemma", rounds=2, render_mode="human")
    shown.reset(seed=0)
    assert shown.render() is None and capsys.readouterr().out == env.render() + "\n"
