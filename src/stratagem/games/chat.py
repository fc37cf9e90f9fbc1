"""The event convention of moderated chat games (seed-004 §2): what a ChatArena-style transcript
is rebuilt from, the same way for every MAgIC game.

MAgIC's games are a chat: a rule-based moderator (code, not an LLM) announces, and players speak
in turn. The engine keeps the state; these events carry what the chat shows, so an assembler of
the players' prompts reads every game alike:

- a moderator announcement is `Event("moderator", {"text": <verbatim>}, visible_to)`;
- a player's utterance is `Event(<kind>, {"player": seat, "text": ..., "phase": ..., "round":
  ..., <game fields>}, visible_to)`, its kind naming what was said ("proposal", "vote", "move";
  the social deduction games add "clue" and "guess"): an assembler knows an utterance by its
  `player` and `text`. `text` is what a transcript shows, rendered by the game from the parsed
  action (never the model's raw reply, so no text a model writes can pose as the moderator or as
  a move); the game's own fields (the proposal, the vote as a seat) come with it.
- the end of a game is an `outcome` event that only the record sees (what the metrics read).

Kinds the episode loop gives a meaning of its own ("decision", "invalid", "round") are not
utterance kinds: "round" stays the repeated games' per-round record.

Visibility follows §2: `None` is public; `HIDDEN` (nobody) is a decision kept for the record
until the moderator reveals it (the PD and Public Good moves).
"""

from __future__ import annotations

from typing import Any

from stratagem.games.base import Event

MODERATOR = "moderator"
OUTCOME = "outcome"
DECIDE, MOVE = "decide", "move"
"""The phase of a simultaneous decision kept hidden until the moderator reveals it (the PD and
Public Good moves, §2), and the kind of its utterance."""
HIDDEN: frozenset[int] = frozenset()
"""Seen by no player: kept for the record (seed-004 §2: `visible_to="Moderator"`)."""


def seat_name(player: int) -> str:
    """A seat as MAgIC names it: "Player 1" for seat 0 (§2)."""
    return f"Player {player + 1}"


def moderator(text: str, visible_to: frozenset[int] | None = None) -> Event:
    return Event(MODERATOR, {"text": text}, visible_to)


def utterance(
    kind: str,
    player: int,
    text: str,
    phase: str,
    round: int,
    visible_to: frozenset[int] | None = None,
    **fields: Any,
) -> Event:
    return Event(
        kind, {"player": player, "text": text, "phase": phase, "round": round, **fields}, visible_to
    )
