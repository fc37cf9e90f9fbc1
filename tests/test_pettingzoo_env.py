"""`stratagem.env`: a catalog game as a PettingZoo AEC environment (docs/pettingzoo.md).
PettingZoo's own `api_test`, a legal play checked against the engine replayed beside it, refused
moves that change nothing, no seat told another's secret, and bots in seats."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv
from pettingzoo.test import api_test

import stratagem
from stratagem.errors import StratagemError
from stratagem.experiments.pettingzoo_env import StratagemEnv
from stratagem.experiments.pettingzoo_spaces import splits
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.magic.chameleon import IS_CHAMELEON, ChameleonGame
from stratagem.games.spaces import (
    Action,
    ActionSpace,
    Choice,
    FreeText,
    IllegalAction,
    IntegerRange,
    Shares,
)


@pytest.mark.parametrize(
    ("game", "options"),
    [
        ("dilemma", {"rounds": 5}),
        ("chameleon/0", {}),
        ("tradecraft/0", {}),
        ("dilemma", {"rounds": 5, "bots": {1: "tit-for-tat"}}),
    ],
)
def test_pettingzoos_api_test_passes(game: str, options: dict[str, Any]) -> None:
    env = stratagem.env(game, **options)
    assert isinstance(env, AECEnv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice for numeric observations, not failures
        api_test(env, num_cycles=300)


def _legal(state: State, seat: int, rng: random.Random) -> Action:
    """A random legal move of `seat`, from the engine's own state."""
    space: ActionSpace = state.legal(seat)
    if isinstance(space, Choice):
        return rng.choice(space.labels)
    if isinstance(space, IntegerRange):
        return rng.randint(space.low, space.high)
    if isinstance(space, Shares):
        return rng.choice(splits(space))
    assert isinstance(space, FreeText)
    try:
        return space.validate(state.fallback(seat))  # TradeCraft's structured text: a pass
    except IllegalAction:
        return f"clue {rng.randint(0, 99)}"


@pytest.mark.parametrize(
    ("game", "options", "seed"),
    [
        ("dilemma", {"rounds": 6}, 3),
        ("eq1", {"rounds": 4, "actions": "text"}, 1),
        ("chameleon/0", {}, 5),
        ("undercover/0", {}, 2),
        ("cost-sharing/0", {}, 4),
        ("ultimatum", {}, 0),
        ("ultimatum", {"actions": "text"}, 0),
        ("public-good/0", {}, 1),
        ("npd3/0", {}, 1),
        ("dilemma-talk", {"rounds": 2}, 1),
        ("tradecraft/0", {}, 0),
    ],
)
def test_a_legal_play_to_the_end_gets_the_engines_payoffs(
    game: str, options: dict[str, Any], seed: int
) -> None:
    env = stratagem.env(game, **options)
    env.reset(seed=seed)
    engine = env.unwrapped.game.initial_state(seed)  # the engine, replayed beside the env
    rng = random.Random(seed)
    moves: dict[int, Action] = {}
    total = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(10_000):
        observation, reward, terminated, truncated, _ = env.last()
        total[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        seat = int(agent.removeprefix("player_"))
        assert seat in engine.to_act() and seat not in moves
        move = _legal(engine, seat, rng)
        if "action_mask" in observation:
            words = env.unwrapped.table.words[seat]
            action: Any = words.index(move)
            assert observation["action_mask"][action] == 1
        else:
            action = str(move)
        env.step(action)
        assert "illegal" not in env.infos.get(agent, {})
        moves[seat] = move
        if set(moves) == set(engine.to_act()):
            engine, _ = engine.apply(moves)
            moves = {}
    assert engine.is_terminal() and not env.agents
    assert total == pytest.approx({f"player_{s}": p for s, p in enumerate(engine.payoffs())})


def test_rewards_come_per_round_in_a_repeated_game() -> None:
    env = stratagem.env("dilemma", rounds=3)
    env.reset(seed=0)
    env.step(1)  # player_0 defects
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}  # the round is not played yet
    env.step(0)  # player_1 cooperates: round 1 is played
    assert env.rewards == {"player_0": 15.0, "player_1": 0.0}
    assert env.last()[1] == 15.0 and env.agent_selection == "player_0"
    observation = env.observe("player_0")
    assert observation["observation"]["history"].tolist() == [[1, 0], [-1, -1], [-1, -1]]


def test_an_illegal_action_is_refused_and_changes_nothing() -> None:
    env = stratagem.env("ultimatum")  # the proposer's vocabulary holds "accept" too
    env.reset(seed=0)
    state, before = env.unwrapped.table.state, env.observe("player_0")
    accept = env.unwrapped.table.words[0].index("accept")
    assert before["action_mask"][accept] == 0
    for action in (accept, 999, "50", -1):
        env.step(action)
        assert env.unwrapped.table.state is state and env.agent_selection == "player_0"
        assert env.rewards["player_0"] == -1.0 and "illegal" in env.infos["player_0"]
        assert env.last()[1] == -1.0
        env.unwrapped._refused = 0  # not reaching the forfeit here
    after = env.observe("player_0")
    assert after["text"] == before["text"]
    assert (after["action_mask"] == before["action_mask"]).all()
    env.step(40)  # a legal offer is then taken
    assert env.agent_selection == "player_1" and env.infos["player_0"] == {}


