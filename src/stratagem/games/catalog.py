"""Games by name: the lookups every command makes (settings `chameleon/3`, seed-003's log names
`pd/sh`, other libraries' game strings `openspiel:chess`, plugins' `mypkg:game`), and a way to
declare new variants of a matrix game.

The names themselves are registered by their families (`games/registry.py`): this module imports
none of them.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from stratagem import plugins
from stratagem.errors import StratagemError, unknown_name
from stratagem.games import settings_data
from stratagem.games.base import Game
from stratagem.games.catalog_entry import CatalogEntry as CatalogEntry
from stratagem.games.libraries import is_library_name, library_entry
from stratagem.games.matrix.families import n_player_prisoners_dilemma as n_player_prisoners_dilemma
from stratagem.games.matrix.families import rock_paper_scissors as rock_paper_scissors
from stratagem.games.matrix.families import symmetric_tensor
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.registry import GAMES as GAMES
from stratagem.games.registry import register_game as register_game

LOG_FAMILIES: tuple[str, ...] = ("pd", "rps")
"""seed-003's logs name a game `<family>/<setting>`; the setting is the catalog's name."""


def game_names() -> list[str]:
    return list(GAMES)


SETTING_SEPARATOR = "/"
ALL_SETTINGS = "*"


def catalog_name(name: str) -> str:
    """The catalog name of a game as an episode names it: `pd/sh` -> `sh`, `rps/ba3` -> `ba3`
    (seed-003's log names, docs/episode-format.md), `chameleon/3` -> `chameleon` (a setting);
    other names unchanged."""
    family, _, setting = name.partition(SETTING_SEPARATOR)
    if family in LOG_FAMILIES and setting in GAMES:
        return setting
    return family if split_setting(name)[1] is not None else name


def is_known(name: str) -> bool:
    """Whether the engine knows the game an episode names: a catalog game (`catalog_name`) or
    another library's game string (`textarena:...`, replayed by the engine too)."""
    return catalog_name(name) in GAMES or is_library_name(name)


def split_setting(name: str) -> tuple[str, int | None]:
    """`chameleon/3` -> ("chameleon", 3) for a game with settings; (name, None) otherwise."""
    base, _, suffix = name.partition(SETTING_SEPARATOR)
    entry = GAMES.get(base)
    if entry is None or entry.settings is None or not suffix.isdigit():
        return name, None
    return base, int(suffix)


def expand_settings(name: str) -> list[str]:
    """`chameleon/*` -> the names of the settings an experiment plays (`chameleon/0` ...
    `chameleon/19`; the file's other settings are candidates, named one by one); any other name
    as it is."""
    base, _, suffix = name.partition(SETTING_SEPARATOR)
    if suffix != ALL_SETTINGS:
        return [name]
    entry = get_entry(base)
    if entry.settings is None:
        raise StratagemError(f"game '{base}' has no settings, so '{name}' names nothing")
    return [f"{base}{SETTING_SEPARATOR}{k}" for k in settings_data.selected(entry.settings)]


def catalog_labels(name: str) -> tuple[tuple[str, ...], ...] | None:
    """The action labels of the catalog matrix game an episode names, if it names one."""
    entry = GAMES.get(catalog_name(name))
    if entry is None:
        return None
    game = entry.factory()
    stage = game if isinstance(game, NormalFormGame) else game.matrix()
    return None if stage is None else stage.labels


def get_entry(name: str) -> CatalogEntry:
    """A catalog entry by name; `<name>/<k>` (a setting) names the entry of `<name>`."""
    entry = GAMES.get(split_setting(name)[0]) or library_entry(name)
    if entry is None:
        raise plugins.unavailable("game", name) or unknown_name("game", name, GAMES)
    return entry


def get_game(name: str, **options: Any) -> Game:
    """A fresh game by catalog name; `options` are passed to its factory (see `options()`);
    `<name>/<k>` plays setting k."""
    entry = get_entry(name)
    setting = split_setting(name)[1]
    if setting is not None:
        settings_data.setting(entry.settings or "", setting)  # a one-line error when out of range
        options = {**options, "setting": setting}
    valid = entry.options()
    for key in options:
        if key not in valid:
            hint = f"options: {', '.join(valid)}" if valid else "it takes no options"
            raise StratagemError(f"game '{name}' has no option '{key}': {hint}")
    return entry.factory(**options)


GRID_OPTIONS = ("setting", "rounds")
"""Factory options the experiment grid sets itself (`<game>/<k>`, `rounds:`), never a rule."""


def rule_options(name: str) -> tuple[str, ...]:
    """The options of a game's rules (an experiment file's `game_options`)."""
    return tuple(o for o in get_entry(name).options() if o not in GRID_OPTIONS)


def check_game_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The rule options of catalog game `name` (no setting) that differ from its defaults, checked
    by building the game with them: one-line errors name the game, the option and the value."""
    if name not in GAMES and library_entry(name) is None:
        raise plugins.unavailable("game", name) or unknown_name("game", name, GAMES)
    valid = rule_options(name)
    for key in options:
        if key not in valid:
            hint = f"options: {', '.join(valid)}" if valid else "it takes no rule options"
            raise StratagemError(f"game '{name}' has no option '{key}': {hint}")
    try:
        get_game(name, **options)
    except (TypeError, ValueError) as exc:
        raise StratagemError(f"game '{name}': {exc}") from None
    defaults = inspect.signature(get_entry(name).factory).parameters
    return {k: v for k, v in options.items() if v != defaults[k].default}


def get_stage(name: str, **options: Any) -> NormalFormGame:
    """A matrix game by catalog name (the stage game of a repeated game)."""
    game = get_game(name, **options)
    stage = game if isinstance(game, NormalFormGame) else game.matrix()
    if stage is None:
        matrix = [n for n, e in GAMES.items() if _stage_of(e.factory()) is not None]
        raise StratagemError(
            f"game '{name}' is not a matrix game, so it has no stage game; "
            f"matrix games: {', '.join(matrix)}"
        )
    return stage


def _stage_of(game: Game) -> NormalFormGame | None:
    return game if isinstance(game, NormalFormGame) else game.matrix()


# -- user-declared variants ----------------------------------------------------------------------


def _variant_labels(
    base: NormalFormGame, name: str, labels: Sequence[str] | Sequence[Sequence[str]]
) -> list[list[str]]:
    if isinstance(labels, str) or not isinstance(labels, Sequence) or not labels:
        raise StratagemError(f"variant '{name}': labels must be a non-empty list, got {labels!r}")
    if all(isinstance(x, str) for x in labels):
        return [list(labels)] * base.n_players  # type: ignore[arg-type]  # one list for all
    if len(labels) != base.n_players:
        raise StratagemError(
            f"variant '{name}': {len(labels)} label lists given, "
            f"'{base.name}' has {base.n_players} players"
        )
    out = []
    for p, ls in enumerate(labels):
        if isinstance(ls, str) or not isinstance(ls, Sequence):
            raise StratagemError(
                f"variant '{name}': labels of player {p + 1} must be a list, got {ls!r}"
            )
        out.append(list(ls))
    return out


def make_variant(
    base_name: str,
    name: str,
    labels: Sequence[str] | Sequence[Sequence[str]] | None = None,
    payoffs: ArrayLike | None = None,
    description: str = "",
) -> NormalFormGame:
    """A counterfactual of a catalog matrix game: new labels, new payoffs, or both.

    `labels` is one list for every player or one list per player. `payoffs` is the full tensor
    (actions of each player, then one payoff per player) or, for a symmetric 2-player base, the row
    player's matrix alone (the column player's is its transpose).
    """
    if not isinstance(name, str) or not name.strip():
        raise StratagemError(f"variant of '{base_name}': the name must be non-empty text")
    if name in GAMES:
        raise StratagemError(f"variant name '{name}' is already a catalog game; choose another")
    base = get_stage(base_name)
    if labels is None and payoffs is None:
        raise StratagemError(f"variant '{name}' of '{base_name}': give new labels, payoffs or both")
    new_labels = base.labels if labels is None else _variant_labels(base, name, labels)
    sizes = tuple(len(ls) for ls in new_labels)
    if payoffs is None:
        if sizes != base.sizes:
            raise StratagemError(
                f"variant '{name}': labels give {list(sizes)} actions but '{base_name}' has "
                f"{list(base.sizes)}; give payoffs for the new actions too"
            )
        tensor: ArrayLike = base.payoffs
    else:
        try:
            array = np.asarray(payoffs, dtype=float)
        except (TypeError, ValueError):
            raise StratagemError(
                f"variant '{name}': payoffs must be a nested list of numbers"
            ) from None
        full = (*sizes, len(sizes))
        row_shape = (sizes[0], sizes[0]) if base.is_symmetric() and len(set(sizes)) == 1 else None
        if array.shape == full:
            tensor = array
        elif array.shape == row_shape:
            tensor = symmetric_tensor(array)
        else:
            accepted = f"{full}" + (f" or the row player's matrix {row_shape}" if row_shape else "")
            raise StratagemError(
                f"variant '{name}': payoffs have shape {array.shape}, expected {accepted}"
            )
    return base.transform(name, labels=new_labels, payoffs=tensor, description=description)
