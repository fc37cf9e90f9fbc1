"""Stable ids: the same spec always gets the same id, so a re-run can recognise finished work."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def stable_id(spec: Any, length: int = 16) -> str:
    """A short hex digest of the canonical JSON of `spec` (keys sorted, no whitespace)."""
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:length]
