"""The public API (issue 34): every name of `stratagem.__all__` resolves, docs/api.md documents
each public module and names only what exists, and `import stratagem` stays light."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest

import stratagem

ROOT = Path(__file__).resolve().parents[1]
API = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
DIRECTIVE = re.compile(r"^::: ([\w.]+)\n((?:    .*\n)*)", re.MULTILINE)


def documented() -> dict[str, list[str] | None]:
    """docs/api.md's `::: module` blocks: module -> the members it lists (None: all public)."""
    found: dict[str, list[str] | None] = {}
    for match in DIRECTIVE.finditer(API):
        members = re.search(r"^\s+members: \[(.*)\]$", match.group(2), re.MULTILINE)
        found[match.group(1)] = (
            [name.strip() for name in members.group(1).split(",")] if members else None
        )
    return found


def test_every_public_name_resolves() -> None:
    public = {"__version__", "env", "open", "parallel_env", "register", "plugins", "testing"}
    assert set(stratagem.__all__) == public
    for name in stratagem.__all__:
        value = getattr(stratagem, name)
        assert value is not None, name
        if name in {"register", "plugins", "testing"}:
            assert isinstance(value, ModuleType) and value.__name__ == f"stratagem.{name}"
    assert callable(stratagem.env) and callable(stratagem.open) and callable(stratagem.parallel_env)
    assert callable(stratagem.register.game) and callable(stratagem.register.strategy)
    assert stratagem.plugins.GROUP == "stratagem"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = stratagem.no_such_name
    assert {"register", "plugins", "testing", "env"} <= set(dir(stratagem))


def test_the_version_is_the_packages() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert stratagem.__version__ == project["version"] == metadata.version("stratagem")


def test_the_api_page_documents_every_public_module_and_only_what_exists() -> None:
    blocks = documented()
    for name in ("register", "plugins", "testing"):
        assert f"stratagem.{name}" in blocks, f"docs/api.md has no `::: stratagem.{name}`"
    top = blocks["stratagem"]
    assert top is not None
    assert set(top) == set(stratagem.__all__) - {"register", "plugins", "testing"}
    for module_name, members in blocks.items():
        module = importlib.import_module(module_name)
        for member in members or ():
            assert hasattr(module, member), f"docs/api.md: {module_name}.{member} does not exist"
    for kind in ("game", "architecture", "strategy", "provider", "study", "view"):
        assert kind in stratagem.register.__all__
    assert re.search(r"^ +- [^:]+: api\.md$", (ROOT / "mkdocs.yml").read_text(), re.MULTILINE)


def test_import_stratagem_stays_light() -> None:
    """Every command imports stratagem: it must not bring pandas, PettingZoo, the web layer or
    any registry; a public submodule comes on first use, with only what it needs."""
    code = (
        "import json, sys, stratagem\n"
        "first = sorted(sys.modules)\n"
        "stratagem.plugins\n"
        "print(json.dumps([first, sorted(sys.modules)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    first, after_plugins = json.loads(done.stdout)
    ours = [name for name in first if name.startswith("stratagem.")]
    assert ours == [], ours
    for heavy in ("pandas", "numpy", "pettingzoo", "gymnasium", "starlette", "jinja2", "pydantic"):
        assert heavy not in first, heavy
    assert "stratagem.plugins" in after_plugins
    assert not [n for n in after_plugins if n.startswith(("stratagem.web", "stratagem.api"))]
    assert "pandas" not in after_plugins
