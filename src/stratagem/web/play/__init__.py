"""Browser play (issue 25 item 8): a person takes seats of any game through a page per seat; a
game with no person seated is watched (issue 37 item 5)."""

IDLE_SECONDS = 600.0
"""How long a move waits for a page of its seat (a closed tab) before the game is left
unfinished: `stratagem play --web --idle`'s default, and games started from the viewer's."""
DEFAULT_PACE = 1.0
MAX_PACE = 60.0
"""Seconds of pause after each step of a watched game (`stratagem play --pace`, the viewer's play
page): by default, and at most."""
