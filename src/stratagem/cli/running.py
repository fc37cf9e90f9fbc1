"""`stratagem run`: an experiment file played; and what `stratagem play` shares with it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stratagem.cli.common import PluginOption, _print_cells, _say, app, err, out, use_plugins
from stratagem.cli.launch import plan_and_run
from stratagem.cli.planning import comparison_lines
from stratagem.errors import StratagemError
from stratagem.experiments.store import ResultStore

if TYPE_CHECKING:
    pass


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="Experiment file (YAML).")],
    executor: Annotated[
        str, typer.Option(help="Where episodes run: local (this process) or ray (a Ray cluster).")
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(
            help="With --executor ray: the cluster (auto, HOST:PORT or ray://HOST:10001); "
            "without it, a cluster is started on this machine."
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(help="With --executor ray: worker actors (default: one per node)."),
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show the progress bar.")] = True,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the plan (episodes, calls, cost, each comparison's detectable effect) "
            "and stop.",
        ),
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Start without asking, whatever the plan.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Add to an experiment stored with other settings."),
    ] = False,
    plugin: PluginOption = None,
) -> None:
    """Run (or continue) an experiment: finished episodes are skipped, interrupted ones replayed.

    Exit status: 0 every episode finished; 1 some failed; 2 bad input; 3 stopped early (budget,
    permanent model error); 130 interrupted (Ctrl-C).
    """
    from stratagem.experiments.comparisons import planned_comparisons
    from stratagem.experiments.config import load_config
    from stratagem.experiments.runner import STORE_FILE, Runner
    from stratagem.studies.registry import check_analysis

    named = use_plugins(plugin)
    config = load_config(file)
    if named:  # stored with the file's, so reading the results names them again
        added = [form for form in named if form not in config.plugins]
        config = config.model_copy(update={"plugins": [*config.plugins, *added]})
    try:
        check_analysis(config.study_options)
        given = {"address": address, "workers": workers}
        options = {k: v for k, v in given.items() if v is not None}
        runner = Runner(
            config,
            executor=executor,
            executor_options=options,
            console=err,
            show_progress=progress,
            force=force,
        )
        if config.comparisons is not None:  # a value the grid does not play, said before playing
            planned_comparisons(config, list(runner.grid.specs()))
        plan = runner.plan()
    except StratagemError as exc:
        raise StratagemError(f"{file}: {exc}") from None
    summary = plan_and_run(runner, plan, config.confirm, str(file), dry_run=dry_run, yes=yes)
    if summary is None:
        try:
            lines = comparison_lines(config, list(runner.grid.specs()))
        except StratagemError as exc:
            raise StratagemError(f"{file}: {exc}") from None
        for line in lines:
            _say(out, line)
        return
    with ResultStore(Path(config.output) / STORE_FILE) as db:
        _print_cells(db, summary.experiment)
    if summary.stopped:
        _say(err, f"stopped: {summary.stopped}")
        raise typer.Exit(3)
    if summary.failed:
        why = "; ".join(summary.reasons())
        _say(err, f"failed: {summary.failed} of {summary.episodes} episodes ({why})")
        raise typer.Exit(1)
