"""The end of a browser game as a sentence (issue 36 item 11): in a seat's words, and in an
onlooker's (the launcher), for two seats and for more, a win, a loss and a draw."""

from __future__ import annotations

import pytest

from stratagem.web.play.verdict import verdict


@pytest.mark.parametrize(
    ("payoffs", "seat", "said"),
    [
        ((30, 15), 0, "You won 30 to 15."),
        ((30, 15), 1, "You lost 15 to 30."),
        ((2.5, 2.5), 1, "Draw, 2.5 to 2.5."),
        ((30, 15), None, "Seat 0 won 30 to 15."),
        ((-1, 0), None, "Seat 1 won 0 to -1."),
        ((3, 3), None, "Draw, 3 to 3."),
        ((1, 1, 0), 0, "You won with 1 (seat 1: 1, seat 2: 0)."),
        ((1, 1, 0), 2, "You lost with 0 (seat 0: 1, seat 1: 1)."),
        ((1, 1, 0, 1), None, "Seats 0, 1 and 3 won with 1 (seat 2: 0)."),
        ((0, 2, 1), None, "Seat 1 won with 2 (seat 0: 0, seat 2: 1)."),
        ((4, 4, 4), 1, "Draw: every seat scored 4."),
    ],
)
def test_the_result_reads_as_a_sentence(
    payoffs: tuple[float, ...], seat: int | None, said: str
) -> None:
    assert verdict(payoffs, seat) == said
