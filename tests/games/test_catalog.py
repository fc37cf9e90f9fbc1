"""The catalog reproduces the specs' payoffs exactly, and user variants are validated."""

from __future__ import annotations

import numpy as np
import pytest

from stratagem.errors import StratagemError
from stratagem.games import (
    GAMES,
    NormalFormGame,
    PublicGoodGame,
    UltimatumGame,
    game_names,
    get_entry,
    get_game,
    get_stage,
    make_variant,
    n_player_prisoners_dilemma,
    nash_equilibria,
    rock_paper_scissors,
)


def cell(game: NormalFormGame, a: str, b: str) -> tuple[float, ...]:
    """Payoffs when the row player plays label a and the column player label b."""
    return game.payoff((game.index(0, a), game.index(1, b)))


def test_names_and_entries() -> None:
    expected = {
        "dilemma",
        "delight",
        "confusion",
        "pd",
        "pd-alt",
        "sh",
        "sh-alt",
        "eq1",
        "eq1-alt",
        "ba3",
        "ba3-alt",
        "npd3",
        "public-good",
        "dilemma-talk",
        "ultimatum",
        "chameleon",
        "undercover",
        "cost-sharing",
        "tradecraft",
        *("repetition", "reputation", "mediation", "contracting", "disarmament"),
    }
    assert set(game_names()) == expected
    for name, entry in GAMES.items():
        assert entry.name == name
        assert entry.description
        assert entry.source
        assert entry.family
        game = get_game(name)
        assert game.n_players >= 2
        if isinstance(game, NormalFormGame):
            assert game.name == name


def test_unknown_name_suggests() -> None:
    with pytest.raises(StratagemError, match="unknown game 'dilema': did you mean dilemma"):
        get_game("dilema")
    with pytest.raises(StratagemError, match="unknown game"):
        get_entry("nope")


def test_get_stage_refuses_non_matrix_games() -> None:
    with pytest.raises(StratagemError, match="'ultimatum' is not a matrix game"):
        get_stage("ultimatum")
    with pytest.raises(StratagemError, match="'public-good' is not a matrix game"):
        get_stage("public-good")


# -- seed-001 §4.1 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "t", "r", "p", "s"),
    [("dilemma", 15, 10, 5, 0), ("delight", 0, 5, 10, 15), ("confusion", 10, 15, 5, 0)],
)
def test_thesis_payoffs(name: str, t: int, r: int, p: int, s: int) -> None:
    game = get_stage(name)
    assert game.labels == (("cooperate", "defect"), ("cooperate", "defect"))
    assert cell(game, "cooperate", "cooperate") == (r, r)
    # seed-001 §2 [AMBIG-1], follow the prompts: if I cooperate and my partner defects, I get S.
    assert cell(game, "cooperate", "defect") == (s, t)
    assert cell(game, "defect", "cooperate") == (t, s)
    assert cell(game, "defect", "defect") == (p, p)
    # seed-001 §4.1: payoffs are permutations of [0, 5, 10, 15].
    assert sorted((t, r, p, s)) == [0, 5, 10, 15]
    assert get_entry(name).rounds == (10, 20)


# -- seed-003 §1.2 ------------------------------------------------------------------------------

# seed-003 App. B.3.1 as printed, (row, column) by content.
PD_CELLS = {("a", "a"): (4, 4), ("a", "b"): (1, 6), ("b", "a"): (6, 1), ("b", "b"): (2, 2)}
SH_CELLS = {("a", "a"): (6, 6), ("a", "b"): (1, 4), ("b", "a"): (4, 1), ("b", "b"): (2, 2)}


@pytest.mark.parametrize(
    ("name", "labels", "cells", "content", "caption"),
    [
        ("pd", ("cooperation", "defection"), PD_CELLS, "default", "PD"),
        ("pd-alt", ("cooperation", "defection"), SH_CELLS, "payoff-based", "label-based"),
        ("sh", ("stag", "hare"), SH_CELLS, "joint", "payoff-based"),
        ("sh-alt", ("stag", "hare"), PD_CELLS, "label-based", "joint"),
    ],
)
def test_seed003_pd_family(
    name: str,
    labels: tuple[str, str],
    cells: dict[tuple[str, str], tuple[int, int]],
    content: str,
    caption: str,
) -> None:
    game = get_stage(name)
    assert game.labels == (labels, labels)
    index = {"a": labels[0], "b": labels[1]}
    for (x, y), payoff in cells.items():
        assert cell(game, index[x], index[y]) == payoff
    entry = get_entry(name)
    assert entry.counterfactual == content
    # seed-003 §0.1: the PD tables are mis-captioned; the caption is kept apart from the content.
    assert entry.paper_caption == caption
    assert entry.rounds == (16,)
    assert entry.variant_of == (None if name == "pd" else "pd")


