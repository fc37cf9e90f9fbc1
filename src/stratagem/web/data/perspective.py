"""Whose eyes an episode is seen through: everything the record holds, or one seat's."""

from __future__ import annotations

import re
from dataclasses import dataclass

from stratagem.errors import StratagemError

_SEAT = re.compile(r"seat:([0-9]+)")


@dataclass(frozen=True)
class Perspective:
    """`seat` None: everything (hidden events, decisions, beliefs, probes, every call); a seat:
    only what that seat could see, so nothing hidden from it is ever sent to a browser."""

    seat: int | None

    @classmethod
    def parse(cls, text: str) -> Perspective:
        """ "all" or "seat:K" (K >= 0), as the pages and `--perspective` write it."""
        if text == "all":
            return cls(None)
        found = _SEAT.fullmatch(text)
        if found is None:
            raise StratagemError(
                f"perspective '{text}': expected 'all' or 'seat:K' with K a seat number (0, 1, ...)"
            )
        return cls(int(found.group(1)))

    def __str__(self) -> str:
        return "all" if self.seat is None else f"seat:{self.seat}"

    def sees(self, visible_to: tuple[int, ...] | None) -> bool:
        """Whether an event with this stored visibility is shown (public ones to every seat)."""
        return self.seat is None or visible_to is None or self.seat in visible_to

    def owns(self, seat: int | None) -> bool:
        """Whether a seat's own records (its calls, beliefs, answers) are shown."""
        return self.seat is None or seat == self.seat
