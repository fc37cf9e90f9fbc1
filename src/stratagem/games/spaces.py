"""Action spaces: what a player may legally do at a decision point.

The engine validates every action against its space, so no player (and no LLM's text) can change the
state except through a legal, parsed action.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stratagem.errors import StratagemError

Action = str | int
"""A parsed action: a label for choices, an integer for amounts, a string for free text."""


class IllegalAction(StratagemError):
    """An action that its space does not allow."""


@dataclass(frozen=True)
class Choice:
    """Pick one of a finite set of labels (a matrix-game action, accept/reject, a vote)."""

    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.labels:
            raise StratagemError("a choice needs at least one label")
        if len(set(self.labels)) != len(self.labels):
            raise StratagemError(f"duplicate labels in choice: {list(self.labels)}")

    def validate(self, action: Action) -> str:
        if not isinstance(action, str) or action not in self.labels:
            raise IllegalAction(f"illegal action {action!r}: expected one of {list(self.labels)}")
        return action

    def index(self, action: Action) -> int:
        return self.labels.index(self.validate(action))


@dataclass(frozen=True)
class IntegerRange:
    """Pick an integer in [low, high] (an offer, a contribution, a bid)."""

    low: int
    high: int

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise StratagemError(f"empty integer range [{self.low}, {self.high}]")

    def validate(self, action: Action) -> int:
        if isinstance(action, bool) or not isinstance(action, int):
            raise IllegalAction(f"illegal action {action!r}: expected an integer")
        if not self.low <= action <= self.high:
            raise IllegalAction(f"illegal action {action}: expected {self.low}..{self.high}")
        return action


@dataclass(frozen=True)
class FreeText:
    """Say something: a clue, a message, a description, limited in length."""

    max_chars: int = 2000
    nonblank: str = ""
    """What the text is where it must say something ("a clue"): an empty or whitespace-only
    text is then illegal, and the error names it. Empty: silence is a move too."""

    def validate(self, action: Action) -> str:
        if not isinstance(action, str):
            raise IllegalAction(f"illegal action {action!r}: expected text")
        if len(action) > self.max_chars:
            raise IllegalAction(f"message of {len(action)} characters exceeds {self.max_chars}")
        if self.nonblank and not action.strip():
            raise IllegalAction(f"{self.nonblank} cannot be empty: say something")
        return action

    def example(self) -> str:
        """A legal text, for stand-ins (a plan's count of decisions): silence, where any text
        goes, else an ellipsis; a game whose moves are judged (TextArena's) guesses one."""
        return "..." if self.nonblank else ""


@dataclass(frozen=True)
class Shares:
    """Split a whole among named parties: a cost-sharing proposal (seed-004 §3.3), one integer
    share per party, each a multiple of `step` in 0..`total`, together exactly `total`.

    The action is a canonical string, the shares in party order joined by "/" ("40/30/30"), so an
    `Action` stays `str | int`, proposals compare equal exactly when their numbers do (§3.3's
    agreement on "numerically identical proposals"), and a stored action reads as itself.
    """

    parties: tuple[str, ...]
    step: int = 5
    """seed-004 §3.3: "the stride should be 5%"."""
    total: int = 100
    written: bool = False
    """Keep a split as written: "40.0/30/30" (a share may have a decimal point, if only zeros
    follow it) stays itself instead of becoming "40/30/30", for a game that compares proposals
    as strings, as the study's code did (seed-004 §10.11). Its numbers are checked the same."""

    def __post_init__(self) -> None:
        if len(self.parties) < 2:
            raise StratagemError(f"shares need at least two parties, got {list(self.parties)}")
        if len(set(self.parties)) != len(self.parties):
            raise StratagemError(f"duplicate parties in shares: {list(self.parties)}")
        for name, value in (("step", self.step), ("total", self.total)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise StratagemError(f"shares: {name} must be an integer >= 1, got {value!r}")
        if self.total % self.step:
            raise StratagemError(f"shares: total {self.total} is not a multiple of {self.step}")

    def validate(self, action: Action) -> str:
        values = self.values(action)
        return str(action) if self.written else self.format(values)

    def values(self, action: Action) -> tuple[int, ...]:
        """The shares of an action, in party order, or `IllegalAction` saying what is wrong."""
        part = r"\d{1,9}(?:\.\d{1,9})?" if self.written else r"\d{1,9}"
        if not isinstance(action, str) or not re.fullmatch(rf"{part}(/{part})*", action):
            raise IllegalAction(
                f"illegal shares {action!r}: expected {len(self.parties)} whole numbers "
                f'joined by "/", like {self.example()!r}'
            )
        parts = [text.partition(".") for text in action.split("/")]
        for whole, _, fraction in parts:
            if fraction.strip("0"):
                raise IllegalAction(
                    f"illegal share {whole}.{fraction} in {action!r}: expected whole numbers"
                )
        values = tuple(int(whole) for whole, _, _ in parts)
        if len(values) != len(self.parties):
            raise IllegalAction(
                f"illegal shares {action!r}: expected {len(self.parties)} shares "
                f"({', '.join(self.parties)}), got {len(values)}"
            )
        for party, value in zip(self.parties, values, strict=True):
            if value > self.total or value % self.step:
                raise IllegalAction(
                    f"illegal share {value} for {party}: expected a multiple of {self.step} "
                    f"from 0 to {self.total}"
                )
        if sum(values) != self.total:
            raise IllegalAction(
                f"illegal shares {action!r}: they sum to {sum(values)}, not {self.total}"
            )
        return values

    def format(self, values: tuple[int, ...] | list[int]) -> str:
        """The canonical action of some shares (not validated: pass it to `validate`)."""
        return "/".join(str(v) for v in values)

    def example(self) -> str:
        """A legal action: the whole on the first party (for messages and stand-ins)."""
        return self.format([self.total] + [0] * (len(self.parties) - 1))


ActionSpace = Choice | IntegerRange | FreeText | Shares
