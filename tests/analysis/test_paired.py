"""Paired differences and canonical-strategy persistence on hand-made data with known answers."""

from __future__ import annotations

import math

import pytest

from stratagem.analysis.paired import (
    Moves,
    PairedDifference,
    behaviour_profile,
    contexts,
    paired_difference,
    persistence,
    persistence_interval,
)
from stratagem.errors import StratagemError

# -- paired_difference --------------------------------------------------------------------------


def test_known_mean_difference_and_ci_contains_it() -> None:
    # differences 1, 2, 0, 3 -> mean 1.5
    got = paired_difference([1, 2, 3, 4], [2, 4, 3, 7])
    assert got.n == 4
    assert got.mean_default == pytest.approx(2.5)
    assert got.mean_variant == pytest.approx(4.0)
    assert got.mean_diff == pytest.approx(1.5)
    assert got.level == 0.95
    assert got.ci_low is not None and got.ci_high is not None
    # a resampled mean of values in [0, 3] stays in [0, 3]
    assert 0 <= got.ci_low <= got.mean_diff <= got.ci_high <= 3


def test_narrower_level_gives_narrower_interval() -> None:
    wide = paired_difference([1, 2, 3, 4, 5], [2, 4, 3, 7, 4], level=0.95)
    narrow = paired_difference([1, 2, 3, 4, 5], [2, 4, 3, 7, 4], level=0.5)
    assert wide.ci_low is not None and wide.ci_high is not None
    assert narrow.ci_low is not None and narrow.ci_high is not None
    assert wide.ci_low <= narrow.ci_low <= narrow.ci_high <= wide.ci_high


def test_all_equal_differences_give_a_point_interval() -> None:
    got = paired_difference([1, 2, 3], [3, 4, 5])
    assert (got.mean_diff, got.ci_low, got.ci_high) == (2.0, 2.0, 2.0)
    assert got.significant
    none = paired_difference([0.1, 0.1, 0.1], [0.1, 0.1, 0.1])
    assert (none.ci_low, none.ci_high) == (0.0, 0.0)
    assert not none.significant


def test_one_pair_has_no_interval() -> None:
    got = paired_difference([10.0], [12.5])
    assert got.n == 1
    assert got.mean_diff == 2.5
    assert got.ci_low is None and got.ci_high is None
    assert not got.significant


def test_clear_effect_is_significant() -> None:
    got = paired_difference([0, 1, 0, 2, 1], [5, 7, 7, 7, 7])  # differences 5, 6, 7, 5, 6
    assert got.mean_diff == pytest.approx(5.8)
    assert got.ci_low is not None and got.ci_low >= 5
    assert got.significant
    assert paired_difference([5, 7, 7, 7, 7], [0, 1, 0, 2, 1]).significant  # negative effect


def test_no_effect_is_not_significant() -> None:
    assert not paired_difference([0, 0, 0, 0], [1, -1, 2, -2]).significant


def test_same_seed_same_result_other_seed_other_draws() -> None:
    # distinct fractional parts, so that two seeds almost surely give different interval ends
    args = ([1.0, 4.0, 2.0, 8.0, 5.0, 7.0], [2.3, 3.1, 6.7, 9.05, 4.2, 12.9])
    first = paired_difference(*args, n_boot=200, seed=7)
    assert paired_difference(*args, n_boot=200, seed=7) == first
    assert isinstance(first, PairedDifference)
    assert paired_difference(*args, n_boot=200, seed=8) != first  # the seed is actually used


@pytest.mark.parametrize(
    ("default", "variant", "match"),
    [
        ([1, 2, 3], [1, 2], "default has 3 values but variant 2"),
        ([], [], "empty"),
        ([1.0, math.nan], [1.0, 2.0], r"default\[1\] is nan"),
        ([1.0, 2.0], [1.0, math.inf], r"variant\[1\] is inf"),
        ([1.0, "x"], [1.0, 2.0], "must be numbers"),
    ],
)
def test_bad_pairs_are_user_errors(default: list[float], variant: list[float], match: str) -> None:
    with pytest.raises(StratagemError, match=match):
        paired_difference(default, variant)


