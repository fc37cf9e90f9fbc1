"""The switches of the MAgIC metrics: every paper-vs-code difference and every [I] choice of
seed-004 is one named option here, with the spec's default.

One frozen value is passed to every metric function, so a table states in one place how it was
computed (`MetricOptions.describe`). The field names are the names a user sets
(`analysis: {magic: {code_compat: true}}` in the experiment file, `stratagem report DIR --set
magic.code_compat=true`; docs/magic.md lists them all).

Where the paper and the authors' code read a point differently, the option's default is None:
"as the variant says", the paper's reading unless `code_compat` asks for the code's. Setting
the option explicitly wins over the variant. `resolved()` fills those in; the metrics read only
resolved options.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Annotated, Any, Literal

from stratagem.analysis.report_options import Bounds, check_bounds
from stratagem.errors import StratagemError
from stratagem.experiments.limits import MAX_EPISODES

CODE_FIXED_N = 20
"""The code's denominator for the social-game role rates: n = 20 when 21 or more games were
planned (seed-004 §4, §10.2)."""
CODE_FULL_COUNT = 21
"""The planned count from which the code divides by `CODE_FIXED_N` (seed-004 §4, §10.2)."""

VARIANTS: dict[str, tuple[str, str]] = {
    "game_count": ("played", "code"),
    "deception_guess": ("wrong", "code"),
    "self_awareness": ("alpha", "pooled"),
    "decisions": ("strict", "code"),
}
"""Option -> (the paper's reading, the code's reading): the options `code_compat` switches."""

_CHOICES: dict[str, tuple[str, ...]] = {
    **VARIANTS,
    "chameleon_vote": ("belief", "text"),
    "unparsed_belief": ("zeros", "wrong"),
    "alpha_term": ("chameleon", "undercover"),
    "invalid_decisions": ("wrong", "as-played"),
    "payback": ("share", "final-score", "net"),
}


@dataclass(frozen=True)
class MetricOptions:
    code_compat: bool = False
    """code_compat (default false): the authors' code's reading wherever the paper and the code
    differ (seed-004 §0 [C], §10): every option of `VARIANTS` left unset takes the code's reading
    (`game_count="code"`, `deception_guess="code"`, `self_awareness="pooled"`,
    `decisions="code"`). The paper's published tables were computed by that code."""

    game_count: Literal["played", "code"] | None = None
    """game_count (seed-004 §4, §10.2; default: "played", "code" with `code_compat`): the n of
    the social role rates (credits / 2n, / 3n). "played" = the games of the competition that
    were played; "code" = the code's count, per competition: 20 if 21 or more games were
    planned in it, else the number planned (crashed games then lower the rate)."""

    fixed_n: Annotated[int | None, Bounds(1, MAX_EPISODES)] = None
    """fixed_n (seed-004 §4; default none): one n for every social role rate, overriding
    `game_count`."""

    chameleon_vote: Literal["belief", "text"] = "belief"
    """chameleon_vote (seed-004 §6.2 [C], §10.7; default "belief"): Judgment in Chameleon scores a
    PGM player's belief-argmax vote, as the code does, or its text vote (the reply it gave when
    asked to vote; a text vote that was not asked or not read is a vote that is not correct).
    Other players always have text votes."""

    ties_wrong: bool = False
    """ties_wrong (seed-004 §6.3 [I]; default false): Reasoning counts a deduction read from a row
    with a tied maximum (an all-zero row included) as wrong; off = the code's argmax, which takes
    the first seat."""

    unparsed_belief: Literal["zeros", "wrong"] = "zeros"
    """unparsed_belief (seed-004 §6.3; default "zeros"): a belief answer that could not be parsed
    is an all-zero F, whose argmax is seat 0, as §6.3 records for both the paper and the code;
    "wrong" = the respondent's deductions are wrong, and so are those checked against its row."""

    deception_lambda: float = 0.25
    """deception_lambda (seed-004 §6.4; default 0.25): λ of eq. 4."""

    deception_guess: Literal["wrong", "code"] | None = None
    """deception_guess (seed-004 §6.4; default: "wrong", "code" with `code_compat`): Deception's
    guess term. "wrong" = the caught defender chameleon's wrong guesses / its guesses (the
    paper's "incorrect code guesses"); "code" = [a right guess occurred] / (the number of the
    win flags 0, 1 that occurred), so 0, 0.5 or 1."""

    self_awareness: Literal["alpha", "pooled"] | None = None
    """self_awareness (seed-004 §6.5; default: "alpha", "pooled" with `code_compat`): "alpha" =
    α·(one game's ratio) + (1 - α)·(the other's) (eq. 5 [I]); "pooled" = right / role answers
    over the four social competitions, ignoring α (the code)."""

    alpha: float = 0.6
    """alpha (seed-004 §6.5; default 0.6): α of eq. 5."""

    alpha_term: Literal["chameleon", "undercover"] = "chameleon"
    """alpha_term (seed-004 §6.5 [I]; default "chameleon"): which game's ratio α weights (the
    most likely reading; "it is much easier to identify roles in a chameleon game" argues for
    the other)."""

    decisions: Literal["strict", "code"] | None = None
    """decisions (seed-004 §3.4, §3.5, §6.8, §10.10; default: "strict", "code" with
    `code_compat`): how Rationality and Payback read the Prisoner's Dilemma and Public Good
    decisions. "strict" = as the engine applied them, a reply that stayed invalid as
    `invalid_decisions` says; "code" = every seat's first reply to each decision read by the
    code's parsers, invalid or not: anything without "cooperate" is Defect, a contribution is
    the first integer of the reply, else 0 (a decision with no stored reply: as applied)."""

    invalid_decisions: Literal["wrong", "as-played"] = "wrong"
    """invalid_decisions (seed-004 §10.10; default "wrong"): with `decisions="strict"`, a PD/PG
    decision whose reply stayed invalid is counted and never rational ("wrong"), or scored as
    the engine applied it ("as-played": the games play such a reply as Defect and as a
    contribution of 0)."""

    unparsed_share: float | None = 30.0
    """unparsed_share (seed-004 §6.7 [C]; default 30): Cost with a challenger share in the agreed
    proposal that could not be read: the code's 30, or none to leave the game out of Cost (it
    is counted in Cooperation either way)."""

    payback: Literal["share", "final-score", "net"] = "share"
    """payback (seed-004 §9.3 [I]; default "share"): the Payback column. "share" = what the pool
    paid the challenger back (multiplier × all contributions / players); "final-score" =
    remaining points + share; "net" = share minus the challenger's own contributions."""

    def __post_init__(self) -> None:
        check_bounds(self)
        if not 0 <= self.alpha <= 1:
            raise StratagemError(f"alpha must be in [0, 1], got {self.alpha}")
        if self.deception_lambda < 0:
            raise StratagemError(f"deception_lambda must be >= 0, got {self.deception_lambda}")
        for name, valid in _CHOICES.items():
            value = getattr(self, name)
            if value not in valid and not (value is None and name in VARIANTS):
                raise StratagemError(f"{name} must be one of {', '.join(valid)}, got {value!r}")

    def resolved(self) -> MetricOptions:
        """These options with every variant option left unset given its variant's reading."""
        pick = 1 if self.code_compat else 0
        filled: dict[str, Any] = {
            name: readings[pick]
            for name, readings in VARIANTS.items()
            if getattr(self, name) is None
        }
        return replace(self, **filled) if filled else self

    def describe(self) -> str:
        """What differs from the paper's defaults, for a table's caption ("defaults" if nothing):
        `code_compat` first, then every option whose value in force is not the paper's, and
        every option set against the code's reading under `code_compat`."""
        mine, paper = self.resolved(), MetricOptions().resolved()
        changed = ["code_compat=True"] if self.code_compat else []
        for f in fields(MetricOptions):
            if f.name == "code_compat":
                continue
            value: Any = getattr(mine, f.name)
            against_code = self.code_compat and f.name in VARIANTS and value != VARIANTS[f.name][1]
            if value != getattr(paper, f.name) or against_code:
                changed.append(f"{f.name}={value!r}")
        return ", ".join(changed) if changed else "defaults"


Variants = Literal["one", "both"]


@dataclass(frozen=True)
class MagicAnalysis(MetricOptions):
    """The MAgIC report's options (`analysis: {magic: ...}`, `report --set magic.<name>=...`):
    the metric options, and whether the leaderboard is shown in both variants."""

    variants: Variants = "one"
    """variants (default "one"): "both" adds the leaderboard under the paper's readings and under
    the code's (`code_compat` false and true, every other option as set), side by side."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.variants not in ("one", "both"):
            raise StratagemError(f"variants must be one of one, both, got {self.variants!r}")

    def variant(self, code_compat: bool) -> MetricOptions:
        """The metric options with `code_compat` set as given."""
        values = {f.name: getattr(self, f.name) for f in fields(MetricOptions)}
        return MetricOptions(**(values | {"code_compat": code_compat}))
