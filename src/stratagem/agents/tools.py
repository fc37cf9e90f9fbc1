"""The "lawyer" tools of seed-001's tool-based agent (§6.2): a phone to call a lawyer.

The attitude picks the tool: `cooperate`/`defect` attach a Fixed lawyer, which takes no input and
always advises that action; `compute` attaches a Nash lawyer, which takes the four sentences from
the agent, solves the one-shot game with nashpy and advises its equilibrium action.

Choices the thesis leaves open (AMBIG-4), made here:
- Both tools are called `call_lawyer` (the agent has exactly one tool, so a name that says what it
  does is all it needs); the Nash parameters are integers named and described as in §6.2.
- The Nash lawyer reads the sentences as years and turns them back into utilities as
  payoff = max(years) - years (§6.2 [INFERRED]); equilibria do not change under this shift.
- Whatever the agent passes is solved as given, right or wrong: whether the agent copies the
  sentences correctly is part of what is measured (HT3), so inputs are recorded, not corrected.
- Malformed arguments (missing, not a number, negative, not finite) are not guessed at: the call
  gets an error message back as its tool result, so the model can call again with proper values.
  Arguments the tool does not take are ignored (the Fixed tool takes none).
- When the equilibria do not all give this player the same pure action (Prisoner's Confusion),
  the advice is a seeded random choice among the actions any equilibrium plays, drawn anew on
  every call (§6.2: "random choice"; §12.4 matches a fresh pick per call).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from stratagem.agents.attitudes import Attitude, suggested_index
from stratagem.agents.prompts import Prompter
from stratagem.errors import StratagemError
from stratagem.games.base import Observation
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.solution import TOLERANCE, nash_equilibria
from stratagem.llm.types import Tool

LAWYER_TOOL_NAME = "call_lawyer"

ToolKind = Literal["fixed", "nash"]

# seed-001 §6.2 (L959-962), verbatim: the Nash tool's parameters and their descriptions.
NASH_PARAMETERS: tuple[tuple[str, str], ...] = (
    ("temptation", "The number of years you get if you defect and your partner cooperates"),
    ("reward", "The number of years you get if you cooperate and your partner cooperates"),
    ("punishment", "The number of years you get if you defect and your partner defects"),
    ("sucker", "The number of years you get if you cooperate and your partner defects"),
)


@dataclass(frozen=True)
class ToolResult:
    """What one call returned: the text sent back to the model, plus what it means."""

    content: str
    ok: bool
    advice: str | None = None
    """The advised action as the prompts show it; None when the call failed."""
    error: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    """Nash: the years received, the utilities solved, whether the advice was a random pick."""

    def to_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "ok": self.ok,
            "advice": self.advice,
            "error": self.error,
            "details": dict(self.details),
        }


class ToolArgumentError(ValueError):
    """Arguments a tool cannot work with; the message is shown to the model."""


@dataclass(frozen=True)
class LawyerTool:
    """One lawyer tool, ready to offer to a model (`tool`) and to run (`execute`).

    `labels` are this player's (cooperate, defect) actions as the prompts show them; `advice`
    is the Fixed lawyer's suggestion (None for Nash). `render_result` / `render_error` turn the
    advice or an error into the tool's reply (Fig 2.7 and its error counterpart).
    """

    kind: ToolKind
    tool: Tool
    labels: tuple[str, str]
    render_result: Callable[[str], str]
    render_error: Callable[[str], str]
    advice: str | None = None

    @property
    def name(self) -> str:
        return self.tool.name

    def execute(self, arguments: Mapping[str, Any], rng: random.Random) -> ToolResult:
        """Run one call; never raises for bad arguments (they become an error result)."""
        if self.kind == "fixed":
            assert self.advice is not None
            return ToolResult(self.render_result(self.advice), True, self.advice)
        try:
            years = nash_arguments(arguments)
        except ToolArgumentError as exc:
            return ToolResult(self.render_error(str(exc)), False, error=str(exc))
        index, unique = nash_advice(years, rng)
        advice = self.labels[index]
        details = {
            "years": dict(years),
            "utilities": {k: max(years.values()) - v for k, v in years.items()},
            "random": not unique,
        }
        return ToolResult(self.render_result(advice), True, advice, details=details)

    def error(self, message: str) -> str:
        """The tool reply for a call that cannot be executed (unknown tool, over the limit)."""
        return self.render_error(message)


def nash_arguments(arguments: Mapping[str, Any]) -> dict[str, float]:
    """The four sentences in years, validated; `ToolArgumentError` says what is wrong."""
    missing = [name for name, _ in NASH_PARAMETERS if name not in arguments]
    if missing:
        raise ToolArgumentError(
            f"missing argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)}. "
            "Call the lawyer with temptation, reward, punishment and sucker, each a number of "
            "years in prison."
        )
    years: dict[str, float] = {}
    for name, _ in NASH_PARAMETERS:
        value = arguments[name]
        number: float | None = None
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                number = None
        if number is None or not math.isfinite(number):
            raise ToolArgumentError(
                f"argument '{name}' must be a number of years in prison, got {value!r}"
            )
        if number < 0:
            raise ToolArgumentError(
                f"argument '{name}' must not be negative (a number of years), got {value!r}"
            )
        years[name] = number
    return years


def nash_advice(years: Mapping[str, float], rng: random.Random) -> tuple[int, bool]:
    """(action index, unique) of the one-shot game given in years: 0 cooperate, 1 defect.

    The game is solved with nashpy (`games.matrix.solution.nash_equilibria`) on utilities
    max(years) - years. If every equilibrium gives this player the same pure action, that is the
    advice; otherwise it is a random choice among the actions some equilibrium plays.
    """
    top = max(years.values())
    u = {name: top - value for name, value in years.items()}
    game = NormalFormGame.prisoners_dilemma(
        "nash-tool", t=u["temptation"], r=u["reward"], p=u["punishment"], s=u["sucker"]
    )
    rows = [x for x, _ in nash_equilibria(game)]
    pure = [int(x.argmax()) for x in rows if float(x.max()) >= 1.0 - TOLERANCE]
    if rows and len(pure) == len(rows) and len(set(pure)) == 1:
        return pure[0], True
    support = sorted({i for x in rows for i in range(len(x)) if x[i] > TOLERANCE})
    return rng.choice(support or [0, 1]), False


def nash_tool_parameters() -> dict[str, Any]:
    """The JSON schema of the Nash tool's arguments (names and descriptions from §6.2)."""
    return {
        "type": "object",
        "properties": {
            name: {"type": "integer", "minimum": 0, "description": description}
            for name, description in NASH_PARAMETERS
        },
        "required": [name for name, _ in NASH_PARAMETERS],
    }


