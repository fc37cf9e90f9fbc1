"""The switches of the MAgIC metrics: every paper-vs-code difference and every [I] choice of
seed-004 is one named option here, with the spec's default.

One frozen value is passed to every metric function, so a table states in one place how it was
computed (`MetricOptions.describe`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

from stratagem.errors import StratagemError

CODE_FIXED_N = 20
"""The code's denominator for the social-game role rates: n = 20 when num_of_game >= 21
(seed-004 §4, §10.2)."""


@dataclass(frozen=True)
class MetricOptions:
    fixed_n: int | None = None
    """Social role win rates divide by 2n / 3n with this n (the code's `CODE_FIXED_N`) instead
    of the number of games actually played (seed-004 §4, §10.2: with n fixed, crashed games
    silently lower the rates). Default off."""

    chameleon_vote: Literal["belief", "text"] = "belief"
    """Judgment in Chameleon scores a PGM player's belief-argmax vote, as the code does
    (seed-004 §6.2, §10.7), or its text vote. Other players always have text votes."""

    ties_wrong: bool = False
    """Reasoning: an argmax over a row with a tied maximum (an all-zero row included) makes the
    deduction wrong [I]; off = the code's argmax, which takes the first seat (seed-004 §6.3)."""

    unparsed_belief: Literal["wrong", "zeros"] = "wrong"
    """Reasoning with a belief answer that could not be parsed: "wrong" = the respondent's
    deductions are wrong and a reference that is missing makes the deductions checked against it
    wrong (seed-004 §10.10); "zeros" = read it as all "no change", as the code's parser does."""

    deception_lambda: float = 0.25
    """λ of eq. 4 (seed-004 §6.4)."""

    magic_code_compat: bool = False
    """Use the authors' code instead of the paper where they differ: Deception's guess term
    counts *right* guesses over *distinct* win flags (so it is 0, 0.5 or 1, seed-004 §6.4), and
    Self-awareness pools the ratio over the four social competitions, ignoring α (§6.5)."""

    alpha: float = 0.6
    """α of eq. 5 (seed-004 §6.5 [I]): S_self = α·(weighted term) + (1 - α)·(other term)."""

    alpha_term: Literal["chameleon", "undercover"] = "chameleon"
    """Which term α weights (seed-004 §6.5: the most likely reading weights Chameleon; "it is much
    easier to identify roles in a chameleon game" argues for the other)."""

    invalid_decisions: Literal["wrong", "as-played"] = "wrong"
    """Rationality with a PD/PG decision whose reply stayed invalid: "wrong" = counted, never
    rational (seed-004 §10.10); "as-played" = scored as the engine applied it (the code's lenient
    parsing: garbage is Defect and an unparsable contribution 0, both rational, §10.10)."""

    unparsed_share: float | None = 30.0
    """Cost with a challenger share in the agreed proposal that could not be read: the code's
    30 (seed-004 §6.7 [C]), or None to leave the game out of Cost (it is counted either way)."""

    payback: Literal["share", "final-score", "net"] = "share"
    """The §9.3 Payback column [I]: "share" = what the pool paid the challenger back
    (multiplier × all contributions / players); "final-score" = remaining points + share;
    "net" = share minus the challenger's own contributions."""

    def __post_init__(self) -> None:
        if self.fixed_n is not None and (isinstance(self.fixed_n, bool) or self.fixed_n < 1):
            raise StratagemError(f"fixed_n must be a positive integer or None, got {self.fixed_n}")
        if not 0 <= self.alpha <= 1:
            raise StratagemError(f"alpha must be in [0, 1], got {self.alpha}")
        if self.deception_lambda < 0:
            raise StratagemError(f"deception_lambda must be >= 0, got {self.deception_lambda}")
        choices = {
            "chameleon_vote": ("belief", "text"),
            "unparsed_belief": ("wrong", "zeros"),
            "alpha_term": ("chameleon", "undercover"),
            "invalid_decisions": ("wrong", "as-played"),
            "payback": ("share", "final-score", "net"),
        }
        for name, valid in choices.items():
            value = getattr(self, name)
            if value not in valid:
                raise StratagemError(f"{name} must be one of {', '.join(valid)}, got {value!r}")

    def describe(self) -> str:
        """The options that differ from the defaults, for a table's caption ("defaults" if none)."""
        default = MetricOptions()
        changed = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if getattr(self, f.name) != getattr(default, f.name)
        ]
        return ", ".join(changed) if changed else "defaults"
