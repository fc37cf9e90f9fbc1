"""seed-001's file formats for `stratagem import/export --format thesis-csv`: Appendix A's per-game
aggregates in (§8.2), the per-game raw CSVs and the dataset out (§8.1, §8.2)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from stratagem.errors import StratagemError
from stratagem.experiments.episode_io import ImportReport
from stratagem.experiments.store import ResultStore
from stratagem.studies.thesis.dataset import thesis_dataset, write_dataset_csv, write_game_csvs
from stratagem.studies.thesis.importer import (
    DEFAULT_EXPERIMENT,
    DEFAULT_SOURCE,
    import_thesis_csv,
)

SCORES = ("points", "years")


def import_csv(
    store: ResultStore, file: Path, experiment: str | None, source: str | None
) -> ImportReport:
    return import_thesis_csv(
        store, file, experiment_id=experiment or DEFAULT_EXPERIMENT, source=source or DEFAULT_SOURCE
    )


def export_csv(
    store: ResultStore, directory: Path, experiment: str | None, options: Mapping[str, str]
) -> list[str]:
    """One 15-column CSV per game under `games/`, and `dataset.csv`, per experiment (a folder
    each when there are several)."""
    scores = options.get("scores", "points")
    if scores not in SCORES:
        raise StratagemError(f"--scores: got '{scores}', allowed: {', '.join(SCORES)}")
    known = [e.id for e in store.experiments()]
    if experiment and experiment not in known:
        raise StratagemError(f"--experiment: no experiment '{experiment}' in the store")
    ids = [experiment] if experiment else known
    lines = []
    for experiment_id in ids:
        folder = directory / experiment_id if len(ids) > 1 else directory
        games = write_game_csvs(
            store,
            experiment_id,
            folder / "games",
            scores="years" if scores == "years" else "points",
        )
        dataset = write_dataset_csv(thesis_dataset(store, experiment_id), folder / "dataset.csv")
        lines.append(f"{experiment_id}: {len(games)} game CSVs under {folder / 'games'}, {dataset}")
    return lines
