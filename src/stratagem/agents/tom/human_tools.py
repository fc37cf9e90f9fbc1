"""TradeCraft's tools at the terminal (seed-002 §2.6): a person in `stratagem play` may query
what a model may (`?item`, `?recipes`) and craft step by step (`check`, `apply`, `done`), with
the same answers, from `tools`; the move sent is the bench's own craft action, so the
game checks it exactly as it checks a typed JSON list. Queries are not attempts at a move.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from stratagem.agents.tom.tools import CraftBench, ToolAnswer, run_tool
from stratagem.games.base import Game, Observation
from stratagem.games.tradecraft.actions import CraftSpace, DecisionSpace, ProposalSpace
from stratagem.games.tradecraft.game import TradecraftGame, TradecraftObservation
from stratagem.games.tradecraft.rules import load_rules

HELP = (
    "tools: ?item <name> (an item's recipes, uses and fuel value), "
    "?recipes (what your hand can craft), ?help"
)
CRAFT_HELP = (
    'craft step by step: check {"input": {"oak_planks": "1/2"}, "output": {"stick": 1}}, '
    "then apply; done (or an empty line) submits the crafts applied"
)
DONE = ("", "done")


class Desk:
    """One TradeCraft turn's tools for the person: a craft bench in the craft phase."""

    def __init__(self, game: Game, observation: TradecraftObservation) -> None:
        space = observation.legal
        craft = space if isinstance(space, CraftSpace) else None
        rules = game.rules if isinstance(game, TradecraftGame) else load_rules()
        self.rules = craft.rules if craft and craft.rules else rules
        self.hand = dict(craft.hand) if craft else dict(observation.hands[observation.player])
        self.bench = CraftBench(self.rules, self.hand) if craft else None
        self.help = HELP + ("\n" + CRAFT_HELP if craft else "")

    def run(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        return run_tool(name, arguments, self.rules, self.hand, self.bench)

    def check(self, rest: str) -> ToolAnswer:
        try:
            arguments = json.loads(rest)
        except json.JSONDecodeError as error:
            return ToolAnswer(
                f"check: not JSON ({error.msg}); {CRAFT_HELP}", False, "bad_arguments"
            )
        return self.run("craft_recipe_check", arguments)

    def take(self, line: str, tell: Callable[[str], None]) -> str | None:
        """The line to read as the move (the bench's crafts for `done`), or None when it was a
        tool step, answered through `tell`."""
        word, _, rest = line.strip().partition(" ")
        if self.bench is not None and word.lower() in DONE and not rest:
            tell(self.bench.finish().content)
            return self.bench.action()
        command = COMMANDS.get(word.lower()) or (_help if word.startswith("?") else None)
        if command is None:
            return line
        tell(command(self, rest.strip()).content)
        return None


def _help(desk: Desk, _: str) -> ToolAnswer:
    return ToolAnswer(desk.help, True)


COMMANDS: dict[str, Callable[[Desk, str], ToolAnswer]] = {
    "?item": lambda desk, rest: desk.run("item_info", {"item": rest}),
    "?recipes": lambda desk, _: desk.run("possible_recipes_from_hand", {}),
    "?help": _help,
    "check": Desk.check,
    "apply": lambda desk, _: desk.run("craft_recipe_apply", {}),
}


def desk_for(game: Game, observation: Observation) -> Desk | None:
    """The person's tools when this is a TradeCraft move, else None (other games are as before)."""
    phases = (ProposalSpace, DecisionSpace, CraftSpace)
    if isinstance(observation, TradecraftObservation) and isinstance(observation.legal, phases):
        return Desk(game, observation)
    return None
