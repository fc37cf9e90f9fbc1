"""Action spaces: what a player may legally do at a decision point.

The engine validates every action against its space, so no player (and no LLM's text) can change the
state except through a legal, parsed action.
"""

from __future__ import annotations

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

    def validate(self, action: Action) -> str:
        if not isinstance(action, str):
            raise IllegalAction(f"illegal action {action!r}: expected text")
        if len(action) > self.max_chars:
            raise IllegalAction(f"message of {len(action)} characters exceeds {self.max_chars}")
        return action


ActionSpace = Choice | IntegerRange | FreeText
