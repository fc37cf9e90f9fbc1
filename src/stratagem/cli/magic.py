"""`stratagem magic ...`: commands of seed-004 (MAgIC) that are more than an experiment file.

`magic balance` re-runs the paper's setting filter (seed-004 §4, "Setting selection") on any model;
the logic is in `studies.magic.balance`, this module only parses, runs and prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from stratagem.cli.common import PluginOption, _say, app, checked_seed, err, out, use_plugins
from stratagem.cli.launch import plan_and_run
from stratagem.cli.tables import Col, fitted_table

if TYPE_CHECKING:
    from stratagem.studies.magic.balance import SettingRate

magic_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Tools of the MAgIC study (seed-004): rebuild its balanced social-game settings.",
)
app.add_typer(magic_app, name="magic")

BALANCE_COLUMNS = (
    Col("setting", keep=9, wrap=False),
    Col("words", keep=2),
    Col("spy win rate", keep=8, justify="right", wrap=False),
    Col("games", keep=6, justify="right", wrap=False),
    Col("|rate - 0.5|", keep=7, justify="right", wrap=False),
    Col("kept", keep=5, wrap=False),
)


@magic_app.command()
def balance(
    game: Annotated[str, typer.Option("--game", "-g", help="chameleon or undercover.")],
    model: Annotated[str, typer.Option("--model", "-m", help="provider/model of all three seats.")],
    base_url: Annotated[
        str | None, typer.Option(help="The model's server (an OpenAI-compatible one).")
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="The environment variable holding the API key.")
    ] = None,
    games_per_setting: Annotated[
        int, typer.Option(help="Self-play games of each candidate setting.")
    ] = 10,
    keep: Annotated[int, typer.Option(help="How many settings to keep.")] = 20,
    candidates: Annotated[
        str,
        typer.Option(
            help="The candidate settings: selected (the 20 an experiment plays) or all (every "
            "topic word and seat: 96 in Chameleon, 60 in Undercover)."
        ),
    ] = "selected",
    output: Annotated[
        Path | None,
        typer.Option(help="Results directory (default: results/magic-balance-GAME-MODEL)."),
    ] = None,
    seed: Annotated[
        int,
        typer.Option(help="Seed of the episodes (their request seeds).", callback=checked_seed),
    ] = 0,
    temperature: Annotated[
        float | None, typer.Option(help="Sampling temperature (default: the study's 0).")
    ] = None,
    max_usd: Annotated[
        float | None, typer.Option(help="Stop once the directory has spent this much.")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show the progress bar.")] = True,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan (episodes, calls, cost) and stop.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Start without asking, whatever the plan.")
    ] = False,
    plugin: PluginOption = None,
) -> None:
    """Find the social-game settings closest to an even spy win rate for a model (seed-004 §4).

    The paper played 200 GPT-4 self-play games over candidate settings and kept the 20 "that
    promote a more equitable win rate". This command does the same on any model: every
    candidate setting is played GAMES_PER_SETTING times with all three seats the `magic`
    architecture on MODEL (hidden probes off: they cannot change an outcome), as an ordinary
    experiment in the results directory, so the cache, --max-usd, the one-writer lock and
    resuming all apply: re-run the same command to continue an interrupted run or to re-read
    a finished one for free.

    Spy win rate of a setting: chameleon credits / 2 per game in Chameleon, undercover credits
    / 3 per game in Undercover (the credit tables of seed-004 §3.1, §3.2). The KEEP settings
    closest to 0.5 are kept; equal distances go to the lower setting index.

    Candidates: the 20 settings an experiment plays (GAME/*, --candidates selected), or every
    topic word and seat (--candidates all: 96 in Chameleon, 60 in Undercover), the pool the
    paper chose its 20 from. With the 20 selected, --keep 20 only ranks them.

    Prints a table of every candidate, then the kept settings as a `games:` line to paste into
    an experiment file, and writes balance.json (model, game, per-setting rates, kept list,
    seed) into the results directory, once every episode has finished.

    \b
    Example:
      stratagem magic balance --game chameleon --model openai/gpt-4o --keep 10 --yes

    Exit status: 0 every episode finished; 1 some failed (balance.json is not written; re-run
    to retry them); 2 bad input; 3 stopped early (budget, permanent model error); 130
    interrupted (Ctrl-C).
    """

    from stratagem.experiments.runner import STORE_FILE, Runner
    from stratagem.experiments.store import ResultStore
    from stratagem.studies.magic import balance as filtering

    use_plugins(plugin)
    run = filtering.BalanceRun(
        game=game, model=model, base_url=base_url, api_key_env=api_key_env,
        games_per_setting=games_per_setting, keep=keep, candidates=candidates, seed=seed,
        temperature=temperature, max_usd=max_usd, output=output,
    )  # fmt: skip
    config = run.config()
    runner = Runner(config, console=err, show_progress=progress)
    summary = plan_and_run(
        runner, runner.plan(), config.confirm, "magic balance", dry_run=dry_run, yes=yes
    )
    if summary is None:
        return
    candidates_list = run.candidate_settings()
    with ResultStore(run.directory / STORE_FILE) as store:
        rates = filtering.setting_rates(
            store, run.game, filtering.episode_settings(config), candidates_list
        )
    complete = not summary.stopped and not summary.failed
    # A partial run's ranking is shown, but nothing is marked kept until every game is in.
    kept = filtering.select_balanced(rates, run.keep) if complete else []
    _print_rates(run.game, rates, kept)
    if summary.stopped:
        _say(err, f"stopped: {summary.stopped}; balance.json not written (re-run to continue)")
        raise typer.Exit(3)
    if summary.failed:
        why = "; ".join(summary.reasons())
        _say(err, f"failed: {summary.failed} of {summary.episodes} episodes ({why}); "
                  "balance.json not written (re-run to retry them)")  # fmt: skip
        raise typer.Exit(1)
    names = filtering.kept_names(kept)
    if run.keep >= len(rates):
        _say(out, f"note: --keep {run.keep} keeps all {len(rates)} candidates; pass a smaller "
                  "--keep to drop the least even")  # fmt: skip
    _say(out, f"kept {len(names)} of {len(rates)} settings (closest to an even spy win rate):")
    _say(out, f"games: [{', '.join(names)}]")
    path = filtering.write_balance(run.directory, filtering.balance_document(run, rates, kept))
    _say(out, f"wrote {path}")


def _print_rates(game: str, rates: Sequence[SettingRate], kept: Sequence[SettingRate]) -> None:
    """Every candidate, most even first; settings without a finished game last."""
    from stratagem.studies.magic.balance import describe, ranked

    chosen = {r.setting for r in kept}
    order = ranked(rates)
    order += [r for r in rates if r.games == 0]
    rows = [
        [
            r.setting,
            describe(r.setting),
            "-" if r.rate is None else f"{float(r.rate):.3f}",
            str(r.games),
            "-" if r.distance is None else f"{float(r.distance):.3f}",
            "yes" if r.setting in chosen else "",
        ]
        for r in order
    ]
    title = Text(f"{game}: spy win rate per setting, most even first")
    out.print(fitted_table(BALANCE_COLUMNS, rows, out.width, title=title))
