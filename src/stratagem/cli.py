"""The `stratagem` command: parses arguments, calls the layers, prints. No logic of its own.

Errors a user can cause are `StratagemError`s: printed on one line, exit status 2, no traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from stratagem.errors import StratagemError
from stratagem.experiments.ids import stable_id
from stratagem.experiments.moran import MoranProcess
from stratagem.experiments.store import MatchEntry, ResultStore
from stratagem.experiments.tournament import Tournament, TournamentResult
from stratagem.games.catalog import GAMES, get_stage
from stratagem.games.normal_form import NormalFormGame
from stratagem.strategies.registry import STRATEGIES, get_strategy

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Measure how LLM-based agents reason and behave in strategic games.",
    pretty_exceptions_show_locals=False,  # locals may hold secrets (API keys) in later layers
)
# Wide enough for the tables when the output is a file or a pipe (rich assumes 80 columns there).
out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

CLASSIC = [
    "AlwaysCooperate",
    "AlwaysDefect",
    "TitForTat",
    "GrimTrigger",
    "GrimTrigger2",
    "Random(0.5)",
    "WinStayLoseShift",
    "TitForTwoTats",
    "SuspiciousTitForTat",
    "Alternator",
]
DEFAULT_STORE = Path("results/stratagem.db")

StrategyOption = Annotated[
    list[str] | None,
    typer.Option(
        "--strategy", "-s", help="A strategy, e.g. TitForTat or 'Random(0.3)'; repeat the option."
    ),
]
GameOption = Annotated[str, typer.Option("--game", "-g", help="A matrix game of the catalog.")]
SeedOption = Annotated[int, typer.Option(help="Seed of every random draw.")]
NoiseOption = Annotated[float, typer.Option(help="Probability that an action is flipped.")]


@app.command()
def games() -> None:
    """List the games of the catalog."""
    table = Table(title="games")
    for column in ("name", "players", "actions", "source", "description"):
        table.add_column(column)
    for entry in GAMES.values():
        game = entry.factory()
        actions = " / ".join(game.labels[0]) if isinstance(game, NormalFormGame) else "structured"
        table.add_row(entry.name, str(game.n_players), actions, entry.source, entry.description)
    out.print(table)


@app.command()
def strategies() -> None:
    """List the rule-based strategies and their classifiers."""
    table = Table(title="strategies (axl:<Name> plays any strategy of the axelrod library)")
    for column in ("name", "memory", "stochastic", "nice", "retaliating", "forgiving", "about"):
        table.add_column(column)
    for name in STRATEGIES:
        strategy = get_strategy(name)
        c = strategy.classifier
        doc = (type(strategy).__doc__ or "").strip().split(":")[0].splitlines()[0]
        table.add_row(
            name,
            "∞" if c.memory_depth == float("inf") else str(int(c.memory_depth)),
            *(
                "yes" if flag else "no"
                for flag in (c.stochastic, c.nice, c.retaliating, c.forgiving)
            ),
            doc,
        )
    out.print(table)


@app.command()
def tournament(
    strategy: StrategyOption = None,
    game: GameOption = "dilemma",
    turns: Annotated[int, typer.Option(help="Rounds per match.")] = 200,
    repetitions: Annotated[int, typer.Option(help="Matches per pair.")] = 10,
    noise: NoiseOption = 0.0,
    seed: SeedOption = 0,
    self_play: Annotated[bool, typer.Option(help="Each strategy also meets itself.")] = True,
    store: Annotated[Path, typer.Option(help="SQLite file the matches are written to.")] = (
        DEFAULT_STORE
    ),
) -> None:
    """Play a round-robin tournament and print its table (default: the classic strategies)."""
    names = strategy or CLASSIC
    stage = get_stage(game)
    players = [get_strategy(name) for name in names]
    t = Tournament(players, stage, turns, repetitions, noise, seed, self_play)
    result = t.play()
    _print_standings(result, f"{game}: {turns} turns, {repetitions} repetitions, noise {noise}")
    spec = {
        "kind": "tournament",
        "game": game,
        "strategies": [p.label for p in players],
        "turns": turns,
        "repetitions": repetitions,
        "noise": noise,
        "seed": seed,
        "self_play": self_play,
    }
    _save_tournament(store, spec, result)


def _print_standings(result: TournamentResult, title: str) -> None:
    table = Table(title=title)
    table.add_column("rank", justify="right")
    table.add_column("strategy")
    table.add_column("mean score / turn", justify="right")
    table.add_column("wins", justify="right")
    table.add_column("cooperation", justify="right")
    for row in result.standings():
        table.add_row(
            str(row.rank),
            row.player,
            f"{row.mean_score:.3f}",
            str(row.wins),
            f"{row.cooperation:.2f}",
        )
    out.print(table)


def _save_tournament(path: Path, spec: dict[str, object], result: TournamentResult) -> None:
    """Write every match as an episode; a re-run of the same tournament is not stored twice."""
    experiment = stable_id(spec)
    with ResultStore(path) as store:
        store.create_experiment(experiment, f"tournament on {spec['game']}", spec)
        if store.status_counts(experiment).get("finished", 0) == len(result.matches):
            out.print(f"already stored as experiment {experiment} in {path}")
            return
        entries = (
            MatchEntry(
                experiment_id=experiment,
                episode_id=stable_id({**spec, "seats": [m.first, m.second], "rep": m.repetition}),
                game=result.stage,
                players=[result.players[m.first], result.players[m.second]],
                seed=m.seed,
                result=m.result,
                game_name=str(spec["game"]),
            )
            for m in result.matches
        )
        stored = store.record_matches(entries, replace=True)
    out.print(f"stored {stored} matches as experiment {experiment} in {path}")


@app.command()
def moran(
    strategy: StrategyOption = None,
    game: GameOption = "dilemma",
    size: Annotated[int, typer.Option(help="Individuals of each strategy.")] = 3,
    turns: Annotated[int, typer.Option(help="Rounds per match.")] = 50,
    noise: NoiseOption = 0.0,
    mutation: Annotated[float, typer.Option(help="Mutation probability per birth.")] = 0.0,
    generations: Annotated[int, typer.Option(help="Stop after this many.")] = 1000,
    seed: SeedOption = 0,
) -> None:
    """Run an evolutionary Moran process until one strategy takes over."""
    names = strategy or ["TitForTat", "AlwaysDefect", "AlwaysCooperate", "WinStayLoseShift"]
    if size < 1:
        raise StratagemError(f"--size must be >= 1, got {size}")
    population = [get_strategy(n) for n in names for _ in range(size)]
    result = MoranProcess(
        population, get_stage(game), turns, noise, mutation, generations, seed
    ).play()
    table = Table(title=f"Moran process on {game}: population by generation")
    labels = sorted({p.label for p in population})
    table.add_column("generation", justify="right")
    for label in labels:
        table.add_column(label, justify="right")
    step = max(1, result.generations // 15)
    shown = sorted({*range(0, result.generations + 1, step), result.generations})
    for g in shown:
        table.add_row(str(g), *(str(result.populations[g][label]) for label in labels))
    out.print(table)
    if result.winner:
        out.print(f"{result.winner} fixated after {result.generations} generations")
    else:
        out.print(f"no fixation within {result.generations} generations")


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
    import asyncio

    from stratagem.experiments.config import load_config
    from stratagem.experiments.runner import STORE_FILE, Runner

    config = load_config(file)
    try:
        runner = Runner(config, executor=executor, console=err, show_progress=progress, force=force)
        plan = runner.plan()
    except StratagemError as exc:
        raise StratagemError(f"{file}: {exc}") from None
    _say(out, f"plan: {plan.text()}")
    if dry_run:
        return
    reason = plan.above(config.confirm)
    if reason is not None and not yes:
        if not sys.stdin.isatty():
            raise StratagemError(
                f"{file}: this run needs a confirmation ({reason}) and there is no terminal to "
                "ask; pass --yes to start it"
            )
        if not typer.confirm(f"this run is above its confirmation bounds ({reason}); start it?"):
            _say(err, "not started")
            raise typer.Exit(1)
    try:
        summary = asyncio.run(runner.run())
    except KeyboardInterrupt:
        done = runner.summary.skipped + runner.summary.finished
        _say(err, f"interrupted: {done} of {runner.summary.episodes} episodes finished; "
                  "re-run the same command to continue")  # fmt: skip
        raise typer.Exit(130) from None
    _say(
        out,
        f"experiment {summary.experiment}: {summary.episodes} episodes, "
        f"{summary.skipped} already finished, {summary.finished} played, {summary.failed} failed; "
        f"{summary.calls} model calls ({summary.cached_calls} cached, {summary.failed_calls} "
        f"failed), {summary.tokens:,} tokens, ${summary.cost_usd:.4f}, {summary.wall_s:.1f} s",
    )
    with ResultStore(Path(config.output) / STORE_FILE) as db:
        _print_cells(db, summary.experiment)
    if summary.stopped:
        _say(err, f"stopped: {summary.stopped}")
        raise typer.Exit(3)
    if summary.failed:
        why = "; ".join(summary.reasons())
        _say(err, f"failed: {summary.failed} of {summary.episodes} episodes ({why})")
        raise typer.Exit(1)


def _say(console: Console, text: str) -> None:
    """User, model and server text, printed as written (no markup, no highlighting)."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


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
    summary = asyncio.run(runner.run())
    with ResultStore(out_dir / "stratagem.db") as db:
        for spec in runner.specs:
            record = db.episode(spec.id)
            if record is not None and record.payoffs is not None:
                scores = ", ".join(f"seat {p}: {x:g}" for p, x in enumerate(record.payoffs))
                tell(f"game over: {scores}  (stratagem show {out_dir} {spec.id})")
    if summary.failed or summary.skipped:
        why = summary.errors[0] if summary.errors else "this seed was played already"
        raise StratagemError(f"the game did not finish: {why}")


