"""The MAgIC study's prompt texts, loaded by name from `prompts/*.txt` and filled in.

Prompts are data (design.md, "Agents"): one file per text, so a reviewer can diff a text against
the study without reading code, and so the texts travel as package data. A file is:

- optional note lines at the top, each starting with "#: " (where the text comes from, what was
  restored or kept as found); they are not part of the text;
- the text itself, byte for byte (trailing spaces and leading/trailing newlines are the study's);
- one final newline, which is not part of the text (so editors that add one change nothing).

Placeholders use `str.format` names as in the spec (`{player}`, `{other_player_1}`, ...).

Two wordings (seed-004 §8.1): the game-theory prompts exist in the paper's wording (A.7 table, the
default) and in the code's; the code's is a sibling file `<name>.code.txt`, chosen with
`wording="code"`. A prompt with a single source (the social-game prompts, which only the code
has) has one text, returned for either wording.

Not here: the study's own w.ProPGM prompt, which does not exist (seed-004 §10.13).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from stratagem.errors import StratagemError, unknown_name

Wording = Literal["paper", "code"]
WORDINGS: tuple[Wording, ...] = ("paper", "code")
"""seed-004 §8.1: "Use the paper wording, and keep the code wording behind a switch"."""

NOTE_PREFIX = "#: "
CODE_SUFFIX = ".code"


@dataclass(frozen=True)
class PromptText:
    """One prompt: its file name (without ".txt"), the text, and the provenance notes."""

    name: str
    text: str
    notes: tuple[str, ...]
    placeholders: frozenset[str]


def _parse_file(name: str, content: str) -> PromptText:
    lines = content.split("\n")
    notes: list[str] = []
    while lines and lines[0].startswith(NOTE_PREFIX):
        notes.append(lines.pop(0)[len(NOTE_PREFIX) :])
    text = "\n".join(lines)
    if text.endswith("\n"):
        text = text[:-1]
    fields: set[str] = set()
    for _, field, spec, conversion in string.Formatter().parse(text):
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            raise StratagemError(f"MAgIC prompt '{name}': bad placeholder {{{field}}}")
        fields.add(field)
    return PromptText(name, text, tuple(notes), frozenset(fields))


@cache
def _catalogue() -> dict[str, PromptText]:
    folder = resources.files("stratagem.agents.magic").joinpath("prompts")
    found: dict[str, PromptText] = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".txt"):
            name = entry.name[: -len(".txt")]
            found[name] = _parse_file(name, entry.read_text(encoding="utf-8"))
    return found


def prompt_names() -> tuple[str, ...]:
    """Every prompt file, by name (code wordings included, as "<name>.code"), sorted."""
    return tuple(sorted(_catalogue()))


def get(name: str, wording: Wording = "paper") -> PromptText:
    """The prompt `name` in `wording`; a one-line error for an unknown name or wording."""
    if wording not in WORDINGS:
        raise StratagemError(f"unknown MAgIC prompt wording '{wording}': use 'paper' or 'code'")
    catalogue = _catalogue()
    if wording == "code" and name + CODE_SUFFIX in catalogue:
        return catalogue[name + CODE_SUFFIX]
    if name not in catalogue:
        bases = (n for n in catalogue if not n.endswith(CODE_SUFFIX))
        raise unknown_name("MAgIC prompt", name, bases)
    return catalogue[name]


def text(name: str, wording: Wording = "paper") -> str:
    """The raw text, placeholders unfilled."""
    return get(name, wording).text


def placeholders(name: str, wording: Wording = "paper") -> frozenset[str]:
    return get(name, wording).placeholders


def render(prompt_name: str, /, wording: Wording = "paper", **values: object) -> str:
    """The text with its placeholders filled from `values`.

    Every placeholder must be given (a one-line error names the missing ones); values the text
    does not use are ignored, so a caller can pass one mapping of a seat's values to any prompt.
    """
    prompt = get(prompt_name, wording)
    missing = sorted(prompt.placeholders - values.keys())
    if missing:
        raise StratagemError(
            f"MAgIC prompt '{prompt.name}' needs a value for {', '.join(missing)}; "
            f"it takes {', '.join(sorted(prompt.placeholders))}"
        )
    return prompt.text.format(**{key: values[key] for key in prompt.placeholders})
