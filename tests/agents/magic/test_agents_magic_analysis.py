"""Text -> F (seed-004 §6.3, §7.3), the w.ProPGM matrix (§7.1) and the self-diagnosis (§7.3)."""

from __future__ import annotations

import numpy as np

from stratagem.agents.magic import belief as b
from stratagem.agents.magic import texts
from stratagem.agents.magic.analysis_parse import (
    parse_chameleon_analysis,
    parse_probability_matrix,
    parse_self_diagnosis,
    parse_undercover_analysis,
    row_stochastic,
)

# -- the case-study matrices of seed-004 §7.1 ------------------------------------------------------
#
# The figure prints each PGM player's M "calculated by extracting judgments in the text-based PGM".
# Both documented matrices are reproduced, to every printed decimal, by ONE update of the §7.2
# initialisation of a non-chameleon, with the F below (worked out by trying every F in
# {-1, 0, 1}^(3x3)); the texts are plausible analyses in the view prompt's format that parse to it.
#
#   Player 1: F = [[0, -1, 0], [0, 0, 0], [+1, -1, 0]]
#     own row softmax([0, .5*.9, .5*1]) = [.237 .372 .391]; row 3 softmax(1/3*[1.1, .9, 1])
#   Player 3: F = [[0, -1, 0], [0, 0, +1], [+1, -1, 0]]
#     own row softmax([.5*1.1, .5*.9, 0]) = [.403 .365 .232]

PLAYER_1_ANALYSIS = """As Player 1,
I think:
Player 2 is less suspicious, because its clue fits the word well.
Player 3 is no change, because Player 3 hasn't given a clue yet.
As for other players' thoughts:
I think now Player 2 thinks:
Player 1 is no change, because ...
Player 3 is no change, because ...
I think now Player 3 thinks:
Player 1 is more suspicious, because my clue was general.
Player 2 is less suspicious, because ...
"""

PLAYER_3_ANALYSIS = """As Player 3,
I think:
Player 1 is more suspicious, because its clue applies to many fruits.
Player 2 is less suspicious, because its clue is specific.
As for other players' thoughts:
I think now Player 1 thinks:
Player 2 is less suspicious, because ...
Player 3 is no change, because ...
I think now Player 2 thinks:
Player 1 is no change, because ...
Player 3 is more suspicious, because ...
"""


def test_case_study_player_1() -> None:
    parsed = parse_chameleon_analysis(PLAYER_1_ANALYSIS, respondent=0)
    assert parsed.factor == ((0, -1, 0), (0, 0, 0), (1, -1, 0))
    assert (parsed.matched, parsed.unmatched, parsed.parsed) == (6, 0, True)
    m = b.update(b.init_chameleon(0, owner_is_chameleon=False), parsed.matrix)
    assert np.round(m, 3).tolist() == [
        [0.237, 0.372, 0.391],
        [0.333, 0.333, 0.333],
        [0.345, 0.322, 0.333],
    ]


def test_case_study_player_3() -> None:
    parsed = parse_chameleon_analysis(PLAYER_3_ANALYSIS, respondent=2)
    assert parsed.factor == ((0, -1, 0), (0, 0, 1), (1, -1, 0))
    m = b.update(b.init_chameleon(2, owner_is_chameleon=False), parsed.matrix)
    assert np.round(m, 3).tolist() == [
        [0.337, 0.326, 0.337],
        [0.33, 0.33, 0.341],
        [0.403, 0.365, 0.232],
    ]
    assert np.allclose(m.sum(axis=1), 1.0)


def test_the_studys_own_demo_parses() -> None:
    # The non-chameleon view demo (the study's example answer), read as Player 3's answer.
    demo = texts.text("chameleon_view_demo_non_chameleon")
    answer = demo[demo.index("As Player 3") :]
    parsed = parse_chameleon_analysis(answer, respondent=2)
    # "less suspicous" (sic) is no phrase: that line is unmatched and sets 0.
    assert parsed.factor == ((0, -1, 0), (0, 0, 0), (1, 0, 0))
    assert (parsed.matched, parsed.unmatched) == (5, 1)


def test_the_perspective_starts_with_the_respondent() -> None:
    parsed = parse_chameleon_analysis("Player 1 is more suspicious.", respondent=1)
    assert parsed.factor == ((0, 0, 0), (1, 0, 0), (0, 0, 0))


def test_phrase_priority_is_the_codes() -> None:
    text = "Player 2 is more suspicious than Player 3, who is less suspicious"
    assert parse_chameleon_analysis(text, 0).factor[0] == (0, -1, 0)


def test_unreadable_answers_are_distinguishable_from_no_change() -> None:
    garbage = parse_chameleon_analysis("I cannot tell anything yet.", 0)
    assert not garbage.parsed and garbage.factor == ((0, 0, 0),) * 3
    calm = parse_chameleon_analysis("Player 2 is no change\nPlayer 3 is no change", 0)
    assert calm.parsed and calm.factor == ((0, 0, 0),) * 3
    # a Player line without a phrase sets 0 (as the code does) but counts as unmatched
    vague = parse_chameleon_analysis("Player 2 is more suspicious\nPlayer 2 seems odd", 0)
    assert vague.factor[0] == (0, 0, 0) and (vague.matched, vague.unmatched) == (1, 1)


