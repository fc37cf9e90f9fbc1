"""The browser viewer: one read-only data layer over results directories (`web.data`), which the
local server and the static export both serve, so the two cannot drift; the pages; and the game
views registered per game family. Nothing here writes to a store: browsing must never change a
result, and it must work while a run is writing to the same store.
"""
