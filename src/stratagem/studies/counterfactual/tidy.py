"""seed-003's per-game table: one row per game of a counterfactual family, with the per-game
metrics every table of its report section aggregates (`metrics.game_metrics`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.report_data import ReportData
from stratagem.games.catalog import GAMES
from stratagem.studies.counterfactual.tables import StudyGame, families, study_games


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
        }
        for g in games
        if g.default in studied
    ]
