"""A scripted player: plays a fixed list of actions in turn, the last one again once they run out.

For demonstrations and tests of games and line-ups without a model (`scripted:C,D` in a line-up).
Actions are written as text; a number is read as an integer where the action space asks for one.
Nothing is checked here: the engine validates the action like any other, so a scripted action that
is illegal at its moment is recorded as an invalid decision.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratagem.agents.base import Agent, Decision
from stratagem.errors import StratagemError
from stratagem.games.base import Observation
from stratagem.games.spaces import Action, IntegerRange


class ScriptedPlayer(Agent):
    def __init__(self, actions: Sequence[str], name: str | None = None) -> None:
        if not actions:
            raise StratagemError("a scripted player needs at least one action")
        self.actions = tuple(actions)
        self.name = name or "scripted:" + ",".join(self.actions)
        self._turn = 0

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        self._turn = 0

    async def act(self, observation: Observation) -> Decision:
        text = self.actions[min(self._turn, len(self.actions) - 1)]
        self._turn += 1
        action: Action = text
        if isinstance(observation.legal, IntegerRange) and text.lstrip("+-").isdigit():
            action = int(text)
        return Decision(action=action, valid=True)
