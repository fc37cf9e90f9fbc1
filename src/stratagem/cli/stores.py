"""Commands that read or fill a result store: status, report, show, export, import.

Each names its store the same way (`store_paths`): a results directory or its stratagem.db file,
`results` by default."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from stratagem.cli.common import (
    PluginOption,
    _print_cells,
    _say,
    app,
    listed,
    out,
    use_plugins,
    use_plugins_of,
)
from stratagem.cli.store_paths import (
    DEFAULT,
    StoreArg,
    StoreOption,
    require_file,
    store_to_read,
    store_to_write,
    stores_in,
    writing,
)
from stratagem.cli.tables import Col, fitted_table
from stratagem.errors import StratagemError
from stratagem.experiments.endpoint_progress import ENDPOINTS_FILE, read_live_figures
from stratagem.experiments.lock import writer_active
from stratagem.experiments.provenance import allow_drift
from stratagem.experiments.store import ResultStore
from stratagem.llm.pool_stats import stored_figures
from stratagem.llm.pricing import CacheUse

INTERRUPTED = "interrupted"
"""How `status` and `show` name an episode stored as running while no process writes."""
REASONS_SHOWN = 3
"""How many distinct failure reasons `status` prints per experiment."""
ENDPOINT_COLUMNS = (
    Col("endpoint", keep=9, wrap=False),
    Col("model", keep=3),
    Col("state", keep=8, wrap=False),
    Col("calls", keep=7, justify="right", wrap=False),
    Col("errors", keep=6, justify="right", wrap=False),
    Col("p50", keep=5, justify="right", wrap=False),
    Col("p95", keep=4, justify="right", wrap=False),
    Col("tok/s", keep=2, justify="right", wrap=False),
)


@app.command()
def status(directory: StoreArg = DEFAULT, plugin: PluginOption = None) -> None:
    """Summarise the experiments stored in a results directory (each one under `results`)."""
    use_plugins(plugin)
    use_plugins_of([directory])
    for path in stores_in(directory):
        with ResultStore(path) as db:
            _status_of(db, path)


def shown_counts(counts: dict[str, int], directory: Path) -> dict[str, int]:
    """Episodes by status as a person should read them: "running" only while a process writes
    the directory; once none does (Ctrl-C, a kill), those episodes were interrupted, and the
    next run of the same command plays them again."""
    if not counts.get("running") or writer_active(directory):
        return counts
    shown = {k: n for k, n in counts.items() if k != "running"}
    return shown | {INTERRUPTED: counts["running"]}


def _status_of(db: ResultStore, path: Path) -> None:
    experiments = db.experiments()
    if not experiments:
        _say(out, f"{path}: no experiments")
    for experiment in experiments:
        counts = shown_counts(db.status_counts(experiment.id), path.parent)
        calls = db.call_totals(experiment.id)
        line = Text(experiment.id, style="bold")
        line.append(
            f" ({experiment.name}): "
            + (", ".join(f"{n} {status}" for status, n in counts.items() if n) or "no episodes")
            + f"; {calls['calls']} model calls ({calls['cached']} cached, "
            f"{calls['errors']} failed), {calls['tokens']:,} tokens, ${calls['cost_usd']:.4f}"
            + CacheUse.from_totals(calls).aside()
        )
        out.print(line)
        reasons = list(
            dict.fromkeys(
                ep.error or "no reason recorded"
                for ep in db.episodes(experiment.id)
                if ep.status == "failed"
            )
        )
        if reasons:
            _say(out, f"failed because: {listed(reasons, REASONS_SHOWN)}")
        _print_endpoints(db, experiment.id, path.parent)
        _print_cells(db, experiment.id)


def _print_endpoints(db: ResultStore, experiment: str, directory: Path) -> None:
    """Per server of each endpoint pool, from the stored calls (a call counts once, at the server
    that answered it, or for one that failed for good, the last it tried): calls, errors, p50
    and p95 latency, output tokens per second of call; and each server's state as the run last
    wrote it to endpoints.json, when that run was this experiment's."""
    calls = db.endpoint_calls(experiment)
    if not calls:
        return
    live = read_live_figures(directory)
    if live is not None and live.experiment not in (None, experiment):
        live = None
    servers = stored_figures(calls, live.servers if live is not None else ())
    rows = []
    for (model, url), figures in servers.items():
        now = live.servers.get((model, url)) if live is not None else None
        speed = figures.tokens_per_s
        rows.append(
            [
                url,
                model,
                now.state if now is not None else "-",
                f"{figures.calls:,}",
                f"{figures.errors:,}",
                "-" if figures.p50_s is None else f"{figures.p50_s:.2f} s",
                "-" if figures.p95_s is None else f"{figures.p95_s:.2f} s",
                "-" if speed is None else f"{speed:,.0f}",
            ]
        )
    title = Text(f"{experiment}: calls per endpoint")
    out.print(fitted_table(ENDPOINT_COLUMNS, rows, out.width, title=title))  # plain Text cells
    if live is not None:
        ended = "" if writer_active(directory) else " (run ended)"
        age = _age(time.time() - live.written_at)
        _say(out, f"state: as {ENDPOINTS_FILE} said {age} ago{ended}")


def _age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


