"""Which cells of a planned grid are compared, and which of their episodes pair up.

The plan (`stratagem run --dry-run`, `stratagem plan`) says, for each comparison the experiment
is for, how small a difference its episodes can detect. This module finds the comparisons in the
grid, before anything is played: the file's `analysis.compare` entries
(`experiments.compare_entry`), or by default the study's own. The default rule is seed-003's
design: **a counterfactual variant against its default game**, in cells alike in everything
else (model, agent, opponent, rounds), paired by seed and repetition: a catalog variant's
default is its `variant_of` (pd-alt, sh and sh-alt of pd); a variant declared in the file
(`variants:`) is compared with its base's default.

A cell's replicates (the file's `replicates:`) are not compared here: they are the noise floor
each comparison is shown beside (`analysis.noise_floor`), not cells of the design.

The power arithmetic is the analysis layer's (`analysis.power`); this module only lists specs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from stratagem.errors import StratagemError
from stratagem.experiments.compare_entry import AXES, COMPARE, Axis, CompareEntry, Metric
from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.prompt_entry import BASE
from stratagem.games.catalog import get_entry, get_stage
from stratagem.games.matrix.normal_form import NormalFormGame

NO_ROUNDS = "-"
"""The rounds of a cell whose game has no round count (as `analysis.cells` shows it)."""

PAIRED_BY = ("seed", "repetition")
"""What the two episodes of a pair always share."""

PairKey = tuple[str, ...]
"""The pooled axes' values, then the seed and the repetition."""


def spec_axes(spec: EpisodeSpec) -> dict[Axis, str]:
    """The cell of an episode spec, axis by axis, as the plan names it: seat 0's model entry
    and agent entry (or the seat's name when no LLM plays it; `zs [terse]` under a prompt
    variant other than `base`), the game, the other seats (the shorthand's opponent as the file
    names it) and the rounds."""
    first = spec.seats[0]
    if first.agent is not None and first.model is not None:
        model, agent = first.model.name, first.agent.name
    else:
        model = spec.model.name if spec.model is not None else first.label
        agent = first.label
    prompt = getattr(spec, "prompt", None)  # a prompt variant other than base: a cell of its own
    if prompt is not None and prompt.name != BASE:
        agent = f"{agent} [{prompt.name}]"  # as `analysis.cells` names it
    opponent = spec.opponent
    if opponent is None:
        opponent = ", ".join(seat.label for seat in spec.seats[1:])
    rounds = NO_ROUNDS if spec.rounds is None else str(spec.rounds)
    return {"model": model, "agent": agent, "game": spec.game, "opponent": opponent,
            "rounds": rounds}  # fmt: skip


@dataclass
class CellPair:
    """Two cells of one comparison (A and B, alike in the kept axes) and their episodes."""

    kept: tuple[tuple[Axis, str], ...]
    """The kept axes' values, in table order."""
    a: dict[PairKey, str] = field(default_factory=dict)
    """Pairing key -> episode id of cell A (several cells when axes are pooled)."""
    b: dict[PairKey, str] = field(default_factory=dict)

    @property
    def pairs(self) -> list[PairKey]:
        """The keys both sides have: the pairs this grid plays."""
        return [k for k in self.a if k in self.b]

    def label(self) -> str:
        """'claude / zs / srep / 16': the kept axes' values."""
        return " / ".join(value for _, value in self.kept) or "all cells"


@dataclass
class PlannedComparison:
    """One comparison the experiment is for, and the pairs of cells it compares."""

    entry: CompareEntry
    cells: list[CellPair]
    stated: bool
    """True when the file's `analysis.compare` names it, False for the study's default."""

    @property
    def paired_by(self) -> tuple[str, ...]:
        """What the two episodes of a pair share: the pooled axes, the seed, the repetition."""
        return (*self.entry.pooled(), *PAIRED_BY)


