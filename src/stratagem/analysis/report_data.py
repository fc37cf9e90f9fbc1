"""What one report reads: the experiment, its finished episodes (loaded once), and the facts every
section asks for (models, games, opponents, seats), so no section queries the store on its own.

Study sections receive the same object (`analysis.report_registry`), so the rounds of 10,000
episodes are read once per report, not once per section.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from stratagem.analysis import plots
from stratagem.analysis.episodes import EpisodeData, load_episodes
from stratagem.experiments.store import ExperimentRecord, ResultStore

T = TypeVar("T")

NO_GAMES = "No finished games yet, so there is nothing to show here."

KIND_NAMES: dict[str, str] = {
    "llm": "LLM",
    "strategy": "rule-based",
    "scripted": "scripted",
    "human": "human",
    "unknown": "unknown",
}
"""How a seat's kind reads in prose."""


def listing(values: Iterable[object]) -> str:
    items = [str(v) for v in values]
    return ", ".join(items) if items else "–"


def ordered(values: Iterable[Any]) -> list[Any]:
    """Distinct values, numbers numerically, then text alphabetically."""
    distinct = list(dict.fromkeys(values))
    return sorted(distinct, key=lambda v: plots.order_key(str(v)))


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'s' * (n != 1)}"


@dataclass
class ReportData:
    """One experiment as the report sees it."""

    store: ResultStore
    experiment: ExperimentRecord
    episodes: list[EpisodeData]
    options: dict[str, object] = field(default_factory=dict)
    """Each study's analysis options by study name (`report_registry.resolve_options`)."""
    replicates: list[EpisodeData] = field(default_factory=list)
    """The cells' replicate copies (the file's `replicates:`) where `episodes` leaves them out:
    the study sections' data (`analysis.noise_floor.without_copies`); empty otherwise."""

    @classmethod
    def load(
        cls,
        store: ResultStore,
        experiment: ExperimentRecord,
        options: dict[str, object] | None = None,
    ) -> ReportData:
        return cls(store, experiment, load_episodes(store, experiment.id), options or {})

    def study_options(self, study: str, kind: type[T]) -> T:
        """The options a study's sections are computed with (its defaults when none were set).
        A plugin's study may give its own name (`cards` for `highcard:cards`): its namespace
        depends on how the plugin was found."""
        found = self.options.get(study)
        if not isinstance(found, kind):
            suffix = f":{study}"
            found = next(
                (v for k, v in self.options.items() if k.endswith(suffix) and isinstance(v, kind)),
                None,
            )
        return found if isinstance(found, kind) else kind()

    @functools.cached_property
    def with_rounds(self) -> list[EpisodeData]:
        return [e for e in self.episodes if e.rounds]

    @functools.cached_property
    def status_counts(self) -> dict[str, int]:
        return self.store.status_counts(self.experiment.id)

    @functools.cached_property
    def call_totals(self) -> dict[str, Any]:
        return self.store.call_totals(self.experiment.id)

    @property
    def config(self) -> dict[str, Any]:
        return dict(self.experiment.config or {})

    def models(self) -> list[str]:
        """The models of the LLM seats, seat 0's first."""
        found = [e.model for e in self.episodes if e.llm_first]
        for e in self.episodes:
            found += [s.model or s.name for s in e.seats[1:] if s.kind == "llm"]
        return list(dict.fromkeys(found))

    def games(self) -> list[str]:
        return list(dict.fromkeys(e.record.game for e in self.episodes))

    def agents(self) -> list[str]:
        """Seat 0's LLM agent configurations."""
        return list(dict.fromkeys(e.agent_name for e in self.episodes if e.agent_name))

    def opponents(self) -> dict[str, str]:
        """Seat 1's players (as the spec names them) and their kind, in order of appearance."""
        found: dict[str, str] = {}
        for e in self.episodes:
            if len(e.seats) == 2:
                found.setdefault(e.opponent(), e.opponent_kind())
        return found

    def seat_counts(self) -> list[int]:
        return ordered(len(e.seats) for e in self.episodes)

    def rounds(self) -> list[int]:
        values = []
        for e in self.episodes:
            n = e.spec.get("rounds")
            values.append(int(n) if isinstance(n, int | float) else len(e.rounds))
        return ordered(values)

    def source(self) -> str:
        sources = list(dict.fromkeys(e.record.source for e in self.episodes))
        if not sources:
            return "–"
        return listing(
            "played by stratagem" if s == "stratagem" else f"imported ({s})" for s in sources
        )

    def invalid_totals(self) -> tuple[int, int]:
        """(decisions, invalid) over every deciding seat (not a rule-based strategy)."""
        decisions = invalid = 0
        for e in self.episodes:
            for p, seat in enumerate(e.seats):
                if seat.kind == "strategy":
                    continue
                d, i = e.decisions(p)
                decisions += d
                invalid += i
        return decisions, invalid
