"""Strategies by name, for configs and the command line.

Syntax: `Name`, `Name(arg, ...)` (the canonical form, which `Strategy.label` prints), or
`Name:arg,...`; `axl:<AxelrodClass>` with the same optional arguments for any Axelrod-library
strategy; and `<namespace>:Name`, `<namespace>:Name(arg, ...)` or `<namespace>:Name:arg,...` for a
plugin's strategy (`highcard:Bluffer(0.3)`). Arguments are numbers or bare words: `Random(0.3)`,
`Random:0.3`, `Pattern(1, 0)`, `Pattern(scissors, rock, paper)`, `axl:Grudger`, `axl:Random(0.3)`.
The text before a first `:` is read as a built-in name (`Random:0.3`) before it is read as a
plugin's namespace, so built-in names win.

Lookup ignores case, `-`, `_` and spaces, so `tit-for-tat`, `titfortat` and `TitForTat` are one
name (a plugin's name too, after its namespace, which is matched exactly). Besides canonical
names there are aliases: seed-001's abbreviations (AC, AD, GT, TFT, ...), Axelrod's class names,
and seed-003's bot names. seed-003 calls its best-response bot "TFT"; to
keep `TFT` meaning classic TitForTat, that bot is `BestResponseToLast`, alias `tft-br` or
`tit-for-tat-player`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

from stratagem.errors import StratagemError, unknown_name
from stratagem.games.base import Game
from stratagem.plugins import SEPARATOR, Registry, find, loading, unavailable
from stratagem.strategies.axelrod_adapter import PREFIX as AXELROD_PREFIX
from stratagem.strategies.axelrod_adapter import AxelrodStrategy
from stratagem.strategies.base import Strategy
from stratagem.strategies.counterfactual_bots import (
    BestResponseToLast,
    BestResponseToMode,
    Pattern,
    SingleRoundEquilibrium,
)
from stratagem.strategies.game_bots import GameBot
from stratagem.strategies.grudging import GrimTrigger, GrimTrigger2
from stratagem.strategies.mechanism_bot import MechanismBot
from stratagem.strategies.openspiel_bots import OpenSpielMCTS, OpenSpielRandom
from stratagem.strategies.reactive import (
    SuspiciousTitForTat,
    TitForTat,
    TitForTwoTats,
    WinStayLoseShift,
)
from stratagem.strategies.unconditional import Alternator, AlwaysCooperate, AlwaysDefect, Random

StrategyFactory = type[Strategy] | Callable[..., Strategy]


def _pattern(*pattern: int | str) -> Pattern:
    """`Pattern` takes its actions as one sequence; the registry passes them as arguments."""
    return Pattern(pattern or None)


STRATEGIES: Registry[StrategyFactory] = Registry("strategy")
"""Full name -> class or factory, called with the parsed arguments: stratagem's own (registered
below), then plugins' `<namespace>:<Name>` as they load (`register_strategy`)."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
"""What a registered name may be: the syntax puts arguments after `(` or `:`."""


def register_strategy(name: str, factory: StrategyFactory | type[GameBot]) -> str:
    """Register a strategy (a `Strategy` class or a function returning one, given the parsed
    arguments), or a bot of whole games (a `GameBot` class); while a plugin loads, its name
    becomes `<namespace>:<name>`. Returns the full name.
    A name that one of the same namespace (built-in names and aliases for a plain one) already
    has, up to case, `-` and `_`, is refused: a line-up could not tell them apart."""
    plugin = loading()
    namespace = plugin.namespace if plugin is not None else None
    short = name
    if namespace is not None and name.startswith(namespace + SEPARATOR):
        short = name[len(namespace) + len(SEPARATOR) :]
    if not _NAME.fullmatch(short):
        raise StratagemError(
            f"strategy name {name!r}: a letter or '_', then letters, digits, '-' or '_' "
            "(arguments come where it is used: Name(0.3))"
        )
    if not callable(factory):
        raise StratagemError(f"strategy '{name}': the factory must be callable, got {factory!r}")
    taken = _names(namespace).get(_key(short))
    if taken is not None:
        raise StratagemError(f"strategy '{name}': the name of '{taken}' already")
    if isinstance(factory, type) and issubclass(factory, GameBot):  # plays whole games
        return GAME_BOTS.add(name, factory)
    return STRATEGIES.add(name, cast(StrategyFactory, factory))


