"""The plain LLM player of any game that has prompt templates (`game_prompts`): one model call per
decision, re-asked when the reply is not a legal action.

Each decision is a fresh conversation, [system prompt, turn prompt], and the turn prompt shows
everything this seat has been allowed to see: the game state comes from the seat's observation
only, so private information of other seats cannot reach the prompt. The action space chooses the
reply format and its constraint (`replies`); the parse and re-ask loop is the one the matrix games
use (`parsing.decide_with_reasks`).
"""

from __future__ import annotations

import copy
from typing import Any

from stratagem.agents.base import Decision, LLMClient
from stratagem.agents.game_prompts import GamePrompter, GamePrompts
from stratagem.agents.llm_agent import LLMAgent
from stratagem.agents.parsing import decide_with_reasks, plain_reask
from stratagem.agents.replies import reply_format
from stratagem.errors import StratagemError
from stratagem.games.base import Game, Observation
from stratagem.games.spaces import Choice, FreeText
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message


class GeneralLLMAgent(LLMAgent):
    def __init__(
        self,
        client: LLMClient,
        game: Game,
        prompts: GamePrompts,
        *,
        name: str | None = None,
        **options: Any,
    ) -> None:
        """`options` are `LLMAgent`'s: max_reasks, invalid, temperature, max_tokens, seed,
        constrain."""
        super().__init__(client, name=name or f"plain:{client.model}", **options)
        self.prompter = GamePrompter(game, prompts)
        self.prompts = prompts

    def fork(self, seed: int) -> GeneralLLMAgent:
        """A copy whose requests use `seed` (self-consistency); decisions keep no chat."""
        twin = copy.copy(self)
        twin.seed = seed
        return twin

    def adopt(self, other: GeneralLLMAgent) -> None:
        """Nothing to carry over: every decision starts a fresh conversation."""

    async def act(self, observation: Observation) -> Decision:
        space = observation.legal
        if space is None:
            raise StratagemError(f"agent '{self.name}' was asked to act with no move to make")
        key = self.prompts.text if isinstance(space, FreeText) else self.prompts.amount
        reply = reply_format(space, key)
        messages = [
            Message("system", self.prompter.system(observation)),
            Message("user", self.prompter.turn(observation, reply.instruction)),
        ]
        decision = await decide_with_reasks(
            self.client,
            messages,
            self._request_kwargs(reply.constraint),
            reply,
            (),
            self.max_reasks,
            CallContext(self._episode_id, observation.player, observation.moment(), "decision"),
            plain_reask,
        )
        labels = space.labels if isinstance(space, Choice) else ()
        return self.invalid.apply(decision, labels)

    def _request_kwargs(self, constraint: dict[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.request_seed(),
        }
        if "max_tokens" in constraint:
            # A length limit is part of the action space, so it holds even when unconstrained.
            limit = constraint["max_tokens"]
            kwargs["max_tokens"] = min(limit, self.max_tokens or limit)
        if self.constrain:
            kwargs.update({k: v for k, v in constraint.items() if k != "max_tokens"})
        return kwargs
