"""The episode loop asks `debrief` only of agents that may answer (`Agent.debriefs`), and stores
what they answer after every step."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

from stratagem.agents.base import Agent, Decision
from stratagem.agents.plain import PlainLLMAgent
from stratagem.agents.prompts import Prompter
from stratagem.agents.questions import Answer
from stratagem.agents.strategy_agent import StrategyAgent
from stratagem.experiments.episode import play_episode
from stratagem.experiments.store import ResultStore
from stratagem.games.base import Observation
from stratagem.games.catalog import get_stage
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.strategies.registry import get_strategy


class Reporter(StrategyAgent):
    """TitForTat that answers one question after every step."""

    def __init__(self) -> None:
        super().__init__(get_strategy("TitForTat"))
        self.asked: list[int | None] = []

    async def debrief(self, observation: Observation) -> Sequence[Answer]:
        self.asked.append(observation.turn)
        return [Answer("q", "How many rounds so far?", str(observation.turn), None, True)]


class Silent(StrategyAgent):
    """TitForTat that says it never answers: the loop must not ask."""

    def __init__(self) -> None:
        super().__init__(get_strategy("TitForTat"))
        self.asked = 0

    async def debrief(self, observation: Observation) -> Sequence[Answer]:
        self.asked += 1
        return ()

    @property
    def debriefs(self) -> bool:
        return False


def test_only_agents_that_may_answer_are_debriefed(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "s.db")
    store.create_experiment("exp", "Experiment", {})
    store.add_episode("ep", "exp", "pd", ["reporter", "silent"], seed=0)
    store.start_episode("ep")
    reporter, silent = Reporter(), Silent()
    game = RepeatedGame(get_stage("pd"), 3)
    asyncio.run(play_episode(store, "ep", game, [reporter, silent], 0))
    assert reporter.asked == [0, 1, 2, 3]  # before the first step, and after each
    assert silent.asked == 0
    rows = store._conn.execute("SELECT round, answer FROM answers ORDER BY round").fetchall()
    assert [tuple(r) for r in rows] == [(0, "0"), (1, "1"), (2, "2"), (3, "3")]
    store.close()


def test_which_agents_say_they_may_answer() -> None:
    class Bare(Agent):
        async def act(self, observation: Observation) -> Decision:
            raise NotImplementedError

    assert not Bare().debriefs
    assert not StrategyAgent(get_strategy("TitForTat")).debriefs
    assert Reporter().debriefs
    plain = PlainLLMAgent(SimpleNamespace(model="none"), Prompter())
    assert not plain.debriefs
    plain.questions = True
    assert plain.debriefs
