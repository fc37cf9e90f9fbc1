"""The fenced blocks of a docs page, and the files a guide writes (`# file: PATH` blocks): the
guides' tests run them, and other tests build a guide's package from them (the Ray executor's
plugin test), so the package tested is the one the guide shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDES = ROOT / "docs" / "guides"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
FILE = re.compile(r"^(?:#|\{#) file: (\S+?)(?: #\})?\n")


def blocks(page: Path) -> list[tuple[str, str]]:
    """(language, code) of each fenced block, the code preceded by blank lines so that a
    traceback names the block's line in the page."""
    text = page.read_text(encoding="utf-8")
    return [(m[1], "\n" * text.count("\n", 0, m.start(2)) + m[2]) for m in BLOCK.finditer(text)]


def write_files(page: Path, folder: Path) -> list[Path]:
    """Write every `# file: PATH` block of a guide under `folder`; the paths written."""
    written = []
    for _, code in blocks(page):
        named = FILE.match(code.lstrip("\n"))
        if named:
            target = folder / named[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code.lstrip("\n")[named.end() :], encoding="utf-8")
            written.append(target)
    return written


def install(package: Path, site: Path) -> None:
    """Install a guide's package (not editable, no dependencies) into the folder `site`, as
    `pip install` would into an environment, without touching the shared one."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--target", str(site), str(package.resolve())],
        check=True,
    )  # fmt: skip
