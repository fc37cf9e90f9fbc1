"""The debate-based agent of seed-001 (§6.3): a suspect and its lawyer talk it over.

Two sub-agents on one model (or two, with `lawyer_client`):
- the suspect (`Internal_Decision_Maker`, Fig 2.11) knows the scenario and the number of rounds
  but not the sentences, and is the one asked for the decision;
- the lawyer (`Internal_Assistant`, Fig 2.12) knows the sentences and the attitude
  (`debate_lawyer.j2` holds the <ATTITUDE> text, AMBIG-6) but may not decide.

Whenever a decision or an answer is needed, the suspect opens a debate with the chat-init
message (Fig 2.13 for a decision, 2.14 for a question, the history summary appended), and the two
take turns, the lawyer first (so the suspect cannot end the debate before the lawyer has spoken,
a design criterion of §6.3). Each speaker sees its own messages as "assistant" and the other's as
"user", as in Ag2's two-agent chats.

Termination (AMBIG-5, our choices):
- a generated message ends the debate when it contains the keyword (`DECISION`, or `ANSWER` for
  questions) in capitals: a case-sensitive substring check, since "decision" in lower case is
  ordinary speech in these prompts; the chat-init message itself, which shows the format, does
  not count;
- the lawyer's message ends it too (Fig 4.1 shows the lawyer's `{'DECISION': 'cooperate'}`
  closing a debate); `lawyer_may_end=False` lets only the suspect end it;
- at most `max_turns` generated messages (default `DEFAULT_MAX_TURNS` = 10, five each);
- the value is parsed from the ending message with the tolerant JSON parser. If the debate hits
  the cap, or the ending message has no readable value, and `final_ask` is on (default), the
  suspect is asked once more, alone, for the value in the thesis' format (`debate_close.j2`; not
  from the thesis), with up to `max_reasks` re-asks; otherwise the decision is invalid and the
  `InvalidPolicy` applies.

Over a cooperation mechanism (`seed001_mechanisms`), every decision is debated, the mechanism's
own (propose or answer a contract, disarm) as its stage moves: both system prompts hold the
mechanism's rules (the suspect's too, since it makes the mechanism's decisions) around Fig 2.11
and 2.12's fixed lines, the chat-init message is the mechanism's turn (its record and question)
followed by Fig 2.13, and the value is one of the phase's legal labels.

Memory (AMBIG-12): "fresh" (default; Ag2's `initiate_chat` clears the history by default) starts
each debate from the two system prompts; "episode" keeps the whole episode's debates, so later
debates see the earlier ones. The lawyer's prompt, attitude included, is the same for question
debates (AMBIG-13): it is the lawyer's role.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from stratagem.agents.attitudes import Attitude, check_attitude
from stratagem.agents.base import Decision, LLMClient
from stratagem.agents.llm_agent import LLMAgent
from stratagem.agents.memory import Memory, check_memory
from stratagem.agents.parsing import (
    InvalidPolicy,
    JsonDecisionParser,
    ParseError,
    Parser,
    decide_with_reasks,
    merge_messages,
    plain_reask,
)
from stratagem.agents.plain import common_settings, decision_schema
from stratagem.agents.prompt_variants import game_prompts_for, prompter_for
from stratagem.agents.prompts import Prompter
from stratagem.agents.questions import (
    ANSWER_KEY,
    Answer,
    AnswerParser,
    Question,
    answer_schema,
    question_context,
)
from stratagem.agents.registry import Architecture, register
from stratagem.agents.seed001_mechanisms import MechanismPrompts, mechanism_observation, plays
from stratagem.errors import StratagemError
from stratagem.games.base import Game, Observation
from stratagem.games.matrix.repeated import RepeatedObservation
from stratagem.games.mechanisms import MechanismGame, MechanismObservation
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message, Request, Response

DEFAULT_MAX_TURNS = 10
"""Generated messages per debate, both speakers together (AMBIG-5: the thesis gives no number,
only that "a decision must be provided in a reasonable amount of rounds")."""

Speaker = Literal["Internal_Decision_Maker", "Internal_Assistant", "moderator"]

# seed-001 §6.3: the sub-agents' names in the thesis' logs.
SUSPECT: Final = "Internal_Decision_Maker"
LAWYER: Final = "Internal_Assistant"
MODERATOR: Final = "moderator"
"""The speaker of the closing request: not a debater, seen only by the suspect."""


@dataclass(frozen=True)
class Turn:
    speaker: Speaker
    content: str
    kind: str = "debate"
    """init (the chat-init message), debate, close (the closing request), final (the reply)."""

    def to_json(self) -> dict[str, Any]:
        role = "user" if self.speaker == MODERATOR else "assistant"
        return {"role": role, "name": self.speaker, "content": self.content, "kind": self.kind}


@dataclass(frozen=True)
class Speech:
    """What one debate says besides its init message: the two system prompts, the closing
    request, and the correction hint after an unreadable closing reply."""

    suspect: str
    lawyer: str
    close: str
    reask: Callable[[str], str]


@dataclass
class DebateOutcome:
    turns: list[Turn]
    start: int = 0
    """Where this debate's turns begin in `turns` (in memory "episode" it holds earlier ones)."""
    raw: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    tokens: int = 0
    calls: int = 0
    debate_turns: int = 0
    ended_by: str = "cap"
    """suspect, lawyer, cap (no keyword within max_turns) or unreadable (keyword, no value)."""
    final_ask: bool = False
    value: str | None = None
    error: str | None = None


