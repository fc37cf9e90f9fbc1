"""A deterministic stand-in for a model, for unit tests of logic only (never for results).

`scripted/<name>` picks a script by name; code can also hand `ScriptedProvider` a list of replies or
a function of the request. Usage is counted in whitespace-separated words, so costs and token
limits can be tested exactly.

Built-in scripts (the part after `:` is an argument):

- `echo`: the last user message.
- `first`, `last`, `choice:<i>`: that one of `request.choices` (the empty string without choices).
- `cooperate`, `defect`: the choice named so (or `C` / `D`), else the first / last choice.
- `random`, `random:<seed>`: a choice drawn from a hash of the request, the sample and the seed,
  so the same request always gets the same answer whatever the order of calls.
- `always:<text>`: always `<text>`.
- `cycle:<a>,<b>,...`: the replies in turn.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from stratagem.errors import unknown_name
from stratagem.llm.types import Request, Response, Usage

if TYPE_CHECKING:
    from stratagem.llm.registry import ModelConfig

Reply = str | Response
Script = Sequence[Reply] | Callable[[Request, int], Reply]
"""Replies in turn (cycling), or a function of (request, sample index)."""


def _words(text: str) -> int:
    return len(text.split())


class ScriptedProvider:
    """Answers from a script; remembers every (request, sample) it was asked, for assertions."""

    def __init__(self, model: str = "scripted/test", replies: Script = ("",)) -> None:
        if not callable(replies) and len(replies) == 0:
            raise ValueError("a scripted provider needs at least one reply")
        self.model = model
        self._replies = replies
        self.calls: list[tuple[Request, int]] = []
        self.closed = False

    async def complete(self, request: Request, sample: int) -> Response:
        index = len(self.calls)
        self.calls.append((request, sample))
        if callable(self._replies):
            reply = self._replies(request, sample)
        else:
            reply = self._replies[index % len(self._replies)]
        usage = Usage(sum(_words(m.content) for m in request.messages), 0)
        if isinstance(reply, Response):
            if reply.usage == Usage():
                reply = replace(reply, usage=replace(usage, output_tokens=_words(reply.text)))
            return replace(reply, model=reply.model or self.model)
        return Response(
            text=reply, usage=replace(usage, output_tokens=_words(reply)), model=self.model
        )

    async def aclose(self) -> None:
        self.closed = True


# -- named scripts ------------------------------------------------------------------------------


def _echo(request: Request, sample: int) -> str:
    for message in reversed(request.messages):
        if message.role == "user":
            return message.content
    return ""


def _pick(index: int) -> Callable[[Request, int], str]:
    def pick(request: Request, sample: int) -> str:
        if not request.choices:
            return ""
        last = len(request.choices) - 1
        return request.choices[min(index, last) if index >= 0 else max(index, -last - 1)]

    return pick


def _named(names: tuple[str, ...], fallback: int) -> Callable[[Request, int], str]:
    def pick(request: Request, sample: int) -> str:
        for choice in request.choices:
            if choice.strip().lower() in names:
                return choice
        if request.choices:
            return request.choices[fallback]
        return names[0]

    return pick


def _random(seed: str) -> Callable[[Request, int], str]:
    def pick(request: Request, sample: int) -> str:
        if not request.choices:
            return ""
        body = json.dumps([seed, request.to_json(), sample], sort_keys=True, default=str)
        rng = random.Random(hashlib.sha256(body.encode()).digest())
        return rng.choice(request.choices)

    return pick


_BUILTIN: dict[str, Callable[[str | None], Script]] = {
    "echo": lambda arg: _echo,
    "first": lambda arg: _pick(0),
    "last": lambda arg: _pick(-1),
    "choice": lambda arg: _pick(int(arg or "0")),
    "cooperate": lambda arg: _named(("cooperate", "c"), 0),
    "defect": lambda arg: _named(("defect", "d"), -1),
    "random": lambda arg: _random(arg or "0"),
    "always": lambda arg: (arg or "",),
    "cycle": lambda arg: tuple((arg or "").split(",")),
}
_REGISTERED: dict[str, Script] = {}


def register_script(name: str, replies: Script) -> None:
    """Make `scripted/<name>` answer with `replies` (for tests that go through model strings)."""
    _REGISTERED[name] = replies


def script_names() -> list[str]:
    return sorted(set(_BUILTIN) | set(_REGISTERED))


def script_of(spec: str) -> Script:
    """The script `scripted/<spec>` answers with, or the one-line error naming the known ones."""
    if spec in _REGISTERED:
        return _REGISTERED[spec]
    name, _, arg = spec.partition(":")
    factory = _BUILTIN.get(name)
    if factory is None:
        raise unknown_name("scripted model", name, script_names())
    try:
        return factory(arg or None)
    except ValueError:
        raise unknown_name("scripted model", spec, script_names()) from None


def ready(config: ModelConfig) -> None:
    """For `registry.check_ready`: an unknown script, refused before the run starts (a test
    may register its script after the file loads)."""
    script_of(config.name.name)


def create(config: ModelConfig) -> ScriptedProvider:
    """The provider for `scripted/<name>` or `scripted/<name>:<argument>`."""
    return ScriptedProvider(config.model, script_of(config.name.name))
