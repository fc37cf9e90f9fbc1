"""Every choice of the ToM metrics (seed-002 §3.2–§7) as a named option, in one place.

Where the spec decides, the default is the spec's; where it leaves a reading open (§12.4–§12.8)
or marks its own choice [A], the default is stratagem's, named as such. A report states every
option that differs from its default, so a sensitivity run can flip any choice. The fields are
the user-facing names (`stratagem report DIR --set tom.epsilon=0.5`, or `analysis: {tom:
{epsilon: 0.5}}` in the experiment file; docs/tom.md lists them all), and the values are checked
here, one line naming the option.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal, get_args

from stratagem.agents.tom.scores import Rounding, ScoreReading
from stratagem.analysis.report_options import Bounds, check_bounds
from stratagem.errors import StratagemError
from stratagem.experiments.limits import MAX_BOOTSTRAP, MAX_FOLDS, MAX_OPTION_ITEMS, MAX_SEED

Selection = Literal["train", "inner_cv"]
F1Classes = Literal["both", "present"]


@dataclass(frozen=True)
class TomOptions:
    """Every choice of §3.2–§7; each field's docstring names its spec section and default."""

    epsilon: float = 1e-6
    """§4 [A], default 1e-6 (the spec's): smoothing added to every 0–10 score before the
    reports are normalised to distributions for the KL."""
    epsilons: Annotated[tuple[float, ...], Bounds(1, MAX_OPTION_ITEMS)] = (1e-6, 0.5, 1.0)
    """§4 [A], default (1e-6, 0.5, 1) (the spec's): the ε values of the sensitivity table."""
    include_baseline: bool = False
    """§5 [A], §6 [A], §12.3, default False (the spec's): whether the V0 baseline's proposals
    and decisions also feed §5 and §6 (False: the focal seat's only)."""
    skip_empty: bool = False
    """§2.6, §5, §6, §7, default False (the spec's): leave out empty proposals (nothing
    offered, nothing requested) everywhere: the §5 scatter, the §6 decisions and §7's
    acceptance rate. An empty proposal is valid and delivered (§2.6), and §5 keeps every valid
    proposal, §6 every proposal shown to the decision maker, §7 divides by valid proposals."""
    bootstrap: Annotated[int, Bounds(1, MAX_BOOTSTRAP)] = 2000
    """§5 [P], default 2000 (the paper's B): bootstrap replicates, each resampling all the
    (model, group)'s games with replacement."""
    level: float = 0.90
    """§5 [P], default 0.90 (the paper's): the percentile interval's coverage."""
    seed: Annotated[int, Bounds(0, MAX_SEED)] = 0
    """Not in the spec (stratagem's), default 0: the seed of every resampling, so intervals
    are reproducible."""
    folds: Annotated[int, Bounds(2, MAX_FOLDS)] = 3
    """§6 [P], default 3 (the paper's): episode-wise GroupKFold splits."""
    C: float = 1.0
    """§6 [A], default 1 (the spec's; it also asks for 1e6): inverse L2 strength of the
    logistic fit, sklearn's `C`."""
    selection: Selection = "train"
    """§6 [A], §12.8 (open), default "train" (stratagem's): the grid point with the highest
    training log-likelihood ("train") or the lowest mean inner GroupKFold log-loss
    ("inner_cv")."""
    refine: bool = False
    """§6, default False (the spec's): after the grid search, refine the utility parameters
    off the grid with L-BFGS-B (False: ρ, γ, κ, w1, w2 stay on the grid, and β and b come from
    LogisticRegression(lbfgs) at the chosen grid point, as §6 describes)."""
    threshold: float = 0.5
    """§6 [A], default 0.5 (the spec's): accept when P(y=1) >= threshold, for the macro-F1."""
    f1_classes: F1Classes = "both"
    """§6 [A], §12.8 (open for a fold with one class), default "both" (stratagem's): the
    macro-F1 averages the F1 of the accept class and the reject class in every fold, as §6
    words it, a class absent from both the fold's truth and its predictions scoring 0 (0/0), so
    a one-class fold predicted right scores 0.5. "present" averages only the classes present
    (sklearn's default), giving that fold 1.0. "both" is the default because §6 names both
    classes, and a fold with one class shows nothing about separating them."""
    score_rounding: Rounding = "half_even"
    """§3.2 [A], §12.4 (open), default "half_even" (stratagem's, as its agent reads): how a
    fractional score in a stored report becomes whole: ties to even (6.5 -> 6, 7.5 -> 8),
    "half_up" (6.5 -> 7) or "down" (7.9 -> 7). Stratagem's own agent stores whole scores, so
    this reads reports imported from other tools."""
    string_scores: bool = True
    """§3.2 [A], §12.4 (open), default True (stratagem's, as its agent reads): a score written
    as a string ("7") is read as the number; False: it is unreadable and scores 0."""

    def __post_init__(self) -> None:
        _positive_float("epsilon", self.epsilon)
        if not isinstance(self.epsilons, tuple) or not self.epsilons:
            raise StratagemError(
                f"epsilons must be a non-empty list of numbers, got {self.epsilons!r}"
            )
        for e in self.epsilons:
            _positive_float("epsilons", e)
        check_bounds(self)
        for name in ("include_baseline", "skip_empty", "refine", "string_scores"):
            if not isinstance(getattr(self, name), bool):
                raise StratagemError(f"{name} must be true or false, got {getattr(self, name)!r}")
        _number("level", self.level)
        if not 0 < self.level < 1:
            raise StratagemError(f"level must be strictly between 0 and 1, got {self.level!r}")
        _positive_float("C", self.C)
        _number("threshold", self.threshold)
        if not 0 < self.threshold < 1:
            raise StratagemError(
                f"threshold must be strictly between 0 and 1, got {self.threshold!r}"
            )
        choices = {"selection": Selection, "f1_classes": F1Classes, "score_rounding": Rounding}
        for name, kind in choices.items():
            valid = get_args(kind)
            if getattr(self, name) not in valid:
                raise StratagemError(
                    f"{name} must be one of {', '.join(valid)}, got {getattr(self, name)!r}"
                )

    @property
    def reading(self) -> ScoreReading:
        """How stored scores are read (§3.2 repairs, shared with the agent)."""
        return ScoreReading(self.score_rounding, self.string_scores)


def _number(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise StratagemError(f"{name} must be a finite number, got {value!r}")


def _positive_float(name: str, value: object) -> None:
    _number(name, value)
    if isinstance(value, int | float) and value <= 0:
        raise StratagemError(f"{name} must be positive, got {value!r}")


DEFAULTS = TomOptions()
"""The defaults (a frozen, shared default argument)."""
