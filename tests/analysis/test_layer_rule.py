"""The layer rule of design.md, checked on the imports: no module imports from a layer above its
own (the report framework in `analysis` finds the studies' sections through its registry, never by
importing `studies`, which sits above it)."""

from __future__ import annotations

import subprocess
import sys

from support.thesis_data import REPO_ROOT

CHECKER = REPO_ROOT.parent / "shared" / "tools" / "layers.py"


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    assert CHECKER.is_file(), f"the layer checker is expected at {CHECKER}"
    done = subprocess.run(
        [sys.executable, str(CHECKER), str(REPO_ROOT / "src" / "stratagem")],
        capture_output=True,
        text=True,
        check=False,
    )
    upward = [line for line in done.stdout.splitlines() if "an arrow running up" in line]
    assert upward == [] and done.returncode == 0