def test_text_moves_are_read_as_a_person_types_them() -> None:
    env = stratagem.env("dilemma", rounds=2, actions="text")
    env.reset(seed=0)
    assert env.action_space("player_0").contains("anything a seat writes: ünïcode")
    text = env.observe("player_0")["text"]
    assert "Round 1 of 2" in text and text.endswith("your move (1=cooperate, 2=defect)")
    env.step("banana")
    assert "illegal" in env.infos["player_0"] and env.agent_selection == "player_0"
    env.step("2")  # the second label, by its number
    env.step(" Cooperate ")
    assert env.rewards == {"player_0": 15.0, "player_1": 0.0}


def test_after_max_illegal_refusals_the_games_rule_for_a_missing_move_applies() -> None:
    env = stratagem.env("tradecraft/0", max_illegal=2, illegal_reward=-0.5)
    env.reset(seed=0)
    env.step("not a proposal")
    assert env.agent_selection == "player_0" and env.rewards["player_0"] == -0.5
    env.step("still not a proposal")  # the second refusal: the game's pass is played
    assert env.rewards["player_0"] == -0.5 and "illegal" in env.infos["player_0"]
    assert env.agent_selection == "player_1"
    assert env.unwrapped.table.state.observation(1).phase == "decision"  # on the empty proposal
    assert "wants to exchange Player 2's nothing with nothing" in env.observe("player_1")["text"]


def test_a_blank_clue_is_refused_and_asked_again() -> None:
    """Issue 33 item 11: an empty Chameleon clue was played as a clue. The engine refuses it as
    any illegal move: nothing changes, the seat gets `illegal_reward` and acts again; after
    `max_illegal` refusals the game's rule for a missing clue applies."""
    env = stratagem.env("chameleon/0", max_illegal=2)
    env.reset(seed=0)
    env.step("   ")
    assert env.agent_selection == "player_0" and env.rewards["player_0"] == -1.0
    assert "a clue cannot be empty" in env.infos["player_0"]["illegal"]
    assert env.unwrapped.table.state.clues == ()
    env.step("It grows on vines.")
    assert env.agent_selection == "player_1" and env.unwrapped.table.state.clues == (
        "It grows on vines.",
    )
    env.step("")
    env.step("")  # the second refusal: a missing clue, which the game plays as an empty one
    assert env.agent_selection == "player_2"
    assert env.unwrapped.table.state.clues == ("It grows on vines.", "")


def test_no_seat_is_told_another_seats_secret() -> None:
    env = stratagem.env("chameleon/0")
    game = env.unwrapped.game
    assert isinstance(game, ChameleonGame)
    rng = random.Random(0)
    seen = 0
    for seed in range(3):
        env.reset(seed=seed)
        for agent in env.agent_iter(100):
            _, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            for other in env.agents:
                text = env.observe(other)["text"]
                chameleon = other == f"player_{game.chameleon}"
                assert (game.code.casefold() in text.casefold()) is not chameleon
                assert (IS_CHAMELEON in text) is chameleon
                seen += 1
            seat = int(agent.removeprefix("player_"))
            env.step(str(_legal(env.unwrapped.table.state, seat, rng)))
    assert seen > 20


def test_a_simultaneous_move_is_hidden_until_the_round_is_played() -> None:
    env = stratagem.env("dilemma", rounds=2)
    env.reset(seed=0)
    before = env.observe("player_1")
    env.step(1)
    after = env.observe("player_1")
    assert env.agent_selection == "player_1" and after["text"] == before["text"]
    assert np.array_equal(after["observation"]["history"], before["observation"]["history"])


def test_a_bot_takes_a_seat() -> None:
    env = stratagem.env("dilemma", rounds=5, bots={"player_1": "tit-for-tat"})
    env.reset(seed=0)
    assert env.possible_agents == ["player_0"] and env.agents == ["player_0"]
    total = 0.0
    for _ in env.agent_iter(100):
        _, reward, terminated, _, _ = env.last()
        total += reward
        env.step(None if terminated else 1)  # always defect
    # tit-for-tat cooperates first, then copies: 15 (T), then 5 (P) four times (seed-001 §4.1).
    assert total == 15 + 4 * 5


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"game": "chameleon/0", "bots": {1: "tit-for-tat"}}, "plays 2-player repeated"),
        ({"game": "dilemma", "bots": {2: "tit-for-tat"}}, "names no seat"),
        ({"game": "dilemma", "bots": {0: "tft", 1: "tft"}}, "leave one to train"),
        ({"game": "dilemma", "bots": {1: "no-such-bot"}}, "no-such-bot"),
        ({"game": "chameleon/0", "actions": "discrete"}, "not a fixed set"),
        ({"game": "dilemma", "actions": "words"}, "actions:"),
        ({"game": "chameleon/0", "rounds": 3}, "takes no round count"),
        ({"game": "dilemma", "max_illegal": 0}, "max_illegal"),
        ({"game": "no-such-game"}, "no-such-game"),
        # issue 33 item 6: 10**8 rounds took 3.76 GB at reset, 10**12 a MemoryError
        ({"game": "dilemma", "rounds": 10**8},
         "rounds must be a whole number from 1 to 10,000, got 100000000"),
        ({"game": "npd3/0", "rounds": 10**12}, "rounds must be a whole number from 1 to 10,000"),
        ({"game": "dilemma", "rounds": 0}, "rounds must be a whole number from 1 to 10,000"),
        ({"game": "dilemma", "rounds": 2.5}, "rounds must be a whole number"),
        # issue 33 item 11: a reward that is not a finite number poisons every sum of rewards
        ({"game": "dilemma", "illegal_reward": float("nan")},
         "illegal_reward must be a finite number, got nan"),
        ({"game": "dilemma", "illegal_reward": float("-inf")}, "illegal_reward must be a finite"),
        ({"game": "dilemma", "illegal_reward": "-1"}, "illegal_reward must be a finite number"),
        ({"game": "dilemma", "illegal_reward": True}, "illegal_reward must be a finite number"),
    ],
)  # fmt: skip
def test_bad_options_are_one_line_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(StratagemError, match=message) as caught:
        stratagem.env(**options)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("seed", ["a", 1.5, -1, 2**70, True, np.float64(3.0)])
