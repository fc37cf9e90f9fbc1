"""Commands that play episodes with agents: run (an experiment file) and play (in the terminal)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stratagem.cli.common import _print_cells, _say, app, err, out
from stratagem.cli.launch import plan_and_run
from stratagem.errors import StratagemError
from stratagem.experiments.store import ResultStore

if TYPE_CHECKING:
    from stratagem.experiments.grid import EpisodeSpec


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="Experiment file (YAML).")],
    executor: Annotated[str, typer.Option(help="Where episodes run: local.")] = "local",
    progress: Annotated[bool, typer.Option(help="Show the progress bar.")] = True,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan (episodes, calls, cost) and stop.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Start without asking, whatever the plan.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Add to an experiment stored with other settings."),
    ] = False,
) -> None:
    """Run (or continue) an experiment: finished episodes are skipped, interrupted ones replayed.

    Exit status: 0 every episode finished; 1 some failed; 2 bad input; 3 stopped early (budget,
    permanent model error); 130 interrupted (Ctrl-C).
    """
    from stratagem.experiments.config import load_config
    from stratagem.experiments.runner import STORE_FILE, Runner
    from stratagem.studies.registry import check_analysis

    config = load_config(file)
    try:
        check_analysis(config.analysis)
        runner = Runner(config, executor=executor, console=err, show_progress=progress, force=force)
        plan = runner.plan()
    except StratagemError as exc:
        raise StratagemError(f"{file}: {exc}") from None
    summary = plan_and_run(runner, plan, config.confirm, str(file), dry_run=dry_run, yes=yes)
    if summary is None:
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


@app.command()
def play(
    game: Annotated[str, typer.Argument(help="A game of the catalog (stratagem games).")],
    seat: Annotated[
        list[str],
        typer.Option(
            help="SEAT=WHO for every seat: human, a strategy, scripted:<actions>, or an "
            "architecture (plain) played by --model or by plain@provider/model."
        ),
    ],
    model: Annotated[str, typer.Option(help="The model of LLM seats.")] = "local/gemma-3-270m",
    rounds: Annotated[int | None, typer.Option(help="Rounds of a repeated game.")] = None,
    seed: Annotated[int | None, typer.Option(help="Episode seed (default: new each time).")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Results directory.")] = Path(
        "results/play"
    ),
) -> None:
    """Play a game in the terminal, in any seat, against agents or strategies."""
    import asyncio
    import time

    from stratagem.agents.human import HumanPlayer
    from stratagem.analysis.transcript import clean
    from stratagem.experiments import event_loop
    from stratagem.experiments import play as playing
    from stratagem.experiments.runner import Runner

    seats = playing.parse_seats(seat, playing.seats_of(game))
    chosen = seed if seed is not None else time.time_ns() % 2**31
    config = playing.play_config(
        game, seats, model=model, rounds=rounds, seed=chosen, output=out_dir
    )

    def tell(text: str) -> None:
        out.print(clean(text), markup=False, highlight=False, soft_wrap=True)

    async def ask(prompt: str) -> str | None:
        line = await asyncio.to_thread(_read_line, prompt)
        return None if line is None else line.rstrip("\n")

    runner = Runner(config, console=err, show_progress=False,
                    human=lambda g: HumanPlayer(g, ask, tell))  # fmt: skip
    _refuse_played(runner.specs, out_dir, chosen)
    summary = event_loop.run(runner.run())
    with ResultStore(out_dir / "stratagem.db") as db:
        for spec in runner.specs:
            record = db.episode(spec.id)
            if record is not None and record.payoffs is not None:
                scores = ", ".join(f"seat {p}: {x:g}" for p, x in enumerate(record.payoffs))
                tell(f"game over: {scores}  (stratagem show {out_dir} {spec.id})")
    if summary.failed:
        raise StratagemError(f"the game did not finish: {summary.errors[0]}")


def _refuse_played(specs: list[EpisodeSpec], out_dir: Path, seed: int) -> None:
    """A seed played to its end already cannot be played again in the same directory (its
    episode is stored): say so before anything is asked, not after."""
    from stratagem.experiments.runner import STORE_FILE

    store_file = out_dir / STORE_FILE
    if not store_file.is_file():
        return
    with ResultStore(store_file) as db:
        for spec in specs:
            record = db.episode(spec.id)
            if record is not None and record.status == "finished":
                raise StratagemError(
                    f"--seed {seed}: this game was played with this seed already in {out_dir} "
                    f"(stratagem show {out_dir} {spec.id}); choose another seed, or leave --seed "
                    "out for a new one"
                )


def _read_line(prompt: str) -> str | None:
    """One typed line, at most one character past the longest a move may be: the rest of a
    longer line is read in pieces and dropped, never held whole (the player refuses the line)."""
    from stratagem.agents.human import MAX_LINE_CHARS

    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = sys.stdin.readline(MAX_LINE_CHARS + 1)
    if len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
        while (rest := sys.stdin.readline(MAX_LINE_CHARS)) and not rest.endswith("\n"):
            pass
    return line or None