ALIASES: dict[str, str] = {
    # seed-001 §2 abbreviations and the usual literature names.
    "AC": "AlwaysCooperate",
    "ALLC": "AlwaysCooperate",
    "AD": "AlwaysDefect",
    "ALLD": "AlwaysDefect",
    "TFT": "TitForTat",
    "GT": "GrimTrigger",
    "Grim": "GrimTrigger",
    "GT2": "GrimTrigger2",
    "Grim2": "GrimTrigger2",
    "WSLS": "WinStayLoseShift",
    "Pavlov": "WinStayLoseShift",
    "TF2T": "TitForTwoTats",
    "STFT": "SuspiciousTitForTat",
    # Axelrod's class names for the same behaviour.
    "Cooperator": "AlwaysCooperate",
    "Defector": "AlwaysDefect",
    "Grudger": "GrimTrigger",
    "TitFor2Tats": "TitForTwoTats",
    # seed-003 §2.2 short names and bot names (MF in the PD family, AP in RPS: one behaviour).
    "srep": "SingleRoundEquilibrium",
    "single-round-equilibrium-player": "SingleRoundEquilibrium",
    "pp": "Pattern",
    "pattern-player": "Pattern",
    "mf": "BestResponseToMode",
    "ap": "BestResponseToMode",
    "adaptive-player": "BestResponseToMode",
    "tft-br": "BestResponseToLast",
    "tit-for-tat-player": "BestResponseToLast",
}
"""Other accepted names -> canonical name."""

_SPEC = re.compile(r"^\s*(?P<name>[^():,]+?)\s*(?:\((?P<paren>.*)\)|:(?P<colon>.*))?\s*$", re.S)
_INT = re.compile(r"^[+-]?\d+$")


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).lower()


def _names(namespace: str | None) -> dict[str, str]:
    """Lookup key -> full name: of stratagem's own names and aliases (and those registered
    in-process without a plugin) for None, else of that plugin's names loaded so far."""
    if namespace is None:
        own = {_key(n): n for n in STRATEGIES if SEPARATOR not in n}
        return own | {_key(alias): target for alias, target in ALIASES.items()}
    prefix = namespace + SEPARATOR
    return {_key(n[len(prefix) :]): n for n in STRATEGIES if n.startswith(prefix)}


for _factory in (
    AlwaysCooperate,
    AlwaysDefect,
    TitForTat,
    GrimTrigger,
    GrimTrigger2,
    Random,
    WinStayLoseShift,
    TitForTwoTats,
    SuspiciousTitForTat,
    Alternator,
    SingleRoundEquilibrium,
    BestResponseToMode,
    BestResponseToLast,
):
    register_strategy(_factory.name, _factory)
register_strategy(Pattern.name, _pattern)


def strategy_names() -> list[str]:
    """The names of stratagem's own strategies and of the plugins loaded so far (Axelrod's come
    as `axl:<Class>`)."""
    return sorted(STRATEGIES)


