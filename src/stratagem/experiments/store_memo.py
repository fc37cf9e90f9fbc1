"""What the result store remembers of the episodes it writes, so a write re-reads no row.

A run writes each episode's steps and model calls one by one. Each write is checked against its
episode's row (still open? how many players, which labels?) and numbered (the next `seq` of its
table), which cost two queries and a JSON decode per write, for facts that do not change while the
episode plays. The store keeps them here while it may trust them: inside one `transaction`, and
while a run defers its commits (the run holds the directory's writer lock, so no other process
writes the file). A write that changes an episode's row forgets that episode; a rollback, and the
start or end of a deferral, forget everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EpisodeFacts:
    """An open episode's row as its writes need it."""

    n_players: int
    labels: list[list[str]] | None
    next_seq: dict[str, int] = field(default_factory=dict)
    """Per table: the next free sequence number, once read."""
