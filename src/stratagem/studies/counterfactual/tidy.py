"""seed-003's per-game table: one row per game of a counterfactual family, with the per-game
metrics every table of its report section aggregates (`metrics.game_metrics`), and on a
variant's games its cell's paired comparison with the default game, as the report prints it
(`paired_analysis`: the difference, its interval, p-value, Holm-adjusted p-value and method)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratagem.analysis.comparisons import Comparison
from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.report_data import ReportData
from stratagem.games.catalog import GAMES
from stratagem.studies.counterfactual.paired_analysis import (
    PAIRED_METRICS,
    PairedCell,
    paired_analysis,
)
from stratagem.studies.counterfactual.tables import StudyGame, families, study_games

COMPARISON_COLUMNS: tuple[str, ...] = ("diff", "ci_low", "ci_high", "p", "p_adjusted", "method")
"""Each compared metric's columns, `<metric>_<column>` (`points_p_adjusted`)."""


def studied_families(games: Sequence[StudyGame]) -> dict[str, list[str]]:
    """The families the section shows: a default game played with variants of it, or one of
    seed-003's catalog games."""
    return {
        default: family
        for default, family in families(games).items()
        if len(family) > 1 or (default in GAMES and GAMES[default].family.startswith("seed-003"))
    }


def game_rows(report: ReportData, episodes: Sequence[EpisodeData]) -> list[dict[str, Any]]:
    """The games the section's tables are computed from, one row each: where it sits in the
    tables (model, prompt row, opponent column, family, variant, run) and its metrics."""
    games, _ = study_games(episodes)
    studied = studied_families(games)
    cells = {
        (c.model, c.prompt, c.opponent, c.variant_game): c
        for family in studied.values()
        if len(family) > 1
        for c in paired_analysis(games, family).cells
    }
    return [
        {
            "episode_id": g.episode_id,
            "model": g.model,
            "prompt": g.prompt,
            "opponent": g.opponent,
            "opponent_spec": g.opponent_spec,
            "game": g.game,
            "default": g.default,
            "variant": g.variant,
            "run": g.run,
            "rounds": g.data.rounds,
            **g.metrics,
            **_comparison_columns(cells.get((g.model, g.prompt, g.opponent, g.game))),
        }
        for g in games
        if g.default in studied
    ]


def _comparison_columns(cell: PairedCell | None) -> dict[str, Any]:
    """The cell's comparison of each metric with the default game; None on a default game's rows
    and where a metric has no pair."""
    out: dict[str, Any] = {}
    for metric in PAIRED_METRICS:
        c: Comparison | None = None if cell is None else cell.differences.get(metric)
        values = (None,) * len(COMPARISON_COLUMNS) if c is None else (
            c.estimate, c.ci_low, c.ci_high, c.p, c.p_adjusted, c.method)  # fmt: skip
        out.update({f"{metric}_{k}": v for k, v in zip(COMPARISON_COLUMNS, values, strict=True)})
    return out
