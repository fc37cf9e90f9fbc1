"""Strategies by name, for configs and the command line.

Syntax: `Name`, `Name(arg, ...)` (the canonical form, which `Strategy.label` prints), or
`Name:arg,...`; and `axl:<AxelrodClass>` with the same optional arguments for any Axelrod-library
strategy. Arguments are numbers or bare words: `Random(0.3)`, `Random:0.3`, `Pattern(1, 0)`,
`Pattern(scissors, rock, paper)`, `axl:Grudger`, `axl:Random(0.3)`.

Lookup ignores case, `-`, `_` and spaces, so `tit-for-tat`, `titfortat` and `TitForTat` are one
name. Besides canonical names there are aliases: seed-001's abbreviations (AC, AD, GT, TFT, ...),
Axelrod's class names, and seed-003's bot names. seed-003 calls its best-response bot "TFT"; to
keep `TFT` meaning classic TitForTat, that bot is `BestResponseToLast`, alias `tft-br` or
`tit-for-tat-player`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from stratagem.errors import StratagemError, unknown_name
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


STRATEGIES: dict[str, StrategyFactory] = {
    AlwaysCooperate.name: AlwaysCooperate,
    AlwaysDefect.name: AlwaysDefect,
    TitForTat.name: TitForTat,
    GrimTrigger.name: GrimTrigger,
    GrimTrigger2.name: GrimTrigger2,
    Random.name: Random,
    WinStayLoseShift.name: WinStayLoseShift,
    TitForTwoTats.name: TitForTwoTats,
    SuspiciousTitForTat.name: SuspiciousTitForTat,
    Alternator.name: Alternator,
    SingleRoundEquilibrium.name: SingleRoundEquilibrium,
    Pattern.name: _pattern,
    BestResponseToMode.name: BestResponseToMode,
    BestResponseToLast.name: BestResponseToLast,
}
"""Canonical name -> class or factory; called with the parsed arguments."""

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


_LOOKUP: dict[str, str] = {_key(n): n for n in STRATEGIES} | {
    _key(alias): target for alias, target in ALIASES.items()
}


def strategy_names() -> list[str]:
    """The canonical names of stratagem's own strategies (Axelrod's come as `axl:<Class>`)."""
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
    """Split `Name(a, b)` or `Name:a,b` into the name and its parsed arguments."""
    text = spec.strip()
    prefix = ""
    if text[: len(AXELROD_PREFIX)].lower() == AXELROD_PREFIX:
        prefix, text = AXELROD_PREFIX, text[len(AXELROD_PREFIX) :]
    match = _SPEC.match(text)
    if not text or match is None:
        raise StratagemError(
            f"bad strategy '{spec}': expected Name, Name(arg, ...) or Name:arg,... "
            "(e.g. TitForTat, Random(0.3), axl:Grudger)"
        )
    raw = match["paren"] if match["paren"] is not None else match["colon"]
    args = [_argument(a) for a in raw.split(",")] if raw and raw.strip() else []
    if any(a == "" for a in args):
        raise StratagemError(f"bad strategy '{spec}': empty argument")
    return prefix + match["name"], args


GAME_BOTS: dict[str, Callable[..., GameBot]] = {
    OpenSpielRandom.name: OpenSpielRandom,
    OpenSpielMCTS.name: OpenSpielMCTS,
}
"""Bots of whole games (not repeated matrix games), seated like strategies: canonical name ->
class, called with the parsed arguments (`openspiel-mcts:200`)."""


def get_game_bot(spec: str) -> GameBot | None:
    """The game bot a seat names, or None when it names none (a strategy, perhaps)."""
    name, args = parse_spec(spec)
    canonical = {_key(n): n for n in GAME_BOTS}.get(_key(name))
    if canonical is None:
        return None
    try:
        return GAME_BOTS[canonical](*args)
    except TypeError:
        raise StratagemError(
            f"bot '{canonical}' does not take the arguments {args} (from '{spec}')"
        ) from None


def get_strategy(spec: str) -> Strategy:
    """A fresh strategy from its name and optional arguments (see the module docstring)."""
    name, args = parse_spec(spec)
    if name.startswith(AXELROD_PREFIX):
        return AxelrodStrategy(name, *args)
    canonical = _LOOKUP.get(_key(name))
    if canonical is None:
        raise unknown_name("strategy", name, [*STRATEGIES, *ALIASES])
    factory: Any = STRATEGIES[canonical]
    try:
        strategy: Strategy = factory(*args)
    except TypeError:
        raise StratagemError(
            f"strategy '{canonical}' does not take the arguments {args} (from '{spec}')"
        ) from None
    return strategy