class DebateAgent(LLMAgent):
    """seed-001's debate architecture (`Assistant` in its data); see the module docstring."""

    def __init__(
        self,
        client: LLMClient,
        attitude: Attitude | str,
        prompter: Prompter | None = None,
        *,
        lawyer_client: LLMClient | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        lawyer_may_end: bool = True,
        final_ask: bool = True,
        max_reasks: int = 1,
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
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise StratagemError(f"max_turns must be an integer >= 1, got {max_turns!r}")
        self.attitude = check_attitude(attitude)
        super().__init__(
            client, name=name or f"debate-{self.attitude}:{client.model}", max_reasks=max_reasks,
            invalid=invalid, temperature=temperature, max_tokens=max_tokens, seed=seed,
            constrain=constrain,
        )  # fmt: skip
        self.lawyer_client = lawyer_client or client
        self.prompter = prompter or Prompter("prisoner", output="json")
        self.max_turns = max_turns
        self.lawyer_may_end = lawyer_may_end
        self.final_ask = final_ask
        self.memory = check_memory(memory)
        self.mechanism = mechanism
        self._history: list[Turn] = []

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        super().reset(seed, episode_id)
        self._history = []

    @property
    def history(self) -> tuple[Turn, ...]:
        """Every turn of the episode's debates in memory "episode"; empty in memory "fresh"."""
        return tuple(self._history)

    def system_prompts(self, observation: Observation) -> tuple[str, str]:
        """(suspect, lawyer) system prompts: only the lawyer's has sentences and attitude."""
        obs = self.repeated(observation)
        return (
            self.prompter.render("debate_suspect.j2", obs),
            self.prompter.render("debate_lawyer.j2", obs, attitude=self.attitude),
        )

    async def act(self, observation: Observation) -> Decision:
        obs = self.repeated(observation)
        assert obs.stage is not None
        if obs.legal is None:
            raise StratagemError(f"agent '{self.name}' was asked to act with no move to make")
        parser = JsonDecisionParser()
        mechanism = mechanism_observation(obs)
        if mechanism is not None:
            shown = game_labels = self._mechanism(mechanism).labels(mechanism)
            init = self._mechanism(mechanism).turn(mechanism, "debate_reply.j2")
            speech = self._mechanism_speech(mechanism)
        else:
            shown = self.prompter.labels(obs)
            game_labels = obs.stage.labels[obs.player]
            init = self.prompter.render("debate_decision.j2", obs)
            speech = self._speech(obs, parser.key)
        schema = decision_schema(shown) if self.constrain else None
        context = CallContext(self._episode_id, obs.player, obs.moment(), "decision")
        out = await self._debate(init, parser.key, parser, shown, schema, context, speech)
        decision = Decision(
            action=game_labels[shown.index(out.value)] if out.value is not None else None,
            valid=out.value is not None,
            attempts=out.calls,
            raw=tuple(out.raw),
            errors=tuple(out.errors),
            error=out.error,
            messages=tuple(t.to_json() for t in out.turns[out.start :]),
            tokens=out.tokens,
            extra=self._extra(out),
        )
        return self.invalid.apply(decision, game_labels)

    async def answer(self, question: Question, observation: Observation) -> Answer:
        """A comprehension question, debated through Fig 2.14."""
        obs = self.repeated(observation)
        init = self.prompter.render("debate_question.j2", obs, question=question.prompt)
        schema = answer_schema() if self.constrain else None
        context = question_context(self._episode_id, obs)
        speech = self._speech(obs, ANSWER_KEY)
        out = await self._debate(init, ANSWER_KEY, AnswerParser(), (), schema, context, speech)
        return Answer(
            question_id=question.id,
            question=question.prompt,
            raw=out.raw[-1] if out.raw else "",
            parsed=out.value,
            relevant=out.value is not None,
            error=out.error,
            attempts=out.calls,
            tokens=out.tokens,
            messages=tuple(t.to_json() for t in out.turns[out.start :]),
            extra=self._extra(out),
        )

    # -- the debate ----------------------------------------------------------------------------

    def _speech(self, obs: RepeatedObservation, key: str) -> Speech:
        """The framing's texts (seed-001 Figs 2.11, 2.12 and the closing request)."""
        suspect, lawyer = self.system_prompts(obs)
        close = self.prompter.render("debate_close.j2", obs, key=key)
        return Speech(suspect, lawyer, close, lambda error: self.prompter.reask(error, obs))

    def _mechanism(self, obs: MechanismObservation) -> MechanismPrompts:
        if self.mechanism is None:
            raise StratagemError(
                f"agent '{self.name}' was built without a mechanism's prompts (`mechanism=`)"
            )
        return self.mechanism

    def _mechanism_speech(self, obs: MechanismObservation) -> Speech:
        """The mechanism's rules around the debate's fixed lines (`game_templates/seed-001/`)."""
        prompts = self._mechanism(obs)
        advice = prompts.advice(self.attitude, obs)
        return Speech(
            prompts.render("debate_suspect.j2", obs),
            prompts.render("debate_lawyer.j2", obs, advice=advice, attitude=self.attitude),
            prompts.render("debate_close.j2", obs),
            plain_reask,
        )

    async def _debate(
        self,
        init: str,
        key: str,
        parser: Parser,
        labels: Sequence[str],
        schema: dict[str, Any] | None,
        context: CallContext,
        speech: Speech,
    ) -> DebateOutcome:
        suspect_system, lawyer_system = speech.suspect, speech.lawyer
        turns = self._history if self.memory == "episode" else []
        out = DebateOutcome(turns, start=len(turns))
        turns.append(Turn(SUSPECT, init, "init"))
        speaker: Speaker = LAWYER
        ending: Turn | None = None
        for _ in range(self.max_turns):
            if speaker == LAWYER:
                view = _view(LAWYER, lawyer_system, turns)
                client = self.lawyer_client
            else:
                view = _view(SUSPECT, suspect_system, turns)
                client = self.client
            text = await self._generate(client, view, context, out)
            turns.append(Turn(speaker, text))
            out.debate_turns += 1
            if key in text and (speaker == SUSPECT or self.lawyer_may_end):
                ending = turns[-1]
                break
            speaker = SUSPECT if speaker == LAWYER else LAWYER
        if ending is not None:
            try:
                out.value = str(parser.parse(ending.content, labels))
            except ParseError as exc:
                out.errors.append(str(exc))
                out.error = str(exc)
                out.ended_by = "unreadable"
            else:
                out.ended_by = "suspect" if ending.speaker == SUSPECT else "lawyer"
                return out
        else:
            out.error = f"the debate reached {self.max_turns} turns without {key}"
            out.errors.append(out.error)
        if self.final_ask:
            await self._close(speech, parser, labels, schema, context, out)
        return out

    async def _close(
        self,
        speech: Speech,
        parser: Parser,
        labels: Sequence[str],
        schema: dict[str, Any] | None,
        context: CallContext,
        out: DebateOutcome,
    ) -> None:
        """Ask the suspect alone for the value, re-asking like the plain agent."""
        suspect_system = speech.suspect
        out.turns.append(Turn(MODERATOR, speech.close, "close"))
        out.final_ask = True
        kwargs: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.request_seed(),
        }
        if schema is not None:
            kwargs["json_schema"] = schema
        decision = await decide_with_reasks(
            self.client,
            _view(SUSPECT, suspect_system, out.turns),
            kwargs,
            parser,
            labels,
            self.max_reasks,
            CallContext(context.episode_id, context.player, context.round, "debate-close"),
            speech.reask,
        )
        out.calls += decision.attempts
        out.tokens += decision.tokens
        out.raw.extend(decision.raw)
        out.errors.extend(decision.errors)
        for text, error in zip(decision.raw, decision.errors, strict=False):
            out.turns.append(Turn(SUSPECT, text, "final"))
            out.turns.append(Turn(MODERATOR, speech.reask(error), "close"))
        if decision.valid:
            assert isinstance(decision.action, str)
            out.turns.append(Turn(SUSPECT, decision.raw[-1], "final"))
            out.value = decision.action
            out.error = None
        else:
            out.error = decision.error

    async def _generate(
        self,
        client: LLMClient,
        view: list[Message],
        context: CallContext,
        out: DebateOutcome,
    ) -> str:
        request = Request(
            messages=tuple(view),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.request_seed(),
        )
        responses = await client.generate(request, context)
        response = responses[0] if responses else Response("")
        out.calls += 1
        out.tokens += sum(r.usage.total for r in responses)
        out.raw.append(response.text)
        return response.text

    def _extra(self, out: DebateOutcome) -> dict[str, Any]:
        return {
            "architecture": "debate",
            "attitude": self.attitude,
            "debate_turns": out.debate_turns,
            "max_turns": self.max_turns,
            "ended_by": out.ended_by,
            "final_ask": out.final_ask,
            "memory": self.memory,
        }


