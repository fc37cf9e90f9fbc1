"""A scripted Chameleon table for the viewer's tests: every seat's private strings are known, so
a test can assert that a seat's perspective holds none of the others'."""

from __future__ import annotations

from collections.abc import Callable

from stratagem.llm.types import Request
from support.pgm_play import asked, seat

SECRET_WORD = "Grape"
"""Chameleon setting 0's code word: seats 0 and 1 are told it, seat 2 (the chameleon) is not."""
REASKED_REPLY = "I like them all."
"""Seat 1's first vote: not a vote, so it is asked again."""


def analysis_marker(me: int) -> str:
    """A string only seat `me`'s analyses (its calls and beliefs) hold."""
    return f"secret-analysis-of-seat-{me}"


def chameleon_replier() -> Callable[[Request], str]:
    """Analyses naming their seat, clues, votes (seat 1's first vote needs a re-ask), a guess."""
    voted: set[int] = set()

    def reply(request: Request) -> str:
        question, me = asked(request), seat(request)
        if "evaluate who is more suspicious" in question or "deduce the secret code" in question:
            others = [k for k in (1, 2, 3) if k != me + 1]
            return (
                f"As Player {me + 1},\nI think:\n"
                f"Player {others[0]} is more suspicious, because {analysis_marker(me)}\n"
                f"Player {others[1]} is less suspicious, because {analysis_marker(me)}"
            )
        last = request.messages[-1].content
        if "Now vote" in last or "vote" in question.lower():
            if me == 1 and me not in voted:
                voted.add(me)
                return REASKED_REPLY
            return "I vote for Player 3." if me != 2 else "I vote for Player 1."
        if "guess the code" in last:
            return 'I guess the code is "Apple"'
        return f"It is a fruit, says seat {me}."

    return reply
