"""History renderings: how much of the past a prompt shows, and in what form.

How the past is shown is a factor a study can measure (issue 35: a paper asks how much of an
effect is the prompt's), so it is a setting of the prompts, not of the templates' text:
- "full": every past round, as the framing's `history.j2` tells them (what the studies did);
- "last" k: only the last k rounds reach the templates (`history`), with how many earlier
  ones are left out (`history_omitted`): the same `history.j2` tells fewer rounds;
- "table": a summary instead of a transcript: how often each joint outcome happened so far
  (`outcomes`) and the last round (`last`). A transcript template cannot be read as a table,
  so the framing's `history_table.j2` stands in for its `history.j2` wherever that is
  rendered or included; a framing without one does not offer the view.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import jinja2

from stratagem.errors import StratagemError

if TYPE_CHECKING:
    from stratagem.agents.prompts import PastRound

HistoryKind = Literal["full", "last", "table"]

HISTORY = "history.j2"
"""The summary template of a framing, which a view may replace."""


@dataclass(frozen=True)
class HistoryView:
    """One way of showing the past rounds (see the module docstring)."""

    kind: HistoryKind = "full"
    last: int | None = None
    """How many rounds the "last" view shows (only it has one)."""

    def __post_init__(self) -> None:
        if self.kind == "last" and (self.last is None or self.last < 1):
            raise StratagemError(f"history: 'last' needs a number of rounds >= 1, got {self.last}")
        if self.kind != "last" and self.last is not None:
            raise StratagemError(f"history: only 'last' takes a number of rounds ({self.kind})")

    @property
    def template(self) -> str:
        """The file that tells the history in this view."""
        return "history_table.j2" if self.kind == "table" else HISTORY

    def shown(self, rounds: list[PastRound]) -> list[PastRound]:
        """The past rounds the templates see as `history`."""
        if self.kind == "last" and self.last is not None:
            return rounds[-self.last :]
        return rounds

    def __str__(self) -> str:
        return f"last {self.last}" if self.kind == "last" else self.kind


FULL = HistoryView()


@dataclass(frozen=True)
class JointOutcome:
    """One joint outcome of the stage game from this player's seat, with how often it
    happened: a row of the "table" view."""

    own: str
    opponent: str
    count: int
    own_payoff: float
    opponent_payoff: float


def joint_outcomes(rounds: Sequence[PastRound], context: dict[str, Any]) -> list[JointOutcome]:
    """Every joint outcome in label order (this player's action first), counted over the valid
    past rounds; rounds a player forfeited are not any outcome (`history_forfeited` counts
    them)."""
    counts = Counter((r.own, r.opponent) for r in rounds if r.valid)
    labels, opponent_labels = context["labels"], context["opponent_labels"]
    u, v = context["u"], context["v"]
    return [
        JointOutcome(a, b, counts[(a, b)], u[i][j], v[i][j])
        for i, a in enumerate(labels)
        for j, b in enumerate(opponent_labels)
    ]


def view_context(view: HistoryView, rounds: list[PastRound], context: dict[str, Any]) -> None:
    """Add what the templates of `view` read to `context`: `history` (the rounds shown),
    `last`, `history_view`, `history_last`, `history_omitted`, and in the table view
    `outcomes` and `history_forfeited`."""
    shown = view.shown(rounds)
    context.update(
        history=shown,
        last=rounds[-1] if rounds else None,
        history_view=view.kind,
        history_last=view.last,
        history_omitted=len(rounds) - len(shown),
    )
    if view.kind == "table":
        context["outcomes"] = joint_outcomes(rounds, context)
        context["history_forfeited"] = sum(not r.valid for r in rounds)


class ViewLoader(jinja2.BaseLoader):
    """Serves `<folder>/<template>` where a template asks for `<folder>/history.j2`, so that a
    framing's decision prompt, which includes its history by name, includes the view's."""

    def __init__(self, inner: jinja2.BaseLoader, template: str) -> None:
        self.inner = inner
        self.template = template

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Any]:
        folder, sep, name = template.rpartition("/")
        if sep and name == HISTORY:
            template = f"{folder}/{self.template}"
        return self.inner.get_source(environment, template)

    def list_templates(self) -> list[str]:
        return self.inner.list_templates()
