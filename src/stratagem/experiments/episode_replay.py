"""An imported episode of a catalog game, checked by the engine (docs/episode-format.md).

The engine alone changes game state, in play and on import alike: a record that carries its moves
(the episode loop's "decision" events) is played again from its game, setting and seed
(`games.replay`), and everything the engine produces must be what the record says: the game's own
events (hands, votes, the outcome: the events with no player), the rounds of a repeated game, and
the payoffs. A setting that does not exist is refused as `play` refuses it. A matrix game's record
made elsewhere carries rounds only (seed-003's logs, the thesis' CSVs) and keeps the checks of its
labels; every other game of the catalog has no record but its moves, so it must carry them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from stratagem import plugins
from stratagem.errors import StratagemError
from stratagem.experiments import provenance
from stratagem.experiments.episode import DECISION_EVENT, ROUND_EVENT
from stratagem.experiments.episode_fields import EpisodeFormatError, bad_value
from stratagem.experiments.grid import build_game, setting_key
from stratagem.experiments.records import EpisodeBundle, EventRecord, dump_json
from stratagem.games.base import Event, Game
from stratagem.games.catalog import (
    GAMES,
    check_game_options,
    get_game,
    split_setting,
)
from stratagem.games.libraries import is_library_name
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.replay import Move, Replay, ReplayError, replay

_SHOWN = 80
"""Characters of a value an error message shows."""


def check_by_engine(bundle: EpisodeBundle, game_field: str = "game") -> None:
    """Replay an episode of a catalog game and compare; `EpisodeFormatError` names the first
    field that is not what the engine computes. `game_field` is where the line names its game."""
    ep = bundle.episode
    try:  # a plugin's game is replayed by the plugin's code, the version that played it
        provenance.check(provenance.recorded(ep.spec), "the episode")
    except StratagemError as exc:
        raise EpisodeFormatError("spec.plugins", str(exc)) from None
    base, setting = split_setting(ep.game)
    if base not in GAMES and not is_library_name(base):
        missing = plugins.unavailable("game", base)
        if missing is not None:
            raise EpisodeFormatError(game_field, str(missing))
        return  # another tool's game, or seed-003's `pd/<setting>`: checked by its labels
    try:
        sample = get_game(ep.game)  # a setting that does not exist is refused as `play` does
    except StratagemError as exc:
        raise EpisodeFormatError(game_field, str(exc)) from None
    events = sorted(enumerate(bundle.events), key=lambda item: item[1].seq)
    decisions = [(i, e) for i, e in events if e.kind == DECISION_EVENT]
    repeated = isinstance(sample, NormalFormGame)  # the runner plays it repeated
    if not decisions and (repeated or sample.matrix() is not None):
        return  # a matrix game's rounds, recorded elsewhere: checked by its labels
    if not decisions and ep.status != "finished" and all(e.player is not None for _, e in events):
        return  # an episode that never began: nothing the engine could compare
    if len(ep.players) != sample.n_players:
        raise EpisodeFormatError(
            "players", f"'{ep.game}' has {sample.n_players} seats, got {len(ep.players)}"
        )
    game = _game(bundle, setting, repeated)
    moves = [_move(i, e) for i, e in decisions]
    assert isinstance(ep.seed, int)  # checked by `_game`
    try:
        played = replay(game, ep.seed, moves)
    except ReplayError as exc:
        where = "events" if exc.move is None else f"events[{decisions[exc.move][0]}].data.action"
        raise EpisodeFormatError(where, exc.why) from None
    if ep.status == "finished" and not played.state.is_terminal():
        raise EpisodeFormatError(
            "events",
            f"the moves end before the game does (players {list(played.state.to_act())} move "
            "next), yet the status is finished",
        )
    for step in played.steps:  # each move belongs to its step's round, as the loop records it
        for m in step.moves:
            _same(step.moment, decisions[m][1].round, f"events[{decisions[m][0]}].round")
    _compare_events(played, [(i, e) for i, e in events if e.player is None])
    _compare_rounds(bundle, played, [e for _, e in decisions])
    _compare_outcome(bundle, played, game)


def _game(bundle: EpisodeBundle, setting: int | None, repeated: bool) -> Game:
    """The game as the runner built it for this episode (`EpisodeSpec.build_game`)."""
    ep = bundle.episode
    if isinstance(ep.seed, bool) or not isinstance(ep.seed, int):
        raise bad_value("seed", f"the integer seed the engine replays '{ep.game}' from", ep.seed)
    recorded = ep.spec.get("setting")
    if (
        recorded is not None
        and setting is not None
        and setting_key(ep.game) != {"setting": recorded}
    ):
        raise EpisodeFormatError(
            "spec.setting",
            f"not setting {setting} of '{ep.game.partition('/')[0]}' as this stratagem has it "
            "(were the settings regenerated?), so the engine cannot replay it",
        )
    rounds = ep.spec.get("rounds")
    if rounds is None and repeated:
        raise EpisodeFormatError(
            "spec.rounds", "missing: the engine replays a repeated game for its number of rounds"
        )
    if rounds is not None and (isinstance(rounds, bool) or not isinstance(rounds, int)):
        raise bad_value("spec.rounds", "an integer", rounds)
    options = ep.spec.get("game_options", {})
    if not isinstance(options, dict):
        raise bad_value("spec.game_options", "a mapping of the game's rule options", options)
    try:
        check_game_options(ep.game.partition("/")[0], options)
    except StratagemError as exc:
        raise EpisodeFormatError("spec.game_options", str(exc)) from None
    try:
        return build_game(ep.game, None, rounds, options)
    except StratagemError as exc:
        raise EpisodeFormatError("spec.rounds", str(exc)) from None


def _move(index: int, event: EventRecord) -> Move:
    if event.player is None:
        raise EpisodeFormatError(
            f"events[{index}].player", "a decision names the seat that made it"
        )
    if not isinstance(event.data, dict) or "action" not in event.data:
        raise EpisodeFormatError(f"events[{index}].data.action", "missing")
    return event.player, event.data["action"]


def _compare_events(played: Replay, stored: Sequence[tuple[int, EventRecord]]) -> None:
    """The game's own events, in order, with their rounds and visibility."""
    expected: list[tuple[int, Event]] = [(0, e) for e in played.opening]
    for step in played.steps:
        expected += [(step.moment, e) for e in step.events if e.kind != ROUND_EVENT]
    for k, (t, event) in enumerate(expected):
        if k >= len(stored):
            raise EpisodeFormatError(
                "events", f"the engine's {event.kind!r} event of round {t} is missing"
            )
        i, record = stored[k]
        visible = None if event.visible_to is None else sorted(event.visible_to)
        got = None if record.visible_to is None else list(record.visible_to)
        for name, want, found in (
            ("kind", event.kind, record.kind),
            ("round", t, record.round),
            ("visible_to", visible, got),
            ("data", _plain(event.data), record.data),
        ):
            _same(want, found, f"events[{i}].{name}")
    if len(stored) > len(expected):
        i, record = stored[len(expected)]
        raise EpisodeFormatError(
            f"events[{i}]",
            f"an event with no player is the game's own, and the engine produces no "
            f"{record.kind!r} event here",
        )