def test_bad_bootstrap_settings_are_user_errors() -> None:
    with pytest.raises(StratagemError, match="level"):
        paired_difference([1, 2], [2, 3], level=1.0)
    with pytest.raises(StratagemError, match="n_boot"):
        paired_difference([1, 2], [2, 3], n_boot=0)


# -- behaviour_profile and persistence ------------------------------------------------------------

C, D = 0, 1  # PD roles: index 0 is cooperation (pd) / stag (sh)


def test_context_names() -> None:
    assert contexts(3) == ("start", "after:0", "after:1", "after:2")


def test_behaviour_profile_counts_contexts() -> None:
    game: Moves = [(C, D), (D, D), (D, C), (C, C)]
    # start: C; after:D (rounds 2, 3): D, D; after:C (round 4): C
    assert behaviour_profile([game], 2) == {
        "start": (1.0, 0.0),
        "n:start": (1.0,),
        "after:0": (1.0, 0.0),
        "n:after:0": (1.0,),
        "after:1": (0.0, 1.0),
        "n:after:1": (2.0,),
    }


def test_identical_behaviour_persists_fully() -> None:
    games: list[Moves] = [[(C, C), (C, D), (D, C), (C, C)], [(D, D), (D, C), (C, C)]]
    got = persistence(games, games, 2)
    assert got.score == pytest.approx(1.0)
    assert (got.contexts, got.default_games, got.variant_games) == (3, 2, 2)


def test_always_cooperate_versus_always_defect_is_zero() -> None:
    default: list[Moves] = [[(C, C)] * 16, [(C, D)] * 16]
    variant: list[Moves] = [[(D, C)] * 16, [(D, D)] * 16]
    got = persistence(default, variant, 2)
    assert got.score == pytest.approx(0.0)
    assert got.contexts == 3


def test_intermediate_case_by_hand() -> None:
    default: list[Moves] = [[(C, C), (C, C), (C, C), (C, D), (D, C)]]
    variant: list[Moves] = [[(D, C), (C, C), (D, C), (C, C)]]
    # default: start {C: 1}; after:C (rounds 2-4) {C: 3}; after:D (round 5) {D: 1}
    # variant: start {D: 1}; after:C (rounds 2-4) {C: 2, D: 1}; no after:D
    # shared contexts: start (1 + 1 = 2 observations) and after:C (3 + 3 = 6); after:D is skipped
    # TV(start)   = 0.5 * (|1 - 0| + |0 - 1|)     = 1
    # TV(after:C) = 0.5 * (|1 - 2/3| + |0 - 1/3|) = 1/3
    # score = 1 - (2/8 * 1 + 6/8 * 1/3) = 1 - (0.25 + 0.25) = 0.5
    got = persistence(default, variant, 2)
    assert got.score == pytest.approx(0.5)
    assert got.contexts == 2


def test_invalid_moves_are_skipped() -> None:
    default: list[Moves] = [[(C, C)] * 4]
    variant: list[Moves] = [[(C, C), (None, C), (C, None), (D, C), (C, C)]]
    # round 2: own move invalid; round 4: the D follows an invalid opponent move, so no context;
    # what is left (start C, after:C C at rounds 3 and 5) matches the default exactly
    profile = behaviour_profile(variant, 2)
    assert profile["after:0"] == (1.0, 0.0)
    assert profile["n:after:0"] == (2.0,)
    assert persistence(default, variant, 2).score == pytest.approx(1.0)


def test_no_shared_context_gives_none() -> None:
    default: list[Moves] = [[(C, D)]]  # start only
    variant: list[Moves] = [[(None, C), (D, C)]]  # after:C only
    got = persistence(default, variant, 2)
    assert got.score is None
    assert got.contexts == 0
    assert persistence([], [], 2).score is None


def rps_game(own: int) -> Moves:
    """24 RPS rounds: the agent always plays `own`, the opponent cycles 0, 1, 2."""
    return [(own, t % 3) for t in range(24)]


