"""Turning a model's reply into a legal action, and re-asking when it cannot be turned into one.

Every parser has the same shape, `parse(text, labels) -> label`, and raises `ParseError` with a
message precise enough to be shown to the model as a correction hint. `decide_with_reasks` runs
the re-ask loop that seed-003 §3.4 describes; seed-001 describes none (AMBIG-3), so the number of
re-asks and the fallback for a still-invalid reply are configuration (`InvalidPolicy`).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from stratagem.agents.base import Decision, LLMClient, messages_to_data
from stratagem.errors import StratagemError
from stratagem.games.spaces import Action
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message, Request

SEED003_MAX_REASKS = 4
"""seed-003 §3.4 [R]: the loop stops after 5 failed attempts, i.e. the first ask and 4 re-asks."""


REASK = "reask"
"""The purpose a decision's re-ask is recorded with (the store's request `purpose`)."""


def reask_purpose(purpose: str) -> str:
    """What a re-ask of a call made for `purpose` is recorded as: "reask" for a decision's, and
    "<purpose>:reask" for any other call's ("probe:role:reask"), so that a transcript never
    takes a hidden probe's or an analysis' re-ask for the move's (issue 23 item 12)."""
    return REASK if purpose == "decision" else f"{purpose}:{REASK}"


class ParseError(Exception):
    """A reply that does not contain a legal action; the message says exactly why."""


class Parser(Protocol):
    """Extracts one of `labels` from a reply, or raises `ParseError`."""

    @property
    def name(self) -> str:
        """The output format it reads: "json", "tag" or "choice"."""
        ...

    def parse(self, text: str, labels: Sequence[str]) -> Action: ...


def quoted_alternatives(labels: Sequence[str]) -> str:
    """`'a' or 'b'`, `'a', 'b', or 'c'`: the label list as seed-003's error message writes it."""
    quoted = [f"'{label}'" for label in labels]
    if len(quoted) <= 2:
        return " or ".join(quoted)
    return ", ".join(quoted[:-1]) + ", or " + quoted[-1]


def _match_label(value: str, labels: Sequence[str]) -> str | None:
    """The label equal to `value` ignoring case and surrounding whitespace, if any."""
    folded = value.strip().casefold()
    for label in labels:
        if label.casefold() == folded:
            return label
    return None


