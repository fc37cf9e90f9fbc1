"""seed-001's comprehension questions (§7): four questions asked after every round.

Each architecture asks them through its own question prompt (plain: Fig 2.4, `question.j2`;
tool: Fig 2.10, `tool_question.j2`; debate: Fig 2.14, `debate_question.j2`), with the history
summary appended, and reads the reply's `{'ANSWER': ...}` with the same tolerant parser as
decisions. This module only collects and parses answers; whether an answer is right is computed
from the stored episode by the analysis layer.

What the runner calls after each round, with the observation *after* the round (its history
includes the round just played):

    answers = await ask_questions(agent, state.observation(player))

`agent` is a `ToolAgent` or `DebateAgent` (both have `answer`), a `PlainLLMAgent`, or a bare
model client (asked through the plain prompts of the prisoner framing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from stratagem.agents.base import Belief, Decision, LLMClient
from stratagem.agents.parsing import ParseError, decide_with_reasks, find_key_values
from stratagem.agents.plain import PlainLLMAgent
from stratagem.agents.prompts import Prompter
from stratagem.errors import StratagemError
from stratagem.games.base import Observation
from stratagem.games.matrix.repeated import RepeatedObservation
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message

ANSWER_KEY = "ANSWER"


@dataclass(frozen=True)
class Question:
    """One comprehension question: its id, its name in the thesis, and its verbatim text."""

    id: str
    name: str
    text: str
    format_line: str

    @property
    def prompt(self) -> str:
        """What replaces <QUESTION> in the question prompts: the question, then its format line
        (§7: "the question text, including its '(Express the answer as ...)' line")."""
        return f"{self.text}\n{self.format_line}"


# seed-001 §7, verbatim: the questions and their format lines. The placeholders in the format
# lines (<ANSWER>, <N_ROUNDS>, <MAX>, ...) are part of the text shown to the model, not filled in.
QUESTIONS: tuple[Question, ...] = (
    Question(
        "Q1",
        "Opponent intention prediction",
        "What is going to be your partner's next move?",
        "(Express the answer as ANSWER:<ANSWER>)",
    ),
    Question(
        "Q2",
        "Understanding of immediate information",
        "How many rounds have you gone through so far?",
        "(Express the answer as ANSWER:<N_ROUNDS>)",
    ),
    Question(
        "Q3",
        "Memory of initial context",
        "Which are the maximum and minimum number of years you may get from this round?",
        "(Express the answer as ANSWER: MAXIMUM:<MAX>, MINIMUM:<MIN>)",
    ),
    Question(
        "Q4",
        "Arithmetical computation",
        "How many years of sentence have you received so far?",
        "(Express the answer as ANSWER:<TOTAL_YEARS>)",
    ),
)


def get_question(question_id: str) -> Question:
    for question in QUESTIONS:
        if question.id == question_id:
            return question
    raise StratagemError(
        f"unknown question '{question_id}': use {', '.join(q.id for q in QUESTIONS)}"
    )


@dataclass(frozen=True)
class Answer:
    """One answer of one agent to one question, with its trace.

    `raw` is the reply that was parsed (the last one); `parsed` the value of its ANSWER key as
    text, None if there is none. `relevant` is format-level only: the reply holds a readable
    ANSWER (the spec infers that relevance means parsing into the expected format, §7); whether
    the content fits the question and is correct is decided in analysis.
    """

    question_id: str
    question: str
    raw: str
    parsed: str | None
    relevant: bool
    error: str | None = None
    attempts: int = 0
    """Model calls made for this answer (tool calls, debate turns and re-asks included)."""
    tokens: int = 0
    messages: tuple[dict[str, Any], ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    beliefs: tuple[Belief, ...] = ()
    """Beliefs the answer states (a PGM analysis's matrices); stored with the answer."""

    def to_json(self) -> dict[str, Any]:
        return {
            "question_id": self.question_id,
            "question": self.question,
            "raw": self.raw,
            "parsed": self.parsed,
            "relevant": self.relevant,
            "error": self.error,
            "attempts": self.attempts,
            "tokens": self.tokens,
            "messages": list(self.messages),
            "extra": dict(self.extra),
            "beliefs": [asdict(b) for b in self.beliefs],
        }

    @classmethod
    def from_decision(cls, question: Question, decision: Decision) -> Answer:
        """An answer from the trace of a reply parsed with `AnswerParser` (the action is the
        parsed answer text)."""
        parsed = decision.action if decision.valid and isinstance(decision.action, str) else None
        return cls(
            question_id=question.id,
            question=question.prompt,
            raw=decision.raw[-1] if decision.raw else "",
            parsed=parsed,
            relevant=parsed is not None,
            error=decision.error,
            attempts=decision.attempts,
            tokens=decision.tokens,
            messages=decision.messages,
            extra=dict(decision.extra),
        )


def answer_schema(key: str = ANSWER_KEY) -> dict[str, Any]:
    """The JSON schema of `{"ANSWER": "<text>"}`, for providers that constrain output.

    The text is one line without angle brackets, quotes or backslashes: no answer needs them,
    and it keeps a constrained model from copying the prompt's `<YOUR_ANSWER>` placeholder,
    which is never a valid answer.
    """
    return {
        "type": "object",
        "properties": {key: {"type": "string", "pattern": r"^[^<>\"\\\n]+$"}},
        "required": [key],
        "additionalProperties": False,
    }


_PLACEHOLDER = re.compile(r"<[A-Z_ ]+>")


@dataclass(frozen=True)
class AnswerParser:
    """The value of `{'ANSWER': ...}` (single or double quotes), or of `ANSWER: ...` to the end
    of its line (the questions' own format lines ask for that form). The last one wins, as for
    decisions. A value that is only a placeholder of the prompt (`<YOUR_ANSWER>`) is no answer.
    Follows the `Parser` protocol; `labels` is ignored (answers are free text).
    """

    key: str = ANSWER_KEY
    name: str = "json"

    def parse(self, text: str, labels: Sequence[str] = ()) -> str:
        found = find_key_values(text, self.key)
        if found:
            value = _as_text(found[-1])
        else:
            loose = re.findall(
                rf"""['"]?\b{re.escape(self.key)}\b['"]?\s*:\s*([^\n]*)""", text, re.IGNORECASE
            )
            value = loose[-1].strip().strip("{}").strip().strip("'\"").strip() if loose else ""
            if not loose:
                raise ParseError(
                    f"no {{'{self.key}': ...}} object was found in the reply; "
                    f"reply with {{'{self.key}': '<YOUR_ANSWER>'}}"
                )
        if not value or _PLACEHOLDER.fullmatch(value):
            raise ParseError(
                f"the value of '{self.key}' is {repr(value) if value else 'empty'}; "
                "write your actual answer"
            )
        return value


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool) or value is None:
        return ""
    return str(value)


