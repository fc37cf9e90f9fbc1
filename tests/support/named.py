"""The names the viewer gives the stores it views (issue 36 item 8), for tests that view one."""

from __future__ import annotations

from stratagem.web.data import Sources


def only(sources: Sources) -> str:
    """The name of the one store `sources` views (its folder's name)."""
    (found,) = sources.sources()
    return str(found["id"])
