"""How an LLM answers a decision of any game: the action space picks the reply format.

Each kind of action space has one format (a registry, not a switch): what the prompt asks for, the
constraint the provider can enforce (a grammar over labels, a JSON schema with an integer range, a
token limit for free text), and the parser that turns a reply into an action. The parser ends by
validating against the space itself, so a reply the engine would refuse is re-asked with the
engine's own words, and nothing a model writes reaches the game except a legal action.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from stratagem.agents.parsing import ParseError, find_key_values, quoted_alternatives
from stratagem.errors import StratagemError
from stratagem.games.spaces import (
    Action,
    ActionSpace,
    Choice,
    FreeText,
    IllegalAction,
    IntegerRange,
    Shares,
)
from stratagem.games.textarena import TextArenaMove

CHARS_PER_TOKEN = 3
"""A cautious characters-per-token ratio: free text is cut at max_chars / 3 tokens, so a reply
that keeps to the asked length is never cut, and a runaway one stops soon after the limit."""


@dataclass(frozen=True)
class ReplyFormat:
    """One decision's reply: the instruction shown, the request constraint, and the parser."""

    instruction: str
    constraint: dict[str, Any] = field(default_factory=dict)
    """Request fields that make the provider enforce the format (`choices`, `json_schema`,
    `max_tokens`); sent only when the agent constrains its output."""
    read: Callable[[str], Action] = str
    """Reply text -> legal action, or `ParseError` with a hint for the re-ask."""
    name: str = "reply"

    def parse(self, text: str, labels: Sequence[str] = ()) -> Action:
        """The `Parser` protocol of `decide_with_reasks` (labels come from the space instead)."""
        return self.read(text)


def _legal(space: ActionSpace, action: Action) -> Action:
    """The engine's own validation, its message turned into a correction hint."""
    try:
        return space.validate(action)
    except IllegalAction as exc:
        raise ParseError(str(exc)) from None


def _choice(space: Choice, key: str) -> ReplyFormat:
    labels = space.labels

    def parse(text: str) -> Action:
        folded = text.strip().strip(".'\"").casefold()
        exact = [label for label in labels if label.casefold() == folded]
        if exact:
            return _legal(space, exact[0])
        # An unconstrained reply that names exactly one label as a word is read as that label;
        # naming several ("accept... no, reject") is ambiguous and re-asked.
        named = [
            label
            for label in labels
            if re.search(rf"(?<!\w){re.escape(label.casefold())}(?!\w)", text.casefold())
        ]
        if len(named) == 1:
            return _legal(space, named[0])
        got = "an empty reply" if not text.strip() else f"{len(named) or 'none'} of them named"
        raise ParseError(f"reply with exactly one of {quoted_alternatives(labels)}; got {got}")

    return ReplyFormat(
        f"Reply with exactly one of {quoted_alternatives(labels)} and nothing else.",
        {"choices": labels},
        parse,
    )


ENUM_LIMIT = 1000
"""Integer ranges up to this many values also list them as an `enum`: grammar converters that
ignore `minimum`/`maximum` (llama.cpp's) and strict structured outputs (OpenAI's) honour enums."""


def _integer(space: IntegerRange, key: str) -> ReplyFormat:
    amount: dict[str, Any] = {"type": "integer", "minimum": space.low, "maximum": space.high}
    if space.high - space.low < ENUM_LIMIT:
        amount["enum"] = list(range(space.low, space.high + 1))
    schema = {
        "type": "object",
        "properties": {key: amount},
        "required": [key],
        "additionalProperties": False,
    }

    def parse(text: str) -> Action:
        found = find_key_values(text, key)
        value: object = found[-1] if found else text.strip()
        if isinstance(value, str) and re.fullmatch(r"[+-]?\d{1,18}", value.strip()):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParseError(
                f'reply with a JSON object {{"{key}": N}}, N a whole number from {space.low} '
                f"to {space.high}; got {text.strip()[:80]!r}"
            )
        return _legal(space, value)

    return ReplyFormat(
        f'Reply with a JSON object {{"{key}": N}}, where N is a whole number from {space.low} '
        f"to {space.high}.",
        {"json_schema": schema},
        parse,
    )


