"""The documentation: the README is a front page that opens with the two commands, the site
builds with warnings as errors (every page in the nav, every link and anchor resolves), every link
of the README resolves, and the references cover the schema and the commands."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from stratagem.cli import main  # noqa: F401  (registers every command)
from stratagem.cli.common import app

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_opens_with_the_two_commands() -> None:
    """The set-up contract: a fresh machine runs these two before anything else."""
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert first_block is not None and text.index("```bash") < text.index("\n## ")
    commands = [line.split("#")[0].strip() for line in first_block[1].splitlines()]
    assert commands == ["make demo", "make test"]


def test_the_readme_is_a_front_page_whose_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 120
    targets = LINK.findall(text)
    assert len(targets) >= 10
    for target in targets:
        path = target.split("#")[0]
        assert not path.startswith("http"), target  # nothing fetched to read the README
        assert (ROOT / path).exists(), f"README.md links to {target}, which does not exist"


def test_every_docs_page_is_in_the_site() -> None:
    """mkdocs warns about pages left out of the nav only at info level: checked here."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        assert str(page.relative_to(DOCS)) in nav, f"{page} is not in mkdocs.yml's nav"


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs not installed")
def test_the_site_builds_strict(tmp_path: Path) -> None:
    """`mkdocs build --strict`: a broken link, a missing anchor or a page out of the nav fails."""
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert (tmp_path / "site" / "guides" / "new-game" / "index.html").exists()
    # No page loads anything from elsewhere: the site reads offline.
    for page in (tmp_path / "site").rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert not re.search(r"<(script|link)[^>]+(src|href)=\"https?://", html), page


def test_the_configuration_reference_is_what_the_schema_writes() -> None:
    script = ROOT / "scripts" / "config_reference.py"
    spec = importlib.util.spec_from_file_location("config_reference", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert page == module.page(), "run: .venv/bin/python scripts/config_reference.py"


def test_every_command_is_in_the_command_line_page() -> None:
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    commands = list(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert len(commands) >= 10
    for name in commands:
        assert f"stratagem {name}" in page, f"`stratagem {name}` is not in docs/cli.md"
