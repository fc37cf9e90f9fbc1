"""`stratagem play`: one episode with people in seats, typed in the terminal or, with `--web`,
played in the browser (a page per human seat, each with its own link); with no human seat, the
game is watched as it is played (`play_watch`)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from stratagem.cli.common import PluginOption, _say, app, checked_seed, err, out, use_plugins
from stratagem.cli.play_watch import checked_pace, watch_terminal, watch_web
from stratagem.errors import StratagemError
from stratagem.web.play import DEFAULT_PACE, IDLE_SECONDS


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
    set_option: Annotated[
        list[str] | None,
        typer.Option(
            "--set", help="KIND.OPTION=VALUE: an architecture's option (magic.probes=false)."
        ),
    ] = None,
    rounds: Annotated[int | None, typer.Option(help="Rounds of a repeated game.")] = None,
    seed: Annotated[
        int | None,
        typer.Option(help="Episode seed (default: new each time).", callback=checked_seed),
    ] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Results directory.")] = Path(
        "results/play"
    ),
    web: Annotated[
        bool, typer.Option("--web", help="Play in the browser: a link per human seat.")
    ] = False,
    port: Annotated[int | None, typer.Option(help="With --web: the port (default: free).")] = None,
    host: Annotated[
        str,
        typer.Option(help="With --web: the address to bind (other than 127.0.0.1: a token)."),
    ] = "127.0.0.1",
    open_browser: Annotated[
        bool, typer.Option("--open", help="With --web: open the first seat's link.")
    ] = False,
    idle: Annotated[
        float,
        typer.Option(help="With --web: seconds a move waits for a closed page before giving up."),
    ] = IDLE_SECONDS,
    pace: Annotated[
        float | None,
        typer.Option(
            help=f"With no human seat (a game you watch): seconds of pause after each step "
            f"(default {DEFAULT_PACE:g}; 0: as fast as it plays).",
            callback=checked_pace,
        ),
    ] = None,
    plugin: PluginOption = None,
) -> None:
    """Play a game in the terminal or the browser, in any seat, against agents, strategies or
    other people; with no human seat, watch it played."""
    from stratagem.experiments import play as playing
    from stratagem.experiments.runner import Runner

    use_plugins(plugin)
    if not web:
        web_only = {"port": port is not None, "open": open_browser,
                    "host": host != "127.0.0.1", "idle": idle != IDLE_SECONDS}  # fmt: skip
        given = [f"--{name}" for name, set_ in web_only.items() if set_]
        if given:
            raise StratagemError(f"{', '.join(given)}: only with --web")
    if idle <= 0:
        raise StratagemError(f"--idle {idle:g}: a number of seconds > 0")
    seats = playing.parse_seats(seat, playing.seats_of(game))
    humans = [k for k, who in enumerate(seats) if who == "human"]
    if humans and pace is not None:
        raise StratagemError("--pace: only for a game with no human seat (one you watch)")
    if not humans and idle != IDLE_SECONDS:
        raise StratagemError("--idle: only with a human seat")
    chosen = seed if seed is not None else time.time_ns() % 2**31
    options = playing.parse_options(set_option or [], seats)
    config = playing.play_config(
        game, seats, options=options, model=model, rounds=rounds, seed=chosen, output=out_dir
    )
    if not humans:
        watched = Runner(config, console=err, show_progress=False)
        playing.refuse_played(watched.specs, out_dir, chosen)
        paced = DEFAULT_PACE if pace is None else pace
        if web:
            watch_web(watched, out_dir, paced, port, host, open_browser)
        else:
            watch_terminal(watched, out_dir, paced)
        return
    if web:
        _play_web(config, humans, out_dir, chosen, port, host, open_browser, idle)
        return
    from stratagem.agents.human import HumanPlayer
    from stratagem.analysis.transcript import clean
    from stratagem.experiments import event_loop

    def tell(text: str) -> None:
        out.print(clean(text), markup=False, highlight=False, soft_wrap=True)

    async def ask(prompt: str) -> str | None:
        import asyncio

        line = await asyncio.to_thread(_read_line, prompt)
        return None if line is None else line.rstrip("\n")

    runner = Runner(config, console=err, show_progress=False,
                    human=lambda g, _: HumanPlayer(g, ask, tell))  # fmt: skip
    playing.refuse_played(runner.specs, out_dir, chosen)
    summary = event_loop.run(runner.run())
    end = playing.ending(runner, out_dir)
    if "payoffs" in end:
        tell(f"game over: {end['scores']}  (stratagem show {out_dir} {end['episode']})")
    if summary.failed:
        raise StratagemError(f"the game did not finish: {summary.errors[0]}")


def _play_web(
    config: Any, humans: list[int], out_dir: Path, seed: int, port: int | None, host: str,
    open_browser: bool, idle: float,
) -> None:  # fmt: skip
    """The game served to the human seats' pages (`web.play`), their links printed first."""
    import secrets
    import webbrowser
    from shlex import quote

    from stratagem.cli.view import LOCAL_HOSTS, _listen
    from stratagem.experiments import event_loop
    from stratagem.experiments.play import ending, refuse_played
    from stratagem.experiments.runner import Runner
    from stratagem.web.play.session import PlaySession, play_served

    session = PlaySession(config.games[0], humans, idle)
    runner = Runner(config, console=err, show_progress=False, human=session.player)
    refuse_played(runner.specs, out_dir, seed)
    token = None if host in LOCAL_HOSTS else secrets.token_urlsafe(24)
    sock = _listen(host, port)
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{sock.getsockname()[1]}/" + (f"?token={token}" if token else "")
    links = session.links(base)
    for k, link in links.items():
        _say(out, f"seat {k}: {link}")
    if open_browser:
        webbrowser.open(links[humans[0]])
    with sock:
        try:
            replay = f"stratagem view {quote(str(out_dir))}"  # the seats' pages show it
            summary = event_loop.run(
                play_served(
                    session,
                    runner,
                    sock,
                    token=token,
                    ending=lambda: {**ending(runner, out_dir), "command": replay},
                )
            )
        except KeyboardInterrupt:
            _say(err, "interrupted: the game is left unfinished")
            raise typer.Exit(130) from None
    end = ending(runner, out_dir)
    if "payoffs" in end:
        _say(out, f"game over: {end['scores']}  (stratagem show {out_dir} {end['episode']})")
    if summary.failed:
        raise StratagemError(f"the game did not finish: {summary.errors[0]}")


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