def _text(space: FreeText, key: str) -> ReplyFormat:
    """The first non-empty line of the reply is the message, as the instruction says; what
    follows it (small models often go on writing the transcript) is not part of it. No grammar
    is sent: the length limit is a token limit, and the space checks the characters."""

    def parse(text: str) -> Action:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return _legal(space, lines[0] if lines else "")

    return ReplyFormat(
        f"Reply with your {key} on a single line of at most {space.max_chars} characters.",
        {"max_tokens": max(1, space.max_chars // CHARS_PER_TOKEN)},
        parse,
    )


def _move_text(space: TextArenaMove, key: str) -> ReplyFormat:
    """The whole reply is the move, as TextArena reads moves: its own rules find the move in
    the text ("I bet: [bet]"), so a move written after a line of thought still counts, and the
    other seats are shown the reply as TextArena shows them a player's action."""

    def parse(text: str) -> Action:
        return _legal(space, text.strip())

    return ReplyFormat(
        f"Reply with your {key}, written as the game asks for it, in at most "
        f"{space.max_chars} characters.",
        {"max_tokens": max(1, space.max_chars // CHARS_PER_TOKEN)},
        parse,
    )


def _share_pattern(party: str) -> re.Pattern[str]:
    """`Airline A: 40%` as a line of seed-004 §3.3's template writes it, markdown bold allowed.
    Without a percent sign the number must not run into a unit or a decimal ("Airline A: 90
    flights/month" or "1.75 hours", from a recital of the setting, is not a share)."""
    share = r"(\d+(?:\.\d+)?)"
    unit = r"[ \t]*(?:%|percent\b)"
    no_unit = r"(?![ \t]*[^\W\d_]|[ \t]*/|\d|\.\d)"
    return re.compile(
        rf"(?<!\w){re.escape(party)}\**[ \t]*:[ \t]*\**[ \t]*{share}(?:{unit}|{no_unit})",
        re.IGNORECASE,
    )


def _shares(space: Shares, key: str) -> ReplyFormat:
    """A split in seed-004 §3.3's template, one `Party: xx%` line per party (prose around it is
    ignored; where a party is named twice, the last one counts, as the template usually comes
    last), or as a JSON object of the same keys, which is what the constraint asks for: every
    share an integer multiple of the step ("40.0" is the whole number 40, kept as written when
    the space keeps what was written). The sum is checked by the space, so a split that does
    not add up is re-asked with the engine's own words."""
    values = list(range(0, space.total + 1, space.step))
    share: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": space.total}
    if len(values) <= ENUM_LIMIT:
        share["enum"] = values
    schema = {
        "type": "object",
        "properties": {party: share for party in space.parties},
        "required": list(space.parties),
        "additionalProperties": False,
    }
    patterns = {party: _share_pattern(party) for party in space.parties}
    template = "\n".join(f"{party}: xx%" for party in space.parties)
    hint = (
        f"reply with one line '<party>: xx%' for each of {', '.join(space.parties)}, each xx a "
        f"multiple of {space.step} from 0 to {space.total}, the shares summing to {space.total}"
    )

    def from_json(text: str) -> list[object] | None:
        found = [
            [find_key_values(snippet, party) for party in space.parties]
            for snippet in re.findall(r"\{[^{}]*\}", text)
        ]
        complete = [f for f in found if all(f)]
        return [f[-1] for f in complete[-1]] if complete else None

    def parse(text: str) -> Action:
        read = from_json(text)
        if read is None:
            matches = {party: p.findall(text) for party, p in patterns.items()}
            missing = [party for party, m in matches.items() if not m]
            if missing:
                raise ParseError(f"{hint}; no share found for {', '.join(missing)}")
            read = [m[-1] for m in matches.values()]
        written: list[str] = []
        for party, value in zip(space.parties, read, strict=True):
            number = _whole_share(value)
            if number is None:
                raise ParseError(f"{hint}; the share of {party} is {value!r}, not a whole number")
            written.append(number)
        if space.written:  # kept as written, for a game that compares the strings (§10.11)
            return _legal(space, "/".join(written))
        return _legal(space, space.format([int(n.partition(".")[0]) for n in written]))

    splits = _splits(space)
    constraint: dict[str, Any] = {"json_schema": schema}
    if splits is not None:
        lines = [[f"{party}: {share}%" for party, share in zip(space.parties, split, strict=True)]
                 for split in splits]  # fmt: skip
        constraint = {"choices": tuple("\n".join(line) for line in lines)}
    return ReplyFormat(
        f"Reply with your {key} in this template, one line per party:\n{template}\nEach xx is "
        f"a multiple of {space.step} from 0 to {space.total}, and the shares sum to "
        f"{space.total}.",
        constraint,
        parse,
    )


def _whole_share(value: object) -> str | None:
    """A share as the reply wrote it ("40", or "40.0": a whole number with a decimal point);
    None for anything else (a fraction, a word, a bool)."""
    if isinstance(value, float) and value.is_integer():
        value = repr(value)  # JSON 40.0
    elif isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    found = re.fullmatch(r"\s*(\d{1,9}(?:\.\d{1,9})?)\s*%?\s*", value)
    if found is None or found.group(1).partition(".")[2].strip("0"):
        return None
    return found.group(1)


def _splits(space: Shares) -> list[tuple[int, ...]] | None:
    """Every legal split, when there are at most `ENUM_LIMIT` (231 for seed-004's 3 airlines in
    5% steps): then the constraint lists them in the template, which also enforces the sum that
    a JSON schema cannot; None when there are more."""
    units, parties = space.total // space.step, len(space.parties)
    if math.comb(units + parties - 1, parties - 1) > ENUM_LIMIT:
        return None
    bars = units + parties - 1  # stars and bars: choose where the parties' shares end
    out = []
    for cuts in itertools.combinations(range(bars), parties - 1):
        ends = (*cuts, bars)
        starts = (-1, *cuts)
        out.append(
            tuple(space.step * (end - start - 1) for start, end in zip(starts, ends, strict=True))
        )
    return out


FORMATS: dict[type, Callable[[Any, str], ReplyFormat]] = {
    Choice: _choice,
    IntegerRange: _integer,
    FreeText: _text,
    Shares: _shares,
    TextArenaMove: _move_text,
}
"""The reply format of each kind of action space."""


def reply_format(space: ActionSpace, key: str) -> ReplyFormat:
    """The reply format for a decision in `space`; `key` names the answer (an offer, a message)."""
    try:
        make = FORMATS[type(space)]
    except KeyError:
        raise StratagemError(f"no reply format for action space {type(space).__name__}") from None
    return make(space, key)
