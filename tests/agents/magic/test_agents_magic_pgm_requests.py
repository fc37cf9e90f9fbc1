"""The request texts of the PGM pipeline (seed-004 §7.3, §8.2)."""

from __future__ import annotations

import numpy as np
import pytest

from stratagem.agents.magic import belief as b
from stratagem.agents.magic.pgm_requests import (
    chameleon_clue_request,
    chameleon_view_request,
    undercover_clue_request,
    undercover_clues_text,
    undercover_diagnosis_request,
    undercover_followup_request,
)

# seed-004 §3.2: setting 0's fixed clues of round 1 and the first clue of round 2
CLUES = ["My clue is: television.", "My clue is: radio.", "My clue is: audience.", "observer."]
HEADER = (
    "You are playing undercover game with other two player. The player who gets a different word "
    "from other players is the undercover while others are non-undercovers.\n"
    "Round 0\nPlayer 1: My clue is: television.\nPlayer 2: My clue is: radio.\n"
    "Player 3: My clue is: audience.\nRound 1\nPlayer 1: observer.\n"
    "According to the above clues, please answer the following question(s):\n"
)


def test_clue_text_has_round_headers() -> None:
    assert undercover_clues_text(CLUES[:2]) == (
        "Round 0\nPlayer 1: My clue is: television.\nPlayer 2: My clue is: radio."
    )
    assert undercover_clues_text([]) == ""


def test_diagnosis_request() -> None:
    request = undercover_diagnosis_request(CLUES, 1, "listener")
    assert request == HEADER + (
        "1. You are Player 2, your word is listener. Guess what are the words Player 1 and "
        "Player 3 are describing?  Compare your word with their clues, what role do you think "
        "you are?(Only when other two players both give clues that are different from your word, "
        "you can take you self as undercover)"
    )


def test_followups_of_each_verdict() -> None:
    yes = undercover_followup_request(CLUES, 0, "viewer", "yes")
    assert yes.startswith(HEADER)
    body = yes[len(HEADER) :]
    assert body.startswith("2. You are Player 1, your word is viewer, you think you are undercover")
    assert "\n3. You are Player 1, your word is viewer, you think you are undercover. Now " in body
    assert "who Player 3 thinks" in body and body.endswith("to them to hide my self.")
    assert "\n4. I think the word of other player may be" in body
    no = undercover_followup_request(CLUES, 0, "viewer", "no")[len(HEADER) :]
    numbers = [line.split(".")[0] for line in no.split("\n") if line]
    assert numbers == ["2", "3", "4", "5"]
    assert no.startswith("2. You are Player 1, your word is viewer, guess who is more possible")
    assert no.endswith("5. I will try to a more specific clue about my word as... to help "
                       "identify who is undercover.")  # fmt: skip
    unsure = undercover_followup_request(CLUES, 0, "viewer", "not sure")[len(HEADER) :]
    assert unsure == no[: no.index("5. I will")]


def test_clue_requests() -> None:
    assert undercover_clue_request(0, "not sure").startswith("Player 1, according to your")
    assert undercover_clue_request(2, "yes").startswith("Player 3, according to your previous")
    assert "you think Player 2 is undercover" in undercover_clue_request(0, "no", 1)
    with pytest.raises(ValueError):
        undercover_clue_request(0, "no")
    assert chameleon_clue_request(0, 2, is_chameleon=False).startswith(
        "Player 1, you are non-chameleon, your target is to increase the suspiciousness of the "
        "Player 3."
    )
    assert "defraud trust from the Player 1," in chameleon_clue_request(1, 0, is_chameleon=True)


def test_view_requests() -> None:
    assert chameleon_view_request(1, is_chameleon=True) == (
        "Player 2, deduce the secret code based only on Player 1 and Player 3's clues and analyze "
        "who is more suspicious from the perspective of other players based on all the clues "
        "given. Your must follow the format in the demo."
    )
    non = chameleon_view_request(2, is_chameleon=False)
    assert "\nAs Player 3,\nI think:\nPlayer 1 is ..., because ...\nPlayer 2 is ..., because" in non
    assert "I think now Player 2 thinks:\nPlayer 3 ..., because ...\nPlayer 1 ..., because" in non


def test_the_codes_undercover_target() -> None:
    fresh = b.init_undercover()
    assert b.undercover_clue_target_code(fresh, 0) == 2  # "not sure": index -1, the last seat
    no = b.update(fresh, [[0, 0, 1], [0, 0, 0], [0, 0, 0]])
    assert b.undercover_clue_target_code(no, 0) == 2 == b.undercover_diagnosis(no, 0).target
    # "yes": the one who suspects the owner most (the owner's column), not a row target
    yes = b.update(fresh, [[1, 0, 0], [1, 0, 0], [0, 0, 0]])
    assert b.undercover_diagnosis(yes, 0).verdict == "yes"
    assert b.undercover_clue_target_code(yes, 0) == 1
    assert np.allclose(yes.sum(axis=1), 1.0)