def _view(me: Speaker, system: str, turns: Sequence[Turn]) -> list[Message]:
    """The debate as `me` sees it: its own turns as "assistant", the others' as "user". The
    lawyer never sees the closing requests (it is not asked), nor the suspect's replies to them."""
    messages = [Message("system", system)]
    for turn in turns:
        if me == LAWYER and turn.kind in ("close", "final"):
            continue
        messages.append(Message("assistant" if turn.speaker == me else "user", turn.content))
    return merge_messages(messages)


def _build(settings: Any, client: LLMClient, game: Game) -> DebateAgent:
    """seed-001's prompts in the JSON format, with the entry's attitude; over a mechanism, its
    prompts too (under the seat's prompt variant, as the plain player reads them)."""
    prompter = prompter_for(settings, "json", "prompt")
    mechanism = None
    if isinstance(game, MechanismGame):
        mechanism = MechanismPrompts(game, game_prompts_for(settings, game))
    return DebateAgent(
        client, settings.attitude, prompter, max_turns=settings.max_turns, memory=settings.memory,
        mechanism=mechanism,
        **common_settings(settings),
    )  # fmt: skip


register(
    Architecture(
        "debate",
        "a suspect and a lawyer debate until a decision (seed-001 §6.3)",
        _build,
        plays,
        # every turn, then the final ask
        calls=lambda settings, game: float(settings.max_turns) + 1,
        templates=frozenset(
            {
                "debate_close.j2",
                "debate_decision.j2",
                "debate_lawyer.j2",
                "debate_question.j2",
                "debate_suspect.j2",
            }
        ),
        settings=frozenset(
            {"attitude", "memory", "max_turns", "framing", "prompting", "questions"}
        ),
    )
)
