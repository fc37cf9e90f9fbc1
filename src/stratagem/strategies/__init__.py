"""Rule-based players: classic IPD strategies, the studies' bots, and an Axelrod adapter.

Get one by name with `get_strategy("TitForTat")`, `get_strategy("Random(0.3)")` or
`get_strategy("axl:Grudger")`; see `registry` for the syntax and the aliases.
"""

from stratagem.strategies.axelrod_adapter import AxelrodStrategy, axelrod_names
from stratagem.strategies.base import COOPERATE, DEFECT, Classifier, Strategy
from stratagem.strategies.counterfactual_bots import (
    SEED003_PATTERNS,
    BestResponseToLast,
    BestResponseToMode,
    Pattern,
    SingleRoundEquilibrium,
    best_responses,
)
from stratagem.strategies.grudging import GrimTrigger, GrimTrigger2
from stratagem.strategies.lockstep import play_matches
from stratagem.strategies.machine import Machine, tabulate
from stratagem.strategies.match import MatchResult, play_match
from stratagem.strategies.reactive import (
    SuspiciousTitForTat,
    TitForTat,
    TitForTwoTats,
    WinStayLoseShift,
)
from stratagem.strategies.registry import (
    ALIASES,
    STRATEGIES,
    get_strategy,
    parse_spec,
    strategy_names,
)
from stratagem.strategies.unconditional import Alternator, AlwaysCooperate, AlwaysDefect, Random

__all__ = [
    "ALIASES",
    "COOPERATE",
    "DEFECT",
    "SEED003_PATTERNS",
    "STRATEGIES",
    "Alternator",
    "AlwaysCooperate",
    "AlwaysDefect",
    "AxelrodStrategy",
    "BestResponseToLast",
    "BestResponseToMode",
    "Classifier",
    "GrimTrigger",
    "GrimTrigger2",
    "Machine",
    "MatchResult",
    "Pattern",
    "Random",
    "SingleRoundEquilibrium",
    "Strategy",
    "SuspiciousTitForTat",
    "TitForTat",
    "TitForTwoTats",
    "WinStayLoseShift",
    "axelrod_names",
    "best_responses",
    "get_strategy",
    "parse_spec",
    "play_match",
    "play_matches",
    "strategy_names",
    "tabulate",
]
