"""The one door for what a study is made of: games, architectures, strategies, model providers,
studies and viewer views, from stratagem's own families or from a plugin.

A plugin module (docs/plugins.md) calls these functions when it is imported:

```python
from stratagem import register

register.game("high-card", HighCard, prompts="prompts/high-card", view="views/high_card.js")
register.strategy("Bluffer", Bluffer)
```

While stratagem loads a plugin, each name it registers becomes `<namespace>:<name>`
(`highcard:high-card`), the name an experiment file, the command line and the stored episodes
use; each function returns that full name. Called from a plain script (no plugin loading), a
name is registered as given. Built-in names win: a plugin cannot replace one.

stratagem's own families register with the same functions of each layer these delegate to
(`games.registry.register_game`, `agents.registry.register`, ...).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stratagem.agents.game_prompts import GamePrompts, register_prompts
from stratagem.agents.prompt_variants import register_variant
from stratagem.agents.registry import Architecture
from stratagem.agents.registry import register as _register_architecture
from stratagem.errors import StratagemError
from stratagem.games.base import Game
from stratagem.games.catalog_entry import CatalogEntry
from stratagem.games.registry import register_game
from stratagem.llm.registry import ProviderSource, register_provider
from stratagem.strategies.game_bots import GameBot
from stratagem.strategies.registry import StrategyFactory, register_strategy
from stratagem.studies.registry import Study
from stratagem.studies.registry import register as _register_study
from stratagem.web.views import register_view

__all__ = ["architecture", "game", "prompts", "provider", "strategy", "study", "view"]


def game(
    name: str,
    factory: Callable[..., Game],
    *,
    description: str | None = None,
    source: str = "",
    family: str | None = None,
    rounds: tuple[int, ...] = (),
    prompts: str | Path | None = None,
    amount: str = "amount",
    text: str = "message",
    view: str | Path | None = None,
) -> str:
    """Register a game under `name`; returns its full name.

    `factory` builds the game; its keyword parameters (with defaults) are the game's rule
    options, set by an experiment's `game_options` (`rounds` and `setting` are the grid's).
    `prompts` is the folder of the general LLM player's templates (`system.j2`, `turn.j2`), and
    `amount`/`text` what an integer or a free-text reply is called in them; `view` a JavaScript
    file that draws the game's steps in the viewer (a generic view otherwise). Relative paths
    are read from the registering module's folder.
    """
    base = _caller_folder()
    built = _build(name, factory)
    entry = register_game(
        CatalogEntry(
            name=name,
            description=description if description is not None else built.description(),
            source=source or f"plugin ({factory.__module__})",
            family=family or name,
            factory=factory,
            rounds=tuple(rounds),
        )
    )
    if prompts is not None:
        folder = _path(prompts, base, "prompts", entry.name)
        if not (folder / "system.j2").is_file() or not (folder / "turn.j2").is_file():
            raise StratagemError(
                f"game '{entry.name}': prompts folder {folder} needs system.j2 and turn.j2"
            )
        register_prompts(
            type(built), GamePrompts(folder.name, amount=amount, text=text, directory=folder.parent)
        )
    if view is not None:
        register_view(entry.name, _path(view, base, "view", entry.name))
    return entry.name


def architecture(value: Architecture) -> str:
    """Register an LLM agent architecture (`stratagem.agents.registry.Architecture`); returns
    its full name, the `kind` an experiment's agent entry names."""
    return _register_architecture(value).name


def strategy(name: str, factory: StrategyFactory | type[GameBot]) -> str:
    """Register a rule-based strategy (a `Strategy` class or a function returning one, whose
    arguments a line-up gives as `name(1, 2)`), or a bot of whole games (a `GameBot` class,
    for games other than repeated matrix games); returns its full name."""
    return register_strategy(name, factory)


def provider(prefix: str, factory: ProviderSource) -> str:
    """Register a model provider: model strings `<prefix>/<model>` are served by
    `factory(config) -> Provider`, or by a provider module named by its dotted name (imported
    on first use; `create(config)`, and the checks `check(name)`, `check_config(config)` and
    `ready(config)` a dry run asks, if it has them), as stratagem's own are. Returns the full
    prefix."""
    return register_provider(prefix, factory)


def study(value: Study) -> str:
    """Register a study: its report sections, analysis options (`report --set`), per-game table,
    the leaderboards the viewer shows (`Study.leaderboards`) and import/export formats; returns
    its full name."""
    return _register_study(value).name


def view(game_or_family: str, path: str | Path) -> str:
    """Register the viewer's step view of a game (or a family) from a JavaScript file; returns
    the key it was registered under."""
    return register_view(game_or_family, _path(path, _caller_folder(), "view", game_or_family))


def prompts(name: str, folder: str | Path) -> str:
    """Register a prompt variant: a folder of template folders (`neutral/`, a game's), whose
    files replace the packaged ones of those names where an experiment's `prompts:` entry names
    it (`templates: <namespace>:<name>`; docs/prompt-variants.md). Returns its full name."""
    return register_variant(name, _path(folder, _caller_folder(), "prompts", name))


def _build(name: str, factory: Callable[..., Game]) -> Game:
    """The game with its default options: it must be one, or nothing can play it."""
    if not callable(factory):
        raise StratagemError(f"game '{name}': the factory must be callable, got {factory!r}")
    try:
        built = factory()
    except Exception as exc:
        raise StratagemError(
            f"game '{name}': its factory fails with its default options: {exc}"
        ) from None
    if not isinstance(built, Game):
        raise StratagemError(f"game '{name}': the factory must return a Game, got {built!r}")
    return built


def _caller_folder() -> Path:
    """The folder of the module that called into this one (two frames up)."""
    frame = sys._getframe(2)
    file: Any = frame.f_globals.get("__file__")
    return Path(file).resolve().parent if file else Path.cwd()


def _path(value: str | Path, base: Path, what: str, owner: str) -> Path:
    path = Path(value).expanduser()
    path = path if path.is_absolute() else base / path
    if not path.exists():
        raise StratagemError(f"{owner}: {what} {path} does not exist")
    return path.resolve()
