"""Stored beliefs as forecasts with outcomes, and the hook through which studies hand them over.

A belief can be scored for calibration only when it is a forecast of something the episode
records: a probability vector over K outcomes (a PGM agent's belief over who is the spy) with
the outcome that happened, or a point guess (a probe answer naming one seat, a report's top
item) that was right or wrong. Each study knows what its beliefs mean and where the truth is
stored, so each study turns its own beliefs into `Forecast`s; `analysis.calibration` scores
them all the same way, and the report's calibration section (`report_calibration`) shows every
study's. A stored belief that is no forecast (a second-order belief whose truth nobody
recorded) is not guessed into one: the study counts it, with its reason, in `ForecastSet.skipped`.

The report (`analysis`) sits below the studies in design.md's layer order, so, as with report
sections (`report_registry`), each study registers an extractor here when its package is
imported, and the report calls every registered extractor.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.report_data import ReportData
from stratagem.errors import StratagemError

SUM_TOLERANCE = 1e-6
"""How far a forecast's probabilities may sum from 1 (float rounding of a softmax row)."""


@dataclass(frozen=True)
class Forecast:
    """One belief as a forecast: who held it (model, agent), in which game, of which kind, and
    either a probability vector with the index of the outcome that happened, or a point guess
    (`probabilities` None) with whether it was right (`outcome` 1) or wrong (0)."""

    episode_id: str
    model: str
    agent: str
    game: str
    kind: str
    """What was believed, e.g. "PGM belief M: who is the spy"; one kind is always scored the
    same way (all probabilistic or all point guesses)."""
    outcome: int
    probabilities: tuple[float, ...] | None = None
    seat: int | None = None
    """The seat that held the belief, and `when` in the episode it was stated (a question id,
    a turn): what a viewer needs to show a belief beside the step it was stated at."""
    when: str = ""

    def __post_init__(self) -> None:
        where = f"forecast '{self.kind}' of episode '{self.episode_id}'"
        if self.probabilities is None:
            if self.outcome not in (0, 1):
                raise StratagemError(f"{where}: a point guess is right (1) or wrong (0)")
            return
        probs = tuple(float(p) for p in self.probabilities)
        if len(probs) < 2:
            raise StratagemError(f"{where}: needs probabilities of at least 2 outcomes")
        if any(not math.isfinite(p) or p < 0 for p in probs):
            raise StratagemError(f"{where}: probabilities must be finite and >= 0, got {probs}")
        if abs(sum(probs) - 1.0) > SUM_TOLERANCE:
            raise StratagemError(f"{where}: probabilities sum to {sum(probs)!r}, not 1")
        if isinstance(self.outcome, bool) or not 0 <= self.outcome < len(probs):
            raise StratagemError(f"{where}: outcome {self.outcome!r} is not 0..{len(probs) - 1}")
        object.__setattr__(self, "probabilities", probs)

    @property
    def probabilistic(self) -> bool:
        return self.probabilities is not None

    @property
    def group(self) -> tuple[str, str, str, str]:
        """(model, agent, game, kind): what calibration is summarised by."""
        return (self.model, self.agent, self.game, self.kind)

    @classmethod
    def binary(
        cls,
        episode_id: str,
        model: str,
        agent: str,
        game: str,
        kind: str,
        probability: float,
        happened: bool,
        *,
        seat: int | None = None,
        when: str = "",
    ) -> Forecast:
        """The probability of one event, as the vector (1 - p, p) over (no, yes)."""
        p = float(probability)
        return cls(episode_id, model, agent, game, kind, int(happened), (1.0 - p, p), seat, when)

    @classmethod
    def point(
        cls,
        episode_id: str,
        model: str,
        agent: str,
        game: str,
        kind: str,
        correct: bool,
        *,
        seat: int | None = None,
        when: str = "",
    ) -> Forecast:
        """A guess stated without a probability: only its accuracy can be scored."""
        return cls(episode_id, model, agent, game, kind, int(bool(correct)), None, seat, when)


@dataclass
class ForecastSet:
    """A study's forecasts, and the stored beliefs it could not score, counted by reason."""

    forecasts: list[Forecast] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)

    def skip(self, reason: str, count: int = 1) -> None:
        if count:
            self.skipped[reason] += count

    def extend(self, other: ForecastSet) -> None:
        self.forecasts += other.forecasts
        self.skipped.update(other.skipped)


Extractor = Callable[[ReportData, Sequence[EpisodeData]], ForecastSet]
"""(the report's data, every finished episode of the report) -> the study's forecasts; an
extractor picks its own study's episodes and returns an empty set when there are none."""

_REGISTRY: dict[str, Extractor] = {}


def register_forecasts(name: str, extractor: Extractor) -> None:
    """Add (or, under the same name, replace) a study's forecast extractor."""
    if not name:
        raise StratagemError("a forecast extractor needs a name")
    _REGISTRY[name] = extractor


def registered_forecasts() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def collect_forecasts(data: ReportData) -> dict[str, ForecastSet]:
    """Every registered study's forecasts of the report's episodes, by study name; the studies
    that found no belief at all (nothing forecast, nothing skipped) are left out."""
    out: dict[str, ForecastSet] = {}
    for name, extractor in _REGISTRY.items():
        found = extractor(data, data.episodes)
        if found.forecasts or found.skipped:
            out[name] = found
    return out
