"""`stratagem rescore`: stored replies read again with a changed parser, or stored episodes scored
under other analysis options, as a new experiment beside the source; then old against new.

The command composes the layers (the rescore from `experiments`, the per-episode metrics from
`studies`, the paired comparison from `analysis`), since experiments may not import analysis."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stratagem.cli.common import PluginOption, _say, app, err, out, use_plugins, use_plugins_of
from stratagem.cli.launch import confirm_plan
from stratagem.cli.store_paths import DEFAULT, StoreArg, store_to_read
from stratagem.errors import StratagemError

if TYPE_CHECKING:
    from stratagem.experiments.rescore import Rescore, RescoreResult
    from stratagem.experiments.rescore_change import Change

FORK_LINE = (
    "fork: the changed episodes are played on from their changed move; the calls before it "
    "come from the record (free), the others are new"
)
REPORT_FILE = "rescore-{experiment}.md"
"""The old-vs-new report, written beside the results."""


@app.command()
def rescore(
    directory: StoreArg = DEFAULT,
    assignments: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="agent.NAME.FIELD=VALUE",
            help="A changed agent setting, e.g. agent.magic.options.several_votes=first "
            "(repeatable); with --metric an analysis option STUDY.OPTION=VALUE, as report --set.",
        ),
    ] = None,
    architecture: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME=KIND",
            help="Read agent NAME's replies with another architecture (a plugin's: ns:kind).",
        ),
    ] = None,
    metric: Annotated[
        bool,
        typer.Option("--metric", help="No parsing: the study metrics under other options."),
    ] = False,
    experiment: Annotated[
        str | None, typer.Option(help="The source experiment, when the store holds several.")
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(help="The new experiment's name (default: <source>-rescore-<hash>)."),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Write the new experiment to this results directory."),
    ] = None,
    fork: Annotated[
        bool,
        typer.Option(
            "--fork",
            help="Play changed episodes on from their changed move: new, paid model calls, "
            "planned and confirmed as a run.",
        ),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Read and print what changed; write nothing.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="With --fork: start without asking.")
    ] = False,
    plugin: PluginOption = None,
) -> None:
    """Re-read a stored experiment's replies with a changed parser (or score it under other
    analysis options) into a new experiment that points to its source; print old against new.

    Exit status: 0 done; 1 a fork that did not end; 2 bad input; 3 a fork stopped early
    (budget, permanent model error); 130 interrupted. docs/rescore.md says how.
    """
    from stratagem.experiments import event_loop
    from stratagem.experiments.rescore import Rescore

    use_plugins(plugin)
    store_file = store_to_read(directory)
    use_plugins_of([store_file])
    if metric and (architecture or fork):
        raise StratagemError("--metric reads no reply: it takes neither --architecture nor --fork")
    with Rescore(store_file, experiment) as job:
        job.prepare(_change(job, assignments or [], architecture or [], metric), name=name,
                    out=out_dir)  # fmt: skip
        if not metric:
            event_loop.run(job.read())
        if dry_run and not fork:
            _say(out, _reading_lines(job))
            return
        if fork:
            _say(out, _reading_lines(job))
            assert job.new_config is not None
            _say(out, FORK_LINE)
            where = f"rescore {directory}"
            if not confirm_plan(
                job.plan(), job.new_config.confirm, where, dry_run=dry_run, yes=yes
            ):
                return
        try:
            result = event_loop.run(job.write(fork=fork))
        except KeyboardInterrupt:
            _say(err, "interrupted: re-run the same command to continue (stored episodes are kept)")
            raise typer.Exit(130) from None
    _report(store_file, result)
    summary = result.fork
    if summary is not None and summary.stopped:
        raise typer.Exit(3)
    if summary is not None and summary.failed:
        _say(err, f"failed: {summary.failed} of {summary.episodes} episodes played on "
                  f"({'; '.join(summary.reasons())})")  # fmt: skip
        raise typer.Exit(1)


def _change(job: Rescore, assignments: list[str], architecture: list[str], metric: bool) -> Change:
    from stratagem.analysis.report_options import parse_assignments
    from stratagem.analysis.report_registry import resolve_options
    from stratagem.experiments.rescore_change import agent_changes, metric_changes

    if not metric:
        return agent_changes(assignments, architecture, job.agents)
    import stratagem.studies  # noqa: F401  (registers the studies' options)

    settings = parse_assignments(assignments)
    read = resolve_options(settings)  # checked, and each value as its option's type reads it
    typed = {
        study: {name: _plain(getattr(read[study], name)) for name in options}
        for study, options in settings.items()
    }
    return metric_changes(typed)


def _plain(value: object) -> object:
    """An option's value as stored settings hold it (a tuple as a list)."""
    return list(value) if isinstance(value, tuple) else value


def _reading_lines(job: Rescore) -> str:
    """What the reading found, before anything is written (a dry run, a fork's plan)."""
    readings = [i.reading for i in job.items if i.reading is not None]
    moves = sum(r.moves for r in readings)
    flipped = sum(len(r.flips) for r in readings)
    changed = [r for r in readings if r.changed_at is not None]
    lines = [
        f"read: {len(readings)} episodes, {moves} LLM moves, {flipped} flipped; "
        f"{len(changed)} episodes changed, {len(readings) - len(changed)} unchanged"
    ]
    for reason, ids in job.skipped.items():
        lines.append(f"left out: {len(ids)} episodes: {reason}")
    return "\n".join(lines)


def _report(source_file: Path, result: RescoreResult) -> None:
    """Old against new: printed, and written as Markdown beside the new experiment."""
    from stratagem.analysis.rescore_report import (
        compare_metrics,
        markdown,
        metric_lines,
        summary_lines,
    )
    from stratagem.experiments.store import ResultStore
    from stratagem.studies.rescore_metrics import rescore_metrics

    with ResultStore(source_file, read_only=True) as source:
        old = rescore_metrics(source, result.source)
    with ResultStore(result.store_file, read_only=True) as target:
        new = rescore_metrics(target, result.experiment)
    diffs, statement = compare_metrics(old, new, result.pairs())
    cut = sum(item.status in ("changed", "failed") for item in result.items)
    for line in [*summary_lines(result), *metric_lines(diffs, statement, cut)]:
        _say(out, line)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", result.experiment)
    path = result.store_file.parent / REPORT_FILE.format(experiment=slug)
    try:
        path.write_text(markdown(result, diffs, statement, cut), encoding="utf-8")
    except OSError as exc:
        raise StratagemError(f"{path}: cannot write the report ({exc.strerror})") from None
    _say(out, f"report: {path}")