# -- seed-003 §1.3 ------------------------------------------------------------------------------

# seed-003 App. B.3.2 as printed: row player's payoffs, rows and columns in the printed order.
RPS_PRINTED = {
    "eq1": (("rock", "paper", "scissors"), [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]),
    "eq1-alt": (("paper", "rock", "scissors"), [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]),
    "ba3": (("rock", "paper", "scissors"), [[0, -3, 1], [3, 0, -1], [-1, 1, 0]]),
    "ba3-alt": (("paper", "rock", "scissors"), [[0, -3, 1], [3, 0, -1], [-1, 1, 0]]),
}


@pytest.mark.parametrize("name", sorted(RPS_PRINTED))
def test_seed003_rps_family_matches_printed_matrices(name: str) -> None:
    labels, row = RPS_PRINTED[name]
    game = get_stage(name)
    assert game.labels == (labels, labels)
    a, b = game.matrices()
    np.testing.assert_array_equal(a, row)
    np.testing.assert_array_equal(b, -np.asarray(row))  # zero-sum
    assert game.is_symmetric()
    assert get_entry(name).rounds == (24,)


def test_rps_dominance_by_words() -> None:
    # seed-003 §1.3: eq1-alt "Scissors beats Rock, Rock beats Paper and Paper beats Scissors".
    alt = get_stage("eq1-alt")
    assert cell(alt, "scissors", "rock") == (1, -1)
    assert cell(alt, "rock", "paper") == (1, -1)
    assert cell(alt, "paper", "scissors") == (1, -1)
    # ba3: paper beats rock pays ±3; ba3-alt: rock beats paper pays ±3.
    assert cell(get_stage("ba3"), "paper", "rock") == (3, -3)
    assert cell(get_stage("ba3-alt"), "rock", "paper") == (3, -3)
    assert cell(get_stage("ba3-alt"), "scissors", "rock") == (1, -1)


def test_rock_paper_scissors_validation() -> None:
    with pytest.raises(StratagemError, match="needs 3 labels"):
        rock_paper_scissors("x", ("a", "b"))
    with pytest.raises(StratagemError, match="ba must be > 0"):
        rock_paper_scissors("x", ba=0)


# -- seed-004 §3.4-3.5 --------------------------------------------------------------------------


def test_three_player_pd_rule_setting_0() -> None:
    game = get_stage("npd3")
    assert game.n_players == 3
    assert game.sizes == (2, 2, 2)
    c, d = 0, 1
    # seed-004 §3.4 setting 0: cooperate 2, defect 1, one_defect 4, two_defect 2.
    assert game.payoff((c, c, c)) == (2, 2, 2)
    assert game.payoff((d, d, d)) == (1, 1, 1)
    assert game.payoff((d, c, c)) == (4, 0, 0)
    assert game.payoff((c, d, c)) == (0, 4, 0)
    assert game.payoff((c, c, d)) == (0, 0, 4)
    assert game.payoff((d, d, c)) == (2, 2, 0)
    assert game.payoff((d, c, d)) == (2, 0, 2)
    assert game.payoff((c, d, d)) == (0, 2, 2)
    assert get_entry("npd3").rounds == (5,)


def test_three_player_pd_other_parameters() -> None:
    # The code's own default, 3/1/100/2 (seed-004 §3.4).
    game = get_stage("npd3", cooperate=3, defect=1, one_defect=100, two_defect=2)
    assert game.payoff((1, 0, 0)) == (100, 0, 0)
    direct = n_player_prisoners_dilemma("x", 3, 1, 100, 2)
    np.testing.assert_array_equal(direct.payoffs, game.payoffs)


def test_three_player_pd_parameters_are_validated() -> None:
    with pytest.raises(StratagemError, match="cooperate must be a finite number, got 'x'"):
        get_stage("npd3", cooperate="x")
    with pytest.raises(StratagemError, match="two_defect must be a finite number"):
        n_player_prisoners_dilemma("x", 3, 1, 100, float("inf"))


def test_public_good_and_ultimatum_options() -> None:
    pg = get_game("public-good")
    assert isinstance(pg, PublicGoodGame)
    assert (pg.n_players, pg.endowment, pg.rounds, pg.multiplier) == (3, 100, 5, 3.5)
    assert not pg.enforce_budget  # MAgIC's code did not enforce it (seed-004 §3.5)
    pg2 = get_game("public-good", multiplier=1.5, enforce_budget=True)
    assert isinstance(pg2, PublicGoodGame)
    assert pg2.multiplier == 1.5
    assert pg2.enforce_budget
    ult = get_game("ultimatum", pie=10)
    assert isinstance(ult, UltimatumGame)
    assert ult.pie == 10
    with pytest.raises(StratagemError, match="has no option 'multiplier': options: pie"):
        get_game("ultimatum", multiplier=2)
    with pytest.raises(StratagemError, match="takes no options"):
        get_game("pd", rounds=3)


