"""Import of per-game aggregate records in seed-001's Appendix-A schema (§8.2) into the store.

Appendix A of the thesis gives, for each of its 252 games, the settings and the 16 metrics, but not
the rounds. Importing each row as a finished episode (no rounds; the metrics as one "summary"
event) puts such records behind the same door as everything else: the analysis reads only from the
store (design.md), and `studies.thesis.dataset.thesis_dataset` uses a stored summary when an
episode has no rounds. So Tables 3.1-3.8 are recomputed from the appendix through the same code
that serves new runs, and other people's aggregate tables can be analysed alongside.

The whole file is validated before anything is written; every problem names file:line:column.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from stratagem.errors import StratagemError
from stratagem.experiments.episode_io import EpisodeImportError, ImportReport
from stratagem.experiments.ids import stable_id
from stratagem.experiments.store import (
    EpisodeBundle,
    EpisodeRecord,
    EventRecord,
    ExperimentRecord,
    ResultStore,
)
from stratagem.games.catalog import get_stage
from stratagem.strategies.registry import get_strategy

# seed-001 §8.2 / Appendix A: the setting and metric columns, in the file's order.
SETTING_COLUMNS: tuple[str, ...] = ("Model", "Arch", "OppStr", "Att", "NR", "Game")
METRIC_COLUMNS: tuple[str, ...] = (
    "CR1", "CR2", "CR3M", "CR3m", "CR4", "MR1", "MR2", "MR3M", "MR3m", "MR4",
    "CR", "N", "TM", "Ret", "For", "Em",
)  # fmt: skip
THESIS_COLUMNS: tuple[str, ...] = ("idx", *SETTING_COLUMNS, *METRIC_COLUMNS)
"""The 23 columns of `seed-001-appendix-A.csv`; `idx` may be left out."""

# The thesis' names (§4.6, §8.2) and stratagem's: agent kinds and catalog games.
ARCH_BY_KIND: dict[str, str] = {"plain": "Plain_LLM", "tool": "Tool", "debate": "Assistant"}
KIND_BY_ARCH: dict[str, str] = {v: k for k, v in ARCH_BY_KIND.items()}
GAME_BY_NAME: dict[str, str] = {
    "dilemma": "Dilemma",
    "delight": "Delight",
    "confusion": "Confusion",
}
NAME_BY_GAME: dict[str, str] = {v: k for k, v in GAME_BY_NAME.items()}
ATTITUDES: tuple[str, ...] = ("cooperate", "defect", "compute")
NO_ATTITUDE = "NA"
"""The Att value of agents without an attitude (Plain LLM, §4.2)."""

SUMMARY_EVENT = "summary"
"""Kind of the event that carries an episode's per-game metrics when its rounds are unknown."""

DEFAULT_EXPERIMENT = "seed-001-appendix-A"
DEFAULT_SOURCE = "import:seed-001-appendix-A"


class _RowError(Exception):
    def __init__(self, column: str, message: str) -> None:
        self.column = column
        self.message = message


def _read(path: Path) -> list[tuple[int, list[str]]]:
    try:
        with path.open(encoding="utf-8", newline="") as stream:
            reader = csv.reader(stream)
            rows = []
            for values in reader:
                if values and any(v.strip() for v in values):
                    rows.append((reader.line_num, values))
            return rows
    except FileNotFoundError:
        raise StratagemError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise StratagemError(f"{path}: not UTF-8 text") from None
    except csv.Error as exc:
        raise StratagemError(f"{path}: not a valid CSV file ({exc})") from None
    except OSError as exc:
        raise StratagemError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _header(path: Path, line: int, header: Sequence[str]) -> tuple[str, ...]:
    names = tuple(h.strip() for h in header)
    if names and names[0].startswith("\ufeff"):
        names = (names[0][1:], *names[1:])
    expected = THESIS_COLUMNS if names[:1] == ("idx",) else THESIS_COLUMNS[1:]
    for i, want in enumerate(expected):
        got = names[i] if i < len(names) else None
        if got != want:
            what = "missing" if got is None else f"got '{got}'"
            raise StratagemError(
                f"{path}:{line}:{i + 1}: expected column '{want}' ({what}); the header must be "
                f"{','.join(THESIS_COLUMNS)} (idx optional)"
            )
    if len(names) > len(expected):
        raise StratagemError(
            f"{path}:{line}:{len(expected) + 1}: unexpected column '{names[len(expected)]}'"
        )
    return names


