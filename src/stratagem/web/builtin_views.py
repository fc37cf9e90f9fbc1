"""stratagem's own game views, registered as a plugin's are (`web.views.register_view`): the
files under pages/views/, by the game or family each draws, in the order the page loads them.

`kit.js` is not among them: it is the kit every view draws with and the table views register
into, so the page loads it first, as one of its own files (`web.server.PAGES`).
"""

from __future__ import annotations

from stratagem.web.views import BUILTIN_FOLDER, register_view

BUILTIN_VIEWS = (
    ("rounds", "matrix.js"),  # any game that stores round results (repeated matrix games)
    ("chameleon", "social.js"),
    ("undercover", "social.js"),
    ("tradecraft", "tradecraft.js"),
    ("ultimatum", "ultimatum.js"),
    ("public-good", "public_good.js"),
    ("dilemma-talk", "cheap_talk.js"),
    ("cheap-talk", "cheap_talk.js"),
    ("cost-sharing", "cost_sharing.js"),
)
"""(game or family, file): social.js and cheap_talk.js each draw two."""

for _key, _file in BUILTIN_VIEWS:
    register_view(_key, BUILTIN_FOLDER / _file)
