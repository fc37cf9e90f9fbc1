"""What every LLM architecture shares: a model client, how it samples, its re-ask budget, its
invalid-output policy, and the identity and seed of the episode it is playing.

The plain, tool and debate agents differ in how they talk to the model; keeping the rest here
means an option added to one (or a fix to how episodes seed their requests) reaches all three.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from stratagem.agents.base import Agent, LLMClient
from stratagem.agents.parsing import InvalidPolicy
from stratagem.errors import StratagemError
from stratagem.games.base import Observation
from stratagem.games.matrix.repeated import RepeatedObservation

if TYPE_CHECKING:
    from stratagem.agents.questions import Answer, Question


def check_count(option: str, value: object) -> int:
    """An option that must be a whole number >= 0 (re-asks, tool calls)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StratagemError(f"{option} must be an integer >= 0, got {value!r}")
    return value


class LLMAgent(Agent):
    """The common part of the LLM architectures.

    `seed` is sent with every request; if None, the seed given to `reset` is (so every episode
    samples differently but reproducibly). `constrain=False` sends no grammar or schema, for
    reproducing studies whose models were not constrained.
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        name: str,
        max_reasks: int = 5,
        invalid: str | InvalidPolicy = "forfeit",
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        constrain: bool = True,
    ) -> None:
        self.client = client
        self.name = name
        self.max_reasks = check_count("max_reasks", max_reasks)
        self.invalid = InvalidPolicy.parse(invalid)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.constrain = constrain
        self._episode_id: str | None = None
        self._episode_seed = 0

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        self._episode_seed = seed
        self._episode_id = episode_id

    async def debrief(self, observation: Observation) -> Sequence[Answer]:
        """seed-001 §7: the four comprehension questions in turn, each through the
        architecture's own prompts (agents with a memory see the earlier ones)."""
        if not self.questions or observation.turn == 0:  # asked after rounds, not before
            return ()
        from stratagem.agents.questions import QUESTIONS

        return [await self.answer(question, observation) for question in QUESTIONS]

    @property
    def debriefs(self) -> bool:
        return self.questions or type(self).debrief is not LLMAgent.debrief

    async def answer(self, question: Question, observation: Observation) -> Answer:
        """One comprehension question; architectures that can answer override this."""
        raise StratagemError(f"agent '{self.name}' cannot answer comprehension questions")

    def request_seed(self) -> int:
        """The seed of this agent's requests in the current episode."""
        return self.seed if self.seed is not None else self._episode_seed

    def repeated(self, observation: Observation) -> RepeatedObservation:
        """The observation, if it is of a repeated 2-player matrix game (all these agents play)."""
        if not isinstance(observation, RepeatedObservation) or observation.stage is None:
            raise StratagemError(
                f"agent '{self.name}' plays repeated matrix games; "
                f"got a {type(observation).__name__}"
            )
        if observation.stage.n_players != 2:
            raise StratagemError(
                f"agent '{self.name}' needs a 2-player game; '{observation.stage.name}' has "
                f"{observation.stage.n_players} players"
            )
        return observation