def _argument(text: str) -> int | float | str:
    text = text.strip()
    if _INT.match(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text.strip("'\"")


def parse_spec(spec: str) -> tuple[str, list[int | float | str]]:
    """Split `Name(a, b)` or `Name:a,b` (or `axl:`/`<namespace>:` before either) into the name,
    prefix included, and its parsed arguments."""
    prefix, name, args = _parse(spec)
    return prefix + name, args


def _parse(spec: str) -> tuple[str, str, list[int | float | str]]:
    """(`axl:`, `<namespace>:` or "", the name, its arguments)."""
    text = spec.strip()
    prefix = ""
    head, sep, rest = text.partition(SEPARATOR)
    if text[: len(AXELROD_PREFIX)].lower() == AXELROD_PREFIX:
        prefix, text = AXELROD_PREFIX, text[len(AXELROD_PREFIX) :]
    elif sep and not _builtin(head) and find(head.strip()) is not None:
        prefix, text = head.strip() + SEPARATOR, rest
    match = _SPEC.match(text)
    if not text or match is None:
        raise StratagemError(
            f"bad strategy '{spec}': expected Name, Name(arg, ...) or Name:arg,... "
            "(e.g. TitForTat, Random(0.3), axl:Grudger, mypkg:Bluffer)"
        )
    raw = match["paren"] if match["paren"] is not None else match["colon"]
    args = [_argument(a) for a in raw.split(",")] if raw and raw.strip() else []
    if any(a == "" for a in args):
        raise StratagemError(f"bad strategy '{spec}': empty argument")
    return prefix, match["name"], args


def _builtin(name: str) -> bool:
    """Whether `name` is one of stratagem's strategies, aliases or game bots (which win over a
    plugin namespace of the same spelling)."""
    key = _key(name)
    return key in _names(None) or any(_key(n) == key for n in GAME_BOTS)


GAME_BOTS: Registry[Callable[..., GameBot]] = Registry("game bot")
"""Bots of whole games (not repeated matrix games), seated like strategies: canonical name ->
class, called with the parsed arguments (`openspiel-mcts:200`); a plugin's bots are
`<namespace>:<name>`, registered with `register_strategy` as its strategies are."""
GAME_BOTS.add(OpenSpielRandom.name, OpenSpielRandom)
GAME_BOTS.add(OpenSpielMCTS.name, OpenSpielMCTS)


def get_game_bot(spec: str, game: Game | None = None) -> GameBot | None:
    """The game bot a seat names, or None when it names none (a strategy, perhaps). Given the
    `game` it is to play, a strategy seated in a game under a cooperation mechanism is the bot
    that plays it (`MechanismBot`)."""
    bot = _named_bot(spec)
    if bot is None and game is not None and MechanismBot.plays(game):
        return MechanismBot(lambda: get_strategy(spec))
    return bot


def _named_bot(spec: str) -> GameBot | None:
    prefix, name, args = _parse(spec)
    if prefix == AXELROD_PREFIX:
        return None
    canonical: str | None = prefix + name  # as registered; looking it up imports its plugin
    if canonical not in GAME_BOTS:
        canonical = {_key(n): n for n in GAME_BOTS if n.startswith(prefix)}.get(_key(prefix + name))
    if canonical is None:
        return None
    try:
        bot = GAME_BOTS[canonical](*args)
    except TypeError:
        raise StratagemError(
            f"bot '{canonical}' does not take the arguments {args} (from '{spec}')"
        ) from None
    if not isinstance(bot, GameBot):
        raise StratagemError(f"bot '{canonical}': its factory returned {bot!r}")
    return bot


def get_strategy(spec: str) -> Strategy:
    """A fresh strategy from its name and optional arguments (see the module docstring); a
    plugin's is loaded with it."""
    prefix, name, args = _parse(spec)
    if prefix == AXELROD_PREFIX:
        return AxelrodStrategy(prefix + name, *args)
    namespace = prefix.removesuffix(SEPARATOR) or None
    canonical: str | None = prefix + name  # as registered; looking it up imports its plugin
    if canonical not in STRATEGIES:
        canonical = _names(namespace).get(_key(name))
    if canonical is None:
        raise unavailable("strategy", prefix + name) or _unknown(prefix + name, spec)
    factory: Any = STRATEGIES[canonical]
    try:
        strategy = factory(*args)
    except TypeError:
        raise StratagemError(
            f"strategy '{canonical}' does not take the arguments {args} (from '{spec}')"
        ) from None
    if not isinstance(strategy, Strategy):
        raise StratagemError(f"strategy '{canonical}': its factory returned {strategy!r}")
    return strategy


def _unknown(name: str, spec: str) -> StratagemError:
    """The unknown-name error; for `x:...` where `x` is no name, a hint that it may be a plugin
    that was not named."""
    error = unknown_name("strategy", name, [*STRATEGIES, *ALIASES])
    if SEPARATOR in spec and SEPARATOR not in name:
        return StratagemError(
            f"{error}; if '{name}' is a plugin, install it or name it (--plugin, plugins:)"
        )
    return error