def test_unknown_players_are_skipped_not_crashed_on() -> None:
    text = "Player 4 is more suspicious\nAs Player 9,\nPlayer 2 is more suspicious\n" + (
        "I think now Player 2 thinks:\nPlayer 1 is less suspicious"
    )
    parsed = parse_chameleon_analysis(text, 0)
    assert parsed.factor == ((0, 0, 0), (-1, 0, 0), (0, 0, 0))
    assert (parsed.matched, parsed.unmatched) == (1, 2)


def test_lenient_line_start_reads_markdown() -> None:
    text = (
        "**As Player 1**, I think:\n- **Player 2** is More Suspicious\n  1. Player 3 is no change"
    )
    assert not parse_chameleon_analysis(text, 0).parsed
    lenient = parse_chameleon_analysis(text, 0, line_start="lenient")
    assert lenient.factor[0] == (0, 1, 0) and lenient.matched == 2


# -- Undercover ----------------------------------------------------------------------------------


UNDERCOVER_ANSWER = """2. I think Player 3 is undercover, because the clue is about cutting.
3. I think Player 1 thinks Player 3 is undercover, because ...
4. I think Player 3 thinks Player 1 is the undercover, because ..."""


def test_undercover_statements() -> None:
    parsed = parse_undercover_analysis(UNDERCOVER_ANSWER, respondent=1)
    assert parsed.factor == ((0, 0, 1), (0, 0, 1), (1, 0, 0))
    assert parsed.matched == 3
    assert parse_undercover_analysis(UNDERCOVER_ANSWER, 1, code_compat=True) == parsed


def test_undercover_negations_and_the_code_quirk() -> None:
    text = "I think Player 2 is not the undercover.\nI think Player 3 is non-undercover."
    assert not parse_undercover_analysis(text, 0).parsed
    quirk = parse_undercover_analysis(text, 0, code_compat=True)
    assert quirk.factor[0] == (0, 1, 1)  # the code's character class reads both as suspicion


def test_undercover_several_statements_on_one_line() -> None:
    text = "I think Player 2 is undercover and I think Player 3 thinks Player 1 is undercover."
    assert parse_undercover_analysis(text, 0).factor == ((0, 1, 0), (0, 0, 0), (1, 0, 0))
    code = parse_undercover_analysis(text, 0, code_compat=True)
    assert code.factor == ((0, 1, 0), (0, 0, 0), (0, 0, 0))  # first match per line only


def test_undercover_self_suspicion_and_unknown_players() -> None:
    parsed = parse_undercover_analysis("I think Player 1 is undercover", respondent=0)
    assert parsed.factor[0] == (1, 0, 0)
    assert b.undercover_diagnosis(b.update(b.init_undercover(), parsed.matrix), 0).verdict == "yes"
    odd = parse_undercover_analysis("I think Player 7 is undercover", 0)
    assert (odd.parsed, odd.unmatched) == (False, 1)


# -- w.ProPGM ------------------------------------------------------------------------------------


def test_probability_matrix() -> None:
    m = parse_probability_matrix("My answer: [[0.3,0.2,0.5],[0.1,0.4,0.5],[0.3,0.3,0.4]].")
    assert m is not None and m.tolist() == [[0.3, 0.2, 0.5], [0.1, 0.4, 0.5], [0.3, 0.3, 0.4]]
    numpy_style = parse_probability_matrix("[[0.237 0.372 0.391]\n [0.333 0.333 0.333] [1 1 2]]")
    assert numpy_style is not None
    assert row_stochastic(numpy_style)[2].tolist() == [0.25, 0.25, 0.5]


def test_invalid_matrices_are_none() -> None:
    for text in (
        "[[0.3,0.2.0.5],[0.1,0.4,0.5],[0.3,0.3,0.4]]",  # the spec's own typo
        "[[0.3,0.2],[0.1,0.4],[0.3,0.3]]",  # 3 x 2
        "[[0.3,0.2,0.5],[0.1,0.4,0.5]]",  # 2 rows
        "[[0.3,0.2,0.5],[0.1,0.4,0.5],[0.3,0.3,0.4]] or [[1,0,0],[0,1,0],[0,0,1]]",  # two
        "[[0.3,-0.2,0.5],[0.1,0.4,0.5],[0.3,0.3,0.4]]",  # negative
        "[[0,0,0],[0.1,0.4,0.5],[0.3,0.3,0.4]]",  # a row that cannot be normalised
        "[[30%,20%,50%],[0.1,0.4,0.5],[0.3,0.3,0.4]]",
        "no matrix here",
    ):
        assert parse_probability_matrix(text) is None, text


# -- the self-diagnosis --------------------------------------------------------------------------


def test_self_diagnosis() -> None:
    # Answers in the style of the study's undercover view demos.
    assert parse_self_diagnosis("Not sure, I can be the undercover. Because, first ...") == (
        "not sure"
    )
    assert parse_self_diagnosis("Yes, I am the undercover, because Player 2's ...") == "yes"
    assert parse_self_diagnosis("No, I am not the undercover, since Player 2 's clue") == "no"
    assert parse_self_diagnosis("Based on the clues I'm a non-undercover.") == "no"
    assert parse_self_diagnosis("I think Player 1 is describing a drink.") is None
    assert parse_self_diagnosis("Yes. I am not the undercover.") is None  # says both