def build_lawyer(attitude: Attitude, prompter: Prompter, observation: Observation) -> LawyerTool:
    """The tool an attitude attaches, with its description and replies from `prompter`'s
    framing (`tool_fixed.j2` / `tool_nash.j2`, `tool_result.j2`, `tool_error.j2`)."""
    shown = prompter.labels(observation)
    labels = _two(shown)

    def render_result(advice: str) -> str:
        return prompter.render("tool_result.j2", observation, advice=advice)

    def render_error(error: str) -> str:
        return prompter.render("tool_error.j2", observation, error=error)

    index = suggested_index(attitude)
    if index is None:
        description = prompter.render("tool_nash.j2", observation)
        tool = Tool(LAWYER_TOOL_NAME, description, nash_tool_parameters())
        return LawyerTool("nash", tool, labels, render_result, render_error)
    description = prompter.render("tool_fixed.j2", observation)
    tool = Tool(LAWYER_TOOL_NAME, description, {"type": "object", "properties": {}})
    return LawyerTool("fixed", tool, labels, render_result, render_error, labels[index])


def _two(labels: Sequence[str]) -> tuple[str, str]:
    if len(labels) != 2:
        raise StratagemError(
            f"the lawyer tools need a 2-action game (cooperate and defect roles), got {len(labels)}"
        )
    return labels[0], labels[1]
