"""Where seed-001's Appendix A lies: shared/specs beside the repository root (as CI clones it)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
APPENDIX_A = REPO_ROOT.parent / "shared" / "specs" / "seed-001-appendix-A.csv"
"""seed-001's Appendix A (252 games)."""


def appendix_a_path() -> Path:
    """The path of the Appendix-A CSV; the validation must run, so a missing file fails."""
    if not APPENDIX_A.is_file():
        pytest.fail(
            f"seed-001 Appendix A not found at {APPENDIX_A}: the thesis validation needs "
            "shared/specs/seed-001-appendix-A.csv beside the repository root",
            pytrace=False,
        )
    return APPENDIX_A
