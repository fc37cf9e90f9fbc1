"""The tool-based agent of seed-001 (§6.2): one model with one tool, a phone to call a lawyer.

The attitude picks the tool (`tools.build_lawyer`): cooperate/defect a Fixed lawyer, compute a
Nash lawyer. Each decision (and each comprehension question, AMBIG-13: Fig 2.10 keeps the tool
available) is a small loop, the "handler" the thesis added to stop endless tool calls (§6.2):

1. ask the model, offering the tool through `Request.tools` (native function calling; the
   embedded local model gets the same request and answers through its prompted call protocol,
   `{"tool": ..., "arguments": ...}` under a grammar, so one code path serves every provider);
2. if it calls the tool, run the call, append the call and its result (Fig 2.7) to the
   conversation, and ask again;
3. otherwise parse the reply's `{'DECISION': ...}` (or `{'ANSWER': ...}`) and stop.

Bounds: at most `max_tool_calls` calls are executed per decision (default 1: "Use each tool only
once"). Once they have run, the tool is no longer offered (`after_limit="drop"`, the default): a
model without native tool calling copies the pattern in its transcript and calls again forever
otherwise (measured with the embedded model: every reply after the first call was another call).
With `after_limit="refuse"` the tool stays offered and further calls are refused. A refused call,
a call to an unknown tool or a call with malformed arguments is answered with an error as its
tool result and costs one re-ask, as does an unparseable reply.
After `max_reasks` re-asks the decision is invalid and the `InvalidPolicy` applies. So a decision
costs at most 1 + max_tool_calls + max_reasks model calls. A reply that never calls the tool is
accepted, as in the thesis' rare tool-less runs.

Over a cooperation mechanism (`seed001_mechanisms`), the system prompt is the mechanism's rules
followed by Fig 2.8's tool lines and the decision prompt its turn (record and question) followed
by Fig 2.9; each stage move goes through the loop above, the lawyer advising a stage action. The
mechanism's own decisions (propose or answer a contract, disarm) are the general player's
(`GeneralLLMAgent`: one call, re-asked): the lawyer's advice is a stage action, which answers
none of them.

Memory (AMBIG-12): `memory="fresh"` (default) starts every decision and question from
[system, prompt with the history summary], the way the plain agent and Ag2's `initiate_chat`
(which clears the history by default) work; `memory="episode"` keeps one conversation for the
whole episode, every prompt, tool call and reply included.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from stratagem.agents.attitudes import Attitude, check_attitude
from stratagem.agents.base import Decision, LLMClient, messages_to_data
from stratagem.agents.general import GeneralLLMAgent
from stratagem.agents.llm_agent import LLMAgent, check_count
from stratagem.agents.memory import Memory, check_memory
from stratagem.agents.parsing import (
    InvalidPolicy,
    JsonDecisionParser,
    ParseError,
    Parser,
    merge_messages,
    plain_reask,
)
from stratagem.agents.plain import common_settings, decision_schema
from stratagem.agents.prompt_variants import game_prompts_for, prompter_for
from stratagem.agents.prompts import Prompter
from stratagem.agents.questions import (
    Answer,
    AnswerParser,
    Question,
    answer_schema,
    question_context,
)
from stratagem.agents.registry import Architecture, register
from stratagem.agents.seed001_mechanisms import MechanismPrompts, mechanism_observation, plays
from stratagem.agents.tools import LawyerTool, build_lawyer
from stratagem.errors import StratagemError
from stratagem.games.base import Game, Observation
from stratagem.games.matrix.repeated import RepeatedObservation
from stratagem.games.mechanisms import MechanismGame, MechanismObservation
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message, Request, Response, ToolCall

DEFAULT_MAX_TOOL_CALLS = 1
"""seed-001 Fig 2.8: "Use each tool only once"."""

AfterLimit = Literal["drop", "refuse"]
"""What happens to the tool once `max_tool_calls` calls have run: no longer offered, or still
offered with further calls refused."""


@dataclass
class Exchange:
    """The trace of one decision or answer: every model call and every tool call."""

    conversation: list[Message]
    raw: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    tokens: int = 0
    calls: int = 0
    executed: int = 0
    value: str | None = None
    error: str | None = None


class ToolAgent(LLMAgent):
    """seed-001's `Tool` architecture; see the module docstring.

    `prompter` must be a framing with the tool templates (`prisoner` has them); its output
    format is irrelevant, since the tool prompts ask for the thesis' JSON. `constrain` sends
    `json_schema` for the final reply (a grammar for the local model, structured output for
    OpenAI-compatible servers) next to the tool.
    """

    def __init__(
        self,
        client: LLMClient,
        attitude: Attitude | str,
        prompter: Prompter | None = None,
        *,
        max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
        after_limit: AfterLimit = "drop",
        max_reasks: int = 2,
        invalid: str | InvalidPolicy = "forfeit",
        memory: Memory | str = "fresh",
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        constrain: bool = True,
        name: str | None = None,
        mechanism: MechanismPrompts | None = None,
    ) -> None:
        """`mechanism`: the prompts of the cooperation mechanism this agent plays, if any."""
        self.attitude = check_attitude(attitude)
        super().__init__(
            client, name=name or f"tool-{self.attitude}:{client.model}", max_reasks=max_reasks,
            invalid=invalid, temperature=temperature, max_tokens=max_tokens, seed=seed,
            constrain=constrain,
        )  # fmt: skip
        self.mechanism = mechanism
        self.general: GeneralLLMAgent | None = None
        if mechanism is not None:
            self.general = GeneralLLMAgent(
                client, mechanism.game, mechanism.prompts, name=self.name, max_reasks=max_reasks,
                invalid=invalid, temperature=temperature, max_tokens=max_tokens, seed=seed,
                constrain=constrain,
            )  # fmt: skip
        self.prompter = prompter or Prompter("prisoner", output="json")
        self.max_tool_calls = check_count("max_tool_calls", max_tool_calls)
        if after_limit not in get_args(AfterLimit):
            raise StratagemError(
                f"unknown after_limit '{after_limit}': use {', '.join(get_args(AfterLimit))}"
            )
        self.after_limit: AfterLimit = after_limit
        self.memory = check_memory(memory)
        self._rng = random.Random(0)
        self._memory: list[Message] = []

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        super().reset(seed, episode_id)
        self._rng = random.Random(seed)
        self._memory = []
        if self.general is not None:
            self.general.reset(seed, episode_id)

    @property
    def conversation(self) -> tuple[Message, ...]:
        """The episode's conversation in memory "episode"; empty in memory "fresh"."""
        return tuple(self._memory)

    async def act(self, observation: Observation) -> Decision:
        obs = self.repeated(observation)
        assert obs.stage is not None
        if obs.legal is None:
            raise StratagemError(f"agent '{self.name}' was asked to act with no move to make")
        mechanism = mechanism_observation(obs)
        if mechanism is not None:
            return await self._act_under(mechanism)
        shown = self.prompter.labels(obs)
        game_labels = obs.stage.labels[obs.player]
        lawyer = build_lawyer(self.attitude, self.prompter, obs)
        prompt = self.prompter.render("tool_decision.j2", obs)
        schema = decision_schema(shown) if self.constrain else None
        context = CallContext(self._episode_id, obs.player, obs.round, "decision")
        system = self.prompter.render("tool_system.j2", obs)
        ex = await self._exchange(
            obs, lawyer, system, prompt, JsonDecisionParser(), shown, schema, context,
            lambda error: self.prompter.reask(error, obs),
        )  # fmt: skip
        action = game_labels[shown.index(ex.value)] if ex.value is not None else None
        return self.invalid.apply(self._decided(ex, action, lawyer), game_labels)

    async def answer(self, question: Question, observation: Observation) -> Answer:
        """A comprehension question through Fig 2.10, the tool still offered (AMBIG-13)."""
        obs = self.repeated(observation)
        lawyer = build_lawyer(self.attitude, self.prompter, obs)
        prompt = self.prompter.render("tool_question.j2", obs, question=question.prompt)
        schema = answer_schema() if self.constrain else None
        context = question_context(self._episode_id, obs)
        system = self.prompter.render("tool_system.j2", obs)
        ex = await self._exchange(
            obs, lawyer, system, prompt, AnswerParser(), (), schema, context,
            lambda error: self.prompter.reask(error, obs),
        )  # fmt: skip
        return Answer(
            question_id=question.id,
            question=question.prompt,
            raw=ex.raw[-1] if ex.raw else "",
            parsed=ex.value,
            relevant=ex.value is not None,
            error=ex.error,
            attempts=ex.calls,
            tokens=ex.tokens,
            messages=messages_to_data(ex.conversation),
            extra=self._extra(lawyer, ex),
        )

    async def _act_under(self, obs: MechanismObservation) -> Decision:
        """A decision under a cooperation mechanism: a stage move through the lawyer loop, with
        the mechanism's rules and record; the mechanism's own decisions the general player's."""
        if self.mechanism is None or self.general is None:
            raise StratagemError(
                f"agent '{self.name}' was built without a mechanism's prompts (`mechanism=`)"
            )
        if obs.phase != "move":
            decision = await self.general.act(obs)
            return replace(decision, extra={**decision.extra, "architecture": "tool"})
        shown = self.mechanism.labels(obs)
        lawyer = build_lawyer(self.attitude, self.prompter, obs)
        system = self.mechanism.render("tool_system.j2", obs, attitude=self.attitude)
        prompt = self.mechanism.turn(obs, "tool_reply.j2")
        schema = decision_schema(shown) if self.constrain else None
        context = CallContext(self._episode_id, obs.player, obs.moment(), "decision")
        ex = await self._exchange(
            obs, lawyer, system, prompt, JsonDecisionParser(), shown, schema, context, plain_reask
        )
        return self.invalid.apply(self._decided(ex, ex.value, lawyer), shown)

    def _decided(self, ex: Exchange, action: str | None, lawyer: LawyerTool) -> Decision:
        """The decision an exchange came to (`action`: its label in the game's own words)."""
        return Decision(
            action=action,
            valid=ex.value is not None,
            attempts=ex.calls,
            raw=tuple(ex.raw),
            errors=tuple(ex.errors),
            error=ex.error,
            messages=messages_to_data(ex.conversation),
            tokens=ex.tokens,
            extra=self._extra(lawyer, ex),
        )

    # -- the handler loop --------------------------------------------------------------------

    async def _exchange(
        self,
        obs: RepeatedObservation,
        lawyer: LawyerTool,
        system: str,
        prompt: str,
        parser: Parser,
        labels: Sequence[str],
        schema: dict[str, Any] | None,
        context: CallContext,
        reask: Callable[[str], str],
    ) -> Exchange:
        if self.memory == "episode":
            if not self._memory:
                self._memory.append(Message("system", system))
            self._memory.append(Message("user", prompt))
            conversation = self._memory
        else:
            conversation = [Message("system", system), Message("user", prompt)]
        ex = Exchange(conversation)
        reasks = 0
        purpose = context.purpose
        while True:
            spent = ex.executed >= self.max_tool_calls and self.after_limit == "drop"
            request = Request(
                messages=tuple(merge_messages(conversation)),
                tools=() if spent else (lawyer.tool,),
                json_schema=schema,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                seed=self.request_seed(),
            )
            responses = await self.client.generate(request, _purpose(context, purpose))
            response = responses[0] if responses else Response("")
            ex.calls += 1
            ex.tokens += sum(r.usage.total for r in responses)
            if response.tool_calls:
                ex.raw.append(response.text or _calls_text(response.tool_calls))
                failed = self._run_calls(lawyer, response, ex)
                if not failed:
                    purpose = "tool"
                    continue
                ex.errors.append(failed)
                error = failed
            else:
                ex.raw.append(response.text)
                try:
                    ex.value = str(parser.parse(response.text, labels))
                except ParseError as exc:
                    error = str(exc)
                    ex.errors.append(error)
                    ex.steps.append({"reply": response.text, "error": error})
                    conversation.append(Message("assistant", response.text))
                    conversation.append(Message("user", reask(error)))
                else:
                    ex.steps.append({"reply": response.text})
                    conversation.append(Message("assistant", response.text))
                    return ex
            reasks += 1
            purpose = "reask"
            if reasks > self.max_reasks:
                ex.error = error
                return ex

    def _run_calls(self, lawyer: LawyerTool, response: Response, ex: Exchange) -> str | None:
        """Execute the calls of one reply, appending the call and every result; the first
        reason a call could not be run, or None if all ran."""
        conversation = ex.conversation
        conversation.append(Message("assistant", response.text, response.tool_calls))
        failed: str | None = None
        for call in response.tool_calls:
            step: dict[str, Any] = {"tool": call.name, "arguments": dict(call.arguments)}
            error: str | None
            if call.name != lawyer.name:
                error = f"there is no tool called '{call.name}'; the only tool is {lawyer.name}"
                content = lawyer.error(error)
            elif ex.executed >= self.max_tool_calls:
                error = (
                    "the lawyer has already been consulted; no further tool calls are "
                    "permitted. Output your reply in the required JSON format now."
                )
                content = lawyer.error(error)
            else:
                result = lawyer.execute(call.arguments, self._rng)
                content, error = result.content, result.error
                step["result"] = result.to_json()
                if result.ok:
                    ex.executed += 1
            step["content"] = content
            if error is not None:
                step["error"] = error
                failed = failed or error
            ex.steps.append(step)
            conversation.append(Message("tool", content, tool_call_id=call.id))
        return failed

    def _extra(self, lawyer: LawyerTool, ex: Exchange) -> dict[str, Any]:
        advice = [s["result"]["advice"] for s in ex.steps if "result" in s and s["result"]["ok"]]
        return {
            "architecture": "tool",
            "attitude": self.attitude,
            "tool": lawyer.kind,
            "tool_called": ex.executed > 0,
            "tool_calls": ex.executed,
            "advice": advice[-1] if advice else None,
            "steps": ex.steps,
            "memory": self.memory,
            "after_limit": self.after_limit,
        }