def test_a_seed_that_is_not_a_whole_number_from_0_is_one_line(seed: object) -> None:
    """Issue 33 item 11: `reset(seed="a")`, `1.5`, `-1` and `2**70` were all taken as seeds."""
    from stratagem.experiments.limits import MAX_SEED

    env = stratagem.env("dilemma")
    env.reset(seed=7)
    with pytest.raises(StratagemError) as caught:
        env.reset(seed=seed)  # type: ignore[arg-type]
    assert str(caught.value) == (
        f"seed must be a whole number from 0 to {MAX_SEED:,}, got {seed!r}"
    )
    assert env.episode_seed == 7  # the episode in play is untouched


def test_seeds_in_range_and_numpys_integers_are_taken() -> None:
    from stratagem.experiments.limits import MAX_SEED

    env = stratagem.env("chameleon/0")
    env.reset(seed=MAX_SEED)
    assert env.episode_seed == MAX_SEED
    env.reset(seed=np.int64(5))  # what a NumPy-driven training loop hands over
    assert env.episode_seed == 5 and type(env.episode_seed) is int


def test_import_stratagem_stays_without_pettingzoo() -> None:
    code = "import sys, stratagem; assert 'pettingzoo' not in sys.modules; stratagem.env"
    subprocess.run([sys.executable, "-c", code], check=True)


@dataclass(frozen=True)
class _NoRuleState(State):
    """One move of one player, with no rule for a missing move."""

    played: bool = False

    def to_act(self) -> tuple[int, ...]:
        return () if self.played else (0,)

    def legal(self, player: int) -> ActionSpace:
        return Choice(("go",))

    def observation(self, player: int) -> Observation:
        return Observation(player, None if self.played else self.legal(player))

    def is_terminal(self) -> bool:
        return self.played

    def payoffs(self) -> tuple[float, ...]:
        return (1.0 if self.played else 0.0,)

    def _next(self, actions: Mapping[int, Action]) -> tuple[State, list[Event]]:
        return _NoRuleState(True), []


class _NoRuleGame(Game):
    name, n_players = "no-rule", 1

    def initial_state(self, seed: int = 0) -> State:
        return _NoRuleState()


def test_a_missing_move_without_a_rule_truncates_the_episode() -> None:
    env = StratagemEnv(_NoRuleGame(), actions="text", max_illegal=2)
    env.reset(seed=0)
    env.step("stop")
    assert env.truncations == {"player_0": False}
    env.step("stop")
    assert env.truncations == {"player_0": True} and "truncated" in env.infos["player_0"]
    assert env.last()[1] == -1.0  # the refusal's penalty, no payoff
    env.step(None)
    assert env.agents == []


DOCS = Path(__file__).resolve().parents[1] / "docs" / "pettingzoo.md"


def test_every_python_block_of_the_docs_runs(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"^```python\n(.*?)^```$", DOCS.read_text(encoding="utf-8"), re.M | re.S)
    assert len(blocks) == 4
    for code in blocks:
        exec(compile(code, str(DOCS), "exec"), {})
    printed = capsys.readouterr().out
    assert "['player_0']" in printed and printed.count(" scored ") == 3
    assert printed.count(" ends with ") == 2  # Kuhn poker's two seats
    assert "{'player_0': [" in printed  # the Stag Hunt learners' values


def test_render_shows_the_selected_seats_text(capsys: pytest.CaptureFixture[str]) -> None:
    env = stratagem.env("chameleon/0", render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == env.observe(env.agent_selection)["text"]
    shown = stratagem.env("chameleon/0", render_mode="human")
    shown.reset(seed=0)
    assert shown.render() is None
    assert capsys.readouterr().out == env.observe(env.agent_selection)["text"] + "\n"
    with pytest.raises(StratagemError, match="render_mode"):
        stratagem.env("chameleon/0", render_mode="rgb_array")