def test_every_call_builds_a_fresh_equal_game() -> None:
    a, b = get_stage("pd"), get_stage("pd")
    assert a is not b
    np.testing.assert_array_equal(a.payoffs, b.payoffs)


# -- user variants ------------------------------------------------------------------------------


def test_make_variant_relabel() -> None:
    game = make_variant("pd", "pd-xy", labels=["x", "y"])
    assert game.labels == (("x", "y"), ("x", "y"))
    np.testing.assert_array_equal(game.payoffs, get_stage("pd").payoffs)
    per_player = make_variant("pd", "pd-xy2", labels=[["x", "y"], ["u", "v"]])
    assert per_player.labels == (("x", "y"), ("u", "v"))


def test_make_variant_row_matrix_of_symmetric_base() -> None:
    game = make_variant("pd", "pd-sh", payoffs=[[6, 1], [4, 2]], description="mine")
    np.testing.assert_array_equal(game.payoffs, get_stage("pd-alt").payoffs)
    assert game.description() == "mine"
    assert game.labels == get_stage("pd").labels
    # A variant gets the same analysis: the three Stag Hunt equilibria.
    assert len(nash_equilibria(game)) == 3


def test_make_variant_full_tensor_and_joint() -> None:
    tensor = get_stage("sh").payoffs
    game = make_variant("pd", "joint", labels=["stag", "hare"], payoffs=tensor)
    np.testing.assert_array_equal(game.payoffs, get_stage("sh").payoffs)
    assert game.labels == get_stage("sh").labels
    three = make_variant("npd3", "npd3-x", labels=["share", "keep"])
    assert three.labels == (("share", "keep"),) * 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give new labels, payoffs or both"),
        ({"labels": ["x", "y", "z"]}, "labels give \\[3, 3\\] actions but 'pd' has \\[2, 2\\]"),
        ({"labels": ["x", "x"]}, "duplicate labels"),
        ({"labels": "xy"}, "labels must be a non-empty list"),
        ({"labels": [["x", "y"]]}, "1 label lists given, 'pd' has 2 players"),
        ({"payoffs": [[1, 2], [3]]}, "payoffs must be a nested list of numbers"),
        ({"payoffs": [[1, "a"], [3, 4]]}, "payoffs must be a nested list of numbers"),
        (
            {"payoffs": [[1, 2, 3], [4, 5, 6]]},
            "shape \\(2, 3\\), expected \\(2, 2, 2\\) or the row player's matrix \\(2, 2\\)",
        ),
        ({"payoffs": [[1, float("inf")], [3, 4]]}, "must be finite"),
    ],
)
def test_make_variant_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(StratagemError, match=message):
        make_variant("pd", "mine", **kwargs)  # type: ignore[arg-type]


def test_make_variant_name_and_base_errors() -> None:
    with pytest.raises(StratagemError, match="already a catalog game"):
        make_variant("pd", "sh", labels=["x", "y"])
    with pytest.raises(StratagemError, match="name must be non-empty"):
        make_variant("pd", " ", labels=["x", "y"])
    with pytest.raises(StratagemError, match="unknown game 'pdx'"):
        make_variant("pdx", "mine", labels=["x", "y"])
    with pytest.raises(StratagemError, match="not a matrix game"):
        make_variant("ultimatum", "mine", labels=["x", "y"])


def test_settings_are_named_by_index() -> None:
    """seed-004 §3: `<game>/<k>` plays setting k, `<game>/*` lists every setting."""
    from stratagem.games.catalog import catalog_name, expand_settings, split_setting

    names = expand_settings("chameleon/*")
    assert len(names) == 20 and names[0] == "chameleon/0" and names[-1] == "chameleon/19"
    assert split_setting("undercover/4") == ("undercover", 4)
    assert split_setting("pd/sh") == ("pd/sh", None)
    assert catalog_name("chameleon/3") == "chameleon"
    game = get_game("chameleon/0")
    assert game.sides() == ("non-chameleon", "non-chameleon", "chameleon")  # §3.1 setting 0
    assert get_game("undercover/0").sides() == ("undercover", "civilian", "civilian")  # §3.2
    assert get_game("chameleon/95").sides() is not None  # a candidate, named one by one
    with pytest.raises(StratagemError, match=r"setting must be an integer in 0\.\.95, got 96"):
        get_game("chameleon/96")
    with pytest.raises(StratagemError, match="has no settings"):
        expand_settings("dilemma/*")
    assert expand_settings("dilemma") == ["dilemma"]