def _purpose(context: CallContext, purpose: str) -> CallContext:
    return (
        context
        if purpose == context.purpose
        else CallContext(context.episode_id, context.player, context.round, purpose)
    )


def _calls_text(calls: Sequence[ToolCall]) -> str:
    """A tool-call reply as text, for the `raw` record (the local protocol's form)."""
    return "\n".join(
        json.dumps({"tool": c.name, "arguments": c.arguments}, ensure_ascii=False) for c in calls
    )


def _build(settings: Any, client: LLMClient, game: Game) -> ToolAgent:
    """seed-001's prompts in the JSON format, with the entry's attitude; over a mechanism, its
    prompts too (under the seat's prompt variant, as the plain player reads them)."""
    prompter = prompter_for(settings, "json", "prompt")
    mechanism = None
    if isinstance(game, MechanismGame):
        mechanism = MechanismPrompts(game, game_prompts_for(settings, game))
    return ToolAgent(
        client, settings.attitude, prompter, max_tool_calls=settings.max_tool_calls,
        memory=settings.memory, mechanism=mechanism,
        **common_settings(settings),
    )  # fmt: skip


register(
    Architecture(
        "tool",
        "a lawyer tool the model may call before deciding (seed-001 §6.2)",
        _build,
        plays,
        # each tool result, then the move
        calls=lambda settings, game: 1.0 + settings.max_tool_calls,
        templates=frozenset(
            {
                "tool_decision.j2",
                "tool_error.j2",
                "tool_fixed.j2",
                "tool_nash.j2",
                "tool_question.j2",
                "tool_result.j2",
                "tool_system.j2",
            }
        ),
        settings=frozenset(
            {"attitude", "memory", "max_tool_calls", "framing", "prompting", "questions"}
        ),
    )
)
