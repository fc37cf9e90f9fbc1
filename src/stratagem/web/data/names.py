"""The name each viewed store goes by in the viewer's links (issue 36 item 8).

A link must open the same episode whatever order the directories were given in, so a store is
named by where it is, not by its position: its folder's base name (`results`), and where two
stores share one, as many parent folders as tell them apart (`a/results`, `b/results`); stores
in one folder add their file's name (`results/other.db`). A name is worked out from the set of
paths alone, so `view A B` and `view B A` name each store alike. A name may hold `/`: the pages
URL-encode it as one segment of a route and of an API path (the server's routes take it whole,
the segments after it being hex or fixed), and an export names its folders by its hex.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path


def source_names(stores: Sequence[Path]) -> list[str]:
    """Each store file's name, in the order given; unique, and independent of that order."""
    folders = [_parts(p) for p in stores]
    depth = [1] * len(stores)
    names = [_name(f, d, p) for f, d, p in zip(folders, depth, stores, strict=True)]
    while True:
        groups: dict[str, list[int]] = defaultdict(list)
        for k, name in enumerate(names):
            groups[name].append(k)
        clashes = [ks for ks in groups.values() if len(ks) > 1]
        if not clashes:
            return names
        for ks in clashes:
            if all(depth[k] > len(folders[k]) for k in ks):
                # Only two spellings of one file are left: numbered by their full paths' order.
                return _numbered(names, stores)
            if all(depth[k] >= len(folders[k]) for k in ks):  # one folder: add the file's name
                for k in ks:
                    names[k] = "/".join([*folders[k], stores[k].name])
                    depth[k] = len(folders[k]) + 1
                continue
            for k in ks:
                depth[k] = min(depth[k] + 1, len(folders[k]))
                names[k] = _name(folders[k], depth[k], stores[k])


def _parts(store: Path) -> list[str]:
    """The store's folder as names from the root (lexically absolute: a link named through a
    symlink keeps the link's name)."""
    folder = Path(os.path.abspath(store)).parent
    return [p for p in folder.parts if p not in (folder.anchor, "")]


def _name(folders: list[str], depth: int, store: Path) -> str:
    """The last `depth` folder names; the file's name for a store in the root folder."""
    return "/".join(folders[-depth:]) if folders else store.name


def _numbered(names: list[str], stores: Sequence[Path]) -> list[str]:
    seen: dict[str, list[int]] = defaultdict(list)
    for k, name in enumerate(names):
        seen[name].append(k)
    out = list(names)
    for ks in seen.values():
        if len(ks) > 1:
            ordered = sorted(ks, key=lambda k: str(stores[k]))
            for n, k in enumerate(ordered[1:], start=2):
                out[k] = f"{names[k]}#{n}"
    return out
