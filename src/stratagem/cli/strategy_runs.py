"""Commands that play rule-based strategies against each other: tournament and Moran process."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from stratagem.cli.common import (
    GameOption,
    NoiseOption,
    PluginOption,
    SeedOption,
    StrategyOption,
    _say,
    app,
    out,
    use_plugins,
)
from stratagem.cli.store_paths import DEFAULT, StoreOption, writing
from stratagem.cli.tables import Col, fitted_table
from stratagem.errors import StratagemError
from stratagem.experiments.ids import stable_id
from stratagem.experiments.moran import MoranProcess, check_population
from stratagem.experiments.store import MatchEntry, ResultStore
from stratagem.experiments.tournament import Tournament, TournamentResult
from stratagem.games.catalog import get_stage
from stratagem.strategies.registry import get_strategy

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


@app.command()
def tournament(
    strategy: StrategyOption = None,
    game: GameOption = "dilemma",
    turns: Annotated[int, typer.Option(help="Rounds per match.")] = 200,
    repetitions: Annotated[int, typer.Option(help="Matches per pair.")] = 10,
    noise: NoiseOption = 0.0,
    seed: SeedOption = 0,
    self_play: Annotated[bool, typer.Option(help="Each strategy also meets itself.")] = True,
    store: StoreOption = DEFAULT,
    plugin: PluginOption = None,
) -> None:
    """Play a round-robin tournament and print its table (default: the classic strategies)."""
    use_plugins(plugin)
    names = strategy or CLASSIC
    stage = get_stage(game)
    players = [get_strategy(name) for name in names]
    t = Tournament(players, stage, turns, repetitions, noise, seed, self_play)
    _say(out, f"plan: {t.plan}")
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
    with writing(store) as db:  # refused before playing if another process writes there
        result = t.play()
        _print_standings(result, f"{game}: {turns} turns, {repetitions} repetitions, noise {noise}")
        _save_tournament(db, spec, result)


STANDING_COLUMNS = (
    Col("rank", keep=3, justify="right", wrap=False),
    Col("strategy", keep=5),
    Col("mean score / turn", keep=4, justify="right"),
    Col("wins", keep=1, justify="right", wrap=False),
    Col("cooperation", keep=2, justify="right", wrap=False),
)


def _print_standings(result: TournamentResult, title: str) -> None:
    rows = [
        [str(r.rank), r.player, f"{r.mean_score:.3f}", str(r.wins), f"{r.cooperation:.2f}"]
        for r in result.standings()
    ]
    out.print(fitted_table(STANDING_COLUMNS, rows, out.width, title=Text(title)))


def _save_tournament(store: ResultStore, spec: dict[str, object], result: TournamentResult) -> None:
    """Write every match as an episode; a re-run of the same tournament is not stored twice."""
    experiment = stable_id(spec)
    store.create_experiment(experiment, f"tournament on {spec['game']}", spec)
    if store.status_counts(experiment).get("finished", 0) == len(result.matches):
        _say(out, f"already stored as experiment {experiment} in {store.path}")
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
    _say(out, f"stored {stored} matches as experiment {experiment} in {store.path}")


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
    plugin: PluginOption = None,
) -> None:
    """Run an evolutionary Moran process until one strategy takes over."""
    use_plugins(plugin)
    names = strategy or ["TitForTat", "AlwaysDefect", "AlwaysCooperate", "WinStayLoseShift"]
    if size < 1:
        raise StratagemError(f"--size must be >= 1, got {size}")
    check_population(size * len(names), f"--size {size:,} x {len(names)} strategies")
    population = [get_strategy(n) for n in names for _ in range(size)]
    process = MoranProcess(population, get_stage(game), turns, noise, mutation, generations, seed)
    _say(out, f"plan: {process.plan}")
    result = process.play()
    table = Table(title=Text(f"Moran process on {game}: population by generation"))
    labels = sorted({p.label for p in population})
    table.add_column("generation", justify="right")
    for label in labels:
        table.add_column(Text(label), justify="right", overflow="fold")
    step = max(1, result.generations // 15)
    shown = sorted({*range(0, result.generations + 1, step), result.generations})
    for g in shown:
        table.add_row(str(g), *(str(result.populations[g][label]) for label in labels))
    out.print(table)
    if result.winner:
        _say(out, f"{result.winner} fixated after {result.generations} generations")
    else:
        _say(out, f"no fixation within {result.generations} generations")
