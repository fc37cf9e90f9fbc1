"""Multiple-comparison control across a table: a table of twenty differences shows one at p <
0.05 by chance alone, so every table with more than one test adjusts its p-values and says so
under the table.

With m p-values sorted p_(1) <= ... <= p_(m), the adjusted values, returned in input order:

- **Holm** (default; Holm 1979, Scand. J. Statist. 6:65–70), controls the family-wise error rate
  under any dependence between the tests:
      p̃_(i) = max_{j <= i} min(1, (m - j + 1) · p_(j))
- **Benjamini–Hochberg** (Benjamini & Hochberg 1995, JRSS B 57:289–300), controls the false
  discovery rate for independent or positively dependent tests:
      p̃_(i) = min_{j >= i} min(1, m / j · p_(j))

A missing p-value (a comparison whose method gives none, such as the bootstrap) is left out of
m and stays missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from stratagem.analysis.comparisons import Comparison
from stratagem.errors import StratagemError

Method = Literal["holm", "bh"]

NAMES: dict[str, str] = {"holm": "Holm", "bh": "Benjamini–Hochberg"}
"""How a table names each adjustment."""


def adjust(p_values: Sequence[float | None], method: Method = "holm") -> list[float | None]:
    """The adjusted p-values, in input order (module docstring)."""
    if method not in NAMES:
        raise StratagemError(f"adjustment must be one of {', '.join(NAMES)}, got {method!r}")
    present = [i for i, p in enumerate(p_values) if p is not None]
    values = np.array([p_values[i] for i in present], dtype=np.float64)
    if values.size and (np.any(~np.isfinite(values)) or np.any((values < 0) | (values > 1))):
        raise StratagemError(f"p-values must be numbers from 0 to 1, got {list(p_values)}")
    m = values.size
    out: list[float | None] = [None] * len(p_values)
    if m == 0:
        return out
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    rank = np.arange(1, m + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * ranked))
    else:
        adjusted = np.minimum.accumulate(np.minimum(1.0, m / rank * ranked)[::-1])[::-1]
    for position, value in zip(order, adjusted, strict=True):
        out[present[position]] = float(value)
    return out


def statement(method: Method, m: int) -> str:
    """The sentence under a table: "Holm-adjusted across 6 comparisons." ("" for one test or
    none, where nothing is adjusted)."""
    if m < 2:
        return ""
    what = " (false discovery rate)" if method == "bh" else " (family-wise error rate)"
    return f"p-values {NAMES[method]}-adjusted{what} across {m} comparisons."


def adjust_comparisons(
    comparisons: Sequence[Comparison], method: Method = "holm"
) -> tuple[list[Comparison], str]:
    """Each comparison with its adjusted p-value, and the sentence for under the table."""
    adjusted = adjust([c.p for c in comparisons], method)
    m = sum(p is not None for p in adjusted)
    out = [
        c.adjusted(p, NAMES[method]) if p is not None and m > 1 else c
        for c, p in zip(comparisons, adjusted, strict=True)
    ]
    return out, statement(method, m)