def _metric(column: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _RowError(column, f"expected a number in [0, 1], got '{text}'") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise _RowError(column, f"expected a number in [0, 1], got {text}")
    return value


def _setting(row: Mapping[str, str]) -> dict[str, Any]:
    model = row["Model"]
    if not model:
        raise _RowError("Model", "expected a model name")
    arch = row["Arch"]
    if arch not in KIND_BY_ARCH:
        raise _RowError("Arch", f"unknown architecture '{arch}' (known: {', '.join(KIND_BY_ARCH)})")
    try:
        opponent = get_strategy(row["OppStr"]).label
    except StratagemError as exc:
        raise _RowError("OppStr", str(exc)) from None
    att = row["Att"]
    if att not in (*ATTITUDES, NO_ATTITUDE):
        raise _RowError("Att", f"unknown attitude '{att}' (known: {', '.join(ATTITUDES)}, NA)")
    if (arch == "Plain_LLM") != (att == NO_ATTITUDE):
        need = "NA" if arch == "Plain_LLM" else "cooperate, defect or compute"
        raise _RowError("Att", f"a {arch} agent's attitude must be {need}, got '{att}'")
    try:
        rounds = int(row["NR"])
    except ValueError:
        raise _RowError("NR", f"expected a number of rounds, got '{row['NR']}'") from None
    if rounds < 1:
        raise _RowError("NR", f"expected a number of rounds >= 1, got {rounds}")
    game = row["Game"]
    if game not in NAME_BY_GAME:
        raise _RowError("Game", f"unknown game '{game}' (known: {', '.join(NAME_BY_GAME)})")
    return {
        "Model": model,
        "Arch": arch,
        "OppStr": opponent,
        "Att": att,
        "NR": rounds,
        "Game": game,
    }


def read_thesis_csv(path: str | PathLike[str]) -> list[dict[str, Any]]:
    """The validated rows of an Appendix-A style CSV (settings typed, metrics as floats).

    Raises EpisodeImportError listing the first bad cells as "file:line:column: problem".
    """
    file = Path(path)
    lines = _read(file)
    if not lines:
        raise StratagemError(f"{file}: empty file (expected the header {','.join(THESIS_COLUMNS)})")
    header_line, header = lines[0]
    names = _header(file, header_line, header)
    position = {name: i + 1 for i, name in enumerate(names)}
    errors: list[str] = []
    out: list[dict[str, Any]] = []
    seen: dict[int, int] = {}
    for number, values in lines[1:]:
        if len(values) != len(names):
            errors.append(f"{file}:{number}: expected {len(names)} values, got {len(values)}")
            continue
        raw = {name: v.strip() for name, v in zip(names, values, strict=True)}
        try:
            if "idx" in raw:
                try:
                    idx = int(raw["idx"])
                except ValueError:
                    raise _RowError("idx", f"expected an integer, got '{raw['idx']}'") from None
            else:
                idx = len(out)
            if idx in seen:
                raise _RowError("idx", f"duplicate idx {idx} (first on line {seen[idx]})")
            row: dict[str, Any] = {"idx": idx, **_setting(raw)}
            for column in METRIC_COLUMNS:
                row[column] = _metric(column, raw[column])
            seen[idx] = number
            out.append(row)
        except _RowError as exc:
            errors.append(f"{file}:{number}:{position[exc.column]}: {exc.column}: {exc.message}")
    if errors:
        raise EpisodeImportError(errors)
    return out


def thesis_spec(row: Mapping[str, Any]) -> dict[str, Any]:
    """The episode spec of a row, in the shape the runner writes (model, agent, opponent, ...)."""
    att = row["Att"]
    kind = KIND_BY_ARCH[row["Arch"]]
    return {
        "model": row["Model"],
        "agent": {"name": kind, "kind": kind, "attitude": None if att == NO_ATTITUDE else att},
        "opponent": row["OppStr"],
        "rounds": row["NR"],
        "game": NAME_BY_GAME[row["Game"]],
    }


def thesis_episode(
    row: Mapping[str, Any],
    experiment_id: str = DEFAULT_EXPERIMENT,
    source: str = DEFAULT_SOURCE,
) -> EpisodeBundle:
    """One validated row as a finished episode without rounds, its metrics in a summary event."""
    spec = thesis_spec(row)
    # The id hashes the whole row, so importing the same file again skips every row.
    episode_id = stable_id({"seed-001-appendix-A": {k: row[k] for k in THESIS_COLUMNS}})
    stage = get_stage(spec["game"])
    kind = spec["agent"]["kind"]
    episode = EpisodeRecord(
        id=episode_id,
        experiment_id=experiment_id,
        game=spec["game"],
        players=(
            {"name": f"{kind}:{row['Model']}", "kind": "llm", "model": row["Model"], "agent": kind},
            {"name": row["OppStr"], "kind": "strategy"},
        ),
        seed=None,
        status="finished",
        spec={**spec, "idx": row["idx"]},
        labels=tuple(tuple(ls) for ls in stage.labels),
        game_payoffs=stage.payoffs.tolist(),
        source=source,
    )
    summary = EventRecord(
        episode_id, 0, SUMMARY_EVENT, {c: row[c] for c in METRIC_COLUMNS}, round=None, player=0
    )
    return EpisodeBundle(episode, events=(summary,))


def import_thesis_csv(
    store: ResultStore,
    path: str | PathLike[str],
    experiment_id: str = DEFAULT_EXPERIMENT,
    source: str = DEFAULT_SOURCE,
) -> ImportReport:
    """Validate an Appendix-A style CSV, then store each row as an episode; rows already imported
    (same content) are skipped and listed in the report."""
    rows = read_thesis_csv(path)
    report = ImportReport(str(path))
    experiment = ExperimentRecord(
        experiment_id, "seed-001 Appendix A (per-game aggregates)", {"source": source}, ""
    )
    for row in rows:
        bundle = thesis_episode(row, experiment_id, source)
        if store.put_episode(bundle, experiment=experiment, skip_existing=True):
            report.imported += 1
        else:
            report.skipped += 1
            report.skipped_ids.append(bundle.episode.id)
    return report
