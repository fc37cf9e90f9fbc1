"""MAgIC's leaderboards for the viewer (issue 35 item 5): the challengers' leaderboard and the
ratings of every entity, built by the functions the report section renders (`section`,
`rating_section`), with the same options, replicates and seeds, so the viewer's rows are the
report's rows, each carrying the ids of its episodes.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.leaderboards import Leaderboard
from stratagem.analysis.report_data import ReportData
from stratagem.studies.magic.extract import magic_data
from stratagem.studies.magic.leaderboard import EntityMetrics, leaderboard
from stratagem.studies.magic.options import MagicAnalysis
from stratagem.studies.magic.rating_section import rating_boards
from stratagem.studies.magic.section import (
    LEVEL,
    N_BOOT,
    RATING_BOOT,
    SECTION_ID,
    SEED,
    challenger_board,
    challenger_costs,
)


def magic_leaderboards(report: ReportData, episodes: Sequence[EpisodeData]) -> list[Leaderboard]:
    """The leaderboards of the report's MAgIC section (`section.magic_sections`), in its order."""
    data = magic_data(report.store, report.config, episodes)
    options = report.study_options(SECTION_ID, MagicAnalysis)
    boards: list[Leaderboard] = []
    rows: Sequence[EntityMetrics] = ()
    if data.games:
        rows = leaderboard(data.games, options, n_boot=N_BOOT, level=LEVEL, seed=SEED)
        boards.append(challenger_board(rows, data.games, challenger_costs(data), options))
    return boards + rating_boards(data, rows, n_boot=RATING_BOOT, level=LEVEL, seed=SEED)
