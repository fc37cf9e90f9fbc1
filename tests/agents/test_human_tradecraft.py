"""A person at the terminal in TradeCraft (seed-002 §2.6): `?item`, `?recipes` and `?help` are
answered by the same tools a model calls and are not attempts; in the craft phase `check`,
`apply` and `done` build the craft move step by step, and a typed JSON list still works."""

from __future__ import annotations

import asyncio
import json

from stratagem.agents.base import Decision
from stratagem.agents.human import HumanPlayer
from stratagem.agents.tom.human_tools import HELP, desk_for
from stratagem.games.base import Game, State
from stratagem.games.tradecraft.game import TradecraftGame
from stratagem.games.ultimatum import UltimatumGame

GAME = TradecraftGame(0)
PROPOSAL = '{"offer": {"coal": 1}, "request": {"raw_iron": 1}}'
SMELT = 'check {"input": {"raw_iron": 1, "cherry_planks": "2/3"}, "output": {"iron_ingot": 1}}'
SHEARS = 'check {"input": {"iron_ingot": 2}, "output": {"shears": 1}}'


def act(game: Game, state: State, seat: int, typed: list[str]) -> tuple[Decision, list[str]]:
    """The person's decision when they type `typed` in turn, and every text they were shown."""
    told: list[str] = []
    lines = iter(typed)

    async def ask(prompt: str) -> str | None:
        told.append(prompt)
        return next(lines, None)

    player = HumanPlayer(game, ask, told.append)
    return asyncio.run(player.act(state.observation(seat))), told


def craft_phase() -> State:
    state = GAME.initial_state()
    state = state.apply({0: PROPOSAL})[0]
    return state.apply({1: "accept"})[0]


def test_queries_are_answered_and_are_not_attempts() -> None:
    typed = ["?help", "?item torch", "?recipes", "?what", "apply", "?item", PROPOSAL]
    decision, told = act(GAME, GAME.initial_state(), 0, typed)
    assert decision.valid and decision.attempts == 1 and decision.raw == (PROPOSAL,)
    assert json.loads(str(decision.action))["offer"] == {"minecraft:coal": 1}
    text = "\n".join(told)
    assert told.index(HELP) < next(i for i, t in enumerate(told) if t.startswith("your move"))
    assert text.count(HELP) == 3  # at the turn's start, for ?help and for an unknown ?word
    assert "- torch (crafting_shaped): 4 torch from 1 charcoal or coal + 1 stick" in text
    assert "- stick: 1 stick from 1/2 cherry_planks" in text  # the person's own hand
    assert "phase_error: craft tools only work in the craft phase" in text
    assert "item_info: illegal item name ''" in text
    assert "check {" not in text  # the craft help only in the craft phase


def test_crafting_step_by_step_then_done() -> None:
    state = craft_phase()
    typed = [SMELT, "apply", "apply", 'check {"input": {"stick": 1}}', "check {oops", SHEARS,
             "apply", "?recipes", "done"]  # fmt: skip
    decision, told = act(GAME, state, 0, typed)
    assert decision.valid and decision.attempts == 1
    crafts = json.loads(str(decision.action))
    assert [c["output"] for c in crafts] == [{"minecraft:iron_ingot": 1}, {"minecraft:shears": 1}]
    text = "\n".join(told)
    assert "craft step by step: check" in text
    assert "code 0 (ok): recipe iron_ingot_from_blasting_raw_iron makes 1 iron_ingot" in text
    assert "your hand is now 1/3 cherry_planks, 1 cobblestone, 2 iron_ingot" in text
    assert "no recipe passed craft_recipe_check" in text  # the second apply
    assert "craft_recipe_check: missing arguments ['output']" in text
    assert "check: not JSON" in text
    assert "lost to flooring: 1/3 cherry_planks" in text
    end = state.apply({0: str(decision.action), 1: "[]"})[0]
    assert end.is_terminal() and end.winners == (0,)


def test_an_empty_line_submits_what_was_applied_and_a_json_list_still_works() -> None:
    state = craft_phase()
    decision, _ = act(GAME, state, 1, ['check {"input": {"oak_planks": "1/2"}, "output": '
                                       '{"stick": 1}}', "apply", ""])  # fmt: skip
    assert json.loads(str(decision.action)) == [
        {"input": {"minecraft:oak_planks": "1/2"}, "output": {"minecraft:stick": 1}}
    ]
    assert act(GAME, state, 1, [""])[0].action == "[]"
    typed = '[{"input": {"oak_planks": "1/2"}, "output": {"stick": 1}}]'
    decision, told = act(
        GAME, state, 1, ['[{"input": {"coal": 5}, "output": {"torch": 1}}]', typed]
    )
    assert decision.attempts == 2 and decision.action == act(GAME, state, 1, [typed])[0].action
    assert any(t.startswith("not a legal move: illegal craft 1 (code 1)") for t in told)


def test_the_decision_phase_keeps_its_moves() -> None:
    state = GAME.initial_state().apply({0: PROPOSAL})[0]
    decision, told = act(GAME, state, 1, ["?item coal", "done", ""])
    assert "fuel: one smelt needs 1/8 coal" in "\n".join(told)
    assert decision.attempts == 2  # "done" is no decision here; the empty line rejects
    assert json.loads(str(decision.action))["decision"] == "reject"


def test_other_games_have_no_tools() -> None:
    game = UltimatumGame()
    assert desk_for(game, game.initial_state().observation(0)) is None
    decision, told = act(game, game.initial_state(), 0, ["?help", "40"])
    assert decision.attempts == 2 and decision.action == 40
    assert HELP not in told
