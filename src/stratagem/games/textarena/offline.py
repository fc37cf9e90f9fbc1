"""TextArena's data downloads, refused in one line before a game starts (issue 33).

Many TextArena environments call `nltk.download(...)` when first made (word lists, a tagger):
offline, that printed eight lines of download errors and then failed on a line of asterisks, once
for each player count tried. Here, while an environment is made, `nltk.download` only looks for
the data where NLTK looks (`nltk.data.path`): what is there is used as it is, and what is missing
is `MissingData`, naming the environment and the data and how to get it. Nothing is fetched.
"""

from __future__ import annotations

import contextlib
import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stratagem.errors import StratagemError

_NLTK_RESOURCE = re.compile(
    r"Resource\s+(?:\x1b\[[0-9;]*m)?([\w./-]+?)(?:\x1b\[[0-9;]*m)?\s+not found"
)
"""The resource NLTK's LookupError names (in colour: "Resource \x1b[93mwords\x1b[0m not found")."""


class MissingData(StratagemError):
    """An environment needs data that is not installed: no player count can change that."""


def missing(env_id: str, package: str) -> MissingData:
    return MissingData(
        f"game 'textarena:{env_id}' needs the NLTK data '{package}', which is not installed "
        f"and is not downloaded while playing (install it: python -m nltk.downloader {package})"
    )


def _installed(nltk: Any, package: str) -> bool:
    """Whether NLTK data `package` lies in any of NLTK's folders (`corpora/words`, or zipped)."""
    for folder in map(Path, nltk.data.path):
        with contextlib.suppress(OSError):
            for kind in folder.iterdir():
                if (kind / package).exists() or (kind / f"{package}.zip").exists():
                    return True
    return False


@contextlib.contextmanager
def no_downloads(env_id: str) -> Iterator[None]:
    """While an environment is made: `nltk.download` checks instead of fetching (module
    docstring), and NLTK's own lookup error for data never downloaded says so in one line."""
    try:
        nltk: Any = importlib.import_module("nltk")
    except ImportError:  # an environment that needs NLTK fails on its own import
        yield
        return

    def check(info_or_id: Any = None, *args: Any, **kwargs: Any) -> bool:
        packages = [info_or_id] if isinstance(info_or_id, str) else list(info_or_id or [])
        for package in packages:
            if not _installed(nltk, str(package)):
                raise missing(env_id, str(package))
        return True

    original = nltk.download
    nltk.download = check
    try:
        yield
    except LookupError as exc:
        found = _NLTK_RESOURCE.search(str(exc))
        if found is None:
            raise
        raise missing(env_id, found.group(1).rsplit("/", 1)[-1]) from None
    finally:
        nltk.download = original