def _shorten(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- (a) the thesis' pseudo-JSON ------------------------------------------------------------------

_FLAT_OBJECT = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class JsonDecisionParser:
    """`{'DECISION': 'cooperate'}` (seed-001 §6.1: single quotes, so not strict JSON) or plain JSON.

    The key and the label are matched ignoring case. When the reply holds several objects with
    the key, the last one wins: the prompt asks for the object "once you have made your final
    decision", so earlier ones are drafts or examples.
    """

    key: str = "DECISION"
    name: str = "json"

    def parse(self, text: str, labels: Sequence[str]) -> str:
        value = self._value(text)
        if not isinstance(value, str):
            raise ParseError(
                f"the value of '{self.key}' must be a text naming your decision, "
                f"one of {quoted_alternatives(labels)}; got {_shorten(repr(value))}"
            )
        label = _match_label(value.strip().strip("'\"").rstrip("."), labels)
        if label is None:
            raise ParseError(
                f"'{self.key}' is '{_shorten(value)}', which is not a valid decision; "
                f"use one of {quoted_alternatives(labels)}"
            )
        return label

    def _value(self, text: str) -> object:
        found = find_key_values(text, self.key)
        if found:
            return found[-1]
        # Not even loadable as an object (e.g. {'DECISION': Cooperate}): read the value directly.
        loose = re.findall(
            rf"""['"]?{re.escape(self.key)}['"]?\s*:\s*['"]?([^'"{{}},\n]+)""", text, re.IGNORECASE
        )
        if loose:
            return str(loose[-1])
        raise ParseError(
            f"no {{'{self.key}': ...}} object was found in the reply "
            f"({'it is empty' if not text.strip() else repr(_shorten(text))}); "
            f"reply with {{'{self.key}': '<YOUR_DECISION>'}}"
        )


def find_key_values(text: str, key: str) -> list[object]:
    """The values of `key` (ignoring case) in every flat `{...}` object of `text` that loads as
    strict JSON or as a Python literal (the thesis' single-quoted pseudo-JSON), in order."""
    found: list[object] = []
    for match in _FLAT_OBJECT.finditer(text):
        obj = _load_object(match.group(0))
        if obj is None:
            continue
        for name, value in obj.items():
            if isinstance(name, str) and name.strip().casefold() == key.casefold():
                found.append(value)
    return found


def _load_object(snippet: str) -> dict[object, object] | None:
    """A flat object from strict JSON or a Python literal (single quotes); None if neither."""
    try:
        obj = json.loads(snippet)
    except ValueError:
        try:
            obj = ast.literal_eval(snippet)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    return obj if isinstance(obj, dict) else None


# -- (b) seed-003's move messages ------------------------------------------------------------------

# seed-003 §3.4 [R], verbatim: the correction shown to the model when a reply is not a valid move
# message. The label list is "'{a}' or '{b}'" (PD) or "'{a}', '{b}', or '{c}'" (RPS).
MOVE_FORMAT_ERROR = (
    "You may structure your response however you like, but it should contain a move message. "
    "Move messages begin with the tag [move] not containing other tags, which is followed by your "
    "optional explanation in parentheses, and end with a valid move: {alternatives}. "
    "DO NOT INCLUDE THE [move] TAG IN YOUR REASONING, ONLY IN YOUR ACTUAL MOVE MESSAGE. "
    "Nested parentheses or markdown formatting are not allowed.\n"
    "Format: [move] (Optional explanation here) Your move here"
)

_ANY_TAG = re.compile(r"\[[^\]]+\]")


@dataclass(frozen=True)
class MoveTagParser:
    """`[move] (Optional explanation here) Your move here`, validated as seed-003 §3.4 [R] does.

    1. The reply must hold exactly one bracketed tag and it must be `[move]` (checked on the reply
       as written, as the original code does, so `[MOVE]` is a different tag).
    2. On the lower-cased, stripped reply, `\\[move\\](?: \\(([^)]+)\\))? (<labels>)` must match:
       optional explanation without nested parentheses, one space, a label. The first match
       wins, and the label is not word-bounded ("rockets" is rock).
    Both failures give the same verbatim message, as in the original.
    """

    name: str = "tag"

    def parse(self, text: str, labels: Sequence[str]) -> str:
        error = MOVE_FORMAT_ERROR.format(alternatives=quoted_alternatives(labels))
        tags = _ANY_TAG.findall(text)
        if len(tags) != 1 or tags[0] != "[move]":
            raise ParseError(error)
        alternatives = "|".join(re.escape(label.lower()) for label in labels)
        match = re.search(rf"\[move\](?: \(([^)]+)\))? ({alternatives})", text.lower().strip())
        if match is None:
            raise ParseError(error)
        label = _match_label(match.group(2), labels)
        assert label is not None  # the regex only matches labels
        return label


# -- (c) grammar-constrained replies ---------------------------------------------------------------


@dataclass(frozen=True)
class ChoiceParser:
    """The whole reply is one label (ignoring case and surrounding whitespace).

    For replies decoded under a grammar (`Request.choices`), where anything else means the provider
    ignored the constraint.
    """

    name: str = "choice"

    def parse(self, text: str, labels: Sequence[str]) -> str:
        label = _match_label(text, labels)
        if label is None:
            got = "an empty reply" if not text.strip() else repr(_shorten(text))
            raise ParseError(
                f"reply with exactly one of {quoted_alternatives(labels)} and nothing else; "
                f"got {got}"
            )
        return label


PARSERS: dict[str, Callable[[], Parser]] = {
    "json": JsonDecisionParser,
    "tag": MoveTagParser,
    "choice": ChoiceParser,
}
"""The parser of each output format."""


# -- what to do with a decision that stays invalid -------------------------------------------------


@dataclass(frozen=True)
class InvalidPolicy:
    """What is played when the replies stay invalid after every re-ask.

    "forfeit" (the default) plays nothing: the action is None and the runner scores the round by
    the game's rule (seed-003 §3.2: (0, 0)). "default:<label>" plays that label. Either way the
    decision stays `valid=False`, so invalid rounds are counted, never hidden.
    """

    default: str | None = None

    @classmethod
    def parse(cls, spec: str | InvalidPolicy) -> InvalidPolicy:
        if isinstance(spec, InvalidPolicy):
            return spec
        text = spec.strip()
        if text == "forfeit":
            return cls(None)
        if text.startswith("default:") and text[len("default:") :].strip():
            return cls(text[len("default:") :].strip())
        raise StratagemError(
            f"invalid-output policy '{spec}' is not understood: "
            "use 'forfeit' or 'default:<action label>'"
        )

    def __str__(self) -> str:
        return "forfeit" if self.default is None else f"default:{self.default}"

    def apply(self, decision: Decision, labels: Sequence[str]) -> Decision:
        """The decision to hand to the runner: unchanged if valid, else with the fallback action."""
        if decision.valid:
            return decision
        extra = {**decision.extra, "invalid_policy": str(self)}
        if self.default is None:
            return replace(decision, action=None, extra=extra)
        label = _match_label(self.default, labels)
        if label is None:
            raise StratagemError(
                f"invalid-output policy '{self}': '{self.default}' is not an action of this game; "
                f"actions: {', '.join(labels)}"
            )
        return replace(decision, action=label, valid=False, extra=extra)


# -- the re-ask loop -------------------------------------------------------------------------------


def plain_reask(error: str) -> str:
    """A framing-neutral correction hint; framings supply their own (`Prompter.reask`)."""
    return f"Your reply could not be used: {error}\nPlease answer again."


def merge_messages(messages: Sequence[Message]) -> list[Message]:
    """seed-003 §3.3's merge rule: a message with the same role as the previous one is appended
    to it, joined by "\\n", after stripping its leading "[hint] " or "[move] " tag.

    Providers such as Anthropic's require alternating roles; the rule also reproduces exactly the
    turns seed-003 sent. Messages carrying tool calls are never merged.
    """
    out: list[Message] = []
    for message in messages:
        last = out[-1] if out else None
        if (
            last is not None
            and last.role == message.role
            and message.role in ("user", "assistant")
            and not last.tool_calls
            and not message.tool_calls
        ):
            content = message.content
            for tag in ("[hint] ", "[move] "):
                if content.startswith(tag):
                    content = content[len(tag) :]
                    break
            out[-1] = Message(last.role, last.content + "\n" + content)
        else:
            out.append(message)
    return out


def _identity(text: str) -> str:
    return text


async def decide_with_reasks(
    client: LLMClient,
    base_messages: Sequence[Message],
    request_kwargs: Mapping[str, Any],
    parser: Parser,
    labels: Sequence[str],
    max_reasks: int,
    context: CallContext,
    reask_style: Callable[[str], str] = plain_reask,
    *,
    echo: Callable[[str], str] = _identity,
) -> Decision:
    """Ask, parse, and on failure re-ask with the error, up to `max_reasks` times.

    A failed reply is appended to the conversation as the assistant's turn (as `echo(text)`),
    followed by a user turn `reask_style(error)`; consecutive same-role turns are merged before
    sending (`merge_messages`). Returns a valid decision with one of `labels`, or, once the first
    ask and `max_reasks` re-asks all failed, an invalid one with action None.
    """
    if isinstance(max_reasks, bool) or not isinstance(max_reasks, int) or max_reasks < 0:
        raise StratagemError(f"max_reasks must be an integer >= 0, got {max_reasks!r}")
    conversation = list(base_messages)
    raw: list[str] = []
    errors: list[str] = []
    tokens = 0
    reasoning: list[str] = []
    for attempt in range(max_reasks + 1):
        sent = merge_messages(conversation)
        request = Request(messages=tuple(sent), **request_kwargs)
        call = context if attempt == 0 else replace(context, purpose=reask_purpose(context.purpose))
        responses = await client.generate(request, call)
        tokens += sum(r.usage.total for r in responses)
        # seed-003 §3.4: an API error without text counts as an (invalid) reply.
        text = responses[0].text if responses else ""
        reasoning.extend(r.reasoning for r in responses[:1] if r.reasoning)
        raw.append(text)
        transcript = messages_to_data([*sent, Message("assistant", text)])
        try:
            action = parser.parse(text, labels)
        except ParseError as exc:
            errors.append(str(exc))
            conversation.append(Message("assistant", echo(text)))
            conversation.append(Message("user", reask_style(str(exc))))
            continue
        return Decision(
            action=action,
            valid=True,
            attempts=len(raw),
            raw=tuple(raw),
            errors=tuple(errors),
            messages=transcript,
            tokens=tokens,
            extra={"reasoning": reasoning} if reasoning else {},
        )
    return Decision(
        action=None,
        valid=False,
        attempts=len(raw),
        raw=tuple(raw),
        errors=tuple(errors),
        error=errors[-1],
        messages=transcript,
        tokens=tokens,
        extra={"reasoning": reasoning} if reasoning else {},
    )
