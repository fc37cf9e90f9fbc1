"""How a browser game ended, as a sentence (issue 36 item 11): a person reads "You won 60 to 40"
on their seat's page, not a list of payoffs; the launcher, which sits in no seat, reads who won.

Whoever scored the most won, together with anyone who scored as much; when every seat scored the
same it is a draw.
"""

from __future__ import annotations

from collections.abc import Sequence


def verdict(payoffs: Sequence[float], seat: int | None = None) -> str:
    """The result as `seat` reads it, or as an onlooker does with no seat."""
    best = max(payoffs)
    winners = [k for k, p in enumerate(payoffs) if p == best]
    if len(payoffs) == 2:
        if seat is None:
            if len(winners) == 2:
                return f"Draw, {best:g} to {best:g}."
            lost = payoffs[1 - winners[0]]
            return f"Seat {winners[0]} won {best:g} to {lost:g}."
        mine, theirs = payoffs[seat], payoffs[1 - seat]
        word = "Draw," if mine == theirs else "You won" if mine > theirs else "You lost"
        return f"{word} {mine:g} to {theirs:g}."
    if len(winners) == len(payoffs):
        return f"Draw: every seat scored {best:g}."
    if seat is not None:
        others = ", ".join(f"seat {k}: {p:g}" for k, p in enumerate(payoffs) if k != seat)
        word = "won" if seat in winners else "lost"
        return f"You {word} with {payoffs[seat]:g} ({others})."
    names = [str(k) for k in winners]
    who = f"Seats {', '.join(names[:-1])} and {names[-1]}" if names[1:] else f"Seat {names[0]}"
    rest = ", ".join(f"seat {k}: {p:g}" for k, p in enumerate(payoffs) if k not in winners)
    return f"{who} won with {best:g} ({rest})."