def _compare_rounds(bundle: EpisodeBundle, played: Replay, decisions: list[EventRecord]) -> None:
    """A repeated game's rounds: the engine's "round" events, valid when every move of the step
    was (as the episode loop stores them)."""
    expected = [
        (e.data, all(decisions[m].data.get("valid") is not False for m in step.moves))
        for step in played.steps
        for e in step.events
        if e.kind == ROUND_EVENT
    ]
    if len(bundle.rounds) != len(expected):
        raise EpisodeFormatError(
            "rounds", f"expected {len(expected)} as the engine plays the moves, got "
            f"{len(bundle.rounds)}",
        )  # fmt: skip
    for j, (r, (data, valid)) in enumerate(zip(bundle.rounds, expected, strict=True)):
        payoffs = None if r.payoffs is None else list(r.payoffs)
        _same(data["round"], r.round, f"rounds[{j}].round")
        _same(_plain(data["actions"]), list(r.actions), f"rounds[{j}].actions")
        _same(_plain(data["payoffs"]), payoffs, f"rounds[{j}].payoffs")
        _same(valid, r.valid, f"rounds[{j}].valid")


def _compare_outcome(bundle: EpisodeBundle, played: Replay, game: Game) -> None:
    ep = bundle.episode
    state = played.state
    if ep.status == "finished" or ep.payoffs is not None:
        got = None if ep.payoffs is None else list(ep.payoffs)
        _same(list(state.payoffs()), got, "payoffs")
    stage = game.matrix()
    for name, value, want in (
        ("labels", ep.labels, None if stage is None else [list(ls) for ls in stage.labels]),
        ("payoffs", ep.game_payoffs, None if stage is None else stage.payoffs.tolist()),
    ):
        if value is None:
            continue
        if want is None:
            raise EpisodeFormatError(f"game.{name}", f"'{ep.game}' is not a matrix game")
        _same(want, _plain(value), f"game.{name}")


def _plain(value: Any) -> Any:
    """A value as its record holds it: through the store's JSON (tuples become lists)."""
    return json.loads(dump_json(value, "event data"))


def _same(want: Any, got: Any, path: str) -> None:
    """Refuse, at the first path where they differ, a recorded value that is not the engine's."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got), key=str):
            if key not in got:
                raise EpisodeFormatError(
                    f"{path}.{key}", f"missing: the engine has {_show(want[key])}"
                )
            if key not in want:
                raise EpisodeFormatError(f"{path}.{key}", "the engine computes no such field")
            _same(want[key], got[key], f"{path}.{key}")
        return
    nested = any(isinstance(x, dict | list) for x in [*_items(want), *_items(got)])
    if nested and isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for j, (a, b) in enumerate(zip(want, got, strict=True)):
            _same(a, b, f"{path}[{j}]")
        return
    if not _equal(want, got):
        raise EpisodeFormatError(
            path, f"expected {_show(want)} as the engine computes it, got {_show(got)}"
        )


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _equal(a: Any, b: Any) -> bool:
    """Equal values (a list of plain values is one, such as payoffs), a number equal to a number
    of either type but never to a boolean."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def _show(value: Any) -> str:
    """A value as JSON, cut short: an event's data can be long."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
