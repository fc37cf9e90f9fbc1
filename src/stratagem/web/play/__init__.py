"""Browser play (issue 25 item 8): a person takes seats of any game through a page per seat."""

IDLE_SECONDS = 600.0
"""How long a move waits for a page of its seat (a closed tab) before the game is left
unfinished: `stratagem play --web --idle`'s default, and games started from the viewer's."""
