"""A study's tidy per-game table as a DataFrame: the rows its report sections are computed from.

Each study registers the builder of its table (`Study.table`); the rows come from the study's
own code, with the options its report would use (the experiment file's `analysis:` section, then
`settings`), so a number recomputed from the frame is the number the report prints; like the
report's study sections, it leaves out the cells' replicate copies (`replicates:`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from stratagem.analysis.noise_floor import without_copies
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_options import merge
from stratagem.analysis.report_registry import resolve_options
from stratagem.errors import StratagemError
from stratagem.experiments.store import ResultStore
from stratagem.studies.registry import STUDIES, Study


def _study(name: str) -> Study:
    import stratagem.studies  # noqa: F401  (registers the built-in studies)

    tabled = [s for s in STUDIES.values() if s.table is not None]
    study = STUDIES.get(name)
    if study is None or study.table is None:
        known = ", ".join(s.name for s in tabled) or "none"
        raise StratagemError(f"unknown study '{name}': studies with a table are {known}")
    return study


def study_frame(
    store: ResultStore,
    experiment_ids: tuple[str, ...],
    name: str,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """The study's per-game rows over these experiments (the finished episodes it applies to),
    each row led by its `experiment_id`."""
    study = _study(name)
    assert study.table is not None
    rows: list[dict[str, Any]] = []
    for experiment_id in experiment_ids:
        experiment = store.experiment(experiment_id)
        if experiment is None:
            raise StratagemError(f"unknown experiment '{experiment_id}'")
        stored = (experiment.config or {}).get("analysis") or {}
        options = resolve_options(merge(stored, settings or {}))
        data = without_copies(ReportData.load(store, experiment, options))  # as the report
        mine = [e for e in data.episodes if study.applies(e)]
        rows += [{"experiment_id": experiment_id, **row} for row in study.table(data, mine)]
    return pd.DataFrame(rows)
