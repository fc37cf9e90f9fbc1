"""What the package ships besides code: the example experiments and the documentation pages.

They are the repository's `examples/` and `docs/`, linked into the package
(`src/stratagem/examples`, `src/stratagem/docs`) and listed as package data, so a wheel holds the
same files a checkout does and the help's `docs/*.md` names point at pages an install has.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

EXAMPLES = "examples"
DOCS = "docs"


def shipped(name: str) -> Traversable:
    """The shipped folder `name` (EXAMPLES or DOCS) inside the installed package."""
    return files("stratagem") / name


def example_files() -> list[Traversable]:
    """The shipped example experiments, by name."""
    folder = shipped(EXAMPLES)
    if not folder.is_dir():
        return []
    return sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
