"""The viewer's one read-only data layer: what the local server answers and the static export
writes, as plain JSON-ready dicts, so the two cannot drift. `Sources` reads the stores,
`Perspective` says whose eyes an episode is seen through."""

from stratagem.web.data.perspective import Perspective
from stratagem.web.data.sources import Sources

__all__ = ["Perspective", "Sources"]
