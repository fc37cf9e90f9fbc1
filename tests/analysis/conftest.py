"""Shared fixtures of the analysis tests: the seed-001 Appendix-A data file."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.thesis_data import appendix_a_path


@pytest.fixture(scope="session")
def appendix_a() -> Path:
    return appendix_a_path()
