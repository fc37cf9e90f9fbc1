"""The PGM belief of seed-004 §7.2: initialisation, update, vote, clue target, self-diagnosis."""

from __future__ import annotations

import numpy as np
import pytest

from stratagem.agents.magic import belief as b

THIRD = 1 / 3


def test_softmax_check_of_the_spec() -> None:
    # seed-004 §7.2: softmax([0, .5, .5]) = [.233, .384, .384]
    assert np.round(b.softmax_rows([0, 0.5, 0.5]), 3).tolist() == [0.233, 0.384, 0.384]


def test_initialisations() -> None:
    assert b.init_chameleon(0, owner_is_chameleon=False).tolist() == [
        [0.0, 0.5, 0.5],
        [THIRD, THIRD, THIRD],
        [THIRD, THIRD, THIRD],
    ]
    assert b.init_chameleon(2, owner_is_chameleon=True).tolist() == [
        [0.0, 0.5, 0.5],
        [0.5, 0.0, 0.5],
        [0.0, 0.0, 1.0],
    ]
    assert np.allclose(b.init_undercover(), THIRD)
    for m in (b.init_chameleon(1, True), b.init_chameleon(1, False), b.init_undercover()):
        assert np.allclose(m.sum(axis=1), 1.0)
    with pytest.raises(ValueError):
        b.init_chameleon(3, False)


def test_update_is_the_softmax_of_the_scaled_product() -> None:
    m = b.init_chameleon(0, False)
    f = np.array([[0, 1, -1], [1, 0, 0], [0, 0, 0]])
    expected = b.softmax_rows(m * (1 + 0.1 * f))
    assert np.allclose(b.update(m, f), expected)
    assert np.allclose(b.update(m, f).sum(axis=1), 1.0)
    # no change keeps the shape of a row but spreads it: the first update of a fresh belief
    assert np.round(b.update(m, np.zeros((3, 3)))[0], 3).tolist() == [0.233, 0.384, 0.384]
    # factor_scale is an option
    assert np.allclose(b.update(m, f, factor_scale=0.5), b.softmax_rows(m * (1 + 0.5 * f)))
    assert np.array_equal(m, b.init_chameleon(0, False)), "the input is not modified"
    with pytest.raises(ValueError):
        b.update(m, np.zeros((2, 2)))


def test_chameleon_vote_is_the_argmax_of_the_own_row() -> None:
    m = b.update(b.init_chameleon(0, False), [[0, 1, -1], [0, 0, 0], [0, 0, 0]])
    assert b.chameleon_vote(m, 0, owner_is_chameleon=False) == 1
    # A fresh non-chameleon's own row ties [0, .5, .5]: the code's argsort takes the higher seat.
    fresh = b.init_chameleon(0, False)
    assert b.chameleon_vote(fresh, 0, False) == 2
    assert b.chameleon_vote(fresh, 0, False, ties="lowest") == 1


def test_the_chameleon_skips_itself() -> None:
    m = b.init_chameleon(2, True)  # own row one-hot on itself
    assert b.chameleon_vote(m, 2, owner_is_chameleon=True) == 1
    assert b.chameleon_vote(m, 2, owner_is_chameleon=True, ties="lowest") == 0
    # Its zeros stay equal under the multiplicative update, so a first own-row factor changes
    # nothing; a second one separates them.
    f = [[0, 0, 0], [0, 0, 0], [1, -1, 0]]
    assert b.chameleon_vote(b.update(m, f), 2, owner_is_chameleon=True) == 1
    assert b.chameleon_vote(b.update(b.update(m, f), f), 2, owner_is_chameleon=True) == 0