def test_mapping_aligns_permuted_labels() -> None:
    # eq1 (rock, paper, scissors) vs eq1-alt (paper, rock, scissors): an agent that always says
    # "rock" plays index 0 in the default and index 1 in the variant
    default, variant = [rps_game(0)], [rps_game(1)]
    assert persistence(default, variant, 3).score == pytest.approx(0.0)  # by role: all changed
    by_label = persistence(default, variant, 3, mapping=[1, 0, 2])
    assert by_label.score == pytest.approx(1.0)  # by label: the same "rock" every round
    assert by_label.contexts == 4


@pytest.mark.parametrize(
    ("game", "match"),
    [
        ([(C, C), (2, C)], r"variant game 0 \(0-based\), round 2, own move: action 2"),
        ([(C, -1)], "round 1, opponent move: action -1"),
        ([(C, True)], "action True"),
        ([(C, 0.0)], "action 0.0"),
        ([(C,)], "expected an \\(own, opponent\\) pair"),
    ],
)
def test_bad_index_is_a_user_error(game: Moves, match: str) -> None:
    with pytest.raises(StratagemError, match=match):
        persistence([[(C, C)]], [game], 2)


def test_bad_index_names_the_game() -> None:
    with pytest.raises(StratagemError, match=r"default game 1 \(0-based\), round 3"):
        persistence([[(C, C)], [(C, C), (C, C), (5, C)]], [[(C, C)]], 2)
    with pytest.raises(StratagemError, match=r"^game 0 \(0-based\), round 1"):
        behaviour_profile([[(3, 0)]], 2)


@pytest.mark.parametrize("mapping", [[0, 0, 2], [0, 1], [1, 2, 3], [0, 1, 2, 3]])
def test_bad_mapping_is_a_user_error(mapping: list[int]) -> None:
    with pytest.raises(StratagemError, match=r"permutation of 0\.\.2"):
        persistence([rps_game(0)], [rps_game(1)], 3, mapping=mapping)


def test_bad_n_actions_is_a_user_error() -> None:
    with pytest.raises(StratagemError, match="n_actions"):
        persistence([], [], 0)


# -- persistence_interval -----------------------------------------------------------------------

MIXED_DEFAULT: list[Moves] = [
    [(C, C), (C, C), (C, D), (D, D), (D, C), (C, C)],
    [(C, D), (D, D), (D, D), (D, C), (C, C), (C, C)],
    [(D, C), (C, C), (C, C), (C, D), (D, C), (C, C)],
    [(C, C), (C, D), (C, D), (D, C), (C, C), (C, D)],
]
MIXED_VARIANT: list[Moves] = [
    [(D, C), (D, C), (C, D), (D, D), (D, C), (C, C)],
    [(C, D), (D, D), (C, D), (D, C), (D, C), (C, C)],
    [(D, D), (D, C), (C, C), (D, D), (D, C), (D, D)],
]


def test_interval_contains_the_score_for_a_mixed_example() -> None:
    score = persistence(MIXED_DEFAULT, MIXED_VARIANT, 2).score
    assert score is not None and 0 < score < 1
    low, high = persistence_interval(MIXED_DEFAULT, MIXED_VARIANT, 2)
    assert low is not None and high is not None
    assert 0 <= low <= score <= high <= 1
    assert low < high
    assert persistence_interval(MIXED_DEFAULT, MIXED_VARIANT, 2) == (low, high)  # same seed


def test_interval_needs_two_games_per_side() -> None:
    assert persistence_interval(MIXED_DEFAULT[:1], MIXED_VARIANT, 2) == (None, None)
    assert persistence_interval(MIXED_DEFAULT, MIXED_VARIANT[:1], 2) == (None, None)


def test_interval_validates_like_persistence() -> None:
    with pytest.raises(StratagemError, match="permutation"):
        persistence_interval(MIXED_DEFAULT, MIXED_VARIANT, 2, mapping=[0, 0])
    with pytest.raises(StratagemError, match="level"):
        persistence_interval(MIXED_DEFAULT, MIXED_VARIANT, 2, level=0)


def test_interval_is_none_when_nothing_is_ever_shared() -> None:
    default: list[Moves] = [[(C, D)], [(D, D)]]
    variant: list[Moves] = [[(None, C), (D, C)], [(None, C), (C, C)]]
    assert persistence_interval(default, variant, 2) == (None, None)
