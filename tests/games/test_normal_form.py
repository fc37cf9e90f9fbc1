"""NormalFormGame and RepeatedGame: validation, transformations, symmetry, play."""

from __future__ import annotations

import numpy as np
import pytest

from stratagem.errors import StratagemError
from stratagem.games import (
    Choice,
    IllegalAction,
    NormalFormGame,
    RepeatedGame,
    Round,
    UltimatumGame,
    get_stage,
)

PD_ROW = [[4, 1], [6, 2]]


# -- validation ---------------------------------------------------------------------------------


def test_tensor_shape_must_match_labels() -> None:
    with pytest.raises(
        StratagemError, match=r"payoff tensor has shape \(2, 2, 2\).*need \(3, 2, 2\)"
    ):
        NormalFormGame("g", [["a", "b", "c"], ["x", "y"]], np.zeros((2, 2, 2)))
    with pytest.raises(StratagemError, match="row payoffs have shape \\(2, 3\\), need \\(2, 2\\)"):
        NormalFormGame.symmetric("g", ["a", "b"], [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(StratagemError, match="matrices differ in shape"):
        NormalFormGame.bimatrix("g", [["a", "b"], ["x", "y"]], [[1, 2], [3, 4]], [[1, 2]])


def test_labels_are_validated() -> None:
    with pytest.raises(StratagemError, match="duplicate labels"):
        NormalFormGame.symmetric("g", ["a", "a"], [[1, 2], [3, 4]])
    with pytest.raises(StratagemError, match="at least one label"):
        NormalFormGame("g", [[], ["x"]], np.zeros((0, 1, 2)))
    with pytest.raises(StratagemError, match="empty or non-text label"):
        NormalFormGame.symmetric("g", ["a", ""], [[1, 2], [3, 4]])
    with pytest.raises(StratagemError, match="at least 2 players"):
        NormalFormGame("g", [["a", "b"]], [[1], [2]])


def test_payoffs_are_validated() -> None:
    with pytest.raises(StratagemError, match="payoffs are not numbers"):
        NormalFormGame.symmetric("g", ["a", "b"], [[1, "x"], [3, 4]])
    with pytest.raises(StratagemError, match="must be finite"):
        NormalFormGame.symmetric("g", ["a", "b"], [[1, float("nan")], [3, 4]])


@pytest.mark.parametrize("rounds", [0, -1, 2.5, True, "3"])
def test_rounds_must_be_a_positive_integer(rounds: object) -> None:
    with pytest.raises(StratagemError, match="rounds must be an integer from 1"):
        RepeatedGame(get_stage("pd"), rounds)  # type: ignore[arg-type]


@pytest.mark.parametrize("pie", [0, -1, 1.5])
def test_pie_must_be_a_positive_integer(pie: object) -> None:
    with pytest.raises(StratagemError, match="pie must be an integer from 1"):
        UltimatumGame(pie)  # type: ignore[arg-type]


def test_payoff_tensor_is_read_only() -> None:
    game = get_stage("pd")
    with pytest.raises(ValueError):
        game.payoffs[0, 0, 0] = 99


# -- transformations (seed-003 §1) ---------------------------------------------------------------


def test_relabel_keeps_payoffs() -> None:
    pd = NormalFormGame.symmetric("pd", ["c", "d"], PD_ROW)
    sh_labels = pd.relabel([["stag", "hare"], ["stag", "hare"]], name="label")
    assert sh_labels.name == "label"
    assert sh_labels.labels[0] == ("stag", "hare")
    np.testing.assert_array_equal(sh_labels.payoffs, pd.payoffs)
    assert pd.labels[0] == ("c", "d")  # the original is untouched


def test_with_payoffs_keeps_labels() -> None:
    pd = NormalFormGame.symmetric("pd", ["c", "d"], PD_ROW)
    sh = NormalFormGame.symmetric("sh", ["c", "d"], [[6, 1], [4, 2]])
    payoff = pd.with_payoffs(sh.payoffs, name="payoff")
    assert payoff.labels == pd.labels
    np.testing.assert_array_equal(payoff.payoffs, sh.payoffs)
    with pytest.raises(StratagemError, match="payoff tensor has shape"):
        pd.with_payoffs(np.zeros((3, 3, 2)))


def test_transform_both_and_description() -> None:
    pd = NormalFormGame.symmetric("pd", ["c", "d"], PD_ROW, description="base")
    joint = pd.transform("joint", labels=[["s", "h"]] * 2, payoffs=np.ones((2, 2, 2)))
    assert joint.description() == "base"
    assert joint.labels == (("s", "h"), ("s", "h"))
    assert joint.payoff((0, 1)) == (1.0, 1.0)
    assert pd.transform("t", description="new").description() == "new"


def test_symmetric_constructors_and_check() -> None:
    game = NormalFormGame.symmetric("g", ["a", "b"], PD_ROW)
    assert game.is_symmetric()
    # u2(a, b) = u1(b, a)
    for i in range(2):
        for j in range(2):
            assert game.payoff((i, j))[1] == game.payoff((j, i))[0]
    assert NormalFormGame.prisoners_dilemma("pd", t=6, r=4, p=2, s=1).is_symmetric()
    asym = NormalFormGame.bimatrix("a", [["a", "b"], ["a", "b"]], PD_ROW, PD_ROW)
    assert not asym.is_symmetric()
    assert not get_stage("npd3").is_symmetric()  # only 2-player games count here
    diff_labels = NormalFormGame("d", [["a", "b"], ["x", "y", "z"]], np.zeros((2, 3, 2)))
    assert not diff_labels.is_symmetric()


def test_prisoners_dilemma_cell_convention() -> None:
    # seed-001 §2: if I cooperate and my partner defects, I get S (and the partner T).
    game = NormalFormGame.prisoners_dilemma("pd", t=15, r=10, p=5, s=0)
    assert game.payoff((0, 1)) == (0.0, 15.0)
    assert game.payoff((1, 0)) == (15.0, 0.0)


def test_queries() -> None:
    game = get_stage("eq1")
    assert game.sizes == (3, 3)
    assert game.index(1, "scissors") == 2
    with pytest.raises(IllegalAction, match="expected one of"):
        game.index(0, "lizard")
    assert len(game.profiles()) == 9
    assert game.profiles()[0] == (0, 0)
    with pytest.raises(StratagemError, match="3 players, not 2"):
        get_stage("npd3").matrices()


# -- playing -------------------------------------------------------------------------------------


def test_one_shot_play() -> None:
    game = get_stage("confusion")
    state = game.initial_state()
    assert state.to_act() == (0, 1)
    assert state.legal(0) == Choice(("cooperate", "defect"))
    assert state.payoffs() == (0.0, 0.0)
    state, events = state.apply({0: "cooperate", 1: "cooperate"})
    assert state.is_terminal()
    assert state.payoffs() == (15.0, 15.0)
    assert events[0].data["actions"] == ["cooperate", "cooperate"]
    with pytest.raises(IllegalAction, match="the game is over"):
        state.apply({})
    with pytest.raises(IllegalAction):
        state.apply({0: "cooperate", 1: "cooperate"})


def test_repeated_play_history_and_totals() -> None:
    game = RepeatedGame(get_stage("dilemma"), rounds=3)
    assert game.name == "dilemmax3"
    state = game.initial_state()
    moves = [("cooperate", "defect"), ("defect", "defect"), ("cooperate", "cooperate")]
    for a, b in moves:
        state, events = state.apply({0: a, 1: b})
        assert events[0].data["actions"] == [a, b]
    assert state.is_terminal()
    assert state.history == (
        Round((0, 1), (0.0, 15.0)),
        Round((1, 1), (5.0, 5.0)),
        Round((0, 0), (10.0, 10.0)),
    )
    assert state.payoffs() == (15.0, 30.0)
    obs = state.observation(0)
    assert obs.own_actions() == ["cooperate", "defect", "cooperate"]
    assert obs.legal is None
    assert obs.round == 4
    with pytest.raises(IllegalAction, match="the game is over"):
        state.apply({0: "cooperate", 1: "cooperate"})


def test_forfeited_round_scores_the_forfeit_payoffs_and_is_marked_invalid() -> None:
    from stratagem.games.matrix.repeated import FORFEIT, RepeatedGame

    stage = NormalFormGame.prisoners_dilemma("pd", t=6, r=4, p=2, s=1)
    state = RepeatedGame(stage, 3).initial_state()
    state, events = state.forfeit({0: None, 1: "defect"})
    assert state.history[-1].actions == (FORFEIT, 1)
    assert state.history[-1].payoffs == (0.0, 0.0)
    assert not state.history[-1].valid
    assert events[0].data["actions"] == [None, "defect"] and events[0].data["valid"] is False
    state, _ = state.forfeit({0: "cooperate", 1: "cooperate"})  # no None: an ordinary round
    assert state.history[-1].valid and state.history[-1].payoffs == (4.0, 4.0)
    assert state.observation(0).own_actions() == [None, "cooperate"]
    custom = RepeatedGame(stage, 1, forfeit_payoffs=(-1, 0)).initial_state()
    assert custom.forfeit({0: None, 1: None})[0].payoffs() == (-1.0, 0.0)