@app.command()
def report(
    directory: StoreArg = DEFAULT,
    experiment: Annotated[
        str | None, typer.Option(help="The experiment, when the store holds several.")
    ] = None,
    out_file: Annotated[
        Path | None,
        typer.Option("--out", help="HTML file to write (default: report-<experiment>.html there)."),
    ] = None,
    assignments: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="STUDY.OPTION=VALUE",
            help="An analysis option, over the experiment file's `analysis:` (repeatable; "
            "e.g. magic.code_compat=true, tom.epsilon=0.5; docs/magic.md, docs/tom.md).",
        ),
    ] = None,
    plugin: PluginOption = None,
) -> None:
    """Write a self-contained HTML report (tables, plots, methods) of a stored experiment."""
    from stratagem.analysis.report_options import parse_assignments
    from stratagem.studies import build_report  # registers the studies' sections

    use_plugins(plugin, load=True)  # loaded now: their studies add their sections
    store_file = store_to_read(directory)
    use_plugins_of([store_file], load=True)
    settings = parse_assignments(assignments or [])
    path = build_report(store_file, experiment_id=experiment, out_path=out_file, settings=settings)
    _say(out, str(path))


@app.command()
def show(
    directory: StoreArg = DEFAULT,
    episode: Annotated[
        str | None, typer.Argument(help="An episode id, or the start of one; omit to list them.")
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="Show whole prompts.")] = False,
    plugin: PluginOption = None,
) -> None:
    """Print one episode as a transcript: round by round, what each seat saw, said and played."""
    from stratagem.analysis.transcript import build_transcript, clean, find_episode

    use_plugins(plugin)
    store_file = store_to_read(directory)
    use_plugins_of([store_file])
    with ResultStore(store_file) as db:
        if episode is None:
            _print_episodes(db, writer_active(store_file.parent))
            return
        record = find_episode(db, episode)
        text = build_transcript(db, record).text(full=full)
    _say(out, clean(text))


def _print_episodes(db: ResultStore, live: bool) -> None:
    """`live`: a process writes the store now (else running episodes were interrupted)."""
    from stratagem.analysis.transcript import clean

    episodes = db.episodes()
    if not episodes:
        out.print("no episodes")
        return
    table = Table("episode", "game", "seats", "status", "payoffs")
    for ep in episodes:
        payoffs = "" if ep.payoffs is None else ", ".join(f"{x:g}" for x in ep.payoffs)
        seats = ", ".join(ep.player_names)
        status = INTERRUPTED if ep.status == "running" and not live else ep.status
        table.add_row(*(Text(clean(v)) for v in (ep.id, ep.game, seats, status, payoffs)))
    out.print(table)
    out.print("stratagem show DIR EPISODE prints one (the start of its id is enough)")


@app.command("export")
def export_(
    file: Annotated[
        Path,
        typer.Argument(
            help="JSONL file to write (.jsonl.gz: compressed); a directory for --format "
            "parquet or thesis-csv."
        ),
    ],
    store: StoreOption = DEFAULT,
    experiment: Annotated[str | None, typer.Option(help="Only this experiment's episodes.")] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="jsonl (episodes, docs/episode-format.md), parquet (one file per stored table "
            "in a new directory, docs/dataframes.md) or thesis-csv (seed-001 §8: one 15-column "
            "CSV per game, and the per-game dataset with Appendix A's columns).",
        ),
    ] = "jsonl",
    scores: Annotated[
        str, typer.Option(help="thesis-csv: cumulative scores in points or years.")
    ] = "points",
    plugin: PluginOption = None,
) -> None:
    """Export episodes as JSONL (format: docs/episode-format.md), the stored tables as Parquet
    files, or the thesis' CSV files."""
    from stratagem.studies import get_exporter

    use_plugins(plugin)
    store_file = store_to_read(store)
    use_plugins_of([store_file])
    exporter = get_exporter(fmt)
    with ResultStore(store_file) as db:
        lines = exporter(db, file, experiment, {"scores": scores})
    for line in lines:
        _say(out, line)


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="JSONL file of episodes (.jsonl.gz as well).")],
    store: StoreOption = DEFAULT,
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
    strict: Annotated[
        bool,
        typer.Option(
            help="--strict: a bad line refuses the whole file (nothing imported). --no-strict: "
            "import the good lines and list the bad ones (jsonl only)."
        ),
    ] = True,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Import episodes made with another version of their plugin than the one "
            "installed (docs/plugins.md); without it they are refused.",
        ),
    ] = False,
    plugin: PluginOption = None,
) -> None:
    """Import episodes made by stratagem or another tool; existing ones are skipped."""
    from stratagem.experiments.episode_io import import_episodes
    from stratagem.studies import get_importer

    require_file(file, "file")
    use_plugins(plugin)
    if store_to_write(store).is_file():
        use_plugins_of([store])
    importer = get_importer(fmt)
    if not strict and fmt != "jsonl":
        raise StratagemError(f"--no-strict applies to --format jsonl, not {fmt}")
    drift = allow_drift() if force else contextlib.nullcontext()
    with drift, writing(store, undo_if_empty=True) as db:  # a new store that got nothing: none left
        if strict:
            report = importer(db, file, experiment, source)
        else:
            report = import_episodes(db, file, experiment, source, strict=False)
        _say(out, f"imported {report.imported} episodes, skipped {report.skipped} already stored")
        for error in report.errors:
            _say(out, f"not imported: {error}")
        if not report.imported and not report.skipped:  # a file with nothing valid is bad input
            why = "every line was refused, as listed above" if report.errors else "it holds none"
            raise StratagemError(f"{file}: no episode imported ({why})")
