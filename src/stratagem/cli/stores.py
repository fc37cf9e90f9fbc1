"""Commands that read or fill a result store: status, report, show, export, import."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from stratagem.cli.common import (
    DEFAULT_STORE,
    StoreOption,
    _print_cells,
    _require_file,
    _store_path,
    app,
    out,
)
from stratagem.experiments.store import ResultStore


@app.command()
def status(
    directory: Annotated[Path, typer.Argument(help="An experiment's output directory.")],
) -> None:
    """Summarise the experiments stored in an output directory."""
    from stratagem.experiments.runner import STORE_FILE

    path = directory / STORE_FILE
    _require_file(path, "store")
    with ResultStore(path) as db:
        experiments = db.experiments()
        if not experiments:
            out.print(f"{path}: no experiments")
        for experiment in experiments:
            counts = db.status_counts(experiment.id)
            calls = db.call_totals(experiment.id)
            out.print(
                f"[bold]{experiment.id}[/] ({experiment.name}): "
                + ", ".join(f"{n} {status}" for status, n in counts.items() if n)
                + f"; {calls['calls']} model calls ({calls['cached']} cached, "
                f"{calls['errors']} failed), {calls['tokens']:,} tokens, ${calls['cost_usd']:.4f}"
            )
            _print_cells(db, experiment.id)


@app.command()
def report(
    directory: Annotated[
        Path, typer.Argument(help="An experiment's output directory, or its stratagem.db file.")
    ],
    experiment: Annotated[
        str | None, typer.Option(help="The experiment, when the store holds several.")
    ] = None,
    out_file: Annotated[
        Path | None,
        typer.Option("--out", help="HTML file to write (default: report-<experiment>.html there)."),
    ] = None,
) -> None:
    """Write a self-contained HTML report (tables, plots, methods) of a stored experiment."""
    from stratagem.studies import build_report  # registers the studies' sections

    path = build_report(directory, experiment_id=experiment, out_path=out_file)
    out.print(str(path), highlight=False, soft_wrap=True)


@app.command()
def show(
    directory: Annotated[
        Path, typer.Argument(help="An experiment's output directory, or its stratagem.db file.")
    ],
    episode: Annotated[
        str | None, typer.Argument(help="An episode id, or the start of one; omit to list them.")
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="Show whole prompts.")] = False,
) -> None:
    """Print one episode as a transcript: round by round, what each seat saw, said and played."""
    from stratagem.analysis.transcript import build_transcript, clean, find_episode

    with ResultStore(_store_path(directory)) as db:
        if episode is None:
            _print_episodes(db)
            return
        record = find_episode(db, episode)
        text = build_transcript(db, record).text(full=full)
    out.print(clean(text), markup=False, highlight=False, soft_wrap=True)


def _print_episodes(db: ResultStore) -> None:
    from stratagem.analysis.transcript import clean

    episodes = db.episodes()
    if not episodes:
        out.print("no episodes")
        return
    table = Table("episode", "game", "seats", "status", "payoffs")
    for ep in episodes:
        payoffs = "" if ep.payoffs is None else ", ".join(f"{x:g}" for x in ep.payoffs)
        seats = ", ".join(ep.player_names)
        table.add_row(*(Text(clean(v)) for v in (ep.id, ep.game, seats, ep.status, payoffs)))
    out.print(table)
    out.print("stratagem show DIR EPISODE prints one (the start of its id is enough)")


@app.command("export")
def export_(
    file: Annotated[
        Path, typer.Argument(help="JSONL file to write; a directory for --format thesis-csv.")
    ],
    store: StoreOption = DEFAULT_STORE,
    experiment: Annotated[str | None, typer.Option(help="Only this experiment's episodes.")] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="jsonl (episodes, docs/episode-format.md) or thesis-csv (seed-001 §8: one "
            "15-column CSV per game, and the per-game dataset with Appendix A's columns).",
        ),
    ] = "jsonl",
    scores: Annotated[
        str, typer.Option(help="thesis-csv: cumulative scores in points or years.")
    ] = "points",
) -> None:
    """Export episodes as JSONL (format: docs/episode-format.md) or as the thesis' CSV files."""
    from stratagem.studies import get_exporter

    _require_file(store, "store")
    exporter = get_exporter(fmt)
    with ResultStore(store) as db:
        lines = exporter(db, file, experiment, {"scores": scores})
    for line in lines:
        out.print(line, highlight=False, soft_wrap=True)


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="JSONL file of episodes.")],
    store: StoreOption = DEFAULT_STORE,
    experiment: Annotated[str | None, typer.Option(help="Put them under this experiment.")] = None,
    source: Annotated[str | None, typer.Option(help="Where they come from, e.g. a tool.")] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="jsonl (episodes, docs/episode-format.md) or thesis-csv (seed-001 Appendix-A "
            "per-game aggregates).",
        ),
    ] = "jsonl",
) -> None:
    """Import episodes made by stratagem or another tool; existing ones are skipped."""
    from stratagem.studies import get_importer

    _require_file(file, "file")
    importer = get_importer(fmt)
    with ResultStore(store) as db:
        report = importer(db, file, experiment, source)
    out.print(f"imported {report.imported} episodes, skipped {report.skipped} already stored")