def test_only_the_chameleon_skips_itself_within_the_seats_the_game_allows() -> None:
    """Issue 24 item 10, seed-004 §7.2: only the chameleon skips itself. A non-chameleon whose
    own row peaks on itself votes for itself where the game counts self-votes (all seats
    allowed), and for the best other seat where the game refuses them."""
    m = np.array([[0.4, 0.3, 0.3], [THIRD] * 3, [THIRD] * 3])
    assert b.chameleon_vote(m, 0, owner_is_chameleon=False) == 0
    assert b.chameleon_vote(m, 0, False, allowed=[0, 1, 2]) == 0
    assert b.chameleon_vote(m, 0, False, allowed=[1, 2]) == 2
    assert b.chameleon_vote(m, 0, False, ties="lowest", allowed=[1, 2]) == 1
    # The chameleon skips itself even where the game would take its self-vote.
    assert b.chameleon_vote(m, 0, True, allowed=[0, 1, 2]) == 2
    with pytest.raises(ValueError, match="seats to vote for"):
        b.chameleon_vote(m, 0, True, allowed=[0])


def test_a_tied_row_goes_to_the_first_seat_by_argmax_and_the_last_by_the_codes_argsort() -> None:
    """Issue 24 item 2: §7.2's "argmax" (numpy: the first index) against the code's
    `argsort()[-1]` (the last)."""
    tied = np.array([[0.0, 0.5, 0.5], [THIRD] * 3, [THIRD] * 3])
    assert b.chameleon_vote(tied, 0, False, ties="lowest") == 1 == int(np.argmax(tied[0]))
    assert b.chameleon_vote(tied, 0, False, ties="code") == 2 == int(tied[0].argsort()[-1])


def test_clue_target_uses_the_owners_column() -> None:
    # Non-chameleon owner 0: column 0 is [0, 1/3, 1/3] at first, a tie the code gives to seat 2.
    fresh = b.init_chameleon(0, False)
    assert b.chameleon_clue_target(fresh, 0, owner_is_chameleon=False) == 2
    assert b.chameleon_clue_target(fresh, 0, False, ties="lowest") == 1
    # ... and to the player who suspects the owner most once there is one.
    m = b.update(fresh, [[0, 0, 0], [1, 0, 0], [0, 0, 0]])
    assert b.chameleon_clue_target(m, 0, False) == 1
    # The chameleon (owner 2) targets who suspects it least: column 2 is [.5, .5, 1] at first.
    cham = b.init_chameleon(2, True)
    assert b.chameleon_clue_target(cham, 2, owner_is_chameleon=True) == 0
    m = b.update(cham, [[0, 0, 1], [0, 0, -1], [0, 0, 0]])
    assert b.chameleon_clue_target(m, 2, True) == 1


def test_undercover_self_diagnosis() -> None:
    fresh = b.init_undercover()
    assert b.undercover_diagnosis(fresh, 1) == b.Diagnosis("not sure")
    suspects_self = b.update(fresh, [[0, 0, 0], [0, 1, 0], [0, 0, 0]])
    assert b.undercover_diagnosis(suspects_self, 1) == b.Diagnosis("yes")
    suspects_3 = b.update(fresh, [[0, 0, 0], [0, 0, 1], [0, 0, 0]])
    assert b.undercover_diagnosis(suspects_3, 1) == b.Diagnosis("no", 2)
    # threshold is an option: a tiny spread is "not sure" under a larger one
    nearly = np.array([[THIRD] * 3, [0.334, 0.333, 0.333], [THIRD] * 3])
    assert b.undercover_diagnosis(nearly, 1).verdict == "no"
    assert b.undercover_diagnosis(nearly, 1, threshold=1e-3).verdict == "not sure"


def test_diagnosis_ties_follow_the_code() -> None:
    # Own row [.4, .4, .2] for owner 1: np.argmax says seat 0, so "no"; the target is seat 0.
    m = np.array([[THIRD] * 3, [0.4, 0.4, 0.2], [THIRD] * 3])
    assert b.undercover_diagnosis(m, 1) == b.Diagnosis("no", 0)
    # Own row [.4, .2, .4] for owner 1: the target tie goes to seat 2 (code), seat 0 (lowest).
    m = np.array([[THIRD] * 3, [0.4, 0.2, 0.4], [THIRD] * 3])
    assert b.undercover_diagnosis(m, 1) == b.Diagnosis("no", 2)
    assert b.undercover_diagnosis(m, 1, ties="lowest") == b.Diagnosis("no", 0)
