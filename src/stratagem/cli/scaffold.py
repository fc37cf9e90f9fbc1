"""`stratagem new game|architecture|study NAME [DIR]`: a plugin package to start from.

The package it writes is installable as written (`pip install -e DIR`) and passes its own tests
right away (conformance checks of `stratagem.testing`, an offline example experiment run through
the command), so a researcher edits working code instead of assembling a package from the docs.
The files are `string.Template` texts shipped as package data under `scaffold_templates/<kind>/`:
`NAME` in a path and `$name`, `$title`, `$dist` in a text become the package's names.
"""

from __future__ import annotations

import importlib.util
import keyword
import re
import string
import sys
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated

import typer

from stratagem import __version__, plugins
from stratagem.cli.common import _say, app, out
from stratagem.errors import StratagemError

KINDS = ("game", "architecture", "study")
TEMPLATES = "scaffold_templates"
SUFFIX = ".tmpl"
"""Templates end with it, so that no tool takes them for code of stratagem's own."""
DOT = "dot-"
"""A template named `dot-gitignore.tmpl` is written as `.gitignore` (package data skips
dotfiles)."""

_NAME = re.compile(r"[a-z][a-z0-9_]{0,29}")


def check_name(name: str) -> None:
    """Refuse a NAME that cannot be the package, its import name and its plugin namespace."""
    if not _NAME.fullmatch(name) or name.endswith("_") or "__" in name:
        raise StratagemError(
            f"new: '{name}' cannot name a package: use a lowercase letter, then lowercase letters, "
            "digits or single underscores (at most 30), e.g. my_game"
        )
    if keyword.iskeyword(name) or name in sys.stdlib_module_names:
        raise StratagemError(f"new: '{name}' is a Python module or keyword; choose another name")
    if name in plugins.RESERVED:
        raise StratagemError(f"new: '{name}' is a namespace of stratagem's own; choose another")
    if importlib.util.find_spec(name) is not None:
        raise StratagemError(
            f"new: a module named '{name}' is already installed here; choose another name "
            f"(or pip uninstall the package that has it)"
        )


def names(name: str) -> dict[str, str]:
    """What the templates are filled with."""
    return {
        "name": name,
        "title": "".join(part.capitalize() for part in name.split("_")),
        "dist": f"stratagem-{name.replace('_', '-')}",
        "stratagem_version": __version__,
    }


def template_files(kind: str) -> list[tuple[str, Traversable]]:
    """The kind's template files by relative path (`src/NAME/game.py.tmpl`), sorted."""
    found: list[tuple[str, Traversable]] = []

    def walk(folder: Traversable, prefix: str) -> None:
        for item in folder.iterdir():
            if item.is_dir():
                walk(item, f"{prefix}{item.name}/")
            elif item.name.endswith(SUFFIX):
                found.append((f"{prefix}{item.name}", item))

    root = files("stratagem.cli") / TEMPLATES / kind
    if root.is_dir():
        walk(root, "")
    return sorted(found, key=lambda pair: pair[0])


def target_path(relative: str, name: str) -> Path:
    """Where a template is written, relative to the package folder."""
    parts = []
    for part in relative.removesuffix(SUFFIX).split("/"):
        part = part.replace("NAME", name)
        parts.append("." + part.removeprefix(DOT) if part.startswith(DOT) else part)
    return Path(*parts)


def write_package(kind: str, name: str, directory: Path) -> list[Path]:
    """Write a `kind` plugin package called `name` into `directory` (missing or empty); returns
    the files written, relative to it."""
    if kind not in KINDS:
        raise StratagemError(f"new: got '{kind}', allowed: {', '.join(KINDS)}")
    check_name(name)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise StratagemError(
            f"new: '{directory}' already exists and is not an empty folder; name another DIR"
        )
    templates = template_files(kind)
    if not templates:
        raise StratagemError(f"new: this install holds no {kind} templates (a damaged install?)")
    values = names(name)
    rendered = []
    for relative, source in templates:
        try:
            text = string.Template(source.read_text(encoding="utf-8")).substitute(values)
        except (KeyError, ValueError) as exc:  # a template of ours that names an unknown value
            raise StratagemError(f"new: template {kind}/{relative} is broken: {exc!r}") from None
        rendered.append((target_path(relative, name), text))
    try:
        for path, text in rendered:
            (directory / path).parent.mkdir(parents=True, exist_ok=True)
            (directory / path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise StratagemError(f"new: cannot write into '{directory}': {exc.strerror}") from None
    return [path for path, _ in rendered]


@app.command()
def new(
    kind: Annotated[
        str, typer.Argument(help="What the package adds: game, architecture or study.")
    ],
    name: Annotated[
        str,
        typer.Argument(help="Its name: the Python package and the plugin namespace (my_game)."),
    ],
    directory: Annotated[
        Path | None,
        typer.Argument(help="The folder to write (missing or empty); default: ./NAME."),
    ] = None,
) -> None:
    """Write a plugin package (pyproject with the entry point, code, prompts, an example
    experiment, tests running stratagem's conformance checks) that passes its own tests once
    installed: pip install -e DIR, then pytest DIR."""
    folder = directory if directory is not None else Path(name)
    written = write_package(kind, name, folder)
    _say(out, f"wrote the {kind} plugin '{name}' ({len(written)} files) to {folder}")
    _say(out, f"next: pip install -e {folder} && pytest {folder}  (then see {folder}/README.md)")