def default_comparisons(config: ExperimentConfig) -> list[CompareEntry]:
    """The study's own comparisons: each variant in the grid's games against its default game,
    when the default is in the grid too; in cooperation where the game has two actions (the
    first one cooperative), else in score (rock-paper-scissors has no cooperation)."""
    declared = {v.name: v.base for v in config.variants}
    out = []
    for game in config.games:
        default = _default_of(declared.get(game, game))
        if default != game and default in config.games:
            metric: Metric = "cooperation" if _two_actions(default) else "score"
            out.append(CompareEntry(axis="game", a=default, b=game, metric=metric))
    return out


def _two_actions(game: str) -> bool:
    try:
        stage = get_stage(game)
    except StratagemError:
        return False
    return all(size == 2 for size in stage.sizes)


def _default_of(game: str) -> str:
    try:
        entry = get_entry(game)
    except StratagemError:
        return game
    return entry.variant_of or game


def planned_comparisons(
    config: ExperimentConfig, specs: Sequence[EpisodeSpec]
) -> list[PlannedComparison]:
    """The grid's comparisons with their cell pairs (the file's, else the study's default); a
    value the grid does not play is a one-line error naming the entry."""
    stated = config.comparisons
    entries = default_comparisons(config) if stated is None else stated
    specs = [spec for spec in specs if not spec.replicate]  # the noise floor's, not compared
    axes = [spec_axes(spec) for spec in specs]
    out = []
    for i, entry in enumerate(entries):
        if stated is not None:
            _check_values(entry, axes, f"analysis.{COMPARE}.{i}")
        out.append(PlannedComparison(entry, _cell_pairs(entry, specs, axes), stated is not None))
    return out


def _check_values(entry: CompareEntry, axes: Sequence[dict[Axis, str]], where: str) -> None:
    played = list(dict.fromkeys(cell[entry.axis] for cell in axes))
    for side in ("a", "b"):
        value = str(getattr(entry, side))
        if value not in played:
            shown = ", ".join(played[:12]) + (", ..." if len(played) > 12 else "")
            raise StratagemError(
                f"{where}.{side}: {entry.axis} '{value}' is not in this grid "
                f"({entry.axis}: {shown or 'none'})"
            )


def _cell_pairs(
    entry: CompareEntry, specs: Sequence[EpisodeSpec], axes: Sequence[dict[Axis, str]]
) -> list[CellPair]:
    a, b = str(entry.a), str(entry.b)
    kept, pooled = entry.kept(), entry.pooled()
    cells: dict[tuple[str, ...], CellPair] = {}
    for spec, cell in zip(specs, axes, strict=True):
        side = cell[entry.axis]
        if side not in (a, b):
            continue
        values = tuple(cell[x] for x in kept)
        pair = cells.setdefault(values, CellPair(tuple(zip(kept, values, strict=True))))
        key = (*(cell[x] for x in pooled), str(spec.seed), str(spec.repetition))
        episodes = pair.a if side == a else pair.b
        while key in episodes:  # two episodes alike in every axis: each still pairs once
            key = (*key, "+")
        episodes[key] = spec.id
    return [pair for pair in cells.values() if pair.a and pair.b]


def metric_range(spec: EpisodeSpec, metric: str) -> tuple[float, float] | None:
    """The least and most one episode's metric can be, for the default standard deviation:
    a rate is in [0, 1]; seat 0's total payoff in a repeated matrix game lies between the
    rounds times its least and its most stage payoff (0 included: an invalid round pays 0).
    None when unknown (a game that is not a matrix game)."""
    if metric in ("cooperation", "invalid"):
        return 0.0, 1.0
    game = spec.build_game()
    stage = game.matrix()
    if not isinstance(stage, NormalFormGame) or spec.rounds is None:
        return None
    own = stage.payoffs[..., 0]
    low, high = min(float(own.min()), 0.0), max(float(own.max()), 0.0)
    return spec.rounds * low, spec.rounds * high


__all__ = [
    "AXES",
    "CellPair",
    "PlannedComparison",
    "default_comparisons",
    "metric_range",
    "planned_comparisons",
    "spec_axes",
]
