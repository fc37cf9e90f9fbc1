"""The [A] choices of the ToM metrics (seed-002 §12 points 5–8), in one place.

The paper leaves normalisation, inclusion rules, bootstrap and the utility fit's selection
open; each is a named option here with the spec's default, so a report can state (and a
sensitivity run can flip) every choice it made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Selection = Literal["train", "inner_cv"]


@dataclass(frozen=True)
class TomOptions:
    """Every open choice of §4–§7, defaults as the spec recommends."""

    epsilon: float = 1e-6
    """§4: smoothing added to every 0–10 score before normalising to a distribution."""
    epsilons: tuple[float, ...] = (1e-6, 0.5, 1.0)
    """§4: the ε values of the sensitivity report."""
    include_baseline: bool = False
    """§10/§12.3: whether the V0 baseline's proposals and decisions also feed §5/§6 (default:
    focal seat only, as §5 [A] and §6 [A] say)."""
    bootstrap: int = 2000
    """§5: episode-level bootstrap replicates (B = 2000)."""
    level: float = 0.90
    """§5: the percentile interval's coverage (90%)."""
    seed: int = 0
    """Seed of every resampling, so intervals are reproducible."""
    folds: int = 3
    """§6: episode-wise GroupKFold splits."""
    C: float = 1.0
    """§6: inverse L2 strength of the logistic fit (sklearn's default 1; also run 1e6)."""
    selection: Selection = "train"
    """§6/§12.8: grid point chosen by training log-likelihood ("train") or by inner
    GroupKFold log-loss ("inner_cv")."""
    threshold: float = 0.5
    """§6: accept when P(y=1) >= threshold, for macro-F1."""
    valid_only: bool = True
    """§5 [A]: only proposals delivered to the opponent. `TomGame.proposals` holds delivered
    proposals only (invalid attempts are counted in `SeatCounts`), so this is always met; the
    option records the choice."""
    skip_empty: bool = True
    """§5: leave out empty pass-proposals (nothing offered, nothing requested, §2.6 [A]) from
    the scatter: they sit at (0, 0) and would pull m and r toward any line through the origin.
    They still count as proposals for §7's rates."""


DEFAULTS = TomOptions()
"""The spec's defaults (a frozen, shared default argument)."""
