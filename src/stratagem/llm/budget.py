"""Spending caps: stop making new model calls once a USD or token budget is spent.

One `Budget` is shared by every client of a run. It is checked before each new (non-cached) call
and charged after it, so calls already in flight finish and the overshoot is at most what they
cost; cached replays are free and never refused, so a stopped run can always be replayed.
"""

from __future__ import annotations

from stratagem.llm.errors import BudgetExceeded


class Budget:
    """Caps in USD and tokens (None: no cap); `spent_*` lets a resumed run start where it was."""

    def __init__(
        self,
        max_usd: float | None = None,
        max_tokens: int | None = None,
        *,
        spent_usd: float = 0.0,
        spent_tokens: int = 0,
    ) -> None:
        if max_usd is not None and max_usd < 0:
            raise ValueError(f"max_usd must not be negative, got {max_usd}")
        if max_tokens is not None and max_tokens < 0:
            raise ValueError(f"max_tokens must not be negative, got {max_tokens}")
        self.max_usd = max_usd
        self.max_tokens = max_tokens
        self.spent_usd = spent_usd
        self.spent_tokens = spent_tokens
        self.calls = 0

    async def admit(self) -> None:
        """`check` as the pipeline asks it before a new call: a budget kept elsewhere (a Ray
        coordinator's) answers over the network, so the pipeline awaits it."""
        self.check()

    def check(self) -> None:
        """Raise `BudgetExceeded` if a cap is reached, saying which and how much was spent."""
        reason = self.reached()
        if reason is not None:
            raise BudgetExceeded(reason)

    def reached(self) -> str | None:
        """Which cap is reached and what was spent against it, or None. Read again once the
        calls in flight have finished, it says what was paid in the end (they are paid too)."""
        over = " (calls already under way when it was reached were paid too)"
        if self.max_usd is not None and self.spent_usd >= self.max_usd:
            return (
                f"budget reached: spent ${self.spent_usd:.4f} of the ${self.max_usd:.4f} USD cap "
                f"(max_usd){over if self.spent_usd > self.max_usd else ''}; no new model calls "
                "are made (cached answers still replay). Raise the cap to continue."
            )
        if self.max_tokens is not None and self.spent_tokens >= self.max_tokens:
            return (
                f"budget reached: used {self.spent_tokens:,} of the {self.max_tokens:,} token cap "
                f"(max_tokens){over if self.spent_tokens > self.max_tokens else ''}; no new model "
                "calls are made (cached answers still replay). Raise the cap to continue."
            )
        return None

    def charge(self, cost: float, tokens: int) -> None:
        """Add one finished call's cost and tokens."""
        self.spent_usd += cost
        self.spent_tokens += tokens
        self.calls += 1

    @property
    def remaining_usd(self) -> float | None:
        return None if self.max_usd is None else max(0.0, self.max_usd - self.spent_usd)

    @property
    def remaining_tokens(self) -> int | None:
        return None if self.max_tokens is None else max(0, self.max_tokens - self.spent_tokens)

    def __repr__(self) -> str:
        return (
            f"Budget(max_usd={self.max_usd}, max_tokens={self.max_tokens}, "
            f"spent_usd={self.spent_usd:.6f}, spent_tokens={self.spent_tokens})"
        )