def parse_answer(text: str) -> str | None:
    """The ANSWER value of a reply, or None."""
    try:
        return AnswerParser().parse(text)
    except ParseError:
        return None


@runtime_checkable
class Answerer(Protocol):
    """An architecture that answers questions through its own prompts."""

    async def answer(self, question: Question, observation: Observation) -> Answer: ...


class PlainAnswerer:
    """Questions for the plain architecture (Fig 2.4): each question a fresh conversation,
    [system prompt, question prompt with the history summary], re-asked like decisions.

    Built on a `PlainLLMAgent` it follows the agent's client, prompter, sampling settings and
    current episode; built on a bare client it uses the prisoner framing.
    """

    def __init__(
        self,
        client: LLMClient,
        prompter: Prompter | None = None,
        *,
        max_reasks: int = 1,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        constrain: bool = True,
        agent: PlainLLMAgent | None = None,
    ) -> None:
        self.client = client
        self.prompter = prompter or Prompter("prisoner", output="json")
        self.max_reasks = max_reasks
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.constrain = constrain
        self.agent = agent
        self.parser = AnswerParser()

    @classmethod
    def of(cls, agent: PlainLLMAgent) -> PlainAnswerer:
        return cls(
            agent.client,
            agent.prompter,
            max_reasks=agent.max_reasks,
            temperature=agent.temperature,
            max_tokens=agent.max_tokens,
            seed=agent.seed,
            constrain=agent.constrain,
            agent=agent,
        )

    async def answer(self, question: Question, observation: Observation) -> Answer:
        obs = _repeated(observation)
        # The plain agent keeps its episode id and seed private; read them where it has them.
        episode_id = getattr(self.agent, "_episode_id", None)
        seed = self.seed if self.seed is not None else getattr(self.agent, "_episode_seed", 0)
        kwargs: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": seed,
        }
        if self.constrain:
            kwargs["json_schema"] = answer_schema()
        base = [
            Message("system", self.prompter.system(obs)),
            Message("user", self.prompter.render("question.j2", obs, question=question.prompt)),
        ]
        decision = await decide_with_reasks(
            self.client,
            base,
            kwargs,
            self.parser,
            (),
            self.max_reasks,
            question_context(episode_id, obs),
            lambda error: self.prompter.reask(error, obs),
        )
        return Answer.from_decision(question, decision)


def question_context(episode_id: str | None, observation: RepeatedObservation) -> CallContext:
    """Questions are asked after a round and belong to it: the round is the last one played."""
    return CallContext(episode_id, observation.player, len(observation.history), "question")


def answerer_for(agent: Answerer | PlainLLMAgent | LLMClient) -> Answerer:
    """What answers questions for `agent` (see the module docstring)."""
    if isinstance(agent, PlainLLMAgent):
        return PlainAnswerer.of(agent)
    if isinstance(agent, Answerer):
        return agent
    if hasattr(agent, "generate"):
        return PlainAnswerer(agent)
    raise StratagemError(f"{type(agent).__name__} cannot answer comprehension questions")


async def ask_questions(
    agent: Answerer | PlainLLMAgent | LLMClient,
    observation: Observation,
    questions: Sequence[Question] = QUESTIONS,
) -> list[Answer]:
    """Ask every question in turn (in order: agents with a memory see the earlier ones)."""
    answerer = answerer_for(agent)
    return [await answerer.answer(question, observation) for question in questions]


def _repeated(observation: Observation) -> RepeatedObservation:
    if not isinstance(observation, RepeatedObservation) or observation.stage is None:
        raise StratagemError(
            f"comprehension questions are about repeated matrix games; "
            f"got a {type(observation).__name__}"
        )
    return observation
