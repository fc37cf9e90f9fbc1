"""The plain LLM agent: one model, one prompt per decision, no tools (seed-001 §6.1, seed-003 §3).

Two ways to show the past, both used by the studies:
- history "prompt" (seed-001): every decision is a fresh conversation, [system, decision prompt
  with the summary of all past rounds];
- history "chat" (seed-003 §3.2-3.3): one conversation per game that grows turn by turn: the
  round's hint, the model's replies (failed ones with their correction hints), and the round's
  result, which arrives through `observe`. Consecutive same-role turns are merged before sending.

Wherever the output format allows, the request carries a constraint the provider can enforce
(`choices` for a grammar, `json_schema`), because small local models often answer unconstrained
prompts with nothing; the reply is parsed and re-asked in any case, so providers that ignore a
constraint are still handled.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stratagem.agents.base import Decision, LLMClient
from stratagem.agents.game_prompts import prompts_for
from stratagem.agents.general import GeneralLLMAgent
from stratagem.agents.llm_agent import LLMAgent
from stratagem.agents.parsing import (
    PARSERS,
    InvalidPolicy,
    JsonDecisionParser,
    Parser,
    decide_with_reasks,
)
from stratagem.agents.prompt_variants import game_prompts_for, prompter_for
from stratagem.agents.prompts import Prompter
from stratagem.agents.registry import Architecture, register, repeated_matrix_only
from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation
from stratagem.games.matrix.repeated import RepeatedObservation
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message

if TYPE_CHECKING:
    from stratagem.agents.questions import Answer, Question


def decision_schema(labels: Sequence[str], key: str = "DECISION") -> dict[str, Any]:
    """The JSON schema of `{"DECISION": <one of labels>}`."""
    return {
        "type": "object",
        "properties": {key: {"type": "string", "enum": list(labels)}},
        "required": [key],
        "additionalProperties": False,
    }


def _newline_terminated(text: str) -> str:
    """seed-003 [R] ends every reply with a newline before putting it back into the context."""
    return text if text.endswith("\n") else text + "\n"


class PlainLLMAgent(LLMAgent):
    """An LLM playing a repeated 2-player matrix game through one framing's prompts.

    `max_reasks` re-asks follow an invalid reply (seed-003 used 5 attempts in all, i.e. 4
    re-asks; `parsing.SEED003_MAX_REASKS`). `invalid` is the `InvalidPolicy` ("forfeit" or
    "default:<label>"); `seed` and `constrain` as in `LLMAgent`.
    """

    def __init__(
        self,
        client: LLMClient,
        prompter: Prompter,
        *,
        max_reasks: int = 5,
        invalid: str | InvalidPolicy = "forfeit",
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        constrain: bool = True,
        name: str | None = None,
    ) -> None:
        super().__init__(
            client, name=name or f"plain:{client.model}", max_reasks=max_reasks,
            invalid=invalid, temperature=temperature, max_tokens=max_tokens, seed=seed,
            constrain=constrain,
        )  # fmt: skip
        self.prompter = prompter
        self.parser: Parser = PARSERS[prompter.output]()
        self._conversation: list[Message] = []

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        super().reset(seed, episode_id)
        self._conversation = []

    def fork(self, seed: int) -> PlainLLMAgent:
        """A copy in the same state (the chat so far) whose requests use `seed`: one sample of
        self-consistency (seed-003 §3.5: "k deep copies of the player")."""
        twin = copy.copy(self)
        twin._conversation = list(self._conversation)
        twin.seed = seed
        return twin

    def adopt(self, other: PlainLLMAgent) -> None:
        """Continue from `other`'s chat (seed-003 §3.5: the chosen sample's context is kept)."""
        self._conversation = list(other._conversation)

    @property
    def conversation(self) -> tuple[Message, ...]:
        """The chat so far in history mode "chat", unmerged (tags kept); empty otherwise."""
        return tuple(self._conversation)

    async def act(self, observation: Observation) -> Decision:
        obs = self.repeated(observation)
        assert obs.stage is not None
        if obs.legal is None:
            raise StratagemError(f"agent '{self.name}' was asked to act with no move to make")
        shown = self.prompter.labels(obs)
        game_labels = obs.stage.labels[obs.player]
        chat = self.prompter.history == "chat"
        if chat:
            if not self._conversation:
                self._conversation.append(Message("system", self.prompter.system(obs)))
            self._conversation.append(Message("user", self.prompter.decision(obs)))
            base = list(self._conversation)
        else:
            base = [
                Message("system", self.prompter.system(obs)),
                Message("user", self.prompter.decision(obs)),
            ]
        echo = _newline_terminated if chat else _same
        decision = await decide_with_reasks(
            self.client,
            base,
            self._request_kwargs(shown),
            self.parser,
            shown,
            self.max_reasks,
            CallContext(self._episode_id, obs.player, obs.round, "decision"),
            lambda error: self.prompter.reask(error, obs),
            echo=echo,
        )
        if chat:
            self._extend_chat(decision, obs)
        action = decision.action
        if decision.valid:
            assert isinstance(action, str)
            action = game_labels[shown.index(action)]
        extra = {
            **decision.extra,
            "framing": self.prompter.framing,
            "output": self.prompter.output,
            "history": self.prompter.history,
        }
        return self.invalid.apply(replace(decision, action=action, extra=extra), game_labels)

    async def answer(self, question: Question, observation: Observation) -> Answer:
        """seed-001 Fig 2.4: a fresh conversation per question, with this agent's settings."""
        from stratagem.agents.questions import PlainAnswerer

        return await PlainAnswerer.of(self).answer(question, observation)

    async def observe(self, observation: Observation, events: Sequence[Event] = ()) -> None:
        """In chat mode, tell the model the result of the round just played."""
        if self.prompter.history != "chat" or not self._conversation:
            return
        obs = self.repeated(observation)
        if obs.history:
            self._conversation.append(Message("user", self.prompter.result(obs)))

    def _request_kwargs(self, labels: Sequence[str]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.request_seed(),
        }
        if self.constrain and self.prompter.output == "choice":
            kwargs["choices"] = tuple(labels)
        elif self.constrain and self.prompter.output == "json":
            assert isinstance(self.parser, JsonDecisionParser)
            kwargs["json_schema"] = decision_schema(labels, self.parser.key)
        elif self.constrain and self.prompter.output == "tag":
            # The shortest reply seed-003's format allows (§3.4: the explanation is optional).
            kwargs["choices"] = tuple(f"[move] {label}" for label in labels)
        return kwargs

    def _extend_chat(self, decision: Decision, obs: RepeatedObservation) -> None:
        """Keep every reply in the chat, failed ones with their hints (seed-003 §3.3-3.4)."""
        for text, error in zip(decision.raw, decision.errors, strict=False):
            self._conversation.append(Message("assistant", _newline_terminated(text)))
            self._conversation.append(Message("user", self.prompter.reask(error, obs)))
        if decision.valid:
            self._conversation.append(Message("assistant", _newline_terminated(decision.raw[-1])))
            made = self.prompter.move_made(obs)
            if made is not None:
                self._conversation.append(Message("user", made))


def _same(text: str) -> str:
    return text


def common_settings(settings: Any) -> dict[str, Any]:
    """The options of an agent entry every LLM architecture takes."""
    return {
        "max_reasks": settings.max_reasks,
        "invalid": settings.invalid,
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "constrain": settings.constrain,
    }


def _build(settings: Any, client: LLMClient, game: Game) -> LLMAgent:
    """Games with prompt templates get the general player; repeated 2-player matrix games the
    framings of the studies (seed-001 §6.1, seed-003 §3)."""
    prompts = game_prompts_for(settings, game)
    if prompts is not None:
        return GeneralLLMAgent(client, game, prompts, **common_settings(settings))
    return PlainLLMAgent(client, prompter_for(settings), **common_settings(settings))


def _plays(game: Game) -> str | None:
    if prompts_for(game) is not None:
        return None
    return repeated_matrix_only(game)


register(
    Architecture(
        "plain",
        "one model call per decision (seed-001 §6.1, seed-003 §3); any game with prompts",
        _build,
        _plays,
        settings=frozenset({"framing", "output", "history", "prompting", "samples", "questions"}),
    )
)
