"""Text from servers that is not valid Unicode, kept as its escape.

JSON's `\\u` escapes can spell a lone surrogate (`"\\udcff"`: half of a UTF-16 pair, without
its other half), and Python's json reads it into a `str` that no UTF-8 byte sequence can hold:
SQLite, files, terminals and browsers refuse it, so one such reply crashed a run before its
answer was stored, and every re-run paid for it again. Every text a server sends (a reply, its
reasoning, tool-call arguments, an error body, a model id) passes through here as it comes in,
and each lone surrogate becomes its escape, the six characters `\\udcff` (Python's
`backslashreplace`): what the server wrote on the wire, so it is stored, cached, replayed, shown
and rendered like any other text, and the agent parses the same text on a replay. Valid text,
astral characters included, is returned as it is (the same object).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from stratagem.llm.types import Response, ToolCall

_LONE = re.compile("[\ud800-\udfff]")
"""Any surrogate code point left in a `str` is a lone one: json pairs the valid pairs up."""


def escape_surrogates(text: str) -> str:
    """`text` with every lone surrogate written as its `\\uXXXX` escape."""
    if text.isascii() or _LONE.search(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _data(value: Any) -> Any:
    """JSON-like data (tool-call arguments) with every string escaped, keys included."""
    if isinstance(value, str):
        return escape_surrogates(value)
    if isinstance(value, dict):
        return {_data(k): _data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_data(v) for v in value)
    return value


def escaped_response(response: Response) -> Response:
    """`response` with every lone surrogate of its texts escaped; the same object if none was."""
    reasoning = response.reasoning
    escaped = replace(
        response,
        text=escape_surrogates(response.text),
        reasoning=None if reasoning is None else escape_surrogates(reasoning),
        model=escape_surrogates(response.model),
        tool_calls=tuple(
            ToolCall(escape_surrogates(c.id), escape_surrogates(c.name), _data(c.arguments))
            for c in response.tool_calls
        ),
    )
    return response if escaped == response else escaped