def _read_line(prompt: str) -> str | None:
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = sys.stdin.readline()
    return line or None


@app.command()
def architectures() -> None:
    """List the LLM agent architectures an agent entry's `kind` can name."""
    from stratagem.agents.registry import ARCHITECTURES

    table = Table("kind", "what it does")
    for arch in ARCHITECTURES.values():
        table.add_row(Text(arch.name), Text(arch.description))
    out.print(table)


def _store_path(path: Path) -> Path:
    """A results directory's store, or a store file given directly."""
    from stratagem.experiments.runner import STORE_FILE

    file = path / STORE_FILE if path.is_dir() else path
    _require_file(file, "store")
    return file


def _print_cells(db: ResultStore, experiment: str) -> None:
    from stratagem.analysis.cells import cell_table

    cells = cell_table(db, experiment)
    if not cells:
        return
    table = Table(title=f"{experiment}: player 0 per cell (mean over episodes)")
    for column in ("model", "agent", "game", "opponent", "rounds", "episodes"):
        table.add_column(column)
    for column in ("score", "opp. score", "cooperation", "invalid"):
        table.add_column(column, justify="right")
    for c in cells:
        cooperation = "-" if c.cooperation is None else f"{c.cooperation:.2f}"
        table.add_row(
            c.model, c.agent, c.game, c.opponent, str(c.rounds), str(c.episodes),
            f"{c.score:.1f}", f"{c.opponent_score:.1f}", cooperation, f"{c.invalid_rate:.2f}",
        )  # fmt: skip
    out.print(table)


StoreOption = Annotated[Path, typer.Option(help="The SQLite result store.")]


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


def _require_file(path: Path, what: str) -> None:
    if not path.is_file():
        raise StratagemError(f"{what} '{path}' does not exist")


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit status 2."""
    # Usage errors (unknown option, bad value) are typer's own: it prints them and exits 2.
    try:
        app(args=argv)
    except StratagemError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
