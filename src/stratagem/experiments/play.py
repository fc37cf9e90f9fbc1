"""`stratagem play`: one episode of any game, a person in a seat or watching, as an experiment of
its own.

The command line names each seat (`--seat 0=human --seat 1=plain`); this module turns that into
the experiment an ordinary run would play, so the episode is stored, resumable and reportable like
any other. A seat is `human`, a rule-based strategy, `scripted:<actions>`, or an architecture
(`plain`, ...) played by `--model` or, written `plain@provider/model`, by that model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from stratagem.agents.registry import ARCHITECTURES
from stratagem.errors import StratagemError
from stratagem.experiments.config import ExperimentConfig, config_from_dict
from stratagem.experiments.lineups import PINNED
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import get_game

if TYPE_CHECKING:
    from stratagem.experiments.grid import EpisodeSpec
    from stratagem.experiments.runner import Runner

DEFAULT_MODEL = "local/gemma-3-270m"
PLAY_EXPERIMENT = "play"


def parse_seats(values: Sequence[str], n_seats: int) -> list[str]:
    """`N=WHO` options -> who sits in seats 0..n-1 (every seat named once; with no `human`
    seat the game is watched)."""
    seats: dict[int, str] = {}
    for value in values:
        index, sep, who = value.partition("=")
        if not sep or not index.strip().isdigit() or not who.strip():
            raise StratagemError(f"--seat {value!r}: expected SEAT=WHO, e.g. 0=human")
        seat = int(index)
        if seat >= n_seats:
            raise StratagemError(f"--seat {value!r}: the game has seats 0..{n_seats - 1}")
        if seat in seats:
            raise StratagemError(f"--seat {value!r}: seat {seat} is named twice")
        seats[seat] = who.strip()
    missing = [p for p in range(n_seats) if p not in seats]
    if missing:
        raise StratagemError(f"--seat: no player for seat(s) {', '.join(map(str, missing))}")
    return [seats[p] for p in range(n_seats)]


def parse_options(values: Sequence[str], seats: Sequence[str]) -> dict[str, dict[str, Any]]:
    """`KIND.OPTION=VALUE` options (`magic.probes=false`) -> each seated architecture's options;
    values read as YAML scalars. The architecture itself checks the names and values."""
    kinds = {k for who in seats if (k := who.partition(PINNED)[0]) in ARCHITECTURES}
    options: dict[str, dict[str, Any]] = {}
    for value in values:
        name, sep, text = value.partition("=")
        kind, dot, option = name.strip().partition(".")
        if not sep or not dot or not option:
            raise StratagemError(
                f"--set {value!r}: expected KIND.OPTION=VALUE, e.g. magic.probes=false"
            )
        if kind not in kinds:
            seated = ", ".join(sorted(kinds)) or "none"
            raise StratagemError(f"--set {value!r}: no seat plays {kind!r} (seated: {seated})")
        try:
            options.setdefault(kind, {})[option] = yaml.safe_load(text)
        except yaml.YAMLError:
            raise StratagemError(f"--set {value!r}: the value is not a YAML scalar") from None
    return options


def play_config(
    game: str,
    seats: Sequence[str],
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    model: str = DEFAULT_MODEL,
    rounds: int | None = None,
    seed: int = 0,
    output: Path = Path("results/play"),
) -> ExperimentConfig:
    """The experiment of one played episode; LLM seats are pinned to their model."""
    models = [model]
    lineup: list[str] = []
    for who in seats:
        kind, _, seat_model = who.partition(PINNED)
        if kind in ARCHITECTURES:
            seat_model = seat_model or model
            if seat_model not in models:
                models.append(seat_model)
            lineup.append(f"{kind}{PINNED}{seat_model}")
        else:
            lineup.append(who)
    kinds = sorted({k for who in seats if (k := who.partition(PINNED)[0]) in ARCHITECTURES})
    data: dict[str, Any] = {
        "name": PLAY_EXPERIMENT,
        "output": str(output),
        "models": [{"id": m, "model": m, "max_concurrency": 1} for m in models],
        "agents": [
            {"name": kind, "kind": kind, "options": dict((options or {}).get(kind, {}))}
            for kind in kinds
        ]
        or [{"name": "plain"}],
        "games": [game],
        "lineups": [lineup],
        "rounds": [rounds if rounds is not None else "study"],
        "seeds": [seed],
        "concurrency": 1,
    }
    return config_from_dict(data, "play")


def seats_of(game: str) -> int:
    """How many seats a catalog game has (for checking --seat before anything else)."""
    return get_game(game).n_players


def refuse_played(specs: Sequence[EpisodeSpec], out_dir: Path, seed: int) -> None:
    """A seed played to its end already cannot be played again in the same directory (its
    episode is stored): say so before anything is asked, not after (`stratagem play`, and a
    game started from the viewer)."""
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


def ending(runner: Runner, out_dir: Path) -> dict[str, Any]:
    """How the played episode ended, for the terminal and the pages: its payoffs, or why not."""
    from stratagem.experiments.runner import STORE_FILE

    with ResultStore(out_dir / STORE_FILE) as db:
        for spec in runner.specs:
            record = db.episode(spec.id)
            if record is not None and record.payoffs is not None:
                scores = ", ".join(f"seat {p}: {x:g}" for p, x in enumerate(record.payoffs))
                return {"episode": spec.id, "payoffs": record.payoffs, "scores": scores}
    errors = runner.summary.errors
    why = errors[0].partition(": ")[2] if errors else "it was stopped"
    return {"error": f"the game did not finish: {why}"}
